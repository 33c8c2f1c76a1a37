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
//!     { "when": "text of its request", "tool": "read", "args": { "file_path": "y" } },
//!     { "say": "final answer (ends the turn)" }
//!   ],
//!   "expect": {
//!     "exit": 0,
//!     "requests": 6,
//!     "first_seen": { "text": 3 },
//!     "never_seen": [ "text" ],
//!     "seen_times": { "text": 1 },
//!     "offered": [ "tool" ],
//!     "stderr": [ "text" ],
//!     "files": { "out.txt": "text it contains" },
//!     "tools": [ "read", { "name": "bash", "exit": 3, "result": "text" } ],
//!     "replay": [ { "cli": "research-nudge", "where": { "nudge": true },
//!                   "lines": [ { "call": 5, "text_first_seen": 6 } ] } ]
//!   }
//! }
//! ```
//!
//! `"serve": { "/page.html": { "type": "text/html", "body": "…", "status": 200 } }` starts a static
//! site on 127.0.0.1 for the scenario's turns (a tool under test can fetch it); `$SERVE` anywhere
//! in the scenario (task, script, patch, expectations) stands for its `http://127.0.0.1:<port>`,
//! and `expect.served` maps a path to how many requests it must have had. `"then": [ { "task",
//! "files"?, "patch"?, "script", "expect" } ]` runs further turns after the first, each a new dsh
//! process and so a new session, in the same DSH home (what one session leaves for the next);
//! with `"same_cwd": true` it also runs in the first turn's directory, as that turn left it.
//! `"capture": { "NAME": "text before it" }` takes, from the first turn's last conversation
//! request, the id (hex digits and `-`) right after the text; `$NAME` in the `then` turns stands
//! for it (a run id the tool made up, say).
//!
//! An optional `"session_fixture": "packages/<row>/vectors/sessions/NAME.jsonl.zstd"` keeps the
//! turn's DSH session log, scrubbed of machine paths, as a replay vector of that package
//! (written by `cargo xtask release-smoke --update-fixture`, or `cargo xtask scenario NAME…
//! --update-fixture` for the named ones, which must then be reviewed with its
//! expected replay output; without the flag the committed file must exist, and it must be a
//! finished log recording the same tool calls and plugin messages as the turn).
//!
//! `$BIN(<cli>)` anywhere stands for the path of a packed package's CLI script (`bin/<cli>.js`),
//! so a turn's shell can start a headless runner beside dsh. A turn with `"pid_namespace": true`
//! runs dsh in a PID namespace of its own (`unshare -p -f --mount-proc`), seeing none of the
//! processes outside it.
//!
//! `$FIXTURES` in the patch stands for `xtask/fixtures/`, so a test-only plugin there (e.g.
//! `plugins/steer.mjs`, a person steering a running turn) can be mounted by path. The patch
//! overlay is JSON, which is YAML, so it goes to `--patch` as it is.
//!
//! A script step with `when` is served only to a request whose JSON body contains that text (the
//! first such step in order): agents that talk to the model at the same time, such as a
//! generation's child agents, each get their own steps whatever order their requests arrive in.
//!
//! Every expectation is optional; an unknown key is an error. A turn that exits 0 must have used
//! its whole script (a scripted reply never asked for fails it).
//!
//! - `exit`: a code or `"fail"` (any non-zero code).
//! - `requests`: how many conversation requests (those offering tools) the mock model got;
//!   `all_requests`: how many requests of any kind (the session title and web searches too), so
//!   `0` means dsh failed before it called the model at all; `searches`: how many web searches
//!   (`…/messages`) it served.
//! - `first_seen` maps a text to the 1-based conversation request in which it first appears (in
//!   any message: a notice, a tool result, the model's own reply); it appears in none before.
//!   `never_seen` lists texts no conversation request holds. `seen_times` maps a text to the
//!   most times it appears in one conversation request (the conversation grows, so this is how
//!   often the turn showed it: `1` rules out a second notice).
//! - `offered` / `not_offered` list tool names that every / no conversation request offers.
//! - `stderr` lists texts dsh's stderr contains; `stderr_lines` lists whole lines it holds
//!   (compared trimmed).
//! - `files` maps a file of the scratch cwd to a text it must contain afterwards.
//! - `tools` lists the tool calls the turn's session log records, all of them, in order: each a
//!   name, or `{ "name", "exit"?: code, "error"?: bool, "result"?: text it contains,
//!   "result_is"?: its whole text (trimmed) }`.
//! - `replay` lists runs of a packed package's replay CLI over the turn: `{ "cli": "<bin>",
//!   "without"?: [tool…], "config"?: { … }, "where"?: { field: value }, "lines": [ { field:
//!   value… } ] }` runs `<bin> replay --json` (with `--config`: the row config the turn's patch
//!   gave the plugin) on the turn's session log (with `without`: the logged events minus
//!   those tools' calls, as replay events, to show what the turn would have done without them),
//!   keeps the output lines holding every `where` value, and wants exactly `lines`, in order,
//!   each holding its values. In a line, `"text_first_seen": N` says the line's `text` (what the
//!   plugin injects) first appears in conversation request N: the replay agrees with the turn.

use crate::harness::{self, Harness, Timings, Turn, TurnSpec};
use crate::mock_model::Reply;
use crate::session_log::{Logged, ToolEvent};
use crate::util::{rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The keys `expect` may hold (the module doc says what each checks).
const EXPECTATIONS: &[&str] = &[
    "exit",
    "requests",
    "all_requests",
    "searches",
    "first_seen",
    "never_seen",
    "seen_times",
    "offered",
    "not_offered",
    "stderr",
    "stderr_lines",
    "files",
    "served",
    "tools",
    "replay",
];

/// A scenario's `serve` pages on 127.0.0.1: one response per connection, every request path
/// recorded; stops when dropped.
struct StaticSite {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl StaticSite {
    fn start(pages: &Value) -> Result<StaticSite> {
        let pages = pages
            .as_object()
            .context("`serve` maps paths to pages")?
            .clone();
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the scenario's site")?;
        let addr = listener.local_addr()?;
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&hits), Arc::clone(&stop));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let _ = serve_page(stream, &pages, &log);
                }
            }
        });
        Ok(StaticSite { addr, hits, stop })
    }

    fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().map(|h| h.clone()).unwrap_or_default()
    }
}

impl Drop for StaticSite {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

fn serve_page(
    stream: TcpStream,
    pages: &serde_json::Map<String, Value>,
    hits: &Mutex<Vec<String>>,
) -> Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(());
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    if let Ok(mut h) = hits.lock() {
        h.push(path.clone());
    }
    let page = pages.get(&path);
    let status = page
        .and_then(|p| p["status"].as_u64())
        .unwrap_or(if page.is_some() { 200 } else { 404 });
    let kind = page
        .and_then(|p| p["type"].as_str())
        .unwrap_or("text/plain; charset=utf-8");
    let body = page.and_then(|p| p["body"].as_str()).unwrap_or("not found");
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()?;
    Ok(())
}

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
                "serve",
                "then",
                "capture",
                "pid_namespace",
            ]
            .contains(&key.as_str())
            {
                bail!("{}: unknown key `{key}`", rel(path));
            }
        }
        let turns = std::iter::once(&doc).chain(doc["then"].as_array().into_iter().flatten());
        for turn in turns {
            for key in turn["expect"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|e| e.0)
            {
                if !EXPECTATIONS.contains(&key.as_str()) {
                    bail!("{}: unknown expectation `{key}`", rel(path));
                }
            }
        }
        let about = doc["about"].as_str().unwrap_or_default().to_owned();
        Ok(Scenario { name, about, doc })
    }

    /// The task of its first turn.
    pub fn task(&self) -> &str {
        self.doc["task"].as_str().unwrap_or_default()
    }

    fn script(&self, doc: &Value) -> Result<Vec<Reply>> {
        let items = doc["script"].as_array().map_or(&[][..], Vec::as_slice);
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let say = item["say"].as_str().unwrap_or_default().to_owned();
                let reply = match item["tool"].as_str() {
                    Some(name) if say.is_empty() => Reply::tool(name, item["args"].clone()),
                    Some(name) => Reply::Tool {
                        name: name.to_owned(),
                        args: item["args"].clone(),
                        text: say,
                    },
                    None if !say.is_empty() => Reply::Text(say),
                    None => bail!("{}: script[{i}] has neither `tool` nor `say`", self.name),
                };
                Ok(match item["when"].as_str() {
                    Some(text) => Reply::When {
                        text: text.to_owned(),
                        reply: Box::new(reply),
                    },
                    None => reply,
                })
            })
            .collect()
    }

    /// Runs the turn (and its `then` turns) and checks every expectation; returns the first turn
    /// and a one-line summary.
    pub fn run(&self, h: &Harness) -> Result<(Turn, String)> {
        let site = match &self.doc["serve"] {
            Value::Null => None,
            pages => Some(StaticSite::start(pages)?),
        };
        // `$SERVE` stands for the site's origin wherever it appears, `$BIN(<cli>)` for a packed
        // CLI's script.
        let mut text = serde_json::to_string(&self.doc)?;
        if let Some(site) = &site {
            text = text.replace("$SERVE", &site.origin());
        }
        for plugin in &h.plugins {
            for cli in plugin.bins {
                let script = plugin.unpacked.join("bin").join(format!("{cli}.js"));
                text = text.replace(&format!("$BIN({cli})"), &script.display().to_string());
            }
        }
        let doc: Value = serde_json::from_str(&text)?;
        let (first, mut summary) = self.run_turn(h, &doc, &self.name, &self.name)?;
        let doc = capture(&doc, &first).with_context(|| format!("scenario {}", self.name))?;
        for (i, then) in doc["then"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .enumerate()
        {
            let name = format!("{}-then-{}", self.name, i + 1);
            let dir = if then["same_cwd"] == true {
                &self.name
            } else {
                &name
            };
            let (_, line) = self.run_turn(h, then, &name, dir)?;
            summary.push_str(&format!("; then (a new session): {line}"));
        }
        if let Some(site) = &site {
            let hits = site.hits();
            for (path, want) in doc["expect"]["served"].as_object().into_iter().flatten() {
                let got = hits.iter().filter(|h| *h == path).count() as u64;
                if Some(got) != want.as_u64() {
                    bail!(
                        "scenario {}: {path} was served {got} times, expected {want}",
                        self.name
                    );
                }
                summary.push_str(&format!("; {path} served {got}x"));
            }
        }
        Ok((first, summary))
    }

    fn run_turn(&self, h: &Harness, doc: &Value, name: &str, dir: &str) -> Result<(Turn, String)> {
        let files: Vec<(String, String)> = match &doc["files"] {
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
        let patch = match &doc["patch"] {
            Value::Null => None,
            overlay => Some(
                serde_json::to_string_pretty(overlay)?
                    .replace("$FIXTURES", &fixtures.display().to_string()),
            ),
        };
        let turn = h.turn(TurnSpec {
            name,
            dir,
            task: doc["task"].as_str().context("a scenario needs a task")?,
            files: &files,
            script: self.script(doc)?,
            patch: patch.as_deref(),
            pid_namespace: doc["pid_namespace"] == true,
        })?;
        let summary = self
            .check(h, &doc["expect"], &turn)
            .with_context(|| format!("scenario {name}:\n{}", turn.describe()))?;
        Ok((turn, summary))
    }

    fn check(&self, h: &Harness, expect: &Value, turn: &Turn) -> Result<String> {
        let conversation = turn.conversation();
        let texts: Vec<String> = conversation.iter().map(|r| request_text(&r.body)).collect();
        let mut checked = Vec::new();
        if turn.code == Some(0) && turn.unused != 0 {
            bail!("{} scripted replies were never asked for", turn.unused);
        }
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
                checked.push(format!("exit {want}"));
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
                checked.push(format!("{:?} from request {at}", text::clip(text, 40)));
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
            checked.push(format!("stderr has {:?}", text::clip(text, 60)));
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
        if let Some(want) = expect["all_requests"].as_u64() {
            if turn.requests.len() as u64 != want {
                bail!(
                    "the mock model received {} requests in all, expected {want}",
                    turn.requests.len()
                );
            }
            checked.push(format!("{want} requests in all"));
        }
        if let Some(want) = expect["searches"].as_u64() {
            let got = turn
                .requests
                .iter()
                .filter(|r| r.path.ends_with("/messages"))
                .count() as u64;
            if got != want {
                bail!("the mock model served {got} web searches, expected {want}");
            }
            checked.push(format!("{want} web searches"));
        }
        if let Some(map) = expect["seen_times"].as_object() {
            for (text, want) in map {
                let want = want.as_u64().context("seen_times values are counts")?;
                let most = texts
                    .iter()
                    .map(|t| t.matches(text.as_str()).count() as u64)
                    .max()
                    .unwrap_or(0);
                if most != want {
                    bail!(
                        "{text:?} appears at most {most} times in one conversation request, expected {want}"
                    );
                }
                checked.push(format!("{:?} {want}x", text::clip(text, 40)));
            }
        }
        for (key, every) in [("offered", true), ("not_offered", false)] {
            for name in expect[key].as_array().map_or(&[][..], Vec::as_slice) {
                let name = name
                    .as_str()
                    .with_context(|| format!("{key} holds tool names"))?;
                if let Some(i) = conversation
                    .iter()
                    .position(|r| offers_tool(&r.body, name) != every)
                {
                    bail!(
                        "conversation request {} {} {name}",
                        i + 1,
                        if every { "does not offer" } else { "offers" }
                    );
                }
                checked.push(format!(
                    "{name} {} offered",
                    if every { "always" } else { "never" }
                ));
            }
        }
        for line in expect["stderr_lines"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
        {
            let line = line.as_str().context("stderr_lines holds lines")?;
            if !turn.stderr.lines().any(|l| l.trim() == line) {
                bail!("stderr has no line `{line}`");
            }
            checked.push(format!("stderr line {:?}", text::clip(line, 60)));
        }
        if let Some(want) = expect["tools"].as_array() {
            checked.push(check_tools(h, turn, want)?);
        }
        for replay in expect["replay"].as_array().map_or(&[][..], Vec::as_slice) {
            checked.push(check_replay(h, turn, replay, &texts)?);
        }
        Ok(format!(
            "{} conversation requests; {}",
            conversation.len(),
            checked.join("; ")
        ))
    }
}

/// Whether a request offers the tool `name`.
fn offers_tool(body: &Value, name: &str) -> bool {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["function"]["name"] == name)
}

/// `expect.tools`: the tool calls the session log records, in order.
fn check_tools(h: &Harness, turn: &Turn, want: &[Value]) -> Result<String> {
    let (log, logged) = h.logged(turn)?;
    let calls: Vec<&ToolEvent> = logged
        .iter()
        .filter_map(|l| match l {
            Logged::Tool(t) => Some(t),
            Logged::UserPrompt { .. } => None,
        })
        .collect();
    let names: Vec<&str> = calls.iter().map(|t| t.name.as_str()).collect();
    let wanted: Vec<&str> = want
        .iter()
        .map(|w| w.as_str().or_else(|| w["name"].as_str()))
        .collect::<Option<_>>()
        .context("tools holds names or objects with a name")?;
    if names != wanted {
        bail!(
            "{} records the tool calls {names:?}, expected {wanted:?}",
            rel(&log)
        );
    }
    for (i, (call, w)) in calls.iter().zip(want).enumerate() {
        let at = format!("tool call {} ({} {})", i + 1, call.name, call.call_id);
        if let Some(code) = w.get("exit") {
            if call.exit_code != code.as_i64() {
                bail!(
                    "{at} exited {:?}, expected {code}: {:?}",
                    call.exit_code,
                    call.text
                );
            }
        }
        if let Some(error) = w.get("error").and_then(Value::as_bool) {
            if call.is_error != error {
                bail!(
                    "{at} is {}an error: {:?}",
                    if call.is_error { "" } else { "not " },
                    call.text
                );
            }
        }
        if let Some(text) = w.get("result").and_then(Value::as_str) {
            if !call.text.contains(text) {
                bail!(
                    "{at} answered {:?}, expected it to contain {text:?}",
                    call.text
                );
            }
        }
        if let Some(text) = w.get("result_is").and_then(Value::as_str) {
            if call.text.trim() != text {
                bail!("{at} answered {:?}, expected exactly {text:?}", call.text);
            }
        }
    }
    Ok(format!("tool calls {}", names.join(", ")))
}

/// One `expect.replay` entry: a package's replay CLI over the turn, its kept lines as expected.
fn check_replay(h: &Harness, turn: &Turn, spec: &Value, texts: &[String]) -> Result<String> {
    let cli = spec["cli"].as_str().context("a replay names its `cli`")?;
    let without: Vec<String> = spec["without"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|t| t.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .context("replay.without holds tool names")?;
    let filter = spec["where"].as_object();
    let kept: Vec<Value> = h
        .replay(cli, turn, &without, spec.get("config"))?
        .into_iter()
        .filter(|line| filter.is_none_or(|f| f.iter().all(|(k, v)| &line[k] == v)))
        .collect();
    let want = spec["lines"]
        .as_array()
        .context("a replay lists its `lines`")?;
    let what = format!(
        "`{cli} replay` of {}{}{}",
        if without.is_empty() {
            "the session log"
        } else {
            "the logged events"
        },
        if without.is_empty() {
            String::new()
        } else {
            format!(" without {}", without.join(", "))
        },
        filter.map_or(String::new(), |f| format!(
            ", lines where {}",
            Value::Object(f.clone())
        ))
    );
    if kept.len() != want.len() {
        bail!(
            "{what}: {} lines, expected {}:\n{}",
            kept.len(),
            want.len(),
            lines_of(&kept)
        );
    }
    for (i, (line, w)) in kept.iter().zip(want).enumerate() {
        for (key, value) in w.as_object().context("replay lines are objects")? {
            if key == "text_first_seen" {
                let text = line["text"]
                    .as_str()
                    .with_context(|| format!("{what}: line {} has no text", i + 1))?;
                let first = texts
                    .iter()
                    .position(|t| t.contains(text))
                    .map(|n| n as u64 + 1);
                if first != value.as_u64() {
                    bail!(
                        "{what}: the text of line {} first appears in conversation request {}, expected {value}:\n{text}",
                        i + 1,
                        first.map_or("none".to_owned(), |n| n.to_string())
                    );
                }
            } else if &line[key] != value {
                bail!(
                    "{what}: line {} has {key} = {}, expected {value}:\n{line}",
                    i + 1,
                    line[key]
                );
            }
        }
    }
    Ok(format!(
        "{what}: {} line{} as expected",
        kept.len(),
        if kept.len() == 1 { "" } else { "s" }
    ))
}

fn lines_of(lines: &[Value]) -> String {
    lines
        .iter()
        .map(|l| text::clip(&l.to_string(), 300))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `doc` with each `capture`d id of the first turn put in for its `$NAME` in the `then` turns.
fn capture(doc: &Value, first: &Turn) -> Result<Value> {
    let Some(captures) = doc["capture"].as_object() else {
        return Ok(doc.clone());
    };
    let text = first
        .conversation()
        .last()
        .map(|r| request_text(&r.body))
        .unwrap_or_default();
    let mut then = serde_json::to_string(&doc["then"])?;
    for (name, before) in captures {
        let before = before.as_str().context("a capture is text")?;
        let Some(at) = text.find(before) else {
            bail!("capture {name}: {before:?} is in no tool result of the first turn");
        };
        let id: String = text[at + before.len()..]
            .chars()
            .take_while(|c| c.is_ascii_hexdigit() || *c == '-')
            .collect();
        then = then.replace(&format!("${name}"), &id);
    }
    let mut doc = doc.clone();
    doc["then"] = serde_json::from_str(&then)?;
    Ok(doc)
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
    // Messages already shown, per conversation (a child agent has its own, told apart by its
    // first user message).
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, request) in turn.conversation().iter().enumerate() {
        let messages = request.body["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let key = messages
            .iter()
            .find(|m| m["role"] == "user")
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        let shown = seen.get(&key).copied().unwrap_or(0);
        if shown == 0 && !seen.is_empty() {
            lines.push(format!(
                "  req {:>2}  (another agent's conversation starts)",
                i + 1
            ));
        }
        for message in messages.iter().skip(shown) {
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
                        format!("says {:?}; ", text::clip(&text.replace('\n', " | "), 90))
                    };
                    format!(
                        "model     {said}calls {}",
                        text::clip(&calls.join(", "), 80)
                    )
                }
                "tool" => format!("result    {}", text::clip(first, 110)),
                "user" if i == 0 => format!("task      {}", text::clip(first, 110)),
                "user" => format!("notice    {}", text::clip(first, 110)),
                other => format!("{other:<9} {}", text::clip(first, 110)),
            };
            lines.push(format!("  req {:>2}  {line}", i + 1));
        }
        seen.insert(key, messages.len());
    }
    lines
}

/// `cargo xtask scenario [NAME...]`: the release-smoke setup (`setup`, given the run's name),
/// then only the named scenarios (every one without names), for working on one scenario without
/// the whole smoke.
pub fn run(
    args: &[String],
    setup: impl FnOnce(&str, &mut Timings) -> Result<Harness>,
) -> Result<()> {
    let update = args.iter().any(|a| a == "--update-fixture");
    let names: Vec<String> = args
        .iter()
        .filter(|a| *a != "--update-fixture")
        .cloned()
        .collect();
    let mut timings = Timings::default();
    let mut chosen = Vec::new();
    for path in files()? {
        let scenario = Scenario::load(&path)?;
        if names.is_empty() || names.contains(&scenario.name) {
            chosen.push(scenario);
        }
    }
    for name in &names {
        if !chosen.iter().any(|s| &s.name == name) {
            bail!("no scenario `{name}` in {}", rel(&dir()));
        }
    }
    let h = setup("scenario", &mut timings)?;
    for scenario in &chosen {
        println!("\nscenario {}: {}", scenario.name, scenario.about);
        let (turn, summary) =
            timings.step(&format!("scenario {}", scenario.name), || scenario.run(&h))?;
        println!("{}: {summary}", scenario.name);
        if let Some(fixture) = scenario.doc["session_fixture"].as_str() {
            println!(
                "  fixture: {}",
                harness::keep_session_fixture(&h, &turn, fixture, update)?
            );
        }
    }
    println!("\nseconds per step");
    print!("{}", timings.table());
    Ok(())
}

/// Runs every scenario file; returns one report line each. `update` rewrites session fixtures.
pub fn run_all(h: &Harness, timings: &mut Timings, update: bool) -> Result<Vec<String>> {
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
                harness::keep_session_fixture(h, &turn, fixture, update)?
            ));
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn every_scenario_file_loads_and_follow_up_turns_have_a_task_and_a_script() {
        for path in files().unwrap() {
            let scenario = Scenario::load(&path).unwrap();
            for then in scenario.doc["then"].as_array().into_iter().flatten() {
                assert!(then["task"].is_string(), "{}", scenario.name);
                scenario.script(then).unwrap();
            }
        }
    }

    #[test]
    fn the_static_site_serves_its_pages_and_records_each_request() {
        let site = StaticSite::start(&serde_json::json!({
            "/a.html": { "type": "text/html", "body": "<p>hi</p>" },
        }))
        .unwrap();
        let get = |path: &str| {
            let mut stream = TcpStream::connect(site.addr).unwrap();
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut out = String::new();
            stream.read_to_string(&mut out).unwrap();
            out
        };
        let page = get("/a.html");
        assert!(page.starts_with("HTTP/1.1 200 "), "{page}");
        assert!(page.contains("content-type: text/html\r\n"));
        assert!(page.ends_with("\r\n\r\n<p>hi</p>"));
        assert!(get("/missing").starts_with("HTTP/1.1 404 "));
        assert_eq!(site.hits(), ["/a.html", "/missing"]);
        assert!(site.origin().starts_with("http://127.0.0.1:"));
    }
}
