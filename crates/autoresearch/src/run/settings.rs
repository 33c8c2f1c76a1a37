//! The deployment settings a run works under.

use crate::retention::Retention;
use crate::spec::Limits;

/// Deployment settings: the plugin row config (`crates/config`, the one source of their
/// defaults), converted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Spec limits and defaults.
    pub limits: Limits,
    /// State directory relative to the git common dir.
    pub state_root: String,
    /// Run branch prefix (ends in `/`).
    pub branch_prefix: String,
    /// Grace between SIGTERM and SIGKILL.
    pub termination_grace_ms: u64,
    /// Evaluator stdout cap.
    pub max_stdout_bytes: u64,
    /// Evaluator stderr cap.
    pub max_stderr_bytes: u64,
    /// Concurrent runs per repository.
    pub max_active_runs_per_repository: u32,
    /// Evaluator attempts per experiment (an interrupted attempt is rerun up to this many).
    pub max_attempts_per_experiment: u32,
    /// Longest proposal handoff and longest proposal report (as JSON), in characters.
    pub max_handoff_chars: usize,
    /// Write a TSV export at the end.
    pub export_tsv: bool,
    /// What the cleanup at each run's start and end removes.
    pub retention: Retention,
}
