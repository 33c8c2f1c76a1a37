//! The holdout evaluator (`holdout`): run `repeats` times on the baseline and on each kept
//! candidate, once it is the best, before the next round; never a sample of the keep rule, never
//! in the proposer's handoff. A kept candidate whose holdout mean is not better than the previous
//! best's is a divergence: a warning, or with `holdout_stop` the run's end.

use super::Run;
use super::bus::Then;
use super::ledger::ExpState;
use crate::failure::Failure;
use crate::protocol::{Blocker, Status};
use crate::spec::Evaluation;
use crate::stats::Purpose;

impl Run {
    /// The evaluator an attempt runs: the holdout's for a holdout attempt, else the run's.
    pub(super) fn evaluator_of(&self, attempt: usize) -> &Evaluation {
        let p = self.p();
        match (&p.holdout, self.ledger.attempts[attempt].purpose) {
            (Some(h), Purpose::Holdout) => h,
            _ => &p.evaluation,
        }
    }

    /// Before each round: measure the best's holdout while it has fewer than `repeats` values
    /// (and none failed), then judge it against the previous best's. True when that step is
    /// under way or ended the run.
    pub(super) fn holdout_step(&mut self) -> bool {
        let p = self.p();
        if p.holdout.is_none() {
            return false;
        }
        let Some(best) = self.best_experiment() else {
            return false;
        };
        let values = &self.ledger.experiments[best].holdout;
        if values.len() < p.repeats as usize && values.iter().all(Option::is_some) {
            let attempt = self.new_attempt_for(best, Purpose::Holdout);
            let sts = vec![self.insert_attempt(attempt)];
            self.write(sts, vec![], Then::Spawn { exp: best, attempt });
            return true;
        }
        let Some(note) = self.divergence(best) else {
            return false;
        };
        if self.p().holdout_stop {
            let blocker = Blocker {
                code: Failure::HoldoutDiverged.as_str().into(),
                message: note,
                evidence: vec![format!("best {}", self.ledger.experiments[best].id)],
            };
            self.finish(Status::BudgetLimited, Some(blocker), true);
            return true;
        }
        if !self.ending.warnings.contains(&note) {
            self.warn(note);
        }
        false
    }

    /// The experiment that is the run's best.
    fn best_experiment(&self) -> Option<usize> {
        let id = &self.ledger.best.as_ref()?.experiment_id;
        self.ledger.experiments.iter().position(|e| &e.id == id)
    }

    /// What a divergence of kept candidate `best` from the best before it says, if it diverged.
    fn divergence(&self, best: usize) -> Option<String> {
        let before = self.ledger.experiments[..best]
            .iter()
            .rposition(|e| e.state == ExpState::Accepted)?;
        let p = self.p();
        crate::render::holdout_divergence(
            &p.metric_name,
            p.direction,
            &super::row(&self.ledger.experiments[before]),
            &super::row(&self.ledger.experiments[best]),
        )
    }
}
