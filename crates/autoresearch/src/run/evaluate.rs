//! An evaluation: the evaluator's inputs hashed (frozen at the baseline, checked before every
//! candidate and repeat), the evaluator spawned in the experiment's worktree, and its outcome
//! recorded as a sample or a failure.

use super::bus::{Await, HashFor, Then};
use super::ledger::{ExpState, Kind};
use super::{
    ATTEMPT_MARKER_ENV, Run, STDERR_EXCERPT_CHARS, anomaly_evidence, ended_how, provenance,
};
use crate::failure::Failure;
use crate::protocol::{
    ArtifactRef, Effect, HashedFile, InputPath, ProcessOutcome, RetentionArtifact,
};
use crate::state::RunState;
use crate::stats::Purpose;
use crate::surface;
use crate::{jcs, layout, metric, sql, stats};
use std::collections::BTreeMap;

/// An evaluation's verdict before keep/reject.
enum Verdict {
    Metric(f64),
    Failure { code: Failure, message: String },
}

impl Run {
    pub(super) fn emit_hash(&mut self, purpose: HashFor) {
        let p = self.p();
        let labels: Vec<&str> = [
            p.provenance_evaluator.as_deref(),
            p.provenance_dataset.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect();
        let allowed = |path: &str| {
            p.allowlists
                .evaluators
                .iter()
                .chain(&p.allowlists.datasets)
                .any(|a| a == path)
        };
        // The holdout's inputs (outside the repository) are frozen with the evaluator's.
        let holdout = p
            .holdout
            .iter()
            .flat_map(|h| surface::evaluator_inputs(&h.argv.command, &h.argv.args, &h.cwd, &[]));
        let mut inputs: Vec<InputPath> = surface::evaluator_inputs(
            &p.evaluation.argv.command,
            &p.evaluation.argv.args,
            &p.evaluation.cwd,
            &labels,
        )
        .into_iter()
        .chain(holdout)
        .filter(|i| !matches!(i, InputPath::Worktree(w) if allowed(w)))
        .collect();
        inputs.sort();
        inputs.dedup();
        self.ledger.inputs = inputs.clone();
        let worktree = match purpose {
            HashFor::Freeze => self.place.worktree.clone(),
            HashFor::Revalidate { exp } | HashFor::Retry { exp } => self.worktree_of(exp),
        };
        self.emit(
            |id| Effect::HashInputs {
                id,
                worktree,
                paths: inputs,
            },
            Await::Hash(purpose),
        );
    }

    pub(super) fn on_hashed(&mut self, purpose: HashFor, files: Vec<HashedFile>) {
        let (value, sha) = provenance(self.p(), &self.ledger.inputs, &files);
        match purpose {
            HashFor::Freeze => {
                self.ledger.provenance_sha256 = Some(sha.clone());
                let exp = self.new_experiment(
                    Kind::Baseline,
                    self.place.start_commit.clone(),
                    ExpState::Running,
                );
                let attempt = self.new_attempt(exp);
                let mut sts = vec![
                    sql::SetProvenance {
                        provenance_json: jcs::canonical(&value).into(),
                        provenance_sha256: sha.into(),
                        now: self.now.into(),
                        run_id: self.place.run_id.clone().into(),
                    }
                    .into(),
                    self.set_state(RunState::BaselineRunning),
                ];
                sts.push(self.insert_experiment(exp));
                sts.push(self.insert_attempt(attempt));
                self.write(sts, vec![1], Then::Spawn { exp, attempt });
            }
            HashFor::Revalidate { exp } | HashFor::Retry { exp } => {
                let frozen = self.ledger.provenance_sha256.clone().unwrap_or_default();
                if sha != frozen {
                    let evidence = vec![
                        format!("frozen provenance {frozen}"),
                        format!("current provenance {sha}"),
                    ];
                    if matches!(purpose, HashFor::Retry { .. }) {
                        return self.block(
                            Failure::ProvenanceMismatch,
                            "the evaluator's inputs changed since the baseline",
                            evidence,
                            true,
                        );
                    }
                    return self.fail_round(
                        exp,
                        ExpState::PolicyViolation,
                        Failure::ProvenanceMismatch,
                        "the candidate changed the evaluator's inputs".into(),
                        evidence,
                    );
                }
                let attempt = self.new_attempt(exp);
                let mut sts = Vec::new();
                let mut cas = Vec::new();
                if matches!(purpose, HashFor::Revalidate { .. }) {
                    self.ledger.experiments[exp].state = ExpState::Running;
                    if let Some(st) = self.step_state(RunState::CandidateRunning) {
                        cas.push(sts.len());
                        sts.push(st);
                    }
                    sts.push(self.set_experiment_state(exp));
                }
                sts.push(self.insert_attempt(attempt));
                self.write(sts, cas, Then::Spawn { exp, attempt });
            }
        }
    }

    pub(super) fn on_exited(&mut self, exp: usize, attempt: usize, outcome: ProcessOutcome) {
        self.record_evaluation(exp, attempt, outcome, None);
    }

    /// Persists an evaluation's facts (experiment → `evaluated`), then cleans the worktree and
    /// decides. Failure precedence: spawn error > cancelled > timeout > not quiescent > signal >
    /// non-zero exit > metric protocol.
    pub(super) fn record_evaluation(
        &mut self,
        exp: usize,
        attempt: usize,
        outcome: ProcessOutcome,
        spawn_error: Option<String>,
    ) {
        let stderr = text::clip_within(outcome.stderr_tail.trim(), STDERR_EXCERPT_CHARS);
        self.note_containment(&outcome.containment);
        let verdict = if let Some(e) = spawn_error {
            Verdict::Failure {
                code: Failure::Spawn,
                message: e,
            }
        } else if !outcome.worktree.anomalies.is_empty() {
            Verdict::Failure {
                code: Failure::WorktreeTampered,
                message: format!(
                    "the evaluation changed the worktree behind git's back, or changed what it measured (the worktree is restored): {}",
                    anomaly_evidence(&outcome.worktree.anomalies).join("; ")
                ),
            }
        } else if outcome.cancelled {
            Verdict::Failure {
                code: Failure::Cancelled,
                message: "the evaluator was interrupted".into(),
            }
        } else if outcome.timed_out {
            Verdict::Failure {
                code: Failure::Timeout,
                message: format!("the evaluator timed out after {} ms", self.p().timeout_ms),
            }
        } else if !outcome.quiescent {
            Verdict::Failure {
                code: Failure::NotQuiescent,
                message: "the evaluator's process group did not exit".into(),
            }
        } else if let Some(sig) = &outcome.signal {
            Verdict::Failure {
                code: Failure::Signal,
                message: format!("the evaluator was killed by {sig}: {stderr}"),
            }
        } else if outcome.exit_code != Some(0) {
            Verdict::Failure {
                code: Failure::Exit,
                message: format!("the evaluator {}: {stderr}", ended_how(&outcome)),
            }
        } else {
            match metric::parse_metric(
                &outcome.stdout_tail,
                &self.p().metric_name,
                outcome.stdout_truncated,
            ) {
                Ok(m) => Verdict::Metric(m),
                Err(e) => Verdict::Failure {
                    code: e.code(),
                    message: e.to_string(),
                },
            }
        };
        let a = &mut self.ledger.attempts[attempt];
        a.running = false;
        let (attempt_id, purpose) = (a.id.clone(), a.purpose);
        let holdout = purpose == Purpose::Holdout;
        let e = &mut self.ledger.experiments[exp];
        match (&verdict, purpose) {
            (Verdict::Metric(m), Purpose::Select) => e.samples.push(*m),
            (Verdict::Metric(m), Purpose::Confirm) => e.fresh.push(*m),
            (Verdict::Metric(m), Purpose::Holdout) => e.holdout.push(Some(*m)),
            // A failed holdout is reported; its experiment stands.
            (Verdict::Failure { code, message }, Purpose::Holdout) => {
                e.holdout.push(None);
                let note = format!(
                    "the holdout failed on {} ({}): {message}",
                    e.id,
                    code.as_str()
                );
                self.warn(note);
            }
            (Verdict::Failure { code, message }, _) => {
                e.failure_code = Some(code.as_str().to_owned());
                e.failure_message = Some(message.clone());
            }
        }
        // Another evaluation follows a successful one while the keep rule asks for it; the
        // first failed one fails the experiment.
        let resample = !holdout && matches!(verdict, Verdict::Metric(_)) && self.wants_sample(exp);
        if !resample && !holdout {
            let e = &mut self.ledger.experiments[exp];
            if e.failure_code.is_none() {
                let reported = if e.fresh.is_empty() {
                    &e.samples
                } else {
                    &e.fresh
                };
                e.metric = Some(stats::mean(reported));
            }
            e.state = ExpState::Evaluated;
        }
        let (failure_code, sample) = match &verdict {
            Verdict::Failure { code, .. } => (Some(code.as_str()), None),
            Verdict::Metric(m) => (None, Some(*m)),
        };
        let mut sts = vec![
            sql::FinishAttempt {
                state: "exited".into(),
                exit_code: outcome.exit_code.map(i64::from).into(),
                signal: outcome.signal.clone().into(),
                timed_out: outcome.timed_out.into(),
                quiescent: outcome.quiescent.into(),
                failure_code: failure_code.into(),
                metric: sample.into(),
                now: self.now.into(),
                attempt_id: attempt_id.clone().into(),
            }
            .into(),
        ];
        let exp_id = self.ledger.experiments[exp].id.clone();
        let failed = failure_code.is_some() && !self.settings.retention.retain_failed_artifacts;
        for art in &outcome.artifacts {
            let artifact_id = format!("{attempt_id}-{}", art.kind);
            sts.push(
                sql::InsertArtifact {
                    artifact_id: artifact_id.clone().into(),
                    run_id: self.place.run_id.clone().into(),
                    experiment_id: exp_id.clone().into(),
                    attempt_id: attempt_id.clone().into(),
                    kind: art.kind.clone().into(),
                    location: art.location.clone().into(),
                    size_bytes: art.size_bytes.into(),
                    sha256: art.sha256.clone().into(),
                    truncated: art.truncated.into(),
                    now: self.now.into(),
                }
                .into(),
            );
            if failed {
                self.sweeping.failed_artifacts.push(RetentionArtifact {
                    artifact_id: artifact_id.clone(),
                    run_id: self.place.run_id.clone(),
                    attempt_id: attempt_id.clone(),
                    location: art.location.clone(),
                    attempt_failure_code: failure_code.map(str::to_owned),
                });
            }
            self.ledger.artifacts.push(ArtifactRef {
                artifact_id,
                kind: art.kind.clone(),
                location: art.location.clone(),
                size_bytes: art.size_bytes,
                sha256: art.sha256.clone(),
            });
        }
        let mut cas = Vec::new();
        if !resample && !holdout {
            sts.push(self.finish_experiment(exp));
        }
        if !resample
            && !holdout
            && self.ledger.experiments[exp].kind == Kind::Candidate
            && self.durability.state == RunState::CandidateRunning
            && !self.parallel()
        {
            cas.push(sts.len());
            sts.push(self.set_state(RunState::Deciding));
        }
        if !outcome.quiescent {
            let evidence = self.process_evidence(attempt);
            self.durability.carry = sts;
            return self.block(
                Failure::NotQuiescent,
                "the evaluator's process group may still be running",
                evidence,
                false,
            );
        }
        let then = if holdout {
            Then::Ready
        } else if resample {
            Then::Resample { exp }
        } else {
            Then::Measured { exp }
        };
        self.write(sts, cas, then);
    }

    pub(super) fn process_evidence(&self, attempt: usize) -> Vec<String> {
        let a = &self.ledger.attempts[attempt];
        match &a.process {
            Some(p) => vec![format!(
                "attempt {} pid {} pgid {} start_time {}",
                a.id,
                p.pid,
                p.pgid,
                p.start_time.as_deref().unwrap_or("-")
            )],
            None => vec![format!(
                "attempt {} (process not recorded; marker {ATTEMPT_MARKER_ENV}={})",
                a.id, a.id
            )],
        }
    }

    /// Says once in the result when a process was not contained in a way that proves it gone,
    /// and, with slots side by side, when the environment values are not kept from the other
    /// slots' processes.
    pub(super) fn note_containment(&mut self, containment: &str) {
        let mut notes = Vec::new();
        match containment {
            "" | "confined" => {}
            "cgroup" => notes.push(
                "process containment is not proven here (cgroup): each attempt has its own \
                 cgroup v2 group, but without root (or util-linux's unshare and setpriv) a process \
                 inside can move itself to another group this user may write and outlive its \
                 attempt"
                    .to_owned(),
            ),
            other => notes.push(format!(
                "process containment is best effort here ({other}): no cgroup v2 group could \
                 be made, so a child that leaves its session and process group between two /proc \
                 scans can outlive its attempt"
            )),
        }
        // A proposal agent inside DSH has no shell: it leaves no process behind.
        let proposers_contained = containment == "confined" || self.p().proposer.is_none();
        if !proposers_contained && self.parallel() && !self.p().environment.is_empty() {
            notes.push(
                "with parallelism above 1 the evaluator's environment values can be read by a \
                 process a proposer leaves running (proposers are not confined here): \
                 evaluations wait for every proposer to end, but only root on Linux with cgroup \
                 v2, unshare and setpriv proves none is left"
                    .to_owned(),
            );
        }
        for note in notes {
            if !self.ending.warnings.contains(&note) {
                self.warn(note);
            }
        }
    }

    /// The commit an experiment evaluates.
    pub(super) fn evaluated_commit(&self, exp: usize) -> String {
        match self.ledger.experiments[exp].kind {
            Kind::Baseline => self.place.start_commit.clone(),
            Kind::Candidate => self.ledger.experiments[exp]
                .commit
                .clone()
                .unwrap_or_default(),
        }
    }

    /// With slots side by side and environment values, no evaluator runs while a proposer does:
    /// a proposer could otherwise read the values from the evaluator's `/proc/<pid>/environ`
    /// (root processes of one user read each other's, whatever their capabilities).
    pub(super) fn evaluation_waits_for_proposers(&self) -> bool {
        self.parallel() && !self.p().environment.is_empty() && self.bus.proposing()
    }

    /// Starts the evaluations held for proposers once none runs any more.
    pub(super) fn release_held_evaluations(&mut self) {
        if self.ending.cancel.is_some() {
            // A held evaluation never started: the cancel ends its experiment like any other.
            self.generation.held.clear();
            return;
        }
        if self.ending.done.is_some() || self.evaluation_waits_for_proposers() {
            return;
        }
        for (exp, attempt) in std::mem::take(&mut self.generation.held) {
            self.spawn(exp, attempt);
        }
    }

    pub(super) fn spawn(&mut self, exp: usize, attempt: usize) {
        let p = self.p();
        let evaluator = self.evaluator_of(attempt);
        let argv: Vec<String> = std::iter::once(evaluator.argv.command.clone())
            .chain(evaluator.argv.args.iter().cloned())
            .collect();
        // The holdout measures the best, in the run's worktree, where the last round left it.
        let holdout = self.ledger.attempts[attempt].purpose == Purpose::Holdout;
        let worktree = if holdout {
            self.place.worktree.clone()
        } else {
            self.worktree_of(exp)
        };
        let cwd = if evaluator.cwd == "." {
            worktree.clone()
        } else {
            format!("{worktree}/{}", evaluator.cwd)
        };
        let mut env: BTreeMap<String, String> = p
            .environment
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.value.clone()?)))
            .collect();
        let attempt_id = self.ledger.attempts[attempt].id.clone();
        env.insert(ATTEMPT_MARKER_ENV.into(), attempt_id.clone());
        let slot = self.ledger.experiments[exp].slot;
        env.insert(crate::spec::SLOT_ENV.into(), slot.to_string());
        let timeout_ms = p.timeout_ms;
        let s = &self.settings;
        let (grace_ms, stdout_cap, stderr_cap) = (
            s.termination_grace_ms,
            s.max_stdout_bytes,
            s.max_stderr_bytes,
        );
        let artifact_dir =
            layout::attempt_artifacts_dir(self.state_dir(), &self.place.run_id, &attempt_id);
        let state_dir = self.state_dir().to_owned();
        let commit = if holdout {
            self.restore_commit()
        } else {
            self.evaluated_commit(exp)
        };
        self.emit(
            |id| Effect::RunEvaluator {
                id,
                attempt_id,
                argv,
                worktree,
                commit,
                cwd,
                env,
                timeout_ms,
                grace_ms,
                stdout_cap,
                stderr_cap,
                artifact_dir,
                state_dir,
            },
            Await::Evaluate {
                exp,
                attempt,
                spawned: false,
            },
        );
    }
}
