//! The retention cleanup in progress inside a run, and what it removed of this run.

use crate::protocol::{Removed, RetentionArtifact, Statement};
use crate::retention::Removal;
use std::collections::VecDeque;

/// Which cleanup a retention step belongs to, and so where the run goes on after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sweep {
    /// At the start, once the tracker is open: then the lock (or the stored run).
    Start,
    /// The artifacts of this run's failed attempts, once their experiment ended: then the next
    /// round.
    FailedAttempts,
    /// At the end, after the TSV export: then the report.
    End,
}

/// The cleanup in progress, and what retention removed of this run.
#[derive(Default)]
pub(super) struct Sweeping {
    /// What retention removed of this run.
    pub(super) removed: Removed,
    /// The removals still to perform.
    pub(super) queue: VecDeque<Removal>,
    /// The marks of the removals that succeeded, written together at the end of the cleanup.
    pub(super) marks: Vec<Statement>,
    /// Artifacts of this run's failed attempts not yet removed (without `retainFailedArtifacts`).
    pub(super) failed_artifacts: Vec<RetentionArtifact>,
}
