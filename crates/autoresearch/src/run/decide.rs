//! Deciding: keep, reject or fail an experiment, record a new best, charge failed rounds, and
//! whether the run goes on (target, budget, plateau, consecutive failures).

use super::Run;
use super::bus::{Await, Then};
use super::ledger::{ExpState, Kind};
use crate::failure::Failure;
use crate::protocol::{Blocker, Effect, Point, Statement, Status};
use crate::state::RunState;
use crate::stats::{Purpose, Standing};
use crate::{sql, stats};

impl Run {
    /// The samples a candidate is measured against: the best's fresh confirmation samples when
    /// it was confirmed, else its samples (a point stored without samples, by an earlier
    /// version, counts as one).
    fn bar(&self) -> Vec<f64> {
        let Some(best) = &self.ledger.best else {
            return Vec::new();
        };
        let stored = self
            .ledger
            .experiments
            .iter()
            .find(|x| x.id == best.experiment_id);
        match stored {
            Some(x) if !x.fresh.is_empty() => x.fresh.clone(),
            Some(x) if !x.samples.is_empty() => x.samples.clone(),
            _ => vec![best.metric],
        }
    }

    /// Where candidate `exp` stands under the keep rule ([`stats::judge`]); a failed one is
    /// rejected.
    pub(super) fn standing(&self, exp: usize) -> Standing {
        let e = &self.ledger.experiments[exp];
        if e.failure_code.is_some() || e.kind == Kind::Baseline {
            return Standing::Rejected;
        }
        let selection = if e.samples.is_empty() {
            e.metric.into_iter().collect()
        } else {
            e.samples.clone()
        };
        stats::judge(
            self.p().direction,
            &selection,
            &e.fresh,
            &self.bar(),
            self.p().repeats as usize,
        )
    }

    /// Whether candidate `exp` is kept.
    pub(super) fn accepts(&self, exp: usize) -> bool {
        self.standing(exp) == Standing::Kept
    }

    /// Whether `exp` is measured again after a successful evaluation: the baseline until it has
    /// `repeats` samples; a candidate while the rule asks for more, a promising one alone at
    /// once (its confirmation), a promising one of a generation when it is chosen.
    pub(super) fn wants_sample(&self, exp: usize) -> bool {
        let e = &self.ledger.experiments[exp];
        if e.kind == Kind::Baseline {
            return e.samples.len() < self.p().repeats as usize;
        }
        match self.standing(exp) {
            Standing::Measure(_) => true,
            Standing::Promising => !self.parallel(),
            Standing::Kept | Standing::Rejected => false,
        }
    }

    /// What the next evaluation of `exp` measures.
    pub(super) fn next_purpose(&self, exp: usize) -> Purpose {
        match self.standing(exp) {
            Standing::Measure(purpose) => purpose,
            Standing::Promising => Purpose::Confirm,
            Standing::Kept | Standing::Rejected => Purpose::Select,
        }
    }

    pub(super) fn decide(&mut self, exp: usize) {
        let kind = self.ledger.experiments[exp].kind;
        let metric = self.ledger.experiments[exp]
            .metric
            .filter(|_| self.ledger.experiments[exp].failure_code.is_none());
        match (kind, metric) {
            (Kind::Baseline, Some(m)) => {
                let e = &mut self.ledger.experiments[exp];
                e.state = ExpState::Accepted;
                e.decision = Some("accept");
                let point = Point {
                    commit: self.place.start_commit.clone(),
                    metric: m,
                    experiment_id: e.id.clone(),
                };
                self.ledger.pending_best = Some((point, true));
                let sts = vec![
                    self.finish_experiment(exp),
                    sql::SetBaseline {
                        commit: self.place.start_commit.clone().into(),
                        metric: m.into(),
                        experiment_id: self.ledger.experiments[exp].id.clone().into(),
                        now: self.now.into(),
                        run_id: self.place.run_id.clone().into(),
                    }
                    .into(),
                    self.set_state(RunState::Ready),
                ];
                self.write(sts, vec![2], Then::Ready);
            }
            (Kind::Baseline, None) => {
                let e = &mut self.ledger.experiments[exp];
                e.state = ExpState::Failed;
                e.decision = Some("fail");
                let blocker = Blocker {
                    code: e
                        .failure_code
                        .clone()
                        .unwrap_or_else(|| Failure::BaselineFailed.as_str().into()),
                    message: e.failure_message.clone().unwrap_or_default(),
                    evidence: vec![format!("experiment {}", e.id)],
                };
                self.durability.carry.push(self.finish_experiment(exp));
                self.finish(Status::BaselineBlocked, Some(blocker), true);
            }
            (Kind::Candidate, _) if self.accepts(exp) => self.fast_forward_to(exp),
            (Kind::Candidate, Some(_)) => {
                let e = &mut self.ledger.experiments[exp];
                e.state = ExpState::Rejected;
                e.decision = Some("reject");
                self.ledger.consecutive_failures = 0;
                let sts = vec![
                    self.finish_experiment(exp),
                    self.set_failures(),
                    self.set_state(RunState::Ready),
                ];
                self.write(sts, vec![2], Then::Ready);
            }
            (Kind::Candidate, None) => {
                let e = &mut self.ledger.experiments[exp];
                e.state = ExpState::Failed;
                e.decision = Some("fail");
                self.ledger.consecutive_failures += 1;
                let sts = vec![
                    self.finish_experiment(exp),
                    self.set_failures(),
                    self.set_state(RunState::Ready),
                ];
                self.write(sts, vec![2], Then::Ready);
            }
        }
    }

    /// Moves the run branch to candidate `exp`, whose keeping is recorded once that is done.
    pub(super) fn fast_forward_to(&mut self, exp: usize) {
        let (branch, from) = (self.place.branch.clone(), self.restore_commit());
        let to = self.ledger.experiments[exp]
            .commit
            .clone()
            .unwrap_or_default();
        self.emit(
            |id| Effect::FastForwardRunBranch {
                id,
                branch,
                from,
                to,
            },
            Await::FastForward { exp },
        );
    }

    /// The statement recording candidate `exp` as the new best; it becomes `best` once the
    /// transaction carrying it is durable.
    pub(super) fn new_best(&mut self, exp: usize) -> Statement {
        let e = &self.ledger.experiments[exp];
        let point = Point {
            commit: e.commit.clone().unwrap_or_default(),
            metric: e.metric.unwrap_or(f64::NAN),
            experiment_id: e.id.clone(),
        };
        let st = sql::SetBest {
            commit: point.commit.clone().into(),
            metric: point.metric.into(),
            experiment_id: point.experiment_id.clone().into(),
            now: self.now.into(),
            run_id: self.place.run_id.clone().into(),
        }
        .into();
        self.ledger.pending_best = Some((point, false));
        st
    }

    pub(super) fn finish_candidate(&mut self, exp: usize) {
        let e = &mut self.ledger.experiments[exp];
        e.state = ExpState::Accepted;
        e.decision = Some("accept");
        self.ledger.consecutive_failures = 0;
        let sts = vec![
            self.finish_experiment(exp),
            self.new_best(exp),
            self.set_failures(),
            self.set_state(RunState::Ready),
        ];
        self.write(sts, vec![3], Then::Ready);
    }

    /// A failed round: restore the best commit, record the experiment, charge the failure, and
    /// continue (the next `ready` step decides whether the run stops).
    pub(super) fn fail_round(
        &mut self,
        exp: usize,
        state: ExpState,
        code: Failure,
        message: String,
        evidence: Vec<String>,
    ) {
        let e = &mut self.ledger.experiments[exp];
        e.state = state;
        e.decision = Some("fail");
        e.failure_code = Some(code.as_str().to_owned());
        e.failure_message = Some(message);
        e.evidence = evidence;
        if self.parallel() {
            // The generation's decision counts it, in ordinal order with the others; its slot is
            // cleaned when the slot's next candidate starts.
            return self.advance(Then::RecordFailure { exp });
        }
        self.ledger.consecutive_failures += 1;
        let restore = self.restore_commit();
        self.clean(restore, Then::RecordFailure { exp });
    }

    pub(super) fn next_round(&mut self) {
        if self.holdout_step() {
            return;
        }
        let p = self.p();
        let started = self.candidates_started();
        if let (Some(target), Some(best)) = (p.target, &self.ledger.best)
            && p.direction.meets(best.metric, target)
        {
            return self.finish(Status::TargetReached, None, true);
        }
        if started >= p.max_experiments {
            return self.finish(Status::BudgetLimited, None, true);
        }
        // Counted in whole generations: a kept candidate's generation-mates are not after it.
        let generation = |ordinal: u32| ordinal.saturating_sub(1) / p.parallelism;
        let last_kept = self
            .ledger
            .experiments
            .iter()
            .filter(|e| e.kind == Kind::Candidate && e.state == ExpState::Accepted)
            .map(|e| generation(e.ordinal))
            .max();
        let stale = self
            .ledger
            .experiments
            .iter()
            .filter(|e| {
                e.kind == Kind::Candidate && last_kept.is_none_or(|g| generation(e.ordinal) > g)
            })
            .count() as u32;
        if let Some(max) = p.max_stale_experiments
            && stale >= max
        {
            let blocker = Blocker {
                code: Failure::Plateau.as_str().into(),
                message: format!(
                    "{stale} candidates in a row were not kept (max_stale_experiments {max})"
                ),
                evidence: vec![format!(
                    "best {}",
                    self.ledger
                        .best
                        .as_ref()
                        .map_or("-".into(), |b| b.experiment_id.clone())
                )],
            };
            return self.finish(Status::BudgetLimited, Some(blocker), true);
        }
        if self.ledger.consecutive_failures >= p.max_consecutive_failures {
            let last: Vec<String> = self
                .ledger
                .experiments
                .iter()
                .rev()
                .take(self.ledger.consecutive_failures as usize)
                .map(|e| format!("{}: {}", e.id, e.failure_code.as_deref().unwrap_or("-")))
                .collect();
            let blocker = Blocker {
                code: Failure::ConsecutiveFailures.as_str().into(),
                message: format!(
                    "{} consecutive rounds failed",
                    self.ledger.consecutive_failures
                ),
                evidence: last,
            };
            return self.finish(Status::RoundFailed, Some(blocker), true);
        }
        if self.parallel() {
            return self.start_generation();
        }
        let exp = self.new_experiment(Kind::Candidate, self.restore_commit(), ExpState::Proposing);
        let sts = vec![
            self.insert_experiment(exp),
            self.set_state(RunState::Proposing),
        ];
        self.write(sts, vec![1], Then::Propose { exp });
    }
}
