//! Cancellation and every ending of a run: cleaning up, releasing the lock, the TSV export and the
//! one `Report`.

use super::*;
use crate::failure::Failure;

impl Run {
    pub(super) fn begin_cancel(&mut self) {
        if self.finishing.is_some() {
            return;
        }
        let interruptible: Vec<EffectId> = self
            .pending
            .iter()
            .filter(|(_, a)| matches!(a, Await::Evaluate { .. } | Await::Propose { .. }))
            .map(|(id, _)| *id)
            .collect();
        for target in &interruptible {
            self.queue.push_back(Effect::Interrupt { target: *target });
        }
        if self.pending.is_empty() {
            self.do_cancel();
        }
        // Otherwise the outstanding answer arrives and `advance` diverts to `do_cancel`.
    }

    pub(super) fn cancel_blocker(&self) -> Option<Blocker> {
        Some(Blocker {
            code: Failure::Cancelled.as_str().into(),
            message: self.cancel.clone().unwrap_or_default(),
            evidence: vec![format!("last state {}", self.state.as_str())],
        })
    }

    pub(super) fn do_cancel(&mut self) {
        // A generation's other candidates end first (each answer comes back here).
        if self.finishing.is_some() || (self.parallel() && self.busy()) {
            return;
        }
        if self.worktree_ready && self.run_persisted {
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
        self.finishing = Some((Status::Blocked, Some(blocker), true));
        self.after_tsv();
    }

    pub(super) fn finish(&mut self, status: Status, blocker: Option<Blocker>, quiescent: bool) {
        if self.finishing.is_some() || self.defer_ending(status, &blocker, quiescent) {
            return;
        }
        self.finishing = Some((status, blocker.clone(), quiescent));
        if !self.run_persisted {
            if self.lock_held && quiescent {
                let st = self.release_lock();
                self.lock_held = false;
                return self.write(vec![st], vec![], Then::AfterTerminal);
            }
            return self.after_tsv();
        }
        let mut sts = std::mem::take(&mut self.carry);
        for i in 0..self.experiments.len() {
            if !self.experiments[i].state.is_final() {
                let e = &mut self.experiments[i];
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
            for i in 0..self.attempts.len() {
                if self.attempts[i].running {
                    self.attempts[i].running = false;
                    sts.push(self.interrupted_attempt(i, status.as_str()));
                }
            }
        }
        let from = self.state;
        let to = RunState::of(status);
        if from != to {
            self.state = to;
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
                    run_id: self.run_id.clone().into(),
                    from: from.as_str().into(),
                }
                .into(),
            );
        }
        if quiescent && self.lock_held {
            sts.push(self.release_lock());
            self.lock_held = false;
        }
        self.write(sts, vec![], Then::AfterTerminal);
    }

    pub(super) fn release_lock(&self) -> Statement {
        sql::ReleaseLock {
            now: self.now.into(),
            run_id: self.run_id.clone().into(),
        }
        .into()
    }

    pub(super) fn after_terminal(&mut self) {
        if self.drop_slots() {
            return;
        }
        if self.settings.export_tsv && self.run_persisted {
            let status = self
                .finishing
                .as_ref()
                .map(|f| f.0)
                .unwrap_or(Status::Blocked);
            let contents = self.build_result(status, None, true).to_tsv();
            let path = layout::tsv_path(self.state_dir(), &self.run_id);
            return self.emit(|id| Effect::ExportTsv { id, path, contents }, Await::Tsv);
        }
        self.after_tsv();
    }

    /// The cleanup at the end (this run's own worktree and failed attempts' artifacts among
    /// what it may remove), then the report. A run that wrote nothing durable cleans nothing.
    pub(super) fn after_tsv(&mut self) {
        if self.tracker_open && self.run_persisted {
            return self.sweep(Sweep::End);
        }
        self.report();
    }

    pub(super) fn report(&mut self) {
        let (status, blocker, _) = self
            .finishing
            .clone()
            .unwrap_or((Status::Blocked, None, true));
        let result = Box::new(self.build_result(status, blocker, self.run_persisted));
        self.queue.push_back(Effect::Report(result.clone()));
        self.done = Some(result);
    }

    pub(super) fn build_result(
        &self,
        status: Status,
        blocker: Option<Blocker>,
        persisted: bool,
    ) -> RunResult {
        let mut counts = Counts::default();
        for e in &self.experiments {
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
        counts.attempts = self.attempts.len() as u32;
        let blocker = blocker.or_else(|| self.finishing.as_ref().and_then(|f| f.1.clone()));
        RunResult {
            status,
            run_id: self.run_id.clone(),
            branch: self.branch.clone(),
            worktree: self.worktree.clone(),
            tracker: self.tracker.clone(),
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
            baseline: self.baseline.clone(),
            best: self.best.clone(),
            counts,
            experiments: self.experiments.iter().map(row).collect(),
            artifacts: self.artifacts.clone(),
            blocker,
            warnings: self.warnings.clone(),
            removed: self.removed.clone(),
            state: None,
        }
    }
}
