//! `cargo xtask bench`: what research-nudge costs, measured, with the budgets of issue 4.
//!
//! Runs the node benches in `bench/` on the pinned Node 24 and the native benches
//! (`bench/src/main.rs`, release build), prints one table and writes `target/bench/report.json`.
//! Every per-event bench runs in [`PROCESSES`] fresh processes (cold starts: one process per
//! run): a figure is the median of the processes' medians, with the min and max of every run;
//! every ratio compares the plugin with its baseline inside one round of one process. The machine
//! (CPU model, cores, load, date) is recorded with the figures and heads the table, a Markdown
//! table meant to be pasted: absolute figures move between machines, ratios hold.
//!
//! `--original DIR` also measures the original research-nudge (a built package at DIR whose
//! `lib/index.js` imports its dependencies from there) in the same run: its cold start in a host
//! and its cost per tool event, next to ours. Nothing of the original is part of this repository.
//!
//! `--profile` instead profiles the plugin's tool events (a build that keeps WebAssembly function
//! names), and `--wasm-study` builds the opt-level / wasm-opt variants and measures each one.
//!
//! The goals of the performance issue (research-nudge at its limit) are checked on every run and
//! printed as before → now: "before" is measured in the same run with `--before DIR` (a checkout
//! of the commit before the work, its `pkg/` built: the node benches load its package, its own
//! native bench runs from its tree), or else read from `bench/baseline.json`, which
//! `--before DIR --write-baseline` records.

use crate::util::{self, cargo_cmd, rel, root};
use crate::{build, dsh, node, packages, variant};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Budgets from issue 4.
const COLD_START_MS_BUDGET: f64 = 15.0;
const WASM_RAW_BUDGET: u64 = 300 * 1024;

/// The goals of the performance issues ("research-nudge at the physical limit", "the guards in
/// a real host").
const SUCCESS_ADDED_NS_GOAL: f64 = 500.0;
const STREAM_RATIO_GOAL: f64 = 1.2;
const BASH_FAILURE_ADDED_NS_GOAL: f64 = 5000.0;
const FINGERPRINT_GB_PER_S_GOAL: f64 = 1.0;
/// The original's cold start in a host, measured side by side (9.0 ms); with `--original` the
/// goal is the original's figure of the same run.
const HOST_COLD_START_MS_GOAL: f64 = 9.0;
const NATIVE_REPLAY_EVENTS_PER_S_GOAL: f64 = 5e6;
const GATE_ADDED_NS_GOAL: f64 = 3000.0;

/// Fresh processes per per-event bench (one in `--quick` runs).
const PROCESSES: usize = 3;

/// The by-kind groups of `bench/tool-event.mjs` the goals read.
const SUCCESSES: &str = "successes (reads, edits, bash exit 0, research, snoozes)";
const BASH_FAILURES: &str = "bash exit != 0 (1-3 KiB of output)";

/// The recorded "before" figures (see the module docs).
const BASELINE: &str = "bench/baseline.json";

fn usage() -> &'static str {
    "usage: cargo xtask bench [--package ROW]... [--quick] [--before DIR [--write-baseline]] [--original DIR] [--profile] [--wasm-study]\n\n  (no flag)     every bench, the table and target/bench/report.json\n  --package     only that package's benches: research-nudge or pain-point-check (the set below, report.json) or limit-break (memory at scale, target/bench/limit-break.json) or autoresearch (the keep rule against noise, and parallelism's wall time and cost per candidate through the real runner, target/bench/autoresearch.json)\n  --quick       fewer rounds (a smoke run; figures are noisier)\n  --before DIR  also measure the checkout DIR (the commit before, pkg/ built) in the same run\n  --write-baseline  with --before: record its figures in bench/baseline.json\n  --original DIR  also measure the original research-nudge, built at DIR (lib/index.js), in the same run\n  --profile     V8 CPU profile of the plugin's tool events, WebAssembly functions by name\n  --wasm-study  opt-level s/z/3 with and without wasm-opt (binaryen, installed into .cache/): size, cold start, cost per event"
}

/// `cargo xtask bench`.
pub fn run(args: &[String]) -> Result<()> {
    let (chosen, args) = packages::selected(args)?;
    let mut quick = false;
    let mut mode = "all";
    let mut before: Option<PathBuf> = None;
    let mut original: Option<PathBuf> = None;
    let mut write_baseline = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--before" => {
                let dir = it.next().context("--before needs a directory")?;
                before =
                    Some(std::fs::canonicalize(dir).with_context(|| format!("--before {dir}"))?);
            }
            "--original" => {
                let dir = it.next().context("--original needs a directory")?;
                original =
                    Some(std::fs::canonicalize(dir).with_context(|| format!("--original {dir}"))?);
            }
            "--write-baseline" => write_baseline = true,
            "--profile" => mode = "profile",
            "--wasm-study" => mode = "wasm-study",
            "-h" | "--help" => {
                println!("{}", usage());
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n{}", usage()),
        }
    }
    let bin = node::ensure_node()?;
    node::ensure_node_modules()?;
    let node = Node { bin };
    let out_dir = root().join("target").join("bench");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", rel(&out_dir)))?;
    let rows: Vec<&str> = chosen.iter().map(|p| p.row).collect();
    // research-nudge's set also measures pain-point-check (one table, one report.json).
    if rows.contains(&"research-nudge") || rows.contains(&"pain-point-check") {
        build::ensure_built(packages::research_nudge())?;
        match mode {
            "profile" => profile(&node, &out_dir)?,
            "wasm-study" => wasm_study(&node, &out_dir, quick)?,
            _ => all(
                &node,
                &out_dir,
                &Trees {
                    quick,
                    before: before.as_deref(),
                    original: original.as_deref(),
                    write_baseline,
                },
            )?,
        }
    }
    if rows.contains(&"autoresearch") && mode == "all" {
        println!("\n==> bench: autoresearch keep rule (crates/autoresearch/examples/noise.rs)");
        let text = crate::memory_bench::example("autoresearch-core", "noise")?;
        print!("{text}");
        let keep_rule: Value = serde_json::from_str(text.lines().last().unwrap_or("null"))?;
        build::ensure_built(packages::autoresearch())?;
        println!("\n==> bench: autoresearch parallelism (bench/autoresearch-parallel.mjs)");
        let runs: &[&str] = if quick { &["--runs", "1"] } else { &[] };
        let parallel = node.bench("autoresearch-parallel.mjs", runs)?;
        let path = out_dir.join("autoresearch.json");
        let report = serde_json::json!({"keep_rule": keep_rule, "parallel": parallel});
        std::fs::write(&path, format!("{report:#}\n"))
            .with_context(|| format!("writing {}", rel(&path)))?;
        println!("\nbench: wrote {}", rel(&path));
    }
    if rows.contains(&"limit-break") && mode == "all" {
        let package = packages::by_row("limit-break")?;
        build::ensure_built(package)?;
        let mut report = crate::memory_bench::bench(|script, args| node.bench(script, args))?;
        report["machine"] = machine();
        println!("  machine: {}", machine_line(&report["machine"]));
        let path = out_dir.join("limit-break.json");
        std::fs::write(&path, format!("{report:#}\n"))
            .with_context(|| format!("writing {}", rel(&path)))?;
        println!("\nbench: wrote {}", rel(&path));
    }
    Ok(())
}

struct Node {
    bin: PathBuf,
}

impl Node {
    /// Runs `bench/<script>` with `args`; its last stdout line is the JSON result.
    fn bench(&self, script: &str, args: &[&str]) -> Result<Value> {
        let mut cmd = Command::new(self.bin.join("node"));
        cmd.current_dir(root())
            .env("PATH", util::path_with_first(&self.bin)?)
            .arg("--expose-gc")
            .arg(Path::new("bench").join(script))
            .args(args);
        println!("$ {}", util::display(&cmd));
        let out = cmd
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running bench/{script}"))?;
        if !out.status.success() {
            bail!("bench/{script} failed ({})", out.status);
        }
        last_json(&out.stdout).with_context(|| format!("reading the result of bench/{script}"))
    }

    /// [`Node::bench`] in `processes` fresh processes, merged by [`merge_runs`].
    fn bench_in(&self, processes: usize, script: &str, args: &[&str]) -> Result<Value> {
        let runs = (0..processes.max(1))
            .map(|_| self.bench(script, args))
            .collect::<Result<Vec<_>>>()?;
        Ok(merge_runs(&runs))
    }
}

/// One result from several processes' results of the same bench: each statistic (an object with
/// a `median`) becomes the median of their medians, the min of their mins, the max of their
/// maxes, with the runs summed and the processes counted; anything else is the first one's.
fn merge_runs(runs: &[Value]) -> Value {
    let Some(first) = runs.first() else {
        return Value::Null;
    };
    match first {
        Value::Object(map) if map.contains_key("median") => {
            let of =
                |key: &str| -> Vec<f64> { runs.iter().filter_map(|r| r[key].as_f64()).collect() };
            let runs_total: u64 = runs.iter().filter_map(|r| r["runs"].as_u64()).sum();
            let processes: u64 = runs
                .iter()
                .map(|r| r["processes"].as_u64().unwrap_or(1))
                .sum();
            json!({
                "median": median(of("median")),
                "min": of("min").into_iter().fold(f64::INFINITY, f64::min),
                "max": of("max").into_iter().fold(f64::NEG_INFINITY, f64::max),
                "runs": runs_total,
                "processes": processes,
            })
        }
        Value::Object(map) => Value::Object(
            map.keys()
                .map(|key| {
                    let column: Vec<Value> = runs.iter().map(|r| r[key].clone()).collect();
                    (key.clone(), merge_runs(&column))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn last_json(stdout: &[u8]) -> Result<Value> {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .context("no JSON line on stdout")?;
    Ok(serde_json::from_str(line)?)
}

/// Runs the native benches (release build of `bench/`) over the stream file: this tree's, or
/// those of the checkout `tree` (built there, in its own target folder).
fn native(stream: &Path, quick: bool, tree: Option<&Path>) -> Result<Value> {
    let runs = (0..processes(quick))
        .map(|_| native_once(stream, quick, tree))
        .collect::<Result<Vec<_>>>()?;
    Ok(merge_runs(&runs))
}

/// Processes per per-event bench.
fn processes(quick: bool) -> usize {
    if quick { 1 } else { PROCESSES }
}

fn native_once(stream: &Path, quick: bool, tree: Option<&Path>) -> Result<Value> {
    let mut cmd = cargo_cmd(["run", "--quiet", "--release"]);
    if let Some(tree) = tree {
        cmd.arg("--manifest-path")
            .arg(tree.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", tree.join("target"));
    }
    cmd.args(["-p", "research-nudge-bench", "--"]);
    cmd.arg("--stream").arg(stream);
    if quick {
        cmd.arg("--quick");
    }
    println!("$ {}", util::display(&cmd));
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running the native benches")?;
    if !out.status.success() {
        bail!("the native benches failed ({})", out.status);
    }
    last_json(&out.stdout)
}

/// What the figures were measured on: CPU model, cores, memory, the load average, the date,
/// the toolchains and the commit.
fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let memory_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let kib = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            kib.split_whitespace().nth(1)?.parse::<f64>().ok()
        })
        .map(|kib| (kib / 1024.0 / 1024.0).round());
    let date = util::stdout_of(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])).ok();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned());
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = util::stdout_of(Command::new("rustc").arg("--version")).ok();
    let commit = util::stdout_of(Command::new("git").current_dir(root()).args([
        "rev-parse",
        "--short",
        "HEAD",
    ]))
    .ok();
    json!({
        "nproc": nproc,
        "cpu": cpu,
        "memory_gib": memory_gib,
        "load": load_average(),
        "date": date.map(|s| s.trim().to_owned()),
        "rustc": rustc.map(|s| s.trim().to_owned()),
        "node": crate::node::NODE_VERSION,
        "commit": commit.map(|s| s.trim().to_owned()),
    })
}

/// The 1-minute load average (how busy the shared machine was).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The machine in one line, for the table's head.
fn machine_line(m: &Value) -> String {
    format!(
        "{}, {} cores, {} GiB; load {} at the start, {} at the end; {}; Node {}, {}; commit {}",
        m["cpu"].as_str().unwrap_or("?"),
        m["nproc"],
        m["memory_gib"],
        m["load"],
        m["load_end"],
        m["date"].as_str().unwrap_or("?"),
        m["node"].as_str().unwrap_or("?"),
        m["rustc"].as_str().unwrap_or("?"),
        m["commit"].as_str().unwrap_or("?"),
    )
}

fn wasm_sizes(wasm: &Path) -> Result<(u64, u64)> {
    let bytes = std::fs::read(wasm).with_context(|| format!("reading {}", rel(wasm)))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&bytes)?;
    Ok((bytes.len() as u64, gz.finish()?.len() as u64))
}

/// The node and native figures the goals read, for the package at `root` (and the native benches
/// of `tree`, when it is another checkout).
fn goal_figures(
    node: &Node,
    root: &Path,
    tree: Option<&Path>,
    stream: &Path,
    quick: bool,
) -> Result<Value> {
    let (rounds, cold_runs) = if quick { ("5", "5") } else { ("21", "20") };
    let root_arg = root.display().to_string();
    let host = dsh::app_dir().display().to_string();
    println!("\n==> bench: per tool event of {}", rel(root));
    let tool_event = node.bench_in(
        processes(quick),
        "tool-event.mjs",
        &["--rounds", rounds, "--root", &root_arg],
    )?;
    println!(
        "\n==> bench: cold start of {} in a host (dsh's modules loaded first)",
        rel(root)
    );
    let cold_host = node.bench(
        "cold-start.mjs",
        &["--runs", cold_runs, "--root", &root_arg, "--host", &host],
    )?;
    println!(
        "\n==> bench: native Rust ({})",
        tree.map_or("this tree".into(), rel)
    );
    let native = native(stream, quick, tree)?;
    Ok(json!({
        "root": rel(root),
        "tool_event": tool_event,
        "cold_start_host": cold_host,
        "native": native,
    }))
}

/// One goal as measured: what, the figure, its unit, the target and whether it is met.
struct Goal {
    name: String,
    value: f64,
    unit: &'static str,
    target: String,
    met: bool,
}

/// The goals, read from one set of figures (this tree's, or the "before" ones).
fn goals(figures: &Value) -> Vec<Goal> {
    let t = &figures["tool_event"];
    let successes = f(&t["by_kind"][SUCCESSES]["added_ns"]["median"]);
    let ratio = f(&t["ratio"]["median"]);
    let bash = f(&t["by_kind"][BASH_FAILURES]["added_ns"]["median"]);
    let gb_per_s = figures["native"]["fingerprint"]["sizes"]
        .as_array()
        .and_then(|sizes| sizes.iter().find(|s| s["label"] == "64 KiB"))
        .map_or(f64::NAN, |s| {
            2.0 * fingerprint_window() / f(&s["ns"]["median"])
        });
    let cold = &figures["cold_start_host"];
    let cold_ms = f(&cold["in_process_ms"]["median"]);
    // Side by side with the original when it was measured in the same run.
    let (cold_goal, cold_target) = match cold["original"]["in_process_ms"]["median"].as_f64() {
        Some(original) => (
            original,
            format!("<= {original:.2} ms, the original's in this run"),
        ),
        None => (
            HOST_COLD_START_MS_GOAL,
            format!("<= {HOST_COLD_START_MS_GOAL} ms"),
        ),
    };
    let replay = f(&figures["native"]["replay"]["events_per_s"]["median"]);
    let gate = f(&figures["pain_point_check"]["per_call_ns"]["added"]["median"]);
    let gate_replay = f(&figures["native"]["gate_replay"]["events_per_s"]["median"]);
    let goal = |name: &str, value: f64, unit, target: String, met: bool| Goal {
        name: name.to_owned(),
        value,
        unit,
        target,
        met,
    };
    vec![
        goal(
            "research-nudge, successful events: added ns",
            successes,
            "ns",
            format!("< {SUCCESS_ADDED_NS_GOAL} ns"),
            successes < SUCCESS_ADDED_NS_GOAL,
        ),
        goal(
            "research-nudge, whole stream: ratio to the no-op listener",
            ratio,
            "x",
            format!("<= {STREAM_RATIO_GOAL}x"),
            ratio <= STREAM_RATIO_GOAL,
        ),
        goal(
            "research-nudge, failing bash, 1-3 KiB: added ns",
            bash,
            "ns",
            format!("<= {BASH_FAILURE_ADDED_NS_GOAL} ns"),
            bash <= BASH_FAILURE_ADDED_NS_GOAL,
        ),
        goal(
            "research-nudge, native fingerprint, 4 KiB windows: GB/s",
            gb_per_s,
            "GB/s",
            format!(">= {FINGERPRINT_GB_PER_S_GOAL} GB/s"),
            gb_per_s >= FINGERPRINT_GB_PER_S_GOAL,
        ),
        goal(
            "research-nudge, cold start in a host: import+instantiate+validate+apply ms",
            cold_ms,
            "ms",
            cold_target,
            cold_ms <= cold_goal,
        ),
        goal(
            "research-nudge, native replay: M events/s",
            replay / 1e6,
            "M/s",
            format!(">= {} M/s", NATIVE_REPLAY_EVENTS_PER_S_GOAL / 1e6),
            replay >= NATIVE_REPLAY_EVENTS_PER_S_GOAL,
        ),
        goal(
            "pain-point-check, native replay: M events/s",
            gate_replay / 1e6,
            "M/s",
            format!(">= {} M/s", NATIVE_REPLAY_EVENTS_PER_S_GOAL / 1e6),
            gate_replay >= NATIVE_REPLAY_EVENTS_PER_S_GOAL,
        ),
        goal(
            "pain-point-check, per tool call: added ns",
            gate,
            "ns",
            format!("<= {GATE_ADDED_NS_GOAL} ns"),
            gate <= GATE_ADDED_NS_GOAL,
        ),
    ]
}

/// Bytes of the two windows a long failure is fingerprinted through.
fn fingerprint_window() -> f64 {
    4096.0
}

/// The trees and options of one `cargo xtask bench` run.
struct Trees<'a> {
    quick: bool,
    /// `--before DIR`: an earlier checkout, measured in the same run.
    before: Option<&'a Path>,
    /// `--original DIR`: the original research-nudge, built, measured in the same run.
    original: Option<&'a Path>,
    write_baseline: bool,
}

fn all(node: &Node, out_dir: &Path, trees: &Trees<'_>) -> Result<()> {
    let quick = trees.quick;
    let mut machine = machine();
    let (rounds, cold_runs, memory_events) = if quick {
        ("5", "5", "200000")
    } else {
        ("21", "20", "1000000")
    };
    let processes = processes(quick);
    dsh::ensure()?;
    let stream = out_dir.join("stream.json");
    let stream_arg = stream.display().to_string();
    let original_arg = trees.original.map(|dir| dir.display().to_string());
    let with_original = |mut args: Vec<&'static str>| -> Vec<String> {
        let mut out: Vec<String> = args.drain(..).map(str::to_owned).collect();
        if let Some(dir) = &original_arg {
            out.extend(["--original".to_owned(), dir.clone()]);
        }
        out
    };

    println!("\n==> bench: per tool event (Cordis waterfall, default config)");
    let args = with_original(vec!["--rounds", rounds]);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--write-stream", &stream_arg]);
    let tool_event = node.bench_in(processes, "tool-event.mjs", &args)?;
    println!("\n==> bench: per tool event, a reminder on every event (worst case)");
    let nudging = node.bench_in(
        processes,
        "tool-event.mjs",
        &[
            "--rounds",
            rounds,
            "--label",
            "reminder on every event",
            "--config",
            r#"{"maxToolCallsWithoutResearch":1,"cooldownMinutes":0}"#,
        ],
    )?;
    println!("\n==> bench: failure text size, through the plugin");
    let failure_node = node.bench_in(processes, "failure-size.mjs", &["--rounds", rounds])?;
    println!("\n==> bench: cold start ({cold_runs} fresh processes)");
    let cold = node.bench("cold-start.mjs", &["--runs", cold_runs])?;
    println!("\n==> bench: memory");
    let memory = node.bench("memory.mjs", &["--events", memory_events])?;
    println!("\n==> bench: native Rust (policy replay, fingerprint)");
    let native = native(&stream, quick, None)?;
    println!("\n==> bench: cold start in a host (dsh's modules loaded first)");
    let host = dsh::app_dir().display().to_string();
    let args = with_original(vec!["--runs", cold_runs]);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--host", &host]);
    let cold_host = node.bench("cold-start.mjs", &args)?;

    println!("\n==> bench: pain-point-check per tool call (guard + tools/result) and cold start");
    let gate_package = packages::by_row("pain-point-check")?;
    build::ensure_built(gate_package)?;
    let (calls, gate_rounds) = if quick {
        ("20000", "5")
    } else {
        ("100000", "15")
    };
    let before_gate = trees.before.map(|tree| {
        tree.join("packages")
            .join("pain-point-check")
            .display()
            .to_string()
    });
    let mut args = vec![
        "--calls",
        calls,
        "--rounds",
        gate_rounds,
        "--runs",
        cold_runs,
    ];
    if let Some(dir) = &before_gate {
        args.extend(["--before", dir]);
    }
    let gate = node.bench_in(processes, "pain-point-check.mjs", &args)?;

    let now = json!({
        "root": "packages/research-nudge",
        "tool_event": tool_event,
        "cold_start_host": cold_host,
        "native": native,
        "pain_point_check": { "per_call_ns": gate["per_call_ns"] },
    });
    let before = match trees.before {
        Some(tree) => {
            let mut figures = goal_figures(
                node,
                &tree.join("packages").join("research-nudge"),
                Some(tree),
                &stream,
                quick,
            )?;
            let commit = util::stdout_of(Command::new("git").current_dir(tree).args([
                "rev-parse",
                "--short",
                "HEAD",
            ]))
            .map(|s| s.trim().to_owned())
            .unwrap_or_default();
            figures["commit"] = commit.into();
            // No machine path in a file that may be committed.
            figures["root"] = "packages/research-nudge of the --before checkout".into();
            figures["measured"] = "in the same run (--before)".into();
            figures["pain_point_check"] = json!({ "per_call_ns": {
                "added": gate["per_call_ns"]["before_added"],
                "ratio": gate["per_call_ns"]["before_ratio"],
            }});
            if trees.write_baseline {
                let path = root().join(BASELINE);
                let mut recorded = figures.clone();
                recorded["measured"] =
                    format!("recorded by cargo xtask bench --before (quick: {quick})").into();
                recorded["machine"] = machine.clone();
                std::fs::write(&path, format!("{recorded:#}\n"))
                    .with_context(|| format!("writing {}", rel(&path)))?;
                println!("bench: wrote {}", rel(&path));
            }
            Some(figures)
        }
        None => std::fs::read_to_string(root().join(BASELINE))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok()),
    };
    let (gate_raw, gate_gz) = wasm_sizes(&gate_package.glue_wasm())?;
    let (raw, gz) = wasm_sizes(&packages::research_nudge().glue_wasm())?;
    machine["load_end"] = load_average().into();

    let report = json!({
        "machine": machine,
        "quick": quick,
        "processes": processes,
        "tool_event": tool_event,
        "tool_event_nudging": nudging,
        "failure_size": { "node": failure_node, "native": native["fingerprint"] },
        "cold_start": cold,
        "wasm": { "raw_bytes": raw, "gzip_bytes": gz, "file": rel(&packages::research_nudge().glue_wasm()) },
        "memory": { "node": memory, "native": native["memory"] },
        "native_replay": native["replay"],
        "native_gate_replay": native["gate_replay"],
        "cold_start_host": cold_host,
        "goals": goal_report(before.as_ref(), &now),
        "pain_point_check": {
            "per_call": gate["per_call_ns"],
            "large_outputs_per_call": gate["large_outputs_per_call_ns"],
            "cold_start_ms": gate["cold_start_ms"],
            "wasm": { "raw_bytes": gate_raw, "gzip_bytes": gate_gz, "file": rel(&gate_package.glue_wasm()) },
        },
    });
    let budgets = budgets(&report);
    let mut report = report;
    report["budgets"] = budgets.clone();
    let path = out_dir.join("report.json");
    std::fs::write(&path, format!("{report:#}\n"))
        .with_context(|| format!("writing {}", rel(&path)))?;
    print_table(&report);
    println!("\nbench: wrote {}", rel(&path));
    Ok(())
}

fn goal_report(before: Option<&Value>, now: &Value) -> Value {
    let before_rows = before.map(goals);
    let rows: Vec<Value> = goals(now)
        .into_iter()
        .enumerate()
        .map(|(i, goal)| {
            let was = before_rows
                .as_ref()
                .and_then(|rows| rows.get(i))
                .map(|r| r.value)
                .filter(|v| v.is_finite());
            json!({
                "goal": goal.name,
                "before": was,
                "now": goal.value,
                "unit": goal.unit,
                "target": goal.target,
                "met": goal.met,
            })
        })
        .collect();
    json!({
        "before_commit": before.and_then(|b| b["commit"].as_str()),
        "before_measured": before.and_then(|b| b["measured"].as_str()),
        "rows": rows,
    })
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn budgets(r: &Value) -> Value {
    let cold = f(&r["cold_start"]["in_process_ms"]["median"]);
    let raw = r["wasm"]["raw_bytes"].as_u64().unwrap_or(u64::MAX);
    let flat = r["memory"]["node"]["flat"].as_bool().unwrap_or(false);
    let fp_flat = r["failure_size"]["node"]["flat"].as_bool().unwrap_or(false)
        && r["failure_size"]["native"]["flat"]
            .as_bool()
            .unwrap_or(false);
    json!([
        { "budget": "cold start median <= 15 ms", "value": cold, "met": cold <= COLD_START_MS_BUDGET },
        { "budget": ".wasm raw <= 300 KB", "value": raw, "met": raw <= WASM_RAW_BUDGET },
        { "budget": "failure cost flat past the window", "value": fp_flat, "met": fp_flat },
        { "budget": "memory flat over 10^6 events", "value": flat, "met": flat },
    ])
}

fn mmm(v: &Value, unit: &str, scale: f64, digits: usize) -> String {
    format!(
        "{:.digits$} {unit} (min {:.digits$}, max {:.digits$})",
        f(&v["median"]) * scale,
        f(&v["min"]) * scale,
        f(&v["max"]) * scale
    )
}

/// Prints the report as a Markdown table (to paste into a README), the machine first.
fn print_table(r: &Value) {
    let mut rows: Vec<(String, String)> = Vec::new();
    rows.push(("machine".into(), machine_line(&r["machine"])));
    rows.push((
        "processes per per-event figure".into(),
        format!(
            "{} (a figure: the median of their medians; min and max over all their rounds)",
            r["processes"]
        ),
    ));
    for (key, title) in [
        ("tool_event", "realistic stream, default config"),
        ("tool_event_nudging", "reminder on every event"),
    ] {
        let t = &r[key];
        rows.push((
            format!("tool event: {title}"),
            format!(
                "baseline {} · plugin {}",
                mmm(&t["baseline_ns"], "ns", 1.0, 0),
                mmm(&t["plugin_ns"], "ns", 1.0, 0)
            ),
        ));
        rows.push((
            "  ratio · added".into(),
            format!(
                "{} · {}",
                mmm(&t["ratio"], "x", 1.0, 2),
                mmm(&t["added_ns"], "ns", 1.0, 0)
            ),
        ));
    }
    if let Some(kinds) = r["tool_event"]["by_kind"].as_object() {
        for (kind, v) in kinds {
            rows.push((
                format!("  added: {kind}"),
                format!(
                    "{} ({:.0}% of the stream)",
                    mmm(&v["added_ns"], "ns", 1.0, 0),
                    f(&v["share"]) * 100.0
                ),
            ));
        }
    }
    if let Some(sizes) = r["failure_size"]["node"]["sizes"].as_array() {
        for s in sizes {
            rows.push((
                format!(
                    "failure {} (node, added/event)",
                    s["label"].as_str().unwrap_or("?")
                ),
                format!(
                    "{} · ratio {}",
                    mmm(&s["added_ns"], "ns", 1.0, 0),
                    mmm(&s["ratio"], "x", 1.0, 2)
                ),
            ));
        }
    }
    if let Some(sizes) = r["failure_size"]["native"]["sizes"].as_array() {
        for s in sizes {
            rows.push((
                format!(
                    "failure {} (native fingerprint)",
                    s["label"].as_str().unwrap_or("?")
                ),
                format!(
                    "{} · {:.0} MB/s of failure text",
                    mmm(&s["ns"], "ns", 1.0, 0),
                    f(&s["text_mb_per_s"])
                ),
            ));
        }
    }
    let c = &r["cold_start"];
    rows.push((
        "cold start (import+instantiate+validate)".into(),
        format!(
            "{} wall · {} CPU",
            mmm(&c["in_process_ms"], "ms", 1.0, 2),
            mmm(&c["in_process_cpu_ms"], "ms", 1.0, 2)
        ),
    ));
    rows.push((
        "  whole process (spawn to exit)".into(),
        mmm(&c["process_ms"], "ms", 1.0, 1),
    ));
    rows.push((
        ".wasm size".into(),
        format!(
            "{} bytes raw, {} bytes gzipped",
            r["wasm"]["raw_bytes"], r["wasm"]["gzip_bytes"]
        ),
    ));
    let mem = &r["memory"]["node"];
    rows.push((
        "memory per agent (node)".into(),
        format!(
            "{:.0} B wasm heap + {:.0} B JS heap; native AgentState {} B",
            f(&mem["per_agent"]["wasm_bytes"]),
            f(&mem["per_agent"]["js_heap_bytes"]),
            r["memory"]["native"]["agent_state_bytes"]
        ),
    ));
    rows.push((
        format!(
            "memory over {} events, {} agents",
            mem["events"], mem["agents"]
        ),
        format!(
            "wasm {} -> {} B, JS heap {} -> {} B (growth {:.3} B/event)",
            mem["first"]["wasm_bytes"],
            mem["last"]["wasm_bytes"],
            mem["first"]["js_heap_bytes"],
            mem["last"]["js_heap_bytes"],
            f(&mem["growth_bytes_per_event"])
        ),
    ));
    let n = &r["native_replay"];
    rows.push((
        "native policy replay (same stream)".into(),
        format!(
            "{} · {}",
            mmm(&n["events_per_s"], "M events/s", 1e-6, 2),
            mmm(&n["ns_per_event"], "ns/event", 1.0, 0)
        ),
    ));
    let n = &r["native_gate_replay"];
    rows.push((
        "native pain-point-check gate replay (its bench's call mix)".into(),
        format!(
            "{} · {}",
            mmm(&n["events_per_s"], "M events/s", 1e-6, 2),
            mmm(&n["ns_per_event"], "ns/event", 1.0, 0)
        ),
    ));
    let g = &r["pain_point_check"];
    rows.push((
        "pain-point-check per tool call: baseline -> plugin".into(),
        format!(
            "{} -> {}",
            mmm(&g["per_call"]["baseline"], "ns", 1.0, 0),
            mmm(&g["per_call"]["plugin"], "ns", 1.0, 0)
        ),
    ));
    rows.push((
        "  added · ratio".into(),
        format!(
            "{} · {}",
            mmm(&g["per_call"]["added"], "ns", 1.0, 0),
            mmm(&g["per_call"]["ratio"], "x", 1.0, 2)
        ),
    ));
    if !g["per_call"]["before_added"].is_null() {
        rows.push((
            "  the --before checkout (same rounds): added · ratio".into(),
            format!(
                "{} · {}",
                mmm(&g["per_call"]["before_added"], "ns", 1.0, 0),
                mmm(&g["per_call"]["before_ratio"], "x", 1.0, 2)
            ),
        ));
    }
    let large = &g["large_outputs_per_call"];
    rows.push((
        format!(
            "  successes with {}-character outputs: added (--before: added)",
            large["output_chars"]
        ),
        format!(
            "{} ({})",
            mmm(&large["added"], "ns", 1.0, 0),
            if large["before_added"].is_null() {
                "-".into()
            } else {
                mmm(&large["before_added"], "ns", 1.0, 0)
            }
        ),
    ));
    rows.push((
        "  cold start (import+instantiate+validate)".into(),
        mmm(&g["cold_start_ms"], "ms", 1.0, 2),
    ));
    rows.push((
        "  .wasm size".into(),
        format!(
            "{} bytes raw, {} bytes gzipped",
            g["wasm"]["raw_bytes"], g["wasm"]["gzip_bytes"]
        ),
    ));
    for b in r["budgets"].as_array().into_iter().flatten() {
        rows.push((
            format!("budget: {}", b["budget"].as_str().unwrap_or("?")),
            format!(
                "{} ({})",
                if b["met"].as_bool() == Some(true) {
                    "met"
                } else {
                    "MISSED"
                },
                b["value"]
            ),
        ));
    }
    let c = &r["cold_start_host"];
    for (who, c) in [("", c), (" (the original, same run)", &c["original"])] {
        if c.is_null() {
            continue;
        }
        rows.push((
            format!("cold start in a host (dsh's modules loaded first){who}"),
            format!(
                "{} wall · {} CPU",
                mmm(&c["in_process_ms"], "ms", 1.0, 2),
                mmm(&c["in_process_cpu_ms"], "ms", 1.0, 2)
            ),
        ));
        rows.push((
            "  import+instantiate · validate · apply".into(),
            format!(
                "{} · {} · {}",
                mmm(&c["import_ms"], "ms", 1.0, 2),
                mmm(&c["validate_ms"], "ms", 1.0, 2),
                mmm(&c["apply_ms"], "ms", 1.0, 2)
            ),
        ));
    }
    if !c["ratio_to_original"].is_null() {
        rows.push((
            "  ours / the original's, per pair of processes".into(),
            mmm(&c["ratio_to_original"], "x", 1.0, 2),
        ));
    }
    let o = &r["tool_event"]["original"];
    if !o.is_null() {
        rows.push((
            "tool event, the original (same rounds): ratio · added".into(),
            format!(
                "{} · {}",
                mmm(&o["ratio"], "x", 1.0, 2),
                mmm(&o["added_ns"], "ns", 1.0, 0)
            ),
        ));
        if let Some(kinds) = o["by_kind"].as_object() {
            for (kind, v) in kinds {
                rows.push((
                    format!("  the original, added: {kind}"),
                    mmm(&v["added_ns"], "ns", 1.0, 0),
                ));
            }
        }
    }
    let g = &r["goals"];
    let from = match (g["before_commit"].as_str(), g["before_measured"].as_str()) {
        (Some(commit), Some(how)) => format!("before = commit {commit}, {how}"),
        _ => format!("no before figures (run with --before DIR, or record {BASELINE})"),
    };
    rows.push((format!("goals: before -> now ({from})"), String::new()));
    for row in g["rows"].as_array().into_iter().flatten() {
        let unit = row["unit"].as_str().unwrap_or("");
        let digits = if unit == "ns" { 0 } else { 2 };
        let before = row["before"]
            .as_f64()
            .map_or("?".to_owned(), |v| format!("{v:.digits$}"));
        rows.push((
            format!("  goal: {}", row["goal"].as_str().unwrap_or("?")),
            format!(
                "{before} -> {:.digits$} {unit} (goal {}): {}",
                f(&row["now"]),
                row["target"].as_str().unwrap_or("?"),
                if row["met"].as_bool() == Some(true) {
                    "met"
                } else {
                    "MISSED"
                }
            ),
        ));
    }
    println!("\nbench results (median, min, max over runs)\n");
    println!("| measure | figure |");
    println!("|---|---|");
    for (k, v) in rows {
        // A leading space would be lost in Markdown: sub-rows are marked with a middle dot.
        let k = match k.strip_prefix("  ") {
            Some(sub) => format!("· {sub}"),
            None => k,
        };
        println!("| {k} | {v} |");
    }
}

fn profile(node: &Node, out_dir: &Path) -> Result<()> {
    let dir = out_dir.join("variants").join("names");
    variant::build(
        &variant::Variant {
            keep_names: true,
            ..variant::Variant::SHIPPED
        },
        packages::research_nudge(),
        &dir,
    )?;
    let result = node.bench("profile.mjs", &["--root", &dir.display().to_string()])?;
    println!(
        "bench: {:.0} ns/event under the profiler (sampling inflates it)",
        f(&result["ns_per_event"])
    );
    Ok(())
}

fn wasm_study(node: &Node, out_dir: &Path, quick: bool) -> Result<()> {
    let rounds = if quick { "5" } else { "15" };
    let cold_runs = if quick { "5" } else { "20" };
    let with_wasm_opt = match variant::wasm_opt_cmd() {
        Ok(_) => true,
        Err(e) => {
            println!("bench: no wasm-opt ({e:#}); studying opt-levels only");
            false
        }
    };
    let mut variants: Vec<(String, variant::Variant)> = Vec::new();
    for level in ["s", "z", "3"] {
        let base = variant::Variant {
            opt_level: level,
            ..variant::Variant::SHIPPED
        };
        variants.push((format!("opt-level {level}"), base.clone()));
        if with_wasm_opt {
            let flags: &'static [&'static str] = match level {
                "s" => &["-Os"],
                "z" => &["-Oz"],
                _ => &["-O3"],
            };
            variants.push((
                format!("opt-level {level} + wasm-opt {}", flags[0]),
                variant::Variant {
                    wasm_opt: Some(flags),
                    ..base
                },
            ));
        }
    }
    let mut results = Vec::new();
    for (i, (label, v)) in variants.iter().enumerate() {
        println!("\n==> bench: wasm study: {label}");
        let dir = out_dir.join("variants").join(format!("study-{i}"));
        variant::build(v, packages::research_nudge(), &dir)?;
        let root_arg = dir.display().to_string();
        let (raw, gz) = wasm_sizes(&variant::wasm_path(&dir, packages::research_nudge()))?;
        let cold = node.bench(
            "cold-start.mjs",
            &["--runs", cold_runs, "--root", &root_arg],
        )?;
        let event = node.bench("tool-event.mjs", &["--rounds", rounds, "--root", &root_arg])?;
        let failure = node.bench(
            "failure-size.mjs",
            &["--rounds", rounds, "--root", &root_arg, "--only", "64 KiB"],
        )?;
        results.push(json!({
            "variant": label,
            "raw_bytes": raw,
            "gzip_bytes": gz,
            "cold_start_ms": cold["in_process_ms"],
            "cold_start_cpu_ms": cold["in_process_cpu_ms"],
            "added_ns": event["added_ns"],
            "ratio": event["ratio"],
            "failure_64k_added_ns": failure["sizes"][0]["added_ns"],
        }));
    }
    let report = json!({ "machine": machine(), "variants": results });
    let path = out_dir.join("wasm-study.json");
    std::fs::write(&path, format!("{report:#}\n"))?;
    println!("\nwasm study (median [min..max])");
    println!(
        "  {:<30} {:>8} {:>8} {:>22} {:>22} {:>24} {:>24}",
        "variant",
        "raw B",
        "gzip B",
        "cold start ms",
        "cold start CPU ms",
        "added ns/event",
        "64 KiB failure ns"
    );
    let cell = |v: &Value, d: usize| {
        format!(
            "{:.d$} [{:.d$}..{:.d$}]",
            f(&v["median"]),
            f(&v["min"]),
            f(&v["max"])
        )
    };
    for v in &results {
        println!(
            "  {:<30} {:>8} {:>8} {:>22} {:>22} {:>24} {:>24}",
            v["variant"].as_str().unwrap_or("?"),
            v["raw_bytes"],
            v["gzip_bytes"],
            cell(&v["cold_start_ms"], 2),
            cell(&v["cold_start_cpu_ms"], 2),
            cell(&v["added_ns"], 0),
            cell(&v["failure_64k_added_ns"], 0)
        );
    }
    println!("\nbench: wrote {}", rel(&path));
    Ok(())
}
