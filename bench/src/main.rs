//! Native benches of research-nudge, run by `cargo xtask bench` (release build):
//!
//! - the policy replaying the same realistic stream the node bench uses (`--stream FILE`, written
//!   by `bench/tool-event.mjs`), in events per second;
//! - `fingerprint::fingerprint` over `Failure::windows` of 1 KiB, 64 KiB, 1 MiB and 10 MiB failure
//!   texts (the cost must stay flat past the two bounded windows);
//! - the size of one agent's state;
//! - pain-point-check's gate replaying the call mix of `bench/pain-point-check.mjs` (8 agents:
//!   reads, greps, globs, edits, writes, bash with 30 % of its calls failing, a reply answering
//!   the check on 2 % of calls), driven as the shim drives it, in events per second.
//!
//! Every figure is the median of several timed runs, with min and max. The result is one JSON
//! object on the last line of stdout.

use fingerprint::{Failure, fingerprint};
use policy::{AgentState, Millis, Policy, ToolCall};
use research_nudge_bench::report::median;
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    if let Err(message) = run() {
        eprintln!("research-nudge-bench: {message}");
        std::process::exit(1);
    }
}

struct Options {
    stream: Option<String>,
    quick: bool,
    /// `--work KIND --times N`: only do N units of one kind of work, untimed (for callgrind).
    work: Option<(String, usize)>,
}

fn options() -> Result<Options, String> {
    let mut out = Options {
        stream: None,
        quick: false,
        work: None,
    };
    let mut times = 0usize;
    let mut work = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stream" => out.stream = Some(args.next().ok_or("--stream needs a file")?),
            "--quick" => out.quick = true,
            "--work" => work = Some(args.next().ok_or("--work needs a kind")?),
            "--times" => {
                times = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--times needs a count")?;
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    out.work = work.map(|kind| (kind, times));
    Ok(out)
}

fn run() -> Result<(), String> {
    let opt = options()?;
    if let Some((kind, times)) = &opt.work {
        return work(kind, *times, opt.stream.as_deref());
    }
    let runs = if opt.quick { 5 } else { 21 };
    let replay = match &opt.stream {
        Some(path) => replay(path, runs)?,
        None => Value::Null,
    };
    let fingerprint = fingerprint_sizes(runs);
    let memory = json!({
        "agent_state_bytes": std::mem::size_of::<AgentState>(),
        "note": "size_of::<AgentState>() on this (64-bit) host; the WebAssembly figure is in memory.node",
    });
    let gate_replay = gate_replay(runs);
    println!(
        "{}",
        json!({ "replay": replay, "fingerprint": fingerprint, "memory": memory, "gate_replay": gate_replay })
    );
    Ok(())
}

/// The units of work `--work` can repeat, untimed, for a deterministic count on a busy machine:
/// run one under `valgrind --tool=callgrind` twice (N and 2N times) and divide the difference
/// of the instruction counts by N, so the setup cancels out.
///
/// - `fingerprint-4k`: a 4 KiB failure, whole (head only), every normalized byte hashed;
/// - `fingerprint-64k`: a 64 KiB failure through its two 4 KiB windows;
/// - `shell-2k`: a 2 KiB shell failure as the policy fingerprints it (exit code, tail only);
/// - `replay`: one event of the stream (`--stream`), as the replay bench runs it;
/// - `gate`: one call of pain-point-check's gate stream, as its replay bench runs it.
fn work(kind: &str, times: usize, stream: Option<&str>) -> Result<(), String> {
    let one = |bytes: usize, shell: bool| {
        let text = failure_text(bytes);
        let (head, tail) = Failure::windows(&text);
        let failure = if shell {
            Failure {
                tool: "bash",
                exit_code: Some(1),
                head: "",
                tail: if tail.is_empty() { head } else { tail },
            }
        } else {
            Failure {
                tool: "bash",
                exit_code: None,
                head,
                tail,
            }
        };
        for _ in 0..times {
            black_box(fingerprint(black_box(&failure)));
        }
    };
    match kind {
        "fingerprint-4k" => one(4 << 10, false),
        "fingerprint-64k" => one(64 << 10, false),
        "shell-2k" => one(2 << 10, true),
        "gate" => {
            let settings = gate_settings();
            black_box(gate_calls(&settings, &gate_stream(&settings, 4096), times));
        }
        "replay" => {
            let (events, agents) = read_stream(stream.ok_or("--work replay needs --stream")?)?;
            let mut policy = Policy::new(config::research_nudge::RowConfig::default().settings());
            let mut states: Vec<AgentState> = (0..agents).map(|_| AgentState::new(0)).collect();
            for i in 0..times {
                let e = &events[i % events.len()];
                observe(&mut policy, &mut states, e, i as Millis);
            }
        }
        other => return Err(format!("unknown --work `{other}`")),
    }
    Ok(())
}

/// One event of the stream through the policy, as the plugin runs it: the failure windows only
/// for failures (as the shim slices them), one `observe`.
fn observe(policy: &mut Policy, states: &mut [AgentState], e: &Event, now: Millis) -> bool {
    let failed = !e.ok || e.exit_code.is_some_and(|c| c != 0);
    let (head, tail) = if failed {
        Failure::windows(&e.text)
    } else {
        ("", "")
    };
    let call = ToolCall {
        name: &e.name,
        ok: e.ok,
        exit_code: e.exit_code,
        killed: false,
        timed_out: false,
        head,
        tail,
        unknown_tool: false,
        snooze_minutes: e.snooze_minutes,
    };
    let observation = policy.observe(&mut states[e.agent], now, black_box(&call));
    matches!(observation, policy::Observation::Nudge { .. })
}

/// One call of the gate's stream: the agent, the tool (resolved once, as the shim's interned
/// ids are) and whether its results are read, its arguments as JSON text, whether it fails
/// (exit code 1), whether a reply that answers the check follows it.
struct Call {
    agent: usize,
    tool: gate::Tool,
    reads_results: bool,
    args: String,
    failing: bool,
    reply: bool,
}

/// The mix of `bench/pain-point-check.mjs`, from a small deterministic generator (xorshift).
fn gate_stream(settings: &gate::Settings, count: usize) -> Vec<Call> {
    const NAMES: [&str; 8] = [
        "read", "grep", "edit", "bash", "bash", "write", "glob", "bash",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    (0..count)
        .map(|_| {
            let agent = next(8) as usize;
            let name = NAMES[next(8) as usize];
            let failing = name == "bash" && next(10) < 3;
            let args = format!(
                r#"{{"command":"cmd {}","path":"src/f{}.rs"}}"#,
                next(4),
                next(6)
            );
            let tool = gate::Tool::new(settings, name.to_owned());
            Call {
                agent,
                reads_results: gate::AgentGate::reads_results_of(settings, &tool),
                tool,
                args,
                failing,
                reply: next(50) == 0,
            }
        })
        .collect()
}

/// The gate over [`gate_stream`], as the shim drives it: `pre_execute` only while the gate may
/// deny, a denial's result as an error and only for a tool whose results are read, the arguments
/// parsed and the text fingerprinted only when the gate counts the result, replies only while
/// pending.
fn gate_replay(runs: usize) -> Value {
    let settings = gate_settings();
    let calls = gate_stream(&settings, 4096);
    let per_run = 1_000_000usize;
    let mut ns = Vec::new();
    let mut denials = 0u64;
    for run in 0..=runs {
        let t0 = Instant::now();
        let denied = gate_calls(&settings, &calls, per_run);
        let elapsed = t0.elapsed().as_nanos() as f64;
        denials += denied;
        if run > 0 {
            ns.push(elapsed / per_run as f64);
        }
    }
    let eps: Vec<f64> = ns.iter().map(|n| 1e9 / n).collect();
    json!({
        "events_per_run": per_run,
        "stream_events": calls.len(),
        "ns_per_event": stats(ns),
        "events_per_s": stats(eps),
        "denials": denials,
    })
}

fn gate_settings() -> gate::Settings {
    config::pain_point_check::RowConfig::default().settings()
}

/// `count` calls of `calls` (cycled) through fresh gates, as [`gate_replay`] describes; returns
/// the denials.
fn gate_calls(settings: &gate::Settings, calls: &[Call], count: usize) -> u64 {
    use gate::{
        AgentGate, Decision, Outcome, Shot, ToolFacts, canonical_args_hash_str, failure_keys,
    };
    const ANSWER: &str = "blocker=the test runner cannot load the fixture\nruled_out=a path typo: the file exists\nbest_path=print the loader search path";
    let mut gates = [AgentGate::new(); 8];
    let mut denials = 0u64;
    for i in 0..count {
        let call = &calls[i % calls.len()];
        let gate = &mut gates[call.agent];
        let mut denial = None;
        if gate.may_deny() {
            let args = canonical_args_hash_str(&call.args);
            if let Decision::Deny { reason, .. } = gate.pre_execute(settings, &call.tool, args) {
                denial = Some(reason);
            }
        }
        let (outcome, text) = match &denial {
            Some(reason) => (Outcome::error(), reason.as_str()),
            None if call.failing => (Outcome::exited(1), "[exit code: 1]"),
            None => (Outcome::success(), "ok"),
        };
        denials += u64::from(denial.is_some());
        if call.reads_results {
            let shot = || Shot::from_json(&call.tool, &call.args);
            let failure = || failure_keys(call.tool.name(), &outcome, text, "");
            black_box(gate.on_result(settings, &call.tool, shot, outcome, failure));
        }
        if call.reply && gate.is_pending() {
            black_box(gate.on_assistant_text(settings, ANSWER));
        }
    }
    denials
}

/// Median, min and max.
fn stats(mut values: Vec<f64>) -> Value {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    json!({ "median": median(values.clone()), "min": values[0], "max": values[n - 1], "runs": n })
}

/// One event of the stream file.
struct Event {
    agent: usize,
    name: String,
    ok: bool,
    exit_code: Option<i64>,
    text: String,
    snooze_minutes: Option<u32>,
}

fn read_stream(path: &str) -> Result<(Vec<Event>, usize), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| format!("parsing {path}: {e}"))?;
    let agents = value["agents"].as_u64().ok_or("stream without agents")? as usize;
    let events = value["events"]
        .as_array()
        .ok_or("stream without events")?
        .iter()
        .map(|e| Event {
            agent: e["agent"].as_u64().unwrap_or(0) as usize % agents.max(1),
            name: e["name"].as_str().unwrap_or("").to_owned(),
            ok: e["ok"].as_bool().unwrap_or(true),
            exit_code: e["exitCode"].as_i64(),
            text: e["text"].as_str().unwrap_or("").to_owned(),
            snooze_minutes: e["snoozeMinutes"].as_u64().map(|m| m as u32),
        })
        .collect();
    Ok((events, agents))
}

/// The policy over the stream, as the plugin runs it: per event the clock, the failure windows
/// (only for failures, as the shim slices them), one `observe`.
fn replay(path: &str, runs: usize) -> Result<Value, String> {
    let (events, agents) = read_stream(path)?;
    let mut policy = Policy::new(config::research_nudge::RowConfig::default().settings());
    let start = Instant::now();
    let mut states: Vec<AgentState> = (0..agents).map(|_| AgentState::new(0)).collect();
    let per_run = 1_000_000usize;
    let mut ns = Vec::new();
    let mut nudges = 0u64;
    for run in 0..=runs {
        let t0 = Instant::now();
        for i in 0..per_run {
            let e = &events[i % events.len()];
            let now = start.elapsed().as_millis() as Millis;
            if observe(&mut policy, &mut states, e, now) {
                nudges += 1;
            }
        }
        let elapsed = t0.elapsed().as_nanos() as f64;
        if run > 0 {
            // Run 0 warms caches and the name cache.
            ns.push(elapsed / per_run as f64);
        }
    }
    let eps: Vec<f64> = ns.iter().map(|n| 1e9 / n).collect();
    Ok(json!({
        "events_per_run": per_run,
        "agents": agents,
        "stream_events": events.len(),
        "ns_per_event": stats(ns),
        "events_per_s": stats(eps),
        "nudges": nudges,
    }))
}

/// A failure text of `bytes` bytes shaped like test output (stack frames, assertions, numbers).
pub fn failure_text(bytes: usize) -> String {
    let files = [
        "src/app.ts",
        "src/lib/parse.ts",
        "tests/parse.test.ts",
        "src/main.rs",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = String::with_capacity(bytes + 128);
    let mut i = 0usize;
    while text.len() < bytes {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let n = 10 + (seed >> 33) % 900;
        let line = match i % 7 {
            0 => format!(
                "  at Object.<anonymous> (/home/dev/project/{}:{n}:{})",
                files[i % files.len()],
                (n * 7) % 80
            ),
            3 => format!(
                "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: {n} !== {}",
                n + 1
            ),
            _ => format!("    ✗ parses case {n} ({}.{} ms)", n / 10, n % 10),
        };
        text.push_str(&line);
        text.push('\n');
        i += 1;
    }
    let cut = text::head_bytes(&text, bytes).len();
    text.truncate(cut);
    text
}

fn fingerprint_sizes(runs: usize) -> Value {
    let sizes = [
        ("1 KiB", 1usize << 10),
        ("64 KiB", 64 << 10),
        ("1 MiB", 1 << 20),
        ("10 MiB", 10 << 20),
    ];
    let mut rows = Vec::new();
    let mut medians = Vec::new();
    for (label, bytes) in sizes {
        let text = failure_text(bytes);
        let (head, tail) = Failure::windows(&text);
        let failure = Failure {
            tool: "bash",
            exit_code: Some(1),
            head,
            tail,
        };
        // Enough calls for ~10 ms per timed run.
        let t0 = Instant::now();
        let mut calls = 0u32;
        while t0.elapsed().as_millis() < 10 {
            black_box(fingerprint(black_box(&failure)));
            calls += 1;
        }
        let mut ns = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            for _ in 0..calls {
                black_box(fingerprint(black_box(&failure)));
            }
            ns.push(t.elapsed().as_nanos() as f64 / f64::from(calls));
        }
        let summary = stats(ns);
        let median = summary["median"].as_f64().unwrap_or(f64::NAN);
        medians.push(median);
        rows.push(json!({
            "label": label,
            "bytes": text.len(),
            "ns": summary,
            "text_mb_per_s": text.len() as f64 / median * 1e3,
        }));
    }
    // Past the windows (64 KiB and up) the cost must not grow with the text.
    let past = &medians[1..];
    let lo = past.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = past.iter().copied().fold(0.0, f64::max);
    json!({
        "sizes": rows,
        "flat": hi <= 1.5 * lo,
        "window_bytes": fingerprint::WINDOW_BYTES,
    })
}
