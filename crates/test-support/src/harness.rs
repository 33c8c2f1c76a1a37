//! The dsh harness the release smoke, the scenarios and the demo share: every packed package
//! added to one fresh `DSH_HOME` ([`setup`]), then headless turns against a scripted
//! [`MockModel`] ([`Harness::turn`]) and what they logged.

use crate::mock_model::{MockModel, Reply, Request};
use crate::session_log::{self, Logged, Scrub};
use crate::toolchain::Toolchain;
use crate::util::{self, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A dsh run that takes longer than this is killed.
const TURN_TIMEOUT: Duration = Duration::from_secs(180);

/// Seconds per named step, in order.
#[derive(Default)]
pub struct Timings(Vec<(String, f64)>);

impl Timings {
    /// Runs `f` as step `name`, printing its start and duration.
    pub fn step<T>(&mut self, name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        println!("\n--> {name}");
        let started = Instant::now();
        let out = f().with_context(|| format!("step `{name}`"));
        let secs = started.elapsed().as_secs_f64();
        println!(
            "<-- {name}: {} ({secs:.1}s)",
            if out.is_ok() { "ok" } else { "FAILED" }
        );
        self.0.push((name.to_owned(), secs));
        out
    }

    /// `  name  seconds` lines.
    pub fn table(&self) -> String {
        let width = self.0.iter().map(|t| t.0.len()).max().unwrap_or(4);
        let mut out = String::new();
        for (name, secs) in &self.0 {
            out.push_str(&format!("  {name:<width$}  {secs:>6.1}s\n"));
        }
        let total: f64 = self.0.iter().map(|t| t.1).sum();
        out.push_str(&format!("  {:<width$}  {total:>6.1}s\n", "total"));
        out
    }
}

/// A packed package, as the caller packed and unpacked it.
pub struct Plugin {
    /// The row id DSH mounts it under.
    pub row: &'static str,
    /// The package name from its manifest.
    pub name: String,
    /// The `.tgz`.
    pub tarball: PathBuf,
    /// Where the tarball was unpacked (its CLIs run from there).
    pub unpacked: PathBuf,
    /// The package's generated `cordis.patch.yml` (`packages/<row>/cordis.patch.yml`).
    pub patch_file: PathBuf,
    /// Its module, relative to the package: `pkg/<out>_bg.wasm`.
    pub wasm: String,
    /// The `bin` commands it ships, each `bin/<command>.js`.
    pub bins: &'static [&'static str],
}

/// Every packed package installed into one fresh dsh home.
pub struct Harness {
    /// Node, pnpm, dsh.
    pub toolchain: Toolchain,
    /// `target/<name>/`.
    pub dir: PathBuf,
    /// The throwaway `DSH_HOME`.
    pub home: PathBuf,
    /// The layer comments `--dump-config` printed above each package's row.
    pub layers: Vec<String>,
    /// The packages added.
    pub plugins: Vec<Plugin>,
}

/// Makes a fresh `DSH_HOME` under `target/<name>/`, adds every packed package to its headless
/// profile and checks `--dump-config` for each row.
pub fn setup(
    name: &str,
    timings: &mut Timings,
    toolchain: Toolchain,
    plugins: Vec<Plugin>,
) -> Result<Harness> {
    let dir = root().join("target").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", rel(&dir)))?;
    }
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    let mut layers = Vec::new();
    for plugin in &plugins {
        timings.step(
            &format!("dsh plugin --profile headless add {}", plugin.name),
            || plugin_add(&toolchain, &home, plugin),
        )?;
    }
    for plugin in &plugins {
        layers.push(
            timings.step(&format!("dsh --dump-config ({})", plugin.row), || {
                dump_config(&toolchain, &home, plugin)
            })?,
        );
    }
    Ok(Harness {
        toolchain,
        dir,
        home,
        layers,
        plugins,
    })
}

fn plugin_add(toolchain: &Toolchain, home: &Path, packed: &Plugin) -> Result<()> {
    let mut cmd = toolchain.dsh(Some(home));
    cmd.current_dir(home)
        .args(["plugin", "--profile", "headless", "add"])
        .arg(&packed.tarball);
    util::run(&mut cmd)?;
    // The installed copy must be the tarball just packed (not, say, an older copy from the
    // shared pnpm store).
    let installed = home
        .join("profiles")
        .join("headless")
        .join("node_modules")
        .join(&packed.name);
    let unpacked = &packed.unpacked;
    for file in ["lib/index.js", packed.wasm.as_str()] {
        let a = std::fs::read(installed.join(file))
            .with_context(|| format!("{} was not installed", installed.join(file).display()))?;
        if a != std::fs::read(unpacked.join(file))? {
            bail!(
                "the installed {file} is not the one in {}",
                rel(&packed.tarball)
            );
        }
    }
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(
        home.join("profiles").join("headless").join("package.json"),
    )?)?;
    let bundles = &manifest["dsh"]["profile"]["bundles"];
    if !bundles
        .as_array()
        .is_some_and(|b| b.iter().any(|x| x == packed.name.as_str()))
    {
        bail!(
            "the headless profile's bundles do not list {} (got {bundles})",
            packed.name
        );
    }
    println!("plugin add: the headless profile bundles {bundles}");
    Ok(())
}

/// The row `id` of a list of rows or of `- insert:` lists.
fn find_row<'a>(value: &'a Value, id: &str) -> Option<&'a Value> {
    value.as_array()?.iter().find_map(|item| {
        if item["id"] == id {
            Some(item)
        } else {
            find_row(&item["insert"], id)
        }
    })
}

fn dump_config(toolchain: &Toolchain, home: &Path, packed: &Plugin) -> Result<String> {
    let id = packed.row;
    let mut cmd = toolchain.dsh(Some(home));
    cmd.current_dir(home)
        .args(["--profile", "headless", "--dump-config"]);
    let dump = util::stdout_of(&mut cmd)?;
    let layer = format!("# == {}", packed.name);
    let lines: Vec<&str> = dump.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == layer) else {
        bail!(
            "--dump-config shows no `{layer}` layer; its layers are:\n{}",
            lines
                .iter()
                .filter(|l| l.starts_with("# =="))
                .copied()
                .collect::<Vec<_>>()
                .join("\n")
        );
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("# =="))
        .map_or(lines.len(), |i| start + 1 + i);
    let block = lines[start + 1..end].join("\n");
    let dumped = crate::yaml::value(toolchain, &block)?;
    let row = find_row(&dumped, id)
        .with_context(|| format!("the `{layer}` layer holds no {id} row:\n{block}"))?;
    if row["name"] != packed.name.as_str() {
        bail!(
            "the dumped row's name is {}, not {}",
            row["name"],
            packed.name
        );
    }
    let bundle_file = &packed.patch_file;
    let bundle = crate::yaml::value(toolchain, &std::fs::read_to_string(bundle_file)?)?;
    let bundle_row =
        find_row(&bundle, id).with_context(|| format!("{} has no {id} row", rel(bundle_file)))?;
    let defaults = (config::row(id)
        .context("no such row in crates/config")?
        .defaults)();
    for (what, expected) in [
        (rel(bundle_file).as_str(), &bundle_row["config"]),
        ("crates/config defaults", &defaults),
    ] {
        let diffs = differences(expected, &row["config"], "config");
        if !diffs.is_empty() {
            bail!(
                "the dumped {id} row differs from {what}:\n  {}",
                diffs.join("\n  ")
            );
        }
    }
    let keys = row["config"].as_object().map_or(0, |m| m.len());
    println!(
        "dump-config: `{layer}` layer (lines {}-{}) holds the {id} row with all {keys} defaults",
        start + 1,
        end
    );
    Ok(layer)
}

/// Paths where two JSON values differ.
fn differences(expected: &Value, actual: &Value, at: &str) -> Vec<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let mut out = Vec::new();
            for (k, ev) in e {
                match a.get(k) {
                    Some(av) => out.extend(differences(ev, av, &format!("{at}.{k}"))),
                    None => out.push(format!("{at}.{k} is missing")),
                }
            }
            for k in a.keys().filter(|k| !e.contains_key(*k)) {
                out.push(format!("{at}.{k} is not expected"));
            }
            out
        }
        // 15 and 15.0 are the same YAML/JSON number.
        (Value::Number(e), Value::Number(a)) if e.as_f64() == a.as_f64() => Vec::new(),
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .flat_map(|(i, (ev, av))| differences(ev, av, &format!("{at}[{i}]")))
            .collect(),
        _ if expected == actual => Vec::new(),
        _ => vec![format!("{at}: expected {expected}, got {actual}")],
    }
}

/// One finished `dsh --profile headless "<task>"` run.
pub struct Turn {
    /// Scenario name.
    pub name: String,
    /// The scratch cwd.
    pub cwd: PathBuf,
    /// Exit code.
    pub code: Option<i32>,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Every request the mock received.
    pub requests: Vec<Request>,
    /// Unconsumed script replies.
    pub unused: usize,
}

impl Turn {
    /// The conversation requests (those offering tools), in order.
    pub fn conversation(&self) -> Vec<&Request> {
        self.requests
            .iter()
            .filter(|r| r.is_conversation())
            .collect()
    }

    /// Exit code, stdout and the tail of stderr, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code,
            self.stdout.trim_end(),
            tail(&self.stderr, 40)
        )
    }
}

/// `cmd` (program, arguments, environment and directory) run by `unshare -p -f --mount-proc`.
fn in_pid_namespace(cmd: &Command) -> Command {
    let mut wrapped = Command::new("unshare");
    wrapped
        .args(["-p", "-f", "--mount-proc", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// A scenario's run: where, what, and with which overlay.
pub struct TurnSpec<'a> {
    /// Scenario name (names its patch and log files).
    pub name: &'a str,
    /// The scratch directory under `work/`, the turn's cwd (kept as an earlier turn left it).
    pub dir: &'a str,
    /// The task given to dsh.
    pub task: &'a str,
    /// Files to create in the scratch cwd.
    pub files: &'a [(&'a str, &'a str)],
    /// The model's script.
    pub script: Vec<Reply>,
    /// A `--patch` overlay (YAML), if any.
    pub patch: Option<&'a str>,
    /// Run dsh in a PID namespace of its own (`unshare -p -f --mount-proc`): it sees none of the
    /// processes outside, as in a container that shares the host name and boot id.
    pub pid_namespace: bool,
}

impl Harness {
    /// Runs one headless turn against a fresh mock.
    pub fn turn(&self, spec: TurnSpec<'_>) -> Result<Turn> {
        let cwd = self.dir.join("work").join(spec.dir);
        std::fs::create_dir_all(&cwd)?;
        for (file, text) in spec.files {
            let path = cwd.join(file);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, text)?;
        }
        let mock = MockModel::start(spec.script)?;
        let mut cmd = self.toolchain.dsh(Some(&self.home));
        cmd.current_dir(&cwd)
            .env("DEEPSEEK_BASE_URL", mock.base_url())
            .env("DEEPSEEK_SEARCH_BASE_URL", mock.search_base_url())
            .env("DEEPSEEK_API_KEY", "mock-key")
            .args(["--profile", "headless"]);
        if let Some(patch) = spec.patch {
            let file = self.dir.join("patches").join(format!("{}.yml", spec.name));
            std::fs::create_dir_all(file.parent().expect("has a parent"))?;
            std::fs::write(&file, patch)?;
            cmd.arg("--patch").arg(&file);
        }
        cmd.arg(spec.task);
        if spec.pid_namespace {
            cmd = in_pid_namespace(&cmd);
        }
        let logs = self.dir.join("logs");
        std::fs::create_dir_all(&logs)?;
        let out_file = logs.join(format!("{}.stdout", spec.name));
        let err_file = logs.join(format!("{}.stderr", spec.name));
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_file)?)
            .stderr(std::fs::File::create(&err_file)?);
        println!(
            "$ (cd {} && DEEPSEEK_BASE_URL={} dsh --profile headless{} {:?})",
            rel(&cwd),
            mock.base_url(),
            if spec.patch.is_some() {
                format!(" --patch target/.../patches/{}.yml", spec.name)
            } else {
                String::new()
            },
            spec.task
        );
        let started = Instant::now();
        let mut child = cmd.spawn().context("starting dsh")?;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if started.elapsed() > TURN_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "dsh did not finish within {}s; see {}",
                    TURN_TIMEOUT.as_secs(),
                    rel(&err_file)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let errors = mock.errors();
        if !errors.is_empty() {
            bail!("the mock model could not serve dsh: {}", errors.join("; "));
        }
        let turn = Turn {
            name: spec.name.to_owned(),
            cwd,
            code: status.code(),
            stdout: std::fs::read_to_string(&out_file)?,
            stderr: std::fs::read_to_string(&err_file)?,
            requests: mock.requests(),
            unused: mock.unused(),
        };
        println!(
            "    exit {:?} in {:.1}s; {} requests ({} conversation)",
            turn.code,
            started.elapsed().as_secs_f64(),
            turn.requests.len(),
            turn.conversation().len()
        );
        Ok(turn)
    }

    /// The session log dsh wrote for a turn.
    pub fn session_log(&self, turn: &Turn) -> Result<PathBuf> {
        session_log::find(&self.home, &self.toolchain.node(), &turn.cwd)
    }

    /// The tool events (and prompts) a turn logged.
    pub fn logged(&self, turn: &Turn) -> Result<(PathBuf, Vec<Logged>)> {
        let file = self.session_log(turn)?;
        let texts = session_log::read_frames(&self.toolchain.node(), &file)?;
        Ok((file, session_log::logged(&texts)?))
    }

    /// A packed package's replay CLI (`bin/<cli>.js`) over a turn: `<cli> replay --json LOG` of
    /// the turn's session log, or, when `without` names tools, `<cli> replay EVENTS.jsonl` of the
    /// logged events minus those tools' calls, in the replay-event format
    /// ([`session_log::replay_line`]). Returns its output lines (each JSON); the inputs and
    /// outputs are kept in `target/<run>/replay/`. `config` is the row config the replay runs
    /// under (`--config`), the defaults when `None`.
    pub fn replay(
        &self,
        cli: &str,
        turn: &Turn,
        without: &[String],
        config: Option<&Value>,
    ) -> Result<Vec<Value>> {
        let package = self
            .plugins
            .iter()
            .find(|p| p.bins.contains(&cli))
            .with_context(|| format!("no package ships a `{cli}` CLI"))?;
        let script = package.unpacked.join("bin").join(format!("{cli}.js"));
        let dir = self.dir.join("replay");
        std::fs::create_dir_all(&dir)?;
        let mut cmd = Command::new(self.toolchain.node());
        cmd.arg(&script).arg("replay");
        if let Some(config) = config {
            let file = dir.join(format!("{}.{cli}.config.json", turn.name));
            std::fs::write(&file, config.to_string())?;
            cmd.arg("--config").arg(file);
        }
        let name = if without.is_empty() {
            cmd.arg("--json").arg(self.session_log(turn)?);
            format!("{}.{cli}", turn.name)
        } else {
            let (_, logged) = self.logged(turn)?;
            let lines: Vec<String> = logged
                .iter()
                .filter(|l| !matches!(l, Logged::Tool(t) if without.contains(&t.name)))
                .map(session_log::replay_line)
                .collect();
            let name = format!("{}.{cli}-without-{}", turn.name, without.join("-"));
            let input = dir.join(format!("{name}.jsonl"));
            std::fs::write(&input, lines.join("\n") + "\n")?;
            cmd.arg(input);
            name
        };
        let out = util::stdout_of(&mut cmd)?;
        std::fs::write(dir.join(format!("{name}.out.jsonl")), &out)?;
        out.lines()
            .map(|line| {
                serde_json::from_str(line)
                    .with_context(|| format!("`{cli} replay` printed a non-JSON line: {line}"))
            })
            .collect()
    }
}

/// A finished session log as a fixture keeps it: the header alone in the first frame, `seq`
/// contiguous from 0, `turn/end` last.
fn check_finished_log(texts: &[String]) -> Result<()> {
    let Some(first) = texts.first() else {
        bail!("no frames")
    };
    let header = session_log::events(std::slice::from_ref(first))?;
    if header.len() != 1 || header[0]["type"] != "session" {
        bail!("the first frame must hold exactly the session header line");
    }
    let all = session_log::events(texts)?;
    let mut seq = 0;
    for event in &all[1..] {
        // A packed chunk row (`seq0`, and `data.dt` holding the time gaps between its
        // members) stands for `dt.len() + 1` events.
        let (first, count) = match (&event["seq"], &event["seq0"]) {
            (Value::Number(n), _) => (n.as_i64(), 1),
            (_, Value::Number(n)) => (
                n.as_i64(),
                event["data"]["dt"]
                    .as_array()
                    .map_or(1, |d| d.len() as i64 + 1),
            ),
            _ => bail!("a record has neither seq nor seq0: {event}"),
        };
        if first != Some(seq) {
            bail!("seq is not contiguous: expected {seq}, found {event}");
        }
        seq += count;
    }
    if all.last().map(|e| &e["type"]) != Some(&Value::from("turn/end")) {
        bail!("the log does not end with turn/end");
    }
    Ok(())
}

/// What a log recorded, to compare a kept fixture with the run: the tool calls' names, then the
/// plugins whose messages were injected, in order.
fn log_story(texts: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let events = session_log::events(texts)?;
    let tools = session_log::logged(texts)?
        .into_iter()
        .filter_map(|l| match l {
            Logged::Tool(t) => Some(t.name),
            Logged::UserPrompt { .. } => None,
        })
        .collect();
    let notices = events
        .iter()
        .filter(|e| e["type"] == "user/message" && e["data"]["source"]["kind"] != "user")
        .filter_map(|e| {
            let source = &e["data"]["source"];
            ::session_log::producer(
                source["kind"].as_str()?,
                source["plugin"].as_str().map(str::to_owned),
            )
        })
        .collect();
    Ok((tools, notices))
}

/// Scrubs a turn's session log into `target/<run>/fixtures/` and checks it reads back as written
/// and is a finished log; with `update` copies it to `fixture` (relative to the root). The
/// committed fixture must exist, be a finished log, and record the same tool calls and plugin
/// messages as this run. Returns a report line.
pub fn keep_session_fixture(
    h: &Harness,
    turn: &Turn,
    fixture: &str,
    update: bool,
) -> Result<String> {
    let node = h.toolchain.node();
    let log = h.session_log(turn)?;
    let texts = session_log::read_frames(&node, &log)?;
    let scrub = Scrub::new(&turn.cwd, &h.home);
    let scrubbed = scrub.frames(&texts)?;
    let leaks = scrub.leaks(&scrubbed);
    if !leaks.is_empty() {
        bail!("scrubbing left machine paths in: {leaks:?}");
    }
    let committed = root().join(fixture);
    let fresh = h.dir.join("fixtures").join(
        committed
            .file_name()
            .context("a fixture path names a file")?,
    );
    std::fs::create_dir_all(fresh.parent().expect("has a parent"))?;
    session_log::write_frames(&node, &fresh, &scrubbed)?;
    let reread = session_log::read_frames(&node, &fresh)?;
    if reread != scrubbed {
        bail!("{} does not read back as written", rel(&fresh));
    }
    check_finished_log(&reread).with_context(|| format!("checking {}", rel(&fresh)))?;
    if update {
        std::fs::create_dir_all(committed.parent().context("a fixture path has a folder")?)?;
        std::fs::copy(&fresh, &committed)?;
        println!("fixture: wrote {fixture}");
    }
    if !committed.is_file() {
        bail!("{fixture} is missing; run `cargo xtask release-smoke --update-fixture`");
    }
    let kept = session_log::read_frames(&node, &committed)?;
    check_finished_log(&kept).with_context(|| format!("checking {fixture}"))?;
    let (run, held) = (log_story(&reread)?, log_story(&kept)?);
    if run != held {
        bail!(
            "{fixture} records tool calls {:?} and plugin messages {:?}, this run {:?} and {:?}; \
             run `cargo xtask release-smoke --update-fixture` and review it",
            held.0,
            held.1,
            run.0,
            run.1
        );
    }
    Ok(format!(
        "{fixture} ({} frames, {} bytes: tool calls {}) checks out; this run's log scrubbed to {} frames ({})",
        kept.len(),
        std::fs::metadata(&committed)?.len(),
        held.0.join(", "),
        scrubbed.len(),
        rel(&fresh)
    ))
}
