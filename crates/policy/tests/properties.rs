//! Property tests of the research-debt policy. The properties themselves are in
//! `tests/checks/mod.rs`, shared with the `policy` fuzz target in `fuzz/` (which includes the same
//! file); here proptest generates the event sequences so they run in `cargo test`. See that
//! module for the list.

extern crate research_nudge_policy as policy;

#[path = "checks/mod.rs"]
mod checks;

use checks::{Clock, Runner};
use names::Pattern;
use policy::{
    AgentState, Millis, Observation, Policy, SNOOZE_TOOL_NAME, Settings, ToolCall, Weights,
};
use proptest::prelude::*;

const NAMES: &[&str] = &[
    "read",
    "edit",
    "bash",
    "web_search",
    "WebFetch",
    SNOOZE_TOOL_NAME,
    "mcp__github__search_github",
    "grep",
    "write_file",
    "run_tests",
    "run_code",
];
const AGENTS: usize = 3;

fn patterns(list: &[&str]) -> Vec<Pattern> {
    list.iter().map(|p| Pattern::new(p).unwrap()).collect()
}

fn settings(
    (debt_threshold, max_calls, max_time, cooldown): (u32, u32, u32, u32),
    w: [u32; 5],
    reminder_backoff: f64,
) -> Settings {
    Settings {
        debt_threshold,
        max_tool_calls_without_research: max_calls,
        max_time_without_research: Millis::from(max_time),
        cooldown: Millis::from(cooldown),
        reminder_backoff,
        weights: Weights {
            ordinary: w[0],
            mutation: w[1],
            execution: w[2],
            failure: w[3],
            repeated_failure: w[4],
        },
        max_snooze_minutes: 60,
        research_tools: patterns(&["web_search", "web_fetch", "search_github"]),
        mutation_tools: patterns(&["write", "edit"]),
        execution_tools: patterns(&["bash", "test"]),
        reminder: "Research first.".into(),
        reminder_style: policy::ReminderStyle::Original,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Call {
        agent: usize,
        clock: Clock,
        name: String,
        ok: bool,
        exit_code: Option<i64>,
        stopped: (bool, bool),
        text: String,
        snooze_minutes: Option<u32>,
    },
    UserPrompt {
        agent: usize,
        clock: Clock,
    },
}

/// Weights: small, zero, or at the top of the range (so saturation happens quickly).
fn weight() -> impl Strategy<Value = u32> {
    prop_oneof![
        0..5u32,
        Just(u32::MAX),
        Just(u32::MAX / 2 + 1),
        any::<u32>()
    ]
}

fn clock() -> impl Strategy<Value = Clock> {
    prop_oneof![
        8 => (0..600_000u64).prop_map(Clock::Forward),
        1 => any::<u32>().prop_map(|ms| Clock::Back(u64::from(ms))),
        1 => prop_oneof![any::<u64>(), Just(u64::MAX)].prop_map(Clock::At),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let name = prop_oneof![
        6 => proptest::sample::select(NAMES).prop_map(str::to_owned),
        1 => "[a-zA-Z_]{0,12}",
    ];
    let text = prop_oneof![
        Just(String::new()),
        Just("TypeError at line 12".to_owned()),
        Just("TypeError at line 99".to_owned()),
        ".{0,40}",
    ];
    prop_oneof![
        9 => (
            0..AGENTS,
            clock(),
            name,
            any::<bool>(),
            proptest::option::of(prop_oneof![Just(0i64), Just(1), Just(137), any::<i64>()]),
            prop_oneof![8 => Just((false, false)), 1 => any::<(bool, bool)>()],
            text,
            proptest::option::of(prop_oneof![1..120u32, any::<u32>()]),
        )
            .prop_map(|(agent, clock, name, ok, exit_code, stopped, text, snooze_minutes)| Op::Call {
                agent,
                clock,
                name,
                ok,
                exit_code,
                stopped,
                text,
                snooze_minutes,
            }),
        1 => (0..AGENTS, clock()).prop_map(|(agent, clock)| Op::UserPrompt { agent, clock }),
    ]
}

fn backoff() -> impl Strategy<Value = f64> {
    prop_oneof![Just(1.0), Just(2.0), 1.0..100.0f64, Just(f64::MAX)]
}

fn run(policy: Policy, start: u64, ops: &[Op]) -> (Vec<Observation>, Vec<AgentState>) {
    let mut runner = Runner::new(policy, AGENTS, start);
    for op in ops {
        match op {
            Op::UserPrompt { agent, clock } => runner.user_prompt(*agent, *clock),
            Op::Call {
                agent,
                clock,
                name,
                ok,
                exit_code,
                stopped: (killed, timed_out),
                text,
                snooze_minutes,
            } => {
                let (head, tail) = fingerprint::Failure::windows(text);
                runner.call(
                    *agent,
                    *clock,
                    &ToolCall {
                        name,
                        ok: *ok,
                        exit_code: *exit_code,
                        killed: *killed,
                        timed_out: *timed_out,
                        head,
                        tail,
                        unknown_tool: false,
                        snooze_minutes: *snooze_minutes,
                    },
                );
            }
        }
    }
    runner.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_event_sequence_keeps_the_invariants(
        limits in (0..30u32, 0..30u32, prop_oneof![0..3_600_000u32, any::<u32>()], prop_oneof![0..600_000u32, any::<u32>()]),
        weights in [weight(), weight(), weight(), weight(), weight()],
        backoff in backoff(),
        start in prop_oneof![0..1_000_000u64, any::<u64>()],
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let first = run(Policy::new(settings(limits, weights, backoff)), start, &ops);
        let again = run(Policy::new(settings(limits, weights, backoff)), start, &ops);
        prop_assert_eq!(&first, &again, "the policy is pure");
    }

    #[test]
    fn counters_saturate_instead_of_overflowing(calls in 1..64usize) {
        let mut policy = Policy::new(settings((u32::MAX, u32::MAX, u32::MAX, u32::MAX), [u32::MAX; 5], 2.0));
        let mut state = AgentState::new(0);
        for _ in 0..calls {
            policy.observe(&mut state, 0, &ToolCall::failure("bash", "same failure"));
        }
        prop_assert_eq!(state.debt(), u32::MAX);
        prop_assert_eq!(state.tool_calls_since_research() as usize, calls);
    }
}
