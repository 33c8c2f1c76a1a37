//! Corpus replay: a guard over many recorded runs at once, summed up per source and label.
//!
//! A **run** is one file: the replay event format of a trajectory corpus (one tool call per line,
//! `{"at_ms", "tool", "args", "exit_code", "error"}`, see [`Run::feed_line`]) or a DSH session
//! log. Its **id** is the file's path under the corpus folder without the extension (a session
//! log's `…/session` part dropped), its **source** the id's first folder. A **labels** file maps
//! ids to labels ([`Labels::parse`]). Each guard replays a whole run ([`Guard::replay`]) and says
//! where it fired; [`Corpus`] sums the runs up and [`Corpus::report`] prints one row per source
//! and label: runs, the share with a fire, fires per run, where the first fire falls, denials and
//! injected characters per run, and what followed each fire within the next
//! [`FOLLOW_UP_CALLS`] calls.
//!
//! **The split.** [`Half::of`] puts every run in one of two fixed halves by a hash of its split key
//! (FNV-1a 64, the lowest bit: 0 is [`Half::Tune`], 1 is [`Half::Report`]), so a guard's defaults
//! can be tuned on one half and its figures reported on the other. The split key is the run id,
//! or `<source>/<instance>` when the labels file gives the run a string `instance`: the runs of
//! one task (a corpus that ran each task several times) then never fall in different halves.

use outcome::Outcome;
use serde_json::{Map, Value, json};
use session_log::{LogEvent, Reader, session_header};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Calls after a fire that [`FollowUp`] looks at.
pub const FOLLOW_UP_CALLS: usize = 5;

/// The label of a run the labels file does not name (or of every run, without one).
pub const UNLABELLED: &str = "unlabelled";

/// One recorded tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// Milliseconds since the run's first event.
    pub at_ms: u64,
    /// The tool name exactly as called.
    pub name: String,
    /// The arguments as JSON text.
    pub args_json: String,
    /// How it ended.
    pub outcome: Outcome,
    /// A failed call's text (its error, or a shell call's output); empty for a success.
    pub text: String,
}

/// One event of a run, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A model step starts (the event format: one before every call).
    Step,
    /// A finished tool call.
    Call(Call),
    /// A human prompt.
    UserPrompt(String),
    /// A visible assistant reply.
    AssistantText(String),
}

/// One run being read, line by line.
#[derive(Debug, Default)]
pub struct Run {
    events: Vec<Event>,
    line: usize,
    session: Option<Reader>,
    decided: bool,
    first_time: Option<u64>,
}

const EVENT_FIELDS: [&str; 10] = [
    "at_ms",
    "agent",
    "tool",
    "args",
    "exit_code",
    "error",
    "ok",
    "signal",
    "timed_out",
    "user_prompt",
];

impl Run {
    /// An empty run.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events read so far.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The tool calls read so far.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.events.iter().filter_map(|event| match event {
            Event::Call(call) => Some(call),
            _ => None,
        })
    }

    /// Feeds the next line. The first non-blank line decides the format: a DSH session header
    /// makes the run a session log; otherwise each line is one event object: a tool call
    /// (`tool`, optional `args`, `exit_code`, `error`, `ok`, `signal`, `timed_out`; an `error`
    /// without an exit code is a failed call, as a corpus's timeouts are) or `"user_prompt":
    /// true`. Errors name the line and the field.
    pub fn feed_line(&mut self, text: &str) -> Result<(), String> {
        self.line += 1;
        if text.trim().is_empty() {
            return Ok(());
        }
        let line = self.line;
        if !self.decided {
            self.decided = true;
            if let Some(header) = session_header(text) {
                self.session = Some(Reader::open(line, &header).map_err(|e| e.to_string())?);
                return Ok(());
            }
        }
        if let Some(reader) = &mut self.session {
            let Some(entry) = reader.read(line, text).map_err(|e| e.to_string())? else {
                return Ok(());
            };
            let first = *self.first_time.get_or_insert(entry.time);
            let at_ms = entry.time.saturating_sub(first);
            match entry.event {
                LogEvent::ToolResult(result) if !result.repaired => {
                    if let Some(call) = &result.call {
                        let outcome = result.outcome();
                        let text = if outcome.failed() {
                            result.text.clone()
                        } else {
                            String::new()
                        };
                        self.events.push(Event::Call(Call {
                            at_ms,
                            name: call.name.clone(),
                            args_json: call.arguments_json.clone(),
                            outcome,
                            text,
                        }));
                    }
                }
                LogEvent::UserPrompt { text } => self.events.push(Event::UserPrompt(text)),
                LogEvent::AssistantText { text, interrupted } => {
                    self.events.push(Event::Step);
                    if !interrupted {
                        self.events.push(Event::AssistantText(text));
                    }
                }
                _ => {}
            }
            return Ok(());
        }
        self.event(text)
            .map_err(|message| format!("line {line}: {message}"))
    }

    fn event(&mut self, text: &str) -> Result<(), String> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        let Value::Object(fields) = &value else {
            return Err(format!("must be a JSON object (got {value})"));
        };
        if let Some(unknown) = fields.keys().find(|k| !EVENT_FIELDS.contains(&k.as_str())) {
            return Err(format!("unknown field {}", Value::from(unknown.as_str())));
        }
        let at_ms = match fields.get("at_ms") {
            None => 0,
            Some(value) => value
                .as_u64()
                .ok_or_else(|| format!("at_ms must be a non-negative integer (got {value})"))?,
        };
        if fields.get("user_prompt").is_some() {
            if fields.get("user_prompt") != Some(&Value::Bool(true)) {
                return Err(format!(
                    "user_prompt must be true (got {})",
                    fields["user_prompt"]
                ));
            }
            self.events.push(Event::UserPrompt(String::new()));
            return Ok(());
        }
        let name = match fields.get("tool") {
            Some(Value::String(name)) if !name.is_empty() => name.clone(),
            None => return Err("needs either \"tool\" or \"user_prompt\": true".to_owned()),
            Some(other) => return Err(format!("tool must be a non-empty string (got {other})")),
        };
        let args_json = match fields.get("args") {
            None => "{}".to_owned(),
            Some(args @ Value::Object(_)) => args.to_string(),
            Some(other) => return Err(format!("args must be an object (got {other})")),
        };
        let outcome = outcome_of(fields)?;
        let text = match fields.get("error") {
            None => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => return Err(format!("error must be a string (got {other})")),
        };
        self.events.push(Event::Step);
        self.events.push(Event::Call(Call {
            at_ms,
            name,
            args_json,
            outcome,
            text,
        }));
        Ok(())
    }
}

fn outcome_of(fields: &Map<String, Value>) -> Result<Outcome, String> {
    let exit_code = match fields.get("exit_code") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_i64()
                .ok_or_else(|| format!("exit_code must be an integer (got {value})"))?,
        ),
    };
    let flag = |key: &str| match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(format!("{key} must be true or false (got {other})")),
    };
    let killed = match fields.get("signal") {
        None | Some(Value::Null) => false,
        Some(Value::String(signal)) if !signal.is_empty() => true,
        Some(other) => {
            return Err(format!(
                "signal must be a non-empty string such as \"SIGKILL\" (got {other})"
            ));
        }
    };
    Ok(if flag("ok")? == Some(false) {
        Outcome::error()
    } else if flag("timed_out")? == Some(true) {
        Outcome::timed_out()
    } else if killed {
        Outcome::killed()
    } else if let Some(code) = exit_code {
        Outcome::exited(code)
    } else if fields.contains_key("error") {
        Outcome::error()
    } else {
        Outcome::success()
    })
}

/// One of the two fixed halves of a corpus (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// Where defaults are tuned.
    Tune,
    /// Where figures are reported.
    Report,
}

impl Half {
    /// The half a run id falls in.
    pub fn of(id: &str) -> Half {
        if text::Fnv1a::of(id.as_bytes()) & 1 == 0 {
            Half::Tune
        } else {
            Half::Report
        }
    }

    /// `tune` or `report`.
    pub fn key(self) -> &'static str {
        match self {
            Half::Tune => "tune",
            Half::Report => "report",
        }
    }

    /// The half a `--half` value names, or the message naming the value.
    pub fn from_key(key: &str) -> Result<Half, String> {
        match key {
            "tune" => Ok(Half::Tune),
            "report" => Ok(Half::Report),
            other => Err(format!(
                "--half must be \"tune\" or \"report\" (got {})",
                Value::from(other)
            )),
        }
    }
}

/// Run labels by id.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    by_id: HashMap<String, String>,
    /// Split keys of the runs whose entry names their task (`instance`).
    split_by_id: HashMap<String, String>,
}

impl Labels {
    /// Reads a labels file: a JSON object mapping run ids to a label string, to an object with a
    /// string `label`, or to an object with a boolean `resolved` (`resolved` / `unresolved`, as
    /// a SWE-bench corpus records it).
    pub fn parse(text: &str) -> Result<Labels, String> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| format!("the labels file is not valid JSON ({e})"))?;
        let Value::Object(entries) = value else {
            return Err(format!(
                "the labels file must be a JSON object of run id -> label (got {})",
                kind(&value)
            ));
        };
        let mut by_id = HashMap::new();
        let mut split_by_id = HashMap::new();
        for (id, entry) in entries {
            if let Some(Value::String(instance)) = entry.get("instance") {
                let source = id.split_once('/').map_or("", |(source, _)| source);
                split_by_id.insert(id.clone(), format!("{source}/{instance}"));
            }
            let label = match &entry {
                Value::String(label) => label.clone(),
                Value::Object(fields) => match (fields.get("label"), fields.get("resolved")) {
                    (Some(Value::String(label)), _) => label.clone(),
                    (None, Some(Value::Bool(true))) => "resolved".to_owned(),
                    (None, Some(Value::Bool(false))) => "unresolved".to_owned(),
                    _ => {
                        return Err(format!(
                            "labels: {} needs a string \"label\" or a boolean \"resolved\"",
                            Value::from(id.as_str())
                        ));
                    }
                },
                other => {
                    return Err(format!(
                        "labels: {} must be a label string or an object (got {})",
                        Value::from(id.as_str()),
                        kind(other)
                    ));
                }
            };
            by_id.insert(id, label);
        }
        Ok(Labels { by_id, split_by_id })
    }

    /// The key that decides a run's half (see the module docs).
    pub fn split_key<'a>(&'a self, id: &'a str) -> &'a str {
        self.split_by_id.get(id).map_or(id, String::as_str)
    }

    /// The label of a run.
    pub fn of(&self, id: &str) -> &str {
        self.by_id.get(id).map_or(UNLABELLED, String::as_str)
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What a guard did over one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    /// The index (into the run's calls) of each call whose result fired the guard.
    pub fires: Vec<usize>,
    /// Calls the guard would have denied.
    pub denials: u32,
    /// Characters of model-facing text the guard would have injected (notices, reminders,
    /// denial reasons).
    pub injected_chars: u64,
}

/// A guard that can replay whole runs.
pub trait Guard {
    /// Replays one run from a fresh state.
    fn replay(&mut self, run: &Run) -> Replayed;

    /// Whether a call is research (for what followed a fire).
    fn is_research(&self, call: &Call) -> bool;

    /// Whether the guard can deny calls (its report has a denials column).
    const DENIES: bool;
}

/// What followed one fire within [`FOLLOW_UP_CALLS`] calls, the first that applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FollowUp {
    /// A research call.
    Research,
    /// A failure with the same fingerprint as the last failure before the fire.
    SameFailure,
    /// The run ended.
    EndOfRun,
    /// None of these: the agent went on some other way.
    ChangedApproach,
}

impl FollowUp {
    const ALL: [FollowUp; 4] = [
        FollowUp::Research,
        FollowUp::SameFailure,
        FollowUp::ChangedApproach,
        FollowUp::EndOfRun,
    ];

    fn key(self) -> &'static str {
        match self {
            FollowUp::Research => "research",
            FollowUp::SameFailure => "same_failure",
            FollowUp::ChangedApproach => "changed_approach",
            FollowUp::EndOfRun => "end_of_run",
        }
    }
}

fn failure_print(call: &Call) -> Option<u64> {
    if !call.outcome.failed() {
        return None;
    }
    let (head, tail) = fingerprint::Failure::windows(&call.text);
    fingerprint::fingerprint(&fingerprint::Failure {
        tool: &call.name,
        exit_code: call.outcome.exit_code,
        head,
        tail,
    })
    .map(|fp| fp.value())
}

/// What followed a fire at `calls[at]`.
pub fn follow_up(calls: &[&Call], at: usize, is_research: impl Fn(&Call) -> bool) -> FollowUp {
    let last_failure = calls[..=at.min(calls.len().saturating_sub(1))]
        .iter()
        .rev()
        .find_map(|call| failure_print(call));
    let next = &calls[(at + 1).min(calls.len())..];
    let window = &next[..next.len().min(FOLLOW_UP_CALLS)];
    if window.iter().any(|call| is_research(call)) {
        FollowUp::Research
    } else if last_failure.is_some()
        && window
            .iter()
            .any(|call| failure_print(call) == last_failure)
    {
        FollowUp::SameFailure
    } else if next.len() < FOLLOW_UP_CALLS {
        FollowUp::EndOfRun
    } else {
        FollowUp::ChangedApproach
    }
}

#[derive(Clone, Debug, Default)]
struct Group {
    runs: u64,
    runs_fired: u64,
    fires: u64,
    denials: u64,
    chars: u64,
    /// Per run with a fire: (first fire's call number, its share of the run's calls).
    first_fires: Vec<(usize, f64)>,
    follow_ups: [u64; 4],
}

/// The sum of a guard's replays over a corpus, by source and label.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    groups: BTreeMap<(String, String), Group>,
    half: Option<Half>,
    runs: u64,
}

impl Corpus {
    /// An empty sum over the runs of `half` (all runs when `None`).
    pub fn new(half: Option<Half>) -> Self {
        Self {
            half,
            ..Self::default()
        }
    }

    /// Whether a run with this split key ([`Labels::split_key`]) is in the replayed half (the CLI
    /// skips reading the others).
    pub fn wants(&self, split_key: &str) -> bool {
        self.half.is_none_or(|half| Half::of(split_key) == half)
    }

    /// Replays one run through `guard` and adds it under its source and label (the caller checked
    /// [`Corpus::wants`]).
    pub fn add<G: Guard>(&mut self, guard: &mut G, id: &str, label: &str, run: &Run) {
        let replayed = guard.replay(run);
        let source = id.split_once('/').map_or("", |(source, _)| source);
        let group = self
            .groups
            .entry((source.to_owned(), label.to_owned()))
            .or_default();
        self.runs += 1;
        group.runs += 1;
        group.fires += replayed.fires.len() as u64;
        group.denials += u64::from(replayed.denials);
        group.chars += replayed.injected_chars;
        let calls: Vec<&Call> = run.calls().collect();
        if let Some(&first) = replayed.fires.first() {
            group.runs_fired += 1;
            group
                .first_fires
                .push((first + 1, (first + 1) as f64 / calls.len().max(1) as f64));
        }
        for &at in &replayed.fires {
            let what = follow_up(&calls, at, |call| guard.is_research(call));
            let slot = FollowUp::ALL.iter().position(|f| *f == what).unwrap_or(0);
            group.follow_ups[slot] += 1;
        }
    }

    /// Runs added.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// The report: a Markdown table (one row per source and label), or with `json` one JSON
    /// object with the same figures. `denials` adds the denials column.
    pub fn report(&self, json: bool, denials: bool) -> String {
        let rows: Vec<Value> = self
            .groups
            .iter()
            .map(|((source, label), g)| {
                let per_run = |n: u64| round(n as f64 / g.runs.max(1) as f64, 2);
                let calls: Vec<f64> = g.first_fires.iter().map(|(n, _)| *n as f64).collect();
                let shares: Vec<f64> = g.first_fires.iter().map(|(_, s)| *s).collect();
                let mut after = Map::new();
                for (what, n) in FollowUp::ALL.iter().zip(g.follow_ups) {
                    after.insert(what.key().to_owned(), json!(n));
                }
                let mut row = json!({
                    "source": source,
                    "label": label,
                    "runs": g.runs,
                    "runs_fired": g.runs_fired,
                    "fired_share": round(g.runs_fired as f64 / g.runs.max(1) as f64, 3),
                    "fires_per_run": per_run(g.fires),
                    "first_fire_median_call": median(&calls),
                    "first_fire_median_share": median(&shares).map(|m| round(m, 3)),
                    "chars_per_run": per_run(g.chars).round(),
                    "after_fire": after,
                });
                if denials {
                    row["denials_per_run"] = json!(per_run(g.denials));
                }
                row
            })
            .collect();
        if json {
            return json!({
                "half": self.half.map(Half::key),
                "runs": self.runs,
                "groups": rows,
            })
            .to_string();
        }
        let mut out = String::new();
        let denials_head = if denials { " denials/run |" } else { "" };
        let _ = writeln!(
            out,
            "| source | label | runs | fired in | fires/run | first fire: call (of run) |{denials_head} chars/run | after a fire: research / same failure / changed / ended |"
        );
        let _ = writeln!(
            out,
            "|---|---|--:|--:|--:|--:|{}--:|---|",
            if denials { "--:|" } else { "" }
        );
        for row in &rows {
            let fired = row["fired_share"].as_f64().unwrap_or(0.0);
            let first = match (
                row["first_fire_median_call"].as_f64(),
                row["first_fire_median_share"].as_f64(),
            ) {
                (Some(call), Some(share)) => format!("{call} ({:.0} %)", share * 100.0),
                _ => "-".to_owned(),
            };
            let after = &row["after_fire"];
            let total: u64 = FollowUp::ALL
                .iter()
                .map(|f| after[f.key()].as_u64().unwrap_or(0))
                .sum();
            let shares: Vec<String> = FollowUp::ALL
                .iter()
                .map(|f| {
                    let n = after[f.key()].as_u64().unwrap_or(0);
                    if total == 0 {
                        "-".to_owned()
                    } else {
                        format!("{:.0} %", 100.0 * n as f64 / total as f64)
                    }
                })
                .collect();
            let denials_cell = if denials {
                format!(" {:.1} |", row["denials_per_run"].as_f64().unwrap_or(0.0))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.0} % ({}) | {:.2} | {first} |{denials_cell} {:.0} | {} |",
                if row["source"] == "" {
                    "-"
                } else {
                    row["source"].as_str().unwrap_or("-")
                },
                row["label"].as_str().unwrap_or_default(),
                row["runs"],
                fired * 100.0,
                row["runs_fired"],
                row["fires_per_run"].as_f64().unwrap_or(0.0),
                row["chars_per_run"].as_f64().unwrap_or(0.0),
                shares.join(" / "),
            );
        }
        let half = match self.half {
            Some(half) => format!(", {} half", half.key()),
            None => String::new(),
        };
        let _ = write!(out, "\n{} runs{half}", self.runs);
        out
    }
}

/// A corpus replay as a CLI drives it: labels, then each run's lines between
/// [`start`](Self::start) and [`end`](Self::end), then the report.
pub struct CorpusReplay<G: Guard> {
    guard: G,
    corpus: Corpus,
    labels: Labels,
    current: Option<(String, Run)>,
}

impl<G: Guard> CorpusReplay<G> {
    /// A replay of `half` (every run when `None`) through `guard`.
    pub fn new(guard: G, half: Option<Half>) -> Self {
        Self {
            guard,
            corpus: Corpus::new(half),
            labels: Labels::default(),
            current: None,
        }
    }

    /// Reads the labels file ([`Labels::parse`]).
    pub fn set_labels(&mut self, text: &str) -> Result<(), String> {
        self.labels = Labels::parse(text)?;
        Ok(())
    }

    /// Whether a run id is in the replayed half.
    pub fn wants(&self, id: &str) -> bool {
        self.corpus.wants(self.labels.split_key(id))
    }

    /// A run starts.
    pub fn start(&mut self, id: &str) {
        self.current = Some((id.to_owned(), Run::new()));
    }

    /// The next line of the current run ([`Run::feed_line`]); a line outside a run is refused.
    pub fn feed_line(&mut self, text: &str) -> Result<(), String> {
        match &mut self.current {
            Some((_, run)) => run.feed_line(text),
            None => Err("a line outside a run (call start first)".to_owned()),
        }
    }

    /// The current run ends: it is replayed and added.
    pub fn end(&mut self) {
        if let Some((id, run)) = self.current.take() {
            if !self.wants(&id) {
                return;
            }
            let label = self.labels.of(&id).to_owned();
            self.corpus.add(&mut self.guard, &id, &label, &run);
        }
    }

    /// The report ([`Corpus::report`]).
    pub fn report(&self, json: bool) -> String {
        self.corpus.report(json, G::DENIES)
    }
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    })
}

#[cfg(test)]
pub(crate) mod tests;
