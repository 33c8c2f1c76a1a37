//! Every model- and user-facing text of the gate, in Chinese and English: the single source,
//! except the three questions, which the answer detector reads too ([`crate::questions`]).
//!
//! Budgets (from the behaviour spec): the check block stays within about 220 tokens (zh) or 180
//! (en), a denial within about 70, a notice summary within 120 characters. Tool names shown to
//! the model are cut to [`NAME_LIMIT`] characters; the allowlist shown is cut to
//! [`SHOWN_TOOLS_LIMIT`] entries. Call arguments are never echoed.

use crate::answers::MarkerSet;
use crate::questions::{QUESTIONS_EN, QUESTIONS_ZH};
use crate::{Counting, Language, Trigger};

/// The tag every text starts with.
pub const PLUGIN_TAG: &str = "[pain-point-check]";

/// Longest tool name shown in a denial, in characters.
pub const NAME_LIMIT: usize = 64;

/// Most allowlist entries shown in a text; the rest are summarized as `+N`.
pub const SHOWN_TOOLS_LIMIT: usize = 20;

/// The answer format with Chinese markers.
pub const FORMAT_ZH: &str = "卡点=… 排除=… 性价比=…";

/// The answer format with English markers.
pub const FORMAT_EN: &str = "blocker=… ruled_out=… best_path=…";

impl Trigger {
    /// What armed the gate, in words the model reads (also the replay's).
    pub fn describe(self, lang: Language) -> String {
        trigger_text(lang, self)
    }
}

fn trigger_text(lang: Language, trigger: Trigger) -> String {
    let Trigger {
        counting,
        failures,
        repeats,
        cycle,
    } = trigger;
    match counting {
        // Counted retries and repeats exclude the first attempt; the model reads attempts.
        Counting::NoProgress | Counting::SameProblem => {
            let failures = failures.map(|f| match lang {
                Language::Zh => format!("同一问题上已有 {} 次失败的尝试", f + 1),
                Language::En => format!("{} failed attempts at the same problem", f + 1),
            });
            let repeats = repeats.map(|r| match (lang, cycle) {
                (Language::Zh, false) => format!("同一调用连续 {} 次，结果相同", r + 1),
                (Language::Zh, true) => format!("两个调用交替出现 {} 次，结果相同", r + 1),
                (Language::En, false) => {
                    format!(
                        "the same call {} times in a row with the same result",
                        r + 1
                    )
                }
                (Language::En, true) => {
                    format!(
                        "the same two calls alternating {} times with the same results",
                        r + 1
                    )
                }
            });
            let sep = match lang {
                Language::Zh => "；",
                Language::En => "; ",
            };
            let parts: Vec<String> = failures.into_iter().chain(repeats).collect();
            if parts.is_empty() {
                fallback(lang)
            } else {
                parts.join(sep)
            }
        }
        Counting::AnyFailure => match (lang, failures, repeats) {
            (Language::Zh, Some(f), Some(r)) => format!("{f} 次失败的调用，最近 {r} 次完全相同"),
            (Language::Zh, Some(f), None) => format!("{f} 次失败的调用"),
            (Language::Zh, None, Some(r)) => format!("连续 {r} 次完全相同的调用"),
            (Language::En, Some(f), Some(r)) => format!("{f} failed calls, the last {r} identical"),
            (Language::En, Some(1), None) => "1 failed call".to_owned(),
            (Language::En, Some(f), None) => format!("{f} failed calls"),
            (Language::En, None, Some(r)) => format!("{r} identical calls in a row"),
            (_, None, None) => fallback(lang),
        },
    }
}

fn fallback(lang: Language) -> String {
    match lang {
        Language::Zh => "卡点检查".to_owned(),
        Language::En => "pain-point check".to_owned(),
    }
}

/// The allowlist as shown to the model: at most [`SHOWN_TOOLS_LIMIT`] entries, then `+N`.
fn tool_list(lang: Language, tools: &[&str]) -> String {
    let (sep, none) = match lang {
        Language::Zh => ("、", "无（请先回答）"),
        Language::En => (", ", "none (answer first)"),
    };
    if tools.is_empty() {
        return none.to_owned();
    }
    let mut out = tools
        .iter()
        .take(SHOWN_TOOLS_LIMIT)
        .copied()
        .collect::<Vec<_>>()
        .join(sep);
    if tools.len() > SHOWN_TOOLS_LIMIT {
        out.push_str(&format!(" +{}", tools.len() - SHOWN_TOOLS_LIMIT));
    }
    out
}

fn shown_name(name: &str) -> String {
    let mut out: String = name.chars().take(NAME_LIMIT).collect();
    if name.chars().nth(NAME_LIMIT).is_some() {
        out.push('…');
    }
    out
}

fn marker_list(lang: Language, markers: MarkerSet) -> String {
    let labels: Vec<&str> = markers
        .iter()
        .map(|m| match lang {
            Language::Zh => m.zh(),
            Language::En => m.en(),
        })
        .collect();
    match lang {
        Language::Zh => labels.join("、"),
        Language::En => labels.join(", "),
    }
}

/// The check block injected once per arming.
pub(crate) fn check_block(lang: Language, trigger: Trigger, tools: &[&str]) -> String {
    let trigger = trigger_text(lang, trigger);
    let tools = tool_list(lang, tools);
    match lang {
        Language::Zh => {
            let [q1, q2, q3] = QUESTIONS_ZH;
            format!(
                "{PLUGIN_TAG} 卡点检查：{trigger}。在你回答之前，只有调查类工具可用。\n\
                 1. {q1}\n\
                 2. {q2}\n\
                 3. {q3}\n\
                 如果说不出上一次负面结果排除了什么，说明你还没有可证伪的假设：不要再试一次，\
                 先写出一个假设和能推翻它的检验，写作 假设=…\n\
                 请在同一条可见回复的正文中回答全部三项（不要只写在思考里，不要放在引用或代码块中）：\n\
                 {FORMAT_ZH}\n\
                 （英文标记同样有效：{FORMAT_EN}）\n\
                 期间仍可使用：{tools}。"
            )
        }
        Language::En => {
            let [q1, q2, q3] = QUESTIONS_EN;
            format!(
                "{PLUGIN_TAG} Pain-point check: {trigger}. Until you answer, only investigation \
                 tools run.\n\
                 1. {q1}\n\
                 2. {q2}\n\
                 3. {q3}\n\
                 If you cannot say what the last negative result ruled out, you have no falsifiable \
                 hypothesis yet: instead of another shot, write one with the check that would \
                 refute it, as hypothesis=…\n\
                 Answer all three in one visible reply (not only in reasoning, not quoted or in a \
                 code block):\n\
                 {FORMAT_EN}\n\
                 (Chinese markers work too: {FORMAT_ZH})\n\
                 Still allowed meanwhile: {tools}."
            )
        }
    }
}

/// The one-line summary of the check block's notice row.
pub(crate) fn check_summary(lang: Language, trigger: Trigger) -> String {
    match lang {
        Language::Zh => format!("卡点检查：{}", trigger_text(lang, trigger)),
        Language::En => format!("pain-point gate: {}", trigger_text(lang, trigger)),
    }
}

/// The reason of a denial while the gate is pending. Self-contained: it still works when the
/// check block was compacted away or has not been shown yet.
pub(crate) fn pending_denial(
    lang: Language,
    tool: &str,
    missing: MarkerSet,
    tools: &[&str],
) -> String {
    let tool = shown_name(tool);
    let tools = tool_list(lang, tools);
    let missing = marker_list(lang, missing);
    match lang {
        Language::Zh => format!(
            "{PLUGIN_TAG} 已拒绝 `{tool}`：卡点检查待回答。仍缺：{missing}。仍可用：{tools}。\
             请在可见回复正文中一次答全：{FORMAT_ZH}"
        ),
        Language::En => format!(
            "{PLUGIN_TAG} `{tool}` refused: pain-point check pending. Missing: {missing}. Still \
             allowed: {tools}. Answer all three in visible reply text: {FORMAT_EN}"
        ),
    }
}

/// The reason of the one denial of a same-direction shot after a lift.
pub(crate) fn same_shot_denial(lang: Language, tool: &str) -> String {
    let tool = shown_name(tool);
    match lang {
        Language::Zh => format!(
            "{PLUGIN_TAG} 已拒绝 `{tool}` 一次：这正是触发检查的那个调用，而检查之后还没有任何其他调用成功。\
             先按你写下的性价比路径改变点什么；之后再发出完全相同的调用会放行。"
        ),
        Language::En => format!(
            "{PLUGIN_TAG} `{tool}` refused once: it is the exact call that armed the check, and no \
             other call has succeeded since. Change something along your best_path first; an \
             identical call after this one runs."
        ),
    }
}

/// The notice of the escape valve: the gate opened without an answer.
pub(crate) fn escape_notice(lang: Language, denials: u32) -> String {
    match lang {
        Language::Zh => format!(
            "{PLUGIN_TAG} 已拒绝 {denials} 次调用仍未得到回答：闸门打开，计数清零。下一次尝试前仍请先回答：{FORMAT_ZH}"
        ),
        Language::En => format!(
            "{PLUGIN_TAG} Gate opened without an answer after {denials} refused calls; counters \
             reset. Before your next shot, answer anyway: {FORMAT_EN}"
        ),
    }
}

/// The one-line summary of the escape notice's row.
pub(crate) fn escape_summary(lang: Language, denials: u32) -> String {
    match lang {
        Language::Zh => format!("卡点检查：拒绝 {denials} 次后打开"),
        Language::En => format!("pain-point gate opened after {denials} refusals"),
    }
}
