//! pain-point-check's WebAssembly surface (cargo feature `pain-point-check`).
//!
//! The shim (`packages/pain-point-check/lib/index.js`) keeps one [`Gate`] per agent and calls it
//! from DSH's hooks with flat arguments: the tool (an id from [`Plugin::tool_id`], so a name
//! crosses once) and the call's arguments as JSON text (written into the plugin's text buffer,
//! as a failure's text is), the result's facts (`isError`,
//! `value.exitCode`, a signal, a timeout, a cancellation), the user's prompt text and the
//! assistant's reply text. A call's text crosses only for a failure, when [`Gate::on_result`]
//! asks for it. Every decision and every model-facing text comes from `pain-point-gate`; nothing
//! here or in the shim decides behaviour.

pub mod replay;

use crate::shim_io::{TOOL_LIMIT, TextBuffer, ToolTable};
use config::pain_point_check::RowConfig;
use gate::{
    AgentGate, CODE_MODE_TOOL, Decision, LiftOutcome, NeedText, Outcome, Settings, Shot, Site,
    Status, Tool, ToolFacts, canonical_args_hash_str, failure_keys,
};
use serde_json::json;
use wasm_bindgen::prelude::*;

validate_config_binding!(validatePainPointConfig, RowConfig);

/// The plugin for one validated config, the interned tools (each resolved against the
/// allowlist once) and the failure text buffer.
#[wasm_bindgen(js_name = PainPointPlugin)]
pub struct Plugin {
    settings: Settings,
    tools: ToolTable<Tool>,
    /// What an id never handed out (a shim bug) stands for: the tool with no name.
    unknown: Tool,
    text: TextBuffer,
}

#[wasm_bindgen(js_class = PainPointPlugin)]
impl Plugin {
    /// Builds the plugin from config JSON; an invalid config throws the full
    /// `pain-point-check: invalid config: …` message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Plugin, JsError> {
        Self::from_json(config_json).map_err(|m| JsError::new(&m))
    }

    /// Whether the gate is on.
    #[wasm_bindgen(getter)]
    pub fn enabled(&self) -> bool {
        self.settings.enabled()
    }

    /// The id that stands for the tool `name` in [`Gate`]'s calls. The shim keeps a name → id
    /// map; past [`Plugin::tool_limit`] names it calls [`Plugin::forget_tools`] and starts afresh.
    #[wasm_bindgen(js_name = toolId)]
    pub fn tool_id(&mut self, name: &str) -> u32 {
        self.tools
            .intern(Tool::new(&self.settings, name.to_owned()))
    }

    /// Whether `id` is DSH's Code Mode transport (`run_code`): the shim then passes its call's
    /// root to [`Gate::on_result`].
    #[wasm_bindgen(js_name = isCodeMode)]
    pub fn is_code_mode(&self, id: u32) -> bool {
        self.tool(id).name() == CODE_MODE_TOOL
    }

    /// Whether a result of the tool `id` stands for can change a gate; the shim reports the
    /// results of the others to no gate (an investigation tool's, mostly), except a Code Mode
    /// program's calls.
    #[wasm_bindgen(js_name = readsResults)]
    pub fn reads_results(&self, id: u32) -> bool {
        AgentGate::reads_results_of(&self.settings, self.tool(id))
    }

    /// How many tool names [`Plugin::tool_id`] keeps before it starts afresh.
    #[wasm_bindgen(js_name = toolLimit)]
    pub fn tool_limit() -> u32 {
        u32::try_from(TOOL_LIMIT).unwrap_or(u32::MAX)
    }

    /// Drops every interned name: earlier ids stand for nothing until handed out again.
    #[wasm_bindgen(js_name = forgetTools)]
    pub fn forget_tools(&mut self) {
        self.tools.clear();
    }

    /// The address, in this module's memory, of at least `bytes` bytes the shim writes text into:
    /// a call's arguments before [`Gate::pre_execute`] and [`Gate::on_result`], a failure's text
    /// windows before [`Gate::on_failure_text`]. Valid until the next call of this method.
    #[wasm_bindgen(js_name = textBuffer)]
    pub fn text_buffer(&mut self, bytes: usize) -> *mut u8 {
        self.text.at_least(bytes)
    }
}

impl Plugin {
    /// The plugin for config JSON, or the one-line message naming every issue.
    pub fn from_json(config_json: &str) -> Result<Plugin, String> {
        let (_, settings) = config::load::<RowConfig>(config_json)?;
        Ok(Plugin {
            unknown: Tool::new(&settings, String::new()),
            settings,
            tools: ToolTable::default(),
            text: TextBuffer::default(),
        })
    }

    /// The tool `id` stands for; an id never handed out (a shim bug) reads as no name.
    fn tool(&self, id: u32) -> &Tool {
        self.tools.get(id).unwrap_or(&self.unknown)
    }
}

/// What an assistant reply did, for the shim (it logs nothing and keeps no state of its own
/// beyond which agents are pending).
#[wasm_bindgen(js_name = LiftResult)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lift {
    /// The agent's gate was not pending.
    NotPending = 0,
    /// The answer lifted the gate.
    Lifted = 1,
    /// A partial answer: the gate stays; the next denial names what is missing.
    Partial = 2,
}

/// [`gate::Status`] for the shim.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateStatus {
    /// Counting; calls run.
    Idle = 0,
    /// Armed: non-investigative calls are denied until the answer.
    Pending = 1,
    /// Lifted; the exact arming call is denied once if nothing changed.
    Probation = 2,
    /// Not a status: the core waits for the failure's text ([`gate::NeedText`]); pass it to
    /// [`Gate::on_failure_text`].
    NeedText = 3,
}

fn status_of(gate: &AgentGate) -> GateStatus {
    match gate.status() {
        Status::Idle => GateStatus::Idle,
        Status::Pending => GateStatus::Pending,
        Status::Probation => GateStatus::Probation,
    }
}

/// One agent's gate.
#[wasm_bindgen(js_name = PainPointGate)]
#[derive(Default)]
pub struct Gate {
    inner: AgentGate,
    /// The failed call [`Gate::on_result`] answered [`GateStatus::NeedText`] for: its tool and
    /// what the core keeps of it.
    waiting: Option<(u32, NeedText)>,
}

#[wasm_bindgen(js_class = PainPointGate)]
impl Gate {
    /// A fresh gate.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Where the gate stands: replies go to a pending gate, calls to a non-idle one only.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> GateStatus {
        status_of(&self.inner)
    }

    /// Judges a call of `tool` about to run, its arguments' JSON in the first `args_len` bytes of
    /// the plugin's text buffer ([`Plugin::text_buffer`]): `undefined` allows it, a string is the
    /// denial reason.
    #[wasm_bindgen(js_name = preExecute)]
    pub fn pre_execute(&mut self, plugin: &Plugin, tool: u32, args_len: usize) -> Option<String> {
        let tool = plugin.tool(tool);
        let args_json = plugin.text.text(args_len);
        match self
            .inner
            .pre_execute(&plugin.settings, tool, canonical_args_hash_str(&args_json))
        {
            Decision::Allow => None,
            Decision::Deny { reason, .. } => Some(reason),
        }
    }

    /// Counts a finished call of `tool`, its arguments' JSON in the first `args_len` bytes of the
    /// plugin's text buffer, and answers where the gate then stands: `ok` is
    /// `!isError`; `exit_code` an integer `value.exitCode`; `killed` a `value.signal`;
    /// `timed_out` `value.timedOut`; `error_code` an error's `error.info.code`; in Code Mode,
    /// `root` the call's `exec.rootCallId` (for a call a program made, `nested`: `exec.parent` is
    /// set, and for a `run_code` call, [`Plugin::is_code_mode`]), `undefined` otherwise. When
    /// the core asks for the failure's text the answer is [`GateStatus::NeedText`].
    #[wasm_bindgen(js_name = onResult)]
    #[allow(clippy::too_many_arguments)] // flat scalars: one boundary crossing, no JS objects
    pub fn on_result(
        &mut self,
        plugin: &Plugin,
        tool: u32,
        args_len: usize,
        ok: bool,
        exit_code: Option<f64>,
        killed: bool,
        timed_out: bool,
        error_code: Option<String>,
        root: Option<String>,
        nested: bool,
    ) -> GateStatus {
        let site = Site::of(root.as_deref(), nested);
        // `as` saturates; the shim passes integers only.
        let exit_code = exit_code.map(|code| code as i64);
        let outcome = Outcome::from_facts(ok, error_code.as_deref(), exit_code, killed, timed_out);
        let args_json = plugin.text.text(args_len);
        let id = tool;
        let tool = plugin.tool(id);
        let shot = || Shot::from_json(tool, &args_json);
        self.waiting = None;
        match self
            .inner
            .on_result_or_need_text(&plugin.settings, tool, site, shot, outcome)
        {
            Ok(_) => status_of(&self.inner),
            Err(waiting) => {
                self.waiting = Some((id, waiting));
                GateStatus::NeedText
            }
        }
    }

    /// Counts the failure [`Gate::on_result`] waits for, with its text in the plugin's text
    /// buffer ([`Plugin::text_buffer`]): the call's text cut to the fingerprint's windows, the
    /// head in the first `head_len` bytes, the tail in the `tail_len` after them (`tail_len` 0
    /// when the head is all of it). Without a waiting failure (a shim bug) it counts nothing.
    #[wasm_bindgen(js_name = onFailureText)]
    pub fn on_failure_text(
        &mut self,
        plugin: &Plugin,
        head_len: usize,
        tail_len: usize,
    ) -> GateStatus {
        if let Some((tool, waiting)) = self.waiting.take() {
            let tool = plugin.tool(tool);
            let (head, tail) = plugin.text.windows(head_len, tail_len);
            let failure = || failure_keys(tool.name(), &waiting.outcome(), &head, &tail);
            let _ = self
                .inner
                .on_failure_text(&plugin.settings, tool, waiting, failure);
        }
        status_of(&self.inner)
    }

    /// A user prompt: resets the agent (and sets the language hint for `language: auto`).
    #[wasm_bindgen(js_name = userPrompt)]
    pub fn user_prompt(&mut self, text: &str) {
        let _ = self.inner.on_user_prompt(text);
    }

    /// Before a step: the notice to append, as JSON `{"text", "summary"}`, or `undefined`.
    #[wasm_bindgen(js_name = preStep)]
    pub fn pre_step(&mut self, plugin: &Plugin) -> Option<String> {
        self.inner
            .pre_step(&plugin.settings)
            .map(|notice| json!({ "text": notice.text, "summary": notice.summary }).to_string())
    }

    /// A visible assistant reply's text blocks, joined by `\n`.
    #[wasm_bindgen(js_name = assistantText)]
    pub fn assistant_text(&mut self, plugin: &Plugin, text: &str) -> Lift {
        match self.inner.on_assistant_text(&plugin.settings, text) {
            LiftOutcome::NotPending => Lift::NotPending,
            LiftOutcome::Lifted => Lift::Lifted,
            LiftOutcome::Partial { .. } => Lift::Partial,
        }
    }
}
