#![allow(dead_code)] // each includer uses the checks it needs

//! The policy's properties, written once: `tests/properties.rs` (proptest, in `cargo test`) and
//! `fuzz/fuzz_targets/policy.rs` (libFuzzer) both include this module with `#[path]` and drive a
//! [`Runner`] with their own generated events. Each property is an assertion, so a violation
//! panics: a failed proptest case there, a crash here.
//!
//! After every event, against the agent's state before it:
//! - nothing panics, whatever the settings (weights up to `u32::MAX`, zero thresholds, any
//!   backoff) and clock (forward, backward, anywhere in `u64`);
//! - debt and counters saturate at `u32::MAX`: a counted call adds exactly its weights, capped;
//! - a failure is an error result, a non-zero exit code, a kill by a signal or a timeout;
//! - a successful research call always resets debt, counters and unanswered reminders (cooldown
//!   and snooze stay);
//! - a snooze never shortens an active snooze; only a user prompt clears it;
//! - no reminder while snoozed or within the cooldown in force, which is the configured one after
//!   the first reminder and grows by the backoff after each further unanswered one;
//! - a user prompt starts the agent afresh;
//!
//! and over a whole sequence: the policy is a pure function of its inputs
//! ([`Runner::finish`] twice on the same events gives the same observations and states).

use policy::{
    AgentState, MINUTE, Millis, Observation, Policy, SNOOZE_TOOL_NAME, ToolCall, ToolClass,
};

/// How the clock moves before an event.
#[derive(Clone, Copy, Debug)]
pub enum Clock {
    /// Forward by this many milliseconds.
    Forward(u64),
    /// Back by this many milliseconds (a clock that steps back).
    Back(u64),
    /// To this time.
    At(u64),
}

/// Runs events over a few agents and checks every property after each one.
pub struct Runner {
    policy: Policy,
    states: Vec<AgentState>,
    latest: Vec<Millis>,
    now: Millis,
    observations: Vec<Observation>,
}

impl Runner {
    /// `agents` fresh agents whose tasks start at `start`.
    pub fn new(policy: Policy, agents: usize, start: Millis) -> Self {
        Self {
            policy,
            states: (0..agents).map(|_| AgentState::new(start)).collect(),
            latest: vec![start; agents],
            now: start,
            observations: Vec::new(),
        }
    }

    fn advance(&mut self, agent: usize, clock: Clock) -> usize {
        self.now = match clock {
            Clock::Forward(ms) => self.now.saturating_add(ms),
            Clock::Back(ms) => self.now.saturating_sub(ms),
            Clock::At(t) => t,
        };
        let i = agent % self.states.len();
        self.latest[i] = self.latest[i].max(self.now);
        i
    }

    /// A user prompt to `agent`.
    pub fn user_prompt(&mut self, agent: usize, clock: Clock) {
        let i = self.advance(agent, clock);
        let observation = self.policy.user_prompt(&mut self.states[i], self.now);
        assert_eq!(observation, Observation::UserPromptReset);
        assert_eq!(
            self.states[i],
            AgentState::new(self.latest[i]),
            "a user prompt starts afresh"
        );
        self.observations.push(observation);
    }

    /// A finished tool call of `agent`.
    pub fn call(&mut self, agent: usize, clock: Clock, call: &ToolCall<'_>) {
        let i = self.advance(agent, clock);
        let before = self.states[i].clone();
        let class = self.policy.classify(call.name);
        let observation = self.policy.observe(&mut self.states[i], self.now, call);
        check_call(
            &self.policy,
            &before,
            &self.states[i],
            call,
            class,
            self.latest[i],
            observation,
        );
        self.observations.push(observation);
    }

    /// Every observation and the agents' final states.
    pub fn finish(self) -> (Vec<Observation>, Vec<AgentState>) {
        (self.observations, self.states)
    }
}

/// Debt, counters and the last reminder time.
fn counters(state: &AgentState) -> (u32, u32, u32, u32, Option<Millis>, u32) {
    (
        state.debt(),
        state.tool_calls_since_research(),
        state.failures(),
        state.repeated_failures(),
        state.last_nudge(),
        state.unanswered_reminders(),
    )
}

/// The end of the active snooze, with "never armed" below every time.
fn snooze_end(state: &AgentState) -> u128 {
    state.snoozed_until().map_or(0, |t| u128::from(t) + 1)
}

/// The properties of one counted, research or snooze call (see the module docs).
pub fn check_call(
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
    // The failure rule, spelled out independently of `ToolCall::failed`.
    let failed =
        !call.ok || call.exit_code.is_some_and(|code| code != 0) || call.killed || call.timed_out;
    assert_eq!(failed, call.failed(), "kills and timeouts are failures");
    if class == ToolClass::CodeMode || call.unknown_tool {
        assert_eq!(observation, Observation::Transparent, "{}", call.name);
        assert_eq!(counters(after), counters(before), "a program adds nothing");
        assert_eq!(after.last_nudge(), before.last_nudge());
        return;
    }
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
                assert_eq!(after.snoozed_until(), before.snoozed_until());
            }
            other => panic!("a snooze call observed as {other:?}"),
        }
        assert_eq!(counters(after), counters(before));
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
                after.repeated_failures(),
                after.unanswered_reminders(),
            ),
            (0, 0, 0, 0, 0)
        );
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
        ToolClass::CodeMode => unreachable!("checked above"),
    };
    let repeated = after.repeated_failures() != before.repeated_failures();
    let mut expected = u64::from(before.debt()) + u64::from(class_weight);
    if failed {
        expected += u64::from(w.failure);
        if repeated {
            expected += u64::from(w.repeated_failure);
        }
    } else {
        assert!(!repeated, "only a failure repeats");
    }
    let capped = expected.min(u64::from(u32::MAX));
    if before.repeated_failures() < u32::MAX {
        assert_eq!(
            u64::from(after.debt()),
            capped,
            "debt saturates, never wraps"
        );
    } else {
        // A repeat cannot be seen in the saturated counter; the debt only has a lower bound.
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
    assert!(after.repeated_failures() - before.repeated_failures() <= 1);
    assert_eq!(after.snoozed_until(), before.snoozed_until());
    // The cooldown in force never drops below the configured one, and only grows with the
    // number of unanswered reminders.
    let cooldown = policy.cooldown(before);
    assert!(
        cooldown >= s.cooldown,
        "the backoff never shortens the cooldown"
    );
    assert!(policy.cooldown(after) >= cooldown || after.unanswered_reminders() == 0);
    match observation {
        Observation::Nudge(triggers) => {
            assert!(triggers.any(), "a reminder needs a threshold");
            assert!(
                before.snoozed_until().is_none_or(|until| at >= until),
                "no reminder while snoozed"
            );
            assert!(
                before.last_nudge().is_none_or(|t| at - t >= cooldown),
                "no reminder within the cooldown in force"
            );
            assert_eq!(after.last_nudge(), Some(at));
            assert_eq!(
                after.unanswered_reminders(),
                before.unanswered_reminders().saturating_add(1)
            );
            assert!(policy.reminder_text(after).ends_with('.'));
        }
        Observation::Counted => {
            assert_eq!(after.last_nudge(), before.last_nudge());
            assert_eq!(after.unanswered_reminders(), before.unanswered_reminders());
        }
        other => panic!("a counted call observed as {other:?}"),
    }
}
