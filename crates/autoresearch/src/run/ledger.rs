//! What the run has done: its experiments and their attempts, the artifacts kept, the baseline
//! and best, the failure count and the frozen provenance.

use crate::protocol::{ArtifactRef, InputPath, Point, ProcessIdentity, ProposalReport, StoredRows};
use crate::sql;
use crate::stats::Purpose;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Baseline,
    Candidate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExpState {
    Proposing,
    Prepared,
    Running,
    Evaluated,
    Accepted,
    Rejected,
    Failed,
    PolicyViolation,
    Cancelled,
}

impl ExpState {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ExpState::Proposing => "proposing",
            ExpState::Prepared => "prepared",
            ExpState::Running => "running",
            ExpState::Evaluated => "evaluated",
            ExpState::Accepted => "accepted",
            ExpState::Rejected => "rejected",
            ExpState::Failed => "failed",
            ExpState::PolicyViolation => "policy-violation",
            ExpState::Cancelled => "cancelled",
        }
    }
    pub(super) fn parse(s: &str) -> Option<ExpState> {
        [
            ExpState::Proposing,
            ExpState::Prepared,
            ExpState::Running,
            ExpState::Evaluated,
            ExpState::Accepted,
            ExpState::Rejected,
            ExpState::Failed,
            ExpState::PolicyViolation,
            ExpState::Cancelled,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }
    pub(super) fn is_final(self) -> bool {
        matches!(
            self,
            ExpState::Accepted
                | ExpState::Rejected
                | ExpState::Failed
                | ExpState::PolicyViolation
                | ExpState::Cancelled
        )
    }
}

#[derive(Clone, Debug)]
pub(super) struct Experiment {
    pub(super) id: String,
    pub(super) ordinal: u32,
    pub(super) kind: Kind,
    pub(super) state: ExpState,
    pub(super) parent: String,
    pub(super) commit: Option<String>,
    pub(super) report: Option<ProposalReport>,
    pub(super) changed_paths: Vec<String>,
    /// The reported metric once the experiment is measured: the mean of `fresh` when it was
    /// confirmed, else of `samples`.
    pub(super) metric: Option<f64>,
    /// The metric of each successful screening evaluation (or each repeat), in attempt order.
    pub(super) samples: Vec<f64>,
    /// The metric of each fresh confirmation evaluation, in attempt order (`stats::judge`).
    pub(super) fresh: Vec<f64>,
    /// Each finished holdout evaluation's metric, `None` for a failed one (baseline and kept
    /// candidates only).
    pub(super) holdout: Vec<Option<f64>>,
    pub(super) decision: Option<&'static str>,
    pub(super) failure_code: Option<String>,
    pub(super) failure_message: Option<String>,
    pub(super) evidence: Vec<String>,
    /// Its place in its generation (`AUTORESEARCH_SLOT`, and which worktree it uses).
    pub(super) slot: u32,
    /// The kept candidate of its generation that beat this improving one.
    pub(super) superseded_by: Option<String>,
}

#[derive(Clone, Debug)]
pub(super) struct Attempt {
    pub(super) id: String,
    pub(super) experiment: usize,
    pub(super) running: bool,
    /// Stopped by recovery or an ending before it exited (not a sample).
    pub(super) interrupted: bool,
    pub(super) process: Option<ProcessIdentity>,
    /// Which measurement it is; its metric goes to `samples` or `fresh`.
    pub(super) purpose: Purpose,
}

impl Experiment {
    /// The mean of its holdout metrics; `None` before any, or when one failed.
    pub(super) fn holdout_mean(&self) -> Option<f64> {
        let values: Option<Vec<f64>> = self.holdout.iter().copied().collect();
        values
            .filter(|v| !v.is_empty())
            .map(|v| crate::stats::mean(&v))
    }
}

/// A candidate's slot: its place in its generation.
pub(super) fn slot_of(kind: Kind, ordinal: u32, parallelism: u32) -> u32 {
    match kind {
        Kind::Baseline => 0,
        Kind::Candidate => ordinal.saturating_sub(1) % parallelism.max(1),
    }
}

/// The run's record, as the machine holds it (the tracker holds it durably).
#[derive(Default)]
pub(super) struct Ledger {
    pub(super) experiments: Vec<Experiment>,
    pub(super) attempts: Vec<Attempt>,
    pub(super) artifacts: Vec<ArtifactRef>,
    pub(super) baseline: Option<Point>,
    pub(super) best: Option<Point>,
    /// A new best (and whether it is the baseline) whose transaction is outstanding: it becomes
    /// `best` only when that write is durable, so a crash in between can never make a resumed run
    /// report a best lower than one it already showed.
    pub(super) pending_best: Option<(Point, bool)>,
    pub(super) consecutive_failures: u32,
    /// The provenance frozen at the baseline.
    pub(super) provenance_sha256: Option<String>,
    /// The evaluator's inputs, as last hashed.
    pub(super) inputs: Vec<InputPath>,
}

impl Ledger {
    /// The record as stored (no checks); `parallelism` places each candidate in its slot.
    pub(super) fn stored(rows: &StoredRows, run_id: &str, parallelism: u32) -> Ledger {
        let r = &rows.run;
        let point = |c: &Option<String>, m: Option<f64>, e: Option<String>| match (c, m) {
            (Some(c), Some(m)) => Some(Point {
                commit: c.clone(),
                metric: m,
                experiment_id: e.unwrap_or_default(),
            }),
            _ => None,
        };
        let mut ledger = Ledger {
            baseline: point(
                &r.baseline_commit,
                r.baseline_metric,
                Some(format!("{run_id}-baseline")),
            ),
            best: point(&r.best_commit, r.best_metric, r.best_experiment_id.clone()),
            consecutive_failures: u32::try_from(r.consecutive_failures).unwrap_or(0),
            provenance_sha256: r.provenance_sha256.clone(),
            ..Ledger::default()
        };
        for e in &rows.experiments {
            let kind = if e.kind == "baseline" {
                Kind::Baseline
            } else {
                Kind::Candidate
            };
            let ordinal = u32::try_from(e.ordinal).unwrap_or(0);
            ledger.experiments.push(Experiment {
                id: e.experiment_id.clone(),
                ordinal,
                kind,
                state: ExpState::parse(&e.state).unwrap_or(ExpState::Failed),
                parent: e.parent_commit.clone(),
                commit: e.candidate_commit.clone(),
                report: match (&e.hypothesis, &e.summary) {
                    (Some(h), Some(s)) => Some(ProposalReport {
                        hypothesis: h.clone(),
                        summary: s.clone(),
                    }),
                    _ => None,
                },
                changed_paths: e
                    .changed_paths_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str(j).ok())
                    .unwrap_or_default(),
                metric: e.metric,
                samples: Vec::new(),
                fresh: Vec::new(),
                holdout: Vec::new(),
                decision: match e.decision.as_deref() {
                    Some("accept") => Some("accept"),
                    Some("reject") => Some("reject"),
                    Some("fail") => Some("fail"),
                    _ => None,
                },
                failure_code: e.failure_code.clone(),
                failure_message: e.failure_message.clone(),
                evidence: Vec::new(),
                slot: slot_of(kind, ordinal, parallelism),
                superseded_by: e.superseded_by.clone(),
            });
        }
        for a in &rows.attempts {
            let exp = ledger
                .experiments
                .iter()
                .position(|e| e.id == a.experiment_id)
                .unwrap_or(0);
            let process = match (a.pid, a.pgid) {
                (Some(pid), Some(pgid)) => Some(ProcessIdentity {
                    pid: u32::try_from(pid).unwrap_or(0),
                    pgid: u32::try_from(pgid).unwrap_or(0),
                    start_time: a.process_start_time.clone(),
                }),
                _ => None,
            };
            let purpose = match a.purpose.as_deref() {
                Some(sql::PURPOSE_CONFIRM) => Purpose::Confirm,
                Some(sql::PURPOSE_HOLDOUT) => Purpose::Holdout,
                _ => Purpose::Select,
            };
            let e = &mut ledger.experiments[exp];
            match (purpose, a.metric) {
                (Purpose::Select, Some(m)) => e.samples.push(m),
                (Purpose::Confirm, Some(m)) => e.fresh.push(m),
                (Purpose::Holdout, m) if a.state == "exited" => e.holdout.push(m),
                _ => {}
            }
            ledger.attempts.push(Attempt {
                id: a.attempt_id.clone(),
                experiment: exp,
                running: a.state == "running" || a.quiescent == Some(false),
                interrupted: a.state == "interrupted",
                process,
                purpose,
            });
        }
        for a in &rows.artifacts {
            ledger.artifacts.push(ArtifactRef {
                artifact_id: a.artifact_id.clone(),
                kind: a.kind.clone(),
                location: a.location.clone(),
                size_bytes: u64::try_from(a.size_bytes).unwrap_or(0),
                sha256: a.sha256.clone(),
            });
        }
        ledger
    }

    /// The attempts whose process group may still run, in order.
    pub(super) fn running_attempts(&self) -> VecDeque<usize> {
        (0..self.attempts.len())
            .filter(|&i| self.attempts[i].running)
            .collect()
    }

    /// How many of the experiment's attempts were interrupted.
    pub(super) fn interrupted_attempts(&self, exp: usize) -> u32 {
        self.attempts
            .iter()
            .filter(|a| a.experiment == exp && a.interrupted)
            .count() as u32
    }

    /// The last experiment not yet decided.
    pub(super) fn unresolved(&self) -> Option<usize> {
        self.experiments.iter().rposition(|e| !e.state.is_final())
    }
}
