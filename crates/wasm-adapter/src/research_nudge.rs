//! research-nudge's WebAssembly surface (cargo feature `research-nudge`).
//!
//! It composes the pure crates (fingerprint, policy, config) behind a small wasm-bindgen API that
//! the JS shim (`lib/index.js`) and the replay CLI (`bin/research-nudge.js`) call. Only this crate
//! knows wasm-bindgen; it still knows nothing of DSH: the shim turns DSH events into the flat
//! arguments of [`AgentTracker::observe`], one call per tool event, and everything that decides
//! behaviour (validation, classification, debt, reminders, snooze replies) happens here or below.
//! The one place it reads a DSH format is [`session_log`]: the replay CLI's mapping of DSH session
//! logs (read by `dsh-session-log` from the log's JSON lines, never live DSH objects) to the policy.

pub mod replay;
pub mod session_log;
pub mod snooze;

use config::research_nudge::{self as row, RowConfig};
use policy::{AgentState, Millis, Observation, Policy, ToolCall};
use serde_json::json;
use wasm_bindgen::prelude::*;

/// The plugin name DSH shows, also the `source.plugin` of the reminder message.
pub const PLUGIN_NAME: &str = "research-nudge";

/// Test-only (cargo feature `fault-injection`, built by `cargo xtask build-fault` into
/// `target/pkg-fault/`, never into `pkg/`): observing a call of this tool panics, so
/// `tests/panic.test.mjs` can check that a panic inside WebAssembly never escapes the shim.
#[cfg(feature = "fault-injection")]
pub const FAULT_INJECTION_TOOL: &str = "__research_nudge_fault_injection_panic__";

/// What one observed event did, as the shim sees it.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to add to the decision.
    Quiet = 0,
    /// A reminder is due: fetch it with [`AgentTracker::reminder`].
    Nudge = 1,
}

/// Validates a row config given as JSON text (as the shim encodes it) and answers in the shape of a
/// Standard Schema v1 result, as JSON text: `{"value": <normalized config>}` or
/// `{"issues": [{"message", "path"}]}`.
#[wasm_bindgen(js_name = validateConfig)]
pub fn validate_config(input: &str) -> String {
    crate::standard_schema_json(parse_config(input))
}

/// Bytes of failure text the fingerprint reads from each end; the shim slices at least this many
/// UTF-16 units from each end so a huge error never crosses the boundary whole.
#[wasm_bindgen(js_name = failureWindow)]
pub fn failure_window() -> usize {
    fingerprint::WINDOW_BYTES
}

fn parse_config(input: &str) -> Result<RowConfig, Vec<config::Issue>> {
    crate::parse_row(input, row::validate)
}

/// The plugin for one validated config: settings, the name cache and the snooze tool's texts.
#[wasm_bindgen]
pub struct Plugin {
    policy: Policy,
    row: RowConfig,
}

#[wasm_bindgen]
impl Plugin {
    /// Builds the plugin from config JSON; an invalid config throws the full
    /// `research-nudge: invalid config: …` message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Plugin, JsError> {
        Self::from_json(config_json).map_err(|message| JsError::new(&message))
    }

    /// Whether the plugin registers anything at all.
    #[wasm_bindgen(getter)]
    pub fn enabled(&self) -> bool {
        self.row.enabled
    }

    /// Whether resets, snoozes and queued reminders are logged.
    #[wasm_bindgen(getter)]
    pub fn debug(&self) -> bool {
        self.row.debug
    }

    /// The snooze tool definition the shim registers, as JSON text: name, description, parameters.
    #[wasm_bindgen(js_name = snoozeToolJson)]
    pub fn snooze_tool_json(&self) -> String {
        snooze::tool_definition(self.row.max_agent_snooze_minutes).to_string()
    }

    /// Validates snooze arguments (JSON text) and computes the minutes once; throws a message the
    /// model sees as the failed tool result.
    #[wasm_bindgen(js_name = snoozeMinutes)]
    pub fn snooze_minutes(&self, args_json: &str) -> Result<u32, JsError> {
        snooze::minutes_from_args(args_json, self.row.max_agent_snooze_minutes)
            .map_err(|message| JsError::new(&message))
    }

    /// The snooze reply for a call that has no agent state to consult.
    #[wasm_bindgen(js_name = snoozeReply)]
    pub fn snooze_reply(&self, minutes: u32) -> String {
        self.policy.snooze_reply(&AgentState::new(0), 0, minutes)
    }
}

impl Plugin {
    /// Builds the plugin from config JSON, or the full invalid-config message.
    pub fn from_json(config_json: &str) -> Result<Self, String> {
        let row = parse_config(config_json)
            .map_err(|issues| config::describe(row::MESSAGE_PREFIX, &issues))?;
        Ok(Self::from_row(row))
    }

    /// Builds the plugin from a validated row.
    pub fn from_row(row: RowConfig) -> Self {
        Self {
            policy: Policy::new(row.settings()),
            row,
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The validated row config.
    pub fn row(&self) -> &RowConfig {
        &self.row
    }
}

/// One agent's research-debt state, owned by the shim's `WeakMap` entry for that agent so it is
/// freed with the agent.
#[wasm_bindgen]
pub struct AgentTracker {
    state: AgentState,
    last: Option<Observation>,
}

/// Converts the shim's clock reading (`performance.now()`, fractional ms) to policy time.
fn millis(now: f64) -> Millis {
    if now.is_finite() && now > 0.0 {
        now as Millis
    } else {
        0
    }
}

/// An exit code from JS, if it is an integer.
fn exit_code(value: Option<f64>) -> Option<i64> {
    value
        .filter(|v| v.is_finite() && v.fract() == 0.0)
        .map(|v| v as i64)
}

#[wasm_bindgen]
impl AgentTracker {
    /// A fresh agent whose task starts at `now`.
    #[wasm_bindgen(constructor)]
    pub fn new(now: f64) -> AgentTracker {
        Self {
            state: AgentState::new(millis(now)),
            last: None,
        }
    }

    /// Records one finished tool call. `ok` is false for error results and for calls blocked
    /// downstream; `head`/`tail` are the windows of the failure text (empty for successes);
    /// `snooze_minutes` is set only for a snooze call whose tool body computed them.
    #[allow(clippy::too_many_arguments)]
    pub fn observe(
        &mut self,
        plugin: &mut Plugin,
        now: f64,
        name: &str,
        ok: bool,
        exit: Option<f64>,
        head: &str,
        tail: &str,
        snooze_minutes: Option<u32>,
    ) -> Outcome {
        #[cfg(feature = "fault-injection")]
        if name == FAULT_INJECTION_TOOL {
            panic!("research-nudge fault injection: panic inside AgentTracker::observe");
        }
        let call = ToolCall {
            name,
            ok,
            exit_code: exit_code(exit),
            head,
            tail,
            snooze_minutes,
        };
        let observation = plugin.policy.observe(&mut self.state, millis(now), &call);
        self.last = Some(observation);
        if matches!(observation, Observation::Nudge(_)) {
            Outcome::Nudge
        } else {
            Outcome::Quiet
        }
    }

    /// Records a new user prompt: the agent starts afresh.
    #[wasm_bindgen(js_name = userPrompt)]
    pub fn user_prompt(&mut self, plugin: &Plugin, now: f64) {
        self.last = Some(plugin.policy.user_prompt(&mut self.state, millis(now)));
    }

    /// The full reminder text for the current state.
    pub fn reminder(&self, plugin: &Plugin) -> String {
        plugin.policy.reminder_text(&self.state)
    }

    /// The short summary DSH shows for the reminder message.
    pub fn summary(&self, plugin: &Plugin) -> String {
        let signals = plugin.policy.signals(&self.state);
        format!("research debt {}/{}", signals.debt, signals.threshold)
    }

    /// The snooze tool's reply for this agent at `now`.
    #[wasm_bindgen(js_name = snoozeReply)]
    pub fn snooze_reply(&self, plugin: &Plugin, now: f64, minutes: u32) -> String {
        plugin
            .policy
            .snooze_reply(&self.state, millis(now), minutes)
    }

    /// The debug line for the last observation, if it deserves one.
    #[wasm_bindgen(js_name = debugLine)]
    pub fn debug_line(&self, tool: &str) -> Option<String> {
        self.last
            .and_then(|observation| observation.debug_line(tool))
    }

    /// The current signals as JSON text (for tests and diagnostics).
    #[wasm_bindgen(js_name = signalsJson)]
    pub fn signals_json(&self, plugin: &Plugin) -> String {
        let s = plugin.policy.signals(&self.state);
        json!({
            "debt": s.debt,
            "threshold": s.threshold,
            "tool_calls_since_research": s.tool_calls_since_research,
            "failures": s.failures,
            "repeated_failures": s.repeated_failures,
        })
        .to_string()
    }
}
