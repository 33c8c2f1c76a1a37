//! The replay engine behind `pain-point-check replay`: one JSON line in, one JSON line out,
//! through exactly the gate the plugin runs.
//!
//! # The event format
//!
//! One JSON object per line, each for one agent (`"agent"`, default `"default"`):
//!
//! - `{"tool": NAME, "args": {…}, "result": R}`: a call attempt. The gate judges it first
//!   (`tools/pre-execute`); a denied call finishes as the denial's error result, an allowed one
//!   with `R`: `"ok"` (the default), `"error"`, `"cancelled"`, `{"exitCode": N}`,
//!   `{"killed": true}` or `{"timedOut": true}`.
//! - `{"user": TEXT}`: a user prompt (resets the agent).
//! - `{"assistant": TEXT}`: a visible assistant reply (may lift the gate).
//! - `{"step": true}`: a step starts (where the check block or the escape notice is delivered).
//!
//! Each line prints `{"line", "agent", "event", …, "gate", "failures", "run", "denials"}` with
//! what the gate did: `decision` and `reason` for a call, `timeline` for what it changed, and
//! `notice` for a step that delivered one.

use super::Plugin;
use gate::{
    AgentGate, Decision, Input, LiftOutcome, Marker, Observation, Outcome, Reaction, ResetCause,
    Status, TimelineEntry, canonical_args_hash,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use wasm_bindgen::prelude::*;

const DEFAULT_AGENT: &str = "default";
const KEYS: [&str; 6] = ["agent", "tool", "args", "result", "user", "assistant"];

/// A replay over one input stream.
#[wasm_bindgen(js_name = PainPointReplay)]
pub struct Replay {
    plugin: Plugin,
    agents: HashMap<String, AgentGate>,
    line: usize,
}

#[wasm_bindgen(js_class = PainPointReplay)]
impl Replay {
    /// A replay under the given row config (JSON text); an invalid config throws the full message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Replay, JsError> {
        Self::from_json(config_json).map_err(|message| JsError::new(&message))
    }

    /// Feeds the next input line; returns the output line, or nothing for a blank line. A
    /// malformed line throws `line N: …` naming the field.
    pub fn feed(&mut self, text: &str) -> Result<Option<String>, JsError> {
        self.feed_line(text)
            .map_err(|message| JsError::new(&message))
    }
}

impl Replay {
    /// A replay under the given row config (JSON text).
    pub fn from_json(config_json: &str) -> Result<Self, String> {
        Ok(Self {
            plugin: Plugin::from_json(config_json)?,
            agents: HashMap::new(),
            line: 0,
        })
    }

    /// Feeds the next input line (see [`Replay::feed`]).
    pub fn feed_line(&mut self, text: &str) -> Result<Option<String>, String> {
        self.line += 1;
        if text.trim().is_empty() {
            return Ok(None);
        }
        let line = self.line;
        self.apply(text)
            .map(|out| Some(out.to_string()))
            .map_err(|message| format!("line {line}: {message}"))
    }

    fn apply(&mut self, text: &str) -> Result<Value, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not a JSON object ({e})"))?;
        let Value::Object(object) = value else {
            return Err(format!(
                "not a JSON object (got {})",
                config::render(&value)
            ));
        };
        if let Some(key) = object
            .keys()
            .find(|k| !KEYS.contains(&k.as_str()) && *k != "step")
        {
            let hint = config::did_you_mean(key, KEYS.into_iter().chain(["step"]))
                .map_or(String::new(), |known| format!("; did you mean {known}?"));
            return Err(format!("{key} is not an event field{hint}"));
        }
        let agent = match object.get("agent") {
            None => DEFAULT_AGENT.to_owned(),
            Some(Value::String(agent)) => agent.clone(),
            Some(other) => {
                return Err(format!(
                    "agent must be a string (got {})",
                    config::render(other)
                ));
            }
        };
        let settings = self.plugin.settings();
        let gate = self.agents.entry(agent.clone()).or_default();
        let mut out = Map::new();
        out.insert("line".into(), json!(self.line));
        out.insert("agent".into(), json!(agent));
        let mut timeline = Vec::new();
        let note = |reaction: &Reaction, timeline: &mut Vec<String>| {
            if let Some(entry) = reaction.timeline_entry() {
                timeline.push(describe(entry));
            }
        };
        if let Some(name) = object.get("tool") {
            let Value::String(name) = name else {
                return Err(format!(
                    "tool must be a string (got {})",
                    config::render(name)
                ));
            };
            let args = canonical_args_hash(object.get("args").unwrap_or(&json!({})));
            let outcome = outcome(object.get("result"))?;
            out.insert("event".into(), json!("tool"));
            out.insert("tool".into(), json!(name));
            let decision = gate.handle(settings, Input::ToolCall { name, args });
            note(&decision, &mut timeline);
            let outcome = match &decision {
                Reaction::Decision(Decision::Deny { reason, .. }) => {
                    out.insert("decision".into(), json!("deny"));
                    out.insert("reason".into(), json!(reason));
                    Outcome::error()
                }
                _ => {
                    out.insert("decision".into(), json!("allow"));
                    outcome
                }
            };
            let observed = gate.handle(
                settings,
                Input::ToolResult {
                    name,
                    args,
                    outcome,
                },
            );
            if let Reaction::Observation(observation) = &observed {
                out.insert("counted".into(), json!(counted(observation)));
            }
            note(&observed, &mut timeline);
        } else if let Some(text) = object.get("user") {
            let text = text_field("user", text)?;
            out.insert("event".into(), json!("user"));
            let reaction = gate.handle(settings, Input::UserPrompt { text });
            note(&reaction, &mut timeline);
        } else if let Some(text) = object.get("assistant") {
            let text = text_field("assistant", text)?;
            out.insert("event".into(), json!("assistant"));
            let reaction = gate.handle(settings, Input::AssistantText { text });
            if let Reaction::Lift(LiftOutcome::Partial { missing }) = reaction {
                let names: Vec<&str> = missing.iter().map(Marker::en).collect();
                out.insert("missing".into(), json!(names));
            }
            note(&reaction, &mut timeline);
        } else if let Some(step) = object.get("step") {
            if step != &Value::Bool(true) {
                return Err(format!("step must be true (got {})", config::render(step)));
            }
            out.insert("event".into(), json!("step"));
            let reaction = gate.handle(settings, Input::Step);
            if let Reaction::Notice(Some(notice)) = &reaction {
                out.insert("notice".into(), json!(notice.text));
            }
            note(&reaction, &mut timeline);
        } else {
            return Err("needs one of tool, user, assistant or step".to_owned());
        }
        out.insert("timeline".into(), json!(timeline));
        out.insert("gate".into(), json!(status(gate.status())));
        out.insert("failures".into(), json!(gate.failures()));
        out.insert("run".into(), json!(gate.run_length()));
        out.insert("denials".into(), json!(gate.denials()));
        Ok(Value::Object(out))
    }
}

fn text_field<'a>(key: &str, value: &'a Value) -> Result<&'a str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("{key} must be a string (got {})", config::render(value)))
}

fn outcome(result: Option<&Value>) -> Result<Outcome, String> {
    let bad = |value: &Value| {
        format!(
            "result must be \"ok\", \"error\", \"cancelled\", {{\"exitCode\": N}}, {{\"killed\": true}} or {{\"timedOut\": true}} (got {})",
            config::render(value)
        )
    };
    Ok(match result {
        None => Outcome::success(),
        Some(Value::String(kind)) => match kind.as_str() {
            "ok" => Outcome::success(),
            "error" => Outcome::error(),
            "cancelled" => Outcome::cancelled(),
            _ => return Err(bad(&Value::String(kind.clone()))),
        },
        Some(value @ Value::Object(fields)) => match (fields.len(), fields.iter().next()) {
            (1, Some((key, Value::Number(code)))) if key == "exitCode" => match code.as_i64() {
                Some(code) => Outcome::exited(code),
                None => return Err(bad(value)),
            },
            (1, Some((key, Value::Bool(true)))) if key == "killed" => Outcome::killed(),
            (1, Some((key, Value::Bool(true)))) if key == "timedOut" => Outcome::timed_out(),
            _ => return Err(bad(value)),
        },
        Some(other) => return Err(bad(other)),
    })
}

fn counted(observation: &Observation) -> &'static str {
    match observation {
        Observation::Ignored(_) => "ignored",
        Observation::Transparent => "investigation",
        Observation::Counted | Observation::Armed(_) => "experiment",
        Observation::HumanAnswered => "human answer",
    }
}

fn status(status: Status) -> &'static str {
    match status {
        Status::Idle => "idle",
        Status::Pending => "pending",
        Status::Probation => "probation",
    }
}

/// A timeline entry in words, for the JSON lines and the session-log timeline.
pub fn describe(entry: TimelineEntry) -> String {
    match entry {
        TimelineEntry::Armed(trigger) => {
            let mut why = Vec::new();
            if let Some(failures) = trigger.failures {
                why.push(format!("{failures} failed calls"));
            }
            if let Some(repeats) = trigger.repeats {
                why.push(format!("{repeats} identical calls"));
            }
            format!("armed ({})", why.join(", "))
        }
        TimelineEntry::CheckShown => "check shown".to_owned(),
        TimelineEntry::Denied => "denied".to_owned(),
        TimelineEntry::SameShotDenied => "same-direction shot denied".to_owned(),
        TimelineEntry::Partial(missing) => {
            let names: Vec<&str> = missing.iter().map(Marker::en).collect();
            format!("partial answer (missing {})", names.join(", "))
        }
        TimelineEntry::Lifted => "lifted".to_owned(),
        TimelineEntry::Escaped { denials } => format!("escaped after {denials} denials"),
        TimelineEntry::Reset(ResetCause::UserPrompt) => "reset by a user prompt".to_owned(),
        TimelineEntry::Reset(ResetCause::HumanAnswer) => "reset by the user's answer".to_owned(),
    }
}

#[cfg(test)]
mod tests;
