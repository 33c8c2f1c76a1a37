//! Property tests of the pain-point gate over proptest's generated event sequences.
//!
//! State machine:
//! - nothing panics, whatever the settings and the order of events, over several agents;
//! - arming happens exactly when a threshold is reached (both inclusive), and only by a counted
//!   experiment;
//! - allowlisted calls and the Code Mode transport are neutral: never denied while pending, and
//!   their results change nothing (a result of a tool `reads_results_of` rules out never does);
//! - results while pending (the gate's own denials among them) change nothing;
//! - a user prompt always resets; a lift always zeroes the counters;
//! - the check block is shown at most once per arming; the same-direction shot is denied at most
//!   once per lift; an idle gate never denies;
//! - the escape valve always opens a gate that is never answered, after exactly the configured
//!   number of refusals;
//! - the gate is a pure function of its inputs, and its state is a fixed-size `Copy` value.
//!
//! Answer detector:
//! - nothing panics on any text;
//! - three valid answers in any supported decoration lift; dropping one names exactly that one;
//! - the same answers quoted, fenced, indented as code, in an HTML comment or quoted in a list
//!   item never count.

use pain_point_gate::*;
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "probe",
    "bash",
    "edit",
    "read",
    "grep",
    CODE_MODE_TOOL,
    ASK_USER_TOOL,
    "report",
    "mcp__docs__search",
    "web_fetch",
];
const ARGS: &[&str] = &[
    r#"{"command":"sleep 5"}"#,
    r#"{"command":"pytest tests/a.py::t1"}"#,
    r#"{"command":"cd /r && pytest tests/a.py -x"}"#,
    r#"{"x":1}"#,
    r#"{"x":2}"#,
    "{}",
    r#"{"b":2,"a":1}"#,
    "not json",
];
const REPLIES: &[&str] = &[
    "卡点=测试在 CI 上超时 排除=不是缓存问题 性价比=先本地复现超时",
    "blocker=the CI test times out\nruled_out=the cache\nbest_path=reproduce locally",
    "卡点=测试在 CI 上超时\n排除=不是缓存问题",
    "> 卡点=测试超时 排除=缓存 性价比=本地复现",
    "卡点=… 排除=… 性价比=…",
    "",
    "I will try once more.",
];
const PROMPTS: &[&str] = &["fix the build", "修复构建", ""];
const AGENTS: usize = 3;

#[derive(Clone, Debug)]
enum Op {
    Call {
        agent: usize,
        name: &'static str,
        args: &'static str,
    },
    Result {
        agent: usize,
        name: &'static str,
        args: &'static str,
        outcome: Outcome,
    },
    Prompt {
        agent: usize,
        text: &'static str,
    },
    Reply {
        agent: usize,
        text: String,
    },
    Step {
        agent: usize,
    },
}

fn outcome() -> impl Strategy<Value = Outcome> {
    (
        any::<bool>(),
        proptest::option::of(prop_oneof![Just(0i64), Just(1), Just(137), any::<i64>()]),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![9 => Just(false), 1 => Just(true)],
        prop_oneof![9 => Just(false), 1 => Just(true)],
    )
        .prop_map(
            |(ok, exit_code, killed, timed_out, cancelled, unknown_tool)| Outcome {
                ok: ok && !unknown_tool,
                exit_code,
                killed: killed && exit_code.is_none(),
                timed_out: timed_out && exit_code.is_none(),
                cancelled,
                unknown_tool,
            },
        )
}

fn op() -> impl Strategy<Value = Op> {
    let agent = 0..AGENTS;
    let name = proptest::sample::select(NAMES);
    let args = proptest::sample::select(ARGS);
    let reply = prop_oneof![
        4 => proptest::sample::select(REPLIES).prop_map(str::to_owned),
        1 => ".{0,60}",
    ];
    prop_oneof![
        4 => (agent.clone(), name.clone(), args.clone())
            .prop_map(|(agent, name, args)| Op::Call { agent, name, args }),
        5 => (agent.clone(), name, args, outcome())
            .prop_map(|(agent, name, args, outcome)| Op::Result { agent, name, args, outcome }),
        1 => (agent.clone(), proptest::sample::select(PROMPTS))
            .prop_map(|(agent, text)| Op::Prompt { agent, text }),
        2 => (agent.clone(), reply).prop_map(|(agent, text)| Op::Reply { agent, text }),
        2 => agent.prop_map(|agent| Op::Step { agent }),
    ]
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        1..=4u32,
        1..=4u32,
        1..=5u32,
        proptest::sample::select(&LanguageChoice::ALL[..]),
        prop_oneof![9 => Just(true), 1 => Just(false)],
        any::<bool>(),
        proptest::sample::select(&Counting::ALL[..]),
    )
        .prop_map(
            |(failure, repeat, max_denials, language, enabled, extra, counting)| {
                let extra = extra.then(|| ToolPattern::new("mcp__docs__*").unwrap());
                Settings::default()
                    .with_enabled(enabled)
                    .with_failure_threshold(failure)
                    .with_repeat_threshold(repeat)
                    .with_max_denials(max_denials)
                    .with_language(language)
                    .with_counting(counting)
                    .with_extra_allowlist(extra)
            },
        )
}

fn counters(gate: &AgentGate) -> (u32, u32) {
    (gate.failures(), gate.run_length())
}

/// Per-agent bookkeeping of the properties that span several events.
#[derive(Clone, Copy, Default)]
struct Track {
    check_shown_since_arming: bool,
    same_shot_denials_since_lift: u32,
}

/// Runs `ops`, checking every invariant after every event; returns the reactions.
fn run(s: &Settings, ops: &[Op]) -> Vec<Reaction> {
    let mut gates = [AgentGate::new(); AGENTS];
    let mut tracks = [Track::default(); AGENTS];
    let mut reactions = Vec::new();
    for op in ops {
        let (agent, input) = match op {
            Op::Call { agent, name, args } => (
                *agent,
                Input::ToolCall {
                    name,
                    args: canonical_args_hash_str(args),
                },
            ),
            Op::Result {
                agent,
                name,
                args,
                outcome,
            } => (
                *agent,
                Input::ToolResult {
                    site: Site::DIRECT,
                    name,
                    shot: Shot::from_json(*name, args),
                    outcome: *outcome,
                    failure: FailureKeys::default(),
                },
            ),
            Op::Prompt { agent, text } => (*agent, Input::UserPrompt { text }),
            Op::Reply { agent, text } => (*agent, Input::AssistantText { text }),
            Op::Step { agent } => (*agent, Input::Step),
        };
        let before = gates[agent];
        let reaction = gates[agent].handle(s, input);
        check(
            s,
            &before,
            &gates[agent],
            &mut tracks[agent],
            input,
            &reaction,
        );
        reactions.push(reaction);
    }
    reactions
}

fn neutral(s: &Settings, name: &str) -> bool {
    name == CODE_MODE_TOOL || s.is_allowlisted(name)
}

fn check(
    s: &Settings,
    before: &AgentGate,
    after: &AgentGate,
    track: &mut Track,
    input: Input<'_>,
    reaction: &Reaction,
) {
    if !s.enabled() {
        assert!(
            reaction.timeline_entry().is_none(),
            "a disabled gate is silent"
        );
        if !matches!(input, Input::UserPrompt { .. }) {
            assert_eq!(after, before);
        }
        return;
    }
    if after.status() == Status::Pending && before.status() != Status::Pending {
        assert!(
            matches!(reaction, Reaction::Observation(Observation::Armed(_))),
            "only a counted experiment arms"
        );
        track.check_shown_since_arming = false;
    }
    match (input, reaction) {
        (Input::ToolCall { name, .. }, Reaction::Decision(decision)) => match decision {
            Decision::Allow => {
                if before.status() == Status::Pending {
                    assert!(neutral(s, name), "{name} allowed while pending");
                    assert_eq!(after, before);
                }
            }
            Decision::Deny { kind, reason } => {
                assert!(reason.starts_with(PLUGIN_TAG));
                match kind {
                    DenyKind::Pending => {
                        assert_eq!(before.status(), Status::Pending);
                        assert!(!neutral(s, name), "{name} denied although neutral");
                        assert_eq!(after.denials(), before.denials().saturating_add(1));
                        assert_eq!(counters(after), counters(before));
                    }
                    DenyKind::SameShot => {
                        assert_eq!(before.status(), Status::Probation);
                        track.same_shot_denials_since_lift += 1;
                        assert_eq!(track.same_shot_denials_since_lift, 1, "denied once only");
                    }
                }
            }
        },
        (Input::ToolResult { name, outcome, .. }, Reaction::Observation(observation)) => {
            if !AgentGate::reads_results_of(s, name) {
                assert_eq!(after, before, "{name}'s results are not read");
            }
            let human = name == ASK_USER_TOOL && !outcome.failed() && !outcome.cancelled;
            match observation {
                Observation::Waited => {
                    assert_eq!(after, before, "waiting changes nothing");
                    assert!(s.counting().per_problem());
                }
                Observation::Ignored(_) | Observation::Transparent => {
                    assert_eq!(
                        after, before,
                        "an ignored or neutral result changes nothing"
                    );
                    if before.status() == Status::Pending && !human {
                        assert!(matches!(
                            observation,
                            Observation::Ignored(
                                IgnoreReason::WhilePending
                                    | IgnoreReason::Cancelled
                                    | IgnoreReason::UnknownTool
                            )
                        ));
                    }
                    if matches!(observation, Observation::Transparent) {
                        assert!(neutral(s, name));
                    }
                }
                Observation::HumanAnswered => {
                    assert!(human);
                    assert_eq!(after.status(), Status::Idle);
                    assert_eq!(counters(after), (0, 0));
                }
                Observation::Counted | Observation::Armed(_) => {
                    // A program's own failure is its one counted result (none is nested here).
                    assert!(
                        !neutral(s, name) || (name == CODE_MODE_TOOL && outcome.failed()),
                        "{name} counted although neutral"
                    );
                    assert_ne!(before.status(), Status::Pending);
                    let failed = u32::from(outcome.failed());
                    match s.counting() {
                        Counting::AnyFailure => {
                            assert_eq!(after.failures(), before.failures().saturating_add(failed))
                        }
                        // One problem grows by one, or a success resolves one.
                        Counting::SameProblem if failed == 1 => assert!(
                            (before.failures()..=before.failures() + 1).contains(&after.failures())
                        ),
                        Counting::SameProblem => assert!(after.failures() <= before.failures()),
                        // As above, or no change: a fresh script's first failure, or progress
                        // (which no detail-less failure here makes).
                        Counting::NoProgress if failed == 1 => assert!(
                            (before.failures()..=before.failures() + 1).contains(&after.failures())
                        ),
                        Counting::NoProgress => assert!(after.failures() <= before.failures()),
                    }
                    let run = after.run_length();
                    let least = u32::from(s.counting() == Counting::AnyFailure);
                    assert!((least..=before.run_length() + 1).contains(&run), "{run}");
                    let reached =
                        after.failures() >= s.failure_threshold() || run >= s.repeat_threshold();
                    match observation {
                        Observation::Counted => {
                            assert!(!reached, "a reached threshold must arm (inclusive)");
                            assert_ne!(after.status(), Status::Pending);
                        }
                        Observation::Armed(trigger) => {
                            assert!(reached);
                            assert_eq!(after.status(), Status::Pending);
                            assert_eq!(after.missing(), Some(MarkerSet::ALL));
                            assert_eq!(
                                trigger.failures,
                                (after.failures() >= s.failure_threshold())
                                    .then_some(after.failures())
                            );
                            assert_eq!(
                                trigger.repeats,
                                (run >= s.repeat_threshold()).then_some(run)
                            );
                        }
                        _ => unreachable!(),
                    }
                }
            }
        }
        (Input::UserPrompt { .. }, Reaction::UserPrompt { cleared }) => {
            assert_eq!(*cleared, before.status() != Status::Idle);
            assert_eq!(after.status(), Status::Idle);
            assert_eq!(counters(after), (0, 0));
        }
        (Input::AssistantText { text }, Reaction::Lift(lift)) => match lift {
            LiftOutcome::Lifted => {
                assert_eq!(before.status(), Status::Pending);
                assert!(missing_answers(text).is_empty());
                assert_eq!(after.status(), Status::Probation);
                assert_eq!(counters(after), (0, 0));
                track.same_shot_denials_since_lift = 0;
            }
            LiftOutcome::Partial { missing } => {
                assert_eq!(before.status(), Status::Pending);
                assert_eq!(*missing, missing_answers(text));
                assert!(!missing.is_empty());
                assert_eq!(after.missing(), Some(*missing));
            }
            LiftOutcome::NotPending => {
                assert_ne!(before.status(), Status::Pending);
                assert_eq!(after, before);
            }
        },
        (Input::Step, Reaction::Notice(notice)) => match notice {
            Some(Notice {
                kind: NoticeKind::Check,
                text,
                summary,
            }) => {
                assert_eq!(after.status(), Status::Pending);
                assert!(
                    !track.check_shown_since_arming,
                    "the check block is shown once"
                );
                track.check_shown_since_arming = true;
                assert!(text.starts_with(PLUGIN_TAG));
                assert!(summary.chars().count() <= 120);
                assert!(
                    missing_answers(text) == MarkerSet::ALL,
                    "the check cannot lift"
                );
            }
            Some(Notice {
                kind: NoticeKind::Escape { denials },
                summary,
                ..
            }) => {
                assert!(
                    track.check_shown_since_arming,
                    "the check comes before an escape"
                );
                assert_eq!(*denials, before.denials());
                assert!(*denials >= s.max_denials());
                assert_eq!(after.status(), Status::Idle);
                assert_eq!(counters(after), (0, 0));
                assert!(summary.chars().count() <= 120);
            }
            None => {
                assert_eq!(after, before);
                if after.status() == Status::Pending {
                    assert!(after.denials() < s.max_denials() || !track.check_shown_since_arming);
                }
            }
        },
        (input, reaction) => panic!("{input:?} answered with {reaction:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_event_sequence_keeps_the_invariants(
        s in settings(),
        ops in proptest::collection::vec(op(), 0..120),
    ) {
        let first = run(&s, &ops);
        prop_assert_eq!(&first, &run(&s, &ops), "the gate is pure");
    }

    #[test]
    fn a_stuck_model_always_escapes(
        max_denials in 1..=30u32,
        calls_per_step in 1..=6u32,
    ) {
        let s = Settings::default().with_max_denials(max_denials);
        let mut gate = AgentGate::new();
        let a = canonical_args_hash_str("{}");
        let shot = Shot::from_json("bash", "{}");
        for _ in 0..3 {
            let _ = gate.on_result(&s, "bash", shot, Outcome::exited(1), None);
        }
        prop_assert_eq!(gate.status(), Status::Pending);
        let mut steps = 0u32;
        let escaped = loop {
            let notice = gate.pre_step(&s);
            steps += 1;
            if let Some(Notice { kind: NoticeKind::Escape { denials }, .. }) = notice {
                break denials;
            }
            prop_assert!(steps <= max_denials + 1, "no escape after {steps} steps");
            for _ in 0..calls_per_step {
                let decision = gate.pre_execute(&s, "bash", a);
                let denied = matches!(decision, Decision::Deny { kind: DenyKind::Pending, .. });
                prop_assert!(denied, "not denied: {:?}", decision);
                let _ = gate.on_result(&s, "bash", shot, Outcome::error(), None);
            }
        };
        // Step 1 shows the check; each later step sees `calls_per_step` more refusals.
        let refusal_steps = max_denials.div_ceil(calls_per_step);
        prop_assert_eq!(steps, 1 + refusal_steps);
        prop_assert_eq!(escaped, refusal_steps * calls_per_step);
        prop_assert_eq!(gate.status(), Status::Idle);
        prop_assert_eq!(gate.pre_execute(&s, "bash", a), Decision::Allow);
    }

    #[test]
    fn the_detector_never_panics(text in any::<String>()) {
        let answered = answered_markers(&text);
        prop_assert_eq!(missing_answers(&text), MarkerSet::ALL.without(answered));
    }

    #[test]
    fn the_detector_never_panics_on_marker_soup(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("卡点"), Just("排除"), Just("性价比"), Just("假设"), Just("blocker"),
                Just("ruled out"), Just("best_path"), Just("="), Just("＝"), Just(":"),
                Just("："), Just("**"), Just("__"), Just("> "), Just("```"), Just("~~~"),
                Just("\n"), Just(" "), Just("- "), Just("1. "), Just("…"), Just("测试超时"),
                Just("the cache"), Just("`"), Just("<"), Just(">"), Just("\r\n"), Just("é"),
            ],
            0..40,
        ),
    ) {
        let text: String = parts.concat();
        let _ = missing_answers(&text);
    }

    #[test]
    fn three_decorated_answers_lift_and_quoting_or_fencing_undoes_it(
        labels in (0..4usize, 0..6usize, 0..5usize),
        upper in any::<bool>(),
        separator in proptest::sample::select(&["=", "＝", ":", "：", " = ", " ："][..]),
        decoration in proptest::sample::select(&["", "- ", "* ", "1. ", "## ", "  + ", "3) "][..]),
        emphasis in 0..3usize,
        one_line in any::<bool>(),
        dropped in 0..3usize,
    ) {
        const BLOCKER: [&str; 4] = ["卡点", "blocker", "Blocker", "BLOCKER"];
        const RULED_OUT: [&str; 6] = ["排除", "ruled_out", "ruled out", "Ruled-Out", "excluded", "假设"];
        const BEST_PATH: [&str; 5] = ["性价比", "best_path", "best path", "cost-effective", "Cost_Effective"];
        let answers = ["the CI job times out", "缓存不是原因", "reproduce it locally first"];
        // Plain `label=`, `**label**=`, or `**label=**` (as in `**Blocker:**`).
        let marker = |l: &str| {
            let l = if upper { l.to_uppercase() } else { l.to_owned() };
            match emphasis {
                0 => format!("{l}{separator}"),
                1 => format!("**{l}**{separator}"),
                _ => format!("**{l}{separator}**"),
            }
        };
        let lines: Vec<String> = [BLOCKER[labels.0], RULED_OUT[labels.1], BEST_PATH[labels.2]]
            .iter()
            .zip(answers)
            .map(|(l, a)| format!("{decoration}{}{a}", marker(l)))
            .collect();
        let join = |lines: &[String]| {
            if one_line {
                lines.iter().map(|l| l.trim_start()).collect::<Vec<_>>().join(" ")
            } else {
                lines.join("\n")
            }
        };
        let full = join(&lines);
        prop_assert_eq!(missing_answers(&full), MarkerSet::EMPTY, "{}", full);

        let mut partial = lines.clone();
        partial.remove(dropped);
        let partial = join(&partial);
        prop_assert_eq!(
            missing_answers(&partial),
            MarkerSet::EMPTY.with(Marker::ALL[dropped]),
            "{}", partial
        );

        let quoted: String = full.lines().map(|l| format!("> {l}\n")).collect();
        prop_assert_eq!(missing_answers(&quoted), MarkerSet::ALL, "{}", quoted);
        let fenced = format!("```\n{full}\n```");
        prop_assert_eq!(missing_answers(&fenced), MarkerSet::ALL, "{}", fenced);
        let indented: String = full.lines().map(|l| format!("    {l}\n")).collect();
        prop_assert_eq!(missing_answers(&indented), MarkerSet::ALL, "{}", indented);
        let commented = format!("<!--\n{full}\n-->");
        prop_assert_eq!(missing_answers(&commented), MarkerSet::ALL, "{}", commented);
        let listed: String = full.lines().map(|l| format!("- > {l}\n")).collect();
        prop_assert_eq!(missing_answers(&listed), MarkerSet::ALL, "{}", listed);
    }
}

#[test]
fn agent_state_is_a_fixed_size_copy_value() {
    fn assert_copy<T: Copy + 'static>() {}
    assert_copy::<AgentGate>();
    let mut gate = AgentGate::new();
    let s = Settings::default();
    let size = std::mem::size_of_val(&gate);
    for i in 0..10_000u32 {
        let json = format!(r#"{{"command":"python t{i}.py"}}"#);
        let _ = gate.pre_execute(&s, "bash", canonical_args_hash_str(&json));
        let _ = gate.on_result(
            &s,
            "bash",
            Shot::from_json("bash", &json),
            Outcome::exited(1),
            None,
        );
        let _ = gate.pre_step(&s);
    }
    assert_eq!(std::mem::size_of_val(&gate), size);
    assert!(size <= 512, "{size}");
}

/// A shell command on one of `targets` distinct test files, spelled one of several ways.
fn spelled(target: usize, spelling: usize) -> String {
    let command = match spelling % 3 {
        0 => format!("pytest tests/t{target}.py"),
        1 => format!("cd /repo && python -m pytest tests/t{target}.py::case -x 2>&1 | tail -20"),
        _ => format!("timeout 60 pytest -q tests/t{target}.py"),
    };
    serde_json::json!({ "command": command }).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Failures on pairwise different targets never add up, however many (within the slots).
    #[test]
    fn unrelated_failures_never_arm(
        spellings in proptest::collection::vec(0..3usize, 1..=PROBLEM_SLOTS),
        threshold in 2..=4u32,
    ) {
        let s = Settings::default().with_failure_threshold(threshold);
        let mut gate = AgentGate::new();
        for (target, spelling) in spellings.iter().enumerate() {
            let json = spelled(target, *spelling);
            let observed = gate.on_result(&s, "bash", Shot::from_json("bash", &json), Outcome::exited(1), None);
            prop_assert_eq!(observed, Observation::Counted);
        }
        prop_assert_eq!(gate.failures(), 0);
    }

    /// Equivalent failures (one target, any spelling) arm when the retries after the first reach
    /// the threshold, whatever successes on other targets and waits come between; a success on
    /// the target resolves them.
    #[test]
    fn equivalent_failures_arm_and_a_success_resolves(
        spellings in proptest::collection::vec(0..3usize, 6),
        noise in proptest::collection::vec(1..5usize, 6),
        threshold in 2..=4u32,
        resolve_at in 0..5usize,
    ) {
        let s = Settings::default().with_failure_threshold(threshold).with_repeat_threshold(100);
        let mut gate = AgentGate::new();
        let mut seen = 0u32;
        for (i, spelling) in spellings.iter().enumerate() {
            if i == resolve_at {
                let json = spelled(0, i);
                let _ = gate.on_result(&s, "bash", Shot::from_json("bash", &json), Outcome::success(), None);
                seen = 0;
            }
            let other = spelled(noise[i], i);
            let _ = gate.on_result(&s, "bash", Shot::from_json("bash", &other), Outcome::success(), None);
            let wait = r#"{"command":"sleep 10"}"#;
            prop_assert_eq!(
                gate.on_result(&s, "bash", Shot::from_json("bash", wait), Outcome::success(), None),
                Observation::Waited
            );
            let json = spelled(0, *spelling);
            let observed = gate.on_result(&s, "bash", Shot::from_json("bash", &json), Outcome::exited(1), None);
            seen += 1;
            let counted = seen - 1;
            if counted >= threshold {
                let armed = matches!(observed, Observation::Armed(Trigger { failures: Some(n), .. }) if n == counted);
                prop_assert!(armed, "{:?}", observed);
                break;
            }
            prop_assert_eq!(observed, Observation::Counted);
            prop_assert_eq!(gate.failures(), counted);
        }
    }

    /// A cycle of two different calls with the same outcomes arms once it came round
    /// `repeatThreshold` more times.
    #[test]
    fn cycles_arm_after_the_threshold_rounds(threshold in 2..=5u32, failing in any::<bool>()) {
        let s = Settings::default().with_repeat_threshold(threshold).with_failure_threshold(100);
        let mut gate = AgentGate::new();
        let outcome = if failing { Outcome::exited(1) } else { Outcome::success() };
        let a = Shot::from_json("bash", r#"{"command":"cat a.py"}"#);
        let b = Shot::from_json("bash", r#"{"command":"git diff"}"#);
        for round in 0..=threshold {
            let first = gate.on_result(&s, "bash", a, outcome, None);
            let second = gate.on_result(&s, "bash", b, outcome, None);
            prop_assert_eq!(first, Observation::Counted);
            if round < threshold {
                prop_assert_eq!(second, Observation::Counted);
            } else {
                let armed = matches!(second, Observation::Armed(Trigger { repeats: Some(n), .. }) if n == threshold);
                prop_assert!(armed, "{:?}", second);
            }
        }
    }
}
