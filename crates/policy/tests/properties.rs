//! Property tests of the research-debt policy (the same properties the `policy` fuzz target in
//! `fuzz/` asserts, here over proptest's generated event sequences so they run in `cargo test`).
//!
//! - nothing panics, whatever the settings (weights up to `u32::MAX`, zero thresholds) and clock
//!   (forward, backward, anywhere in `u64`);
//! - debt and counters saturate at `u32::MAX`: a counted call adds exactly its weights, capped;
//! - a successful research call always resets debt and counters (cooldown and snooze stay);
//! - a snooze never shortens an active snooze; only a user prompt clears it;
//! - no reminder while snoozed or within the cooldown;
//! - the policy is a pure function of its inputs.

use research_nudge_policy as policy;

use names::Pattern;
use policy::{
    AgentState, MINUTE, Millis, Observation, Policy, SNOOZE_TOOL_NAME, Settings, ToolCall,
    ToolClass, Weights,
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
];
const AGENTS: usize = 3;

fn patterns(list: &[&str]) -> Vec<Pattern> {
    list.iter().map(|p| Pattern::new(p).unwrap()).collect()
}

fn settings(
    (debt_threshold, max_calls, max_time, cooldown): (u32, u32, u32, u32),
    w: [u32; 5],
) -> Settings {
    Settings {
        debt_threshold,
        max_tool_calls_without_research: max_calls,
        max_time_without_research: Millis::from(max_time),
        cooldown: Millis::from(cooldown),
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
    }
}

#[derive(Clone, Debug)]
enum Clock {
    Forward(u32),
    Back(u32),
    At(u64),
}

#[derive(Clone, Debug)]
enum Op {
    Call {
        agent: usize,
        clock: Clock,
        name: String,
        ok: bool,
        exit_code: Option<i64>,
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
        8 => (0..600_000u32).prop_map(Clock::Forward),
        1 => any::<u32>().prop_map(Clock::Back),
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
            text,
            proptest::option::of(prop_oneof![1..120u32, any::<u32>()]),
        )
            .prop_map(|(agent, clock, name, ok, exit_code, text, snooze_minutes)| Op::Call {
                agent,
                clock,
                name,
                ok,
                exit_code,
                text,
                snooze_minutes,
            }),
        1 => (0..AGENTS, clock()).prop_map(|(agent, clock)| Op::UserPrompt { agent, clock }),
    ]
}

fn advance(now: Millis, clock: &Clock) -> Millis {
    match *clock {
        Clock::Forward(ms) => now.saturating_add(Millis::from(ms)),
        Clock::Back(ms) => now.saturating_sub(Millis::from(ms)),
        Clock::At(t) => t,
    }
}

/// Debt, counters and the last reminder time.
fn counters(state: &AgentState) -> (u32, u32, u32, u32, Option<Millis>) {
    (
        state.debt(),
        state.tool_calls_since_research(),
        state.failures(),
        state.repeated_failures(),
        state.last_nudge(),
    )
}

/// The end of the active snooze, with "never armed" below every time.
fn snooze_end(state: &AgentState) -> u128 {
    state.snoozed_until().map_or(0, |t| u128::from(t) + 1)
}

fn run(policy: &mut Policy, start: u64, ops: &[Op]) -> (Vec<Observation>, Vec<AgentState>) {
    let mut states: Vec<AgentState> = (0..AGENTS).map(|_| AgentState::new(start)).collect();
    let mut latest = [start; AGENTS];
    let mut now = start;
    let mut seen = Vec::new();
    for op in ops {
        match op {
            Op::UserPrompt { agent, clock } => {
                now = advance(now, clock);
                latest[*agent] = latest[*agent].max(now);
                let observation = policy.user_prompt(&mut states[*agent], now);
                assert_eq!(observation, Observation::UserPromptReset);
                assert_eq!(states[*agent], AgentState::new(latest[*agent]));
                seen.push(observation);
            }
            Op::Call {
                agent,
                clock,
                name,
                ok,
                exit_code,
                text,
                snooze_minutes,
            } => {
                now = advance(now, clock);
                latest[*agent] = latest[*agent].max(now);
                let (head, tail) = fingerprint::Failure::windows(text);
                let call = ToolCall {
                    name,
                    ok: *ok,
                    exit_code: *exit_code,
                    head,
                    tail,
                    snooze_minutes: *snooze_minutes,
                };
                let before = states[*agent].clone();
                let class = policy.classify(name);
                let observation = policy.observe(&mut states[*agent], now, &call);
                check(
                    policy,
                    &before,
                    &states[*agent],
                    &call,
                    class,
                    latest[*agent],
                    observation,
                );
                seen.push(observation);
            }
        }
    }
    (seen, states)
}

fn check(
    policy: &Policy,
    before: &AgentState,
    after: &AgentState,
    call: &ToolCall<'_>,
    class: ToolClass,
    at: Millis,
    observation: Observation,
) {
    assert!(
        snooze_end(after) >= snooze_end(before),
        "a snooze never shortens"
    );
    let failed = call.failed();
    if call.name == SNOOZE_TOOL_NAME
        && !failed
        && let Some(minutes) = call.snooze_minutes
    {
        let until = at.saturating_add(Millis::from(minutes) * MINUTE);
        match observation {
            Observation::Snoozed {
                minutes: m,
                until: u,
            } => {
                assert_eq!((m, u), (minutes, until));
                assert_eq!(after.snoozed_until(), Some(until));
            }
            Observation::SnoozeNotShortened => {
                assert!(before.snoozed_until().is_some_and(|t| t >= until));
                // Nothing changes but the agent's latest clock reading.
                assert_eq!(counters(after), counters(before));
                assert_eq!(after.snoozed_until(), before.snoozed_until());
            }
            other => panic!("a snooze call observed as {other:?}"),
        }
        assert_eq!(after.debt(), before.debt());
        return;
    }
    if class == ToolClass::Research && !failed {
        assert_eq!(
            observation,
            Observation::ResearchReset,
            "research always resets"
        );
        assert_eq!(
            (
                after.debt(),
                after.tool_calls_since_research(),
                after.failures(),
                after.repeated_failures()
            ),
            (0, 0, 0, 0)
        );
        assert_eq!(after.last_nudge(), before.last_nudge());
        assert_eq!(after.snoozed_until(), before.snoozed_until());
        return;
    }
    let w = &policy.settings().weights;
    let class_weight = match class {
        ToolClass::Mutation => w.mutation,
        ToolClass::Execution => w.execution,
        ToolClass::Ordinary | ToolClass::Research => w.ordinary,
    };
    let repeated = after.repeated_failures() != before.repeated_failures();
    let mut expected = u64::from(before.debt()) + u64::from(class_weight);
    if failed {
        expected += u64::from(w.failure);
        if repeated {
            expected += u64::from(w.repeated_failure);
        }
    } else {
        assert!(!repeated);
    }
    let capped = expected.min(u64::from(u32::MAX));
    if before.repeated_failures() < u32::MAX {
        assert_eq!(
            u64::from(after.debt()),
            capped,
            "debt saturates, never wraps"
        );
    } else {
        assert!(u64::from(after.debt()) >= capped);
    }
    assert_eq!(
        after.tool_calls_since_research(),
        before.tool_calls_since_research().saturating_add(1)
    );
    assert_eq!(
        after.failures(),
        before.failures().saturating_add(u32::from(failed))
    );
    assert_eq!(after.snoozed_until(), before.snoozed_until());
    match observation {
        Observation::Nudge { .. } => {
            assert!(before.snoozed_until().is_none_or(|until| at >= until));
            assert!(
                before
                    .last_nudge()
                    .is_none_or(|t| at - t >= policy.settings().cooldown)
            );
            assert_eq!(after.last_nudge(), Some(at));
        }
        Observation::Counted => assert_eq!(after.last_nudge(), before.last_nudge()),
        other => panic!("a counted call observed as {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_event_sequence_keeps_the_invariants(
        limits in (0..30u32, 0..30u32, prop_oneof![0..3_600_000u32, any::<u32>()], prop_oneof![0..600_000u32, any::<u32>()]),
        weights in [weight(), weight(), weight(), weight(), weight()],
        start in prop_oneof![0..1_000_000u64, any::<u64>()],
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let mut policy = Policy::new(settings(limits, weights));
        let first = run(&mut policy, start, &ops);
        let mut fresh = Policy::new(settings(limits, weights));
        prop_assert_eq!(&first, &run(&mut fresh, start, &ops), "the policy is pure");
    }

    #[test]
    fn counters_saturate_instead_of_overflowing(calls in 1..64usize) {
        let mut policy = Policy::new(settings((u32::MAX, u32::MAX, u32::MAX, u32::MAX), [u32::MAX; 5]));
        let mut state = AgentState::new(0);
        for _ in 0..calls {
            policy.observe(&mut state, 0, &ToolCall::failure("bash", "same failure"));
        }
        prop_assert_eq!(state.debt(), u32::MAX);
        prop_assert_eq!(state.tool_calls_since_research() as usize, calls);
    }
}
