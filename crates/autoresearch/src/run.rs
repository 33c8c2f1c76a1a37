//! The run state machine: [`Run`].
//!
//! Call [`Run::start`] or [`Run::resume`], then loop: drain [`Run::poll`], perform each effect,
//! feed each answer to [`Run::handle`]. The run ends with exactly one [`Effect::Report`];
//! afterwards [`Run::status`] is [`Phase::Done`]. With `parallelism` 1 effects are issued one at
//! a time (apart from [`Effect::Interrupt`] and the process-evidence write during an evaluation);
//! with K > 1 each candidate of a generation (see `generation.rs`) has its own chain of effects
//! in its own slot's worktree. Durable state is written before every step that depends on it.

use crate::failure::Failure;
use crate::metric;

use crate::protocol::{
    Anomaly, Blocker, DriverError, Effect, EffectId, ExperimentRow, HashedFile, Input, InputPath,
    Point, ProcessOutcome, Removed, RepoFacts, RetentionArtifact, RunResult, Statement, Status,
    StoredRows,
};
use crate::retention;
use crate::spec::{RunPolicy, policy_from_json};
use crate::sql;
use crate::{jcs, layout};
use serde_json::{Map, Value, json};

use bus::{Await, Bus, HashFor, Then, input_id};
use durability::Durability;
use ending::Ending;
use generation::Generation;
use ledger::{ExpState, Experiment, Kind, Ledger};
use place::Place;
use recover::Recovery;
use sweeping::{Sweep, Sweeping};

mod bus;
mod decide;
mod durability;
mod ending;
mod evaluate;
mod finish;
mod generation;
mod handoff;
mod holdout;
mod ledger;
mod parallel;
mod place;
mod propose;
mod recover;
mod resume;
mod rows;
mod settings;
mod sweep;
mod sweeping;

/// Milliseconds since the epoch, injected by the driver (used only for timestamps in rows).
pub type Millis = u64;

/// Longest evaluator stderr excerpt kept in a failure message, in characters.
pub const STDERR_EXCERPT_CHARS: usize = 800;
/// The environment variable marking an evaluator's process group with its attempt id.
pub const ATTEMPT_MARKER_ENV: &str = "DSH_AUTORESEARCH_ATTEMPT";
/// Evaluator attempts per experiment (an interrupted attempt is rerun once); not a row key.
pub const MAX_ATTEMPTS_PER_EXPERIMENT: u32 = 2;
/// Experiments of history the proposer handoff carries at most.
pub const HANDOFF_HISTORY: usize = 20;

pub use crate::state::{RunState, transition_allowed};

/// Whether the machine waits for the driver or is done.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// Effects are outstanding (poll them, answer them).
    Waiting,
    /// The run reported its result.
    Done(Box<RunResult>),
}

#[derive(Clone, Debug)]
enum Origin {
    Fresh,
    Resume { given: Map<String, Value> },
    Abandon { reason: String },
    Reconcile,
}

/// One run of the loop. See the module documentation for the driver loop.
///
/// Its state is split by who owns it; each part lives in its own file under `run/`, and the
/// other files reach it through that file's methods.
pub struct Run {
    settings: Settings,
    origin: Origin,
    /// Known from the start for a fresh run, once loaded for a stored one.
    policy: Option<RunPolicy>,
    /// The timestamp of the input being handled.
    now: Millis,
    /// Where the run lives: ids, tracker, worktree, branch (`place.rs`).
    place: Place,
    /// Effects queued and outstanding, and what each answer leads to (`bus.rs`).
    bus: Bus,
    /// The run row as last written and as durable, and the lock (`durability.rs`).
    durability: Durability,
    /// Experiments, attempts, artifacts, baseline and best (`ledger.rs`).
    ledger: Ledger,
    /// The candidates side by side under `parallelism` > 1 (`generation.rs`).
    generation: Generation,
    /// The retention cleanup in progress and what it removed (`sweep.rs`).
    sweeping: Sweeping,
    /// Cancel, the ending under way, the warnings and the report (`ending.rs`).
    ending: Ending,
    /// Resume, abandon and reconcile: the host probe and the attempts to stop (`recover.rs`).
    recovery: Recovery,
}

/// Why [`Run::start`] refused its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
    /// The run id is not a lowercase UUID.
    BadRunId(String),
    /// The policy cannot fit the proposal handoff ([`handoff_problem`]).
    Spec(crate::spec::SpecError),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::BadRunId(id) => write!(f, "run id must be a lowercase UUID (got {id:?})"),
            StartError::Spec(e) => write!(f, "invalid spec: {e}"),
        }
    }
}

pub use handoff::{handoff_problem, parse_spec};
pub use settings::Settings;

impl Run {
    /// A fresh run of `policy` under the driver-generated `run_id` (a random lowercase UUID).
    pub fn start(
        policy: RunPolicy,
        run_id: &str,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        if !crate::spec::is_run_id(run_id) {
            return Err(StartError::BadRunId(run_id.to_owned()));
        }
        if let Some(problem) = handoff_problem(&policy, &settings) {
            return Err(StartError::Spec(problem));
        }
        let repository = policy.repository.clone();
        let mut run = Run::blank(settings, Origin::Fresh, run_id, repository, now);
        run.policy = Some(policy);
        run.emit_discover();
        Ok(run)
    }

    /// The run a validated spec asks for: a fresh run under `run_id` (a fresh lowercase UUID from
    /// the driver; unused otherwise), the resume, or the abandon, forced where the spec says.
    pub fn from_request(
        request: crate::spec::Request,
        run_id: &str,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        use crate::spec::{ABANDON_REASON, Request};
        let (mut run, force) = match request {
            Request::Fresh { policy, .. } => (Run::start(*policy, run_id, settings, now)?, false),
            Request::Resume {
                run_id,
                repository,
                given,
                force,
                ..
            } => (
                Run::resume(&run_id, given, repository, settings, now)?,
                force,
            ),
            Request::Abandon {
                run_id,
                repository,
                reason,
                force,
            } => {
                let reason = reason.as_deref().unwrap_or(ABANDON_REASON);
                (
                    Run::abandon(&run_id, reason, repository, settings, now)?,
                    force,
                )
            }
        };
        if force {
            run.force();
        }
        Ok(run)
    }

    /// Resumes the stored run `run_id`. Its policy comes from the database; `given` holds the policy
    /// keys the resume spec carried, which must match it (else the resume is refused and nothing
    /// is written).
    pub fn resume(
        run_id: &str,
        given: Map<String, Value>,
        repository: Option<String>,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        Run::stored(Origin::Resume { given }, run_id, repository, settings, now)
    }

    /// Abandons the stored run `run_id` (the operator's way out of a run nobody will resume):
    /// its interrupted attempts' process groups are terminated as in a resume, then it is
    /// cancelled (worktree restored to the best commit, unresolved experiments cancelled, lock
    /// released) with `reason`. A finished run is reported again unchanged; a terminal run whose
    /// processes could not be proven gone releases its lock once they are.
    pub fn abandon(
        run_id: &str,
        reason: &str,
        repository: Option<String>,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        let origin = Origin::Abandon {
            reason: reason.to_owned(),
        };
        Run::stored(origin, run_id, repository, settings, now)
    }

    /// Lets this resume or abandon go on when the run's host cannot be proven dead (another
    /// machine, boot or PID namespace, or a host that is alive). The operator's explicit choice;
    /// call it before the first [`Run::handle`].
    pub fn force(&mut self) {
        self.recovery.force();
    }

    /// Reconciles `run_id` after a restart (see `recover.rs`): when the host that drove it is
    /// provably dead, its leftover process groups are stopped, its lock released and it is
    /// marked interrupted (still resumable); otherwise nothing is written.
    pub fn reconcile(
        run_id: &str,
        repository: Option<String>,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        Run::stored(Origin::Reconcile, run_id, repository, settings, now)
    }

    /// A machine for the stored run `run_id` (validated before any path is built), discovering.
    fn stored(
        origin: Origin,
        run_id: &str,
        repository: Option<String>,
        settings: Settings,
        now: Millis,
    ) -> Result<Run, StartError> {
        if !crate::spec::is_run_id(run_id) {
            return Err(StartError::BadRunId(run_id.to_owned()));
        }
        let mut run = Run::blank(settings, origin, run_id, repository, now);
        run.emit_discover();
        Ok(run)
    }

    /// A read-only view of stored rows (for `show`): the result as the rows stand, without
    /// recovering or writing anything. A run that has not ended has [`RunResult::state`] set.
    pub fn snapshot(
        rows: &StoredRows,
        tracker: &str,
        settings: Settings,
    ) -> Result<RunResult, String> {
        let r = &rows.run;
        let stored: Value = serde_json::from_str(&r.policy_json)
            .map_err(|e| format!("the stored policy is not JSON: {e}"))?;
        let policy = policy_from_json(&stored, &settings.limits).map_err(|errors| {
            let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
            format!("the stored policy no longer validates: {}", list.join("; "))
        })?;
        let state = RunState::parse(&r.state)
            .ok_or_else(|| format!("unknown stored run state {:?}", r.state))?;
        let mut run = Run::blank(settings, Origin::Fresh, &r.run_id, None, 0);
        run.place.tracker = tracker.to_owned();
        run.fill_from(rows, policy, state);
        run.sweeping.removed = Removed::of(rows);
        let mut result = run.build_result(
            state.status().unwrap_or(Status::Blocked),
            stored_blocker(r.blocker_json.as_deref()),
            true,
        );
        if state.status().is_none() {
            result.state = Some(state.as_str().to_owned());
        }
        Ok(result)
    }

    fn blank(
        settings: Settings,
        origin: Origin,
        run_id: &str,
        repository: Option<String>,
        now: Millis,
    ) -> Run {
        Run {
            settings,
            origin,
            policy: None,
            now,
            place: Place::new(run_id, repository),
            bus: Bus::default(),
            durability: Durability::default(),
            ledger: Ledger::default(),
            generation: Generation::default(),
            sweeping: Sweeping::default(),
            ending: Ending::default(),
            recovery: Recovery::default(),
        }
    }

    /// Fills the machine from stored rows (no effects, no checks).
    fn fill_from(&mut self, rows: &StoredRows, policy: RunPolicy, state: RunState) {
        self.ledger = Ledger::stored(rows, &self.place.run_id, policy.parallelism);
        self.policy = Some(policy);
        self.durability.load(state, rows.run.lock_held);
        self.place.load(&rows.run);
    }

    /// The next effect to perform, if any.
    #[must_use]
    pub fn poll(&mut self) -> Option<Effect> {
        self.bus.poll()
    }

    /// Waiting or done.
    pub fn status(&self) -> Phase {
        match &self.ending.done {
            Some(r) => Phase::Done(r.clone()),
            None => Phase::Waiting,
        }
    }

    /// The durable run state as the core last wrote it.
    pub fn state(&self) -> RunState {
        self.durability.state
    }

    /// Run id.
    pub fn run_id(&self) -> &str {
        &self.place.run_id
    }

    /// Candidate experiments started so far (the budget used).
    pub fn candidates_started(&self) -> u32 {
        self.ledger
            .experiments
            .iter()
            .filter(|e| e.kind == Kind::Candidate)
            .count() as u32
    }

    /// The best point so far, as durably recorded: a new best appears only once the transaction
    /// that records it has been answered `Persisted`, so what a driver shows can never be undone
    /// by a crash and resume.
    pub fn best(&self) -> Option<&Point> {
        self.ledger.best.as_ref()
    }

    /// The policy (known after a resume has loaded it).
    pub fn policy(&self) -> Option<&RunPolicy> {
        self.policy.as_ref()
    }

    /// The result as it stands (final once [`Phase::Done`]).
    pub fn result(&self) -> RunResult {
        let status = self.durability.state.status().unwrap_or(Status::Blocked);
        self.build_result(status, None, self.durability.run_persisted)
    }

    /// Feeds one input. `now` timestamps the rows it writes.
    pub fn handle(&mut self, input: Input, now: Millis) -> Result<(), DriverError> {
        self.now = now;
        if let Input::Cancel { reason } = input {
            if self.ending.done.is_none() && self.ending.cancel.is_none() {
                self.ending.cancel = Some(reason);
                self.begin_cancel();
            }
            return Ok(());
        }
        if self.ending.done.is_some() {
            return Err(DriverError::Finished);
        }
        let id = input_id(&input);
        let Some(pending) = self.bus.awaiting(id).cloned() else {
            return Err(DriverError::UnknownEffect(id));
        };
        if !pending.takes.contains(&input.kind()) {
            return Err(DriverError::WrongAnswer {
                id,
                effect: pending.kind,
                takes: pending.takes,
                got: input.kind(),
            });
        }
        let awaiting = pending.awaiting;
        // `Spawned` (which only a `runEvaluator` takes, and so an `Await::Evaluate`) is a
        // progress note: the effect stays outstanding.
        if let (Input::Spawned { process, .. }, Await::Evaluate { exp, attempt, .. }) =
            (&input, &awaiting)
        {
            let (exp, attempt) = (*exp, *attempt);
            self.bus.rewait(
                id,
                Await::Evaluate {
                    exp,
                    attempt,
                    spawned: true,
                },
            );
            self.ledger.attempts[attempt].process = Some(process.clone());
            let st = sql::SetAttemptProcess {
                pid: u64::from(process.pid).into(),
                pgid: u64::from(process.pgid).into(),
                process_start_time: process.start_time.clone().into(),
                attempt_id: self.ledger.attempts[attempt].id.clone().into(),
            }
            .into();
            self.emit(
                |id| Effect::Persist {
                    id,
                    statements: vec![st],
                },
                Await::SideWrite,
            );
            return Ok(());
        }
        self.bus.settle(id);
        let proposal = matches!(awaiting, Await::Propose { .. });
        self.on_answer(awaiting, input);
        if proposal {
            self.release_held_evaluations();
        }
        Ok(())
    }

    // ----- effect plumbing -----

    fn emit(&mut self, make: impl FnOnce(EffectId) -> Effect, awaiting: Await) {
        self.bus.emit(make, awaiting);
    }

    fn write(&mut self, statements: Vec<Statement>, cas: Vec<usize>, then: Then) {
        self.emit(
            |id| Effect::Persist { id, statements },
            Await::Write { cas, then },
        );
    }

    fn clean(&mut self, commit: String, then: Then) {
        self.clean_at(self.place.worktree.clone(), commit, then);
    }

    fn clean_at(&mut self, worktree: String, commit: String, then: Then) {
        self.emit(
            |id| Effect::CheckoutClean {
                id,
                worktree,
                commit,
            },
            Await::Clean(then),
        );
    }

    fn emit_discover(&mut self) {
        let repository = self.place.repository.clone();
        self.emit(|id| Effect::Discover { id, repository }, Await::Discover);
    }

    fn p(&self) -> &RunPolicy {
        // Every caller runs after the policy is known (fresh start or a loaded resume).
        self.policy.as_ref().expect("policy known")
    }

    fn restore_commit(&self) -> String {
        self.ledger
            .best
            .as_ref()
            .map(|b| b.commit.clone())
            .unwrap_or_else(|| self.place.start_commit.clone())
    }

    /// Runs this repository may still hold at once: the limit less the original's live runs.
    fn slots(&self) -> u32 {
        let other = self.place.facts.as_ref().map_or(0, |f| f.other_live_runs);
        self.settings
            .max_active_runs_per_repository
            .saturating_sub(other)
    }

    fn refuse_no_slot(&mut self) {
        let other = self.place.facts.as_ref().map_or(0, |f| f.other_live_runs);
        self.refuse(
            Failure::LockUnavailable,
            "the original dsh-autoresearch's live runs fill the repository's active-run limit",
            vec![format!(
                "{other} live run(s) in the original's lock database; maxActiveRunsPerRepository {}",
                self.settings.max_active_runs_per_repository
            )],
        );
    }

    /// Records this driver's host as the one driving the run.
    fn set_host(&self) -> Statement {
        sql::SetHost {
            host_json: self
                .place
                .facts
                .as_ref()
                .and_then(|f| f.host.clone())
                .into(),
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
        }
        .into()
    }

    fn set_state(&mut self, to: RunState) -> Statement {
        let from = self.durability.state;
        debug_assert!(transition_allowed(from, to), "{from:?} -> {to:?}");
        self.durability.state = to;
        sql::SetRunState {
            to: to.as_str().into(),
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
            from: from.as_str().into(),
        }
        .into()
    }

    // ----- answers -----

    fn on_answer(&mut self, awaiting: Await, input: Input) {
        if let Input::Failed { error, .. } = &input {
            return self.on_failure(awaiting, error.clone());
        }
        if self.ending.cancel.is_some() && self.ending.finishing.is_none() {
            // Cancelled before the run row exists: stop without writing anything but the lock's
            // release.
            match (&awaiting, &input) {
                (Await::Discover | Await::Open | Await::Load, _) => {
                    return self.finish(Status::Cancelled, self.cancel_blocker(), true);
                }
                (Await::Lock, Input::Persisted { changes, .. }) => {
                    self.durability.lock_held = changes.first() == Some(&1);
                    self.durability.run_persisted = changes.get(..2) == Some(&[1, 1][..]);
                    return self.finish(Status::Cancelled, self.cancel_blocker(), true);
                }
                _ => {}
            }
        }
        match (awaiting, input) {
            (Await::Discover, Input::Discovered { facts, .. }) => self.on_discovered(facts),
            (Await::Open, _) => {
                self.durability.tracker_open = true;
                self.sweep(Sweep::Start);
            }
            (Await::Lock, Input::Persisted { changes, .. }) => {
                if changes.get(..2) != Some(&[1, 1][..]) {
                    return self.refuse(
                        Failure::LockUnavailable,
                        "the run_tag is live in another run, or the repository already has its maximum of active runs",
                        vec![format!("run_tag={}", self.p().run_tag)],
                    );
                }
                self.durability.lock_held = true;
                self.durability.run_persisted = true;
                self.advance(Then::CreateWorktree);
            }
            (Await::Load, Input::Loaded { rows, .. }) => {
                if let Some(rows) = &rows {
                    self.sweeping.removed = Removed::of(rows);
                }
                self.on_loaded(rows)
            }
            (Await::Write { cas, then }, Input::Persisted { changes, .. }) => {
                if let Some(&i) = cas.iter().find(|&&i| changes.get(i) != Some(&1)) {
                    self.ledger.pending_best = None;
                    return self.block(
                        Failure::StateConflict,
                        "a compare-and-set write changed no row: another controller moved this run",
                        vec![format!("statement {i} of the transaction")],
                        true,
                    );
                }
                self.durability.durable = self.durability.state;
                if let Some((point, is_baseline)) = self.ledger.pending_best.take() {
                    if is_baseline {
                        self.ledger.baseline = Some(point.clone());
                    }
                    self.ledger.best = Some(point);
                }
                self.advance(then);
            }
            (Await::SideWrite, _) => {}
            (Await::Worktree, _) => {
                self.place.worktree_ready = true;
                self.emit_hash(HashFor::Freeze);
            }
            (Await::Hash(purpose), Input::Hashed { files, .. }) => self.on_hashed(purpose, files),
            (Await::Evaluate { exp, attempt, .. }, Input::Exited { outcome, .. }) => {
                self.on_exited(exp, attempt, outcome)
            }
            (Await::Propose { exp }, Input::Proposed { report, .. }) => {
                self.on_proposal(exp, Ok(report), true)
            }
            (Await::Propose { exp }, Input::ProposerExited { outcome, .. }) => {
                let quiescent = outcome.quiescent;
                let parsed = if outcome.cancelled {
                    Err((
                        Failure::Cancelled,
                        "the proposer was interrupted".to_owned(),
                    ))
                } else if outcome.timed_out {
                    Err((
                        Failure::ProposerTimeout,
                        "the proposer timed out".to_owned(),
                    ))
                } else if outcome.exit_code != Some(0) {
                    Err((
                        Failure::ProposerFailed,
                        format!(
                            "the proposer {}: {}",
                            ended_how(&outcome),
                            text::clip_within(outcome.stderr_tail.trim(), STDERR_EXCERPT_CHARS)
                        ),
                    ))
                } else {
                    metric::parse_report(&outcome.stdout_tail, outcome.stdout_truncated)
                        .map_err(|e| (Failure::ProposerReport, e.to_string()))
                };
                self.on_proposal(exp, parsed, quiescent);
            }
            (
                Await::Changes { exp },
                Input::Changes {
                    porcelain_z,
                    worktree,
                    ..
                },
            ) => self.on_changes(exp, &porcelain_z, worktree),
            (Await::Commit { exp }, Input::Committed { commit, .. }) => {
                if !is_commit(&commit) {
                    return self.block(
                        Failure::GitOutput,
                        "the candidate commit is not 40 lowercase hex",
                        vec![commit],
                        true,
                    );
                }
                self.ledger.experiments[exp].commit = Some(commit.clone());
                let st = sql::SetExperimentCommit {
                    candidate_commit: commit.into(),
                    now: self.now.into(),
                    experiment_id: self.ledger.experiments[exp].id.clone().into(),
                }
                .into();
                self.write(vec![st], vec![0], Then::Revalidate { exp });
            }
            (Await::Clean(then), _) => self.advance(then),
            (Await::FastForward { exp }, _) if self.parallel() => self.finish_generation(Some(exp)),
            (Await::FastForward { exp }, _) => self.finish_candidate(exp),
            (Await::SlotWorktree { slot, then }, _) => {
                self.generation.slots_made.push(slot);
                self.advance(then)
            }
            (Await::DropSlot, _) => self.slot_dropped(),
            (Await::Terminate { attempt }, Input::Terminated { gone, .. }) => {
                self.on_terminated(attempt, gone)
            }
            (Await::ReapProposers, Input::Terminated { gone, .. }) => {
                self.on_proposers_reaped(gone)
            }
            (Await::Probe, Input::HostProbed { alive, .. }) => self.on_probed(alive),
            (Await::Retake, Input::Persisted { changes, .. }) => self.on_retaken(&changes),
            (Await::Tsv, _) => self.after_tsv(),
            (Await::Retention(at), Input::Retention { rows, .. }) => self.on_retention(at, &rows),
            (Await::Removal(at), _) => self.on_removal(at, None),
            (Await::Marks(at), _) => self.swept(at),
            // `Effect::answers`, checked in `handle`, rules out every other pairing.
            _ => {}
        }
    }

    /// The tracker is open and the start's cleanup done: take the lock for a fresh run, or load
    /// the stored one.
    fn after_open(&mut self) {
        if self.ending.cancel.is_some() {
            return self.finish(Status::Cancelled, self.cancel_blocker(), true);
        }
        match self.origin {
            Origin::Fresh => {
                if self.slots() == 0 {
                    return self.refuse_no_slot();
                }
                let p = self.p();
                let lock = sql::AcquireLock {
                    run_id: self.place.run_id.clone().into(),
                    repository_id: self.place.repository_id.clone().into(),
                    run_tag: p.run_tag.clone().into(),
                    now: self.now.into(),
                    max_active: self.slots().into(),
                }
                .into();
                let insert = sql::InsertRun {
                    run_id: self.place.run_id.clone().into(),
                    repository_id: self.place.repository_id.clone().into(),
                    run_tag: p.run_tag.clone().into(),
                    branch: self.place.branch.clone().into(),
                    worktree: self.place.worktree.clone().into(),
                    start_commit: self.place.start_commit.clone().into(),
                    policy_json: jcs::canonical(&p.to_json()).into(),
                    policy_sha256: p.sha256().into(),
                    now: self.now.into(),
                }
                .into();
                let host = self.set_host();
                self.emit(
                    |id| Effect::Persist {
                        id,
                        statements: vec![lock, insert, host],
                    },
                    Await::Lock,
                );
            }
            Origin::Resume { .. } | Origin::Abandon { .. } | Origin::Reconcile => {
                let run_id = self.place.run_id.clone();
                self.emit(|id| Effect::LoadRun { id, run_id }, Await::Load);
            }
        }
    }

    fn on_failure(&mut self, awaiting: Await, error: String) {
        let error = text::clip_within(&error, 2_000);
        match awaiting {
            Await::Discover => self.refuse(
                Failure::RepositoryUnavailable,
                "git discovery failed",
                vec![error],
            ),
            Await::Open => self.refuse(
                Failure::TrackerUnavailable,
                "the tracker database could not be opened",
                vec![error],
            ),
            Await::Load => self.refuse(
                Failure::TrackerUnavailable,
                "the run could not be loaded",
                vec![error],
            ),
            Await::Lock | Await::Retake => self.refuse(
                Failure::LockUnavailable,
                "the repository lock could not be taken",
                vec![error],
            ),
            Await::Probe => self.report_untouched(format!(
                "the host that drove the run could not be probed ({error}); nothing was changed"
            )),
            Await::Write { .. } => {
                if self.ending.finishing.is_some() {
                    self.warn(format!("terminal write failed: {error}"));
                    self.durability.run_persisted = false;
                    self.after_tsv();
                } else {
                    // The in-memory state ran ahead of the failed transaction: roll it back.
                    self.durability.state = self.durability.durable;
                    self.ledger.pending_best = None;
                    self.block(
                        Failure::PersistFailed,
                        "a tracker write failed",
                        vec![error],
                        true,
                    );
                }
            }
            Await::SideWrite => self
                .ending
                .warnings
                .push(format!("process evidence not recorded: {error}")),
            Await::Worktree => self.block(
                Failure::WorktreeFailed,
                "the run worktree could not be created",
                vec![error],
                true,
            ),
            Await::Hash(_) => self.block(
                Failure::HashFailed,
                "evaluator inputs could not be hashed",
                vec![error],
                true,
            ),
            Await::Evaluate {
                exp,
                attempt,
                spawned,
            } => {
                // A spawn that never happened is an ordinary, recorded outcome (never a throw that
                // would make every resume loop on the same error).
                let outcome = ProcessOutcome {
                    quiescent: !spawned,
                    ..ProcessOutcome::default()
                };
                self.record_evaluation(exp, attempt, outcome, Some(error));
            }
            Await::Propose { exp } => {
                self.on_proposal(exp, Err((Failure::ProposerFailed, error)), true)
            }
            Await::SlotWorktree { slot, .. } => self.block(
                Failure::WorktreeFailed,
                "a slot's worktree could not be created",
                vec![format!("slot {slot}: {error}")],
                true,
            ),
            Await::DropSlot => {
                self.warn(format!("a slot's worktree could not be removed: {error}"));
                self.slot_dropped();
            }
            Await::Changes { .. } | Await::Commit { .. } | Await::FastForward { .. } => self.block(
                Failure::GitFailed,
                "a git operation on the run worktree failed",
                vec![error],
                true,
            ),
            Await::Clean(_) => {
                if self.ending.finishing.is_some() {
                    self.warn(format!("worktree restore failed: {error}"));
                    self.advance(Then::AfterTerminal);
                } else {
                    self.block(
                        Failure::GitFailed,
                        "restoring the run worktree failed",
                        vec![error],
                        true,
                    )
                }
            }
            Await::Terminate { attempt } => self.on_terminated(attempt, false),
            Await::ReapProposers => self.on_proposers_reaped(false),
            Await::Tsv => {
                self.warn(format!("TSV export failed: {error}"));
                self.after_tsv();
            }
            Await::Retention(at) => {
                self.warn(format!("retention cleanup skipped: {error}"));
                self.swept(at);
            }
            Await::Removal(at) => self.on_removal(at, Some(error)),
            Await::Marks(at) => {
                self.warn(format!("retention marks not recorded: {error}"));
                self.swept(at);
            }
        }
    }

    fn on_discovered(&mut self, facts: RepoFacts) {
        if !is_commit(&facts.head) {
            return self.refuse(
                Failure::RepositoryUnavailable,
                "HEAD is not a commit",
                vec![facts.head],
            );
        }
        // A resume learns its policy only from the tracker; it checks the config once loaded.
        if self.policy.is_some() && self.config_unsafe(&facts.git_config, false) {
            return;
        }
        let root = state_dir(&facts.git_common_dir, &self.settings.state_root);
        self.place.repository_id =
            jcs::sha256_hex(format!("{}\0{}", facts.git_common_dir, facts.toplevel).as_bytes());
        self.place.tracker = tracker_path(&facts.git_common_dir, &self.settings.state_root);
        if let Some(p) = &self.policy {
            self.place.worktree = layout::worktree_path(&root, &self.place.run_id);
            self.place.branch = format!(
                "{}{}-{}",
                self.settings.branch_prefix, p.run_tag, self.place.run_id
            );
            self.place.start_commit = facts.head.clone();
        }
        self.place.facts = Some(facts);
        let path = self.place.tracker.clone();
        self.emit(|id| Effect::OpenTracker { id, path }, Await::Open);
    }

    // ----- steps -----

    fn advance(&mut self, then: Then) {
        if self.ending.cancel.is_some()
            && self.ending.finishing.is_none()
            && !matches!(
                then,
                Then::AfterTerminal | Then::Cancel | Then::RecordFailure { .. }
            )
        {
            return self.do_cancel();
        }
        match then {
            Then::CreateWorktree => {
                let (path, branch, start_commit) = (
                    self.place.worktree.clone(),
                    self.place.branch.clone(),
                    self.place.start_commit.clone(),
                );
                self.emit(
                    |id| Effect::CreateWorktree {
                        id,
                        path,
                        branch: Some(branch),
                        start_commit,
                    },
                    Await::Worktree,
                );
            }
            Then::Spawn { exp, attempt } => {
                if self.evaluation_waits_for_proposers() {
                    self.generation.held.push((exp, attempt));
                } else {
                    self.spawn(exp, attempt);
                }
            }
            Then::Ready => {
                // A failed attempt's artifacts go as soon as its experiment ended.
                let failed = std::mem::take(&mut self.sweeping.failed_artifacts);
                let due: Vec<&RetentionArtifact> = failed.iter().collect();
                match retention::files_removal(self.state_dir(), &self.place.run_id, &due, false) {
                    Some(removal) => {
                        self.sweeping.queue.push_back(removal);
                        self.next_removal(Sweep::FailedAttempts);
                    }
                    None => self.next_round(),
                }
            }
            Then::Propose { exp } => {
                let Some(handoff) = self.handoff(exp) else {
                    let max = self.settings.max_handoff_chars;
                    return self.block(
                        Failure::HandoffTooLarge,
                        "the proposal handoff does not fit maxHandoffChars even without history (the run started under a larger limit)",
                        vec![format!("maxHandoffChars {max}")],
                        true,
                    );
                };
                let p = self.p();
                let argv = p.proposer.as_ref().map(|c| {
                    std::iter::once(c.command.clone())
                        .chain(c.args.iter().cloned())
                        .collect()
                });
                let (worktree, timeout_ms, grace_ms) = (
                    self.worktree_of(exp),
                    p.timeout_ms,
                    self.settings.termination_grace_ms,
                );
                let state_dir = self.state_dir().to_owned();
                let confined = p.holdout.is_some();
                self.emit(
                    |id| Effect::RunProposer {
                        id,
                        worktree,
                        argv,
                        handoff,
                        timeout_ms,
                        grace_ms,
                        state_dir,
                        confined,
                    },
                    Await::Propose { exp },
                );
            }
            Then::Commit { exp } => {
                let e = &self.ledger.experiments[exp];
                let (worktree, parent, paths) = (
                    self.worktree_of(exp),
                    e.parent.clone(),
                    e.changed_paths.clone(),
                );
                let message = format!("autoresearch candidate {}", e.id);
                let keep_ref = layout::candidate_ref(&self.place.run_id, e.ordinal);
                self.emit(
                    |id| Effect::Commit {
                        id,
                        worktree,
                        parent,
                        paths,
                        message,
                        keep_ref,
                    },
                    Await::Commit { exp },
                );
            }
            Then::Revalidate { exp } => self.emit_hash(HashFor::Revalidate { exp }),
            Then::Retry { exp } => self.emit_hash(HashFor::Retry { exp }),
            // The generation decides once all are in. The slot is cleaned when its next
            // candidate starts (the evaluator's byproducts never reach it), the run's worktree
            // once the generation is decided.
            Then::Measured { exp }
                if self.parallel() && self.ledger.experiments[exp].kind == Kind::Candidate =>
            {
                self.park(exp)
            }
            Then::Measured { exp } => {
                let e = &self.ledger.experiments[exp];
                let target = match (e.kind, self.accepts(exp)) {
                    (Kind::Candidate, true) => e.commit.clone().unwrap_or_default(),
                    (Kind::Candidate, false) => self.restore_commit(),
                    (Kind::Baseline, _) => self.place.start_commit.clone(),
                };
                self.clean(target, Then::Decide { exp });
            }
            Then::Resample { exp } => {
                let commit = self.evaluated_commit(exp);
                self.clean_at(self.worktree_of(exp), commit, Then::Retry { exp });
            }
            Then::Decide { exp } => self.decide(exp),
            Then::RecordFailure { exp } if self.parallel() => {
                let sts = vec![self.finish_experiment(exp)];
                self.write(sts, vec![], Then::Park { exp });
            }
            Then::RecordFailure { exp } => {
                let sts = vec![
                    self.finish_experiment(exp),
                    self.set_failures(),
                    self.set_state(RunState::Ready),
                ];
                self.write(sts, vec![2], Then::Ready);
            }
            Then::Recover => self.recover_next(),
            Then::Reconciled => self.report_untouched(
                "its host was dead: leftover processes were stopped, the lock released, the run \
                 marked interrupted; resume it with resume_run_id or end it with abandon_run_id"
                    .into(),
            ),
            Then::Cancel => match self.ending.stopping.take() {
                Some((status, blocker, quiescent)) => self.finish(status, blocker, quiescent),
                None => self.finish(Status::Cancelled, self.cancel_blocker(), true),
            },
            Then::AfterTerminal => self.after_terminal(),
            Then::Generation => {
                for exp in self.generation.members.clone() {
                    self.in_slot(exp, Then::Prepare { exp });
                }
            }
            Then::Prepare { exp } => {
                let parent = self.ledger.experiments[exp].parent.clone();
                let clean = self.ledger.experiments[exp].slot == 0
                    && self.generation.main_clean_at.take().as_ref() == Some(&parent);
                if clean {
                    return self.advance(Then::Propose { exp });
                }
                self.clean_at(self.worktree_of(exp), parent, Then::Propose { exp });
            }
            Then::Park { exp } => self.park(exp),
            Then::Rerun { exp } => self.retry(exp),
            Then::Interrupted { exp } => self.fail_round(
                exp,
                ExpState::Failed,
                Failure::Interrupted,
                "the round was interrupted before its candidate was evaluated".into(),
                vec![],
            ),
            Then::Settled => {
                let best = self.restore_commit();
                self.generation.main_clean_at = Some(best.clone());
                self.clean(best, Then::Ready);
            }
        }
    }
}

/// Provenance of an evaluation: SHA-256 over the canonical JSON of what determines the metric —
/// the argv and cwd, the environment (values hashed), the metric protocol, name and direction, the
/// provenance labels, and each real input file's hash. One function computes it at freezing,
/// revalidation and recovery alike, so the same inputs always give the same hash.
pub fn provenance(
    policy: &RunPolicy,
    inputs: &[InputPath],
    files: &[HashedFile],
) -> (Value, String) {
    let mut hashed = Map::new();
    for input in inputs {
        let sha = files
            .iter()
            .find(|f| f.path == input.as_str())
            .and_then(|f| f.sha256.clone());
        hashed.insert(input.as_str().to_owned(), json!(sha));
    }
    let env: Map<String, Value> = policy
        .environment
        .iter()
        .map(|(k, v)| (k.clone(), json!(format!("sha256:{}", v.sha256))))
        .collect();
    let value = json!({
        "protocol": metric::METRIC_PROTOCOL,
        "evaluation": {
            "command": policy.evaluation.argv.command,
            "args": policy.evaluation.argv.args,
            "cwd": policy.evaluation.cwd,
        },
        "environment": env,
        "metric_name": policy.metric_name,
        "metric_direction": policy.direction.as_str(),
        "labels": {"evaluator": policy.provenance_evaluator, "dataset": policy.provenance_dataset},
        "inputs": hashed,
    });
    let sha = jcs::canonical_sha256(&value);
    (value, sha)
}

pub use crate::layout::{state_dir, tracker_path};

fn stored_blocker(json: Option<&str>) -> Option<Blocker> {
    let b = serde_json::from_str::<Value>(json?).ok()?;
    Some(Blocker {
        code: b["code"].as_str().unwrap_or("").to_owned(),
        message: b["message"].as_str().unwrap_or("").to_owned(),
        evidence: b["evidence"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

fn row(e: &Experiment) -> ExperimentRow {
    ExperimentRow {
        experiment_id: e.id.clone(),
        ordinal: e.ordinal,
        kind: if e.kind == Kind::Baseline {
            "baseline"
        } else {
            "candidate"
        },
        state: match e.superseded_by {
            Some(_) => "superseded".to_owned(),
            None => e.state.as_str().to_owned(),
        },
        superseded_by: e.superseded_by.clone(),
        parent_commit: e.parent.clone(),
        candidate_commit: e.commit.clone(),
        metric: e.metric,
        samples: e.samples.clone(),
        confirmation: e.fresh.clone(),
        holdout: e.holdout_mean(),
        decision: e.decision.map(str::to_owned),
        failure_code: e.failure_code.clone(),
        failure_message: e.failure_message.clone(),
        hypothesis: e.report.as_ref().map(|r| r.hypothesis.clone()),
        summary: e.report.as_ref().map(|r| r.summary.clone()),
    }
}

/// "exited with code 3", "was killed by SIGKILL" or "ended without an exit code".
/// Anomalies as evidence lines (`reason: path`).
fn anomaly_evidence(anomalies: &[Anomaly]) -> Vec<String> {
    anomalies
        .iter()
        .map(|a| format!("{}: {}", a.kind.as_str(), a.path))
        .collect()
}

fn ended_how(outcome: &ProcessOutcome) -> String {
    match (&outcome.signal, outcome.exit_code) {
        (Some(sig), _) => format!("was killed by {sig}"),
        (None, Some(code)) => format!("exited with code {code}"),
        (None, None) => "ended without an exit code".to_owned(),
    }
}

fn is_commit(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
