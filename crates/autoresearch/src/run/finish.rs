//! Cancellation and every ending of a run: cleaning up, releasing the lock, the TSV export and the
//! one `Report`.

use super::bus::{Await, Then};
use super::ending::Outcome;
use super::ledger::{ExpState, Kind};
use super::sweeping::Sweep;
use super::{Run, row};
use crate::failure::Failure;
use crate::protocol::{Blocker, Counts, Effect, RunResult, Statement, Status};
use crate::state::RunState;
use crate::{layout, sql};
use serde_json::json;

impl Run {
    /// Notes `note` once in the result.
    pub(super) fn warn(&mut self, note: impl Into<String>) {
        self.ending.warnings.push(note.into());
    }

    /// Whether a cancel was asked for (or an ending in a generation turned into one).
    pub(super) fn cancelling(&self) -> bool {
        self.ending.cancel.is_some()
    }

    /// Cancels with `reason` once the work under way is stopped (an abandon's recovery).
    pub(super) fn request_cancel(&mut self, reason: String) {
        self.ending.cancel = Some(reason);
    }

    /// Whether the ending is being written.
    pub(super) fn ending_begun(&self) -> bool {
        self.ending.finishing.is_some()
    }

    /// A stored run that already ended: its ending stands, recovery only completes it.
    pub(super) fn resume_ending(&mut self, ending: Outcome) {
        self.ending.finishing = Some(ending);
    }

    /// A terminal run whose processes are now proven gone: record it and release the lock.
    pub(super) fn end_recovered(&mut self) {
        let mut sts = Vec::new();
        if let Some(f) = &mut self.ending.finishing {
            if !f.2 {
                sts.push(
                    sql::SetQuiescent {
                        now: self.now.into(),
                        run_id: self.place.run_id.clone().into(),
                    }
                    .into(),
                );
            }
            f.2 = true;
        }
        sts.push(self.release_lock());
        self.durability.lock_held = false;
        self.write(sts, vec![], Then::AfterTerminal);
    }

    /// Reports the run as it stands (not ended), with `note` among its warnings.
    pub(super) fn report_untouched(&mut self, note: String) {
        self.warn(note);
        let mut result = self.build_result(Status::Blocked, None, self.durability.run_persisted);
        result.state = Some(self.durability.state.as_str().to_owned());
        let result = Box::new(result);
        self.bus.push(Effect::Report(result.clone()));
        self.ending.done = Some(result);
    }

    pub(super) fn begin_cancel(&mut self) {
        if self.ending.finishing.is_some() {
            return;
        }
        for target in self.bus.interruptible() {
            self.bus.push(Effect::Interrupt { target });
        }
        if self.bus.is_idle() {
            self.do_cancel();
        }
        // Otherwise the outstanding answer arrives and `advance` diverts to `do_cancel`.
    }

    pub(super) fn cancel_blocker(&self) -> Option<Blocker> {
        Some(Blocker {
            code: Failure::Cancelled.as_str().into(),
            message: self.ending.cancel.clone().unwrap_or_default(),
            evidence: vec![format!("last state {}", self.durability.state.as_str())],
        })
    }

    pub(super) fn do_cancel(&mut self) {
        // A generation's other candidates end first (each answer comes back here).
        if self.ending.finishing.is_some() || (self.parallel() && self.bus.busy()) {
            return;
        }
        if self.place.worktree_ready && self.durability.run_persisted {
            let restore = self.restore_commit();
            self.clean(restore, Then::Cancel);
        } else {
            self.finish(Status::Cancelled, self.cancel_blocker(), true);
        }
    }

    pub(super) fn block(
        &mut self,
        code: Failure,
        message: &str,
        evidence: Vec<String>,
        quiescent: bool,
    ) {
        let blocker = Blocker {
            code: code.as_str().into(),
            message: message.into(),
            evidence,
        };
        self.finish(Status::Blocked, Some(blocker), quiescent);
    }

    /// Refuses before anything durable was written for this run.
    pub(super) fn refuse(&mut self, code: Failure, message: &str, evidence: Vec<String>) {
        let blocker = Blocker {
            code: code.as_str().into(),
            message: message.into(),
            evidence,
        };
        self.ending.finishing = Some((Status::Blocked, Some(blocker), true));
        self.after_tsv();
    }

    pub(super) fn finish(&mut self, status: Status, blocker: Option<Blocker>, quiescent: bool) {
        if self.ending.finishing.is_some() || self.defer_ending(status, &blocker, quiescent) {
            return;
        }
        self.ending.finishing = Some((status, blocker.clone(), quiescent));
        if !self.durability.run_persisted {
            if self.durability.lock_held && quiescent {
                let st = self.release_lock();
                self.durability.lock_held = false;
                return self.write(vec![st], vec![], Then::AfterTerminal);
            }
            return self.after_tsv();
        }
        let mut sts = std::mem::take(&mut self.durability.carry);
        for i in 0..self.ledger.experiments.len() {
            if !self.ledger.experiments[i].state.is_final() {
                let e = &mut self.ledger.experiments[i];
                e.state = if status == Status::Cancelled {
                    ExpState::Cancelled
                } else {
                    ExpState::Failed
                };
                e.decision = Some("fail");
                if e.failure_code.is_none() {
                    e.failure_code = Some(status.as_str().into());
                    e.failure_message = blocker.as_ref().map(|b| b.message.clone());
                }
                sts.push(self.finish_experiment(i));
            }
        }
        if quiescent {
            for i in 0..self.ledger.attempts.len() {
                if self.ledger.attempts[i].running {
                    sts.push(self.interrupted_attempt(i, status.as_str()));
                }
            }
        }
        let from = self.durability.state;
        let to = RunState::of(status);
        if from != to {
            self.durability.state = to;
            sts.push(
                sql::SetTerminal {
                    to: to.as_str().into(),
                    reason: blocker.as_ref().map(|b| b.code.clone()).into(),
                    blocker_json: blocker
                        .as_ref()
                        .map(|b| {
                            json!({"code": b.code, "message": b.message, "evidence": b.evidence})
                                .to_string()
                        })
                        .into(),
                    quiescent: quiescent.into(),
                    now: self.now.into(),
                    run_id: self.place.run_id.clone().into(),
                    from: from.as_str().into(),
                }
                .into(),
            );
        }
        if quiescent && self.durability.lock_held {
            sts.push(self.release_lock());
            self.durability.lock_held = false;
        }
        self.write(sts, vec![], Then::AfterTerminal);
    }

    pub(super) fn release_lock(&self) -> Statement {
        sql::ReleaseLock {
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
        }
        .into()
    }

    pub(super) fn after_terminal(&mut self) {
        if self.drop_slots() {
            return;
        }
        if self.settings.export_tsv && self.durability.run_persisted {
            let status = self
                .ending
                .finishing
                .as_ref()
                .map(|f| f.0)
                .unwrap_or(Status::Blocked);
            let contents = self.build_result(status, None, true).to_tsv();
            let path = layout::tsv_path(self.state_dir(), &self.place.run_id);
            return self.emit(|id| Effect::ExportTsv { id, path, contents }, Await::Tsv);
        }
        self.after_tsv();
    }

    /// The cleanup at the end (this run's own worktree and failed attempts' artifacts among
    /// what it may remove), then the report. A run that wrote nothing durable cleans nothing.
    pub(super) fn after_tsv(&mut self) {
        if self.durability.tracker_open && self.durability.run_persisted {
            return self.sweep(Sweep::End);
        }
        self.report();
    }

    pub(super) fn report(&mut self) {
        let (status, blocker, _) =
            self.ending
                .finishing
                .clone()
                .unwrap_or((Status::Blocked, None, true));
        let result = Box::new(self.build_result(status, blocker, self.durability.run_persisted));
        self.bus.push(Effect::Report(result.clone()));
        self.ending.done = Some(result);
    }

    pub(super) fn build_result(
        &self,
        status: Status,
        blocker: Option<Blocker>,
        persisted: bool,
    ) -> RunResult {
        let mut counts = Counts::default();
        for e in &self.ledger.experiments {
            if e.kind == Kind::Candidate {
                counts.experiments_started += 1;
                if e.state.is_final() {
                    counts.experiments_completed += 1;
                }
                match e.state {
                    ExpState::Accepted => counts.accepted += 1,
                    ExpState::Rejected if e.superseded_by.is_some() => counts.superseded += 1,
                    ExpState::Rejected => counts.rejected += 1,
                    ExpState::Failed => counts.failed += 1,
                    ExpState::PolicyViolation => counts.policy_violations += 1,
                    _ => {}
                }
            }
        }
        counts.attempts = self.ledger.attempts.len() as u32;
        let blocker = blocker.or_else(|| self.ending.finishing.as_ref().and_then(|f| f.1.clone()));
        RunResult {
            status,
            run_id: self.place.run_id.clone(),
            branch: self.place.branch.clone(),
            worktree: self.place.worktree.clone(),
            tracker: self.place.tracker.clone(),
            persisted,
            metric_name: self
                .policy
                .as_ref()
                .map(|p| p.metric_name.clone())
                .unwrap_or_default(),
            direction: self
                .policy
                .as_ref()
                .map(|p| p.direction.as_str())
                .unwrap_or(""),
            target: self.policy.as_ref().and_then(|p| p.target),
            repeats: self
                .policy
                .as_ref()
                .map_or(crate::spec::DEFAULT_REPEATS, |p| p.repeats),
            baseline: self.ledger.baseline.clone(),
            best: self.ledger.best.clone(),
            counts,
            experiments: self.ledger.experiments.iter().map(row).collect(),
            artifacts: self.ledger.artifacts.clone(),
            blocker,
            warnings: self.ending.warnings.clone(),
            removed: self.sweeping.removed.clone(),
            state: None,
        }
    }
}
