//! The `autoresearch` DSH tool's texts and shapes: its parameter and output schemas, the model
//! guidance, the child agent's round prompt, section and report tool, the report check, and the
//! renderings of the tool output and the job output. The shim registers and drives; every word
//! the models read comes from here; the adapter only passes JSON text through.

use crate::metric::report_too_long;
use crate::protocol::ProposalReport;
use crate::spec::MAX_OBJECTIVE_CHARS;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// The tool name.
pub const TOOL_NAME: &str = "autoresearch";
/// The child-scoped report tool's name.
pub const REPORT_TOOL_NAME: &str = "autoresearch_report";
/// Tools a proposal child may use (intersected with the tools that exist), besides the report.
pub const CHILD_TOOLS: [&str; 5] = ["read", "write", "edit", "glob", "grep"];
/// A bad report value as errors show it: 60 characters and an ellipsis, as config errors do.
const VALUE_PREVIEW_CHARS: usize = 61;
/// Experiments the rendered tool output lists at most.
const RENDER_WINDOW: usize = 10;

const DESCRIPTION: &str = "Run a bounded, metric-driven optimization loop in an isolated git worktree of the repository. A baseline is measured first; then each round a child agent edits only files matching mutable_globs, the evaluator you name (a shell-free argv) measures one number printed as the last stdout line ({\"<metric_name>\": <number>}), and the change is kept only when it strictly improves that number. Your checkout and branches are never touched; results live on the run branch autoresearch/<run_tag>-<run_id>. Runs in the background by default (collect the result with job_output, stop it with job_kill); mode: \"foreground\" blocks until the run ends (inside a Code Mode program, only as long as the program may run: start long runs in the background there). Resume an interrupted run with resume_run_id; end one nobody will resume with abandon_run_id. Use it only when the user asks for an autoresearch/optimization run.";

/// The tool's parameter schema (JSON Schema; validated in Rust, not by DSH).
pub fn parameters() -> Value {
    let paths = |d: &str| json!({"type": "array", "items": {"type": "string"}, "description": d});
    let evaluator = |d: &str, command: &str, args: &str| {
        json!({
            "type": "object",
            "description": d,
            "properties": {
                "command": {"type": "string", "description": command},
                "args": {"type": "array", "items": {"type": "string"}, "description": args},
                "cwd": {"type": "string", "description": "Working directory relative to the repository root (default `.`)."}
            },
            "required": ["command"],
            "additionalProperties": false
        })
    };
    json!({
        "type": "object",
        "properties": {
            "objective": {"type": "string", "description": format!("What to improve, handed to every proposal round (at most {MAX_OBJECTIVE_CHARS} characters). Required for a new run.")},
            "mutable_globs": paths("Relative globs of the only paths a proposal may change, anchored at the repository root (`src` is only that path; use `src/**` for a directory). Required for a new run."),
            "evaluation": evaluator(
                "The evaluator, run without a shell in the worktree. Required for a new run.",
                "Program (a name on PATH or a path).",
                "Arguments, passed exactly.",
            ),
            "metric_name": {"type": "string", "description": "Key of the metric in the JSON object on the evaluator's last stdout line. Required for a new run."},
            "metric_direction": {"type": "string", "enum": ["minimize", "maximize"], "description": "Which way is better. Required for a new run."},
            "run_tag": {"type": "string", "description": "Fresh tag for a new run (lowercase letters, digits, `.`, `_`, `-`). Give exactly one of run_tag and resume_run_id."},
            "resume_run_id": {"type": "string", "description": "The run id of an interrupted run to continue (its stored policy is used)."},
            "abandon_run_id": {"type": "string", "description": "The run id of an unfinished run to end instead: its leftover processes are stopped, it is cancelled and its lock released. Only repository and reason go with it."},
            "reason": {"type": "string", "description": "Why the run is abandoned (with abandon_run_id)."},
            "force": {"type": "boolean", "description": "With resume_run_id or abandon_run_id: take the run over even when its host cannot be proven dead (another machine, boot or PID namespace, or still alive). Only when the user says that run is no longer driven anywhere."},
            "constraints": paths("Single-line rules every proposal round must follow."),
            "exceptional_allowlists": {
                "type": "object",
                "description": "Protected things a run may use after all: {dependencies, evaluators, datasets, submodules} (relative paths; an evaluators entry that is a directory, `.` for the root, lets mutable_globs cover the directory the evaluator runs in) and gitConfig (git config keys such as filter.lfs.smudge, or .git/config, that define programs git would run).",
                "additionalProperties": true
            },
            "timeout_ms": {"type": "integer", "description": "Per-attempt timeout for the evaluator and each proposal round."},
            "max_experiments": {"type": "integer", "description": "Candidate budget (the baseline is extra)."},
            "max_consecutive_failures": {"type": "integer", "description": "Failed rounds in a row that end the run (default 3)."},
            "max_stale_experiments": {"type": "integer", "description": "End the run early (budget-limited, reason plateau) after this many candidates in a row without a kept one."},
            "repeats": {"type": "integer", "description": "Evaluations of the baseline, and at most of each candidate's screening and confirmation, 1-20 (default 1). With 2 or more a candidate is screened one sample at a time and the best promising one of each generation is kept only when fresh samples pass Welch's one-sided t-test at 2.5 %, so noise is not kept."},
            "parallelism": {"type": "integer", "description": "Candidates proposed and evaluated at once, each by its own child agent in its own worktree, 1 to the row's maxParallelism (default 1). Of those that beat the best, the best (with repeats 2 or more: once confirmed on fresh samples) is kept and the others are recorded as superseded; the next ones start from it. Each evaluator gets AUTORESEARCH_SLOT=0..parallelism-1."},
            "target": {"type": "number", "description": "Stop as soon as the best metric reaches this value (inclusive)."},
            "holdout": evaluator(
                "A second evaluator printing the same metric on held-out data, run on the baseline and on each kept candidate and never shown to the proposal agents; its program and data paths must be absolute and outside the repository. The result warns when a kept candidate's holdout is not better than the best's before it.",
                "Program (a name on PATH or an absolute path).",
                "Arguments, passed exactly; paths absolute, outside the repository.",
            ),
            "holdout_stop": {"type": "boolean", "description": "With holdout: end the run (budget-limited, reason holdout-diverged) instead of warning when the holdout diverges."},
            "provenance": {
                "type": "object",
                "description": "Labels {evaluator?, dataset?}; a label that is a path in the repository is hashed and protected.",
                "additionalProperties": true
            },
            "environment": {
                "type": "object",
                "description": "Evaluator environment variables (string values; no DSH_ prefix). Stored only as hashes: a resume must pass the same values again.",
                "additionalProperties": true
            },
            "repository": {"type": "string", "description": "Repository directory, relative to your working directory (default: your working directory)."},
            "mode": {"type": "string", "enum": ["background", "foreground"], "description": "background (default): a dsh job; foreground: wait for the result."}
        },
        "required": [],
        "additionalProperties": false
    })
}

/// The tool's output schema, in DSH's enforced JSON Schema subset.
pub fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["background", "background-start-failed", "foreground"]}
        },
        "required": ["kind"],
        "additionalProperties": true
    })
}

/// The parent agents' prompt section.
pub const GUIDANCE: &str = "# autoresearch\nThe `autoresearch` tool runs a metric-driven keep/reject optimization loop in an isolated git worktree (a baseline first, then child-agent proposals that may edit only `mutable_globs`, each kept only when the evaluator's metric strictly improves). Call it only when the user explicitly asks for an autoresearch or optimization run, with an evaluator that prints the metric as JSON on its last stdout line. It runs as a background job by default: keep working or wait with `job_output` (wait: true) on the returned job id; `job_kill` cancels it. An interrupted run continues with `resume_run_id`.";

/// The child agent's prompt section.
pub const CHILD_SECTION: &str = "# autoresearch proposal round\nYou are one proposal round of an autoresearch run, working in the run's own git worktree (your working directory). Make one focused change to files matching mutable_globs that you expect to improve the metric, then call `autoresearch_report` exactly once with your hypothesis and a summary of the change; that ends the round. Read a file before you write or edit it. Do not run programs or touch other files: the host evaluates your change, and paths outside mutable_globs (the evaluator above all) make the round a policy violation.";

/// The child's first (and only) user message for one round.
pub fn round_prompt(handoff: &str) -> String {
    format!(
        "AUTORESEARCH PROPOSAL ROUND\n\nThe run's state follows as JSON: objective, constraints, mutable_globs, the metric and its direction, the target, the best metric so far, the remaining budget, and the recent experiments with their hypotheses, outcomes and failures (learn from them; do not repeat a rejected idea).\n\n{handoff}\n\nMake one change now (read before you write), then call `{REPORT_TOOL_NAME}` with `hypothesis` (why this should improve the metric) and `summary` (what you changed)."
    )
}

/// The report tool's definition fields (name, description, parameters).
pub fn report_tool() -> Value {
    json!({
        "name": REPORT_TOOL_NAME,
        "description": "Finish this autoresearch proposal round: report your hypothesis and what you changed. Call it exactly once, after your edit; it ends the round.",
        "parameters": {
            "type": "object",
            "properties": {
                "hypothesis": {"type": "string", "description": "Why the change should improve the metric."},
                "summary": {"type": "string", "description": "What you changed, in a sentence or two."}
            },
            "required": ["hypothesis", "summary"],
            "additionalProperties": false
        }
    })
}

/// The report tool's result text.
pub const REPORT_ACCEPTED: &str =
    "Report recorded. The round is over: the host now validates and evaluates your change.";

/// What a guard answers for a call after the report.
pub fn round_over(tool: &str) -> String {
    format!("the autoresearch round is over (already reported); `{tool}` refused")
}

/// Why a confined proposal child's file-tool call is refused ([`crate::protocol::Effect`]'s
/// `RunProposer.confined`): a path argument of `read`, `write`, `edit`, `glob` or `grep` that is
/// absolute, starts at a home directory, or climbs out of the worktree with `..`. `None` lets it
/// run. A symbolic link the repository itself holds is not seen through.
pub fn outside_worktree(tool: &str, args_json: &str) -> Option<String> {
    let keys: &[&str] = match tool {
        "read" | "write" | "edit" => &["file_path"],
        "glob" => &["pattern", "path"],
        "grep" => &["path", "include"],
        _ => return None,
    };
    let args: Value = serde_json::from_str(args_json).unwrap_or(Value::Null);
    let escapes = |path: &str| {
        if path.starts_with('/') || path.starts_with('~') || path.starts_with('\\') {
            return true;
        }
        let mut depth = 0i64;
        for seg in path.split(['/', '\\']) {
            match seg {
                "" | "." => {}
                ".." => depth -= 1,
                _ => depth += 1,
            }
            if depth < 0 {
                return true;
            }
        }
        false
    };
    let (key, path) = keys
        .iter()
        .find_map(|k| Some((*k, args.get(*k)?.as_str()?)).filter(|(_, p)| escapes(p)))?;
    Some(format!(
        "`{tool}` refused: this run has a holdout, so a proposal round works only inside its \
         worktree; give `{key}` relative to it without leaving it (got {path:?})"
    ))
}

/// Checks the report tool's arguments: `{"ok": {hypothesis, summary}}` or `{"error": text}`. A
/// report longer than `max_chars` as JSON (the row's `maxHandoffChars`) is refused, so the child
/// can shorten it.
pub fn check_report(args_json: &str, max_chars: usize) -> Value {
    let value: Value = match serde_json::from_str(args_json) {
        Ok(v) => v,
        Err(e) => return json!({"error": format!("arguments must be JSON ({e})")}),
    };
    let Some(obj) = value.as_object() else {
        return json!({"error": "arguments must be an object {hypothesis, summary}"});
    };
    let mut problems = Vec::new();
    for key in obj.keys() {
        if key != "hypothesis" && key != "summary" {
            problems.push(format!("{key}: unknown key (use hypothesis and summary)"));
        }
    }
    let mut field = |key: &str| match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Some(other) => {
            problems.push(format!(
                "{key}: must be a non-empty string (got {})",
                text::clip_within(&other.to_string(), VALUE_PREVIEW_CHARS)
            ));
            None
        }
        None => {
            problems.push(format!("{key}: is required"));
            None
        }
    };
    let (hypothesis, summary) = (field("hypothesis"), field("summary"));
    match (hypothesis, summary) {
        (Some(hypothesis), Some(summary)) if problems.is_empty() => {
            let report = ProposalReport {
                hypothesis,
                summary,
            };
            match report_too_long(&report, max_chars) {
                Some(problem) => json!({"error": problem}),
                None => json!({"ok": {"hypothesis": report.hypothesis, "summary": report.summary}}),
            }
        }
        _ => json!({"error": problems.join("; ")}),
    }
}

fn num(v: &Value) -> String {
    v.as_f64()
        .map(crate::jcs::number)
        .unwrap_or_else(|| "-".into())
}

fn short(v: &Value) -> &str {
    let s = v.as_str().unwrap_or("-");
    &s[..s.len().min(8)]
}

/// The model-facing text of a tool result (`background`, `background-start-failed` or
/// `foreground`).
pub fn render_output(value: &Value) -> String {
    match value["kind"].as_str() {
        Some("background") => format!(
            "Started autoresearch run {} as background job {}.\nbranch {}\nworktree {}\nCollect the result with job_output (job_id {}, wait: true); stop it with job_kill. If the host stops first, continue later with resume_run_id {}.",
            value["runId"].as_str().unwrap_or("-"),
            value["jobId"].as_str().unwrap_or("-"),
            value["branch"].as_str().unwrap_or("-"),
            value["worktree"].as_str().unwrap_or("-"),
            value["jobId"].as_str().unwrap_or("-"),
            value["runId"].as_str().unwrap_or("-"),
        ),
        Some("background-start-failed") => {
            let mut out = format!(
                "The autoresearch run could not start ({}): {}",
                value["status"].as_str().unwrap_or("failed"),
                value["reason"].as_str().unwrap_or("")
            );
            for e in value["evidence"].as_array().map_or(&[][..], Vec::as_slice) {
                let _ = write!(out, "\n- {}", e.as_str().unwrap_or(""));
            }
            out
        }
        Some("foreground") => summary(&value["run"]),
        _ => value.to_string(),
    }
}

/// A run result (the bounded JSON) as a few lines of text.
pub fn summary(run: &Value) -> String {
    let mut out = format!(
        "autoresearch run {}: {}\n",
        run["run_id"].as_str().unwrap_or("-"),
        run["status"].as_str().unwrap_or("-")
    );
    let point = |p: &Value| {
        if p.is_null() {
            "-".to_owned()
        } else {
            format!("{} at {}", num(&p["metric"]), short(&p["commit"]))
        }
    };
    let _ = writeln!(
        out,
        "metric {} ({}): baseline {}, best {}{}",
        run["metric_name"].as_str().unwrap_or("-"),
        run["metric_direction"].as_str().unwrap_or("-"),
        point(&run["baseline"]),
        point(&run["best"]),
        if run["target"].is_null() {
            String::new()
        } else {
            format!(", target {}", num(&run["target"]))
        }
    );
    if run["repeats"].as_u64().is_some_and(|n| n > 1) {
        let _ = writeln!(
            out,
            "repeats {}: up to that many screening and as many fresh confirming evaluations per candidate (mean±stddev); noise floor (baseline spread) {}",
            run["repeats"],
            run["noise_floor"]
                .as_f64()
                .map_or("-".into(), crate::render::short_number)
        );
    }
    if let Some(h) = run["holdout"].as_object() {
        let divergences: Vec<String> = h
            .get("divergences")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|d| d.as_str().map(str::to_owned))
            .collect();
        let mean = |key: &str| h.get(key).and_then(Value::as_f64);
        for line in crate::render::holdout_lines(mean("baseline"), mean("best"), &divergences) {
            let _ = writeln!(out, "{line}");
        }
    }
    let c = &run["counts"];
    let superseded = match c["superseded"].as_u64() {
        Some(n) if n > 0 => format!(", {n} superseded"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "candidates: {} started, {} accepted, {} rejected{superseded}, {} failed, {} policy violations",
        c["experiments_started"], c["accepted"], c["rejected"], c["failed"], c["policy_violations"]
    );
    let _ = writeln!(
        out,
        "branch {} (your checkout is unchanged)",
        run["branch"].as_str().unwrap_or("-")
    );
    if let Some(b) = run["blocker"].as_object() {
        let _ = writeln!(
            out,
            "blocker {}: {}",
            b.get("code").and_then(Value::as_str).unwrap_or("-"),
            b.get("message").and_then(Value::as_str).unwrap_or("")
        );
        for e in b
            .get("evidence")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
        {
            let _ = writeln!(out, "  - {}", e.as_str().unwrap_or(""));
        }
    }
    let experiments = run["experiments"].as_array().map_or(&[][..], Vec::as_slice);
    let skip = experiments.len().saturating_sub(RENDER_WINDOW);
    for e in &experiments[skip..] {
        let note = e["failure_code"]
            .as_str()
            .map(|code| {
                format!(
                    "{code}: {}",
                    text::clip_within(e["failure_message"].as_str().unwrap_or(""), 120)
                )
            })
            .or_else(|| e["hypothesis"].as_str().map(|h| text::clip_within(h, 120)))
            .unwrap_or_default()
            .replace(['\n', '\r', '\t'], " ");
        let note =
            crate::render::annotated(note, e["selection_metric"].as_f64(), e["holdout"].as_f64());
        let _ = writeln!(
            out,
            "#{} {} {} {}{}",
            e["ordinal"],
            e["state"].as_str().unwrap_or("-"),
            if e["stddev"].is_null() {
                num(&e["metric"])
            } else {
                let sd = e["stddev"].as_f64().unwrap_or(f64::NAN);
                format!("{}±{}", num(&e["metric"]), crate::render::short_number(sd))
            },
            short(&e["candidate_commit"]),
            if note.is_empty() {
                String::new()
            } else {
                format!(" — {note}")
            }
        );
    }
    if let Some(id) = run["run_id"].as_str().filter(|id| !id.is_empty()) {
        let _ = writeln!(out, "{}", picture_command(id));
    }
    out
}

/// The line that tells the model (and its user) how to draw the run as a page.
pub fn picture_command(run_id: &str) -> String {
    format!(
        "picture: run `dsh-autoresearch show --html autoresearch-{}.html {run_id}` in the repository",
        &run_id[..run_id.len().min(8)]
    )
}

/// A background job's final output: the summary, then the bounded result JSON.
pub fn job_output(result_json: &str) -> String {
    match serde_json::from_str::<Value>(result_json) {
        Ok(run) => format!("{}\nresult JSON:\n{result_json}", summary(&run)),
        Err(_) => result_json.to_owned(),
    }
}

/// The prompt note about runs a previous host left unfinished (from `listRuns` rows).
pub fn interrupted_note(rows_json: &str) -> Option<String> {
    let rows: Vec<Map<String, Value>> = serde_json::from_str(rows_json).ok()?;
    // Tracker text, the original's included, can hold any character: one escaped line each.
    let text = |r: &Map<String, Value>, key: &str| {
        crate::escape::escape_inline(r.get(key).and_then(Value::as_str).unwrap_or("-"))
    };
    let (mut reconciled, mut held, mut original) = (Vec::new(), Vec::new(), Vec::new());
    for r in &rows {
        if r.get("origin").and_then(Value::as_str) == Some("original") {
            if r.get("lock_held").is_some_and(|v| v == 1 || v == true) {
                original.push(format!(
                    "- {} (tag {})",
                    text(r, "run_id"),
                    text(r, "run_tag")
                ));
            }
            continue;
        }
        let unfinished = r
            .get("state")
            .and_then(Value::as_str)
            .and_then(crate::RunState::parse)
            .is_some_and(|s| !s.is_terminal());
        if !unfinished {
            continue;
        }
        let line = format!(
            "- {} (tag {}, state {})",
            text(r, "run_id"),
            text(r, "run_tag"),
            text(r, "state")
        );
        if r.get("interrupted_at").is_some_and(|v| !v.is_null()) {
            reconciled.push(line);
        } else {
            held.push(line);
        }
    }
    let mut parts = Vec::new();
    if !reconciled.is_empty() {
        parts.push(format!(
            "These runs were interrupted: their host died, so their leftover processes were stopped and their repository lock released. Mention them if the user asks about autoresearch; continue one only when asked, with `autoresearch` and resume_run_id, or end it with abandon_run_id:\n{}",
            reconciled.join("\n")
        ));
    }
    if !held.is_empty() {
        parts.push(format!(
            "These runs are unfinished and hold their repository lock (another host may still drive them, or it cannot be proven dead). Resume one only when the user asks, with resume_run_id; end one with abandon_run_id:\n{}",
            held.join("\n")
        ));
    }
    if !original.is_empty() {
        parts.push(format!(
            "These runs of the original dsh-autoresearch hold a lock in this repository; they count toward maxActiveRunsPerRepository and only the original can resume them:\n{}",
            original.join("\n")
        ));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "# autoresearch: unfinished runs\n{}",
        parts.join("\n\n")
    ))
}

/// Every text and shape the shim needs, as one JSON object.
pub fn texts() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": DESCRIPTION,
        "parameters": parameters(),
        "outputSchema": output_schema(),
        "guidance": GUIDANCE,
        "childSection": CHILD_SECTION,
        "childTools": CHILD_TOOLS,
        "report": report_tool(),
        "reportAccepted": REPORT_ACCEPTED,
    })
}
