//! The generation in flight under `parallelism` > 1, and where its candidates work.

use crate::state::RunState;

/// The generation in flight and the slots' worktrees.
#[derive(Default)]
pub(super) struct Generation {
    /// The candidates of the generation in flight, in ordinal order.
    pub(super) members: Vec<usize>,
    /// Evaluations (experiment, attempt) held until no proposer runs ([`Run::spawn`]).
    pub(super) held: Vec<(usize, usize)>,
    /// The members that are done.
    pub(super) parked: Vec<usize>,
    /// Slots above 0 whose worktree this machine has made (or found).
    pub(super) slots_made: Vec<u32>,
    /// The commit the run's worktree was last cleaned to by a generation's decision, while no
    /// candidate has used it since.
    pub(super) main_clean_at: Option<String>,
    /// Slot worktrees still being removed at the end (`None`: not begun).
    pub(super) dropping: Option<u32>,
}

/// The order of the run states a generation moves through.
pub(super) fn rank(state: RunState) -> u8 {
    match state {
        RunState::Proposing => 1,
        RunState::CandidatePrepared => 2,
        RunState::CandidateRunning => 3,
        RunState::Deciding => 4,
        _ => 0,
    }
}
