//! The bench report: the figures of several processes merged, the performance goals and
//! budgets read from them, and the report as a Markdown table. Pure functions over the report's
//! JSON, shared by the native benches and `cargo xtask bench`, which measures and prints.

use serde_json::{Value, json};

/// The recorded "before" figures (see `cargo xtask bench`).
pub const BASELINE: &str = "bench/baseline.json";

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

/// The by-kind groups of `bench/tool-event.mjs` the goals read.
const SUCCESSES: &str = "successes (reads, edits, bash exit 0, research, snoozes)";
const BASH_FAILURES: &str = "bash exit != 0 (1-3 KiB of output)";

/// One result from several processes' results of the same bench: each statistic (an object with
/// a `median`) becomes the median of their medians, the min of their mins, the max of their
/// maxes, with the runs summed and the processes counted; anything else is the first one's.
pub fn merge_runs(runs: &[Value]) -> Value {
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

/// The median (NaN of nothing).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The machine in one line, for the table's head.
pub fn machine_line(m: &Value) -> String {
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
    let successes = figure(&t["by_kind"][SUCCESSES]["added_ns"]["median"]);
    let ratio = figure(&t["ratio"]["median"]);
    let bash = figure(&t["by_kind"][BASH_FAILURES]["added_ns"]["median"]);
    let gb_per_s = figures["native"]["fingerprint"]["sizes"]
        .as_array()
        .and_then(|sizes| sizes.iter().find(|s| s["label"] == "64 KiB"))
        .map_or(f64::NAN, |s| {
            2.0 * fingerprint_window() / figure(&s["ns"]["median"])
        });
    let cold = &figures["cold_start_host"];
    let cold_ms = figure(&cold["in_process_ms"]["median"]);
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
    let replay = figure(&figures["native"]["replay"]["events_per_s"]["median"]);
    let gate = figure(&figures["pain_point_check"]["per_call_ns"]["added"]["median"]);
    let gate_replay = figure(&figures["native"]["gate_replay"]["events_per_s"]["median"]);
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

/// The goals, before → now, as the report records them.
pub fn goal_report(before: Option<&Value>, now: &Value) -> Value {
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

/// A figure of the report as a number (NaN when it is missing).
pub fn figure(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The budgets of issue 4, read from the report.
pub fn budgets(r: &Value) -> Value {
    let cold = figure(&r["cold_start"]["in_process_ms"]["median"]);
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
        figure(&v["median"]) * scale,
        figure(&v["min"]) * scale,
        figure(&v["max"]) * scale
    )
}

/// The report as a Markdown table (to paste into a README), the machine first.
pub fn table(r: &Value) -> String {
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
                    figure(&v["share"]) * 100.0
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
                    figure(&s["text_mb_per_s"])
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
            figure(&mem["per_agent"]["wasm_bytes"]),
            figure(&mem["per_agent"]["js_heap_bytes"]),
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
            figure(&mem["growth_bytes_per_event"])
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
                figure(&row["now"]),
                row["target"].as_str().unwrap_or("?"),
                if row["met"].as_bool() == Some(true) {
                    "met"
                } else {
                    "MISSED"
                }
            ),
        ));
    }
    let mut out = String::from("| measure | figure |\n|---|---|\n");
    for (k, v) in rows {
        // A leading space would be lost in Markdown: sub-rows are marked with a middle dot.
        let k = match k.strip_prefix("  ") {
            Some(sub) => format!("· {sub}"),
            None => k,
        };
        out.push_str(&format!("| {k} | {v} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_several_processes_merge_statistic_by_statistic() {
        let runs = [
            json!({"x": {"median": 10.0, "min": 8.0, "max": 12.0, "runs": 5}, "label": "a"}),
            json!({"x": {"median": 30.0, "min": 2.0, "max": 31.0, "runs": 5}, "label": "b"}),
            json!({"x": {"median": 20.0, "min": 9.0, "max": 40.0, "runs": 5}, "label": "c"}),
        ];
        assert_eq!(
            merge_runs(&runs),
            json!({"x": {"median": 20.0, "min": 2.0, "max": 40.0, "runs": 15, "processes": 3}, "label": "a"})
        );
        assert!(median(Vec::new()).is_nan());
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn the_table_heads_with_the_machine_and_marks_what_a_budget_misses() {
        let report = json!({
            "machine": {"cpu": "CPU", "nproc": 2, "memory_gib": 24.0, "date": "today"},
            "cold_start": {"in_process_ms": {"median": 20.0}},
            "wasm": {"raw_bytes": 1000},
        });
        expect_test::expect![[r#"
            | measure | figure |
            |---|---|
            | machine | CPU, 2 cores, 24.0 GiB; load null at the start, null at the end; today; Node ?, ?; commit ? |
            | processes per per-event figure | null (a figure: the median of their medians; min and max over all their rounds) |
            | tool event: realistic stream, default config | baseline NaN ns (min NaN, max NaN) · plugin NaN ns (min NaN, max NaN) |
            | · ratio · added | NaN x (min NaN, max NaN) · NaN ns (min NaN, max NaN) |
            | tool event: reminder on every event | baseline NaN ns (min NaN, max NaN) · plugin NaN ns (min NaN, max NaN) |
            | · ratio · added | NaN x (min NaN, max NaN) · NaN ns (min NaN, max NaN) |
            | cold start (import+instantiate+validate) | 20.00 ms (min NaN, max NaN) wall · NaN ms (min NaN, max NaN) CPU |
            | · whole process (spawn to exit) | NaN ms (min NaN, max NaN) |
            | .wasm size | 1000 bytes raw, null bytes gzipped |
            | memory per agent (node) | NaN B wasm heap + NaN B JS heap; native AgentState null B |
            | memory over null events, null agents | wasm null -> null B, JS heap null -> null B (growth NaN B/event) |
            | native policy replay (same stream) | NaN M events/s (min NaN, max NaN) · NaN ns/event (min NaN, max NaN) |
            | native pain-point-check gate replay (its bench's call mix) | NaN M events/s (min NaN, max NaN) · NaN ns/event (min NaN, max NaN) |
            | pain-point-check per tool call: baseline -> plugin | NaN ns (min NaN, max NaN) -> NaN ns (min NaN, max NaN) |
            | · added · ratio | NaN ns (min NaN, max NaN) · NaN x (min NaN, max NaN) |
            | · successes with null-character outputs: added (--before: added) | NaN ns (min NaN, max NaN) (-) |
            | · cold start (import+instantiate+validate) | NaN ms (min NaN, max NaN) |
            | · .wasm size | null bytes raw, null bytes gzipped |
            | goals: before -> now (no before figures (run with --before DIR, or record bench/baseline.json)) |  |
        "#]].assert_eq(&table(&report));
        let budgets = budgets(&report);
        assert_eq!(
            budgets[0]["met"], false,
            "20 ms misses the 15 ms cold start budget"
        );
        assert_eq!(budgets[1]["met"], true);
        assert!(figure(&json!("x")).is_nan());
    }
}
