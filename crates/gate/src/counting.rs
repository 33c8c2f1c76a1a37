//! The counters behind `failureThreshold` and `repeatThreshold`, under either [`Counting`].
//!
//! Under [`Counting::SameProblem`] each target ([`crate::Shot`]) with an unresolved
//! failure is one problem; a failure on another target with the same fingerprint (a text with
//! substance, see [`crate::failure_keys`]) belongs to it too. Its first failure finds the problem; each later failure on it is a
//! failed retry, a **non-converged experiment**, and counts toward `failureThreshold` (the count
//! that arms is the largest problem's). A success on the target resolves it. At most
//! [`PROBLEM_SLOTS`] problems are remembered; a new one replaces the one touched longest ago.
//! Likewise a call counts toward `repeatThreshold` each time it repeats, with the same outcome
//! (success, or a failure with the same exit code and fingerprint), the experiment just before it
//! (`A A`: one repeat) or a two-call cycle (`A B A B`: one repeat of the cycle). Waiting calls are
//! not experiments.
//!
//! [`Counting::NoProgress`] (the default) counts as `SameProblem` does, except that a failed shell
//! run whose failure [detail](fingerprint::detail) differs from every detail the problem has
//! shown ([`DETAILS`] are remembered), after something changed since its last failure (another
//! experiment succeeded: an edit, a write, a command), is **progress**: the problem is found again (its failed
//! retries go back to zero) instead of counting a failed retry. Only shell runs make progress this
//! way: a file tool's failure (an edit the tool refused, the file unchanged) counts as before.
//!
//! Under [`Counting::AnyFailure`] (the counting before 0.3) every failure since the last reset
//! counts, and identical consecutive calls count whatever they returned.

use crate::FailureKeys;
use crate::args::{CallKey, Fnv};
use crate::experiment::Shot;
use crate::settings::Counting;
use fingerprint::Fingerprint;
use outcome::Outcome;

/// Unresolved problems remembered per agent when counting per problem.
pub const PROBLEM_SLOTS: usize = 8;

/// Files written whole that are remembered as fresh scripts under [`Counting::NoProgress`].
pub const FRESH_SCRIPTS: usize = 4;

/// Failure details remembered per problem under [`Counting::NoProgress`]: a failure that comes
/// back to one of them (an agent going round between two errors) is no progress.
pub const DETAILS: usize = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Problem {
    target: u64,
    /// The last fingerprint of its failures whose text had substance (0: none yet; a fingerprint
    /// of value 0 is taken for none, which only keeps it from joining another target).
    print: u64,
    /// The details of its latest failures (their low 32 bits), the latest at `details[0]` (0:
    /// none).
    details: [u32; DETAILS],
    /// Unresolved failures on the target; 0 is a free slot.
    failures: u32,
    /// When it was last touched (a per-agent counter of failures).
    touched: u32,
    /// [`Counts::changes`] at its last failure.
    changes_at: u32,
}

/// One agent's counters. Constant size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// [`Counting::AnyFailure`]: failures since the last reset.
    any_failures: u32,
    problems: [Problem; PROBLEM_SLOTS],
    /// Keys of files written whole and not run since (their low 32 bits), the latest first (0:
    /// none).
    fresh: [u32; FRESH_SCRIPTS],
    clock: u32,
    /// Successful experiments so far: something may have changed when it moves.
    changes: u32,
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
        shot: Shot,
        outcome: &Outcome,
        failure: FailureKeys,
    ) -> Counted {
        let target = shot.target;
        let failed = outcome.failed();
        let expected = counting == Counting::NoProgress && self.run_script(shot, failed);
        if !failed {
            self.changes = self.changes.wrapping_add(1);
        }
        let failures = match counting {
            Counting::AnyFailure => {
                if failed {
                    self.any_failures = self.any_failures.saturating_add(1);
                }
                self.any_failures
            }
            // The first failure on a target finds the problem; each later one is a failed retry.
            _ if expected => 0,
            _ if failed => {
                let progress = (counting == Counting::NoProgress && shot.shell)
                    .then_some(failure.detail)
                    .flatten();
                self.fail(target, failure.print, progress) - 1
            }
            _ => {
                self.resolve(target);
                0
            }
        };
        let signature = match counting {
            Counting::AnyFailure => call.0,
            _ => {
                let mut h = Fnv::new();
                h.bytes(&call.0.to_le_bytes());
                h.byte(u8::from(failed));
                if failed {
                    h.bytes(&outcome.exit_code.unwrap_or(i64::MIN).to_le_bytes());
                    h.byte(u8::from(outcome.killed) | u8::from(outcome.timed_out) << 1);
                    h.bytes(&failure.print.map_or(0, Fingerprint::value).to_le_bytes());
                }
                h.value()
            }
        };
        let [last, second_last] = self.recent;
        self.same_as_last = if last == Some(signature) {
            self.same_as_last.saturating_add(1)
        } else {
            0
        };
        self.same_as_second_last = if counting.per_problem()
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
            _ => self.failures_now(),
        }
        .max(failures);
        let (repeats, cycle) = self.repeats_under(counting);
        self.now = Counted {
            failures,
            repeats,
            cycle,
        };
        Counted {
            failures: if counting.per_problem() && !failed {
                0
            } else {
                failures
            },
            ..self.now
        }
    }

    /// Keeps the fresh scripts up to date with one experiment; whether it is the first failed
    /// run of a fresh script.
    fn run_script(&mut self, shot: Shot, failed: bool) -> bool {
        // Truncated keys: a collision only makes one more failure expected.
        let writes = shot.writes as u32;
        if writes != 0 && !failed && self.fresh[0] != writes {
            self.fresh.rotate_right(1);
            self.fresh[0] = writes;
        }
        let script = shot.script as u32;
        if script == 0 {
            return false;
        }
        match self.fresh.iter().position(|&file| file == script) {
            Some(at) => {
                self.fresh[at] = 0;
                failed
            }
            None => false,
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

    /// The repeats counted now: counting per problem, how often the last call or
    /// two-call cycle came again, under [`Counting::AnyFailure`] the length of the run of
    /// identical calls (0 before any experiment); and whether they are a cycle's.
    fn repeats_under(&self, counting: Counting) -> (u32, bool) {
        match counting {
            _ if self.recent[0].is_none() => (0, false),
            Counting::AnyFailure => (1 + self.same_as_last, false),
            _ => {
                let cycles = self.same_as_second_last / 2;
                (self.same_as_last.max(cycles), cycles > self.same_as_last)
            }
        }
    }

    /// Counts a failure on its problem and returns the problem's failures. `progress` is the
    /// failure's detail when a changed detail is progress.
    fn fail(&mut self, target: u64, failure: Option<Fingerprint>, progress: Option<u64>) -> u32 {
        let print = failure.map_or(0, Fingerprint::value);
        self.clock = self.clock.wrapping_add(1);
        let clock = self.clock;
        let slot =
            match self.problems.iter().position(|p| {
                p.failures > 0 && (p.target == target || print != 0 && p.print == print)
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
                        details: [0; DETAILS],
                        failures: 0,
                        touched: clock,
                        changes_at: 0,
                    };
                    slot
                }
            };
        let problem = &mut self.problems[slot];
        // Truncated details: a collision only counts one change as none.
        let progress = progress.map(|detail| detail as u32 | 1);
        match progress {
            // A failure shown without text (no detail) cannot be compared with.
            Some(detail)
                if problem.failures > 0
                    && problem.changes_at != self.changes
                    && problem.details[0] != 0
                    && !problem.details.contains(&detail) =>
            {
                problem.failures = 1;
            }
            _ => problem.failures = problem.failures.saturating_add(1),
        }
        problem.changes_at = self.changes;
        if let Some(detail) = progress {
            if problem.details[0] != detail {
                problem.details.rotate_right(1);
                problem.details[0] = detail;
            }
        }
        if print != 0 {
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

    fn fp(n: u64) -> FailureKeys {
        FailureKeys {
            print: Some(Fingerprint::from_value(n)),
            detail: Some(n),
        }
    }

    /// A file tool's shot at `target`.
    fn at(target: u64) -> Shot {
        Shot {
            call: CallKey(target),
            target,
            waits: false,
            shell: false,
            script: 0,
            writes: 0,
        }
    }

    #[test]
    fn retries_count_per_target_and_a_success_resolves_its_target() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        let ok = Outcome::success();
        assert_eq!(c.count(SAME, key(1), at(10), &fail, fp(1)).failures, 0);
        assert_eq!(c.count(SAME, key(2), at(20), &fail, fp(2)).failures, 0);
        assert_eq!(c.count(SAME, key(3), at(10), &fail, fp(3)).failures, 1);
        assert_eq!(c.count(SAME, key(2), at(20), &fail, fp(4)).failures, 1);
        assert_eq!(c.count(SAME, key(3), at(10), &fail, fp(5)).failures, 2);
        assert_eq!(
            c.count(SAME, key(4), at(10), &ok, FailureKeys::default())
                .failures,
            0
        );
        assert_eq!(c.now.failures, 1, "target 20 is still unresolved");
        // A new problem on target 10; the largest is still target 20's.
        assert_eq!(c.count(SAME, key(3), at(10), &fail, fp(6)).failures, 1);
        assert_eq!(
            c.count(SAME, key(5), at(20), &ok, FailureKeys::default())
                .failures,
            0
        );
        assert_eq!(c.now.failures, 0);
    }

    #[test]
    fn the_same_failure_on_another_target_is_the_same_problem() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        assert_eq!(c.count(SAME, key(1), at(10), &fail, fp(7)).failures, 0);
        assert_eq!(c.count(SAME, key(2), at(20), &fail, fp(7)).failures, 1);
        // Without a fingerprint (a text without substance) only the target tells.
        let mut c = Counts::default();
        assert_eq!(
            c.count(SAME, key(3), at(30), &fail, FailureKeys::default())
                .failures,
            0
        );
        assert_eq!(
            c.count(SAME, key(4), at(40), &fail, FailureKeys::default())
                .failures,
            0
        );
    }

    #[test]
    fn the_oldest_problem_makes_room() {
        let mut c = Counts::default();
        let fail = Outcome::exited(1);
        for target in 0..PROBLEM_SLOTS as u64 + 1 {
            c.count(SAME, key(target), at(target), &fail, FailureKeys::default());
        }
        // Target 0 was forgotten: failing it again is a first failure.
        assert_eq!(
            c.count(SAME, key(0), at(0), &fail, FailureKeys::default())
                .failures,
            0
        );
        // Target 2 was remembered: this is its first retry.
        assert_eq!(
            c.count(SAME, key(2), at(2), &fail, FailureKeys::default())
                .failures,
            1
        );
    }

    #[test]
    fn repeats_need_the_same_outcome_and_cycles_of_two_count() {
        let mut c = Counts::default();
        let ok = Outcome::success();
        let fail = Outcome::exited(1);
        assert_eq!(
            c.count(SAME, key(1), at(1), &ok, FailureKeys::default())
                .repeats,
            0
        );
        assert_eq!(
            c.count(SAME, key(1), at(1), &fail, fp(5)).repeats,
            0,
            "other outcome"
        );
        assert_eq!(
            c.count(SAME, key(1), at(1), &fail, fp(6)).repeats,
            0,
            "other failure"
        );
        assert_eq!(c.count(SAME, key(1), at(1), &fail, fp(6)).repeats, 1);
        assert_eq!(c.count(SAME, key(1), at(1), &fail, fp(6)).repeats, 2);
        let mut c = Counts::default();
        let rounds: Vec<u32> = [1, 2, 1, 2, 1, 2]
            .into_iter()
            .map(|n| {
                c.count(SAME, key(n), at(n), &ok, FailureKeys::default())
                    .repeats
            })
            .collect();
        assert_eq!(rounds, [0, 0, 0, 1, 1, 2]);
        // Under the old counting only identical neighbours count, whatever they returned.
        let mut c = Counts::default();
        let any = Counting::AnyFailure;
        assert_eq!(
            c.count(any, key(1), at(1), &ok, FailureKeys::default())
                .repeats,
            1
        );
        assert_eq!(c.count(any, key(1), at(1), &fail, fp(1)).repeats, 2);
        assert_eq!(c.count(any, key(2), at(2), &fail, fp(1)).failures, 2);
        assert_eq!(
            c.count(any, key(1), at(1), &ok, FailureKeys::default())
                .repeats,
            1
        );
    }

    const NO_PROGRESS: Counting = Counting::NoProgress;

    /// A shell run of `script` (target 1).
    fn run(script: u64) -> Shot {
        Shot {
            shell: true,
            script,
            ..at(1)
        }
    }

    fn failed_with(detail: u64) -> FailureKeys {
        FailureKeys {
            print: Some(Fingerprint::from_value(99)),
            detail: Some(detail << 8),
        }
    }

    #[test]
    fn a_changed_failure_of_a_run_is_progress_and_a_recurring_one_is_not() {
        let fail = Outcome::exited(1);
        let ok = Outcome::success();
        // Each run after an edit (a successful experiment).
        let edit_then_fail = |c: &mut Counts, detail| {
            c.count(NO_PROGRESS, key(2), at(2), &ok, FailureKeys::default());
            c.count(NO_PROGRESS, key(1), run(0), &fail, failed_with(detail))
                .failures
        };
        let mut c = Counts::default();
        let failures: Vec<u32> = [1, 2, 3, 3, 3]
            .into_iter()
            .map(|detail| edit_then_fail(&mut c, detail))
            .collect();
        assert_eq!(
            failures,
            [0, 0, 0, 1, 2],
            "found, progress, progress, then retries"
        );
        // Going round between two earlier errors is no progress either.
        let mut c = Counts::default();
        let failures: Vec<u32> = [1, 2, 1, 2]
            .into_iter()
            .map(|detail| edit_then_fail(&mut c, detail))
            .collect();
        assert_eq!(failures, [0, 0, 1, 2]);
        // Another output with nothing changed in between (`sh -x build.sh` after `sh build.sh`)
        // is the same failure told another way.
        let mut c = Counts::default();
        let failures: Vec<u32> = [1, 2, 3]
            .into_iter()
            .map(|detail| {
                c.count(NO_PROGRESS, key(1), run(0), &fail, failed_with(detail))
                    .failures
            })
            .collect();
        assert_eq!(failures, [0, 1, 2]);
        // Under same-problem every failed retry counts.
        let mut c = Counts::default();
        let failures: Vec<u32> = [1, 2, 3]
            .into_iter()
            .map(|detail| {
                c.count(SAME, key(1), run(0), &fail, failed_with(detail))
                    .failures
            })
            .collect();
        assert_eq!(failures, [0, 1, 2]);
    }

    #[test]
    fn a_file_tool_failure_never_makes_progress() {
        let fail = Outcome::exited(1);
        let mut c = Counts::default();
        let failures: Vec<u32> = [1, 2, 3]
            .into_iter()
            .map(|detail| {
                c.count(NO_PROGRESS, key(1), at(1), &fail, failed_with(detail))
                    .failures
            })
            .collect();
        assert_eq!(
            failures,
            [0, 1, 2],
            "a refused edit stays refused, whatever it says"
        );
    }

    #[test]
    fn the_first_failed_run_of_a_fresh_script_is_expected() {
        let fail = Outcome::exited(1);
        let ok = Outcome::success();
        let write = |file| Shot {
            writes: file,
            ..at(2)
        };
        let mut c = Counts::default();
        c.count(NO_PROGRESS, key(2), write(7), &ok, FailureKeys::default());
        let failures: Vec<u32> = (0..3)
            .map(|_| {
                c.count(NO_PROGRESS, key(1), run(7), &fail, failed_with(5))
                    .failures
            })
            .collect();
        assert_eq!(failures, [0, 0, 1], "expected, found, first retry");
        // Written again: fresh again.
        c.count(NO_PROGRESS, key(2), write(7), &ok, FailureKeys::default());
        assert_eq!(
            c.count(NO_PROGRESS, key(1), run(7), &fail, failed_with(5))
                .failures,
            1
        );
        assert_eq!(
            c.count(NO_PROGRESS, key(1), run(7), &fail, failed_with(5))
                .failures,
            2
        );
        // A script nobody wrote fails as any run does.
        let mut c = Counts::default();
        c.count(NO_PROGRESS, key(1), run(8), &fail, failed_with(5));
        assert_eq!(
            c.count(NO_PROGRESS, key(1), run(8), &fail, failed_with(5))
                .failures,
            1
        );
    }
}
