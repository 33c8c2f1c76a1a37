//! The run result and its renderings: bounded JSON (the tool result and job output), a TSV export
//! of experiments, and a human table.
//!
//! The JSON never grows with the run: it carries the last N experiments and artifacts plus their
//! totals, and N shrinks until the text fits `max_chars` (the original overflowed its limit at
//! about 27 candidates).

use crate::escape::escape_controls;
use crate::protocol::{ExperimentRow, Point, RunResult, Status};
use crate::spec::Direction;
use crate::{jcs, stats};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// Experiments (and artifacts) the JSON result shows at most.
pub const RESULT_WINDOW: usize = 20;

impl Status {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::TargetReached => "target-reached",
            Status::BudgetLimited => "budget-limited",
            Status::BaselineBlocked => "baseline-blocked",
            Status::Blocked => "blocked",
            Status::RoundFailed => "round-failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// The dsh-jobs status: `completed`, `failed` or `killed`.
    pub fn job_status(self) -> &'static str {
        match self {
            Status::TargetReached | Status::BudgetLimited => "completed",
            Status::Cancelled => "killed",
            _ => "failed",
        }
    }
}
fn point(p: &Option<Point>) -> Value {
    match p {
        Some(p) => {
            json!({"commit": p.commit, "metric": p.metric, "experiment_id": p.experiment_id})
        }
        None => Value::Null,
    }
}

impl ExperimentRow {
    /// What became of the experiment, for a picture of the run: `baseline` (measured), `kept`,
    /// `rejected`, `superseded`, `failed` (a failed round, a policy violation, a cancel), or the
    /// state of one still under way.
    pub fn outcome(&self) -> &str {
        match (self.kind, self.state.as_str()) {
            ("baseline", "accepted") => "baseline",
            (_, "accepted") => "kept",
            (_, "failed" | "policy-violation" | "cancelled") => "failed",
            (_, state) => state,
        }
    }

    /// The samples behind `metric`: the confirmation's when there is one, else the screening's.
    pub fn reported_samples(&self) -> &[f64] {
        if self.confirmation.is_empty() {
            &self.samples
        } else {
            &self.confirmation
        }
    }

    /// The mean that chose a confirmed candidate (its screening samples'); `None` when it was
    /// not confirmed, since `metric` is that mean then.
    pub fn selection_metric(&self) -> Option<f64> {
        (!self.confirmation.is_empty() && !self.samples.is_empty())
            .then(|| stats::mean(&self.samples))
    }

    /// The spread of the samples behind `metric` (sample standard deviation; `None` below two).
    pub fn stddev(&self) -> Option<f64> {
        stats::stddev(self.reported_samples())
    }
}

fn experiment_json(e: &ExperimentRow, text_max: usize) -> Value {
    json!({
        "experiment_id": e.experiment_id,
        "ordinal": e.ordinal,
        "kind": e.kind,
        "state": e.state,
        "outcome": e.outcome(),
        "candidate_commit": e.candidate_commit,
        "metric": e.metric,
        "n": e.reported_samples().len(),
        "stddev": e.stddev(),
        "samples": e.samples,
        "selection_metric": e.selection_metric(),
        "confirmation": e.confirmation,
        "holdout": e.holdout,
        "decision": e.decision,
        "superseded_by": e.superseded_by,
        "failure_code": e.failure_code,
        "failure_message": e.failure_message.as_deref().map(|m| text::clip_within(m, text_max)),
        "hypothesis": e.hypothesis.as_deref().map(|m| text::clip_within(m, text_max)),
    })
}

/// What a holdout divergence says: kept candidate `now`'s holdout mean is not better than
/// `before`'s (the best it replaced), though its metric was kept as better. `None` when it is
/// better, or either has no holdout value.
pub fn holdout_divergence(
    metric_name: &str,
    direction: Direction,
    before: &ExperimentRow,
    now: &ExperimentRow,
) -> Option<String> {
    let (then, held) = (before.holdout?, now.holdout?);
    if direction.improves(held, then) {
        return None;
    }
    let shown = |m: Option<f64>| m.map_or("-".into(), short_number);
    Some(format!(
        "the holdout diverges at candidate {}: {metric_name} went from {} to {}, but the holdout from {} to {} (not better; the gain may not generalize)",
        now.ordinal,
        shown(before.metric),
        shown(now.metric),
        short_number(then),
        short_number(held),
    ))
}

/// An experiment's note with what the table and the job output put before it: the screening
/// mean of a confirmed candidate, and the holdout's mean.
pub(crate) fn annotated(note: String, selection: Option<f64>, holdout: Option<f64>) -> String {
    let mut parts = Vec::new();
    if let Some(s) = selection {
        parts.push(format!("confirmed (screened at {})", short_number(s)));
    }
    if let Some(h) = holdout {
        parts.push(format!("holdout {}", short_number(h)));
    }
    if !note.is_empty() {
        parts.push(note);
    }
    parts.join(" ")
}

/// The holdout's lines of the table and the job output: its means, then each divergence.
pub fn holdout_lines(
    baseline: Option<f64>,
    best: Option<f64>,
    divergences: &[String],
) -> Vec<String> {
    let shown = |m: Option<f64>| m.map_or("-".into(), short_number);
    let mut lines = vec![format!(
        "holdout (never shown to the proposer): baseline {}, best {}",
        shown(baseline),
        shown(best)
    )];
    lines.extend(divergences.iter().map(|d| format!("warning: {d}")));
    lines
}

impl RunResult {
    /// The holdout's means on the baseline and on the best, and each kept candidate's
    /// divergence ([`holdout_divergence`]); `None` when no holdout ran.
    pub fn holdout_summary(&self) -> Option<(Option<f64>, Option<f64>, Vec<String>)> {
        if self.experiments.iter().all(|e| e.holdout.is_none()) {
            return None;
        }
        let direction = Direction::parse(self.direction)?;
        let kept: Vec<&ExperimentRow> = self
            .experiments
            .iter()
            .filter(|e| e.state == "accepted")
            .collect();
        let divergences = kept
            .windows(2)
            .filter_map(|w| holdout_divergence(&self.metric_name, direction, w[0], w[1]))
            .collect();
        let best = self.best.as_ref().and_then(|b| {
            self.experiments
                .iter()
                .find(|e| e.experiment_id == b.experiment_id)
        });
        Some((
            kept.first().and_then(|e| e.holdout),
            best.and_then(|e| e.holdout),
            divergences,
        ))
    }

    /// `show`'s rendering: `table` (the last [`RESULT_WINDOW`] experiments), `tsv`, `json`
    /// (bounded to `max_chars`, terminal controls escaped) or `html` (every experiment, the
    /// picture), each ending in a newline.
    pub fn render(&self, format: &str, max_chars: usize) -> Result<String, String> {
        Ok(match format {
            "table" => self.to_table(RESULT_WINDOW),
            "tsv" => self.to_tsv(),
            "html" => self.to_html(),
            "json" => format!(
                "{}\n",
                escape_controls(&self.to_json(max_chars).to_string())
            ),
            other => {
                return Err(format!(
                    "unknown format {other:?} (use table, tsv, json or html)"
                ));
            }
        })
    }

    /// The baseline's spread (its samples' standard deviation): gains of about this size are
    /// what noise alone gives. `None` below two baseline samples.
    pub fn noise_floor(&self) -> Option<f64> {
        self.experiments
            .iter()
            .find(|e| e.kind == "baseline")
            .and_then(ExperimentRow::stddev)
    }

    /// The status name, or the stored state of a run that has not ended.
    pub fn status_text(&self) -> &str {
        self.state.as_deref().unwrap_or(self.status.as_str())
    }

    /// The result as JSON whose compact text is at most `max_chars` characters: the last
    /// `window` experiments and artifacts (fewer if needed) with their totals.
    pub fn to_json(&self, max_chars: usize) -> Value {
        let evidence = self.blocker.as_ref().map_or(0, |b| b.evidence.len());
        let mut window = RESULT_WINDOW.min(
            self.experiments
                .len()
                .max(self.artifacts.len())
                .max(evidence),
        );
        let mut text_max = 400;
        loop {
            let value = self.json_with(window, text_max);
            if value.to_string().chars().count() <= max_chars || (window == 0 && text_max <= 40) {
                return value;
            }
            if window > 0 {
                window /= 2;
            } else {
                text_max /= 2;
            }
        }
    }

    fn json_with(&self, window: usize, text_max: usize) -> Value {
        let exp_skip = self.experiments.len().saturating_sub(window);
        let art_skip = self.artifacts.len().saturating_sub(window);
        let mut obj = Map::new();
        obj.insert("status".into(), json!(self.status_text()));
        obj.insert("run_id".into(), json!(self.run_id));
        obj.insert("branch".into(), json!(self.branch));
        obj.insert("worktree".into(), json!(self.worktree));
        obj.insert("tracker".into(), json!(self.tracker));
        obj.insert("persisted".into(), json!(self.persisted));
        obj.insert("metric_name".into(), json!(self.metric_name));
        obj.insert("metric_direction".into(), json!(self.direction));
        obj.insert("target".into(), json!(self.target));
        obj.insert("repeats".into(), json!(self.repeats));
        obj.insert("noise_floor".into(), json!(self.noise_floor()));
        obj.insert(
            "holdout".into(),
            match self.holdout_summary() {
                Some((baseline, best, divergences)) => {
                    json!({"baseline": baseline, "best": best, "divergences": divergences})
                }
                None => Value::Null,
            },
        );
        obj.insert("baseline".into(), point(&self.baseline));
        obj.insert("best".into(), point(&self.best));
        let c = &self.counts;
        obj.insert(
            "counts".into(),
            json!({
                "experiments_started": c.experiments_started,
                "experiments_completed": c.experiments_completed,
                "accepted": c.accepted,
                "rejected": c.rejected,
                "superseded": c.superseded,
                "failed": c.failed,
                "policy_violations": c.policy_violations,
                "attempts": c.attempts,
            }),
        );
        obj.insert("experiments_total".into(), json!(self.experiments.len()));
        obj.insert(
            "experiments".into(),
            Value::Array(
                self.experiments[exp_skip..]
                    .iter()
                    .map(|e| experiment_json(e, text_max))
                    .collect(),
            ),
        );
        obj.insert("artifacts_total".into(), json!(self.artifacts.len()));
        obj.insert(
            "artifacts".into(),
            Value::Array(
                self.artifacts[art_skip..]
                    .iter()
                    .map(|a| {
                        let mut v = json!({"artifact_id": a.artifact_id, "kind": a.kind,
                            "location": a.location, "size_bytes": a.size_bytes, "sha256": a.sha256});
                        if self.removed.artifacts.contains(&a.artifact_id) {
                            v["removed"] = json!(true);
                        }
                        v
                    })
                    .collect(),
            ),
        );
        if !self.removed.is_empty() {
            // Retention removed these files; their rows stay in the tracker, marked.
            obj.insert(
                "removed".into(),
                json!({"worktree": self.removed.worktree, "tsv": self.removed.tsv,
                       "artifacts": self.removed.artifacts.len()}),
            );
        }
        obj.insert(
            "blocker".into(),
            match &self.blocker {
                Some(b) => json!({
                    "code": b.code,
                    "message": text::clip_within(&b.message, text_max * 2),
                    "evidence": b.evidence.iter().take(window.max(1)).map(|e| text::clip_within(e, text_max)).collect::<Vec<_>>(),
                    "evidence_total": b.evidence.len(),
                }),
                None => Value::Null,
            },
        );
        obj.insert(
            "warnings".into(),
            json!(
                self.warnings
                    .iter()
                    .map(|w| text::clip_within(w, text_max))
                    .collect::<Vec<_>>()
            ),
        );
        Value::Object(obj)
    }

    /// TSV of every experiment: a header line, one line per experiment by ordinal, LF endings.
    /// NULL is an empty cell; backslash, TAB, CR and LF are escaped as `\\`, `\t`, `\r`, `\n`.
    pub fn to_tsv(&self) -> String {
        escape_controls(&self.tsv_text())
    }

    fn tsv_text(&self) -> String {
        let mut out = String::from(
            "ordinal\tkind\texperiment_id\tparent_commit\tcandidate_commit\tstate\tmetric\tdecision\tfailure_code\tfailure_message\thypothesis\tn\tstddev\tselection_metric\tholdout\n",
        );
        for e in &self.experiments {
            let cells = [
                e.ordinal.to_string(),
                e.kind.to_owned(),
                e.experiment_id.clone(),
                e.parent_commit.clone(),
                e.candidate_commit.clone().unwrap_or_default(),
                e.state.clone(),
                e.metric.map(jcs::number).unwrap_or_default(),
                e.decision.clone().unwrap_or_default(),
                e.failure_code.clone().unwrap_or_default(),
                e.failure_message.clone().unwrap_or_default(),
                e.hypothesis.clone().unwrap_or_default(),
                e.reported_samples().len().to_string(),
                e.stddev().map(jcs::number).unwrap_or_default(),
                e.selection_metric().map(jcs::number).unwrap_or_default(),
                e.holdout.map(jcs::number).unwrap_or_default(),
            ];
            let line: Vec<String> = cells.iter().map(|c| tsv_escape(c)).collect();
            out.push_str(&line.join("\t"));
            out.push('\n');
        }
        out
    }

    /// A human-readable summary and table (the last `window` experiments).
    pub fn to_table(&self, window: usize) -> String {
        escape_controls(&self.table_text(window))
    }

    fn table_text(&self, window: usize) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "autoresearch run {}: {}{}",
            self.run_id,
            self.status_text(),
            if self.state.is_some() {
                " (not finished: `resume` continues it, `abandon` ends it)"
            } else {
                ""
            }
        );
        let fmt_point = |p: &Option<Point>| match p {
            Some(p) => format!("{} at {}", jcs::number(p.metric), short(&p.commit)),
            None => "-".to_owned(),
        };
        let _ = writeln!(
            out,
            "metric {} ({}), baseline {}, best {}{}",
            self.metric_name,
            self.direction,
            fmt_point(&self.baseline),
            fmt_point(&self.best),
            self.target
                .map(|t| format!(", target {}", jcs::number(t)))
                .unwrap_or_default()
        );
        let c = &self.counts;
        let superseded = match c.superseded {
            0 => String::new(),
            n => format!(", {n} superseded"),
        };
        let _ = writeln!(
            out,
            "candidates {} started, {} accepted, {} rejected{superseded}, {} failed, {} policy violations; {} attempts",
            c.experiments_started,
            c.accepted,
            c.rejected,
            c.failed,
            c.policy_violations,
            c.attempts
        );
        if let Some(b) = &self.blocker {
            let _ = writeln!(
                out,
                "blocker {}: {}",
                b.code,
                text::clip_within(&b.message, 300)
            );
            // The first line of evidence is what the reader acts on (git's own error, say).
            if let Some(first) = b.evidence.first() {
                let more = match b.evidence.len() - 1 {
                    0 => String::new(),
                    n => format!(" (+{n} more in the JSON result)"),
                };
                let _ = writeln!(out, "  evidence: {}{more}", text::clip_within(first, 300));
            }
        }
        if let Some((baseline, best, divergences)) = self.holdout_summary() {
            for line in holdout_lines(baseline, best, &divergences) {
                let _ = writeln!(out, "{line}");
            }
        }
        let skip = self.experiments.len().saturating_sub(window);
        if skip > 0 {
            let _ = writeln!(out, "({skip} earlier experiments not shown)");
        }
        if self.repeats > 1 {
            let _ = writeln!(
                out,
                "repeats {}: up to that many screening and as many fresh confirming evaluations per candidate; noise floor (baseline spread) {}",
                self.repeats,
                self.noise_floor().map_or("-".into(), short_number)
            );
        }
        let _ = writeln!(
            out,
            "{:>4}  {:<16}  {:>14}  {:<8}  {:<8}  note",
            "#", "state", "metric", "decision", "commit"
        );
        for e in &self.experiments[skip..] {
            let note = e
                .failure_code
                .as_deref()
                .map(|c| {
                    format!(
                        "{c}: {}",
                        text::clip_within(e.failure_message.as_deref().unwrap_or(""), 60)
                    )
                })
                .or_else(|| e.hypothesis.as_deref().map(|h| text::clip_within(h, 60)))
                .unwrap_or_default()
                .replace(['\n', '\r', '\t'], " ");
            let note = annotated(note, e.selection_metric(), e.holdout);
            let _ = writeln!(
                out,
                "{:>4}  {:<16}  {:>14}  {:<8}  {:<8}  {}",
                e.ordinal,
                e.state,
                match (e.metric, e.stddev()) {
                    (Some(m), Some(sd)) => format!("{}±{}", jcs::number(m), short_number(sd)),
                    (Some(m), None) => jcs::number(m),
                    (None, _) => "-".into(),
                },
                e.decision.as_deref().unwrap_or("-"),
                e.candidate_commit.as_deref().map(short).unwrap_or("-"),
                note
            );
        }
        out
    }
}

/// A spread to three decimals, for the tables' narrow metric columns.
pub(crate) fn short_number(x: f64) -> String {
    jcs::number(format!("{x:.3}").parse().unwrap_or(x))
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(8)]
}

fn tsv_escape(cell: &str) -> String {
    let mut out = String::with_capacity(cell.len());
    for c in cell.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}
