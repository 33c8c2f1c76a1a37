//! The statements a run writes: each stored row built from the machine's state, with named
//! parameters.

use super::Run;
use super::ledger::{Attempt, ExpState, Experiment, Kind};
use crate::protocol::{SqlValue, Statement};
use crate::sql;
use crate::stats::Purpose;
use serde_json::json;
use std::collections::BTreeMap;

impl Run {
    pub(super) fn new_experiment(&mut self, kind: Kind, parent: String, state: ExpState) -> usize {
        let ordinal = match kind {
            Kind::Baseline => 0,
            Kind::Candidate => self.candidates_started() + 1,
        };
        let id = match kind {
            Kind::Baseline => format!("{}-baseline", self.place.run_id),
            Kind::Candidate => format!("{}-candidate-{ordinal}", self.place.run_id),
        };
        self.ledger.experiments.push(Experiment {
            id,
            ordinal,
            kind,
            state,
            parent,
            commit: None,
            report: None,
            changed_paths: Vec::new(),
            metric: None,
            samples: Vec::new(),
            fresh: Vec::new(),
            holdout: Vec::new(),
            decision: None,
            failure_code: None,
            failure_message: None,
            evidence: Vec::new(),
            slot: self.slot_of(kind, ordinal),
            superseded_by: None,
        });
        self.ledger.experiments.len() - 1
    }

    pub(super) fn new_attempt(&mut self, exp: usize) -> usize {
        let purpose = self.next_purpose(exp);
        self.new_attempt_for(exp, purpose)
    }

    pub(super) fn new_attempt_for(&mut self, exp: usize, purpose: Purpose) -> usize {
        let k = self
            .ledger
            .attempts
            .iter()
            .filter(|a| a.experiment == exp)
            .count()
            + 1;
        self.ledger.attempts.push(Attempt {
            id: format!("{}-attempt-{k}", self.ledger.experiments[exp].id),
            experiment: exp,
            running: true,
            interrupted: false,
            process: None,
            purpose,
        });
        self.ledger.attempts.len() - 1
    }

    pub(super) fn insert_experiment(&self, exp: usize) -> Statement {
        let e = &self.ledger.experiments[exp];
        sql::InsertExperiment {
            experiment_id: e.id.clone().into(),
            run_id: self.place.run_id.clone().into(),
            ordinal: e.ordinal.into(),
            kind: if e.kind == Kind::Baseline {
                "baseline"
            } else {
                "candidate"
            }
            .into(),
            state: e.state.as_str().into(),
            parent_commit: e.parent.clone().into(),
            candidate_commit: SqlValue::Null,
            now: self.now.into(),
        }
        .into()
    }

    pub(super) fn set_experiment_state(&self, exp: usize) -> Statement {
        let e = &self.ledger.experiments[exp];
        sql::SetExperimentState {
            state: e.state.as_str().into(),
            now: self.now.into(),
            experiment_id: e.id.clone().into(),
        }
        .into()
    }

    pub(super) fn insert_attempt(&self, attempt: usize) -> Statement {
        let a = &self.ledger.attempts[attempt];
        let p = self.p();
        let evaluator = self.evaluator_of(attempt);
        let argv: Vec<&String> = std::iter::once(&evaluator.argv.command)
            .chain(&evaluator.argv.args)
            .collect();
        let env: BTreeMap<&String, String> = p
            .environment
            .iter()
            .map(|(k, v)| (k, format!("sha256:{}", v.sha256)))
            .collect();
        sql::InsertAttempt {
            attempt_id: a.id.clone().into(),
            run_id: self.place.run_id.clone().into(),
            experiment_id: self.ledger.experiments[a.experiment].id.clone().into(),
            ordinal: (self.ledger.attempts[..=attempt]
                .iter()
                .filter(|x| x.experiment == a.experiment)
                .count() as u64)
                .into(),
            argv_json: json!(argv).to_string().into(),
            cwd: evaluator.cwd.clone().into(),
            env_json: json!(env).to_string().into(),
            provenance_sha256: self
                .ledger
                .provenance_sha256
                .clone()
                .unwrap_or_default()
                .into(),
            timeout_ms: p.timeout_ms.into(),
            purpose: match a.purpose {
                Purpose::Select => None,
                Purpose::Confirm => Some(sql::PURPOSE_CONFIRM),
                Purpose::Holdout => Some(sql::PURPOSE_HOLDOUT),
            }
            .into(),
            now: self.now.into(),
        }
        .into()
    }

    pub(super) fn finish_experiment(&self, exp: usize) -> Statement {
        let e = &self.ledger.experiments[exp];
        let evidence = (!e.evidence.is_empty()).then(|| json!(e.evidence).to_string());
        sql::FinishExperiment {
            state: e.state.as_str().into(),
            metric: e.metric.into(),
            decision: e.decision.map(str::to_owned).into(),
            failure_code: e.failure_code.clone().into(),
            failure_message: e.failure_message.clone().into(),
            evidence_json: evidence.into(),
            hypothesis: e.report.as_ref().map(|r| r.hypothesis.clone()).into(),
            summary: e.report.as_ref().map(|r| r.summary.clone()).into(),
            now: self.now.into(),
            experiment_id: e.id.clone().into(),
        }
        .into()
    }

    pub(super) fn set_failures(&self) -> Statement {
        sql::SetFailures {
            consecutive_failures: self.ledger.consecutive_failures.into(),
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
        }
        .into()
    }

    /// Closes a running attempt whose process group is proven gone as `interrupted`.
    pub(super) fn interrupted_attempt(&mut self, attempt: usize, failure_code: &str) -> Statement {
        let a = &mut self.ledger.attempts[attempt];
        a.running = false;
        a.interrupted = true;
        sql::FinishAttempt {
            state: "interrupted".into(),
            exit_code: SqlValue::Null,
            signal: SqlValue::Null,
            timed_out: false.into(),
            quiescent: true.into(),
            failure_code: failure_code.into(),
            metric: SqlValue::Null,
            now: self.now.into(),
            attempt_id: self.ledger.attempts[attempt].id.clone().into(),
        }
        .into()
    }

    /// Marks an attempt's process group as proven gone.
    pub(super) fn mark_quiescent(&self, attempt: usize) -> Statement {
        sql::MarkAttemptQuiescent {
            attempt_id: self.ledger.attempts[attempt].id.clone().into(),
        }
        .into()
    }

    /// Takes a reconciled run's lock again (within the active-run limit), clears its
    /// interruption and records this host.
    pub(super) fn retake_lock(&self) -> Vec<Statement> {
        vec![
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
        ]
    }

    /// Marks the run interrupted (its host died; still resumable).
    pub(super) fn set_interrupted(&self) -> Statement {
        sql::SetInterrupted {
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
        }
        .into()
    }
}
