//! A reader of DSH session logs: the logical lines of one recorded session in, plugin-agnostic
//! events out, for every replay in the family.
//!
//! DSH (`dsh-session-persistence-jsonl`, format version 0 in 0.1, 4 in 0.2) keeps one append-only log per session
//! at `$DSH_HOME/sessions/--<project>--/<session-id>/session.jsonl.zstd` (concatenated Zstandard
//! frames), or `session.jsonl` when compression is off. Decompression is the caller's (the
//! package CLIs do it in JavaScript); this crate reads the text lines: the header
//! `{"type":"session","version":0,"id","createdAt",…}` ([`session_header`], [`Header`]), then one
//! `SessionEvent` `{"type","seq","time","data"}` per line, or a packed row of stream chunks
//! (`text-chunks`, …), which is skipped like every event no guard needs. One session is one agent
//! (a subagent writes its own session file).
//!
//! [`Reader::read`] turns a line into a [`LogEvent`], with the event's `seq` and `time`
//! ([`Entry`]):
//! - `tool/call` `{callId, name, arguments}` is a [`LogEvent::ToolCall`]; the reader remembers it
//!   for its result;
//! - `tool/code-dispatch-start` `{rootCallId, parentCallId, subCallId, name, arguments}` (DSH
//!   0.1's Code Mode; `tool/ptc-dispatch-start` in 0.2) is a [`LogEvent::ToolCall`] too: a call a
//!   Code Mode program made ([`ToolCall::parent`] is its `run_code` call, [`ToolCall::root`] the
//!   model's call it descends from), its `arguments` a JSON value (written back as JSON text);
//! - `tool/result` `{message: {content: [{type: "tool-result", toolCallId, isError?, content}]},
//!   error?: {code}}` (format 0), or `{message: {role: "tool", toolCallId, isError?, content},
//!   error?: {code}}` (format 4), and a program's `tool/code-dispatch` (`tool/ptc-dispatch`)
//!   `{subCallId, isError, content, error?: {code}}` are a [`LogEvent::ToolResult`] paired with
//!   its call: its text blocks joined
//!   by newlines (an error result's without its `Error: ` prefix), DSH's error code, and the
//!   shell status markers of a successful result's last lines ([`ShellStatus`]; DSH keeps only
//!   the rendered text, not the tool's value). Results DSH synthesizes when it repairs a crashed
//!   turn ([`REPAIR_CODES`]) are marked [`ToolResult::repaired`]: no plugin ever saw them;
//! - `user/message` whose `source.kind` is `"user"` is a human prompt ([`LogEvent::UserPrompt`]);
//!   any other kind is injected context ([`LogEvent::Injected`]), a plugin's notices included
//!   (format 4 migrates `{kind: "plugin", plugin: NAME}` to the kind `plugin:NAME`, read back as
//!   kind `plugin` of the plugin `NAME`);
//! - `assistant/message` `{message: {content}, interrupted?}` is the reply's visible text
//!   ([`LogEvent::AssistantText`]: its `text` blocks joined by newlines, never reasoning);
//! - `session/end-seed` after an event the reader surfaced means the session was reopened
//!   ([`LogEvent::Reopened`]): a live plugin would track a fresh agent from there;
//! - events with `seq` below the header's `seedLength` were inherited from the parent session of
//!   a fork and are skipped (they are still checked). Format 4 records only `isSeeded: true` and
//!   ends the inherited prefix at the log's **last** `session/end-seed {inherited: true}` marker,
//!   which a line-by-line reader cannot know before the end: a seeded format 4 log is refused.
//!
//! The format 4 shapes follow DSH 0.2's source as read (never run): the header
//! (`packages/core/session/src/types.ts`, `SessionHeader`: `isSeeded`), the `tool/ptc-dispatch*`
//! events (`packages/core/tools/src/ptc.ts`) and the source-kind migration
//! (`dsh-session-format-v2-to-v3`); the fixtures in `fixtures/v4/` are named after those files.
//!
//! Times are the events' `time`, Unix epoch milliseconds, exactly as recorded: they may step back,
//! and a consumer that models a monotonic clock clamps them itself. A malformed line is a
//! [`ReadError`] naming the line, the event and the field path.
//!
//! It is pure: no WASM, no JavaScript, no DSH runtime, no I/O. It knows DSH's session log format
//! and nothing of any plugin: what an event means to a guard (a failure, research, a reminder of
//! its own) is the consumer's mapping.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;

pub use outcome::{Outcome, ShellStatus};

/// The session log format version of DSH 0.1 (DSH's `SESSION_FORMAT_VERSION`).
pub const FORMAT_VERSION: u64 = 0;

/// The session log format version of DSH 0.2 (`SESSION_FORMAT_VERSION = 4`,
/// `packages/core/session/src/types.ts`).
pub const FORMAT_V4: u64 = 4;

/// The format versions this reader understands.
pub const FORMAT_VERSIONS: [u64; 2] = [FORMAT_VERSION, FORMAT_V4];

/// Error codes of the results DSH synthesizes when it repairs a crashed turn.
pub const REPAIR_CODES: [&str; 2] = ["TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN"];

/// The parsed line, when it opens a DSH session log (a JSON object whose `type` is
/// `"session"`). Anything else is not a session log.
pub fn session_header(text: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(text).ok()?;
    (value.get("type").and_then(Value::as_str) == Some("session")).then_some(value)
}

/// The session header's fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version ([`FORMAT_VERSIONS`]).
    pub version: u64,
    /// The session id.
    pub id: String,
    /// When the session was created, Unix epoch milliseconds.
    pub created_at: u64,
    /// The working directory, when recorded.
    pub cwd: Option<String>,
    /// `parentSession`: the session this one was forked or delegated from.
    pub parent: Option<String>,
    /// `origin` is `"subagent"`.
    pub subagent: bool,
    /// `delegationDepth` (0 when absent).
    pub depth: u64,
    /// `seedLength`: how many leading events a fork inherited from its parent (0 when absent).
    pub seed_length: u64,
}

impl Header {
    /// Checks and reads a header line (see [`session_header`]); the error names the field.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let Value::Object(fields) = value else {
            return Err(format!("must be a JSON object (got {})", brief(value)));
        };
        let version = fields.get("version");
        let format = match version.and_then(Value::as_u64) {
            Some(v) if FORMAT_VERSIONS.contains(&v) => v,
            Some(other) => {
                return Err(format!(
                    "session log format version {other} is not supported (this replay reads version {FORMAT_VERSION}, the format of DSH 0.1, and {FORMAT_V4}, the format of DSH 0.2)"
                ));
            }
            None => {
                return Err(format!(
                    "session header: version must be a non-negative integer (got {})",
                    shown(version)
                ));
            }
        };
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
        if format == FORMAT_V4 {
            match fields.get("isSeeded") {
                Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => {
                    return Err(
                        "session header: a seeded (forked) format 4 log is not supported: its inherited prefix ends at the log's last tagged session/end-seed marker, which this line-by-line reader cannot know before the end (replay the parent session's log)"
                            .to_owned(),
                    );
                }
                other => {
                    return Err(format!(
                        "session header: isSeeded must be true or false in format 4 (got {})",
                        shown(other)
                    ));
                }
            }
        }
        Ok(Self {
            version: format,
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

/// A malformed line: its number and what is wrong, naming the event and the field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    /// The line number the caller gave.
    pub line: usize,
    /// What is wrong, e.g. `tool/call: data.arguments must be a string (got nothing)`.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ReadError {}

/// One event the reader surfaced, with its place and time in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The event's `seq`.
    pub seq: u64,
    /// The event's `time`, Unix epoch milliseconds as recorded (it may step back).
    pub time: u64,
    /// What happened.
    pub event: LogEvent,
}

/// A session log event, as far as the family's guards need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogEvent {
    /// A `tool/call`: the model asked for a tool.
    ToolCall(ToolCall),
    /// A `tool/result`: one finished call.
    ToolResult(ToolResult),
    /// A `user/message` from the human (`source.kind` `"user"`): a new task.
    UserPrompt {
        /// The message's text blocks joined by newlines (or its text, when a string).
        text: String,
    },
    /// Any other `user/message`: context injected by the harness or a plugin.
    Injected {
        /// `source.kind` (`"plugin"`, `"goal"`, `"research-nudge"`, …).
        kind: String,
        /// Who injected it, by [`producer`]: `source.plugin` under the kind `plugin`, the name
        /// of a migrated `plugin:<name>` kind, or else the kind itself.
        plugin: Option<String>,
        /// `source.summary`, when a string: the plugin's one-line summary of a notice.
        summary: Option<String>,
        /// The message's text blocks joined by newlines (or its text, when a string).
        text: String,
    },
    /// An `assistant/message`: the model's reply.
    AssistantText {
        /// Its `text` blocks joined by newlines; reasoning and tool calls are left out.
        text: String,
        /// The reply was cut short (`interrupted: true`).
        interrupted: bool,
    },
    /// A `session/end-seed` after surfaced events: the session was reopened, and a live plugin
    /// would track a fresh agent from here.
    Reopened,
}

/// A recorded `tool/call`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// `callId`.
    pub call_id: String,
    /// The tool name exactly as called (never empty).
    pub name: String,
    /// The raw arguments text (JSON as the model wrote it; may be empty; a program's call's
    /// arguments as JSON text).
    pub arguments_json: String,
    /// For a call a Code Mode program made: the `run_code` call that made it (`parentCallId`).
    pub parent: Option<String>,
    /// The model's own call it descends from (`rootCallId`): its own `callId` for a call the
    /// model made.
    pub root: String,
}

/// A recorded `tool/result`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// `toolCallId`.
    pub call_id: String,
    /// Its `tool/call`; `None` only for a [`ToolResult::repaired`] result whose call was never
    /// recorded.
    pub call: Option<ToolCall>,
    /// `isError` (absent is `false`).
    pub is_error: bool,
    /// The text blocks joined by newlines; for an error result without DSH's `Error: ` prefix.
    pub text: String,
    /// `data.error.code`, when DSH recorded one.
    pub error_code: Option<String>,
    /// The shell status markers of a successful result's text (none for an error result).
    pub status: ShellStatus,
    /// DSH synthesized it when it repaired a crashed turn ([`REPAIR_CODES`]): no plugin saw it.
    pub repaired: bool,
}

impl ToolResult {
    /// The result's [`Outcome`]: an error, an exit code, a kill, a timeout, a cancellation.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_result(!self.is_error, self.error_code.as_deref(), &self.status)
    }
}

/// Reads one session log, line by line, after its header.
#[derive(Clone, Debug)]
pub struct Reader {
    header: Header,
    /// Calls waiting for their results, by call id.
    calls: HashMap<String, ToolCall>,
    /// An event was surfaced since the start or the last [`LogEvent::Reopened`].
    live: bool,
    assistant_text: bool,
}

impl Reader {
    /// A reader of the log this header opens.
    pub fn new(header: Header) -> Self {
        Self {
            header,
            calls: HashMap::new(),
            live: false,
            assistant_text: true,
        }
    }

    /// A reader of the log whose header (see [`session_header`]) is on `line`.
    pub fn open(line: usize, header: &Value) -> Result<Self, ReadError> {
        Header::parse(header)
            .map(Self::new)
            .map_err(|message| ReadError { line, message })
    }

    /// The same reader, skipping `assistant/message` events unread like the events no guard
    /// needs (so a malformed one is no error), for a consumer that has no use for replies.
    pub fn without_assistant_text(mut self) -> Self {
        self.assistant_text = false;
        self
    }

    /// The log's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Reads the next non-blank logical line (`line` is its number, for errors): the event it
    /// holds, or nothing for an event no guard needs, a fork's inherited one, or a seed end
    /// before anything was surfaced.
    pub fn read(&mut self, line: usize, text: &str) -> Result<Option<Entry>, ReadError> {
        self.entry(text)
            .map_err(|message| ReadError { line, message })
    }

    fn entry(&mut self, text: &str) -> Result<Option<Entry>, String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        let Some((seq, time, record)) = record(&value, self.assistant_text)? else {
            return Ok(None);
        };
        if seq < self.header.seed_length {
            return Ok(None);
        }
        let event = match record {
            Record::Call(call) => {
                self.calls.insert(call.call_id.clone(), call.clone());
                LogEvent::ToolCall(call)
            }
            Record::Result(mut result) => {
                result.call = self.calls.remove(&result.call_id);
                // Only a call crash repair closed before it was recorded has no tool/call.
                if result.call.is_none() && !result.repaired {
                    return Err(format!(
                        "tool/result: call {} has no earlier tool/call",
                        Value::from(result.call_id)
                    ));
                }
                LogEvent::ToolResult(result)
            }
            // Nothing to reopen before the first surfaced event (a fork's seed ends there).
            Record::Event(LogEvent::Reopened) if !self.live => return Ok(None),
            Record::Event(event) => event,
        };
        self.live = event != LogEvent::Reopened;
        Ok(Some(Entry { seq, time, event }))
    }
}

/// One logical line, before the reader pairs results with calls.
enum Record {
    Call(ToolCall),
    Result(ToolResult),
    Event(LogEvent),
}

/// The `seq`, `time` and content of one line, or nothing for an event no guard needs.
fn record(value: &Value, assistant_text: bool) -> Result<Option<(u64, u64, Record)>, String> {
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
    match kind {
        "session" => {
            return Err(
                "a second session header (a session log has one, on its first line)".to_owned(),
            );
        }
        "tool/call" | "tool/result" | "user/message" | "session/end-seed" => {}
        DISPATCH_START | DISPATCH | PTC_DISPATCH_START | PTC_DISPATCH => {}
        "assistant/message" if assistant_text => {}
        // Chunks, turn and step bounds, requests, … and future events.
        _ => return Ok(None),
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
    let record = match kind {
        "tool/call" => {
            let call_id = at.string(data, "callId")?.to_owned();
            Record::Call(ToolCall {
                root: call_id.clone(),
                call_id,
                name: match at.string(data, "name")? {
                    "" => return Err(format!("{kind}: data.name must not be empty")),
                    name => name.to_owned(),
                },
                arguments_json: at.string(data, "arguments")?.to_owned(),
                parent: None,
            })
        }
        DISPATCH_START | PTC_DISPATCH_START => Record::Call(ToolCall {
            call_id: at.string(data, "subCallId")?.to_owned(),
            name: match at.string(data, "name")? {
                "" => return Err(format!("{kind}: data.name must not be empty")),
                name => name.to_owned(),
            },
            arguments_json: match data.get("arguments") {
                Some(value) => value.to_string(),
                None => return Err(at.fail("arguments", "a JSON value", None)),
            },
            parent: Some(at.string(data, "parentCallId")?.to_owned()),
            root: at.string(data, "rootCallId")?.to_owned(),
        }),
        DISPATCH | PTC_DISPATCH => Record::Result(dispatch_result(kind, data)?),
        "tool/result" => Record::Result(tool_result(kind, data)?),
        "user/message" => {
            let source = at.object(data, "source")?;
            let source_at = Fields {
                kind,
                path: "data.source.",
            };
            let source_kind = source_at.string(source, "kind")?;
            // Format 4's migrated plugin rows: `plugin:NAME`.
            let (source_kind, migrated) = match source_kind.strip_prefix("plugin:") {
                Some(name) if !name.is_empty() => ("plugin", Some(name.to_owned())),
                _ => (source_kind, None),
            };
            let text = match data.get("content") {
                Some(Value::Array(blocks)) => text_of(blocks),
                Some(Value::String(text)) => text.clone(),
                _ => String::new(),
            };
            let field = |key: &str| source.get(key).and_then(Value::as_str).map(str::to_owned);
            Record::Event(match source_kind {
                "user" => LogEvent::UserPrompt { text },
                _ => LogEvent::Injected {
                    kind: source_kind.to_owned(),
                    plugin: producer(source_kind, field("plugin").or(migrated)),
                    summary: field("summary"),
                    text,
                },
            })
        }
        "assistant/message" => {
            let message = at.object(data, "message")?;
            let at = Fields {
                kind,
                path: "data.message.",
            };
            Record::Event(LogEvent::AssistantText {
                text: text_of(at.array(message, "content")?),
                interrupted: data.get("interrupted") == Some(&Value::Bool(true)),
            })
        }
        _ => Record::Event(LogEvent::Reopened),
    };
    Ok(Some((seq, time, record)))
}

/// DSH 0.1's Code Mode events (`dsh-tools`' `run_code` bridge).
const DISPATCH_START: &str = "tool/code-dispatch-start";
const DISPATCH: &str = "tool/code-dispatch";
/// DSH 0.2's names of the same events (`packages/core/tools/src/ptc.ts`).
const PTC_DISPATCH_START: &str = "tool/ptc-dispatch-start";
const PTC_DISPATCH: &str = "tool/ptc-dispatch";

fn tool_result(kind: &str, data: &Map<String, Value>) -> Result<ToolResult, String> {
    let at = Fields {
        kind,
        path: "data.",
    };
    let message = at.object(data, "message")?;
    // Format 4: the message is the tool-role result itself.
    if message.contains_key("toolCallId") {
        let at = Fields {
            kind,
            path: "data.message.",
        };
        let is_error = flag(&at, message, "isError")?;
        let output = text_of(at.array(message, "content")?);
        return Ok(settled(
            at.string(message, "toolCallId")?,
            is_error,
            output,
            error_code(data),
        ));
    }
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
    let is_error = flag(&at, block, "isError")?;
    let output = text_of(at.array(block, "content")?);
    Ok(settled(
        at.string(block, "toolCallId")?,
        is_error,
        output,
        error_code(data),
    ))
}

/// A settled call of a Code Mode program: `{subCallId, isError, content, error?: {code}}`.
fn dispatch_result(kind: &str, data: &Map<String, Value>) -> Result<ToolResult, String> {
    let at = Fields {
        kind,
        path: "data.",
    };
    let is_error = flag(&at, data, "isError")?;
    let output = text_of(at.array(data, "content")?);
    Ok(settled(
        at.string(data, "subCallId")?,
        is_error,
        output,
        error_code(data),
    ))
}

/// `data.error.code`, when recorded.
fn error_code(data: &Map<String, Value>) -> Option<&str> {
    match data.get("error") {
        Some(Value::Object(error)) => error.get("code").and_then(Value::as_str),
        _ => None,
    }
}

/// An optional boolean (absent is `false`).
fn flag(at: &Fields<'_>, map: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(value)) => Ok(*value),
        other => Err(at.fail(key, "true or false", other)),
    }
}

/// A result from its facts: an error result's text without DSH's `Error: ` prefix, a success's
/// shell status read from its last lines.
fn settled(call_id: &str, is_error: bool, output: String, error_code: Option<&str>) -> ToolResult {
    let (status, text) = if is_error {
        let text = match output.strip_prefix("Error: ") {
            Some(rest) => rest.to_owned(),
            None => output,
        };
        (ShellStatus::default(), text)
    } else {
        (ShellStatus::parse(&output), output)
    };
    ToolResult {
        call_id: call_id.to_owned(),
        call: None,
        is_error,
        text,
        error_code: error_code.map(str::to_owned),
        status,
        repaired: error_code.is_some_and(|code| REPAIR_CODES.contains(&code)),
    }
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
fn millis(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 2f64.powi(63))
            .map(|f| f as u64)
    })
}

/// The text blocks of a content list, joined by newlines (other blocks are skipped).
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

/// A value for an error message, cut to 40 characters.
fn brief(value: &Value) -> String {
    text::clip(&value.to_string(), 40)
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), brief)
}

/// The producer of an injected message's `source`: rc.8 and earlier write `{kind: "plugin",
/// plugin: <name>}`; DSH 0.2's session format V4 refuses that kind, and its producers write a
/// kind of their own (`{kind: <name>}`, as this family does now), while rows migrated from
/// earlier logs read `{kind: "plugin:<name>"}` (`packages/core/session` of the 0.2 line).
pub fn producer(kind: &str, plugin: Option<String>) -> Option<String> {
    match kind {
        "plugin" => plugin,
        _ => Some(kind.strip_prefix("plugin:").unwrap_or(kind).to_owned()),
    }
}

#[cfg(test)]
mod tests;
