//! pain-point-check's WebAssembly surface (cargo feature `pain-point-check`).
//!
//! The shim (`packages/pain-point-check/lib/index.js`) keeps one [`Gate`] per agent and calls it
//! from DSH's hooks with flat arguments: the tool name and the call's arguments as JSON text, the
//! result's facts (`isError`, `value.exitCode`, a signal, a timeout, a cancellation), the user's
//! prompt text and the assistant's reply text. Every decision and every model-facing text comes
//! from `pain-point-gate`; nothing here or in the shim decides behaviour.

pub mod replay;

use config::pain_point_check::RowConfig;
use gate::{
    AgentGate, Decision, LiftOutcome, Outcome, Settings, Shot, canonical_args_hash_str,
    failure_fingerprint,
};
use serde_json::json;
use wasm_bindgen::prelude::*;

/// The plugin name DSH shows, also the `source.plugin` of the check notice.
pub const PLUGIN_NAME: &str = "pain-point-check";

validate_config_binding!(validatePainPointConfig, RowConfig);

/// The plugin for one validated config.
#[wasm_bindgen(js_name = PainPointPlugin)]
pub struct Plugin {
    settings: Settings,
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
}

impl Plugin {
    /// The plugin for config JSON, or the one-line message naming every issue.
    pub fn from_json(config_json: &str) -> Result<Plugin, String> {
        let (_, settings) = config::load::<RowConfig>(config_json)?;
        Ok(Plugin { settings })
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

/// One agent's gate.
#[wasm_bindgen(js_name = PainPointGate)]
#[derive(Default)]
pub struct Gate {
    inner: AgentGate,
}

#[wasm_bindgen(js_class = PainPointGate)]
impl Gate {
    /// A fresh gate.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Gate {
        Gate::default()
    }

    /// Whether non-investigative calls are being denied (the shim routes `assistant/message`
    /// events to the gate only then).
    #[wasm_bindgen(getter)]
    pub fn pending(&self) -> bool {
        self.inner.is_pending()
    }

    /// Judges a call about to run: `undefined` allows it, a string is the denial reason.
    #[wasm_bindgen(js_name = preExecute)]
    pub fn pre_execute(&mut self, plugin: &Plugin, name: &str, args_json: &str) -> Option<String> {
        match self
            .inner
            .pre_execute(&plugin.settings, name, canonical_args_hash_str(args_json))
        {
            Decision::Allow => None,
            Decision::Deny { reason, .. } => Some(reason),
        }
    }

    /// Counts a finished call: `ok` is `!isError`; `exit_code` is `value.exitCode` when it is an
    /// integer; `killed` is a `value.signal`; `timed_out` is `value.timedOut`; `error_code` is
    /// `error.info.code` of an error result; `head` and `tail` are a failed call's text (its
    /// error message or output) cut to the fingerprint's windows (`tail` empty when `head` is all
    /// of it), empty for a success.
    #[wasm_bindgen(js_name = onResult)]
    #[allow(clippy::too_many_arguments)] // flat scalars: one boundary crossing, no JS objects
    pub fn on_result(
        &mut self,
        plugin: &Plugin,
        name: &str,
        args_json: &str,
        ok: bool,
        exit_code: Option<f64>,
        killed: bool,
        timed_out: bool,
        error_code: Option<String>,
        head: &str,
        tail: &str,
    ) {
        // `as` saturates; the shim passes integers only.
        let exit_code = exit_code.map(|code| code as i64);
        let outcome = Outcome::from_facts(ok, error_code.as_deref(), exit_code, killed, timed_out);
        let failure = failure_fingerprint(name, &outcome, head, tail);
        let _ = self.inner.on_result(
            &plugin.settings,
            name,
            Shot::from_json(name, args_json),
            outcome,
            failure,
        );
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
