//! A small, curated concept table: groups of English words and Chinese words that mean the same
//! thing to someone asking about their own notes (`password` / `credential` / `密码`,
//! `deploy` / `ship` / `部署`, `memory` / `RAM` / `内存`).
//!
//! Why a table and not embeddings: the core must be offline, deterministic, small in wasm and
//! explainable. A recall that shares no word with the fact is the ranker's documented weak spot;
//! mapping both the facts and the query through the same table onto shared concept tokens
//! (`~password`) lets "where is the database credential stored" reach "the PostgreSQL password
//! lives in ~/.pgpass", and "数据库端口" reach "PostgreSQL listens on port 5433", at the cost of
//! one hash lookup per word. Concept tokens are indexed like words but with a lower weight
//! (`CONCEPT_WEIGHT` in the `text` module, which reads this table), so a literal match always
//! outranks a concept match and the table can only add candidates and break near-ties, not
//! override what the user typed.
//!
//! Rules for editing: a group holds words that are interchangeable in a question about a fact,
//! not merely related; English words are matched after stemming (write any inflection); Chinese
//! words are matched as substrings of Chinese text, so keep them at least two characters unless
//! the single character is unambiguous. The table was written alongside the recall set in
//! `recall/`, so the `paraphrase` and `crosslang` figures there are optimistic for text the table
//! was not written for.

/// `(concept, English words, Chinese words)`.
pub(crate) const CONCEPTS: &[(&str, &[&str], &[&str])] = &[
    ("port", &["port"], &["端口"]),
    ("default", &["default"], &["默认", "缺省"]),
    (
        "address",
        &["address", "ip", "url", "endpoint", "hostname"],
        &["地址", "网址"],
    ),
    ("memory", &["memory", "ram"], &["内存"]),
    (
        "storage",
        &["disk", "storage", "ssd"],
        &["磁盘", "硬盘", "存储"],
    ),
    (
        "gpu",
        &["gpu", "graphics", "vram", "cuda"],
        &["显卡", "显存"],
    ),
    ("cpu", &["cpu", "core", "processor"], &["处理器", "核心"]),
    (
        "database",
        &[
            "database",
            "db",
            "postgres",
            "postgresql",
            "mysql",
            "sqlite",
        ],
        &["数据库"],
    ),
    (
        "password",
        &["password", "credential", "passphrase", "secret"],
        &["密码", "凭据", "口令"],
    ),
    ("key", &["key"], &["密钥", "秘钥"]),
    ("timeout", &["timeout"], &["超时"]),
    (
        "limit",
        &["limit", "quota", "cap", "maximum", "max"],
        &["限制", "上限", "限额", "最多"],
    ),
    ("request", &["request", "call", "query"], &["请求", "调用"]),
    (
        "speed",
        &[
            "fast",
            "slow",
            "speed",
            "quick",
            "latency",
            "performance",
            "perf",
        ],
        &["速度", "性能", "延迟", "很慢", "太慢", "很快"],
    ),
    (
        "duration",
        &["duration", "long", "elapsed"],
        &["多久", "多长时间", "耗时", "时长"],
    ),
    (
        "build",
        &["build", "compile", "compilation"],
        &["编译", "构建"],
    ),
    (
        "deploy",
        &["deploy", "deployment", "ship", "rollout"],
        &["部署", "发布", "上线"],
    ),
    ("production", &["production", "prod"], &["生产", "线上"]),
    ("staging", &["staging"], &["预发", "测试环境"]),
    (
        "server",
        &["server", "machine", "box", "runner", "host"],
        &["服务器", "主机", "机器"],
    ),
    (
        "network",
        &[
            "network",
            "connection",
            "connectivity",
            "reach",
            "reachable",
            "unreachable",
        ],
        &["网络", "连接", "访问"],
    ),
    ("proxy", &["proxy"], &["代理"]),
    (
        "dns",
        &["dns", "resolver", "nameserver"],
        &["域名解析", "解析器"],
    ),
    ("mirror", &["mirror", "registry"], &["镜像"]),
    (
        "download",
        &["download", "fetch", "pull"],
        &["下载", "拉取"],
    ),
    ("clone", &["clone", "checkout"], &["克隆"]),
    ("repository", &["repository", "repo"], &["仓库"]),
    ("commit", &["commit"], &["提交"]),
    ("message", &["message"], &["信息", "消息"]),
    (
        "language",
        &["language", "english", "chinese"],
        &["语言", "中文", "英文", "汉语", "英语"],
    ),
    (
        "editor",
        &["editor", "ide", "vim", "neovim", "vscode", "emacs"],
        &["编辑器"],
    ),
    ("timezone", &["timezone", "zone", "utc"], &["时区"]),
    (
        "meeting",
        &["meeting", "standup", "sync"],
        &["会议", "站会", "开会", "例会"],
    ),
    (
        "daily",
        &["daily", "everyday", "nightly"],
        &["每天", "每日", "每晚"],
    ),
    (
        "holiday",
        &["holiday", "vacation", "festival"],
        &["假期", "春节", "节日", "放假", "节假日"],
    ),
    (
        "freeze",
        &["freeze", "forbidden", "prohibited", "banned"],
        &["禁止", "冻结", "封版"],
    ),
    ("allow", &["allow", "permit"], &["允许", "可以"]),
    (
        "contact",
        &["contact", "page", "notify", "escalate"],
        &["联系", "通知"],
    ),
    (
        "incident",
        &["outage", "incident", "downtime", "emergency"],
        &["故障", "宕机", "事故"],
    ),
    ("battery", &["battery"], &["电池", "续航"]),
    ("laptop", &["laptop", "notebook"], &["笔记本"]),
    ("printer", &["printer", "print"], &["打印机", "打印"]),
    ("backup", &["backup", "snapshot"], &["备份"]),
    ("log", &["log", "logging"], &["日志"]),
    (
        "retention",
        &[
            "retention",
            "retain",
            "keep",
            "kept",
            "expire",
            "expiry",
            "ttl",
        ],
        &["保留", "过期", "有效期"],
    ),
    ("delete", &["delete", "remove", "purge"], &["删除", "清理"]),
    ("cache", &["cache"], &["缓存"]),
    ("session", &["session"], &["会话"]),
    ("test", &["test", "testing"], &["测试"]),
    (
        "flaky",
        &["flaky", "intermittent", "unstable"],
        &["不稳定", "偶发"],
    ),
    (
        "error",
        &["error", "fail", "failure", "crash", "bug", "segfault"],
        &["错误", "失败", "报错", "崩溃"],
    ),
    ("version", &["version", "ver"], &["版本"]),
    (
        "size",
        &["size", "big", "large", "small"],
        &["大小", "体积", "多大"],
    ),
    ("context", &["context"], &["上下文"]),
    ("window", &["window"], &["窗口"]),
    ("model", &["model", "llm"], &["模型"]),
    (
        "prefer",
        &["prefer", "preference", "want", "like"],
        &["偏好", "喜欢", "习惯"],
    ),
    (
        "answer",
        &["answer", "reply", "respond", "response"],
        &["回答", "回复"],
    ),
    ("api", &["api"], &["接口"]),
    (
        "location",
        &[
            "location",
            "locate",
            "stored",
            "live",
            "directory",
            "folder",
            "path",
        ],
        &["路径", "位置", "目录", "存放", "放在"],
    ),
    (
        "config",
        &["config", "configuration", "configure", "setting"],
        &["配置", "设置"],
    ),
    ("environment", &["environment", "env"], &["环境"]),
    ("venv", &["virtualenv", "venv"], &["虚拟环境"]),
    ("character", &["character", "char"], &["字符"]),
    ("hour", &["hour"], &["小时"]),
    ("minute", &["minute"], &["分钟"]),
    ("second", &["second", "sec"], &["秒"]),
    ("day", &["day"], &["天"]),
    (
        "week",
        &["week", "weekly"],
        &["星期", "礼拜", "本周", "这周"],
    ),
    ("clock", &["clock"], &["几点", "点钟"]),
    ("schedule", &["schedule", "cron"], &["计划", "定时"]),
    ("wikipedia", &["wikipedia", "wiki"], &["维基"]),
    (
        "tls",
        &["tls", "ssl", "sni", "certificate", "https"],
        &["证书"],
    ),
    ("render", &["render"], &["渲染"]),
    ("speedup", &["speedup", "faster"], &["加速", "提速"]),
    (
        "image",
        &["image", "png", "exr", "jpeg", "picture"],
        &["图片", "图像"],
    ),
    ("report", &["report"], &["报告"]),
    ("deadline", &["deadline", "due"], &["截止", "期限"]),
    ("engineer", &["engineer", "developer"], &["工程师"]),
    (
        "company",
        &["company", "corporate", "corp", "office"],
        &["公司", "办公室"],
    ),
    ("lock", &["lock"], &["锁"]),
    ("save", &["save", "write"], &["保存", "写入"]),
    ("wait", &["wait"], &["等待"]),
    ("parse", &["parse"], &["解析"]),
    (
        "hardware",
        &["hardware", "spec", "specification"],
        &["硬件"],
    ),
    ("install", &["install", "installation"], &["安装"]),
    ("driver", &["driver"], &["驱动"]),
    ("migration", &["migration", "migrate"], &["迁移"]),
    (
        "whole",
        &["whole", "full", "entire", "complete"],
        &["完整", "全部", "整个"],
    ),
    (
        "project",
        &["project", "workspace", "codebase"],
        &["项目", "工程"],
    ),
    ("user", &["user"], &["用户"]),
    ("team", &["team"], &["团队"]),
    ("home", &["home"], &["主目录"]),
    ("security", &["security", "secure"], &["安全"]),
    ("first", &["first"], &["第一"]),
    ("line", &["line"], &["一行"]),
];
