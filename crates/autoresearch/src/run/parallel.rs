//! `parallelism` K > 1: candidates in generations.
//!
//! A generation is up to K candidates started together from the same best, recorded in one
//! transaction. Candidate `n` (ordinal, from 1) has slot `(n - 1) % K`: slot 0 works in the run's
//! worktree, slot s > 0 in a scratch worktree of its own (`layout::slot_worktree_path`, made on
//! first use, removed when the run ends). Every generation but the last is full, so a stored
//! ordinal alone names its generation and slot, which is what recovery needs.
//!
//! Each candidate runs the single-candidate chain (propose, check, commit, revalidate, evaluate
//! `repeats` times) in its slot, and then parks. The run state follows the furthest candidate
//! (`proposing` → `candidate-prepared` → `candidate-running`). When every candidate is parked
//! the generation is decided in one transaction: of those that pass the keep rule against the
//! best, the one with the best mean is kept (the run branch moves to it first), the others that
//! passed are `superseded` (stored as rejected, naming the winner), the rest rejected or failed;
//! consecutive failures are counted in ordinal order. The next generation starts from the new best.
//!
//! An ending while other candidates are in flight (a cancel, or one candidate blocking the run)
//! interrupts them and waits for every outstanding effect before it writes anything terminal, so
//! no process outlives the run and nothing is evaluated twice.

use super::Run;
use super::bus::{Await, Then};
use super::generation::rank;
use super::ledger::{ExpState, Kind, slot_of};
use crate::failure::Failure;
use crate::protocol::{Blocker, Effect, Statement, Status};
use crate::state::RunState;
use crate::stats::{self, Standing};
use crate::{layout, sql};

impl Run {
    /// Whether candidates run in generations.
    pub(super) fn parallel(&self) -> bool {
        self.policy.as_ref().is_some_and(|p| p.parallelism > 1)
    }

    pub(super) fn slot_of(&self, kind: Kind, ordinal: u32) -> u32 {
        slot_of(
            kind,
            ordinal,
            self.policy.as_ref().map_or(1, |p| p.parallelism),
        )
    }

    /// The worktree an experiment works in: its slot's.
    pub(super) fn worktree_of(&self, exp: usize) -> String {
        match self.ledger.experiments[exp].slot {
            0 => self.place.worktree.clone(),
            slot => layout::slot_worktree_path(&self.place.worktree, slot),
        }
    }

    /// The run-state move a candidate's step makes. One at a time, every step moves it; in a
    /// generation only the first candidate to get that far does.
    pub(super) fn step_state(&mut self, to: RunState) -> Option<Statement> {
        if self.parallel() && rank(self.durability.state) >= rank(to) {
            return None;
        }
        Some(self.set_state(to))
    }

    /// Records the next generation's candidates (as many as the budget leaves, at most K) and
    /// starts each in its slot.
    pub(super) fn start_generation(&mut self) {
        let p = self.p();
        let n = p
            .parallelism
            .min(p.max_experiments - self.candidates_started());
        let parent = self.restore_commit();
        self.generation.members = (0..n)
            .map(|_| self.new_experiment(Kind::Candidate, parent.clone(), ExpState::Proposing))
            .collect();
        let mut sts: Vec<Statement> = self
            .generation
            .members
            .iter()
            .map(|&exp| self.insert_experiment(exp))
            .collect();
        let cas = vec![sts.len()];
        sts.push(self.set_state(RunState::Proposing));
        self.write(sts, cas, Then::Generation);
    }

    /// Goes on with `then` once the experiment's slot has its worktree.
    pub(super) fn in_slot(&mut self, exp: usize, then: Then) {
        let slot = self.ledger.experiments[exp].slot;
        if slot == 0 || self.generation.slots_made.contains(&slot) {
            return self.advance(then);
        }
        let path = self.worktree_of(exp);
        let start_commit = self.ledger.experiments[exp].parent.clone();
        self.emit(
            |id| Effect::CreateWorktree {
                id,
                path,
                branch: None,
                start_commit,
            },
            Await::SlotWorktree { slot, then },
        );
    }

    pub(super) fn park(&mut self, exp: usize) {
        if !self.generation.parked.contains(&exp) {
            self.generation.parked.push(exp);
        }
        if self
            .generation
            .members
            .iter()
            .all(|e| self.generation.parked.contains(e))
        {
            self.decide_generation();
        }
    }

    /// Every candidate is in: choose one (the one being confirmed, else the kept or promising
    /// one with the best screening mean), confirm it on fresh samples if the rule asks for
    /// that, move the run branch to it if it is kept, then record.
    fn decide_generation(&mut self) {
        let direction = self.p().direction;
        let evaluated: Vec<usize> = self
            .generation
            .members
            .iter()
            .copied()
            .filter(|&exp| self.ledger.experiments[exp].state == ExpState::Evaluated)
            .collect();
        let screening_mean = |exp: usize| {
            let e = &self.ledger.experiments[exp];
            if e.samples.is_empty() {
                e.metric.unwrap_or(f64::NAN)
            } else {
                stats::mean(&e.samples)
            }
        };
        let confirming = evaluated
            .iter()
            .copied()
            .find(|&exp| !self.ledger.experiments[exp].fresh.is_empty());
        let chosen = confirming.or_else(|| {
            evaluated
                .iter()
                .copied()
                .filter(|&exp| matches!(self.standing(exp), Standing::Kept | Standing::Promising))
                .reduce(|w, exp| {
                    if direction.improves(screening_mean(exp), screening_mean(w)) {
                        exp
                    } else {
                        w
                    }
                })
        });
        match chosen.map(|exp| (exp, self.standing(exp))) {
            Some((exp, Standing::Kept)) => self.fast_forward_to(exp),
            Some((exp, Standing::Promising | Standing::Measure(_))) => self.confirm_chosen(exp),
            _ => self.finish_generation(None),
        }
    }

    /// Measures the generation's chosen candidate again in its slot, on fresh samples; it parks
    /// again when the confirmation is decided.
    fn confirm_chosen(&mut self, exp: usize) {
        self.generation.parked.retain(|&e| e != exp);
        self.ledger.experiments[exp].state = ExpState::Running;
        let sts = vec![self.set_experiment_state(exp)];
        self.write(sts, vec![], Then::Resample { exp });
    }

    /// The generation's one transaction: every candidate's fate, the new best, the failure
    /// count, and the run back to `ready`.
    pub(super) fn finish_generation(&mut self, winner: Option<usize>) {
        let members = std::mem::take(&mut self.generation.members);
        self.generation.parked.clear();
        let winner_id = winner.map(|w| self.ledger.experiments[w].id.clone());
        let mut sts = Vec::new();
        for &exp in &members {
            if self.ledger.experiments[exp].state.is_final() {
                // Failed before its evaluation, and recorded then.
                self.ledger.consecutive_failures += 1;
                continue;
            }
            // Kept or promising, but another of its generation was chosen and kept.
            let improved = matches!(self.standing(exp), Standing::Kept | Standing::Promising);
            let e = &mut self.ledger.experiments[exp];
            let measured = e.metric.is_some() && e.failure_code.is_none();
            let (state, decision) = match (measured, Some(exp) == winner) {
                (true, true) => (ExpState::Accepted, "accept"),
                (true, false) => (ExpState::Rejected, "reject"),
                (false, _) => (ExpState::Failed, "fail"),
            };
            e.state = state;
            e.decision = Some(decision);
            if measured {
                self.ledger.consecutive_failures = 0;
            } else {
                self.ledger.consecutive_failures += 1;
            }
            sts.push(self.finish_experiment(exp));
            if improved && winner.is_some() && Some(exp) != winner {
                let by = winner_id.clone();
                self.ledger.experiments[exp].superseded_by = by.clone();
                sts.push(
                    sql::SetSuperseded {
                        superseded_by: by.into(),
                        now: self.now.into(),
                        experiment_id: self.ledger.experiments[exp].id.clone().into(),
                    }
                    .into(),
                );
            }
        }
        if let Some(w) = winner {
            sts.push(self.new_best(w));
        }
        sts.push(self.set_failures());
        let mut cas = Vec::new();
        if self.durability.state == RunState::CandidateRunning {
            cas.push(sts.len());
            sts.push(self.set_state(RunState::Deciding));
        }
        cas.push(sts.len());
        sts.push(self.set_state(RunState::Ready));
        self.write(sts, cas, Then::Settled);
    }

    /// Recovery of a generation in flight: each unfinished candidate is continued in its slot
    /// as one alone would be (an evaluated one parks, an interrupted evaluation is rerun, an
    /// interrupted proposal fails), then the generation is decided.
    pub(super) fn resume_generation(&mut self) {
        let k = self.p().parallelism;
        let last = self.candidates_started();
        let first = (last.saturating_sub(1) / k) * k + 1;
        self.generation.members = (0..self.ledger.experiments.len())
            .filter(|&i| {
                let e = &self.ledger.experiments[i];
                e.kind == Kind::Candidate && e.ordinal >= first
            })
            .collect();
        self.generation.parked.clear();
        if self.generation.members.is_empty() {
            return self.block(
                Failure::StateAmbiguous,
                "the stored state has no generation to continue",
                vec![format!("state {}", self.durability.state.as_str())],
                true,
            );
        }
        for exp in self.generation.members.clone() {
            match self.ledger.experiments[exp].state {
                s if s.is_final() => self.park(exp),
                ExpState::Evaluated => self.in_slot(exp, Then::Measured { exp }),
                ExpState::Running => self.in_slot(exp, Then::Rerun { exp }),
                _ => self.in_slot(exp, Then::Interrupted { exp }),
            }
        }
    }

    /// An ending with other effects of a generation outstanding: interrupt them and end once
    /// they drain (true), or end now (false).
    pub(super) fn defer_ending(
        &mut self,
        status: Status,
        blocker: &Option<Blocker>,
        quiescent: bool,
    ) -> bool {
        if let Some(stopping) = &mut self.ending.stopping {
            // Already ending: the first reason stands, and a group not proven gone keeps the lock.
            stopping.2 &= quiescent;
            return true;
        }
        if !self.parallel() || !self.bus.busy() {
            return false;
        }
        self.ending.stopping = Some((status, blocker.clone(), quiescent));
        if self.ending.cancel.is_none() {
            self.ending.cancel = Some(
                blocker
                    .as_ref()
                    .map_or_else(|| status.as_str().to_owned(), |b| b.message.clone()),
            );
            self.begin_cancel();
        }
        true
    }

    /// At the end: remove every slot's scratch worktree (the candidates stay on their refs).
    /// True when removals were emitted.
    pub(super) fn drop_slots(&mut self) -> bool {
        if !self.parallel() || !self.place.worktree_ready || self.generation.dropping.is_some() {
            return false;
        }
        let k = self.p().parallelism;
        for slot in 1..k {
            let path = layout::slot_worktree_path(&self.place.worktree, slot);
            self.emit(|id| Effect::RemoveWorktree { id, path }, Await::DropSlot);
        }
        self.generation.dropping = Some(k - 1);
        self.generation.slots_made.clear();
        true
    }

    pub(super) fn slot_dropped(&mut self) {
        let left = self.generation.dropping.map_or(0, |n| n.saturating_sub(1));
        self.generation.dropping = Some(left);
        if left == 0 {
            self.after_terminal();
        }
    }
}
