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
//!   `{"killed": true}` or `{"timedOut": true}`; `"unknown-tool"` is a call DSH rejected before
//!   pre-execute (`UNKNOWN_TOOL`: in Code Mode, every direct call to a tool other than
//!   `run_code`), which the gate never judges. In Code Mode, `"root": ID` names the model's call
//!   the call descends from (a `run_code` call's own id), and `"nested": true` marks a call its
//!   program made (DSH's `exec.parent`).
//! - `{"user": TEXT}`: a user prompt (resets the agent).
//! - `{"assistant": TEXT}`: a visible assistant reply (may lift the gate).
//! - `{"step": true}`: a step starts (where the check block or the escape notice is delivered).
//!
//! Each line prints `{"line", "agent", "event", …, "gate", "failures", "run", "denials"}` with
//! what the gate did: `decision` and `reason` for a call, `timeline` for what it changed, and
//! `notice` for a step that delivered one.
//!
//! # DSH session logs
//!
//! An input whose first line is a session header is a DSH session log, read by
//! `crates/session-log` (one session = one agent). Each recorded tool result is judged as the
//! plugin would have judged the call ([`AgentGate::pre_execute`]), then counted: a call the gate
//! would deny counts as its denial, any other with its recorded outcome; a call DSH rejected as an
//! unknown tool (`UNKNOWN_TOOL`) never reached the plugin's pre-execute and is not judged. A Code
//! Mode program's calls (`tool/code-dispatch*`, `tool/ptc-dispatch*`) are calls of their own,
//! nested under the program's `run_code` call (see the gate's "Code Mode"). Each `assistant/message`
//! is one step (the check block or the escape notice would ride it) and then the reply, which may
//! lift the gate; a human prompt resets; a reopened session starts a fresh agent. It prints a
//! timeline of where the gate would arm, deny and lift, or, with `--json`, one JSON line per event
//! in the event format's output shape.

use crate::{Agents, Engine, Format};
use gate::{
    AgentGate, Counting, Decision, FailureKeys, Input, Language, LiftOutcome, Marker, Observation,
    Outcome, Reaction, ResetCause, Settings, Shot, Site, Status, TimelineEntry,
    canonical_args_hash, canonical_args_hash_str, failure_keys,
};
use policy::Policy;
use serde_json::{Map, Value, json};
use session_log::{Entry, Header, LogEvent};
use std::collections::HashMap;

mod corpus;

const KEYS: [&str; 9] = [
    "agent",
    "tool",
    "args",
    "result",
    "root",
    "nested",
    "output",
    "user",
    "assistant",
];

/// A replay through pain-point-check's gate, over one input stream.
pub type Replay = crate::Replay<Check>;

/// pain-point-check's [`Engine`]: its gate under one config and the output options.
pub struct Check {
    settings: Settings,
    json: bool,
    /// research-nudge's default research tools, for what followed a fire in a corpus report.
    research: Policy,
}

/// A session log being replayed: its one agent's gate and the counts for the summary.
pub struct Session {
    gate: AgentGate,
    calls: usize,
    steps: usize,
    counts: HashMap<&'static str, usize>,
}

/// A corpus replay through pain-point-check's gate ([`crate::corpus`]).
pub type CorpusReplay = crate::corpus::CorpusReplay<Check>;

impl Check {
    fn new(settings: Settings) -> Self {
        Check {
            settings,
            json: false,
            research: Policy::new(config::research_nudge::RowConfig::default().settings()),
        }
    }
}

impl CorpusReplay {
    /// A corpus replay of `half` (every run when `None`) under the gate's validated settings.
    pub fn with_settings(settings: Settings, half: Option<crate::corpus::Half>) -> Self {
        Self::new(Check::new(settings), half)
    }
}

impl Replay {
    /// A replay under the gate's validated settings.
    pub fn new(settings: Settings) -> Self {
        Self::with_engine(Check::new(settings))
    }

    /// Whether a session log is printed as JSON lines instead of the timeline. The event format
    /// always prints JSON lines.
    pub fn set_json(&mut self, json: bool) {
        self.engine_mut().json = json;
    }
}

impl Engine for Check {
    type Agent = AgentGate;
    type Session = Session;

    fn invalid_json(error: &serde_json::Error) -> String {
        format!("not a JSON object ({error})")
    }

    fn not_an_object(value: &Value) -> String {
        format!("not a JSON object (got {})", config::render(value))
    }

    fn open(&mut self, header: &Header) -> (Session, Option<String>) {
        let opening = (!self.json).then(|| opening(header, &self.settings));
        let session = Session {
            gate: AgentGate::new(),
            calls: 0,
            steps: 0,
            counts: HashMap::new(),
        };
        (session, opening)
    }

    fn entry(&mut self, session: &mut Session, line: usize, entry: Entry) -> Option<String> {
        session.feed(&self.settings, line, entry, self.json)
    }

    fn event(
        &mut self,
        agents: &mut Agents<AgentGate>,
        line: usize,
        fields: &Map<String, Value>,
    ) -> Result<Option<String>, String> {
        self.apply(agents, line, fields)
            .map(|out| Some(out.to_string()))
    }

    fn finish(&self, format: Format<'_, Session>) -> Option<String> {
        match format {
            Format::Session(session) if !self.json => Some(session.summary()),
            _ => None,
        }
    }
}

impl Check {
    fn apply(
        &mut self,
        agents: &mut Agents<AgentGate>,
        line: usize,
        object: &Map<String, Value>,
    ) -> Result<Value, String> {
        if let Some(key) = object
            .keys()
            .find(|k| !KEYS.contains(&k.as_str()) && *k != "step")
        {
            let hint = config::did_you_mean(key, KEYS.into_iter().chain(["step"]))
                .map_or(String::new(), |known| format!("; did you mean {known}?"));
            return Err(format!("{key} is not an event field{hint}"));
        }
        let agent = Agents::<AgentGate>::name(object)
            .map_err(|other| format!("agent must be a string (got {})", config::render(other)))?;
        let settings = &self.settings;
        let gate = agents.get(agent, AgentGate::default);
        let mut out = Map::new();
        out.insert("line".into(), json!(line));
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
            let args_value = object.get("args").cloned().unwrap_or_else(|| json!({}));
            let args = canonical_args_hash(&args_value);
            let shot = Shot::new(name.as_str(), &args_value);
            let outcome = outcome(object.get("result"))?;
            let output = match object.get("output") {
                None => "",
                Some(text) => text_field("output", text)?,
            };
            let site = match (object.get("root"), object.get("nested")) {
                (None, None) => Site::DIRECT,
                (Some(Value::String(root)), None) => Site::of(Some(root), false),
                (Some(Value::String(root)), Some(Value::Bool(nested))) => {
                    Site::of(Some(root), *nested)
                }
                (None, Some(_)) => return Err("nested needs the root of its program".to_owned()),
                (Some(Value::String(_)), Some(other)) => {
                    return Err(format!(
                        "nested must be true or false (got {})",
                        config::render(other)
                    ));
                }
                (Some(other), _) => {
                    return Err(format!(
                        "root must be a call id string (got {})",
                        config::render(other)
                    ));
                }
            };
            out.insert("event".into(), json!("tool"));
            out.insert("tool".into(), json!(name));
            // DSH rejects an unknown tool before pre-execute: the gate never judges it.
            let decision = if outcome.unknown_tool {
                Reaction::Decision(Decision::Allow)
            } else {
                gate.handle(settings, Input::ToolCall { name, args })
            };
            note(&decision, &mut timeline);
            let (outcome, failure) = match &decision {
                Reaction::Decision(Decision::Deny { reason, .. }) => {
                    out.insert("decision".into(), json!("deny"));
                    out.insert("reason".into(), json!(reason));
                    (Outcome::error(), FailureKeys::default())
                }
                _ => {
                    out.insert("decision".into(), json!("allow"));
                    let (head, tail) = fingerprint::Failure::windows(output);
                    (outcome, failure_keys(name, &outcome, head, tail))
                }
            };
            let observed = gate.handle(
                settings,
                Input::ToolResult {
                    site,
                    name,
                    shot,
                    outcome,
                    failure,
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
            "result must be \"ok\", \"error\", \"cancelled\", \"unknown-tool\", {{\"exitCode\": N}}, {{\"killed\": true}} or {{\"timedOut\": true}} (got {})",
            config::render(value)
        )
    };
    Ok(match result {
        None => Outcome::success(),
        Some(Value::String(kind)) => match kind.as_str() {
            "ok" => Outcome::success(),
            "error" => Outcome::error(),
            "cancelled" => Outcome::cancelled(),
            "unknown-tool" => Outcome::unknown_tool(),
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
        Observation::Waited => "waiting",
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

fn opening(h: &Header, s: &Settings) -> String {
    let mut out = format!("DSH session {}", h.id);
    if let Some(cwd) = &h.cwd {
        out.push_str(&format!(" (cwd {cwd})"));
    }
    if s.enabled() {
        let (failures, repeats) = match s.counting() {
            Counting::NoProgress => (
                "failed retries of one problem that changed nothing",
                "repeats of one call",
            ),
            Counting::SameProblem => ("failed retries of one problem", "repeats of one call"),
            Counting::AnyFailure => ("failed calls", "identical calls"),
        };
        out.push_str(&format!(
            "\ngate: arms at {} {failures} or {} {repeats}; escape after {} denials",
            s.failure_threshold(),
            s.repeat_threshold(),
            s.max_denials()
        ));
    } else {
        out.push_str("\nthe plugin is disabled by this config: nothing is judged");
    }
    out.push_str(&format!(
        "\n\n{:>5}  {:<24}  {:<12}  {:<9}  what the gate does",
        "#", "event", "result", "gate"
    ));
    out
}

impl Session {
    fn feed(
        &mut self,
        settings: &Settings,
        line: usize,
        entry: Entry,
        json: bool,
    ) -> Option<String> {
        let mut rows: Vec<(String, String, Value)> = Vec::new();
        match entry.event {
            LogEvent::ToolResult(result) if !result.repaired => {
                let Some(call) = &result.call else {
                    return None;
                };
                self.calls += 1;
                let args = canonical_args_hash_str(&call.arguments_json);
                let name = call.name.as_str();
                let site = if call.parent.is_some() {
                    Site::nested(&call.root)
                } else {
                    Site::direct(&call.root)
                };
                // DSH rejects an unknown tool before pre-execute: the plugin never judged it.
                let decision = if result.outcome().unknown_tool {
                    Reaction::Decision(Decision::Allow)
                } else {
                    self.gate.handle(settings, Input::ToolCall { name, args })
                };
                let mut entries = Vec::new();
                let mut out = json!({ "event": "tool", "tool": name });
                let (outcome, failure) = match &decision {
                    Reaction::Decision(Decision::Deny { reason, .. }) => {
                        out["decision"] = json!("deny");
                        out["reason"] = json!(reason);
                        (Outcome::error(), FailureKeys::default())
                    }
                    _ => {
                        out["decision"] = json!("allow");
                        let outcome = result.outcome();
                        let (head, tail) = fingerprint::Failure::windows(&result.text);
                        (outcome, failure_keys(name, &outcome, head, tail))
                    }
                };
                entries.extend(decision.timeline_entry());
                let shot = Shot::from_json(name, &call.arguments_json);
                let observed = self.gate.handle(
                    settings,
                    Input::ToolResult {
                        site,
                        name,
                        shot,
                        outcome,
                        failure,
                    },
                );
                if let Reaction::Observation(observation) = &observed {
                    out["counted"] = json!(counted(observation));
                }
                entries.extend(observed.timeline_entry());
                let label = if call.parent.is_some() {
                    format!("call {}  > {name}", self.calls)
                } else {
                    format!("call {}  {name}", self.calls)
                };
                if let Some(parent) = &call.parent {
                    out["parent_call"] = json!(parent);
                }
                rows.push((
                    label,
                    outcome_label(&outcome, &out),
                    self.record(out, &entries),
                ));
            }
            LogEvent::UserPrompt { text } => {
                let reaction = self
                    .gate
                    .handle(settings, Input::UserPrompt { text: &text });
                let entries: Vec<_> = reaction.timeline_entry().into_iter().collect();
                let out = self.record(json!({ "event": "user" }), &entries);
                rows.push(("user prompt".to_owned(), String::new(), out));
            }
            LogEvent::AssistantText { text, interrupted } => {
                self.steps += 1;
                let step = self.gate.handle(settings, Input::Step);
                let mut out = json!({ "event": "step" });
                if let Reaction::Notice(Some(notice)) = &step {
                    out["notice"] = json!(notice.text);
                }
                let entries: Vec<_> = step.timeline_entry().into_iter().collect();
                let out = self.record(out, &entries);
                rows.push((format!("step {}", self.steps), String::new(), out));
                if !interrupted {
                    let reaction = self
                        .gate
                        .handle(settings, Input::AssistantText { text: &text });
                    let mut out = json!({ "event": "assistant" });
                    if let Reaction::Lift(LiftOutcome::Partial { missing }) = reaction {
                        let names: Vec<&str> = missing.iter().map(Marker::en).collect();
                        out["missing"] = json!(names);
                    }
                    let entries: Vec<_> = reaction.timeline_entry().into_iter().collect();
                    let out = self.record(out, &entries);
                    rows.push(("  reply".to_owned(), String::new(), out));
                }
            }
            LogEvent::Reopened => {
                self.gate = AgentGate::new();
                let out = self.record(json!({ "event": "reopened" }), &[]);
                rows.push(("session reopened".to_owned(), String::new(), out));
            }
            _ => return None,
        }
        let lines: Vec<String> = rows
            .into_iter()
            .filter(|(_, _, out)| {
                json || !out["timeline"].as_array().is_some_and(Vec::is_empty)
                    || out["event"] == "tool"
            })
            .map(|(label, result, mut out)| {
                if json {
                    out["line"] = json!(line);
                    out.to_string()
                } else {
                    let what = out["timeline"]
                        .as_array()
                        .map(|t| {
                            t.iter()
                                .filter_map(Value::as_str)
                                .collect::<Vec<_>>()
                                .join("; ")
                        })
                        .unwrap_or_default();
                    format!(
                        "{:>5}  {:<24}  {:<12}  {:<9}  {what}",
                        line,
                        text::clip_within(&label, 24),
                        result,
                        out["gate"].as_str().unwrap_or_default()
                    )
                }
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }

    /// Adds the gate's state and the timeline to an output line, and counts the timeline.
    fn record(&mut self, mut out: Value, entries: &[TimelineEntry]) -> Value {
        let timeline: Vec<String> = entries.iter().map(|e| describe(*e)).collect();
        for entry in entries {
            *self.counts.entry(kind(*entry)).or_default() += 1;
        }
        out["timeline"] = json!(timeline);
        out["gate"] = json!(status(self.gate.status()));
        out["failures"] = json!(self.gate.failures());
        out["run"] = json!(self.gate.run_length());
        out["denials"] = json!(self.gate.denials());
        out
    }

    fn summary(&self) -> String {
        let count = |k: &str| self.counts.get(k).copied().unwrap_or(0);
        format!(
            "\nsummary: {} tool calls, {} steps; armed {}, check shown {}, denied {} (+{} same-direction), partial answers {}, lifted {}, escaped {}, reset {}",
            self.calls,
            self.steps,
            count("armed"),
            count("check"),
            count("denied"),
            count("same"),
            count("partial"),
            count("lifted"),
            count("escaped"),
            count("reset"),
        )
    }
}

fn kind(entry: TimelineEntry) -> &'static str {
    match entry {
        TimelineEntry::Armed(_) => "armed",
        TimelineEntry::CheckShown => "check",
        TimelineEntry::Denied => "denied",
        TimelineEntry::SameShotDenied => "same",
        TimelineEntry::Partial(_) => "partial",
        TimelineEntry::Lifted => "lifted",
        TimelineEntry::Escaped { .. } => "escaped",
        TimelineEntry::Reset(_) => "reset",
    }
}

fn outcome_label(outcome: &Outcome, out: &Value) -> String {
    if out["decision"] == "deny" {
        "DENIED".to_owned()
    } else if outcome.cancelled {
        "cancelled".to_owned()
    } else if outcome.unknown_tool {
        "unknown tool".to_owned()
    } else if outcome.timed_out {
        "timed out".to_owned()
    } else if outcome.killed {
        "killed".to_owned()
    } else if !outcome.ok {
        "error".to_owned()
    } else if let Some(code) = outcome.exit_code {
        format!("exit {code}")
    } else {
        "ok".to_owned()
    }
}

/// A timeline entry in words, for the JSON lines and the session-log timeline.
pub fn describe(entry: TimelineEntry) -> String {
    match entry {
        TimelineEntry::Armed(trigger) => format!("armed ({})", trigger.describe(Language::En)),
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
