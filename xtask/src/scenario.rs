//! Real dsh turns as data: each `xtask/scenarios/*.json` file is one headless turn (the task, the
//! files of its scratch cwd, an optional patch overlay, the scripted model's replies) and what
//! must hold afterwards. One runner reads them all; adding a scenario adds no Rust.
//!
//! ```json
//! {
//!   "about": "one line for the report",
//!   "task": "Make the build pass.",
//!   "files": { "build.sh": "exit 3\n" },
//!   "patch": [ { "id": "pain-point-check", "config": { "failureThreshold": 2 } } ],
//!   "script": [
//!     { "tool": "bash", "args": { "command": "sh build.sh" } },
//!     { "say": "visible text before the call", "tool": "read", "args": { "file_path": "x" } },
//!     { "say": "final answer (ends the turn)" }
//!   ],
//!   "expect": {
//!     "exit": 0,
//!     "requests": 6,
//!     "first_seen": { "text": 3 },
//!     "never_seen": [ "text" ],
//!     "stderr": [ "text" ],
//!     "files": { "out.txt": "text it contains" }
//!   }
//! }
//! ```
//!
//! An optional `"session_fixture": "packages/<row>/vectors/sessions/NAME.jsonl.zstd"` keeps the
//! turn's DSH session log, scrubbed of machine paths, as a replay vector of that package
//! (written by `cargo xtask release-smoke --update-fixture`, which must then be reviewed with its
//! expected replay output; without the flag the committed file must exist).
//!
//! `exit` is a code or `"fail"` (any non-zero code). `requests` counts the conversation requests
//! (those offering tools). `$FIXTURES` in the patch stands for `xtask/fixtures/`, so a test-only
//! plugin there (e.g. `plugins/steer.mjs`, a person steering a running turn) can be mounted by
//! path. `first_seen` maps a text to the 1-based conversation request in which
//! it first appears (in any message: a notice, a tool result, the model's own reply); it appears
//! in none before. The patch overlay is JSON, which is YAML, so it goes to `--patch` as it is.

use crate::mock_model::Reply;
use crate::smoke::{Harness, Turn, TurnSpec};
use crate::util::{rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Where the scenario files live.
pub fn dir() -> PathBuf {
    root().join("xtask").join("scenarios")
}

/// Every scenario file, sorted by name.
pub fn files() -> Result<Vec<PathBuf>> {
    crate::util::files_with_suffix(&dir(), ".json")
}

/// One scenario, read.
pub struct Scenario {
    /// The file stem.
    pub name: String,
    /// What it shows.
    pub about: String,
    doc: Value,
}

impl Scenario {
    /// Reads and checks the shape of one scenario file.
    pub fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", rel(path)))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("{} is not JSON", rel(path)))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .context("scenario file name")?
            .to_owned();
        for key in doc
            .as_object()
            .context("a scenario is a JSON object")?
            .keys()
        {
            if ![
                "about",
                "task",
                "files",
                "patch",
                "script",
                "expect",
                "session_fixture",
            ]
            .contains(&key.as_str())
            {
                bail!("{}: unknown key `{key}`", rel(path));
            }
        }
        let about = doc["about"].as_str().unwrap_or_default().to_owned();
        Ok(Scenario { name, about, doc })
    }

    fn script(&self) -> Result<Vec<Reply>> {
        let items = self.doc["script"].as_array().map_or(&[][..], Vec::as_slice);
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let say = item["say"].as_str().unwrap_or_default().to_owned();
                match item["tool"].as_str() {
                    Some(name) => Ok(Reply::Tool {
                        name: name.to_owned(),
                        args: item["args"].clone(),
                        text: say,
                    }),
                    None if !say.is_empty() => Ok(Reply::Text(say)),
                    None => bail!("{}: script[{i}] has neither `tool` nor `say`", self.name),
                }
            })
            .collect()
    }

    /// Runs the turn and checks every expectation; returns the turn and a one-line summary.
    pub fn run(&self, h: &Harness) -> Result<(Turn, String)> {
        let files: Vec<(String, String)> = match &self.doc["files"] {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect(),
            _ => Vec::new(),
        };
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // `$FIXTURES` in the overlay is `xtask/fixtures/` (test-only plugins are mounted by path).
        let fixtures = root().join("xtask").join("fixtures");
        let patch = match &self.doc["patch"] {
            Value::Null => None,
            overlay => Some(
                serde_json::to_string_pretty(overlay)?
                    .replace("$FIXTURES", &fixtures.display().to_string()),
            ),
        };
        let turn = h.turn(TurnSpec {
            name: &self.name,
            task: self.doc["task"]
                .as_str()
                .context("a scenario needs a task")?,
            files: &files,
            script: self.script()?,
            patch: patch.as_deref(),
        })?;
        let summary = self
            .check(&turn)
            .with_context(|| format!("scenario {}:\n{}", self.name, turn.describe()))?;
        Ok((turn, summary))
    }

    fn check(&self, turn: &Turn) -> Result<String> {
        let expect = &self.doc["expect"];
        let conversation = turn.conversation();
        let texts: Vec<String> = conversation.iter().map(|r| request_text(&r.body)).collect();
        let mut checked = Vec::new();
        match &expect["exit"] {
            Value::Null => {}
            Value::String(s) if s == "fail" => {
                if turn.code == Some(0) {
                    bail!("dsh exited 0; the scenario expects a failure");
                }
                checked.push("exit != 0".to_owned());
            }
            code => {
                let want = code.as_i64().context("expect.exit is a code or \"fail\"")?;
                if turn.code.map(i64::from) != Some(want) {
                    bail!("dsh exited {:?}, expected {want}", turn.code);
                }
            }
        }
        if let Some(want) = expect["requests"].as_u64() {
            if conversation.len() as u64 != want {
                bail!(
                    "{} conversation requests, expected {want}",
                    conversation.len()
                );
            }
        }
        if let Some(map) = expect["first_seen"].as_object() {
            for (text, at) in map {
                let at = at
                    .as_u64()
                    .context("first_seen values are request numbers")?
                    as usize;
                let first = texts
                    .iter()
                    .position(|t| t.contains(text.as_str()))
                    .map(|i| i + 1);
                if first != Some(at) {
                    bail!(
                        "{text:?} first appears in conversation request {}, expected {at}",
                        first.map_or("none".to_owned(), |n| n.to_string())
                    );
                }
                checked.push(format!("{:?} from request {at}", clip(text, 40)));
            }
        }
        for text in expect["never_seen"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            let text = text.as_str().context("never_seen holds texts")?;
            if let Some(i) = texts.iter().position(|t| t.contains(text)) {
                bail!("{text:?} appears in conversation request {}", i + 1);
            }
        }
        for text in expect["stderr"].as_array().map_or(&[][..], Vec::as_slice) {
            let text = text.as_str().context("stderr holds texts")?;
            if !turn.stderr.contains(text) {
                bail!("stderr lacks {text:?}");
            }
            checked.push(format!("stderr has {:?}", clip(text, 60)));
        }
        if let Some(map) = expect["files"].as_object() {
            for (file, needle) in map {
                let path = turn.cwd.join(file);
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("{file} was not written in the scratch cwd"))?;
                if !text.contains(needle.as_str().unwrap_or_default()) {
                    bail!("{file} holds {text:?}, expected it to contain {needle}");
                }
                checked.push(format!("{file} written"));
            }
        }
        Ok(format!(
            "{} conversation requests; {}",
            conversation.len(),
            checked.join("; ")
        ))
    }
}

/// Every text a request carries, in message order: message contents, tool results and the
/// model's own earlier replies.
pub fn request_text(body: &Value) -> String {
    let mut out = String::new();
    for message in body["messages"].as_array().map_or(&[][..], Vec::as_slice) {
        match &message["content"] {
            Value::String(s) => out.push_str(s),
            Value::Array(parts) => {
                for part in parts {
                    if let Some(text) = part["text"].as_str() {
                        out.push_str(text);
                        out.push('\n');
                    }
                }
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// What each conversation request added to the conversation, one line per message: the model's
/// reply (its text and tool call), the tool's result, and injected notices.
pub fn transcript(turn: &Turn) -> Vec<String> {
    let mut lines = Vec::new();
    let mut seen = 0;
    for (i, request) in turn.conversation().iter().enumerate() {
        let messages = request.body["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        for message in messages.iter().skip(seen) {
            let text = match &message["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default();
            let line = match message["role"].as_str().unwrap_or_default() {
                "assistant" => {
                    let calls: Vec<String> = message["tool_calls"]
                        .as_array()
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(|c| {
                            format!(
                                "{} {}",
                                c["function"]["name"].as_str().unwrap_or_default(),
                                c["function"]["arguments"].as_str().unwrap_or_default()
                            )
                        })
                        .collect();
                    let said = if text.is_empty() {
                        String::new()
                    } else {
                        format!("says {:?}; ", clip(&text.replace('\n', " | "), 90))
                    };
                    format!("model     {said}calls {}", clip(&calls.join(", "), 80))
                }
                "tool" => format!("result    {}", clip(first, 110)),
                "user" if i == 0 => format!("task      {}", clip(first, 110)),
                "user" => format!("notice    {}", clip(first, 110)),
                other => format!("{other:<9} {}", clip(first, 110)),
            };
            lines.push(format!("  req {:>2}  {line}", i + 1));
        }
        seen = messages.len();
    }
    lines
}

fn clip(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `cargo xtask scenario [NAME...]`: the release-smoke setup, then only the named scenarios
/// (every one without names), for working on one scenario without the whole smoke.
pub fn run(names: &[String]) -> Result<()> {
    let mut timings = crate::smoke::Timings::default();
    let mut chosen = Vec::new();
    for path in files()? {
        let scenario = Scenario::load(&path)?;
        if names.is_empty() || names.contains(&scenario.name) {
            chosen.push(scenario);
        }
    }
    for name in names {
        if !chosen.iter().any(|s| &s.name == name) {
            bail!("no scenario `{name}` in {}", rel(&dir()));
        }
    }
    let h = crate::smoke::setup("scenario", &mut timings)?;
    for scenario in &chosen {
        println!("\nscenario {}: {}", scenario.name, scenario.about);
        let (_, summary) =
            timings.step(&format!("scenario {}", scenario.name), || scenario.run(&h))?;
        println!("{}: {summary}", scenario.name);
    }
    println!("\nseconds per step");
    print!("{}", timings.table());
    Ok(())
}

/// Runs every scenario file; returns one report line each. `update` rewrites session fixtures.
pub fn run_all(
    h: &Harness,
    timings: &mut crate::smoke::Timings,
    update: bool,
) -> Result<Vec<String>> {
    let mut report = Vec::new();
    for path in files()? {
        let scenario = Scenario::load(&path)?;
        println!("\nscenario {}: {}", scenario.name, scenario.about);
        let (turn, summary) =
            timings.step(&format!("scenario {}", scenario.name), || scenario.run(h))?;
        report.push(format!("{}: {summary}", scenario.name));
        if let Some(fixture) = scenario.doc["session_fixture"].as_str() {
            report.push(format!(
                "  fixture: {}",
                crate::smoke::keep_session_fixture(h, &turn, fixture, update)?
            ));
        }
    }
    Ok(report)
}
