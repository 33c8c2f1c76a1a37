//! research-nudge's WebAssembly surface (cargo feature `research-nudge`).
//!
//! It composes the pure crates (fingerprint, policy, config) behind a small wasm-bindgen API that
//! the JS shim (`lib/index.js`) and the replay CLI (`bin/research-nudge.js`) call. Only this crate
//! knows wasm-bindgen; it still knows nothing of DSH: the shim turns DSH events into the flat
//! arguments of [`AgentTracker::observe`], one call per tool event, and everything that decides
//! behaviour (validation, classification, debt, reminders, snooze replies) happens here or below.
//! The replay CLI's surface (`replay`; the engine, its reading of DSH session logs and the chart
//! are `dsh-replay`'s) is behind the cargo feature `research-nudge-replay` and built into its own
//! `.wasm` for the CLI, so the module DSH loads at boot holds only the plugin.

#[cfg(feature = "research-nudge-replay")]
pub mod replay;
pub mod snooze;

use crate::millis;
use crate::shim_io::{TOOL_LIMIT, TextBuffer, ToolTable};
use config::research_nudge::RowConfig;
use policy::{AgentState, NeedText, Observation, Policy, Tool, ToolCall, ToolClass};
use serde_json::json;
use wasm_bindgen::prelude::*;

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
    /// Nothing was recorded ([`policy::NeedText`]): observe the call again with its whole text
    /// windows.
    NeedText = 2,
}

/// Bits of the `flags` argument of [`AgentTracker::observe`]: how the call ended.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// The result is not an error and no later listener blocked the call.
    Ok = 1,
    /// The process was killed by a signal (`value.signal`).
    Killed = 2,
    /// The call or its process timed out (`value.timedOut`).
    TimedOut = 4,
    /// [`AgentTracker::observe_failure_text`]: the tail is only the last [`end_probe`] units of a
    /// long output ([`Policy::observe_tool_from_end`]).
    EndOnly = 8,
}

validate_config_binding!(validateConfig, RowConfig);

/// UTF-16 units of a long shell output the shim passes first as its end only
/// ([`policy::END_PROBE_UNITS`]).
#[wasm_bindgen(js_name = endProbe)]
pub fn end_probe() -> usize {
    policy::END_PROBE_UNITS
}

/// The plugin for one validated config: settings, the interned tool names and the snooze tool's
/// texts.
#[wasm_bindgen]
pub struct Plugin {
    policy: Policy,
    row: RowConfig,
    /// Tool names resolved once, by the id [`Plugin::tool_id`] handed out.
    tools: ToolTable<Interned>,
    /// Where the shim writes a failure's text windows for
    /// [`AgentTracker::observe_failure_text`].
    text: TextBuffer,
}

struct Interned {
    tool: Tool,
    #[cfg(feature = "fault-injection")]
    fault: bool,
}

/// What an id that [`Plugin::tool_id`] never handed out stands for (only a shim bug can pass one).
const UNKNOWN_TOOL: Tool = Tool {
    class: ToolClass::Ordinary,
    snooze: false,
    normalized: String::new(),
};

#[wasm_bindgen]
impl Plugin {
    /// Builds the plugin from config JSON; an invalid config throws the full
    /// `research-nudge: invalid config: …` message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Plugin, JsError> {
        Self::from_json(config_json).map_err(|m| JsError::new(&m))
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
            .map_err(|m| JsError::new(&m))
    }

    /// Resolves a tool name once (class, snooze tool, normalized form) and returns the id that
    /// stands for it in [`AgentTracker::observe`]. The shim keeps a name → id map; at most
    /// [`Plugin::tool_limit`] names are kept, after which the shim calls [`Plugin::forget_tools`]
    /// and starts its map afresh.
    #[wasm_bindgen(js_name = toolId)]
    pub fn tool_id(&mut self, name: &str) -> u32 {
        self.tools.intern(Interned {
            tool: self.policy.tool(name),
            #[cfg(feature = "fault-injection")]
            fault: name == FAULT_INJECTION_TOOL,
        })
    }

    /// How many tool names [`Plugin::tool_id`] keeps before it starts afresh.
    #[wasm_bindgen(js_name = toolLimit)]
    pub fn tool_limit() -> u32 {
        u32::try_from(TOOL_LIMIT).unwrap_or(u32::MAX)
    }

    /// The address, in this module's memory, of a buffer of at least `bytes` bytes the shim may
    /// write a failure's text windows into before [`AgentTracker::observe_failure_text`]. It stays
    /// valid until the next call of this method (the memory itself may grow; the shim re-reads
    /// `memory.buffer` when it does).
    #[wasm_bindgen(js_name = textBuffer)]
    pub fn text_buffer(&mut self, bytes: usize) -> *mut u8 {
        self.text.at_least(bytes)
    }

    /// Drops every interned name: earlier ids stand for nothing until handed out again.
    #[wasm_bindgen(js_name = forgetTools)]
    pub fn forget_tools(&mut self) {
        self.tools.clear();
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
        let (row, settings) = config::load::<RowConfig>(config_json)?;
        Ok(Self {
            policy: Policy::new(settings),
            row,
            tools: ToolTable::default(),
            text: TextBuffer::default(),
        })
    }

    fn interned(&self, id: u32) -> &Interned {
        const UNKNOWN: &Interned = &Interned {
            tool: UNKNOWN_TOOL,
            #[cfg(feature = "fault-injection")]
            fault: false,
        };
        self.tools.get(id).unwrap_or(UNKNOWN)
    }
}

/// One agent's research-debt state, owned by the shim's `WeakMap` entry for that agent so it is
/// freed with the agent.
#[wasm_bindgen]
pub struct AgentTracker {
    state: AgentState,
    last: Option<Observation>,
}

impl AgentTracker {
    #[allow(clippy::too_many_arguments)]
    fn observe_call(
        &mut self,
        plugin: &Plugin,
        now: f64,
        tool: u32,
        flags: u32,
        exit: Option<f64>,
        snooze_minutes: Option<u32>,
        head: &str,
        tail: &str,
        unknown_tool: bool,
    ) -> Outcome {
        let interned = plugin.interned(tool);
        #[cfg(feature = "fault-injection")]
        if interned.fault {
            panic!("research-nudge fault injection: panic inside AgentTracker::observe");
        }
        let call = ToolCall {
            name: "",
            ok: flags & Flag::Ok as u32 != 0,
            exit_code: exit_code(exit),
            killed: flags & Flag::Killed as u32 != 0,
            timed_out: flags & Flag::TimedOut as u32 != 0,
            head,
            tail,
            unknown_tool,
            snooze_minutes,
        };
        let (policy, state, now) = (&plugin.policy, &mut self.state, millis(now));
        let observation = if flags & Flag::EndOnly as u32 != 0 {
            match policy.observe_tool_from_end(state, now, &interned.tool, &call) {
                Ok(observation) => observation,
                Err(NeedText) => return Outcome::NeedText,
            }
        } else {
            policy.observe_tool(state, now, &interned.tool, &call)
        };
        self.last = Some(observation);
        if matches!(observation, Observation::Nudge(_)) {
            Outcome::Nudge
        } else {
            Outcome::Quiet
        }
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

    /// Records one finished tool call of the tool `tool` (an id from [`Plugin::tool_id`]) that
    /// carries no failure text: `flags` are [`Flag`] bits (`Ok` unset for error results and calls
    /// blocked downstream), `exit` the exit code a shell-style value reported, `snooze_minutes`
    /// set only for a snooze call whose tool body computed them. One call per tool event; no
    /// string crosses.
    pub fn observe(
        &mut self,
        plugin: &Plugin,
        now: f64,
        tool: u32,
        flags: u32,
        exit: Option<f64>,
        snooze_minutes: Option<u32>,
    ) -> Outcome {
        self.observe_call(
            plugin,
            now,
            tool,
            flags,
            exit,
            snooze_minutes,
            "",
            "",
            false,
        )
    }

    /// [`AgentTracker::observe`] for a failure, whose text windows (the error message, or a
    /// shell call's output; only the tail matters for a shell failure) are in the plugin's text
    /// buffer ([`Plugin::text_buffer`]): the head in its first `head_len` bytes, the tail in the
    /// `tail_len` after them. Bytes that are not UTF-8 (only a shim bug could write them) are
    /// read as U+FFFD. `error_code` is an error result's `error.info.code`: a call DSH rejected
    /// as naming no tool it can run (`UNKNOWN_TOOL`) is not counted.
    #[wasm_bindgen(js_name = observeFailureText)]
    #[allow(clippy::too_many_arguments)]
    pub fn observe_failure_text(
        &mut self,
        plugin: &Plugin,
        now: f64,
        tool: u32,
        flags: u32,
        exit: Option<f64>,
        head_len: usize,
        tail_len: usize,
        error_code: Option<String>,
    ) -> Outcome {
        let unknown_tool =
            outcome::rejected_as_unknown(flags & Flag::Ok as u32 != 0, error_code.as_deref());
        let (head, tail) = plugin.text.windows(head_len, tail_len);
        self.observe_call(
            plugin,
            now,
            tool,
            flags,
            exit,
            None,
            &head,
            &tail,
            unknown_tool,
        )
    }

    /// Records a new user prompt: the agent starts afresh.
    #[wasm_bindgen(js_name = userPrompt)]
    pub fn user_prompt(&mut self, plugin: &Plugin, now: f64) {
        self.last = Some(plugin.policy.user_prompt(&mut self.state, millis(now)));
    }

    /// The full reminder text for the current state; `offered`: the agent's tool names, one a line.
    pub fn reminder(&self, plugin: &Plugin, offered: Option<String>) -> String {
        let names: Option<Vec<&str>> = offered.as_deref().map(|names| names.lines().collect());
        Policy::reminder_text_for(&plugin.policy, &self.state, names.as_deref())
    }

    /// The short summary DSH shows for the reminder message.
    pub fn summary(&self, plugin: &Plugin) -> String {
        plugin.policy.signals(&self.state).summary()
    }

    /// The snooze tool's reply for this agent at `now`.
    #[wasm_bindgen(js_name = snoozeReply)]
    pub fn snooze_reply(&self, plugin: &Plugin, now: f64, minutes: u32) -> String {
        Policy::snooze_reply(&plugin.policy, &self.state, millis(now), minutes)
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
            "debt": s.debt, "threshold": s.threshold,
            "tool_calls_since_research": s.tool_calls_since_research, "failures": s.failures,
            "repeated_failures": s.repeated_failures,
        })
        .to_string()
    }
}
