//! An arbitrary event sequence over a few agents → `Policy::observe` / `Policy::user_prompt`, under
//! arbitrary settings (weights up to `u32::MAX`, zero thresholds, huge and zero durations), with
//! a clock that may jump forward, step back or leap to any `u64`.
//!
//! Properties (asserted after every event, against the state before it):
//! - nothing panics;
//! - counters and debt saturate at `u32::MAX`: a counted call adds exactly its weights, capped;
//! - a successful research call always resets debt and counters (and keeps cooldown and snooze);
//! - a snooze never shortens an active snooze (only a user prompt clears it);
//! - a reminder never fires while snoozed or within the cooldown, and records its time;
//! - a user prompt always starts the agent afresh;
//! - the policy is a pure function of its inputs: replaying the sequence gives the same
//!   observations and states.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use names::Pattern;
use policy::{AgentState, Millis, Observation, Policy, SNOOZE_TOOL_NAME, ToolCall, ToolClass};

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

#[derive(Arbitrary, Debug)]
struct Setup<'a> {
    debt_threshold: u32,
    max_calls: u32,
    max_time: u32,
    cooldown: u32,
    weights: [u32; 5],
    max_snooze_minutes: u32,
    extra_research: Option<&'a str>,
    extra_execution: Option<&'a str>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Clock {
    Forward(u16),
    Back(u32),
    At(u64),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Name<'a> {
    Known(u8),
    Other(&'a str),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Op<'a> {
    Call {
        agent: u8,
        clock: Clock,
        name: Name<'a>,
        ok: bool,
        exit_code: Option<i64>,
        head: &'a str,
        tail: &'a str,
        snooze_minutes: Option<u32>,
    },
    UserPrompt {
        agent: u8,
        clock: Clock,
    },
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    setup: Setup<'a>,
    start: u64,
    ops: Vec<Op<'a>>,
}

fn policy(setup: &Setup<'_>) -> Policy {
    let mut settings = config::research_nudge::RowConfig::default().settings();
    settings.debt_threshold = setup.debt_threshold;
    settings.max_tool_calls_without_research = setup.max_calls;
    settings.max_time_without_research = Millis::from(setup.max_time);
    settings.cooldown = Millis::from(setup.cooldown);
    let [ordinary, mutation, execution, failure, repeated_failure] = setup.weights;
    settings.weights = policy::Weights {
        ordinary,
        mutation,
        execution,
        failure,
        repeated_failure,
    };
    settings.max_snooze_minutes = setup.max_snooze_minutes;
    if let Some(p) = setup.extra_research.and_then(|s| Pattern::new(s).ok()) {
        settings.research_tools.push(p);
    }
    if let Some(p) = setup.extra_execution.and_then(|s| Pattern::new(s).ok()) {
        settings.execution_tools.push(p);
    }
    Policy::new(settings)
}

fn advance(now: Millis, clock: Clock) -> Millis {
    match clock {
        Clock::Forward(ms) => now.saturating_add(Millis::from(ms) * 97),
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

/// `Option<Millis>` ordered with `None` as "never armed", below every time.
fn snooze_end(state: &AgentState) -> Millis {
    state.snoozed_until().map_or(0, |t| t.saturating_add(1))
}

fn run(input: &Input<'_>) -> (Vec<Observation>, Vec<AgentState>) {
    let mut policy = policy(&input.setup);
    let mut states: Vec<AgentState> = (0..AGENTS).map(|_| AgentState::new(input.start)).collect();
    let mut latest = [input.start; AGENTS];
    let mut now = input.start;
    let mut observations = Vec::with_capacity(input.ops.len());
    for op in &input.ops {
        match *op {
            Op::UserPrompt { agent, clock } => {
                let i = usize::from(agent) % AGENTS;
                now = advance(now, clock);
                latest[i] = latest[i].max(now);
                let observation = policy.user_prompt(&mut states[i], now);
                assert_eq!(observation, Observation::UserPromptReset);
                assert_eq!(
                    states[i],
                    AgentState::new(latest[i]),
                    "a user prompt starts afresh"
                );
                observations.push(observation);
            }
            Op::Call {
                agent,
                clock,
                name,
                ok,
                exit_code,
                head,
                tail,
                snooze_minutes,
            } => {
                let i = usize::from(agent) % AGENTS;
                now = advance(now, clock);
                latest[i] = latest[i].max(now);
                let at = latest[i];
                let name = match name {
                    Name::Known(k) => NAMES[usize::from(k) % NAMES.len()],
                    Name::Other(s) => s,
                };
                let call = ToolCall {
                    name,
                    ok,
                    exit_code,
                    head,
                    tail,
                    snooze_minutes,
                };
                let before = states[i].clone();
                let class = policy.classify(name);
                let observation = policy.observe(&mut states[i], now, &call);
                check(&policy, &before, &states[i], &call, class, at, observation);
                observations.push(observation);
            }
        }
    }
    (observations, states)
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
    let s = policy.settings();
    assert!(
        snooze_end(after) >= snooze_end(before),
        "a snooze never shortens"
    );
    let failed = call.failed();
    if call.name == SNOOZE_TOOL_NAME
        && !failed
        && let Some(minutes) = call.snooze_minutes
    {
        let until = at.saturating_add(Millis::from(minutes) * policy::MINUTE);
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
            other => panic!("snooze call observed as {other:?}"),
        }
        assert_eq!(after.debt(), before.debt());
        assert_eq!(
            after.tool_calls_since_research(),
            before.tool_calls_since_research()
        );
        return;
    }
    if class == ToolClass::Research && !failed {
        assert_eq!(
            observation,
            Observation::ResearchReset,
            "research always resets"
        );
        assert_eq!(after.debt(), 0);
        assert_eq!(after.tool_calls_since_research(), 0);
        assert_eq!(after.failures(), 0);
        assert_eq!(after.repeated_failures(), 0);
        assert_eq!(after.last_nudge(), before.last_nudge());
        assert_eq!(after.snoozed_until(), before.snoozed_until());
        return;
    }
    // A counted call: exact saturating arithmetic.
    let w = &s.weights;
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
        assert_eq!(after.repeated_failures(), before.repeated_failures());
    }
    if before.repeated_failures() < u32::MAX {
        // Otherwise a repeat cannot be seen in the counter; the debt then only has a lower bound.
        assert_eq!(
            u64::from(after.debt()),
            expected.min(u64::from(u32::MAX)),
            "saturating debt"
        );
    } else {
        assert!(u64::from(after.debt()) >= expected.min(u64::from(u32::MAX)));
    }
    assert_eq!(
        after.tool_calls_since_research(),
        before.tool_calls_since_research().saturating_add(1)
    );
    assert_eq!(
        after.failures(),
        before.failures().saturating_add(u32::from(failed))
    );
    assert!(after.repeated_failures() - before.repeated_failures() <= 1);
    assert_eq!(after.snoozed_until(), before.snoozed_until());
    match observation {
        Observation::Nudge { .. } => {
            assert!(
                before.snoozed_until().is_none_or(|until| at >= until),
                "no nudge while snoozed"
            );
            assert!(
                before.last_nudge().is_none_or(|t| at - t >= s.cooldown),
                "no nudge in cooldown"
            );
            assert_eq!(after.last_nudge(), Some(at));
            assert!(policy.reminder_text(after).ends_with('.'));
        }
        Observation::Counted => assert_eq!(after.last_nudge(), before.last_nudge()),
        other => panic!("counted call observed as {other:?}"),
    }
}

fuzz_target!(|input: Input<'_>| {
    let first = run(&input);
    assert_eq!(
        first,
        run(&input),
        "the policy is a pure function of its inputs"
    );
});
