//! The counters behind `failureThreshold` and `repeatThreshold`, under either [`Counting`].
//!
//! Under [`Counting::SameProblem`] (the default) each target ([`crate::Shot`]) with an unresolved
//! failure is one problem; a failure on another target with the same fingerprint (a text with
//! substance, see [`crate::failure_fingerprint`]) belongs to it too. Its first failure finds the problem; each later failure on it is a
//! failed retry, a **non-converged experiment**, and counts toward `failureThreshold` (the count
//! that arms is the largest problem's). A success on the target resolves it. At most
//! [`PROBLEM_SLOTS`] problems are remembered; a new one replaces the one touched longest ago.
//! Likewise a call counts toward `repeatThreshold` each time it repeats, with the same outcome
//! (success, or a failure with the same exit code and fingerprint), the experiment just before it
//! (`A A`: one repeat) or a two-call cycle (`A B A B`: one repeat of the cycle). Waiting calls are
//! not experiments.
//!
//! Under [`Counting::AnyFailure`] (the counting before 0.3) every failure since the last reset
//! counts, and identical consecutive calls count whatever they returned.

use crate::args::{CallKey, Fnv};
use crate::settings::Counting;
use fingerprint::Fingerprint;
use outcome::Outcome;

/// Unresolved problems remembered per agent under [`Counting::SameProblem`].
pub const PROBLEM_SLOTS: usize = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Problem {
    target: u64,
    /// The last failure's fingerprint, when its text had substance.
    print: Option<u64>,
    /// Unresolved failures on the target; 0 is a free slot.
    failures: u32,
    /// When it was last touched (a per-agent counter of failures).
    touched: u32,
}

/// One agent's counters. Constant size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// [`Counting::AnyFailure`]: failures since the last reset.
    any_failures: u32,
    problems: [Problem; PROBLEM_SLOTS],
    clock: u32,
    /// The last two experiments' signatures, the latest first.
    recent: [Option<u64>; 2],
    /// Experiments in a row equal to the one before (`A A A`: 2).
    same_as_last: u32,
    /// Experiments in a row equal to the one two before and not to the one before (`A B A B`: 2).
    same_as_second_last: u32,
    /// The counts after the last experiment.
    pub(crate) now: Counted,
}

/// What one experiment's result made of the counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counted {
    /// The failures counted toward `failureThreshold` (0 for a success under
    /// [`Counting::SameProblem`]).
    pub failures: u32,
    /// The repeats counted toward `repeatThreshold`.
    pub repeats: u32,
    /// The repeats are of a two-call cycle, not of one call.
    pub cycle: bool,
}

impl Counts {
    /// Counts one experiment: its exact call, its target, how it ended and its failure's
    /// fingerprint.
    pub(crate) fn count(
        &mut self,
        counting: Counting,
        call: CallKey,
        target: u64,
        outcome: &Outcome,
        failure: Option<Fingerprint>,
    ) -> Counted {
        let failed = outcome.failed();
        let failures = match counting {
            Counting::AnyFailure => {
                if failed {
                    self.any_failures = self.any_failures.saturating_add(1);
                }
                self.any_failures
            }
            // The first failure on a target finds the problem; each later one is a failed retry.
            Counting::SameProblem if failed => self.fail(target, failure) - 1,
            Counting::SameProblem => {
                self.resolve(target);
                0
            }
        };
        let signature = match counting {
            Counting::AnyFailure => call.0,
            Counting::SameProblem => {
                let mut h = Fnv::new();
                h.bytes(&call.0.to_le_bytes());
                h.byte(u8::from(failed));
                if failed {
                    h.bytes(&outcome.exit_code.unwrap_or(i64::MIN).to_le_bytes());
                    h.byte(u8::from(outcome.killed) | u8::from(outcome.timed_out) << 1);
                    h.bytes(&failure.map_or(0, Fingerprint::value).to_le_bytes());
                }
                h.0
            }
        };
        let [last, second_last] = self.recent;
        self.same_as_last = if last == Some(signature) {
            self.same_as_last.saturating_add(1)
        } else {
            0
        };
        self.same_as_second_last = if counting == Counting::SameProblem
            && second_last == Some(signature)
            && last != Some(signature)
        {
            self.same_as_second_last.saturating_add(1)
        } else {
            0
        };
        self.recent = [Some(signature), last];
        let failures = match counting {
            Counting::AnyFailure => failures,
            // A success may resolve the largest problem; another may remain.
            Counting::SameProblem => self.failures_now(),
        }
        .max(failures);
        let (repeats, cycle) = self.repeats_under(counting);
        self.now = Counted {
            failures,
            repeats,
            cycle,
        };
        Counted {
            failures: if counting == Counting::SameProblem && !failed {
                0
            } else {
                failures
            },
            ..self.now
        }
    }

    /// The failed retries of the largest unresolved problem.
    fn failures_now(&self) -> u32 {
        self.problems
            .iter()
            .map(|p| p.failures.saturating_sub(1))
            .max()
            .unwrap_or(0)
    }

    /// The repeats counted now: under [`Counting::SameProblem`] how often the last call or
    /// two-call cycle came again, under [`Counting::AnyFailure`] the length of the run of
    /// identical calls (0 before any experiment); and whether they are a cycle's.
    fn repeats_under(&self, counting: Counting) -> (u32, bool) {
        match counting {
            _ if self.recent[0].is_none() => (0, false),
            Counting::AnyFailure => (1 + self.same_as_last, false),
            Counting::SameProblem => {
                let cycles = self.same_as_second_last / 2;
                (self.same_as_last.max(cycles), cycles > self.same_as_last)
            }
        }
    }

    fn fail(&mut self, target: u64, failure: Option<Fingerprint>) -> u32 {
        let print = failure.map(Fingerprint::value);
        self.clock = self.clock.wrapping_add(1);
        let clock = self.clock;
        let slot = match self.problems.iter().position(|p| {
            p.failures > 0 && (p.target == target || print.is_some() && p.print == print)
        }) {
            Some(found) => found,
            None => {
                // A free slot, else the one touched longest ago (ages wrap like the clock).
                let (slot, _) = self
                    .problems
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, p)| {
                        if p.failures == 0 {
                            u32::MAX
                        } else {
                            clock.wrapping_sub(p.touched)
                        }
                    })
                    .unwrap_or((0, &Problem::default()));
                self.problems[slot] = Problem {
                    target,
                    print,
                    failures: 0,
                    touched: clock,
                };
                slot
            }
        };
        let problem = &mut self.problems[slot];
        problem.failures = problem.failures.saturating_add(1);
        if print.is_some() {
            problem.print = print;
        }
        problem.touched = clock;
        problem.failures
    }

    fn resolve(&mut self, target: u64) {
        for problem in &mut self.problems {
            if problem.target == target {
                problem.failures = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAME: Counting = Counting::SameProblem;

    fn key(n: u64) -> CallKey {
        CallKey(n)
    }

    fn fp(n: u64) -> Option<Fingerprint> {
        Some(Fingerprint::from_value(n))
    }

    #[test]
    fn retries_count_per_target_and_a_success_resolves_its_target() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        let ok = Outcome::success();
        assert_eq!(c.count(SAME, key(1), 10, &fail, fp(1)).failures, 0);
        assert_eq!(c.count(SAME, key(2), 20, &fail, fp(2)).failures, 0);
        assert_eq!(c.count(SAME, key(3), 10, &fail, fp(3)).failures, 1);
        assert_eq!(c.count(SAME, key(2), 20, &fail, fp(4)).failures, 1);
        assert_eq!(c.count(SAME, key(3), 10, &fail, fp(5)).failures, 2);
        assert_eq!(c.count(SAME, key(4), 10, &ok, None).failures, 0);
        assert_eq!(c.now.failures, 1, "target 20 is still unresolved");
        // A new problem on target 10; the largest is still target 20's.
        assert_eq!(c.count(SAME, key(3), 10, &fail, fp(6)).failures, 1);
        assert_eq!(c.count(SAME, key(5), 20, &ok, None).failures, 0);
        assert_eq!(c.now.failures, 0);
    }

    #[test]
    fn the_same_failure_on_another_target_is_the_same_problem() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        assert_eq!(c.count(SAME, key(1), 10, &fail, fp(7)).failures, 0);
        assert_eq!(c.count(SAME, key(2), 20, &fail, fp(7)).failures, 1);
        // Without a fingerprint (a text without substance) only the target tells.
        let mut c = Counts::default();
        assert_eq!(c.count(SAME, key(3), 30, &fail, None).failures, 0);
        assert_eq!(c.count(SAME, key(4), 40, &fail, None).failures, 0);
    }

    #[test]
    fn the_oldest_problem_makes_room() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        for target in 0..PROBLEM_SLOTS as u64 + 1 {
            c.count(SAME, key(target), target, &fail, None);
        }
        // Target 0 was forgotten: failing it again is a first failure.
        assert_eq!(c.count(SAME, key(0), 0, &fail, None).failures, 0);
        // Target 2 was remembered: this is its first retry.
        assert_eq!(c.count(SAME, key(2), 2, &fail, None).failures, 1);
    }

    #[test]
    fn repeats_need_the_same_outcome_and_cycles_of_two_count() {
        let mut c = Counts::default();
        let ok = Outcome::success();
        let fail = Outcome::exited(1);
        assert_eq!(c.count(SAME, key(1), 1, &ok, None).repeats, 0);
        assert_eq!(
            c.count(SAME, key(1), 1, &fail, fp(5)).repeats,
            0,
            "other outcome"
        );
        assert_eq!(
            c.count(SAME, key(1), 1, &fail, fp(6)).repeats,
            0,
            "other failure"
        );
        assert_eq!(c.count(SAME, key(1), 1, &fail, fp(6)).repeats, 1);
        assert_eq!(c.count(SAME, key(1), 1, &fail, fp(6)).repeats, 2);
        let mut c = Counts::default();
        let rounds: Vec<u32> = [1, 2, 1, 2, 1, 2]
            .into_iter()
            .map(|n| c.count(SAME, key(n), n, &ok, None).repeats)
            .collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 2]);
        // Under the old counting only identical neighbours count, whatever they returned.
        let mut c = Counts::default();
        let any = Counting::AnyFailure;
        assert_eq!(c.count(any, key(1), 1, &ok, None).repeats, 1);
        assert_eq!(c.count(any, key(1), 1, &fail, fp(1)).repeats, 2);
        assert_eq!(c.count(any, key(2), 2, &fail, fp(1)).failures, 2);
        assert_eq!(c.count(any, key(1), 1, &ok, None).repeats, 1);
    }
}
