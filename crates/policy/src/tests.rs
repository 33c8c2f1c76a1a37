use super::*;

fn patterns(list: &[&str]) -> Vec<Pattern> {
    list.iter().map(|p| Pattern::new(p).unwrap()).collect()
}

/// The README's documented defaults, restated here because the config crate (their single source)
/// depends on this one.
fn settings() -> Settings {
    Settings {
        debt_threshold: 20,
        max_tool_calls_without_research: 15,
        max_time_without_research: 15 * MINUTE,
        cooldown: 10 * MINUTE,
        reminder_backoff: 2.0,
        weights: Weights {
            ordinary: 1,
            mutation: 2,
            execution: 1,
            failure: 4,
            repeated_failure: 6,
        },
        max_snooze_minutes: 60,
        research_tools: patterns(&["web_search", "web_fetch", "github_search", "fetch_url"]),
        mutation_tools: patterns(&[
            "write", "edit", "replace", "patch", "delete", "remove", "rename", "move", "mkdir",
        ]),
        execution_tools: patterns(&[
            "bash",
            "shell",
            "exec",
            "run_command",
            "test",
            "compile",
            "build",
        ]),
        reminder: "[Research Nudge]".to_owned(),
        reminder_style: ReminderStyle::Original,
    }
}

const DEBT: Triggers = Triggers {
    debt: true,
    calls: false,
    minutes: false,
};
const CALLS: Triggers = Triggers {
    debt: false,
    calls: true,
    minutes: false,
};
const MINUTES: Triggers = Triggers {
    debt: false,
    calls: false,
    minutes: true,
};

fn policy() -> Policy {
    Policy::new(settings())
}

fn observe(p: &mut Policy, s: &mut AgentState, now: Millis, call: ToolCall<'_>) -> Observation {
    p.observe(s, now, &call)
}

fn counters(p: &Policy, s: &AgentState) -> (u32, u32, u32, u32) {
    let sig = p.signals(s);
    (
        sig.debt,
        sig.tool_calls_since_research,
        sig.failures,
        sig.repeated_failures,
    )
}

#[test]
fn readme_worked_example_nudges_on_the_fifth_call() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    let steps = [
        (ToolCall::success("read"), 1),
        (ToolCall::success("edit"), 3),
        (ToolCall::failure("bash", "TypeError at line 123"), 8),
        (ToolCall::success("edit"), 10),
        (ToolCall::failure("bash", "TypeError at line 456"), 21),
    ];
    for (i, (call, debt)) in steps.into_iter().enumerate() {
        let obs = observe(&mut p, &mut s, i as Millis * 1000, call);
        assert_eq!(s.debt(), debt, "step {i}");
        let expected = if i == 4 {
            Observation::Nudge(DEBT)
        } else {
            Observation::Counted
        };
        assert_eq!(obs, expected, "step {i}");
    }
    assert_eq!(
        p.reminder_text(&s),
        "[Research Nudge]\n\nCurrent signals: debt=21/20, tool_calls_since_research=5, failures=2, repeated_failures=1."
    );
}

#[test]
fn weights_apply_by_class_and_outcome() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::success("grep"));
    assert_eq!(counters(&p, &s), (1, 1, 0, 0));
    observe(&mut p, &mut s, 0, ToolCall::success("write_file"));
    assert_eq!(counters(&p, &s), (3, 2, 0, 0));
    observe(&mut p, &mut s, 0, ToolCall::success("run_tests"));
    assert_eq!(counters(&p, &s), (4, 3, 0, 0));
    observe(&mut p, &mut s, 0, ToolCall::failure("write_file", "EACCES"));
    assert_eq!(counters(&p, &s), (10, 4, 1, 0));
    observe(&mut p, &mut s, 0, ToolCall::failure("write_file", "EACCES"));
    assert_eq!(counters(&p, &s), (22, 5, 2, 1));
}

/// The README example run as three Code Mode programs: the nested calls give native mode's
/// signals, and no `run_code` result adds debt (before, each was an execution: 25/20 and a
/// reminder one program early).
#[test]
fn code_mode_programs_add_no_debt_of_their_own() {
    let mut p = policy();
    assert_eq!(p.classify("run_code"), ToolClass::CodeMode);
    // Only the exact name: a tool that only spells the same tokens is classed as before.
    assert_ne!(p.classify("RunCode"), ToolClass::CodeMode);
    let mut s = AgentState::new(0);
    let program_ok = ToolCall::success("run_code");
    let program_threw = ToolCall::failure("run_code", "code run failed (exception): Error: x");
    let steps = [
        (ToolCall::success("read"), Observation::Counted),
        (ToolCall::success("edit"), Observation::Counted),
        (program_ok, Observation::Transparent),
        (
            ToolCall::failure("bash", "TypeError at line 123"),
            Observation::Counted,
        ),
        (ToolCall::success("edit"), Observation::Counted),
        (program_threw, Observation::Transparent),
        (
            ToolCall::failure("bash", "TypeError at line 456"),
            Observation::Nudge(DEBT),
        ),
        (program_threw, Observation::Transparent),
    ];
    for (i, (call, expected)) in steps.into_iter().enumerate() {
        assert_eq!(
            observe(&mut p, &mut s, i as Millis * 1000, call),
            expected,
            "step {i}"
        );
    }
    assert_eq!(counters(&p, &s), (21, 5, 2, 1));
    // A nested web_search is research as a native one is.
    assert_eq!(
        observe(&mut p, &mut s, 9_000, ToolCall::success("web_search")),
        Observation::ResearchReset
    );
}

#[test]
fn unknown_tool_calls_are_not_counted() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    for i in 0..3 {
        let call = ToolCall {
            unknown_tool: true,
            ..ToolCall::failure("bash", "unknown tool \"bash\"")
        };
        assert_eq!(
            observe(&mut p, &mut s, i * 1000, call),
            Observation::Transparent
        );
    }
    assert_eq!(counters(&p, &s), (0, 0, 0, 0));
}

#[test]
fn classification_is_by_token_not_substring() {
    let mut p = policy();
    assert_eq!(p.classify("get_credits"), ToolClass::Ordinary);
    assert_eq!(p.classify("get_latest_version"), ToolClass::Ordinary);
    assert_eq!(p.classify("dispatch_job"), ToolClass::Ordinary);
    assert_eq!(p.classify("ContextBuilder"), ToolClass::Ordinary);
    assert_eq!(p.classify("str_replace_editor"), ToolClass::Mutation);
    assert_eq!(p.classify("MultiEdit"), ToolClass::Mutation);
    for name in [
        "delete_file",
        "remove",
        "rename_symbol",
        "move_file",
        "mkdir",
    ] {
        assert_eq!(p.classify(name), ToolClass::Mutation, "{name}");
    }
    assert_eq!(p.classify("bash"), ToolClass::Execution);
    assert_eq!(p.classify("RunCommand"), ToolClass::Execution);
    assert_eq!(p.classify("WebSearch"), ToolClass::Research);
    assert_eq!(
        p.classify("mcp__brave__brave_web_search"),
        ToolClass::Research
    );
    assert_eq!(p.classify("prefetch_url_cache"), ToolClass::Ordinary);
    // Cached answers stay the same.
    assert_eq!(p.classify("get_credits"), ToolClass::Ordinary);
}

#[test]
fn debt_threshold_is_inclusive() {
    let mut settings = settings();
    settings.debt_threshold = 3;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(s.debt(), 2);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(
        p.signals(&s).line(),
        "Current signals: debt=3/3, tool_calls_since_research=3, failures=0, repeated_failures=0."
    );
    assert_eq!(p.signals(&s).summary(), "research debt 3/3");
}

#[test]
fn call_count_threshold_fires_on_the_exact_crossing_call() {
    let mut settings = settings();
    settings.max_tool_calls_without_research = 4;
    settings.weights.ordinary = 0;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    for i in 1..4 {
        assert_eq!(
            observe(&mut p, &mut s, 0, ToolCall::success("read")),
            Observation::Counted,
            "call {i}"
        );
    }
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(CALLS)
    );
    assert_eq!(s.debt(), 0);
}

#[test]
fn elapsed_time_threshold_is_inclusive() {
    let mut p = policy();
    let mut s = AgentState::new(1_000);
    let limit = 15 * MINUTE;
    assert_eq!(
        observe(&mut p, &mut s, 1_000 + limit - 1, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut s, 1_000 + limit, ToolCall::success("read")),
        Observation::Nudge(MINUTES)
    );
}

#[test]
fn cooldown_suppresses_until_its_inclusive_boundary_while_debt_accumulates() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(
        observe(&mut p, &mut s, 10 * MINUTE - 1, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(s.debt(), 2);
    assert_eq!(
        observe(&mut p, &mut s, 10 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(s.last_nudge(), Some(10 * MINUTE));
}

#[test]
fn a_nudge_at_time_zero_still_arms_the_cooldown() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    assert_eq!(s.last_nudge(), None);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(s.last_nudge(), Some(0));
    assert_eq!(
        observe(&mut p, &mut s, 1, ToolCall::success("read")),
        Observation::Counted
    );
}

#[test]
fn zero_cooldown_allows_a_nudge_on_every_eligible_call() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    settings.cooldown = 0;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    for _ in 0..3 {
        assert_eq!(
            observe(&mut p, &mut s, 0, ToolCall::success("read")),
            Observation::Nudge(DEBT)
        );
    }
}

#[test]
fn research_resets_the_same_agent_but_keeps_cooldown_and_snooze() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "boom"));
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "boom"));
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "boom"));
    assert_eq!(s.last_nudge(), Some(0));
    assert_eq!(
        observe(&mut p, &mut s, 5 * MINUTE, ToolCall::success("WebSearch")),
        Observation::ResearchReset
    );
    assert_eq!(counters(&p, &s), (0, 0, 0, 0));
    assert_eq!(s.last_nudge(), Some(0));
    assert_eq!(s.research_clock(), 5 * MINUTE);
    // The failure memory is gone too: the same failure again is not a repeat.
    observe(
        &mut p,
        &mut s,
        5 * MINUTE,
        ToolCall::failure("bash", "boom"),
    );
    assert_eq!(counters(&p, &s), (5, 1, 1, 0));
    // The research clock restarted at the research call.
    assert_eq!(
        observe(&mut p, &mut s, 20 * MINUTE - 1, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut s, 20 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(MINUTES)
    );
}

#[test]
fn failed_research_counts_as_an_ordinary_failure() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::success("edit"));
    let obs = observe(
        &mut p,
        &mut s,
        0,
        ToolCall::failure("web_search", "no API key"),
    );
    assert_eq!(obs, Observation::Counted);
    assert_eq!(counters(&p, &s), (2 + 1 + 4, 2, 1, 0));
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::failure("web_search", "no API key"),
    );
    assert_eq!(counters(&p, &s), (7 + 1 + 4 + 6, 3, 2, 1));
}

#[test]
fn user_prompt_starts_the_agent_afresh() {
    let mut settings = settings();
    settings.debt_threshold = 2;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::success("edit"));
    assert_eq!(s.last_nudge(), Some(0));
    p.observe(
        &mut s,
        0,
        &ToolCall {
            snooze_minutes: Some(30),
            ..ToolCall::success(SNOOZE_TOOL_NAME)
        },
    );
    assert_eq!(p.user_prompt(&mut s, 60_000), Observation::UserPromptReset);
    assert_eq!(s, AgentState::new(60_000));
    // Cooldown and snooze are gone with the old task: the next eligible call nudges.
    assert_eq!(
        observe(&mut p, &mut s, 61_000, ToolCall::success("edit")),
        Observation::Nudge(DEBT)
    );
}

#[test]
fn non_zero_exit_codes_are_failures_fingerprinted_by_code_and_tail() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::exited("bash", 0, "all good"));
    assert_eq!(counters(&p, &s), (1, 1, 0, 0));
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::exited("bash", 1, "FAIL test_a at line 3"),
    );
    assert_eq!(counters(&p, &s), (6, 2, 1, 0));
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::exited("bash", 1, "FAIL test_a at line 9"),
    );
    assert_eq!(counters(&p, &s), (17, 3, 2, 1));
    // Same text, another exit code: a different failure.
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::exited("bash", 137, "FAIL test_a at line 9"),
    );
    assert_eq!(counters(&p, &s), (22, 4, 3, 1));
}

#[test]
fn shell_failures_compare_the_end_of_long_output() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    // Different lengths and different starts: only the end of the output decides.
    let progress_a = "build 1 starting\n".to_owned()
        + &"compiling crate\n".repeat(2000)
        + "error: mismatched types at src/main.rs:10";
    let progress_b = "build 2 resuming, cache warm\n".to_owned()
        + &"compiling crate\n".repeat(3000)
        + "error: mismatched types at src/main.rs:42";
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::exited("bash", 101, &progress_a),
    );
    observe(
        &mut p,
        &mut s,
        0,
        ToolCall::exited("bash", 101, &progress_b),
    );
    assert_eq!(s.repeated_failures(), 1);
}

#[test]
fn alternating_failures_are_repeats() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    for text in ["error A", "error B", "error A", "error B"] {
        observe(&mut p, &mut s, 0, ToolCall::failure("bash", text));
    }
    assert_eq!(s.repeated_failures(), 2);
}

#[test]
fn successes_do_not_break_a_repeat_and_tools_are_part_of_the_fingerprint() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "X"));
    observe(&mut p, &mut s, 0, ToolCall::success("read"));
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "X"));
    assert_eq!(s.repeated_failures(), 1);
    observe(&mut p, &mut s, 0, ToolCall::failure("grep", "X"));
    assert_eq!(s.repeated_failures(), 1);
}

#[test]
fn empty_failure_text_is_a_failure_but_never_a_repeat() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::failure("read", ""));
    observe(&mut p, &mut s, 0, ToolCall::failure("read", "  \n"));
    assert_eq!(counters(&p, &s), (10, 2, 2, 0));
}

fn snooze(minutes: u32) -> ToolCall<'static> {
    ToolCall {
        snooze_minutes: Some(minutes),
        ..ToolCall::success(SNOOZE_TOOL_NAME)
    }
}

#[test]
fn snooze_minutes_default_cap_floor_and_clamp() {
    assert_eq!(snooze_minutes(None, 60), Ok(30));
    assert_eq!(snooze_minutes(None, 20), Ok(20));
    assert_eq!(snooze_minutes(Some(999.0), 60), Ok(60));
    assert_eq!(snooze_minutes(Some(1.9), 60), Ok(1));
    assert_eq!(snooze_minutes(Some(0.0), 60), Ok(1));
    assert_eq!(snooze_minutes(Some(-5.0), 60), Ok(1));
    assert_eq!(snooze_minutes(Some(-0.0), 60), Ok(1));
    assert_eq!(snooze_minutes(Some(45.0), 60), Ok(45));
    assert!(snooze_minutes(Some(f64::NAN), 60).unwrap_err().0.is_nan());
    assert_eq!(
        snooze_minutes(Some(f64::INFINITY), 60),
        Err(InvalidSnoozeMinutes(f64::INFINITY))
    );
}

#[test]
fn snooze_suppresses_nudges_without_erasing_debt_and_expires_exactly() {
    let mut settings = settings();
    settings.debt_threshold = 3;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    let obs = observe(&mut p, &mut s, 0, snooze(5));
    assert_eq!(
        obs,
        Observation::Snoozed {
            minutes: 5,
            until: 5 * MINUTE
        }
    );
    assert_eq!(
        counters(&p, &s),
        (0, 0, 0, 0),
        "the snooze call itself records nothing"
    );
    for _ in 0..5 {
        assert_eq!(
            observe(&mut p, &mut s, 5 * MINUTE - 1, ToolCall::success("edit")),
            Observation::Counted
        );
    }
    assert_eq!(s.debt(), 10);
    assert_eq!(
        observe(&mut p, &mut s, 5 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
}

#[test]
fn a_second_snooze_never_shortens_an_active_one() {
    let p = policy();
    let mut p2 = policy();
    let mut s = AgentState::new(0);
    observe(&mut p2, &mut s, 0, snooze(30));
    assert_eq!(
        observe(&mut p2, &mut s, MINUTE, snooze(5)),
        Observation::SnoozeNotShortened
    );
    assert_eq!(s.snoozed_until(), Some(30 * MINUTE));
    assert_eq!(
        p.snooze_reply(&s, MINUTE, 5),
        "Research Nudge reminders are already snoozed for 29 minutes; that longer snooze stays. Accumulated debt will continue to be tracked."
    );
    assert_eq!(
        observe(&mut p2, &mut s, 2 * MINUTE, snooze(40)),
        Observation::Snoozed {
            minutes: 40,
            until: 42 * MINUTE
        }
    );
    assert_eq!(
        p.snooze_reply(&AgentState::new(0), 0, 1),
        "Research Nudge reminders snoozed for 1 minute. Accumulated debt will continue to be tracked."
    );
}

#[test]
fn snooze_is_per_agent_state() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    let mut p = Policy::new(settings);
    let mut a = AgentState::new(0);
    let mut b = AgentState::new(0);
    observe(&mut p, &mut a, 0, snooze(30));
    assert_eq!(
        observe(&mut p, &mut a, 0, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut b, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
}

#[test]
fn a_failed_snooze_arms_nothing_and_is_never_research() {
    let mut settings = settings();
    settings.research_tools = patterns(&["search", "snooze", "research_nudge_snooze"]);
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::success("edit"));
    let failed = ToolCall::failure(SNOOZE_TOOL_NAME, "minutes must be a number");
    assert_eq!(p.observe(&mut s, 0, &failed), Observation::Counted);
    assert_eq!(counters(&p, &s), (2 + 1 + 4, 2, 1, 0));
    assert_eq!(s.snoozed_until(), None);
}

#[test]
fn research_still_resets_during_a_snooze() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, snooze(30));
    observe(&mut p, &mut s, 0, ToolCall::success("edit"));
    observe(&mut p, &mut s, 0, ToolCall::success("web_fetch"));
    assert_eq!(counters(&p, &s), (0, 0, 0, 0));
    assert_eq!(s.snoozed_until(), Some(30 * MINUTE));
}

#[test]
fn a_clock_that_steps_back_cannot_rewind_the_state() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(100 * MINUTE);
    assert_eq!(
        observe(&mut p, &mut s, 100 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    // A step back is treated as "no time passed": still in cooldown, no underflow.
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut s, 110 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
}

#[test]
fn counters_saturate_instead_of_overflowing() {
    let mut settings = settings();
    settings.weights.failure = u32::MAX;
    settings.debt_threshold = u32::MAX;
    settings.max_tool_calls_without_research = u32::MAX;
    settings.max_time_without_research = Millis::MAX;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::failure("read", "a")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(s.debt(), u32::MAX);
    observe(&mut p, &mut s, 0, ToolCall::failure("read", "a"));
    assert_eq!(
        (s.debt(), s.failures(), s.repeated_failures()),
        (u32::MAX, 2, 1)
    );
}

#[test]
fn debug_lines_name_what_happened() {
    assert_eq!(Observation::Counted.debug_line("read"), None);
    assert_eq!(
        Observation::ResearchReset
            .debug_line("WebSearch")
            .as_deref(),
        Some("[research-nudge] research reset by WebSearch")
    );
    assert_eq!(
        Observation::Snoozed {
            minutes: 5,
            until: 0
        }
        .debug_line("x")
        .as_deref(),
        Some("[research-nudge] agent snoozed nudges for 5m")
    );
}

#[test]
fn a_nudge_carries_every_threshold_reached_on_that_call() {
    let mut settings = settings();
    settings.debt_threshold = 3;
    settings.max_tool_calls_without_research = 3;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::success("read"));
    observe(&mut p, &mut s, 0, ToolCall::success("read"));
    let all = Triggers {
        debt: true,
        calls: true,
        minutes: true,
    };
    assert_eq!(
        observe(&mut p, &mut s, 15 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(all)
    );
    assert_eq!(all.names(), ["debt", "calls", "minutes"]);
    assert_eq!(CALLS.names(), ["calls"]);
    assert!(!Triggers::default().any());
    assert_eq!(Triggers::default().names(), Vec::<&str>::new());
}

#[test]
fn triggers_and_hold_report_a_threshold_the_snooze_or_cooldown_holds_back() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    assert_eq!(p.triggers(&s, 0), Triggers::default());
    assert_eq!(p.hold(&s, 0), None);
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    // Reached again one call later, but the cooldown holds it.
    assert_eq!(
        observe(&mut p, &mut s, MINUTE, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(p.triggers(&s, MINUTE), DEBT);
    assert_eq!(p.hold(&s, MINUTE), Some(Hold::Cooldown));
    assert_eq!(p.hold(&s, 10 * MINUTE), None);
    // A snooze outranks the cooldown.
    observe(&mut p, &mut s, MINUTE, snooze(30));
    assert_eq!(p.hold(&s, 2 * MINUTE), Some(Hold::Snooze));
    assert_eq!(p.hold(&s, 31 * MINUTE), None);
    // Times before the state's clock do not underflow.
    assert_eq!(p.triggers(&AgentState::new(MINUTE), 0), Triggers::default());
}

#[test]
fn unanswered_reminders_back_the_cooldown_off_until_research_answers() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    settings.max_time_without_research = Millis::MAX;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    // The first reminder and the first repeat keep the original 10-minute cooldown ...
    assert_eq!(
        observe(&mut p, &mut s, 0, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(p.cooldown(&s), 10 * MINUTE);
    assert_eq!(
        observe(&mut p, &mut s, 10 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    // ... then each unanswered one doubles it: 20 minutes, then 40.
    assert_eq!(s.unanswered_reminders(), 2);
    assert_eq!(p.cooldown(&s), 20 * MINUTE);
    assert_eq!(
        observe(&mut p, &mut s, 30 * MINUTE - 1, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(p.hold(&s, 30 * MINUTE - 1), Some(Hold::Cooldown));
    assert_eq!(
        observe(&mut p, &mut s, 30 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
    assert_eq!(p.cooldown(&s), 40 * MINUTE);
    // Research answers them: the count starts again, the last reminder's cooldown carries over.
    assert_eq!(
        observe(&mut p, &mut s, 31 * MINUTE, ToolCall::success("web_search")),
        Observation::ResearchReset
    );
    assert_eq!(s.unanswered_reminders(), 0);
    assert_eq!(p.cooldown(&s), 10 * MINUTE);
    assert_eq!(
        observe(&mut p, &mut s, 40 * MINUTE - 1, ToolCall::success("read")),
        Observation::Counted
    );
    assert_eq!(
        observe(&mut p, &mut s, 40 * MINUTE, ToolCall::success("read")),
        Observation::Nudge(DEBT)
    );
}

#[test]
fn a_backoff_of_one_keeps_the_original_fixed_cooldown() {
    let mut settings = settings();
    settings.debt_threshold = 1;
    settings.max_time_without_research = Millis::MAX;
    settings.reminder_backoff = 1.0;
    let mut p = Policy::new(settings);
    let mut s = AgentState::new(0);
    for k in 0..5 {
        assert_eq!(
            observe(&mut p, &mut s, k * 10 * MINUTE, ToolCall::success("read")),
            Observation::Nudge(DEBT)
        );
        assert_eq!(p.cooldown(&s), 10 * MINUTE);
    }
}

#[test]
fn backed_off_is_exact_rounded_and_saturating() {
    assert_eq!(backed_off(600_000, 2.0, 0), 600_000);
    assert_eq!(backed_off(600_000, 2.0, 1), 600_000);
    assert_eq!(backed_off(600_000, 2.0, 2), 1_200_000);
    assert_eq!(backed_off(600_000, 1.5, 3), 1_350_000);
    assert_eq!(backed_off(1, 1.5, 2), 2);
    assert_eq!(backed_off(0, 100.0, 50), 0);
    assert_eq!(backed_off(600_000, 100.0, u32::MAX), Millis::MAX);
    assert_eq!(backed_off(600_000, f64::NAN, 5), 600_000);
    assert_eq!(backed_off(600_000, 0.5, 5), 600_000);
}

#[test]
fn a_kill_or_a_timeout_is_a_failure_fingerprinted_by_its_output() {
    let mut p = policy();
    let mut s = AgentState::new(0);
    let killed = ToolCall::stopped("bash", true, false, "building\n[killed by signal: SIGKILL]");
    assert!(killed.failed());
    observe(&mut p, &mut s, 0, killed);
    assert_eq!(counters(&p, &s), (5, 1, 1, 0));
    // The same kill again is a repeat.
    observe(&mut p, &mut s, 1, killed);
    assert_eq!(counters(&p, &s), (16, 2, 2, 1));
    let timed_out = ToolCall::stopped("bash", false, true, "running 12 tests");
    assert!(timed_out.failed());
    observe(&mut p, &mut s, 2, timed_out);
    assert_eq!(counters(&p, &s), (21, 3, 3, 1));
    // An error result stays a failure; a successful call with neither is none.
    assert!(!ToolCall::stopped("bash", false, false, "ok").failed());
    assert!(ToolCall::failure("bash", "boom").failed());
    // A timed-out research call is no research.
    assert_eq!(
        observe(
            &mut p,
            &mut s,
            3,
            ToolCall::stopped("web_search", false, true, "")
        ),
        Observation::Counted
    );
    assert_eq!(s.failures(), 4);
}

/// The specific reminder in every shape it takes: with and without a repeated failure, with
/// research tools, with none, with the tools unknown (a replay); and the original style, which
/// adds nothing. The body is the built-in one, so the snapshot is the text the model reads.
#[test]
fn specific_reminder_names_the_failure_and_the_research_tools() {
    let specific = Settings {
        reminder: SPECIFIC_REMINDER.to_owned(),
        reminder_style: ReminderStyle::Specific,
        ..settings()
    };
    let loop_calls = [
        ToolCall::success("read"),
        ToolCall::exited(
            "bash",
            1,
            "Traceback (most recent call last):\n  File \"/tmp/w/app.py\", line 3\nTypeError: Cannot read properties of undefined (reading \"map\")\u{200B}\n",
        ),
        ToolCall::success("edit"),
        ToolCall::exited(
            "bash",
            1,
            "Traceback (most recent call last):\n  File \"/tmp/w/app.py\", line 4\nTypeError: Cannot read properties of undefined (reading \"map\")\u{200B}\n",
        ),
    ];
    let distinct_failures = [
        ToolCall::failure("bash", "ENOENT: no such file"),
        ToolCall::failure("read", "permission denied"),
    ];
    let run = |settings: &Settings, calls: &[ToolCall<'_>]| {
        let mut p = Policy::new(settings.clone());
        let mut s = AgentState::new(0);
        for (i, call) in calls.iter().enumerate() {
            observe(&mut p, &mut s, i as Millis, *call);
        }
        (p, s)
    };
    let agent_tools = [
        "read",
        "bash",
        "mcp__brave__brave_web_search",
        "fetch_url",
        SNOOZE_TOOL_NAME,
    ];
    let mut shapes = Vec::new();
    let (p, s) = run(&specific, &loop_calls);
    shapes.push((
        "repeated failure, research tools",
        p.reminder_text_for(&s, Some(&agent_tools)),
    ));
    shapes.push((
        "repeated failure, no research tool",
        p.reminder_text_for(&s, Some(&["read", "bash"])),
    ));
    shapes.push((
        "repeated failure, tools unknown (replay)",
        p.reminder_text(&s),
    ));
    let many: Vec<String> = (1..=6).map(|i| format!("mcp__s{i}__web_search")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    shapes.push((
        "repeated failure, six research tools",
        p.reminder_text_for(&s, Some(&many)),
    ));
    let (p, s) = run(&specific, &distinct_failures);
    shapes.push((
        "no repeated failure, research tools",
        p.reminder_text_for(&s, Some(&agent_tools)),
    ));
    let (p, s) = run(&settings(), &loop_calls);
    shapes.push((
        "original style",
        p.reminder_text_for(&s, Some(&agent_tools)),
    ));
    let text: Vec<String> = shapes
        .iter()
        .map(|(shape, reminder)| format!("== {shape}\n{reminder}\n"))
        .collect();
    expect_test::expect_file!["snapshots/reminders.txt"].assert_eq(&text.join("\n"));
}

/// Research resets the phrase with the rest of the state: a later reminder does not name a
/// failure from before the research.
#[test]
fn research_forgets_the_search_phrase() {
    let mut p = Policy::new(Settings {
        reminder_style: ReminderStyle::Specific,
        ..settings()
    });
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "error: E1"));
    observe(&mut p, &mut s, 1, ToolCall::failure("bash", "error: E1"));
    assert_eq!(s.search_phrase(), Some("error: E1"));
    observe(&mut p, &mut s, 2, ToolCall::success("web_search"));
    assert_eq!(s.search_phrase(), None);
    // The original style never computes one.
    let mut p = policy();
    let mut s = AgentState::new(0);
    observe(&mut p, &mut s, 0, ToolCall::failure("bash", "error: E1"));
    observe(&mut p, &mut s, 1, ToolCall::failure("bash", "error: E1"));
    assert_eq!(s.search_phrase(), None);
}

/// A long shell output passed as its end only: counted when that end decides the fingerprint
/// (the same repeat as from the whole output), otherwise nothing is recorded and the policy asks
/// for the whole windows.
#[test]
fn an_end_only_call_counts_when_its_end_decides_and_asks_for_text_otherwise() {
    let p = policy();
    let tool = p.tool("bash");
    let output = format!(
        "{}\nerror: missing crate foo\n",
        "compiling 1 2 3\n".repeat(500)
    );
    let end = &output[output.len() - END_PROBE_UNITS..];
    let end_only = |tail| ToolCall {
        head: "",
        tail,
        ..ToolCall::exited("bash", 1, "")
    };
    let mut whole = AgentState::new(0);
    let mut probed = AgentState::new(0);
    for now in [0, 1000] {
        p.observe_tool(
            &mut whole,
            now,
            &tool,
            &ToolCall::exited("bash", 1, &output),
        );
        let obs = p.observe_tool_from_end(&mut probed, now, &tool, &end_only(end));
        assert_eq!(obs, Ok(Observation::Counted));
    }
    assert_eq!(counters(&p, &probed), counters(&p, &whole));
    assert_eq!(
        counters(&p, &probed).3,
        1,
        "the second failure repeats the first"
    );

    let before = counters(&p, &probed);
    // An end inside one long token, or a failure that is no shell output: nothing recorded.
    let token = "a".repeat(END_PROBE_UNITS);
    for call in [end_only(&token), ToolCall::failure("bash", end)] {
        assert_eq!(
            p.observe_tool_from_end(&mut probed, 2000, &tool, &call),
            Err(NeedText)
        );
    }
    assert_eq!(counters(&p, &probed), before);
}
