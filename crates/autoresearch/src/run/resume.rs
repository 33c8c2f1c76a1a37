//! Resume, abandon and reconcile, carried out on the run: a run rebuilt from its stored rows,
//! its host probed, interrupted attempts' process groups stopped, and the step that was under way
//! redone or decided. What to do is `recover.rs`'s to say.

use super::bus::{Await, Then};
use super::ending::Outcome;
use super::ledger::ExpState;
use super::recover::{Refusal, Stop, check_stored, probed_refusal, same_process_space};
use super::{Origin, Run, stored_blocker};
use crate::failure::Failure;
use crate::protocol::{Effect, StoredRows, StoredRun};
use crate::state::RunState;

impl Run {
    pub(super) fn on_loaded(&mut self, rows: Option<Box<StoredRows>>) {
        let given = match &self.origin {
            Origin::Resume { given } => Some(given),
            _ => None,
        };
        let Some(rows) = rows else {
            return self.refuse(
                Failure::RunMissing,
                "no run with this id in the repository's tracker",
                vec![self.run_id().to_owned()],
            );
        };
        let checked = check_stored(
            &rows,
            &self.place.repository_id,
            given,
            &self.settings.limits,
        );
        let (policy, state) = match checked {
            Ok(checked) => checked,
            Err(refusal) => return self.refused(refusal),
        };
        self.fill_from(&rows, policy, state);
        self.recovery.loaded(rows.run.host_json.clone());
        if matches!(self.origin, Origin::Reconcile) {
            return self.begin_reconcile(&rows.run);
        }
        // A resume or abandon never takes a run from a host that may still drive it.
        if let Some(host) = self.recovery.host_to_probe(&rows.run, state) {
            self.recovery.hold(rows);
            return self.probe_host(host);
        }
        self.go_on_loaded(&rows);
    }

    fn refused(&mut self, r: Refusal) {
        self.refuse(r.code, &r.message, r.evidence);
    }

    /// Goes on with loaded rows whose host is dead, unrecorded or overridden.
    fn go_on_loaded(&mut self, rows: &StoredRows) {
        let r = &rows.run;
        let state = self.state();
        if let Origin::Abandon { reason } = &self.origin
            && !state.is_terminal()
        {
            // Recovery terminates interrupted process groups first, then diverts to the cancel.
            let reason = reason.clone();
            self.request_cancel(reason);
        }
        if let Some(status) = state.status() {
            let ending: Outcome = (
                status,
                stored_blocker(r.blocker_json.as_deref()),
                r.quiescent,
            );
            self.resume_ending(ending);
            if r.quiescent && !r.lock_held {
                // A finished run: report it again, write nothing.
                return self.report();
            }
        } else if !r.lock_held && r.interrupted_at.is_some() {
            // Reconciled after its host died: take the lock again, then go on as from a crash.
            if self.slots() == 0 {
                return self.refuse_no_slot();
            }
            let statements = self.retake_lock();
            return self.emit(|id| Effect::Persist { id, statements }, Await::Retake);
        } else if !r.lock_held {
            return self.refuse(
                Failure::LockLost,
                "the run is not terminal but holds no repository lock",
                vec![],
            );
        }
        self.resume_loaded(matches!(self.origin, Origin::Resume { .. }));
    }

    /// Goes on with a loaded run that holds its lock: records this host as the one driving it
    /// (`record_host`), stops interrupted attempts, continues by the stored state.
    fn resume_loaded(&mut self, record_host: bool) {
        self.place.worktree_ready = self.state() != RunState::Initializing;
        self.recovery.begin(self.ledger.running_attempts(), false);
        if record_host && !self.ending_begun() {
            let st = self.set_host();
            return self.write(vec![st], vec![], Then::Recover);
        }
        self.recover_next();
    }

    pub(super) fn on_retaken(&mut self, changes: &[u64]) {
        if changes.first() != Some(&1) {
            return self.refuse(
                Failure::LockUnavailable,
                "the repository already has its maximum of active runs",
                vec![],
            );
        }
        self.durability.lock_held = true;
        // The retake recorded this host already.
        self.resume_loaded(false);
    }

    /// Only a run that holds its lock and whose host is provably dead is touched.
    fn begin_reconcile(&mut self, r: &StoredRun) {
        if self.state().is_terminal() || !r.lock_held || r.interrupted_at.is_some() {
            return self.report_untouched(format!(
                "the run is {} and holds no live lock: nothing to reconcile",
                self.state().as_str()
            ));
        }
        let Some(host) = r.host_json.clone() else {
            return self.report_untouched(
                "the run has no host record (an earlier version started it), so its host \
                 cannot be proven dead; resume it with resume_run_id or end it with abandon_run_id"
                    .into(),
            );
        };
        self.probe_host(host);
    }

    /// This driver's host record.
    fn current_host(&self) -> Option<&str> {
        self.place.facts.as_ref().and_then(|f| f.host.as_deref())
    }

    /// Asks the driver whether the recorded host's process lives, when its pid means something
    /// here (this machine, boot and PID namespace); otherwise whether it lives cannot be told.
    fn probe_host(&mut self, host: String) {
        if same_process_space(Some(&host), self.current_host()) {
            self.emit(|id| Effect::ProbeHost { id, host }, Await::Probe);
        } else {
            self.on_probed(None);
        }
    }

    pub(super) fn on_probed(&mut self, alive: Option<bool>) {
        if let Some(rows) = self.recovery.take_probing() {
            let verb = match self.origin {
                Origin::Abandon { .. } => "abandon",
                _ => "resume",
            };
            let host = rows.run.host_json.as_deref().unwrap_or_default();
            return match probed_refusal(alive, verb, host) {
                None => self.go_on_loaded(&rows),
                Some(refusal) => self.refused(refusal),
            };
        }
        match alive {
            Some(false) => {
                self.recovery.begin(self.ledger.running_attempts(), true);
                self.recover_next();
            }
            Some(true) => self.report_untouched("its host is alive: nothing was changed".into()),
            None => self.report_untouched(
                "whether its host is alive cannot be told from here (another machine?): nothing \
                 was changed"
                    .into(),
            ),
        }
    }

    pub(super) fn on_terminated(&mut self, attempt: usize, gone: bool) {
        if !gone && self.recovery.reconciling() {
            let evidence = self.process_evidence(attempt);
            return self.report_untouched(format!(
                "an interrupted attempt's process group could not be proven gone, so the run keeps \
                 its lock: {}",
                evidence.join("; ")
            ));
        }
        if !gone {
            let evidence = self.process_evidence(attempt);
            if self.ending_begun() {
                // Recovering a run that is already terminal (but not proven quiescent): it stays
                // exactly as stored, lock kept. `finish` would be a no-op here and leave the
                // driver waiting on nothing.
                self.warn(format!(
                    "process group still not proven gone: {}",
                    evidence.join("; ")
                ));
                return self.report();
            }
            return self.block(
                Failure::NotQuiescent,
                "an interrupted attempt's process group could not be proven gone",
                evidence,
                false,
            );
        }
        let st = self.interrupted_attempt(attempt, Failure::Interrupted.as_str());
        let mark = self.mark_quiescent(attempt);
        self.write(vec![st, mark], vec![], Then::Recover);
    }

    pub(super) fn on_proposers_reaped(&mut self, gone: bool) {
        if !gone {
            self.warn(
                "a proposer process the run's previous host left behind could not be proven gone",
            );
        }
        self.recover_next();
    }

    /// Stops the run's leftover proposers (once), terminates interrupted attempts one by one,
    /// then continues by the stored state.
    pub(super) fn recover_next(&mut self) {
        let grace_ms = self.settings.termination_grace_ms;
        let current = self.current_host().map(str::to_owned);
        match self
            .recovery
            .next_stop(&self.ledger.attempts, current.as_deref())
        {
            Some(Stop::Proposers) => {
                return self.emit(
                    |id| Effect::TerminateProposers { id, grace_ms },
                    Await::ReapProposers,
                );
            }
            Some(Stop::Attempt {
                attempt,
                attempt_id,
                pid,
                pgid,
                start_time,
            }) => {
                return self.emit(
                    |id| Effect::TerminateProcessGroup {
                        id,
                        attempt_id,
                        pid,
                        pgid,
                        start_time,
                        grace_ms,
                    },
                    Await::Terminate { attempt },
                );
            }
            None => {}
        }
        if self.recovery.reconciling() {
            let sts = vec![self.set_interrupted(), self.release_lock()];
            self.durability.lock_held = false;
            return self.write(sts, vec![], Then::Reconciled);
        }
        if self.ending_begun() {
            return self.end_recovered();
        }
        if self.cancelling() {
            return self.do_cancel();
        }
        let state = self.state();
        if self.parallel()
            && matches!(
                state,
                RunState::Proposing
                    | RunState::CandidatePrepared
                    | RunState::CandidateRunning
                    | RunState::Deciding
            )
        {
            return self.resume_generation();
        }
        match (state, self.ledger.unresolved()) {
            (RunState::Initializing, _) => self.advance(Then::CreateWorktree),
            (RunState::Ready, _) => {
                let restore = self.restore_commit();
                self.clean(restore, Then::Ready);
            }
            (
                RunState::BaselineRunning | RunState::CandidateRunning | RunState::Deciding,
                Some(exp),
            ) if self.ledger.experiments[exp].state == ExpState::Evaluated => {
                self.advance(Then::Measured { exp })
            }
            (RunState::BaselineRunning | RunState::CandidateRunning, Some(exp)) => self.retry(exp),
            (RunState::Proposing | RunState::CandidatePrepared, Some(exp)) => self.fail_round(
                exp,
                ExpState::Failed,
                Failure::Interrupted,
                "the round was interrupted before its candidate was evaluated".into(),
                vec![],
            ),
            (state, _) => self.block(
                Failure::StateAmbiguous,
                "the stored state has no unresolved experiment to continue",
                vec![format!("state {}", state.as_str())],
                true,
            ),
        }
    }

    /// Reruns an interrupted evaluation as the experiment's next attempt (its samples so far
    /// stay), or gives up once `max_attempts_per_experiment` of its attempts were interrupted.
    pub(super) fn retry(&mut self, exp: usize) {
        let used = self.ledger.interrupted_attempts(exp);
        if used >= self.settings.max_attempts_per_experiment
            || self.ledger.provenance_sha256.is_none()
        {
            let e = &mut self.ledger.experiments[exp];
            e.state = ExpState::Evaluated;
            e.failure_code = Some(Failure::RecoveryRerunExhausted.as_str().into());
            e.failure_message = Some(format!("{used} attempt(s) were interrupted"));
            let mut sts = vec![self.finish_experiment(exp)];
            if self.state() == RunState::CandidateRunning && !self.parallel() {
                sts.push(self.set_state(RunState::Deciding));
            }
            return self.write(sts, vec![], Then::Measured { exp });
        }
        let commit = self.evaluated_commit(exp);
        self.clean_at(self.worktree_of(exp), commit, Then::Retry { exp });
    }
}
