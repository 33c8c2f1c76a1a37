//! The effect bus: the effects queued for the driver, the ones outstanding, and what each answer
//! leads to ([`Await`], and after a write or a clean, [`Then`]).

use super::sweeping::Sweep;
use crate::protocol::{Effect, EffectId, Input};
use std::collections::{BTreeMap, VecDeque};

/// What an outstanding effect's answer leads to: one variant per kind of effect the run emits,
/// each named with when it is emitted and which [`Input`] answers it (any effect may also be
/// answered `Failed`, which `Run::on_failure` turns into a block, a refusal or a warning).
#[derive(Clone, Debug)]
pub(super) enum Await {
    /// `Discover`, first of every run; answered `Discovered` (then the tracker opens).
    Discover,
    /// `OpenTracker`, once the repository is known; answered `Done` (then the start's cleanup).
    Open,
    /// `LoadRun` of a resume, abandon or reconcile after the start's cleanup; answered `Loaded`.
    Load,
    /// A fresh run's first transaction (take the lock, insert the run row, record the host);
    /// answered `Persisted`, whose first two changes must be 1 (else the lock is refused).
    Lock,
    /// A transaction of the run's steps; answered `Persisted`, where each statement named in
    /// `cas` must have changed one row (else another controller moved the run), then `then`.
    Write { cas: Vec<usize>, then: Then },
    /// The process evidence of an evaluator that reported `Spawned`; answered `Persisted`, and
    /// nothing waits on it (a failure is a warning).
    SideWrite,
    /// `CreateWorktree` of the run's worktree and branch; answered `Done` (then the inputs are
    /// hashed to freeze the provenance).
    Worktree,
    /// `HashInputs` of the evaluator's inputs, for [`HashFor`]; answered `Hashed`.
    Hash(HashFor),
    /// `RunEvaluator` for one attempt; answered `Spawned` (a progress note: it stays
    /// outstanding with `spawned` set), then `Exited`.
    Evaluate {
        exp: usize,
        attempt: usize,
        spawned: bool,
    },
    /// `RunProposer` for a candidate; answered `Proposed` (a DSH agent's report) or
    /// `ProposerExited` (a headless proposer command).
    Propose { exp: usize },
    /// `ListChanges` of a candidate's worktree after its proposal; answered `Changes`.
    Changes { exp: usize },
    /// `Commit` of a candidate's checked paths; answered `Committed`.
    Commit { exp: usize },
    /// `CheckoutClean` of a worktree to a commit; answered `Done`, then the [`Then`].
    Clean(Then),
    /// `FastForwardRunBranch` to a kept candidate; answered `Done` (then its keeping, or the
    /// generation's, is recorded).
    FastForward { exp: usize },
    /// `CreateWorktree` of a slot above 0, on its first candidate; answered `Done`, then `then`.
    SlotWorktree { slot: u32, then: Then },
    /// `RemoveWorktree` of a slot's scratch worktree at the end; answered `Done`.
    DropSlot,
    /// `TerminateProcessGroup` of an attempt recovery found running; answered `Terminated`.
    Terminate { attempt: usize },
    /// `TerminateProposers`, once at the start of a recovery; answered `Terminated`.
    ReapProposers,
    /// `ProbeHost` of the host recorded on a stored run, when its pid means something here;
    /// answered `HostProbed`.
    Probe,
    /// The transaction taking a reconciled run's lock again on resume; answered `Persisted`,
    /// whose first change must be 1.
    Retake,
    /// `ExportTsv` at the end (with `exportTsv`); answered `Done` (then the end's cleanup).
    Tsv,
    /// `LoadRetention` at a cleanup's start; answered `Retention` (then its removals).
    Retention(Sweep),
    /// `RemoveFiles` or `RemoveWorktree` of one retention removal; answered `Done`.
    Removal(Sweep),
    /// The transaction marking what a cleanup removed; answered `Persisted`.
    Marks(Sweep),
}

/// Why the evaluator's inputs are hashed.
#[derive(Clone, Copy, Debug)]
pub(super) enum HashFor {
    /// Once the run's worktree exists: the provenance is frozen and the baseline recorded.
    Freeze,
    /// After a candidate's commit: the inputs must still match before it is evaluated.
    Revalidate { exp: usize },
    /// Before a repeat or a rerun: an outside input may have changed since the baseline.
    Retry { exp: usize },
}

/// Where the run goes on once a [`Await::Write`], [`Await::Clean`] or [`Await::SlotWorktree`]
/// is answered (or directly, through `Run::advance`): one line each on when it is set and what
/// follows.
#[derive(Clone, Debug)]
pub(super) enum Then {
    /// Set by the lock (or the recovery of an initializing run): create the run's worktree.
    CreateWorktree,
    /// Set by the write of an attempt's row: start its evaluator (held while a proposer runs
    /// next to environment values).
    Spawn { exp: usize, attempt: usize },
    /// Set by the write that ends a round (and the clean after recovery): remove the failed
    /// attempts' artifacts, then the next round or the ending.
    Ready,
    /// Set by the write of a candidate's row (or a slot's clean): run its proposer.
    Propose { exp: usize },
    /// Set by the write of a candidate's checked proposal: commit its paths.
    Commit { exp: usize },
    /// Set by the write of a candidate's commit: hash the inputs again before evaluating.
    Revalidate { exp: usize },
    /// A repeat is recorded: clean the worktree back to the evaluated commit, check the
    /// evaluator's inputs again (an outside one may have changed), then run the next.
    Resample { exp: usize },
    /// Set by the write of a finished evaluation (or recovery of an evaluated one): clean the
    /// worktree to what the decision leaves, or park the candidate in its generation.
    Measured { exp: usize },
    /// Set by the clean after `Measured`: keep, reject or fail the experiment.
    Decide { exp: usize },
    /// Set by the clean before a repeat or a rerun: hash the inputs again, then evaluate.
    Retry { exp: usize },
    /// Set by a failed round (after its clean when alone): record the experiment's failure.
    RecordFailure { exp: usize },
    /// Set by recovery's own writes (an attempt closed, the host recorded): the next recovery
    /// step.
    Recover,
    /// Set by a reconcile's write (run interrupted, lock released): report the run untouched.
    Reconciled,
    /// Set by the cancel's restore of the worktree: write the ending (a waiting one first).
    Cancel,
    /// Set by the terminal write (or a failed restore during it): drop the slots, export the
    /// TSV, clean up, report.
    AfterTerminal,
    /// A generation's candidates are recorded: start each in its slot.
    Generation,
    /// Put a candidate's slot worktree at its parent, then propose.
    Prepare { exp: usize },
    /// A candidate of a generation is done (evaluated or failed): wait for the others.
    Park { exp: usize },
    /// A recovered candidate: rerun its interrupted evaluation.
    Rerun { exp: usize },
    /// A recovered candidate that was interrupted before its evaluation.
    Interrupted { exp: usize },
    /// A generation is decided: the main worktree goes to the best.
    Settled,
}

/// The effects queued for the driver and those awaiting an answer (with what may answer each:
/// [`Effect::answers`]).
#[derive(Default)]
pub(super) struct Bus {
    next_id: u64,
    queue: VecDeque<Effect>,
    pending: BTreeMap<EffectId, Pending>,
}

/// An outstanding effect: what its answer leads to, its kind and the inputs it takes.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    pub(super) awaiting: Await,
    pub(super) kind: &'static str,
    pub(super) takes: &'static [&'static str],
}

impl Bus {
    /// Queues the effect `make` builds under a fresh id, awaiting `awaiting`.
    pub(super) fn emit(&mut self, make: impl FnOnce(EffectId) -> Effect, awaiting: Await) {
        self.next_id += 1;
        let id = EffectId(self.next_id);
        let effect = make(id);
        let pending = Pending {
            awaiting,
            kind: effect.kind(),
            takes: effect.answers(),
        };
        self.pending.insert(id, pending);
        self.queue.push_back(effect);
    }

    /// Queues an effect no answer is awaited for (`Interrupt`, `Report`).
    pub(super) fn push(&mut self, effect: Effect) {
        self.queue.push_back(effect);
    }

    pub(super) fn poll(&mut self) -> Option<Effect> {
        self.queue.pop_front()
    }

    /// The outstanding effect `id`.
    pub(super) fn awaiting(&self, id: EffectId) -> Option<&Pending> {
        self.pending.get(&id)
    }

    /// Keeps `id` outstanding, now awaiting `awaiting`.
    pub(super) fn rewait(&mut self, id: EffectId, awaiting: Await) {
        if let Some(pending) = self.pending.get_mut(&id) {
            pending.awaiting = awaiting;
        }
    }

    /// `id` is answered.
    pub(super) fn settle(&mut self, id: EffectId) {
        self.pending.remove(&id);
    }

    pub(super) fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// Whether effects other than side writes are outstanding.
    pub(super) fn busy(&self) -> bool {
        self.pending
            .values()
            .any(|p| !matches!(p.awaiting, Await::SideWrite))
    }

    /// Whether a proposer is running.
    pub(super) fn proposing(&self) -> bool {
        self.pending
            .values()
            .any(|p| matches!(p.awaiting, Await::Propose { .. }))
    }

    /// The outstanding evaluators and proposers (what a cancel interrupts).
    pub(super) fn interruptible(&self) -> Vec<EffectId> {
        self.pending
            .iter()
            .filter(|(_, p)| matches!(p.awaiting, Await::Evaluate { .. } | Await::Propose { .. }))
            .map(|(id, _)| *id)
            .collect()
    }
}

pub(super) fn input_id(input: &Input) -> EffectId {
    match input {
        Input::Discovered { id, .. }
        | Input::Done { id }
        | Input::Persisted { id, .. }
        | Input::Loaded { id, .. }
        | Input::Retention { id, .. }
        | Input::Hashed { id, .. }
        | Input::Spawned { id, .. }
        | Input::Exited { id, .. }
        | Input::ProposerExited { id, .. }
        | Input::Proposed { id, .. }
        | Input::Changes { id, .. }
        | Input::Committed { id, .. }
        | Input::Terminated { id, .. }
        | Input::HostProbed { id, .. }
        | Input::Failed { id, .. } => *id,
        Input::Cancel { .. } => EffectId(0),
    }
}
