//! Resume and abandon: a run rebuilt from its stored rows, interrupted attempts' process groups
//! stopped, and the step that was under way redone or decided.

use super::*;
use crate::failure::Failure;

/// What a resume, abandon or reconcile holds while it recovers.
#[derive(Default)]
pub(super) struct Recovery {
    /// Running attempts still to stop, in order.
    recovering: VecDeque<usize>,
    /// A reconcile found the run's host dead: recovery ends by marking it interrupted.
    reconciling: bool,
    /// A resume or abandon goes on without proving the run's host dead ([`Run::force`]).
    pub(super) force: bool,
    /// Recovery stopped the run's leftover headless proposers already.
    proposers_reaped: bool,
    /// The stored rows a resume or abandon holds while the run's host is probed.
    probing: Option<Box<StoredRows>>,
    /// The host record the run had when it was loaded (the host that ran its attempts).
    recorded_host: Option<String>,
}

impl Run {
    pub(super) fn on_loaded(&mut self, rows: Option<Box<StoredRows>>) {
        let Some(rows) = rows else {
            return self.refuse(
                Failure::RunMissing,
                "no run with this id in the repository's tracker",
                vec![self.place.run_id.clone()],
            );
        };
        let r = &rows.run;
        if r.repository_id != self.place.repository_id {
            return self.refuse(
                Failure::RepositoryMismatch,
                "the run belongs to another repository",
                vec![r.repository_id.clone()],
            );
        }
        let stored: Value = match serde_json::from_str(&r.policy_json) {
            Ok(v) => v,
            Err(e) => {
                return self.refuse(
                    Failure::PolicyCorrupt,
                    "the stored policy is not JSON",
                    vec![e.to_string()],
                );
            }
        };
        // The hash is over the JSON as stored (earlier versions stored the same policy in
        // another form, environment values in the clear among it).
        let policy = match policy_from_json(&stored, &self.settings.limits) {
            Ok(p) if jcs::canonical_sha256(&stored) == r.policy_sha256 => p,
            Ok(_) => {
                return self.refuse(
                    Failure::PolicyCorrupt,
                    "the stored policy does not match its hash",
                    vec![],
                );
            }
            Err(errors) => {
                return self.refuse(
                    Failure::PolicyCorrupt,
                    "the stored policy no longer validates",
                    errors.iter().map(ToString::to_string).collect(),
                );
            }
        };
        if let Origin::Resume { given } = &self.origin
            && let Err(m) = check_resume(&stored, given, &self.settings.limits)
        {
            return self.refuse(
                Failure::PolicyMismatch,
                "the resume spec disagrees with the stored policy; resend it unchanged or omit those keys",
                m.fields,
            );
        }
        let Some(state) = RunState::parse(&r.state) else {
            return self.refuse(
                Failure::StateCorrupt,
                "unknown stored run state",
                vec![r.state.clone()],
            );
        };
        let mut policy = policy;
        if let Origin::Resume { given } = &self.origin {
            policy.supply_environment(given);
            let missing = policy.missing_environment();
            if !state.is_terminal() && !missing.is_empty() {
                return self.refuse(
                    Failure::EnvironmentValuesNeeded,
                    "only hashes of the evaluator's environment values are stored; resume with \
                     the same values in `environment` (the headless runner: `resume --env NAME`, \
                     which reads NAME from its own environment)",
                    missing,
                );
            }
        }
        self.fill_from(&rows, policy, state);
        if matches!(self.origin, Origin::Reconcile) {
            return self.begin_reconcile(r);
        }
        // A resume or abandon never takes a run from a host that may still drive it.
        if !self.recovery.force
            && !state.is_terminal()
            && r.lock_held
            && r.interrupted_at.is_none()
            && let Some(host) = r.host_json.clone()
        {
            self.recovery.probing = Some(rows);
            return self.probe_host(host);
        }
        self.go_on_loaded(&rows);
    }

    /// Goes on with loaded rows whose host is dead, unrecorded or overridden.
    fn go_on_loaded(&mut self, rows: &StoredRows) {
        let r = &rows.run;
        let state = self.durability.state;
        if let Origin::Abandon { reason } = &self.origin
            && !state.is_terminal()
        {
            // Recovery terminates interrupted process groups first, then diverts to the cancel.
            self.ending.cancel = Some(reason.clone());
        }
        if let Some(status) = state.status() {
            let blocker = stored_blocker(r.blocker_json.as_deref());
            self.ending.finishing = Some((status, blocker, r.quiescent));
            if r.quiescent && !r.lock_held {
                // A finished run: report it again, write nothing.
                return self.report();
            }
        } else if !r.lock_held && r.interrupted_at.is_some() {
            // Reconciled after its host died: take the lock again, then go on as from a crash.
            if self.slots() == 0 {
                return self.refuse_no_slot();
            }
            let sts = vec![
                sql::RetakeLock {
                    now: self.now.into(),
                    run_id: self.place.run_id.clone().into(),
                    repository_id: self.place.repository_id.clone().into(),
                    max_active: self.slots().into(),
                }
                .into(),
                sql::ClearInterrupted {
                    now: self.now.into(),
                    run_id: self.place.run_id.clone().into(),
                }
                .into(),
                self.set_host(),
            ];
            return self.emit(
                |id| Effect::Persist {
                    id,
                    statements: sts,
                },
                Await::Retake,
            );
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
        self.place.worktree_ready = self.durability.state != RunState::Initializing;
        self.recovery.recovering = (0..self.ledger.attempts.len())
            .filter(|&i| self.ledger.attempts[i].running)
            .collect();
        if record_host && self.ending.finishing.is_none() {
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
        if self.durability.state.is_terminal() || !r.lock_held || r.interrupted_at.is_some() {
            return self.report_untouched(format!(
                "the run is {} and holds no live lock: nothing to reconcile",
                self.durability.state.as_str()
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

    /// Asks the driver whether the recorded host's process lives, when its pid means something
    /// here (this machine, boot and PID namespace); otherwise whether it lives cannot be told.
    fn probe_host(&mut self, host: String) {
        let current = self.place.facts.as_ref().and_then(|f| f.host.as_deref());
        if same_process_space(Some(&host), current) {
            self.emit(|id| Effect::ProbeHost { id, host }, Await::Probe);
        } else {
            self.on_probed(None);
        }
    }

    pub(super) fn on_probed(&mut self, alive: Option<bool>) {
        if let Some(rows) = self.recovery.probing.take() {
            let verb = match self.origin {
                Origin::Abandon { .. } => "abandon",
                _ => "resume",
            };
            let host = describe_host(rows.run.host_json.as_deref().unwrap_or_default());
            return match alive {
                Some(false) => self.go_on_loaded(&rows),
                Some(true) => self.refuse(
                    Failure::RunLive,
                    &format!(
                        "the run is live: its host is still driving it, so nothing was changed; \
                         stop it there (job_kill, or a signal to its runner), or {verb} it with \
                         force to take it over anyway"
                    ),
                    vec![host],
                ),
                None => self.refuse(
                    Failure::RunLive,
                    &format!(
                        "whether the run's host is alive cannot be told from here (another \
                         machine, boot or PID namespace), so nothing was changed; {verb} it with \
                         force once you know it is not running"
                    ),
                    vec![host],
                ),
            };
        }
        match alive {
            Some(false) => {
                self.recovery.reconciling = true;
                self.recovery.recovering = (0..self.ledger.attempts.len())
                    .filter(|&i| self.ledger.attempts[i].running)
                    .collect();
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
        if !gone && self.recovery.reconciling {
            let evidence = self.process_evidence(attempt);
            return self.report_untouched(format!(
                "an interrupted attempt's process group could not be proven gone, so the run keeps \
                 its lock: {}",
                evidence.join("; ")
            ));
        }
        if !gone {
            let evidence = self.process_evidence(attempt);
            if self.ending.finishing.is_some() {
                // Recovering a run that is already terminal (but not proven quiescent): it stays
                // exactly as stored, lock kept. `finish` would be a no-op here and leave the
                // driver waiting on nothing.
                self.ending.warnings.push(format!(
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
        self.ledger.attempts[attempt].running = false;
        let st = self.interrupted_attempt(attempt, Failure::Interrupted.as_str());
        let mark = sql::MarkAttemptQuiescent {
            attempt_id: self.ledger.attempts[attempt].id.clone().into(),
        }
        .into();
        self.write(vec![st, mark], vec![], Then::Recover);
    }

    pub(super) fn on_proposers_reaped(&mut self, gone: bool) {
        if !gone {
            self.ending.warnings.push(
                "a proposer process the run's previous host left behind could not be proven gone"
                    .into(),
            );
        }
        self.recover_next();
    }

    /// Reports the run as it stands (not ended), with `note` among its warnings.
    pub(super) fn report_untouched(&mut self, note: String) {
        self.ending.warnings.push(note);
        let mut result = self.build_result(Status::Blocked, None, self.durability.run_persisted);
        result.state = Some(self.durability.state.as_str().to_owned());
        let result = Box::new(result);
        self.bus.push(Effect::Report(result.clone()));
        self.ending.done = Some(result);
    }

    /// Fills the machine from stored rows (no effects, no checks).
    pub(super) fn fill_from(&mut self, rows: &StoredRows, policy: RunPolicy, state: RunState) {
        let r = &rows.run;
        self.policy = Some(policy);
        self.durability.state = state;
        self.durability.durable = state;
        self.durability.run_persisted = true;
        self.durability.lock_held = r.lock_held;
        self.recovery.recorded_host = r.host_json.clone();
        self.place.branch = r.branch.clone();
        self.place.worktree = r.worktree.clone();
        self.place.start_commit = r.start_commit.clone();
        self.ledger.provenance_sha256 = r.provenance_sha256.clone();
        self.ledger.consecutive_failures = u32::try_from(r.consecutive_failures).unwrap_or(0);
        let point = |c: &Option<String>, m: Option<f64>, e: Option<String>| match (c, m) {
            (Some(c), Some(m)) => Some(Point {
                commit: c.clone(),
                metric: m,
                experiment_id: e.unwrap_or_default(),
            }),
            _ => None,
        };
        let baseline_id = format!("{}-baseline", self.place.run_id);
        self.ledger.baseline = point(&r.baseline_commit, r.baseline_metric, Some(baseline_id));
        self.ledger.best = point(&r.best_commit, r.best_metric, r.best_experiment_id.clone());
        for e in &rows.experiments {
            self.ledger.experiments.push(Experiment {
                id: e.experiment_id.clone(),
                ordinal: u32::try_from(e.ordinal).unwrap_or(0),
                kind: if e.kind == "baseline" {
                    Kind::Baseline
                } else {
                    Kind::Candidate
                },
                state: ExpState::parse(&e.state).unwrap_or(ExpState::Failed),
                parent: e.parent_commit.clone(),
                commit: e.candidate_commit.clone(),
                report: match (&e.hypothesis, &e.summary) {
                    (Some(h), Some(s)) => Some(ProposalReport {
                        hypothesis: h.clone(),
                        summary: s.clone(),
                    }),
                    _ => None,
                },
                changed_paths: e
                    .changed_paths_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str(j).ok())
                    .unwrap_or_default(),
                metric: e.metric,
                samples: Vec::new(),
                decision: match e.decision.as_deref() {
                    Some("accept") => Some("accept"),
                    Some("reject") => Some("reject"),
                    Some("fail") => Some("fail"),
                    _ => None,
                },
                failure_code: e.failure_code.clone(),
                failure_message: e.failure_message.clone(),
                evidence: Vec::new(),
                slot: 0,
                superseded_by: e.superseded_by.clone(),
            });
        }
        let k = self.policy.as_ref().map_or(1, |p| p.parallelism);
        for e in &mut self.ledger.experiments {
            e.slot = generation::slot_of(e.kind, e.ordinal, k);
        }
        for a in &rows.attempts {
            let exp = self
                .ledger
                .experiments
                .iter()
                .position(|e| e.id == a.experiment_id)
                .unwrap_or(0);
            let process = match (a.pid, a.pgid) {
                (Some(pid), Some(pgid)) => Some(ProcessIdentity {
                    pid: u32::try_from(pid).unwrap_or(0),
                    pgid: u32::try_from(pgid).unwrap_or(0),
                    start_time: a.process_start_time.clone(),
                }),
                _ => None,
            };
            if let Some(m) = a.metric {
                self.ledger.experiments[exp].samples.push(m);
            }
            self.ledger.attempts.push(Attempt {
                id: a.attempt_id.clone(),
                experiment: exp,
                running: a.state == "running" || a.quiescent == Some(false),
                interrupted: a.state == "interrupted",
                process,
            });
        }
        for a in &rows.artifacts {
            self.ledger.artifacts.push(ArtifactRef {
                artifact_id: a.artifact_id.clone(),
                kind: a.kind.clone(),
                location: a.location.clone(),
                size_bytes: u64::try_from(a.size_bytes).unwrap_or(0),
                sha256: a.sha256.clone(),
            });
        }
    }

    /// Stops the run's leftover proposers (once), terminates interrupted attempts one by one,
    /// then continues by the stored state.
    pub(super) fn recover_next(&mut self) {
        if !self.recovery.proposers_reaped {
            self.recovery.proposers_reaped = true;
            let grace_ms = self.settings.termination_grace_ms;
            return self.emit(
                |id| Effect::TerminateProposers { id, grace_ms },
                Await::ReapProposers,
            );
        }
        if let Some(attempt) = self.recovery.recovering.pop_front() {
            let a = &self.ledger.attempts[attempt];
            // A recorded pid names a process only on the host, boot and PID namespace that
            // recorded it; elsewhere the attempt is found by its marker and cgroup alone.
            let current = self.place.facts.as_ref().and_then(|f| f.host.as_deref());
            let process = a
                .process
                .as_ref()
                .filter(|_| same_process_space(self.recovery.recorded_host.as_deref(), current));
            let (attempt_id, pid, pgid, start_time) = (
                a.id.clone(),
                process.map(|p| p.pid),
                process.map(|p| p.pgid),
                process.and_then(|p| p.start_time.clone()),
            );
            let grace_ms = self.settings.termination_grace_ms;
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
        if self.recovery.reconciling {
            let sts = vec![
                sql::SetInterrupted {
                    now: self.now.into(),
                    run_id: self.place.run_id.clone().into(),
                }
                .into(),
                self.release_lock(),
            ];
            self.durability.lock_held = false;
            return self.write(sts, vec![], Then::Reconciled);
        }
        if let Some((_, _, quiescent)) = &self.ending.finishing {
            // A terminal run whose processes are now proven gone: record it and release the lock.
            let mut sts = Vec::new();
            if !quiescent {
                sts.push(
                    sql::SetQuiescent {
                        now: self.now.into(),
                        run_id: self.place.run_id.clone().into(),
                    }
                    .into(),
                );
            }
            if let Some(f) = &mut self.ending.finishing {
                f.2 = true;
            }
            sts.push(self.release_lock());
            self.durability.lock_held = false;
            return self.write(sts, vec![], Then::AfterTerminal);
        }
        if self.ending.cancel.is_some() {
            return self.do_cancel();
        }
        if self.parallel()
            && matches!(
                self.durability.state,
                RunState::Proposing
                    | RunState::CandidatePrepared
                    | RunState::CandidateRunning
                    | RunState::Deciding
            )
        {
            return self.resume_generation();
        }
        let unresolved = self
            .ledger
            .experiments
            .iter()
            .rposition(|e| !e.state.is_final());
        match (self.durability.state, unresolved) {
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
        let used = self
            .ledger
            .attempts
            .iter()
            .filter(|a| a.experiment == exp && a.interrupted)
            .count() as u32;
        if used >= self.settings.max_attempts_per_experiment
            || self.ledger.provenance_sha256.is_none()
        {
            let e = &mut self.ledger.experiments[exp];
            e.state = ExpState::Evaluated;
            e.failure_code = Some(Failure::RecoveryRerunExhausted.as_str().into());
            e.failure_message = Some(format!("{used} attempt(s) were interrupted"));
            let mut sts = vec![self.finish_experiment(exp)];
            if self.durability.state == RunState::CandidateRunning && !self.parallel() {
                sts.push(self.set_state(RunState::Deciding));
            }
            return self.write(sts, vec![], Then::Measured { exp });
        }
        let commit = self.evaluated_commit(exp);
        self.clean_at(self.worktree_of(exp), commit, Then::Retry { exp });
    }
}

/// Whether two host records (as the driver writes them: JSON with `hostname`, `bootId`, `pidNs`)
/// name one process space: the same machine, boot and PID namespace, each known.
fn same_process_space(recorded: Option<&str>, current: Option<&str>) -> bool {
    let read = |text: Option<&str>| -> Option<[String; 3]> {
        let v: Value = serde_json::from_str(text?).ok()?;
        let field = |k: &str| {
            v.get(k)?
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Some([field("hostname")?, field("bootId")?, field("pidNs")?])
    };
    matches!((read(recorded), read(current)), (Some(a), Some(b)) if a == b)
}

/// A stored host record as evidence: `host <name> pid <pid>` (escaped), or the raw text clipped.
fn describe_host(recorded: &str) -> String {
    let v: Option<Value> = serde_json::from_str(recorded).ok();
    let name = v
        .as_ref()
        .and_then(|v| v.get("hostname")?.as_str().map(str::to_owned));
    let pid = v.as_ref().and_then(|v| v.get("pid")?.as_u64());
    match (name, pid) {
        (Some(name), Some(pid)) => format!("host {} pid {pid}", name.escape_debug()),
        _ => format!(
            "host record {}",
            metric::clip(&recorded.escape_debug().to_string(), 200)
        ),
    }
}

#[cfg(test)]
mod host_tests {
    use super::*;

    const HOST: &str =
        r#"{"hostname":"box","bootId":"b1","pidNs":"pid:[1]","pid":7,"startTime":"9"}"#;

    #[test]
    fn pids_are_trusted_only_in_one_process_space() {
        assert!(same_process_space(Some(HOST), Some(HOST)));
        let other_ns = HOST.replace("pid:[1]", "pid:[2]");
        let other_boot = HOST.replace("b1", "b2");
        let no_ns = r#"{"hostname":"box","bootId":"b1","pid":7,"startTime":"9"}"#;
        for other in [other_ns.as_str(), other_boot.as_str(), no_ns, "not json"] {
            assert!(!same_process_space(Some(HOST), Some(other)), "{other}");
            assert!(!same_process_space(Some(other), Some(HOST)), "{other}");
        }
        assert!(!same_process_space(None, Some(HOST)));
    }

    #[test]
    fn a_host_is_described_escaped() {
        assert_eq!(describe_host(HOST), "host box pid 7");
        let hostile = HOST.replace("\"box\"", "\"b\\nox\\u001b[2J\"");
        assert_eq!(describe_host(&hostile), "host b\\nox\\u{1b}[2J pid 7");
        assert_eq!(describe_host("x\ny"), "host record x\\ny");
    }
}
