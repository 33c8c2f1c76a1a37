//! Every failure code the core writes (a blocker's `code`, an experiment's or an attempt's
//! `failure_code`), in one enum: the stored and shown names are [`Failure::as_str`].

/// Why an attempt, an experiment or a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// The baseline produced no metric and named no other cause.
    BaselineFailed,
    /// The run or the process was cancelled.
    Cancelled,
    /// The proposal changed no path.
    CandidateEmpty,
    /// Too many rounds failed in a row.
    ConsecutiveFailures,
    /// A resume needs the evaluator environment values whose hashes the run stored.
    EnvironmentValuesNeeded,
    /// The evaluator exited non-zero.
    Exit,
    /// The repository config sets a key that runs programs (a helper) outside the allowlist.
    GitConfigUnsafe,
    /// A git operation failed.
    GitFailed,
    /// git printed something the core cannot read.
    GitOutput,
    /// Hashing the evaluator inputs failed.
    HashFailed,
    /// The proposal handoff cannot fit `maxHandoffChars`, even without history.
    HandoffTooLarge,
    /// The attempt was interrupted by a host restart or a cancel.
    Interrupted,
    /// The run lost its repository lock.
    LockLost,
    /// The repository lock could not be taken.
    LockUnavailable,
    /// The evaluator output broke the metric protocol.
    MetricProtocol,
    /// A process group did not exit.
    NotQuiescent,
    /// Not a failure: `max_stale_experiments` candidates in a row were not kept, so the run
    /// ended `budget-limited` early (the code of its stop reason).
    Plateau,
    /// Not a failure: with `holdout_stop`, a kept candidate's holdout metric was not better than
    /// the previous best's, so the run ended `budget-limited` (the code of its stop reason).
    HoldoutDiverged,
    /// The output was truncated and no complete final line survived.
    OutputLimit,
    /// A tracker write failed.
    PersistFailed,
    /// The stored policy does not parse.
    PolicyCorrupt,
    /// The stored policy does not match its hash.
    PolicyMismatch,
    /// The candidate changed a protected or disallowed path.
    PolicyViolation,
    /// The proposer exited non-zero or could not run.
    ProposerFailed,
    /// The proposer report is malformed.
    ProposerReport,
    /// The proposer timed out.
    ProposerTimeout,
    /// The evaluator inputs changed.
    ProvenanceMismatch,
    /// The interrupted evaluation was already re-run the allowed number of times.
    RecoveryRerunExhausted,
    /// The run belongs to another repository.
    RepositoryMismatch,
    /// git discovery failed.
    RepositoryUnavailable,
    /// A resume or abandon found the run driven by a live host, or one it cannot prove dead
    /// (another machine, boot or PID namespace); nothing was changed.
    RunLive,
    /// No such run in the tracker.
    RunMissing,
    /// The evaluator was killed by a signal.
    Signal,
    /// The evaluator could not be started.
    Spawn,
    /// Recovery cannot tell what happened to an interrupted step.
    StateAmbiguous,
    /// The stored state moved under the run (a compare-and-set changed nothing).
    StateConflict,
    /// A stored state is not one the core knows.
    StateCorrupt,
    /// The evaluator timed out.
    Timeout,
    /// The tracker database could not be opened or read.
    TrackerUnavailable,
    /// The worktree could not be created.
    WorktreeFailed,
    /// The evaluation left what git cannot see, or a tracked file that no longer equals the
    /// evaluated commit (the worktree was restored).
    WorktreeTampered,
}

impl Failure {
    /// Every code.
    pub const ALL: [Failure; 41] = [
        Failure::BaselineFailed,
        Failure::Cancelled,
        Failure::CandidateEmpty,
        Failure::ConsecutiveFailures,
        Failure::EnvironmentValuesNeeded,
        Failure::Exit,
        Failure::GitConfigUnsafe,
        Failure::GitFailed,
        Failure::GitOutput,
        Failure::HashFailed,
        Failure::HandoffTooLarge,
        Failure::Interrupted,
        Failure::LockLost,
        Failure::LockUnavailable,
        Failure::MetricProtocol,
        Failure::NotQuiescent,
        Failure::Plateau,
        Failure::HoldoutDiverged,
        Failure::OutputLimit,
        Failure::PersistFailed,
        Failure::PolicyCorrupt,
        Failure::PolicyMismatch,
        Failure::PolicyViolation,
        Failure::ProposerFailed,
        Failure::ProposerReport,
        Failure::ProposerTimeout,
        Failure::ProvenanceMismatch,
        Failure::RecoveryRerunExhausted,
        Failure::RepositoryMismatch,
        Failure::RepositoryUnavailable,
        Failure::RunLive,
        Failure::RunMissing,
        Failure::Signal,
        Failure::Spawn,
        Failure::StateAmbiguous,
        Failure::StateConflict,
        Failure::StateCorrupt,
        Failure::Timeout,
        Failure::TrackerUnavailable,
        Failure::WorktreeFailed,
        Failure::WorktreeTampered,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::BaselineFailed => "baseline-failed",
            Failure::Cancelled => "cancelled",
            Failure::CandidateEmpty => "candidate-empty",
            Failure::ConsecutiveFailures => "consecutive-failures",
            Failure::EnvironmentValuesNeeded => "environment-values-needed",
            Failure::Exit => "exit",
            Failure::GitConfigUnsafe => "git-config-unsafe",
            Failure::GitFailed => "git-failed",
            Failure::GitOutput => "git-output",
            Failure::HashFailed => "hash-failed",
            Failure::HandoffTooLarge => "handoff-too-large",
            Failure::Interrupted => "interrupted",
            Failure::LockLost => "lock-lost",
            Failure::LockUnavailable => "lock-unavailable",
            Failure::MetricProtocol => "metric-protocol",
            Failure::NotQuiescent => "not-quiescent",
            Failure::Plateau => "plateau",
            Failure::HoldoutDiverged => "holdout-diverged",
            Failure::OutputLimit => "output-limit",
            Failure::PersistFailed => "persist-failed",
            Failure::PolicyCorrupt => "policy-corrupt",
            Failure::PolicyMismatch => "policy-mismatch",
            Failure::PolicyViolation => "policy-violation",
            Failure::ProposerFailed => "proposer-failed",
            Failure::ProposerReport => "proposer-report",
            Failure::ProposerTimeout => "proposer-timeout",
            Failure::ProvenanceMismatch => "provenance-mismatch",
            Failure::RecoveryRerunExhausted => "recovery-rerun-exhausted",
            Failure::RepositoryMismatch => "repository-mismatch",
            Failure::RepositoryUnavailable => "repository-unavailable",
            Failure::RunLive => "run-live",
            Failure::RunMissing => "run-missing",
            Failure::Signal => "signal",
            Failure::Spawn => "spawn",
            Failure::StateAmbiguous => "state-ambiguous",
            Failure::StateConflict => "state-conflict",
            Failure::StateCorrupt => "state-corrupt",
            Failure::Timeout => "timeout",
            Failure::TrackerUnavailable => "tracker-unavailable",
            Failure::WorktreeFailed => "worktree-failed",
            Failure::WorktreeTampered => "worktree-tampered",
        }
    }
}
