//! `cargo xtask bench`: what research-nudge costs, measured, with the budgets of issue 4.
//!
//! Runs the node benches in `bench/` on the pinned Node 24 and the native benches
//! (`bench/src/main.rs`, release build), prints one table and writes `target/bench/report.json`.
//! Every figure is the median of several runs with their min and max; every ratio compares the
//! plugin with its baseline inside one round of one process.
//!
//! `--profile` instead profiles the plugin's tool events (a build that keeps WebAssembly function
//! names), and `--wasm-study` builds the opt-level / wasm-opt variants and measures each one.

use crate::util::{self, cargo_cmd, rel, root};
use crate::{build, node, packages, variant};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Budgets from issue 4.
const RATIO_BUDGET: f64 = 1.5;
const ADDED_NS_BUDGET: f64 = 2000.0;
const COLD_START_MS_BUDGET: f64 = 15.0;
const WASM_RAW_BUDGET: u64 = 300 * 1024;

fn usage() -> &'static str {
    "usage: cargo xtask bench [--quick] [--profile] [--wasm-study]\n\n  (no flag)     every bench, the table and target/bench/report.json\n  --quick       fewer rounds (a smoke run; figures are noisier)\n  --profile     V8 CPU profile of the plugin's tool events, WebAssembly functions by name\n  --wasm-study  opt-level s/z/3 with and without wasm-opt (binaryen, installed into .cache/): size, cold start, cost per event"
}

/// `cargo xtask bench`.
pub fn run(args: &[String]) -> Result<()> {
    let mut quick = false;
    let mut mode = "all";
    for arg in args {
        match arg.as_str() {
            "--quick" => quick = true,
            "--profile" => mode = "profile",
            "--wasm-study" => mode = "wasm-study",
            "-h" | "--help" => {
                println!("{}", usage());
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n{}", usage()),
        }
    }
    build::ensure_built(packages::research_nudge())?;
    let bin = node::ensure_node()?;
    node::ensure_node_modules()?;
    let node = Node { bin };
    let out_dir = root().join("target").join("bench");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", rel(&out_dir)))?;
    match mode {
        "profile" => profile(&node, &out_dir),
        "wasm-study" => wasm_study(&node, &out_dir, quick),
        _ => all(&node, &out_dir, quick),
    }
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

/// Runs the native benches (release build of `bench/`) over the stream file.
fn native(stream: &Path, quick: bool) -> Result<Value> {
    let mut cmd = cargo_cmd([
        "run",
        "--quiet",
        "--release",
        "-p",
        "research-nudge-bench",
        "--",
    ]);
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

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
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
        "rustc": rustc.map(|s| s.trim().to_owned()),
        "node": crate::node::NODE_VERSION,
        "commit": commit.map(|s| s.trim().to_owned()),
    })
}

fn wasm_sizes(wasm: &Path) -> Result<(u64, u64)> {
    let bytes = std::fs::read(wasm).with_context(|| format!("reading {}", rel(wasm)))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&bytes)?;
    Ok((bytes.len() as u64, gz.finish()?.len() as u64))
}

fn all(node: &Node, out_dir: &Path, quick: bool) -> Result<()> {
    let (rounds, cold_runs, memory_events) = if quick {
        ("5", "5", "200000")
    } else {
        ("21", "20", "1000000")
    };
    let stream = out_dir.join("stream.json");
    let stream_arg = stream.display().to_string();

    println!("\n==> bench: per tool event (Cordis waterfall, default config)");
    let tool_event = node.bench(
        "tool-event.mjs",
        &["--rounds", rounds, "--write-stream", &stream_arg],
    )?;
    println!("\n==> bench: per tool event, a reminder on every event (worst case)");
    let nudging = node.bench(
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
    let failure_node = node.bench("failure-size.mjs", &["--rounds", rounds])?;
    println!("\n==> bench: cold start ({cold_runs} fresh processes)");
    let cold = node.bench("cold-start.mjs", &["--runs", cold_runs])?;
    println!("\n==> bench: memory");
    let memory = node.bench("memory.mjs", &["--events", memory_events])?;
    println!("\n==> bench: native Rust (policy replay, fingerprint)");
    let native = native(&stream, quick)?;
    println!("\n==> bench: pain-point-check per tool call (guard + tools/result) and cold start");
    let gate_package = packages::by_row("pain-point-check")?;
    build::ensure_built(gate_package)?;
    let (calls, gate_rounds) = if quick {
        ("20000", "5")
    } else {
        ("100000", "15")
    };
    let gate = node.bench(
        "pain-point-check.mjs",
        &[
            "--calls",
            calls,
            "--rounds",
            gate_rounds,
            "--runs",
            cold_runs,
        ],
    )?;
    let (gate_raw, gate_gz) = wasm_sizes(&gate_package.glue_wasm())?;
    let (raw, gz) = wasm_sizes(&packages::research_nudge().glue_wasm())?;

    let report = json!({
        "machine": machine(),
        "quick": quick,
        "tool_event": tool_event,
        "tool_event_nudging": nudging,
        "failure_size": { "node": failure_node, "native": native["fingerprint"] },
        "cold_start": cold,
        "wasm": { "raw_bytes": raw, "gzip_bytes": gz, "file": rel(&packages::research_nudge().glue_wasm()) },
        "memory": { "node": memory, "native": native["memory"] },
        "native_replay": native["replay"],
        "pain_point_check": {
            "per_call": gate["per_call_ns"],
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

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn budgets(r: &Value) -> Value {
    let ratio = f(&r["tool_event"]["ratio"]["median"]);
    let added = f(&r["tool_event"]["added_ns"]["median"]);
    let cold = f(&r["cold_start"]["in_process_ms"]["median"]);
    let raw = r["wasm"]["raw_bytes"].as_u64().unwrap_or(u64::MAX);
    let flat = r["memory"]["node"]["flat"].as_bool().unwrap_or(false);
    let fp_flat = r["failure_size"]["node"]["flat"].as_bool().unwrap_or(false)
        && r["failure_size"]["native"]["flat"]
            .as_bool()
            .unwrap_or(false);
    json!([
        { "budget": "ratio per tool event <= 1.5", "value": ratio, "met": ratio <= RATIO_BUDGET },
        { "budget": "added per tool event < 2 µs", "value": added, "met": added < ADDED_NS_BUDGET },
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

fn print_table(r: &Value) {
    let mut rows: Vec<(String, String)> = Vec::new();
    let m = &r["machine"];
    rows.push((
        "machine".into(),
        format!(
            "{} cores, {}, Node {}, {}",
            m["nproc"],
            m["cpu"].as_str().unwrap_or("?"),
            m["node"].as_str().unwrap_or("?"),
            m["rustc"].as_str().unwrap_or("?")
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
                "baseline {} | plugin {}",
                mmm(&t["baseline_ns"], "ns", 1.0, 0),
                mmm(&t["plugin_ns"], "ns", 1.0, 0)
            ),
        ));
        rows.push((
            "  ratio | added".into(),
            format!(
                "{} | {}",
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
                    "{} | ratio {}",
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
                    "{} | {:.0} MB/s of failure text",
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
            "{} wall | {} CPU",
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
            "{} | {}",
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
        "  added | ratio".into(),
        format!(
            "{} | {}",
            mmm(&g["per_call"]["added"], "ns", 1.0, 0),
            mmm(&g["per_call"]["ratio"], "x", 1.0, 2)
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
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    println!("\nbench results (median, min, max over runs)");
    for (k, v) in rows {
        println!("  {k:<width$}  {v}");
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
