//! DSH session logs as `research-nudge replay` input: what the plugin would have done in a
//! recorded session.
//!
//! DSH (`dsh-session-persistence-jsonl`, format version 0) keeps one append-only log per session
//! at `$DSH_HOME/sessions/--<project>--/<session-id>/session.jsonl.zstd` (concatenated Zstandard
//! frames), or `session.jsonl` when compression is off. The CLI decompresses; this module reads
//! the logical lines: the header `{"type":"session","version":0,"id","createdAt",…}`, then one
//! `SessionEvent` `{"type","seq","time","data"}` per line, or a packed row of stream chunks
//! (`text-chunks`, …), which is skipped like every event the policy does not need.
//!
//! The mapping, one session = one agent (a subagent writes its own session file):
//! - `tool/call` `{callId, name, arguments}` remembers the call's name and raw arguments;
//! - `tool/result` `{message: {content: [{type: "tool-result", toolCallId, isError?, content}]},
//!   error?: {code}}` is one finished call at its `time`: `isError` is a failure (a denial, an
//!   invalid call, a thrown error; the text without its `Error: ` prefix is the failure text), and
//!   otherwise a shell-style `[exit code: N]` last line is the exit code (DSH keeps only the
//!   rendered text, not the tool's value). A `research_nudge_snooze` call arms the minutes its
//!   arguments ask for. Results DSH synthesizes when it repairs a crashed turn
//!   (`TOOL_NOT_STARTED`, `TOOL_OUTCOME_UNKNOWN`) never reached the plugin and are not counted;
//! - `user/message` whose `source.kind` is `"user"` is a human prompt (injected context has
//!   other kinds);
//! - `session/end-seed` after live work means the session was reopened: the plugin would track
//!   a fresh agent from there;
//! - events with `seq` below the header's `seedLength` were inherited from the parent session of
//!   a fork and are skipped.
//!
//! Times are the events' `time` (Unix epoch milliseconds); one that steps back counts as no time
//! passing, as the plugin's monotonic clock would.

use crate::research_nudge::replay::observe_call;
use crate::research_nudge::{PLUGIN_NAME, Plugin};
use policy::{AgentState, Hold, MINUTE, Millis, Observation, Signals, ToolClass, Triggers};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The session log format version this reader understands (DSH's `SESSION_FORMAT_VERSION`).
pub const FORMAT_VERSION: u64 = 0;

/// Error codes of the results DSH synthesizes when it repairs a crashed turn.
const REPAIR_CODES: [&str; 2] = ["TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"];

/// Characters of a user prompt the timeline quotes.
const PROMPT_EXCERPT: usize = 40;

/// The parsed first line, when it opens a DSH session log (a JSON object whose `type` is
/// `"session"`); anything else is the replay event format.
pub fn header(text: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(text).ok()?;
    (value.get("type").and_then(Value::as_str) == Some("session")).then_some(value)
}

/// The session header's fields the replay uses.
#[derive(Clone, Debug, PartialEq)]
struct Header {
    id: String,
    created_at: Millis,
    cwd: Option<String>,
    parent: Option<String>,
    subagent: bool,
    depth: u64,
    seed_length: u64,
}

impl Header {
    fn parse(value: &Value) -> Result<Self, String> {
        let Value::Object(fields) = value else {
            return Err(format!("must be a JSON object (got {})", brief(value)));
        };
        let version = fields.get("version");
        match version.and_then(Value::as_u64) {
            Some(FORMAT_VERSION) => {}
            Some(other) => {
                return Err(format!(
                    "session log format version {other} is not supported (this replay reads version {FORMAT_VERSION}, the format of DSH 0.1)"
                ));
            }
            None => {
                return Err(format!(
                    "session header: version must be a non-negative integer (got {})",
                    shown(version)
                ));
            }
        }
        let id = match fields.get("id") {
            Some(Value::String(id)) if !id.is_empty() => id.clone(),
            other => {
                return Err(format!(
                    "session header: id must be a non-empty string (got {})",
                    shown(other)
                ));
            }
        };
        let created_at = millis(fields.get("createdAt")).ok_or_else(|| {
            format!(
                "session header: createdAt must be integer Unix epoch milliseconds (got {})",
                shown(fields.get("createdAt"))
            )
        })?;
        let text = |key: &str| -> Result<Option<String>, String> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "session header: {key} must be a string (got {})",
                    brief(other)
                )),
            }
        };
        let count = |key: &str| -> Result<u64, String> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(0),
                Some(value) => value.as_u64().ok_or_else(|| {
                    format!(
                        "session header: {key} must be a non-negative integer (got {})",
                        brief(value)
                    )
                }),
            }
        };
        Ok(Self {
            id,
            created_at,
            cwd: text("cwd")?,
            parent: text("parentSession")?,
            subagent: text("origin")?.as_deref() == Some("subagent"),
            depth: count("delegationDepth")?,
            seed_length: count("seedLength")?,
        })
    }
}

/// One logical line of a session log, as far as the replay needs it.
#[derive(Debug, PartialEq)]
enum Record<'a> {
    Header,
    Call {
        seq: u64,
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    Result {
        seq: u64,
        time: Millis,
        call_id: &'a str,
        result: ToolResult,
    },
    UserMessage {
        seq: u64,
        time: Millis,
        source: Source<'a>,
        text: String,
    },
    EndSeed {
        seq: u64,
        time: Millis,
    },
    /// Every other event or row: chunks, assistant messages, turn and step bounds, requests, …
    Other,
}

/// Who a `user/message` came from, as far as the replay cares.
#[derive(Debug, PartialEq)]
enum Source<'a> {
    /// A human prompt (`source.kind` `"user"`): a new task.
    Human,
    /// A reminder this plugin injected when the session ran, with its summary.
    LiveReminder(Option<&'a str>),
    /// Any other injected context.
    Other,
}

/// A `tool/result` as the plugin would have judged it.
#[derive(Debug, PartialEq)]
struct ToolResult {
    is_error: bool,
    /// The failure text: the error message for an error result, the output otherwise.
    text: String,
    /// `data.error.code`, when DSH recorded one.
    error_code: Option<String>,
    /// The `[exit code: N]` of a successful result.
    exit_code: Option<i64>,
    /// The `[killed by signal: S]` of a successful result (the plugin sees no exit code then).
    signal: Option<String>,
}

impl ToolResult {
    fn repaired(&self) -> bool {
        self.error_code
            .as_deref()
            .is_some_and(|code| REPAIR_CODES.contains(&code))
    }

    /// How the timeline and the JSON lines name the outcome.
    fn label(&self) -> String {
        if self.repaired() {
            "interrupted".to_owned()
        } else if self.is_error {
            match &self.error_code {
                Some(code) => format!("error {code}"),
                None => "error".to_owned(),
            }
        } else if let Some(signal) = &self.signal {
            format!("killed {signal}")
        } else {
            match self.exit_code {
                Some(code) if code != 0 => format!("exit {code}"),
                _ => "ok".to_owned(),
            }
        }
    }
}

fn record(value: &Value) -> Result<Record<'_>, String> {
    let Value::Object(fields) = value else {
        return Err(format!("must be a JSON object (got {})", brief(value)));
    };
    let kind = match fields.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        other => {
            return Err(format!(
                "type must be a string naming the session event (got {})",
                shown(other)
            ));
        }
    };
    if kind == "session" {
        return Ok(Record::Header);
    }
    if !matches!(
        kind,
        "tool/call" | "tool/result" | "user/message" | "session/end-seed"
    ) {
        return Ok(Record::Other);
    }
    let at = Fields { kind, path: "" };
    let seq = at.count(fields, "seq")?;
    let time = millis(fields.get("time")).ok_or_else(|| {
        format!(
            "{kind}: time must be integer Unix epoch milliseconds (got {})",
            shown(fields.get("time"))
        )
    })?;
    let data = at.object(fields, "data")?;
    let at = Fields {
        kind,
        path: "data.",
    };
    Ok(match kind {
        "tool/call" => Record::Call {
            seq,
            call_id: at.string(data, "callId")?,
            name: match at.string(data, "name")? {
                "" => return Err(format!("{kind}: data.name must not be empty")),
                name => name,
            },
            arguments: at.string(data, "arguments")?,
        },
        "tool/result" => {
            let message = at.object(data, "message")?;
            let at = Fields {
                kind,
                path: "data.message.",
            };
            let block = match at.array(message, "content")?.first() {
                Some(Value::Object(block))
                    if block.get("type").and_then(Value::as_str) == Some("tool-result") =>
                {
                    block
                }
                other => {
                    return Err(format!(
                        "{kind}: data.message.content[0] must be a tool-result block (got {})",
                        shown(other)
                    ));
                }
            };
            let at = Fields {
                kind,
                path: "data.message.content[0].",
            };
            let is_error = match block.get("isError") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(is_error)) => *is_error,
                Some(other) => {
                    return Err(format!(
                        "{kind}: data.message.content[0].isError must be true or false (got {})",
                        brief(other)
                    ));
                }
            };
            let output = text_of(at.array(block, "content")?);
            let error_code = match data.get("error") {
                Some(Value::Object(error)) => error.get("code").and_then(Value::as_str),
                _ => None,
            };
            let (exit_code, signal) = if is_error {
                (None, None)
            } else {
                exit_status(&output)
            };
            let text = if is_error {
                output
                    .strip_prefix("Error: ")
                    .map(str::to_owned)
                    .unwrap_or(output)
            } else {
                output
            };
            Record::Result {
                seq,
                time,
                call_id: at.string(block, "toolCallId")?,
                result: ToolResult {
                    is_error,
                    text,
                    error_code: error_code.map(str::to_owned),
                    exit_code,
                    signal,
                },
            }
        }
        "user/message" => {
            let fields = at.object(data, "source")?;
            let source_at = Fields {
                kind,
                path: "data.source.",
            };
            let source = match source_at.string(fields, "kind")? {
                "user" => Source::Human,
                "plugin" if fields.get("plugin").and_then(Value::as_str) == Some(PLUGIN_NAME) => {
                    Source::LiveReminder(fields.get("summary").and_then(Value::as_str))
                }
                _ => Source::Other,
            };
            let text = match data.get("content") {
                Some(Value::Array(blocks)) => text_of(blocks),
                Some(Value::String(text)) => text.clone(),
                _ => String::new(),
            };
            Record::UserMessage {
                seq,
                time,
                source,
                text,
            }
        }
        _ => Record::EndSeed { seq, time },
    })
}

/// Field readers that name the event and the field path in their errors.
struct Fields<'k> {
    kind: &'k str,
    path: &'static str,
}

impl Fields<'_> {
    fn fail(&self, key: &str, wanted: &str, got: Option<&Value>) -> String {
        format!(
            "{}: {}{key} must be {wanted} (got {})",
            self.kind,
            self.path,
            shown(got)
        )
    }

    fn string<'v>(&self, map: &'v Map<String, Value>, key: &str) -> Result<&'v str, String> {
        map.get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| self.fail(key, "a string", map.get(key)))
    }

    fn object<'v>(
        &self,
        map: &'v Map<String, Value>,
        key: &str,
    ) -> Result<&'v Map<String, Value>, String> {
        map.get(key)
            .and_then(Value::as_object)
            .ok_or_else(|| self.fail(key, "an object", map.get(key)))
    }

    fn array<'v>(&self, map: &'v Map<String, Value>, key: &str) -> Result<&'v [Value], String> {
        map.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| self.fail(key, "an array", map.get(key)))
    }

    fn count(&self, map: &Map<String, Value>, key: &str) -> Result<u64, String> {
        map.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.fail(key, "a non-negative integer", map.get(key)))
    }
}

/// A non-negative integer number of milliseconds (an integral float is accepted).
fn millis(value: Option<&Value>) -> Option<Millis> {
    let value = value?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 2f64.powi(63))
            .map(|f| f as Millis)
    })
}

/// The text blocks of a content list, joined by newlines (as the plugin reads tool results).
fn text_of(blocks: &[Value]) -> String {
    let mut text = String::new();
    for block in blocks {
        if block.get("type").and_then(Value::as_str) == Some("text") {
            if let Some(part) = block.get("text").and_then(Value::as_str) {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(part);
            }
        }
    }
    text
}

/// The exit status DSH's shell tools append as the last line of a result:
/// `[exit code: N]` (non-zero only) or `[killed by signal: S]`.
fn exit_status(text: &str) -> (Option<i64>, Option<String>) {
    let last = text.rsplit('\n').next().unwrap_or_default();
    let marker = |prefix: &str| {
        last.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(']'))
    };
    if let Some(signal) = marker("[killed by signal: ").filter(|s| !s.is_empty()) {
        return (None, Some(signal.to_owned()));
    }
    let code = marker("[exit code: ")
        .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|digits| digits.parse().ok());
    (code, None)
}

/// A value for an error message, cut to 40 characters.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), brief)
}

/// A recorded call waiting for its result.
struct Call {
    name: String,
    arguments: String,
}

/// The totals the timeline's summary reports.
#[derive(Default)]
struct Stats {
    calls: u32,
    failed: u32,
    prompts: u32,
    resumes: u32,
    interrupted: u32,
    live_reminders: u32,
    nudges: Vec<(u32, Triggers)>,
    held_by_snooze: u32,
    held_by_cooldown: u32,
    /// (debt, call number) and (calls since research, call number) at their highest.
    peak_debt: (u32, u32),
    peak_calls: (u32, u32),
}

/// One output row: a tool call, a human prompt, or a reopened session.
struct Row {
    line: usize,
    time: Millis,
    what: What,
    observation: Option<Observation>,
    /// Thresholds reached but held back, and by what.
    held: Option<(Triggers, Hold)>,
    signals: Signals,
    /// Milliseconds since research (or since the task started).
    quiet: Millis,
    reminder: Option<String>,
}

enum What {
    Tool {
        number: Option<u32>,
        name: String,
        class: ToolClass,
        result: ToolResult,
        refused_snooze: Option<String>,
    },
    UserPrompt {
        text: String,
    },
    Resume,
    /// A reminder the plugin really injected when the session ran.
    LiveReminder {
        summary: String,
    },
}

/// A replay over one DSH session log: one agent.
pub struct SessionLog {
    header: Header,
    json: bool,
    state: Option<AgentState>,
    /// Latest event time seen: the monotonic clock.
    clock: Millis,
    calls: HashMap<String, Call>,
    stats: Stats,
}

impl SessionLog {
    /// Starts a replay from the parsed header line.
    pub fn start(header: &Value, json: bool) -> Result<Self, String> {
        let header = Header::parse(header)?;
        Ok(Self {
            clock: header.created_at,
            header,
            json,
            state: None,
            calls: HashMap::new(),
            stats: Stats::default(),
        })
    }

    /// The timeline's heading (nothing for JSON lines).
    pub fn opening(&self, plugin: &Plugin) -> Option<String> {
        if self.json {
            return None;
        }
        let h = &self.header;
        let mut out = format!("DSH session {} (started {} UTC", h.id, utc(h.created_at));
        if let Some(cwd) = &h.cwd {
            out.push_str(&format!(", cwd {cwd}"));
        }
        out.push(')');
        if h.subagent || h.depth > 0 {
            out.push_str(&format!("\nsubagent session, delegation depth {}", h.depth));
            if let Some(parent) = &h.parent {
                out.push_str(&format!(", parent {parent}"));
            }
        }
        if h.seed_length > 0 {
            out.push_str(&format!(
                "\nforked{}: its first {} events are the parent's history and are not replayed",
                h.parent
                    .as_ref()
                    .map(|p| format!(" from {p}"))
                    .unwrap_or_default(),
                h.seed_length
            ));
        }
        let s = plugin.policy().settings();
        if plugin.enabled() {
            out.push_str(&format!(
                "\nthresholds: debt >= {}, calls >= {}, minutes >= {}; cooldown {} min; snooze at most {} min",
                s.debt_threshold,
                s.max_tool_calls_without_research,
                minutes(s.max_time_without_research),
                minutes(s.cooldown),
                plugin.row().max_agent_snooze_minutes,
            ));
        } else {
            out.push_str("\nthe plugin is disabled by this config: nothing is counted");
        }
        out.push_str("\n\n");
        out.push_str(&columns(
            "call", "time", "tool", "class", "result", "debt", "calls", "mins", "event",
        ));
        Some(out)
    }

    /// Feeds one non-blank logical line; returns the output for it, if any.
    pub fn feed(
        &mut self,
        plugin: &mut Plugin,
        line: usize,
        text: &str,
    ) -> Result<Option<String>, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        let row = match record(&value)? {
            Record::Header => {
                return Err(
                    "a second session header (a session log has one, on its first line)".to_owned(),
                );
            }
            Record::Other => None,
            Record::Call { seq, .. }
            | Record::Result { seq, .. }
            | Record::UserMessage { seq, .. }
                if seq < self.header.seed_length =>
            {
                None
            }
            Record::Call {
                call_id,
                name,
                arguments,
                ..
            } => {
                self.calls.insert(
                    call_id.to_owned(),
                    Call {
                        name: name.to_owned(),
                        arguments: arguments.to_owned(),
                    },
                );
                None
            }
            Record::Result {
                time,
                call_id,
                result,
                ..
            } => Some(self.tool_result(plugin, line, time, call_id, result)?),
            Record::UserMessage {
                time,
                source: Source::LiveReminder(summary),
                ..
            } => {
                self.stats.live_reminders += 1;
                let what = What::LiveReminder {
                    summary: summary.unwrap_or_default().to_owned(),
                };
                Some(self.row(plugin, line, time, what, None))
            }
            Record::UserMessage {
                source: Source::Other,
                ..
            } => None,
            Record::UserMessage { time, text, .. } => {
                Some(self.user_prompt(plugin, line, time, text))
            }
            Record::EndSeed { time, .. } => self.resume(plugin, line, time),
        };
        Ok(row.map(|row| self.render(plugin, &row)))
    }

    /// The timeline's summary (nothing for JSON lines).
    pub fn finish(&self, plugin: &Plugin) -> Option<String> {
        if self.json {
            return None;
        }
        let st = &self.stats;
        let mut out = format!("\nsummary: {}", plural(st.calls, "tool call", "tool calls"));
        if st.failed > 0 {
            out.push_str(&format!(" ({} failed)", st.failed));
        }
        out.push_str(&format!(
            ", {}",
            plural(st.prompts, "user prompt", "user prompts")
        ));
        if st.resumes > 0 {
            out.push_str(&format!(
                ", reopened {}",
                plural(st.resumes, "time", "times")
            ));
        }
        if st.live_reminders > 0 {
            out.push_str(&format!(
                ", {} injected when it ran",
                plural(st.live_reminders, "reminder", "reminders")
            ));
        }
        if st.interrupted > 0 {
            out.push_str(&format!(
                ", {} closed by crash repair (not counted)",
                plural(st.interrupted, "call", "calls")
            ));
        }
        if !plugin.enabled() {
            out.push_str("\nnudges: none (the plugin is disabled by this config)");
            return Some(out);
        }
        if st.nudges.is_empty() {
            out.push_str("\nnudges: none");
        } else {
            let at: Vec<String> = st
                .nudges
                .iter()
                .map(|(number, triggers)| format!("{number} ({})", triggers.names().join(", ")))
                .collect();
            out.push_str(&format!(
                "\nnudges: {} at call{} {}",
                st.nudges.len(),
                if at.len() == 1 { "" } else { "s" },
                at.join(", ")
            ));
        }
        if st.held_by_snooze + st.held_by_cooldown > 0 {
            out.push_str(&format!(
                "; held back {} by snooze, {} by cooldown",
                st.held_by_snooze, st.held_by_cooldown
            ));
        }
        let s = plugin.policy().settings();
        if st.calls > 0 {
            out.push_str(&format!(
                "\npeaks: debt {}/{} at call {}, calls since research {}/{} at call {}",
                st.peak_debt.0,
                s.debt_threshold,
                st.peak_debt.1,
                st.peak_calls.0,
                s.max_tool_calls_without_research,
                st.peak_calls.1
            ));
        }
        Some(out)
    }

    /// Advances the monotonic clock to an event's time.
    fn tick(&mut self, time: Millis) -> Millis {
        self.clock = self.clock.max(time);
        self.clock
    }

    fn tool_result(
        &mut self,
        plugin: &mut Plugin,
        line: usize,
        time: Millis,
        call_id: &str,
        result: ToolResult,
    ) -> Result<Row, String> {
        let call = self.calls.remove(call_id);
        let name = match (&call, result.repaired()) {
            (Some(call), _) => call.name.clone(),
            // A call repair closes before it was recorded has no tool/call.
            (None, true) => "?".to_owned(),
            (None, false) => {
                return Err(format!(
                    "tool/result: call {} has no earlier tool/call",
                    Value::from(call_id)
                ));
            }
        };
        let at = self.tick(time);
        let class = plugin.policy.classify(&name);
        if result.repaired() {
            self.stats.interrupted += 1;
            return Ok(self.row(
                plugin,
                line,
                time,
                What::Tool {
                    number: None,
                    name,
                    class,
                    result,
                    refused_snooze: None,
                },
                None,
            ));
        }
        self.stats.calls += 1;
        let number = self.stats.calls;
        let state = self.state.get_or_insert_with(|| AgentState::new(at));
        let mut refused_snooze = None;
        let observation = if plugin.enabled() {
            let arguments = call.as_ref().map_or("{}", |c| c.arguments.as_str());
            let arguments = if arguments.trim().is_empty() {
                "{}"
            } else {
                arguments
            };
            let (observation, refused) = observe_call(
                plugin,
                state,
                at,
                &name,
                !result.is_error,
                &result.text,
                result.exit_code,
                arguments,
            );
            refused_snooze = refused;
            Some(observation)
        } else {
            None
        };
        if result.is_error || result.exit_code.is_some_and(|c| c != 0) || refused_snooze.is_some() {
            self.stats.failed += 1;
        }
        let row = self.row(
            plugin,
            line,
            time,
            What::Tool {
                number: Some(number),
                name,
                class,
                result,
                refused_snooze,
            },
            observation,
        );
        let st = &mut self.stats;
        match (row.observation, row.held) {
            (Some(Observation::Nudge(triggers)), _) => st.nudges.push((number, triggers)),
            (_, Some((_, Hold::Snooze))) => st.held_by_snooze += 1,
            (_, Some((_, Hold::Cooldown))) => st.held_by_cooldown += 1,
            _ => {}
        }
        if row.signals.debt > st.peak_debt.0 {
            st.peak_debt = (row.signals.debt, number);
        }
        if row.signals.tool_calls_since_research > st.peak_calls.0 {
            st.peak_calls = (row.signals.tool_calls_since_research, number);
        }
        Ok(row)
    }

    fn user_prompt(&mut self, plugin: &mut Plugin, line: usize, time: Millis, text: String) -> Row {
        let at = self.tick(time);
        self.stats.prompts += 1;
        let state = self.state.get_or_insert_with(|| AgentState::new(at));
        let observation = plugin
            .enabled()
            .then(|| plugin.policy.user_prompt(state, at));
        self.row(plugin, line, time, What::UserPrompt { text }, observation)
    }

    fn resume(&mut self, plugin: &mut Plugin, line: usize, time: Millis) -> Option<Row> {
        // Nothing to reopen before the first live event (a fork's seed ends here too).
        self.state.take()?;
        self.tick(time);
        self.stats.resumes += 1;
        Some(self.row(plugin, line, time, What::Resume, None))
    }

    fn row(
        &self,
        plugin: &Plugin,
        line: usize,
        time: Millis,
        what: What,
        observation: Option<Observation>,
    ) -> Row {
        let policy = plugin.policy();
        let fresh = AgentState::new(self.clock);
        let state = self.state.as_ref().unwrap_or(&fresh);
        let held = match observation {
            Some(Observation::Counted) => {
                let reached = policy.triggers(state, self.clock);
                policy
                    .hold(state, self.clock)
                    .filter(|_| reached.any())
                    .map(|hold| (reached, hold))
            }
            _ => None,
        };
        let reminder =
            matches!(observation, Some(Observation::Nudge(_))).then(|| policy.reminder_text(state));
        Row {
            line,
            time,
            what,
            observation,
            held,
            signals: policy.signals(state),
            quiet: self.clock.saturating_sub(state.research_clock()),
            reminder,
        }
    }

    fn render(&self, plugin: &Plugin, row: &Row) -> String {
        if self.json {
            self.render_json(row)
        } else {
            self.render_text(plugin, row)
        }
    }

    fn render_json(&self, row: &Row) -> String {
        let s = &row.signals;
        let mut out = json!({
            "agent": self.header.id,
            "debt": s.debt,
            "tool_calls_since_research": s.tool_calls_since_research,
            "failures": s.failures,
            "repeated_failures": s.repeated_failures,
            "nudge": matches!(row.observation, Some(Observation::Nudge(_))),
        });
        if let Some(text) = &row.reminder {
            out["text"] = text.as_str().into();
        }
        match row.observation {
            Some(Observation::Snoozed { minutes, .. }) => out["snooze_minutes"] = minutes.into(),
            Some(Observation::SnoozeNotShortened) | None if !matches!(row.what, What::Resume) => {
                out["ignored"] = true.into();
            }
            _ => {}
        }
        match &row.what {
            What::Tool {
                number,
                name,
                class,
                result,
                refused_snooze,
            } => {
                out["event"] = "tool".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
                if let Some(number) = number {
                    out["call"] = (*number).into();
                }
                out["tool"] = name.as_str().into();
                out["class"] = class_name(*class).into();
                out["result"] = result.label().into();
                if let Some(code) = result.exit_code {
                    out["exit_code"] = code.into();
                }
                if let Some(signal) = &result.signal {
                    out["signal"] = signal.as_str().into();
                }
                if let Some(code) = &result.error_code {
                    out["error_code"] = code.as_str().into();
                }
                if let Some(message) = refused_snooze {
                    out["snooze_refused"] = message.as_str().into();
                }
            }
            What::UserPrompt { .. } => {
                out["event"] = "user_prompt".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
            }
            What::Resume => {
                out["event"] = "resume".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
            }
            What::LiveReminder { summary } => {
                out["event"] = "live_reminder".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
                out["summary"] = summary.as_str().into();
            }
        }
        match (row.observation, row.held) {
            (Some(Observation::Nudge(triggers)), _) => out["trigger"] = triggers.names().into(),
            (_, Some((triggers, hold))) => {
                out["trigger"] = triggers.names().into();
                out["held_by"] = hold_name(hold).into();
            }
            _ => {}
        }
        out.to_string()
    }

    fn render_text(&self, plugin: &Plugin, row: &Row) -> String {
        let time = elapsed(row.time.saturating_sub(self.header.created_at));
        let s = &row.signals;
        let (debt, calls, mins) = (
            s.debt.to_string(),
            s.tool_calls_since_research.to_string(),
            (row.quiet / MINUTE).to_string(),
        );
        match &row.what {
            What::Resume => columns(
                "",
                &time,
                "(reopened)",
                "",
                "",
                "",
                "",
                "",
                "a fresh agent from here: its state starts afresh",
            ),
            What::LiveReminder { summary } => columns(
                "",
                &time,
                "(live reminder)",
                "",
                "",
                "",
                "",
                "",
                &if summary.is_empty() {
                    "the plugin nudged here when the session ran".to_owned()
                } else {
                    format!("the plugin nudged here when the session ran ({summary})")
                },
            ),
            What::Tool {
                name,
                class,
                result,
                ..
            } if result.repaired() => columns(
                "",
                &time,
                name,
                class_name(*class),
                &result.label(),
                "",
                "",
                "",
                "not counted: closed by crash repair, the plugin never saw it",
            ),
            What::Tool {
                number,
                name,
                class,
                result,
                refused_snooze,
            } => {
                let mut event = self.event(plugin, row);
                if let Some(message) = refused_snooze {
                    push(&mut event, &format!("snooze refused: {message}"));
                }
                columns(
                    &number.map(|n| n.to_string()).unwrap_or_default(),
                    &time,
                    name,
                    class_name(*class),
                    &result.label(),
                    &debt,
                    &calls,
                    &mins,
                    &event,
                )
            }
            What::UserPrompt { text } => {
                let mut event = self.event(plugin, row);
                let quote = excerpt(text);
                if !quote.is_empty() {
                    event.push_str(&format!(": \"{quote}\""));
                }
                columns(
                    "",
                    &time,
                    "user prompt",
                    "",
                    "",
                    &debt,
                    &calls,
                    &mins,
                    &event,
                )
            }
        }
    }

    /// The timeline's event column: what the policy did with the row.
    fn event(&self, plugin: &Plugin, row: &Row) -> String {
        if !plugin.enabled() {
            return "ignored (plugin disabled)".to_owned();
        }
        if let Some((triggers, hold)) = row.held {
            return format!(
                "held by {} ({})",
                hold_name(hold),
                triggers.names().join(", ")
            );
        }
        match row.observation {
            Some(Observation::Nudge(triggers)) => {
                format!("NUDGE ({})", triggers.names().join(", "))
            }
            Some(Observation::ResearchReset) => "research: reset".to_owned(),
            Some(Observation::Snoozed { minutes, .. }) => format!("snoozed {minutes} min"),
            Some(Observation::SnoozeNotShortened) => {
                "snooze ignored: a longer one is active".to_owned()
            }
            Some(Observation::UserPromptReset) => "new task, reset".to_owned(),
            Some(Observation::Counted) | None => String::new(),
        }
    }
}

fn push(event: &mut String, text: &str) {
    if !event.is_empty() {
        event.push_str("; ");
    }
    event.push_str(text);
}

/// One timeline line in fixed columns (wider values push the rest right).
#[allow(clippy::too_many_arguments)]
fn columns(
    call: &str,
    time: &str,
    tool: &str,
    class: &str,
    result: &str,
    debt: &str,
    calls: &str,
    mins: &str,
    event: &str,
) -> String {
    format!(
        "{call:>5}  {time:<9}  {tool:<22}  {class:<9}  {result:<18}  {debt:>4}  {calls:>5}  {mins:>4}  {event}"
    )
    .trim_end()
    .to_owned()
}

fn class_name(class: ToolClass) -> &'static str {
    match class {
        ToolClass::Research => "research",
        ToolClass::Mutation => "mutation",
        ToolClass::Execution => "execution",
        ToolClass::Ordinary => "ordinary",
    }
}

fn hold_name(hold: Hold) -> &'static str {
    match hold {
        Hold::Snooze => "snooze",
        Hold::Cooldown => "cooldown",
    }
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Minutes for the heading: whole when exact, else to (truncated) hundredths.
fn minutes(ms: Millis) -> String {
    let (whole, hundredths) = (ms / MINUTE, ms % MINUTE * 100 / MINUTE);
    if hundredths == 0 && ms % MINUTE == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{hundredths:02}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    }
}

/// Time since the session started: `+m:ss`, or `+h:mm:ss` from the first hour on.
fn elapsed(ms: Millis) -> String {
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("+{h}:{m:02}:{s:02}")
    } else {
        format!("+{m}:{s:02}")
    }
}

/// Unix epoch milliseconds as `YYYY-MM-DD HH:MM:SS` (UTC).
fn utc(ms: Millis) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The start of a prompt on one line.
fn excerpt(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(PROMPT_EXCERPT) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests;
