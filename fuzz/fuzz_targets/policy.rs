//! An arbitrary event sequence over a few agents → `Policy::observe` / `Policy::user_prompt`, under
//! arbitrary settings (weights up to `u32::MAX`, zero thresholds, huge and zero durations), with
//! a clock that may jump forward, step back or leap to any `u64`.
//!
//! The properties are `crates/policy/tests/checks/mod.rs`, shared with the crate's proptest
//! (`crates/policy/tests/properties.rs`): one source, asserted after every event here (a violation
//! is a crash). The sequence is run twice: the policy is a pure function of its inputs.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use names::Pattern;
use policy::{AgentState, Millis, Observation, Policy, SNOOZE_TOOL_NAME, ToolCall};

#[path = "../../crates/policy/tests/checks/mod.rs"]
mod checks;

use checks::{Clock, Runner};

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
    /// The reminder backoff: 1 + this / 4 (1 to 64.75).
    backoff: u8,
    weights: [u32; 5],
    max_snooze_minutes: u32,
    extra_research: Option<&'a str>,
    extra_execution: Option<&'a str>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Step {
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
        clock: Step,
        name: Name<'a>,
        ok: bool,
        exit_code: Option<i64>,
        killed: bool,
        timed_out: bool,
        head: &'a str,
        tail: &'a str,
        snooze_minutes: Option<u32>,
        unknown_tool: bool,
    },
    UserPrompt {
        agent: u8,
        clock: Step,
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
    settings.reminder_backoff = 1.0 + f64::from(setup.backoff) / 4.0;
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

fn clock(step: Step) -> Clock {
    match step {
        Step::Forward(ms) => Clock::Forward(u64::from(ms) * 97),
        Step::Back(ms) => Clock::Back(u64::from(ms)),
        Step::At(t) => Clock::At(t),
    }
}

fn run(input: &Input<'_>) -> (Vec<Observation>, Vec<AgentState>) {
    let mut runner = Runner::new(policy(&input.setup), AGENTS, input.start);
    for op in &input.ops {
        match *op {
            Op::UserPrompt { agent, clock: step } => {
                runner.user_prompt(usize::from(agent), clock(step));
            }
            Op::Call {
                agent,
                clock: step,
                name,
                ok,
                exit_code,
                killed,
                timed_out,
                head,
                tail,
                snooze_minutes,
                unknown_tool,
            } => {
                let name = match name {
                    Name::Known(k) => NAMES[usize::from(k) % NAMES.len()],
                    Name::Other(s) => s,
                };
                let call = ToolCall {
                    name,
                    ok,
                    exit_code,
                    killed,
                    timed_out,
                    head,
                    tail,
                    snooze_minutes,
                    unknown_tool,
                };
                runner.call(usize::from(agent), clock(step), &call);
            }
        }
    }
    runner.finish()
}

fuzz_target!(|input: Input<'_>| {
    let first = run(&input);
    assert_eq!(
        first,
        run(&input),
        "the policy is a pure function of its inputs"
    );
});
