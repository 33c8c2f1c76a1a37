//! The run state table: every state as stored in `runs.state` and the legal transitions (the
//! table the database enforces too).

use crate::protocol::Status;

/// Run states as stored in `runs.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RunState {
    /// Lock taken, run row written, worktree being created.
    Initializing,
    /// The baseline is being measured.
    BaselineRunning,
    /// Between rounds.
    Ready,
    /// A proposal round is running.
    Proposing,
    /// The candidate's changes are validated; committing and revalidating provenance.
    CandidatePrepared,
    /// The candidate is being evaluated.
    CandidateRunning,
    /// The candidate's outcome is durable; keep/reject is being applied.
    Deciding,
    /// Terminal: the target was met.
    TargetReached,
    /// Terminal: the budget was used up.
    BudgetLimited,
    /// Terminal: the baseline produced no metric.
    BaselineBlocked,
    /// Terminal: cannot continue safely.
    Blocked,
    /// Terminal: too many consecutive failed rounds.
    RoundFailed,
    /// Terminal: cancelled.
    Cancelled,
}

impl RunState {
    /// Every state.
    pub const ALL: [RunState; 13] = [
        RunState::Initializing,
        RunState::BaselineRunning,
        RunState::Ready,
        RunState::Proposing,
        RunState::CandidatePrepared,
        RunState::CandidateRunning,
        RunState::Deciding,
        RunState::TargetReached,
        RunState::BudgetLimited,
        RunState::BaselineBlocked,
        RunState::Blocked,
        RunState::RoundFailed,
        RunState::Cancelled,
    ];

    /// Stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Initializing => "initializing",
            RunState::BaselineRunning => "baseline-running",
            RunState::Ready => "ready",
            RunState::Proposing => "proposing",
            RunState::CandidatePrepared => "candidate-prepared",
            RunState::CandidateRunning => "candidate-running",
            RunState::Deciding => "deciding",
            RunState::TargetReached => "target-reached",
            RunState::BudgetLimited => "budget-limited",
            RunState::BaselineBlocked => "baseline-blocked",
            RunState::Blocked => "blocked",
            RunState::RoundFailed => "round-failed",
            RunState::Cancelled => "cancelled",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Whether no transition leaves this state.
    pub fn is_terminal(self) -> bool {
        self.status().is_some()
    }

    /// The terminal status, for terminal states.
    pub fn status(self) -> Option<Status> {
        Some(match self {
            RunState::TargetReached => Status::TargetReached,
            RunState::BudgetLimited => Status::BudgetLimited,
            RunState::BaselineBlocked => Status::BaselineBlocked,
            RunState::Blocked => Status::Blocked,
            RunState::RoundFailed => Status::RoundFailed,
            RunState::Cancelled => Status::Cancelled,
            _ => return None,
        })
    }

    pub(crate) fn of(status: Status) -> RunState {
        match status {
            Status::TargetReached => RunState::TargetReached,
            Status::BudgetLimited => RunState::BudgetLimited,
            Status::BaselineBlocked => RunState::BaselineBlocked,
            Status::Blocked => RunState::Blocked,
            Status::RoundFailed => RunState::RoundFailed,
            Status::Cancelled => RunState::Cancelled,
        }
    }
}

/// Whether `from → to` is a legal run transition (the same table the database enforces).
pub fn transition_allowed(from: RunState, to: RunState) -> bool {
    use RunState::*;
    matches!(
        (from, to),
        (Initializing, BaselineRunning | Blocked | Cancelled)
            | (
                BaselineRunning,
                Ready | BaselineBlocked | Blocked | Cancelled
            )
            | (
                Ready,
                Proposing | TargetReached | BudgetLimited | RoundFailed | Blocked | Cancelled
            )
            | (Proposing, CandidatePrepared | Ready | Blocked | Cancelled)
            | (
                CandidatePrepared,
                CandidateRunning | Ready | Blocked | Cancelled
            )
            | (CandidateRunning, Deciding | Blocked | Cancelled)
            | (Deciding, Ready | Blocked | Cancelled)
    )
}
