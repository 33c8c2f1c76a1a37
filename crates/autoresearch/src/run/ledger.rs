//! What the run has done: its experiments and their attempts, the artifacts kept, the baseline
//! and best, the failure count and the frozen provenance.

use crate::protocol::{ArtifactRef, InputPath, Point, ProcessIdentity, ProposalReport};

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
    /// The mean of `samples` once every repeat is in.
    pub(super) metric: Option<f64>,
    /// The metric of each successful evaluation, in attempt order.
    pub(super) samples: Vec<f64>,
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
