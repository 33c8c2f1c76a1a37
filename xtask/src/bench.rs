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
use research_nudge_bench::report::{
    BASELINE, budgets, figure, goal_report, machine_line, merge_runs, table,
};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fresh processes per per-event bench (one in `--quick` runs).
const PROCESSES: usize = 3;

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
    println!("\nbench results (median, min, max over runs)\n");
    print!("{}", table(&report));
    println!("\nbench: wrote {}", rel(&path));
    Ok(())
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
        figure(&result["ns_per_event"])
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
            figure(&v["median"]),
            figure(&v["min"]),
            figure(&v["max"])
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
