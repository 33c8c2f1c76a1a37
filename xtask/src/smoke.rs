//! `cargo xtask release-smoke`: the packed plugin in the real dsh, end to end.
//!
//! 1. pack (build + npm pack + checks), then Node 24, pnpm and dsh with its Cordis pins
//!    ([`crate::dsh`]);
//! 2. a throwaway `DSH_HOME` in `target/release-smoke/home`: `dsh plugin --profile headless add
//!    <tarball>`, and `--dump-config` must show the `# == <package>` layer with every default
//!    (steps 1 and 2 are the shared [`setup`]);
//! 3. real headless turns against the scripted [`mock_model::MockModel`], each in its own scratch
//!    cwd with real files: the loop (a), research resets (b), the snooze tool (c),
//!    `enabled: false` (d); the tool events each run logged are replayed through the packed CLI,
//!    and the model requests must carry the reminder exactly where the replay says nudge, and
//!    nowhere else (the CLI's own reading of the raw session log must nudge at the same calls);
//! 4. two boots with a bad `--patch` (a bad value, an unknown key) must fail before any request,
//!    printing our messages;
//! 5. the loop's session log is scrubbed into `target/release-smoke/smoke-loop.jsonl.zstd`
//!    (`--update-fixture` copies it to `vectors/sessions/`); the committed fixture is checked.

use crate::harness::{Harness, Timings, Turn, TurnSpec, setup, tail};
use crate::mock_model::{self, Reply, Request};
use crate::pack;
use crate::packages;
use crate::session_log::{self, Logged, Scrub, ToolEvent};
use crate::util::{self, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The first line of the default reminder.
const REMINDER_HEAD: &str = "[Research Nudge]";
/// The start of the signals line.
const SIGNALS_HEAD: &str = "Current signals:";
/// The snooze tool's name.
const SNOOZE_TOOL: &str = "research_nudge_snooze";
/// Where the loop's scrubbed session log is kept.
pub const FIXTURE: &str = "packages/research-nudge/vectors/sessions/smoke-loop.jsonl.zstd";
/// The overlay of research-nudge's own turns: the other guard of the family sits out, so these
/// turns measure research-nudge alone (the family scenarios in `xtask/scenarios/` run them
/// together).
const RESEARCH_NUDGE_ALONE: &str = "- id: pain-point-check\n  disabled: true\n";

// Replays through research-nudge's packed CLI: only the release smoke checks them, so they stay
// here rather than in the shared harness.
impl Harness {
    /// Replays events through the packed CLI; returns its output lines.
    pub fn replay(
        &self,
        name: &str,
        events: &[Logged],
        config: Option<&Value>,
    ) -> Result<Vec<Value>> {
        let dir = self.dir.join("replay");
        std::fs::create_dir_all(&dir)?;
        let input = dir.join(format!("{name}.jsonl"));
        let lines: Vec<String> = events.iter().map(session_log::replay_line).collect();
        std::fs::write(&input, lines.join("\n") + "\n")?;
        let cli = pack::unpacked_dir(packages::research_nudge())
            .join("bin")
            .join("research-nudge.js");
        let mut cmd = Command::new(self.toolchain.node());
        cmd.arg(&cli).arg("replay");
        if let Some(config) = config {
            let file = dir.join(format!("{name}.config.json"));
            std::fs::write(&file, config.to_string())?;
            cmd.arg("--config").arg(file);
        }
        cmd.arg(&input);
        let out = util::stdout_of(&mut cmd)?;
        let values: Vec<Value> = out
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .context("replay printed a non-JSON line")?;
        if values.len() != events.len() {
            bail!(
                "replay printed {} lines for {} events",
                values.len(),
                events.len()
            );
        }
        std::fs::write(dir.join(format!("{name}.out.jsonl")), out)?;
        Ok(values)
    }

    /// `research-nudge replay --json <session log>` with the packed CLI: the calls (1-based) at
    /// which the replay of DSH's own log nudges, with their texts.
    pub fn replay_log(&self, log: &Path) -> Result<Vec<(u64, String)>> {
        let cli = pack::unpacked_dir(packages::research_nudge())
            .join("bin")
            .join("research-nudge.js");
        let mut cmd = Command::new(self.toolchain.node());
        cmd.arg(&cli).args(["replay", "--json"]).arg(log);
        let out = util::stdout_of(&mut cmd)?;
        let mut nudges = Vec::new();
        for line in out.lines() {
            let value: Value = serde_json::from_str(line)
                .with_context(|| format!("replay --json printed a non-JSON line: {line}"))?;
            if value["nudge"] == true {
                nudges.push((
                    value["call"].as_u64().unwrap_or(0),
                    value["text"].as_str().unwrap_or_default().to_owned(),
                ));
            }
        }
        Ok(nudges)
    }
}

/// The CLI's replay of the raw session log agrees with the replay of the events read from it.
fn same_nudges_from_log(
    h: &Harness,
    log: &Path,
    logged: &[Logged],
    replay: &[Value],
) -> Result<()> {
    let from_events: Vec<(u64, String)> = replay
        .iter()
        .enumerate()
        .filter(|(_, line)| line["nudge"] == true)
        .map(|(i, line)| {
            (
                tools_of(&logged[..=i]).len() as u64,
                line["text"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let from_log = h.replay_log(log)?;
    if from_log != from_events {
        bail!(
            "`research-nudge replay --json {}` nudges at calls {:?}, the replay of its events at {:?}",
            rel(log),
            from_log.iter().map(|n| n.0).collect::<Vec<_>>(),
            from_events.iter().map(|n| n.0).collect::<Vec<_>>()
        );
    }
    Ok(())
}

/// The text of a chat message's `content` (a string or text parts).
fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn messages(request: &Request) -> &[Value] {
    request.body["messages"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// User messages that look like a reminder (its first line or the signals line).
fn reminders(request: &Request) -> Vec<String> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "user")
        .map(content_text)
        .filter(|t| t.contains(REMINDER_HEAD) || t.contains(SIGNALS_HEAD))
        .collect()
}

fn offers_tool(request: &Request, name: &str) -> bool {
    request.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|t| t["function"]["name"] == name)
}

/// Index of the first conversation request that holds the result of `call_id`.
fn request_with_result(conversation: &[&Request], call_id: &str) -> Option<usize> {
    conversation.iter().position(|r| {
        messages(r)
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
    })
}

fn tools_of(logged: &[Logged]) -> Vec<&ToolEvent> {
    logged
        .iter()
        .filter_map(|l| match l {
            Logged::Tool(t) => Some(t),
            Logged::UserPrompt { .. } => None,
        })
        .collect()
}

/// The tool calls of a run, as names.
fn names(logged: &[Logged]) -> Vec<&str> {
    tools_of(logged).iter().map(|t| t.name.as_str()).collect()
}

/// The first replay line (index into `logged`) that says nudge, with its text.
fn first_nudge(replay: &[Value]) -> Option<(usize, String)> {
    replay.iter().enumerate().find_map(|(i, line)| {
        (line["nudge"] == true).then(|| (i, line["text"].as_str().unwrap_or_default().to_owned()))
    })
}

fn nudges(replay: &[Value]) -> usize {
    replay.iter().filter(|l| l["nudge"] == true).count()
}

/// What the loop scenario proved.
pub struct LoopOutcome {
    /// The run.
    pub turn: Turn,
    /// Its logged events.
    pub logged: Vec<Logged>,
    /// The replay output, one line per logged event.
    pub replay: Vec<Value>,
    /// The session log file.
    pub log: PathBuf,
    /// The tool call (index into `logged`) after which the reminder came.
    pub nudge_event: usize,
    /// The conversation request (0-based) that carried the reminder.
    pub nudge_request: usize,
    /// The reminder text the model saw.
    pub reminder: String,
}

/// The app the loop scenarios work on.
pub const LOOP_FILES: &[(&str, &str)] = &[(
    "app.js",
    "// Prints the answer.\nlet x = 1\nconsole.log(answer(x))\n",
)];
/// The loop task.
pub const LOOP_TASK: &str = "Fix the TypeError that `node app.js` reports.";

fn run_fails(line: u32) -> Value {
    json!({
        "command": format!("node -e \"console.error('TypeError at line {line}'); process.exit(1)\""),
        "description": "Run the app",
    })
}

fn edit(from: &str, to: &str) -> Value {
    json!({"file_path": "app.js", "old_string": from, "new_string": to})
}

/// read → edit → bash (fails) → edit → bash (fails the same way) → give up.
pub fn loop_script() -> Vec<Reply> {
    vec![
        Reply::tool("read", json!({"file_path": "app.js"})),
        Reply::tool("edit", edit("let x = 1", "let x = 2")),
        Reply::tool("bash", run_fails(123)),
        Reply::tool("edit", edit("let x = 2", "let x = 3")),
        Reply::tool("bash", run_fails(456)),
        Reply::Text(
            "The TypeError persists after two edits; I should look up what `answer` is before trying again."
                .into(),
        ),
    ]
}

/// Scenario a: the loop nudges exactly where the CLI replay of the same events says.
pub fn scenario_loop(h: &Harness) -> Result<LoopOutcome> {
    let turn = h.turn(TurnSpec {
        name: "a-loop",
        task: LOOP_TASK,
        files: LOOP_FILES,
        script: loop_script(),
        patch: Some(RESEARCH_NUDGE_ALONE),
    })?;
    if turn.code != Some(0) || turn.unused != 0 {
        bail!(
            "the loop turn did not complete ({} script replies unused)\n{}",
            turn.unused,
            turn.describe()
        );
    }
    let app = std::fs::read_to_string(turn.cwd.join("app.js"))?;
    if !app.contains("let x = 3") {
        bail!("the edits did not reach app.js:\n{app}");
    }
    let (log, logged) = h.logged(&turn)?;
    let calls = tools_of(&logged);
    if names(&logged) != ["read", "edit", "bash", "edit", "bash"] {
        bail!("dsh ran {:?}, not the script", names(&logged));
    }
    for (call, line) in [(calls[2], 123), (calls[4], 456)] {
        if call.exit_code != Some(1) || !call.text.contains(&format!("TypeError at line {line}")) {
            bail!(
                "bash call {} did not fail with exit 1 and `TypeError at line {line}`: {:?} exit {:?}",
                call.call_id,
                call.text,
                call.exit_code
            );
        }
    }
    let conversation = turn.conversation();
    if !conversation.iter().all(|r| offers_tool(r, SNOOZE_TOOL)) {
        bail!("some conversation request does not offer {SNOOZE_TOOL}");
    }
    let replay = h.replay("a-loop", &logged, None)?;
    same_nudges_from_log(h, &log, &logged, &replay)?;
    if nudges(&replay) != 1 {
        bail!("the replay nudges {} times, want once", nudges(&replay));
    }
    let (event, text) = first_nudge(&replay).expect("one nudge");
    let Logged::Tool(call) = &logged[event] else {
        bail!("the replay nudged on a user prompt")
    };
    let signals = text
        .lines()
        .last()
        .filter(|l| l.starts_with(SIGNALS_HEAD))
        .with_context(|| {
            format!("the replay's reminder does not end with a signals line:\n{text}")
        })?
        .to_owned();
    let at = request_with_result(&conversation, &call.call_id)
        .with_context(|| format!("no request carries the result of {}", call.call_id))?;
    for (i, request) in conversation.iter().enumerate().take(at) {
        let found = reminders(request);
        if !found.is_empty() {
            bail!(
                "conversation request {} (before the nudge) carries {found:?}",
                i + 1
            );
        }
    }
    let carrier = conversation[at];
    let msgs = messages(carrier);
    let tool_at = msgs
        .iter()
        .position(|m| m["role"] == "tool" && m["tool_call_id"] == call.call_id.as_str())
        .expect("found above");
    let reminder_at = msgs
        .iter()
        .position(|m| m["role"] == "user" && content_text(m) == text)
        .with_context(|| {
            format!(
                "conversation request {} does not carry the replay's reminder verbatim; its reminder-like messages: {:?}",
                at + 1,
                reminders(carrier)
            )
        })?;
    if reminder_at < tool_at {
        bail!("the reminder precedes the result of the call that triggered it");
    }
    if !content_text(&msgs[reminder_at]).contains(&signals) {
        bail!("the signals line {signals:?} is not in the carried reminder");
    }
    for (i, request) in conversation.iter().enumerate().skip(at) {
        let found = reminders(request);
        if found.len() != 1 {
            bail!(
                "conversation request {} carries {} reminders, want exactly the one (a second nudge?)",
                i + 1,
                found.len()
            );
        }
    }
    println!(
        "    replay nudges on call {} ({} {}); conversation request {} of {} carries it, requests 1-{} do not; {signals}",
        tools_of(&logged[..=event]).len(),
        call.name,
        call.call_id,
        at + 1,
        conversation.len(),
        at
    );
    Ok(LoopOutcome {
        reminder: text,
        nudge_event: event,
        nudge_request: at,
        turn,
        logged,
        replay,
        log,
    })
}

/// Asserts no request of a turn carries a reminder.
fn no_reminders(turn: &Turn) -> Result<()> {
    for (i, request) in turn.requests.iter().enumerate() {
        let found = reminders(request);
        if !found.is_empty() {
            bail!(
                "request {} of `{}` carries a reminder: {found:?}",
                i + 1,
                turn.name
            );
        }
    }
    Ok(())
}

fn completed(turn: &Turn) -> Result<()> {
    if turn.code != Some(0) || turn.unused != 0 {
        bail!(
            "`{}` did not complete ({} script replies unused)\n{}",
            turn.name,
            turn.unused,
            turn.describe()
        );
    }
    Ok(())
}

/// Scenario b: a successful `web_search` resets the debt; no reminder follows.
fn scenario_research(h: &Harness) -> Result<(String, usize)> {
    let script = vec![
        Reply::tool("read", json!({"file_path": "app.js"})),
        Reply::tool("edit", edit("let x = 1", "let x = 2")),
        Reply::tool("bash", run_fails(123)),
        Reply::tool("edit", edit("let x = 2", "let x = 3")),
        Reply::tool(
            "web_search",
            json!({"queries": ["node TypeError answer is not defined"]}),
        ),
        Reply::tool("bash", run_fails(456)),
        Reply::tool("edit", edit("let x = 3", "let x = 4")),
        Reply::tool("bash", run_fails(789)),
        Reply::Text("Still failing; the search result explains the TypeError.".into()),
    ];
    let turn = h.turn(TurnSpec {
        name: "b-research",
        task: LOOP_TASK,
        files: LOOP_FILES,
        script,
        patch: Some(RESEARCH_NUDGE_ALONE),
    })?;
    completed(&turn)?;
    let (log, logged) = h.logged(&turn)?;
    let search = tools_of(&logged)
        .into_iter()
        .find(|t| t.name == "web_search")
        .context("web_search did not run")?
        .clone();
    if search.is_error || !search.text.contains(mock_model::SEARCH_URL) {
        bail!(
            "web_search did not succeed (a failed research call does not reset): {:?}",
            search.text
        );
    }
    if !turn.requests.iter().any(|r| r.path.ends_with("/messages")) {
        bail!("the mock saw no search request");
    }
    no_reminders(&turn)?;
    let replay = h.replay("b-research", &logged, None)?;
    same_nudges_from_log(h, &log, &logged, &replay)?;
    if nudges(&replay) != 0 {
        bail!("the replay of the real events nudges: {replay:?}");
    }
    let at = logged
        .iter()
        .position(|l| matches!(l, Logged::Tool(t) if t.name == "web_search"))
        .expect("found above");
    if replay[at]["debt"] != 0 || replay[at - 1]["debt"].as_u64().unwrap_or(0) == 0 {
        bail!(
            "web_search did not reset a debt: before {}, after {}",
            replay[at - 1],
            replay[at]
        );
    }
    // Without the research call the same events nudge: the reset is what kept it quiet.
    let mut without = logged.clone();
    without.remove(at);
    let counterfactual = h.replay("b-research-without-search", &without, None)?;
    let (would, _) = first_nudge(&counterfactual)
        .context("even without web_search the events never nudge: the scenario proves nothing")?;
    let peak = replay
        .iter()
        .skip(at)
        .filter_map(|l| l["debt"].as_u64())
        .max()
        .unwrap_or(0);
    Ok((
        format!(
            "web_search reset debt {} -> 0 on call {}; no reminder in {} requests (without the search the replay nudges on call {}; after it debt peaks at {peak})",
            replay[at - 1]["debt"],
            tools_of(&logged[..=at]).len(),
            turn.requests.len(),
            tools_of(&without[..=would]).len() + 1,
        ),
        turn.requests.len(),
    ))
}

/// Scenario c: the snooze tool answers, and no reminder comes while snoozed.
fn scenario_snooze(h: &Harness) -> Result<(String, usize)> {
    let minutes = 30;
    let script = vec![
        Reply::tool("read", json!({"file_path": "app.js"})),
        Reply::tool("edit", edit("let x = 1", "let x = 2")),
        Reply::tool(
            SNOOZE_TOOL,
            json!({"minutes": minutes, "reason": "reproducing locally first"}),
        ),
        Reply::tool("bash", run_fails(123)),
        Reply::tool("edit", edit("let x = 2", "let x = 3")),
        Reply::tool("bash", run_fails(456)),
        Reply::tool("edit", edit("let x = 3", "let x = 4")),
        Reply::tool("bash", run_fails(789)),
        Reply::Text("Still failing.".into()),
    ];
    let turn = h.turn(TurnSpec {
        name: "c-snooze",
        task: LOOP_TASK,
        files: LOOP_FILES,
        script,
        patch: Some(RESEARCH_NUDGE_ALONE),
    })?;
    completed(&turn)?;
    let (log, logged) = h.logged(&turn)?;
    let snooze = tools_of(&logged)
        .into_iter()
        .find(|t| t.name == SNOOZE_TOOL)
        .context("the snooze tool did not run")?
        .clone();
    let expected = snooze_reply(h, minutes)?;
    let conversation = turn.conversation();
    let at = request_with_result(&conversation, &snooze.call_id)
        .context("no request carries the snooze result")?;
    let result = messages(conversation[at])
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == snooze.call_id.as_str())
        .map(content_text)
        .unwrap_or_default();
    if result.trim() != expected || snooze.is_error {
        bail!("the snooze tool answered {result:?}, want {expected:?}");
    }
    no_reminders(&turn)?;
    let replay = h.replay("c-snooze", &logged, None)?;
    same_nudges_from_log(h, &log, &logged, &replay)?;
    if nudges(&replay) != 0 {
        bail!("the replay of the real events nudges: {replay:?}");
    }
    let threshold = config::research_nudge::RowConfig::default().debt_threshold;
    let peak = replay
        .iter()
        .filter_map(|l| l["debt"].as_u64())
        .max()
        .unwrap_or(0);
    if peak < u64::from(threshold) {
        bail!(
            "debt peaked at {peak}, below the threshold {threshold}: the snooze was never tested"
        );
    }
    let mut without = logged.clone();
    without.retain(|l| !matches!(l, Logged::Tool(t) if t.name == SNOOZE_TOOL));
    if first_nudge(&h.replay("c-snooze-without-snooze", &without, None)?).is_none() {
        bail!("even without the snooze the events never nudge: the scenario proves nothing");
    }
    Ok((
        format!(
            "conversation request {} shows the tool result {expected:?}; debt peaked at {peak}/{threshold} while snoozed; no reminder in {} requests (without the snooze the replay nudges)",
            at + 1,
            turn.requests.len()
        ),
        turn.requests.len(),
    ))
}

/// The snooze confirmation, from the packed core.
fn snooze_reply(h: &Harness, minutes: u32) -> Result<String> {
    let core = pack::unpacked_dir(packages::research_nudge())
        .join("lib")
        .join("core.js");
    let script = "const { Plugin } = await import(process.argv[1]); process.stdout.write(new Plugin('null').snoozeReply(Number(process.argv[2])))";
    let mut cmd = Command::new(h.toolchain.node());
    cmd.args(["--input-type=module", "-e", script])
        .arg(format!("file://{}", core.display()))
        .arg(minutes.to_string());
    util::stdout_of(&mut cmd)
}

/// Scenario d: `enabled: false` registers nothing.
fn scenario_disabled(h: &Harness) -> Result<(String, usize)> {
    let patch =
        format!("{RESEARCH_NUDGE_ALONE}- id: research-nudge\n  config:\n    enabled: false\n");
    let turn = h.turn(TurnSpec {
        name: "d-disabled",
        task: LOOP_TASK,
        files: LOOP_FILES,
        script: loop_script(),
        patch: Some(&patch),
    })?;
    completed(&turn)?;
    no_reminders(&turn)?;
    let conversation = turn.conversation();
    if let Some(i) = conversation
        .iter()
        .position(|r| offers_tool(r, SNOOZE_TOOL))
    {
        bail!(
            "conversation request {} offers {SNOOZE_TOOL} although disabled",
            i + 1
        );
    }
    Ok((
        format!(
            "the loop ran; no reminder and no {SNOOZE_TOOL} in {} requests",
            turn.requests.len()
        ),
        turn.requests.len(),
    ))
}

/// Step 4: a bad `--patch` fails the boot with our message, before any request.
fn bad_config(h: &Harness, name: &str, yaml_key: &str, config: Value) -> Result<Vec<String>> {
    let patch = format!("- id: research-nudge\n  config:\n    {yaml_key}\n");
    let turn = h.turn(TurnSpec {
        name,
        task: "This task must never reach the model.",
        files: &[],
        script: vec![],
        patch: Some(&patch),
    })?;
    if turn.code == Some(0) {
        bail!("dsh booted with {yaml_key:?}\n{}", turn.describe());
    }
    if !turn.requests.is_empty() {
        bail!(
            "dsh sent {} request(s) to the model before failing",
            turn.requests.len()
        );
    }
    let issues = match config::research_nudge::validate(&config) {
        Ok(_) => bail!("crates/config accepts {config}"),
        Err(issues) => issues,
    };
    let mut lines = Vec::new();
    for issue in &issues {
        let path = issue
            .path
            .iter()
            .map(|p| match p {
                config::PathSegment::Key(k) => k.clone(),
                config::PathSegment::Index(i) => i.to_string(),
            })
            .collect::<Vec<_>>()
            .join(".");
        let wanted = format!("- {} (at {path})", issue.message);
        let Some(line) = turn.stderr.lines().find(|l| l.trim() == wanted) else {
            bail!("stderr lacks `{wanted}`:\n{}", tail(&turn.stderr, 30));
        };
        lines.push(line.trim().to_owned());
    }
    Ok(lines)
}

/// Step 5: scrub the loop's log into a fixture; check it (and the committed one).
fn fixture(h: &Harness, outcome: &LoopOutcome, update: bool) -> Result<String> {
    let node = h.toolchain.node();
    let texts = session_log::read_frames(&node, &outcome.log)?;
    let scrub = Scrub::new(&outcome.turn.cwd, &h.home);
    let scrubbed = scrub.frames(&texts)?;
    let leaks = scrub.leaks(&scrubbed);
    if !leaks.is_empty() {
        bail!("scrubbing left machine paths in: {leaks:?}");
    }
    let fresh = h.dir.join("smoke-loop.jsonl.zstd");
    session_log::write_frames(&node, &fresh, &scrubbed)?;
    let reread = session_log::read_frames(&node, &fresh)?;
    if reread != scrubbed {
        bail!("{} does not read back as written", rel(&fresh));
    }
    session_log::check_loop_fixture(&reread)
        .with_context(|| format!("checking {}", rel(&fresh)))?;
    let committed = root().join(FIXTURE);
    if update {
        std::fs::create_dir_all(committed.parent().expect("has a parent"))?;
        std::fs::copy(&fresh, &committed)?;
        println!("fixture: wrote {FIXTURE}");
    }
    if !committed.is_file() {
        bail!("{FIXTURE} is missing; run `cargo xtask release-smoke --update-fixture`");
    }
    let kept = session_log::read_frames(&node, &committed)?;
    session_log::check_loop_fixture(&kept).with_context(|| format!("checking {FIXTURE}"))?;
    let lines: usize = kept.iter().map(|t| t.lines().count()).sum();
    Ok(format!(
        "{} ({} frames, {lines} lines) scrubbed from {}; {FIXTURE} checks out ({} frames, {} bytes)",
        rel(&fresh),
        scrubbed.len(),
        rel(&outcome.log),
        kept.len(),
        std::fs::metadata(&committed)?.len()
    ))
}

/// `cargo xtask release-smoke [--update-fixture]`.
pub fn run(args: &[String]) -> Result<()> {
    let mut update = false;
    for arg in args {
        match arg.as_str() {
            "--update-fixture" => update = true,
            other => {
                bail!("`cargo xtask release-smoke` takes only --update-fixture (got `{other}`)")
            }
        }
    }
    let mut t = Timings::default();
    let h = setup("release-smoke", &mut t)?;
    let mut report: Vec<String> = h
        .layers
        .iter()
        .map(|layer| format!("layer seen: `{layer}` with every default"))
        .collect();
    let mut turns = 0;
    let mut checked = 0;

    let outcome = t.step(
        "turn a: read/edit/bash loop nudges where the replay says",
        || scenario_loop(&h),
    )?;
    turns += 1;
    checked += outcome.turn.requests.len();
    report.push(format!(
        "a loop: the replay nudges on call {}; conversation request {} of {} carries the reminder + `{}`",
        tools_of(&outcome.logged[..=outcome.nudge_event]).len(),
        outcome.nudge_request + 1,
        outcome.turn.conversation().len(),
        outcome.reminder.lines().last().unwrap_or_default()
    ));
    for (label, step) in [
        (
            "turn b: research resets",
            scenario_research as fn(&Harness) -> Result<(String, usize)>,
        ),
        ("turn c: snooze tool", scenario_snooze),
        ("turn d: enabled: false", scenario_disabled),
    ] {
        let (line, requests) = t.step(label, || step(&h))?;
        turns += 1;
        checked += requests;
        report.push(format!("{}: {line}", &label[5..]));
    }
    let bad_value = t.step("boot with debtThreshold: 0", || {
        bad_config(
            &h,
            "e-bad-value",
            "debtThreshold: 0",
            json!({"debtThreshold": 0}),
        )
    })?;
    let unknown = t.step("boot with debtTreshold: 25", || {
        bad_config(
            &h,
            "f-unknown-key",
            "debtTreshold: 25",
            json!({"debtTreshold": 25}),
        )
    })?;
    report.push(format!(
        "bad value: exit != 0, 0 requests, stderr: {}",
        bad_value.join(" | ")
    ));
    report.push(format!(
        "unknown key: exit != 0, 0 requests, stderr: {}",
        unknown.join(" | ")
    ));
    let fixture_line = t.step("session-log fixture", || fixture(&h, &outcome, update))?;
    report.push(format!("fixture: {fixture_line}"));
    let scenarios = crate::scenario::run_all(&h, &mut t, update)?;
    turns += scenarios.len();
    report.extend(scenarios);

    println!("\nrelease-smoke report");
    for line in &report {
        println!("  {line}");
    }
    println!(
        "  turns and boots run: {turns} (+2 research-nudge boots that failed as they must); model requests checked: {checked}"
    );
    println!("\nseconds per step");
    print!("{}", t.table());
    Ok(())
}
