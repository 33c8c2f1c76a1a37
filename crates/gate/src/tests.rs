use super::*;

fn args(json: &str) -> ArgsHash {
    canonical_args_hash_str(json)
}

fn defaults() -> Settings {
    Settings::default()
}

/// Tool-name patterns for an allowlist.
fn patterns(sources: &[&str]) -> Vec<ToolPattern> {
    sources
        .iter()
        .map(|s| ToolPattern::new(s).unwrap())
        .collect()
}

/// `probe {"path":"p","x":1}`: the scripted experiment of most tests (its target is `probe` on
/// `p`).
const PROBE: &str = "probe";
const X1: &str = r#"{"path":"p","x":1}"#;
const X0: &str = r#"{"path":"p","x":0}"#;

const ZH_ANSWER: &str = "卡点=测试在 CI 上超时 排除=不是缓存问题 性价比=先本地复现超时";
const EN_ANSWER: &str = "blocker=the CI test times out\nruled_out=the cache is not the cause\nbest_path=reproduce the timeout locally";

/// What arms under `s`'s counting, not of a cycle.
fn trigger(s: &Settings, failures: Option<u32>, repeats: Option<u32>) -> Trigger {
    Trigger {
        counting: s.counting(),
        failures,
        repeats,
        cycle: false,
    }
}

fn shot(name: &str, json: &str) -> Shot {
    Shot::from_json(name, json)
}

fn fail(gate: &mut AgentGate, s: &Settings, name: &str, json: &str) -> Observation {
    gate.on_result(s, name, shot(name, json), Outcome::error(), None)
}

fn succeed(gate: &mut AgentGate, s: &Settings, name: &str, json: &str) -> Observation {
    gate.on_result(s, name, shot(name, json), Outcome::success(), None)
}

/// A gate armed by three failed `probe` calls on one target (the problem and two failed
/// retries), check block not yet shown.
fn armed(s: &Settings) -> AgentGate {
    let mut gate = AgentGate::new();
    assert_eq!(
        fail(&mut gate, s, PROBE, r#"{"path":"p","x":-1}"#),
        Observation::Counted
    );
    assert_eq!(fail(&mut gate, s, PROBE, X0), Observation::Counted);
    assert!(matches!(
        fail(&mut gate, s, PROBE, X1),
        Observation::Armed(_)
    ));
    gate
}

fn is_denied(decision: &Decision, kind: DenyKind) -> bool {
    matches!(decision, Decision::Deny { kind: k, .. } if *k == kind)
}

fn reason(decision: Decision) -> String {
    match decision {
        Decision::Deny { reason, .. } => reason,
        Decision::Allow => panic!("expected a denial"),
    }
}

fn any_failure() -> Settings {
    Settings::default().with_counting(Counting::AnyFailure)
}

fn bash(command: &str) -> String {
    serde_json::json!({ "command": command }).to_string()
}

#[test]
fn failed_retries_arm_at_the_threshold_inclusive_on_one_target() {
    let s = defaults();
    let mut gate = AgentGate::new();
    // The first failure finds the problem; it is no failed retry yet.
    assert_eq!(
        fail(&mut gate, &s, "bash", &bash("pytest tests/a.py::t1")),
        Observation::Counted
    );
    assert_eq!(gate.failures(), 0);
    assert_eq!(
        fail(
            &mut gate,
            &s,
            "bash",
            &bash("timeout 60 pytest -q tests/a.py")
        ),
        Observation::Counted
    );
    assert_eq!(gate.status(), Status::Idle);
    assert_eq!(gate.failures(), 1);
    assert_eq!(
        fail(
            &mut gate,
            &s,
            "bash",
            &bash("cd /r && pytest tests/a.py -x")
        ),
        Observation::Armed(trigger(&s, Some(2), None))
    );
    assert_eq!(gate.status(), Status::Pending);
}

#[test]
fn unrelated_failures_do_not_arm() {
    let s = defaults();
    let mut gate = AgentGate::new();
    for command in [
        "grep foo a.py",
        "python reproduce.py",
        "pytest tests/b.py",
        "ls nope",
    ] {
        assert_eq!(
            fail(&mut gate, &s, "bash", &bash(command)),
            Observation::Counted
        );
    }
    assert_eq!(gate.failures(), 0);
    // Under `counting: any-failure` the second one arms.
    let s = any_failure();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, "bash", &bash("grep foo a.py"));
    assert_eq!(
        fail(&mut gate, &s, "bash", &bash("python reproduce.py")),
        Observation::Armed(trigger(&s, Some(2), None))
    );
}

#[test]
fn failure_texts_without_substance_have_no_fingerprint() {
    let failed = Outcome::exited(1);
    assert_eq!(
        failure_keys("bash", &failed, "[exit code: 1]", ""),
        FailureKeys::default()
    );
    assert_eq!(
        failure_keys("bash", &failed, "exit code 1 (no output)", ""),
        FailureKeys::default()
    );
    assert_eq!(
        failure_keys("bash", &Outcome::success(), "TypeError", ""),
        FailureKeys::default()
    );
    assert_eq!(
        failure_keys("bash", &failed, "TypeError at line 123\n[exit code: 1]", "").print,
        failure_keys("bash", &failed, "TypeError at line 456\n[exit code: 1]", "").print
    );
}

#[test]
fn a_success_on_the_target_resolves_it() {
    let s = defaults();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, "bash", &bash("python reproduce.py"));
    fail(&mut gate, &s, "bash", &bash("python reproduce.py"));
    // An edit in between and another target's success change nothing.
    succeed(&mut gate, &s, "bash", &bash("sed -i s/a/b/ x.py"));
    succeed(&mut gate, &s, "bash", &bash("pytest tests/a.py"));
    assert_eq!(gate.failures(), 1);
    succeed(&mut gate, &s, "bash", &bash("python reproduce.py"));
    assert_eq!(gate.failures(), 0);
    fail(&mut gate, &s, "bash", &bash("python reproduce.py"));
    assert_eq!(gate.failures(), 0, "a new problem");
}

#[test]
fn failures_accumulate_across_successes_under_any_failure() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, "edit", "{}");
    assert_eq!(
        succeed(&mut gate, &s, "write", r#"{"p":1}"#),
        Observation::Counted
    );
    assert!(matches!(
        fail(&mut gate, &s, "bash", "{}"),
        Observation::Armed(_)
    ));
}

#[test]
fn waiting_never_counts() {
    let s = defaults();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, "bash", &bash("python reproduce.py"));
    fail(&mut gate, &s, "bash", &bash("python reproduce.py"));
    for _ in 0..3 {
        assert_eq!(
            succeed(&mut gate, &s, "bash", &bash("sleep 30")),
            Observation::Waited
        );
        assert_eq!(
            fail(&mut gate, &s, "bash", &bash("sleep 5 && tail log")),
            Observation::Waited
        );
    }
    assert_eq!(gate.failures(), 1);
    assert_eq!(gate.run_length(), 1, "the waits did not break the repeat");
}

#[test]
fn repeats_need_the_same_outcome() {
    let s = defaults();
    let mut gate = AgentGate::new();
    let status = bash("git status");
    let fp = |n| Some(Fingerprint::from_value(n));
    let run = |gate: &mut AgentGate, outcome: Outcome, failure| {
        gate.on_result(&s, "bash", shot("bash", &status), outcome, failure)
    };
    assert_eq!(
        run(&mut gate, Outcome::exited(1), fp(1)),
        Observation::Counted
    );
    assert_eq!(
        run(&mut gate, Outcome::success(), None),
        Observation::Counted
    );
    assert_eq!(
        run(&mut gate, Outcome::exited(1), fp(2)),
        Observation::Counted
    );
    assert_eq!(gate.run_length(), 0);
    assert_eq!(
        run(&mut gate, Outcome::exited(1), fp(2)),
        Observation::Counted
    );
    assert_eq!(gate.run_length(), 1);
    assert_eq!(
        run(&mut gate, Outcome::exited(1), fp(2)),
        Observation::Armed(trigger(&s, Some(2), Some(2)))
    );
}

#[test]
fn cycles_of_two_calls_arm() {
    let s = defaults();
    let mut gate = AgentGate::new();
    let mut observed = Vec::new();
    for _ in 0..3 {
        observed.push(succeed(&mut gate, &s, "bash", &bash("cat a.py")));
        observed.push(succeed(&mut gate, &s, "bash", &bash("git diff")));
    }
    assert_eq!(observed[..5], [Observation::Counted; 5]);
    assert_eq!(
        observed[5],
        Observation::Armed(Trigger {
            cycle: true,
            ..trigger(&s, None, Some(2))
        })
    );
}

#[test]
fn non_zero_exits_kills_and_timeouts_are_failures() {
    for outcome in [
        Outcome::exited(1),
        Outcome::exited(-1),
        Outcome::killed(),
        Outcome::timed_out(),
        Outcome::error(),
    ] {
        assert!(outcome.failed(), "{outcome:?}");
        let s = defaults();
        let mut gate = AgentGate::new();
        gate.on_result(&s, "bash", shot("bash", &bash("make a")), outcome, None);
        gate.on_result(&s, "bash", shot("bash", &bash("make a -k")), outcome, None);
        assert_eq!(
            gate.on_result(&s, "bash", shot("bash", &bash("make a -j4")), outcome, None),
            Observation::Armed(trigger(&s, Some(2), None)),
            "{outcome:?}"
        );
    }
    assert!(!Outcome::exited(0).failed());
    assert!(!Outcome::success().failed());
}

#[test]
fn identical_calls_arm_regardless_of_key_order() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    assert_eq!(
        succeed(&mut gate, &s, PROBE, r#"{"a":1,"b":2}"#),
        Observation::Counted
    );
    assert_eq!(gate.run_length(), 1);
    assert_eq!(
        succeed(&mut gate, &s, PROBE, r#"{"b":2,"a":1}"#),
        Observation::Armed(trigger(&s, None, Some(2)))
    );
}

#[test]
fn only_consecutive_identical_calls_form_a_run() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    for json in [X1, r#"{"x":2}"#, X1] {
        assert_eq!(succeed(&mut gate, &s, PROBE, json), Observation::Counted);
    }
    assert_eq!(gate.run_length(), 1);
    // Same arguments, another tool: not identical.
    assert_eq!(succeed(&mut gate, &s, "probe2", X1), Observation::Counted);
    assert_eq!(gate.status(), Status::Idle);
}

#[test]
fn identical_failures_report_both_thresholds() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, "bash", X1);
    assert_eq!(
        fail(&mut gate, &s, "bash", X1),
        Observation::Armed(trigger(&s, Some(2), Some(2)))
    );
}

#[test]
fn investigation_calls_neither_count_nor_break_a_run() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    succeed(&mut gate, &s, PROBE, X1);
    assert_eq!(
        fail(&mut gate, &s, "read", r#"{"path":"missing"}"#),
        Observation::Transparent
    );
    assert_eq!(
        succeed(&mut gate, &s, "grep", r#"{"q":"x"}"#),
        Observation::Transparent
    );
    assert_eq!(gate.failures(), 0);
    assert_eq!(gate.run_length(), 1);
    assert!(matches!(
        succeed(&mut gate, &s, PROBE, X1),
        Observation::Armed(_)
    ));
}

#[test]
fn strict_repeat_threshold_arms_on_every_counted_call() {
    let s = Settings::default()
        .with_counting(Counting::AnyFailure)
        .with_repeat_threshold(1);
    let mut gate = AgentGate::new();
    assert_eq!(
        succeed(&mut gate, &s, "read", "{}"),
        Observation::Transparent
    );
    assert_eq!(
        succeed(&mut gate, &s, "edit", "{}"),
        Observation::Armed(trigger(&s, None, Some(1)))
    );
}

#[test]
fn pending_denies_with_a_self_contained_reason_before_the_check_is_shown() {
    let s = defaults();
    let mut gate = armed(&s);
    let decision = gate.pre_execute(&s, "bash", args("{}"));
    assert!(is_denied(&decision, DenyKind::Pending));
    assert_eq!(
        reason(decision),
        "[pain-point-check] `bash` refused: pain-point check pending. Missing: blocker, \
         ruled_out, best_path. Still allowed: read, read_image, glob, grep, web_search, \
         ask_user_question, skill, todo_write, job_output, job_list, report, memory_recall, \
         memory_stats, resilient_fetch, web_fetch, lsp, session_trace, session_event_search, get_goal, list_agents. Answer all three in visible reply text: blocker=… \
         ruled_out=… best_path=…"
    );
    assert_eq!(gate.denials(), 1);
}

#[test]
fn pending_allows_investigation_tools_and_the_code_mode_transport() {
    let s = defaults();
    let mut gate = armed(&s);
    let names = DEFAULT_ALLOWLIST
        .iter()
        .copied()
        .filter(|name| !name.contains('*'));
    for name in names.chain([CODE_MODE_TOOL, "mcp__filesystem__read_text_file"]) {
        assert_eq!(
            gate.pre_execute(&s, name, args("{}")),
            Decision::Allow,
            "{name}"
        );
    }
    // Tool names compare in canonical spelling.
    assert_eq!(
        gate.pre_execute(&s, "WebSearch", args("{}")),
        Decision::Allow
    );
    for name in [
        "bash",
        "edit",
        "write",
        "str_replace_editor",
        "subagent",
        "job_kill",
    ] {
        assert!(
            is_denied(&gate.pre_execute(&s, name, args("{}")), DenyKind::Pending),
            "{name}"
        );
    }
    assert_eq!(gate.denials(), 6);
    assert_eq!(
        gate.on_result(
            &s,
            CODE_MODE_TOOL,
            shot(CODE_MODE_TOOL, "{}"),
            Outcome::error(),
            None
        ),
        Observation::Ignored(IgnoreReason::WhilePending)
    );
}

#[test]
fn code_mode_results_are_transparent() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    succeed(&mut gate, &s, PROBE, X1);
    let program = shot(CODE_MODE_TOOL, r#"{"code":"x"}"#);
    // A program whose nested call failed: that call counted, the program's throw does not.
    assert_eq!(
        gate.on_result_at(
            &s,
            "bash",
            Site::nested("c1"),
            shot("bash", "{}"),
            Outcome::error(),
            None
        ),
        Observation::Counted
    );
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c1"),
            program,
            Outcome::error(),
            None
        ),
        Observation::Transparent
    );
    assert_eq!(gate.failures(), 1);
    // A program that succeeded is transparent whatever its nested calls did.
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c2"),
            program,
            Outcome::success(),
            None
        ),
        Observation::Transparent
    );
    assert_eq!(gate.failures(), 1);
}

/// The original's rule (../shared/reference/pain-point-check-behaviour.md, 2.2 point 5): the outer
/// `run_code` result counts only when it failed and no nested call of the same root failed.
#[test]
fn a_program_that_fails_on_its_own_is_a_failed_experiment() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    let program = |code: &str| shot(CODE_MODE_TOOL, &format!(r#"{{"code":"{code}"}}"#));
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c1"),
            program("a"),
            Outcome::error(),
            None
        ),
        Observation::Counted
    );
    assert_eq!(gate.failures(), 1);
    // A nested call that succeeded does not excuse its program's own failure.
    assert_eq!(
        gate.on_result_at(
            &s,
            "read",
            Site::nested("c2"),
            shot("read", "{}"),
            Outcome::success(),
            None
        ),
        Observation::Transparent
    );
    assert!(matches!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c2"),
            program("b"),
            Outcome::error(),
            None
        ),
        Observation::Armed(Trigger {
            failures: Some(2),
            ..
        })
    ));
}

#[test]
fn a_failed_nested_call_excuses_only_its_own_program() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    // A failed investigation call is not counted, but its program threw on it: not its own.
    assert_eq!(
        gate.on_result_at(
            &s,
            "read",
            Site::nested("c1"),
            shot("read", "{}"),
            Outcome::error(),
            None
        ),
        Observation::Transparent
    );
    // Another program (another root) that fails on its own counts.
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c2"),
            shot(CODE_MODE_TOOL, "{}"),
            Outcome::error(),
            None
        ),
        Observation::Counted
    );
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c1"),
            shot(CODE_MODE_TOOL, "{}"),
            Outcome::error(),
            None
        ),
        Observation::Transparent
    );
    // Its result forgets the root: a later program reusing the id is judged afresh.
    assert_eq!(
        gate.on_result_at(
            &s,
            CODE_MODE_TOOL,
            Site::direct("c1"),
            shot(CODE_MODE_TOOL, r#"{"code":"z"}"#),
            Outcome::error(),
            None
        ),
        Observation::Armed(trigger(&s, Some(2), None))
    );
    // A non-zero exit, a kill or a denial of a nested call counts as its failure too.
    for (root, outcome) in [("d1", Outcome::exited(2)), ("d2", Outcome::killed())] {
        let mut gate = AgentGate::new();
        let _ = gate.on_result_at(
            &s,
            "bash",
            Site::nested(root),
            shot("bash", "{}"),
            outcome,
            None,
        );
        assert_eq!(
            gate.on_result_at(
                &s,
                CODE_MODE_TOOL,
                Site::direct(root),
                shot(CODE_MODE_TOOL, "{}"),
                Outcome::error(),
                None
            ),
            Observation::Transparent,
            "{root}"
        );
    }
}

#[test]
fn unknown_tool_results_are_never_experiments() {
    let one_retry = Settings::default().with_failure_threshold(1);
    for s in [one_retry, any_failure()] {
        let mut gate = AgentGate::new();
        // Code Mode: three direct calls to `bash`, each rejected by DSH before pre-execute.
        for _ in 0..3 {
            assert_eq!(
                gate.on_result_at(
                    &s,
                    "bash",
                    Site::direct("c"),
                    shot("bash", r#"{"command":"make"}"#),
                    Outcome::unknown_tool(),
                    None
                ),
                Observation::Ignored(IgnoreReason::UnknownTool)
            );
        }
        assert_eq!(
            (gate.failures(), gate.run_length(), gate.status()),
            (0, 0, Status::Idle)
        );
        // Natively too: a name no tool has never ran.
        assert_eq!(
            gate.on_result(
                &s,
                "no_such_tool",
                shot("no_such_tool", "{}"),
                Outcome::unknown_tool(),
                None
            ),
            Observation::Ignored(IgnoreReason::UnknownTool)
        );
        // Nor does it break a run of identical calls.
        let _ = fail(&mut gate, &s, PROBE, X1);
        let _ = gate.on_result(
            &s,
            "bash",
            shot("bash", "{}"),
            Outcome::unknown_tool(),
            None,
        );
        assert!(matches!(
            fail(&mut gate, &s, PROBE, X1),
            Observation::Armed(_)
        ));
    }
}

#[test]
fn the_family_read_only_tools_are_investigation_by_default() {
    let s = defaults();
    for name in names::FAMILY_READ_ONLY_TOOLS {
        assert!(DEFAULT_ALLOWLIST.contains(&name), "{name}");
    }
    let mut gate = armed(&s);
    for name in ["memory_recall", "memory_stats", "resilient_fetch"] {
        assert_eq!(
            gate.pre_execute(&s, name, args("{}")),
            Decision::Allow,
            "{name}"
        );
    }
    // Writing a fact is no investigation.
    assert!(is_denied(
        &gate.pre_execute(&s, "memory_save", args("{}")),
        DenyKind::Pending
    ));
}

#[test]
fn extra_allowlist_patterns_work_while_pending() {
    let s = Settings::default().with_extra_allowlist(patterns(&["mcp__docs__*"]));
    let mut gate = armed(&s);
    assert_eq!(
        gate.pre_execute(&s, "mcp__docs__search", args("{}")),
        Decision::Allow
    );
    assert!(is_denied(
        &gate.pre_execute(&s, "mcp__github__search", args("{}")),
        DenyKind::Pending
    ));
}

#[test]
fn the_check_block_is_shown_once_per_arming() {
    let s = defaults();
    let mut gate = armed(&s);
    let notice = gate.pre_step(&s).unwrap();
    assert_eq!(notice.kind, NoticeKind::Check);
    assert_eq!(
        notice.summary,
        "pain-point gate: 3 failed attempts at the same problem"
    );
    assert_eq!(
        notice.text,
        "[pain-point-check] Pain-point check: 3 failed attempts at the same problem. Until you \
         answer, only investigation tools run.
1. Is this blocker still the most critical one to solve?
2. What did the last negative result actually rule out?
3. Which path is the most cost-effective (not necessarily the cheapest)?
If you cannot say what the last negative result ruled out, you have no falsifiable hypothesis \
yet: instead of another shot, write one with the check that would refute it, as hypothesis=…
Answer all three in one visible reply (not only in reasoning, not quoted or in a code block):
blocker=… ruled_out=… best_path=…
(Chinese markers work too: 卡点=… 排除=… 性价比=…)
Still allowed meanwhile: read, read_image, glob, grep, web_search, ask_user_question, skill, \
todo_write, job_output, job_list, report, memory_recall, memory_stats, resilient_fetch, web_fetch, lsp, session_trace, session_event_search, get_goal, list_agents."
    );
    assert_eq!(gate.pre_step(&s), None);
    assert_eq!(gate.pre_step(&s), None);
    assert_eq!(gate.status(), Status::Pending);
}

#[test]
fn chinese_texts_follow_a_chinese_user_prompt_under_auto() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    gate.on_user_prompt("修复这个 bug in src/main.rs");
    assert_eq!(gate.language(&s), Language::Zh);
    fail(&mut gate, &s, PROBE, "{}");
    succeed(&mut gate, &s, "read", "{}");
    fail(&mut gate, &s, PROBE, "{}");
    let notice = gate.pre_step(&s).unwrap();
    assert_eq!(
        notice.summary,
        "卡点检查：2 次失败的调用，最近 2 次完全相同"
    );
    expect_test::expect![[r#"
        [pain-point-check] 卡点检查：2 次失败的调用，最近 2 次完全相同。在你回答之前，只有调查类工具可用。
        1. 这个卡点仍然是当前最关键的吗？
        2. 上一次的负面结果实际排除了什么？
        3. 哪条路径性价比最高（不一定是最便宜的）？
        如果说不出上一次负面结果排除了什么，说明你还没有可证伪的假设：不要再试一次，先写出一个假设和能推翻它的检验，写作 假设=…
        请在同一条可见回复的正文中回答全部三项（不要只写在思考里，不要放在引用或代码块中）：
        卡点=… 排除=… 性价比=…
        （英文标记同样有效：blocker=… ruled_out=… best_path=…）
        期间仍可使用：read、read_image、glob、grep、web_search、ask_user_question、skill、todo_write、job_output、job_list、report、memory_recall、memory_stats、resilient_fetch、web_fetch、lsp、session_trace、session_event_search、get_goal、list_agents。"#]].assert_eq(&notice.text);
    assert_eq!(
        reason(gate.pre_execute(&s, "bash", args("{}"))),
        "[pain-point-check] 已拒绝 `bash`：卡点检查待回答。仍缺：卡点、排除、性价比。仍可用：read、\
         read_image、glob、grep、web_search、ask_user_question、skill、todo_write、job_output、\
         job_list、report、memory_recall、memory_stats、resilient_fetch、web_fetch、lsp、session_trace、session_event_search、get_goal、list_agents。请在可见回复正文中一次答全：卡点=… 排除=… 性价比=…"
    );
    // An English prompt switches back; an explicit choice wins over the prompt.
    gate.on_user_prompt("fix the build");
    assert_eq!(gate.language(&s), Language::En);
    let zh = Settings::default().with_language(LanguageChoice::Zh);
    assert_eq!(gate.language(&zh), Language::Zh);
    gate.on_user_prompt("日本語のテキスト");
    let en = Settings::default().with_language(LanguageChoice::En);
    assert_eq!(gate.language(&en), Language::En);
    assert_eq!(gate.language(&s), Language::Zh);
}

#[test]
fn auto_language_looks_for_han_or_kana_only() {
    let s = defaults();
    let mut gate = AgentGate::new();
    assert_eq!(gate.language(&s), Language::En);
    for (prompt, lang) in [
        ("한국어 텍스트", Language::En),
        ("ｆｕｌｌ－ｗｉｄｔｈ ＡＳＣＩＩ", Language::En),
        ("fix src/main.rs，谢谢", Language::Zh),
        ("カタカナ", Language::Zh),
    ] {
        gate.on_user_prompt(prompt);
        assert_eq!(gate.language(&s), lang, "{prompt}");
    }
}

#[test]
fn a_full_answer_lifts_and_zeroes_the_counters() {
    for answer in [ZH_ANSWER, EN_ANSWER] {
        let s = defaults();
        let mut gate = armed(&s);
        let _ = gate.pre_step(&s);
        assert_eq!(gate.on_assistant_text(&s, answer), LiftOutcome::Lifted);
        assert_eq!(gate.status(), Status::Probation);
        assert_eq!((gate.failures(), gate.run_length()), (0, 0));
        assert_eq!(gate.pre_execute(&s, "edit", args("{}")), Decision::Allow);
        // One failure after the lift does not re-arm.
        assert_eq!(fail(&mut gate, &s, "edit", "{}"), Observation::Counted);
    }
}

#[test]
fn a_partial_answer_keeps_the_gate_and_names_what_is_missing() {
    let s = defaults();
    let mut gate = armed(&s);
    let outcome = gate.on_assistant_text(&s, "卡点=测试在 CI 上超时\n排除=不是缓存问题");
    let missing = MarkerSet::EMPTY.with(Marker::BestPath);
    assert_eq!(outcome, LiftOutcome::Partial { missing });
    assert_eq!(gate.missing(), Some(missing));
    let text = reason(gate.pre_execute(&s, "bash", args("{}")));
    expect_test::expect!["[pain-point-check] `bash` refused: pain-point check pending. Missing: best_path. Still allowed: read, read_image, glob, grep, web_search, ask_user_question, skill, todo_write, job_output, job_list, report, memory_recall, memory_stats, resilient_fetch, web_fetch, lsp, session_trace, session_event_search, get_goal, list_agents. Answer all three in visible reply text: blocker=… ruled_out=… best_path=…"].assert_eq(&text);
    // The next reply must carry all three again.
    assert_eq!(
        gate.on_assistant_text(&s, "性价比=先本地复现"),
        LiftOutcome::Partial {
            missing: MarkerSet::EMPTY
                .with(Marker::Blocker)
                .with(Marker::RuledOut)
        }
    );
    assert_eq!(gate.status(), Status::Pending);
}

#[test]
fn quoted_or_placeholder_answers_do_not_lift() {
    let s = defaults();
    let mut gate = armed(&s);
    for reply in [
        "卡点=… 排除=… 性价比=…",
        "> 卡点=测试超时 排除=缓存 性价比=本地复现",
        "```\n卡点=测试超时 排除=缓存 性价比=本地复现\n```",
        "blocker=TBD ruled_out=... best_path=<...>",
    ] {
        assert_eq!(
            gate.on_assistant_text(&s, reply),
            LiftOutcome::Partial {
                missing: MarkerSet::ALL
            },
            "{reply}"
        );
    }
}

#[test]
fn replies_outside_a_pending_gate_change_nothing() {
    let s = any_failure();
    let mut gate = AgentGate::new();
    fail(&mut gate, &s, PROBE, "{}");
    assert_eq!(
        gate.on_assistant_text(&s, ZH_ANSWER),
        LiftOutcome::NotPending
    );
    assert_eq!(gate.failures(), 1);
}

#[test]
fn a_user_prompt_resets_the_agent() {
    let s = defaults();
    let mut gate = armed(&s);
    assert!(gate.on_user_prompt("try again"));
    assert_eq!(gate.status(), Status::Idle);
    assert_eq!((gate.failures(), gate.run_length()), (0, 0));
    assert_eq!(gate.pre_execute(&s, PROBE, args(X1)), Decision::Allow);
    assert_eq!(fail(&mut gate, &s, PROBE, X1), Observation::Counted);
    assert!(!gate.on_user_prompt("and again"));
    assert_eq!(gate, {
        let mut fresh = AgentGate::new();
        fresh.on_user_prompt("");
        fresh
    });
}

#[test]
fn own_denials_never_count() {
    let s = defaults();
    let mut gate = armed(&s);
    let _ = gate.pre_step(&s);
    for _ in 0..5 {
        let decision = gate.pre_execute(&s, "bash", args("{}"));
        assert!(is_denied(&decision, DenyKind::Pending));
        assert_eq!(
            gate.on_result(&s, "bash", shot("bash", "{}"), Outcome::error(), None),
            Observation::Ignored(IgnoreReason::WhilePending)
        );
    }
    assert_eq!(gate.on_assistant_text(&s, ZH_ANSWER), LiftOutcome::Lifted);
    assert_eq!(fail(&mut gate, &s, "edit", "{}"), Observation::Counted);
    assert_eq!(fail(&mut gate, &s, "edit", "{}"), Observation::Counted);
    assert_eq!(gate.failures(), 1);
    assert_eq!(gate.status(), Status::Probation);
}

#[test]
fn the_same_direction_shot_is_denied_once() {
    let s = defaults();
    let mut gate = armed(&s);
    assert_eq!(gate.on_assistant_text(&s, EN_ANSWER), LiftOutcome::Lifted);
    let decision = gate.pre_execute(&s, PROBE, args(X1));
    assert_eq!(
        decision,
        Decision::Deny {
            kind: DenyKind::SameShot,
            reason: "[pain-point-check] `probe` refused once: it is the exact call that armed \
                     the check, and no other call has succeeded since. Change something along \
                     your best_path first; an identical call after this one runs."
                .to_owned()
        }
    );
    assert_eq!(
        gate.on_result(&s, PROBE, shot(PROBE, X1), Outcome::error(), None),
        Observation::Ignored(IgnoreReason::OwnDenial)
    );
    assert_eq!(gate.failures(), 0);
    // Other arguments were never the arming call.
    assert_eq!(
        gate.pre_execute(&s, PROBE, args(r#"{"x":0}"#)),
        Decision::Allow
    );
    assert_eq!(gate.pre_execute(&s, PROBE, args(X1)), Decision::Allow);
    assert_eq!(gate.status(), Status::Idle);
    assert_eq!(fail(&mut gate, &s, PROBE, X1), Observation::Counted);
}

#[test]
fn only_a_successful_different_call_counts_as_a_change() {
    let s = defaults();
    let mut gate = armed(&s);
    assert_eq!(gate.on_assistant_text(&s, ZH_ANSWER), LiftOutcome::Lifted);
    // Investigation and a failed different call change nothing.
    assert_eq!(
        succeed(&mut gate, &s, "read", "{}"),
        Observation::Transparent
    );
    assert_eq!(fail(&mut gate, &s, "edit", "{}"), Observation::Counted);
    assert_eq!(gate.status(), Status::Probation);
    // A successful different call does.
    assert_eq!(
        succeed(&mut gate, &s, "edit", r#"{"fix":true}"#),
        Observation::Counted
    );
    assert_eq!(gate.status(), Status::Idle);
    assert_eq!(gate.pre_execute(&s, PROBE, args(X1)), Decision::Allow);
}

#[test]
fn the_gate_can_arm_again_after_a_lift() {
    let s = defaults();
    let mut gate = armed(&s);
    assert_eq!(gate.on_assistant_text(&s, ZH_ANSWER), LiftOutcome::Lifted);
    fail(&mut gate, &s, "edit", r#"{"path":"a"}"#);
    fail(&mut gate, &s, "edit", r#"{"path":"a","new":0}"#);
    assert!(matches!(
        fail(&mut gate, &s, "edit", r#"{"path":"a","new":1}"#),
        Observation::Armed(_)
    ));
    assert_eq!(gate.status(), Status::Pending);
    assert!(gate.pre_step(&s).is_some());
}

#[test]
fn the_escape_valve_opens_after_max_denials() {
    let s = Settings::default().with_max_denials(2);
    let mut gate = armed(&s);
    assert_eq!(gate.pre_step(&s).map(|n| n.kind), Some(NoticeKind::Check));
    let _ = gate.pre_execute(&s, "bash", args("{}"));
    assert_eq!(gate.pre_step(&s), None);
    let _ = gate.pre_execute(&s, "bash", args("{}"));
    let notice = gate.pre_step(&s).unwrap();
    assert_eq!(notice.kind, NoticeKind::Escape { denials: 2 });
    assert_eq!(
        notice.text,
        "[pain-point-check] Gate opened without an answer after 2 refused calls; counters reset. \
         Before your next shot, answer anyway: blocker=… ruled_out=… best_path=…"
    );
    assert_eq!(notice.summary, "pain-point gate opened after 2 refusals");
    assert_eq!(gate.status(), Status::Idle);
    assert_eq!((gate.failures(), gate.run_length()), (0, 0));
    // No same-direction guard after an escape.
    assert_eq!(gate.pre_execute(&s, PROBE, args(X1)), Decision::Allow);
    assert_eq!(gate.pre_step(&s), None);
}

#[test]
fn the_check_block_is_shown_before_any_escape() {
    let s = Settings::default().with_max_denials(1);
    let mut gate = armed(&s);
    for _ in 0..3 {
        let _ = gate.pre_execute(&s, "bash", args("{}"));
    }
    assert_eq!(gate.pre_step(&s).map(|n| n.kind), Some(NoticeKind::Check));
    assert_eq!(
        gate.pre_step(&s).map(|n| n.kind),
        Some(NoticeKind::Escape { denials: 3 })
    );
}

#[test]
fn a_human_answer_resets_even_while_pending() {
    let s = defaults();
    let mut gate = armed(&s);
    assert_eq!(
        gate.pre_execute(&s, ASK_USER_TOOL, args("{}")),
        Decision::Allow
    );
    assert_eq!(
        succeed(&mut gate, &s, ASK_USER_TOOL, "{}"),
        Observation::HumanAnswered
    );
    assert_eq!(gate.status(), Status::Idle);
    // A failed question is just a transparent investigation call.
    assert_eq!(
        fail(&mut gate, &s, ASK_USER_TOOL, "{}"),
        Observation::Transparent
    );
}

#[test]
fn cancelled_calls_are_not_experiments() {
    let s = defaults();
    let mut gate = AgentGate::new();
    for _ in 0..3 {
        assert_eq!(
            gate.on_result(&s, PROBE, shot(PROBE, X1), Outcome::cancelled(), None),
            Observation::Ignored(IgnoreReason::Cancelled)
        );
    }
    assert_eq!(gate, AgentGate::new());
}

#[test]
fn a_disabled_gate_allows_and_counts_nothing() {
    let s = Settings::default().with_enabled(false);
    let mut gate = AgentGate::new();
    for _ in 0..5 {
        assert_eq!(
            fail(&mut gate, &s, PROBE, X1),
            Observation::Ignored(IgnoreReason::Disabled)
        );
        assert_eq!(gate.pre_execute(&s, PROBE, args(X1)), Decision::Allow);
    }
    assert_eq!(gate.pre_step(&s), None);
    assert_eq!(
        gate.on_assistant_text(&s, ZH_ANSWER),
        LiftOutcome::NotPending
    );
    assert_eq!(gate, AgentGate::new());
}

#[test]
fn long_tool_names_are_cut_in_denials() {
    let s = defaults();
    let mut gate = armed(&s);
    let name = "n".repeat(200);
    let text = reason(gate.pre_execute(&s, name.as_str(), args("{}")));
    expect_test::expect!["[pain-point-check] `nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…` refused: pain-point check pending. Missing: blocker, ruled_out, best_path. Still allowed: read, read_image, glob, grep, web_search, ask_user_question, skill, todo_write, job_output, job_list, report, memory_recall, memory_stats, resilient_fetch, web_fetch, lsp, session_trace, session_event_search, get_goal, list_agents. Answer all three in visible reply text: blocker=… ruled_out=… best_path=…"].assert_eq(&text);
}

#[test]
fn the_shown_allowlist_is_capped() {
    let extra = (0..5).map(|i| ToolPattern::new(&format!("tool{i}")).unwrap());
    let s = Settings::default().with_extra_allowlist(extra);
    let mut gate = armed(&s);
    let capped = reason(gate.pre_execute(&s, "bash", args("{}")));
    let none = Settings::default().with_allowlist(Vec::new());
    let mut gate = armed(&none);
    let nothing = reason(gate.pre_execute(&none, "read", args("{}")));
    expect_test::expect![[r#"
        [pain-point-check] `bash` refused: pain-point check pending. Missing: blocker, ruled_out, best_path. Still allowed: read, read_image, glob, grep, web_search, ask_user_question, skill, todo_write, job_output, job_list, report, memory_recall, memory_stats, resilient_fetch, web_fetch, lsp, session_trace, session_event_search, get_goal, list_agents +5. Answer all three in visible reply text: blocker=… ruled_out=… best_path=…
        [pain-point-check] `read` refused: pain-point check pending. Missing: blocker, ruled_out, best_path. Still allowed: none (answer first). Answer all three in visible reply text: blocker=… ruled_out=… best_path=…"#]].assert_eq(&format!("{capped}\n{nothing}"));
}

#[test]
fn handle_reports_a_replay_timeline() {
    let s = Settings::default()
        .with_counting(Counting::AnyFailure)
        .with_max_denials(1);
    let mut gate = AgentGate::new();
    let x1 = args(X1);
    let inputs = [
        Input::UserPrompt { text: "fix it" },
        Input::Step,
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::exited(1),
        },
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::exited(1),
        },
        Input::Step,
        Input::AssistantText {
            text: "blocker=the build",
        },
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::error(),
        },
        Input::Step,
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::exited(1),
        },
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::exited(1),
        },
        Input::Step,
        Input::AssistantText { text: EN_ANSWER },
        Input::ToolCall {
            name: PROBE,
            args: x1,
        },
        Input::ToolResult {
            site: Site::DIRECT,
            name: PROBE,
            shot: shot(PROBE, X1),
            failure: FailureKeys::default(),
            outcome: Outcome::error(),
        },
        Input::UserPrompt { text: "stop" },
    ];
    let timeline: Vec<TimelineEntry> = inputs
        .iter()
        .filter_map(|&input| gate.handle(&s, input).timeline_entry())
        .collect();
    let both = trigger(&s, Some(2), Some(2));
    assert_eq!(
        timeline,
        [
            TimelineEntry::Armed(both),
            TimelineEntry::CheckShown,
            TimelineEntry::Partial(
                MarkerSet::EMPTY
                    .with(Marker::RuledOut)
                    .with(Marker::BestPath)
            ),
            TimelineEntry::Denied,
            TimelineEntry::Escaped { denials: 1 },
            TimelineEntry::Armed(both),
            TimelineEntry::CheckShown,
            TimelineEntry::Lifted,
            TimelineEntry::SameShotDenied,
            TimelineEntry::Reset(ResetCause::UserPrompt),
        ]
    );
}

#[test]
fn agent_state_is_small_and_copy() {
    fn assert_copy<T: Copy>() {}
    assert_copy::<AgentGate>();
    // Constant size: the counters and PROBLEM_SLOTS remembered targets, no text.
    let size = std::mem::size_of::<AgentGate>();
    assert!(size <= 512, "{size} bytes");
}

#[test]
fn trigger_texts_count_attempts_under_each_counting() {
    let mut out = String::new();
    for counting in Counting::ALL {
        for (failures, repeats, cycle) in [
            (Some(1), None, false),
            (Some(2), None, false),
            (None, Some(2), false),
            (None, Some(2), true),
            (Some(2), Some(2), false),
        ] {
            let trigger = Trigger {
                counting,
                failures,
                repeats,
                cycle,
            };
            for lang in [Language::En, Language::Zh] {
                out.push_str(&format!(
                    "{} {failures:?} {repeats:?} cycle={cycle}: {}\n",
                    counting.key(),
                    trigger.describe(lang)
                ));
            }
        }
    }
    expect_test::expect![[r#"
        no-progress Some(1) None cycle=false: 2 failed attempts at the same problem
        no-progress Some(1) None cycle=false: 同一问题上已有 2 次失败的尝试
        no-progress Some(2) None cycle=false: 3 failed attempts at the same problem
        no-progress Some(2) None cycle=false: 同一问题上已有 3 次失败的尝试
        no-progress None Some(2) cycle=false: the same call 3 times in a row with the same result
        no-progress None Some(2) cycle=false: 同一调用连续 3 次，结果相同
        no-progress None Some(2) cycle=true: the same two calls alternating 3 times with the same results
        no-progress None Some(2) cycle=true: 两个调用交替出现 3 次，结果相同
        no-progress Some(2) Some(2) cycle=false: 3 failed attempts at the same problem; the same call 3 times in a row with the same result
        no-progress Some(2) Some(2) cycle=false: 同一问题上已有 3 次失败的尝试；同一调用连续 3 次，结果相同
        same-problem Some(1) None cycle=false: 2 failed attempts at the same problem
        same-problem Some(1) None cycle=false: 同一问题上已有 2 次失败的尝试
        same-problem Some(2) None cycle=false: 3 failed attempts at the same problem
        same-problem Some(2) None cycle=false: 同一问题上已有 3 次失败的尝试
        same-problem None Some(2) cycle=false: the same call 3 times in a row with the same result
        same-problem None Some(2) cycle=false: 同一调用连续 3 次，结果相同
        same-problem None Some(2) cycle=true: the same two calls alternating 3 times with the same results
        same-problem None Some(2) cycle=true: 两个调用交替出现 3 次，结果相同
        same-problem Some(2) Some(2) cycle=false: 3 failed attempts at the same problem; the same call 3 times in a row with the same result
        same-problem Some(2) Some(2) cycle=false: 同一问题上已有 3 次失败的尝试；同一调用连续 3 次，结果相同
        any-failure Some(1) None cycle=false: 1 failed call
        any-failure Some(1) None cycle=false: 1 次失败的调用
        any-failure Some(2) None cycle=false: 2 failed calls
        any-failure Some(2) None cycle=false: 2 次失败的调用
        any-failure None Some(2) cycle=false: 2 identical calls in a row
        any-failure None Some(2) cycle=false: 连续 2 次完全相同的调用
        any-failure None Some(2) cycle=true: 2 identical calls in a row
        any-failure None Some(2) cycle=true: 连续 2 次完全相同的调用
        any-failure Some(2) Some(2) cycle=false: 2 failed calls, the last 2 identical
        any-failure Some(2) Some(2) cycle=false: 2 次失败的调用，最近 2 次完全相同
    "#]].assert_eq(&out);
}

#[test]
fn a_reported_call_sits_where_its_root_and_program_say() {
    assert_eq!(Site::of(None, false), Site::DIRECT);
    assert_eq!(
        Site::of(None, true),
        Site::DIRECT,
        "no root: nothing to tie it to"
    );
    assert_eq!(Site::of(Some("c1"), false), Site::direct("c1"));
    assert_eq!(Site::of(Some("c1"), true), Site::nested("c1"));
    assert_ne!(Site::direct("c1").root, Site::direct("c2").root);
    assert_ne!(Site::direct("").root, 0, "0 stays the unknown root");
}

/// A failed call with its failure text's keys, as a driver passes them.
fn fail_with(
    gate: &mut AgentGate,
    s: &Settings,
    name: &str,
    json: &str,
    text: &str,
) -> Observation {
    let outcome = Outcome::exited(1);
    let keys = failure_keys(name, &outcome, text, "");
    gate.on_result(s, name, shot(name, json), outcome, keys)
}

#[test]
fn an_editor_verb_is_a_file_call_and_its_refusals_are_retries() {
    let s = Settings::default();
    let mut gate = AgentGate::new();
    let edit = |old: &str| {
        serde_json::json!({ "command": "str_replace", "path": "/r/a.py", "old_str": old, "new_str": "y" })
            .to_string()
    };
    // Three refusals with three different texts: the file never changed, so no progress.
    for (n, text) in ["No match for x", "No match for xx", "No match for xxx"]
        .iter()
        .enumerate()
    {
        let observed = fail_with(
            &mut gate,
            &s,
            "str_replace_editor",
            &edit(&"x".repeat(n + 1)),
            text,
        );
        assert_eq!(
            matches!(observed, Observation::Armed(_)),
            n == 2,
            "refusal {n}"
        );
    }
    // Two editor calls on two files are two targets, though both say `str_replace`.
    let mut gate = AgentGate::new();
    let other = serde_json::json!({ "command": "str_replace", "path": "/r/b.py", "old_str": "x" })
        .to_string();
    fail_with(
        &mut gate,
        &s,
        "str_replace_editor",
        &edit("x"),
        "No match for x",
    );
    fail_with(&mut gate, &s, "str_replace_editor", &other, "No match in b");
    assert_eq!(gate.failures(), 0);
}

#[test]
fn a_script_written_whole_fails_once_as_expected_then_counts() {
    let s = Settings::default();
    let mut gate = AgentGate::new();
    let run = bash("cd /r && python repro.py");
    let text = "Traceback (most recent call last):\nAssertionError";
    for (name, args) in [
        (
            "write",
            r#"{"file_path":"/r/repro.py","content":"assert f()"}"#,
        ),
        (
            "str_replace_editor",
            r#"{"command":"create","path":"/r/repro.py","file_text":"assert f()"}"#,
        ),
    ] {
        assert_eq!(succeed(&mut gate, &s, name, args), Observation::Counted);
        fail_with(&mut gate, &s, "bash", &run, text);
        assert_eq!(
            gate.failures(),
            0,
            "{name}: the fresh script's failure is expected"
        );
        fail_with(&mut gate, &s, "bash", &run, text);
        fail_with(&mut gate, &s, "bash", &run, text);
        assert_eq!(gate.failures(), 1, "{name}: found, then one retry");
        gate = AgentGate::new();
    }
    // Under same-problem the first failure finds the problem.
    let s = Settings::default().with_counting(Counting::SameProblem);
    succeed(&mut gate, &s, "write", r#"{"file_path":"/r/repro.py"}"#);
    fail_with(&mut gate, &s, "bash", &run, text);
    fail_with(&mut gate, &s, "bash", &run, text);
    assert_eq!(gate.failures(), 1);
}

/// The two-step result: a success is counted at once, a failure waits for its text, and the
/// same facts end where one `on_result` with the text would.
#[test]
fn a_failure_waits_for_its_text_and_counts_as_in_one_step() {
    let s = defaults();
    let mut one = AgentGate::new();
    let mut two = AgentGate::new();
    let text = "error: cannot find crate `foo`";
    for (json, outcome) in [
        (X0, Outcome::error()),
        (X1, Outcome::success()),
        (X1, Outcome::error()),
    ] {
        let keys = failure_keys(PROBE, &outcome, text, "");
        let expected = one.on_result(&s, PROBE, shot(PROBE, json), outcome, keys);
        let got =
            match two.on_result_or_need_text(&s, PROBE, Site::DIRECT, shot(PROBE, json), outcome) {
                Ok(observation) => {
                    assert!(!outcome.failed(), "a failure waits for its text");
                    observation
                }
                Err(waiting) => {
                    assert!(outcome.failed(), "a success needs no text");
                    assert_eq!(waiting.outcome(), outcome);
                    two.on_failure_text(&s, PROBE, waiting, keys)
                }
            };
        assert_eq!(got, expected);
        assert_eq!(two, one);
    }
}
