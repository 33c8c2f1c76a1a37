//! The keep rule for repeated evaluations (`repeats`): a candidate's samples against the best's,
//! and the summaries (mean, spread, n) the result and the TSV report.
//!
//! With one sample on either side the rule is the original's: a strict improvement of the value.
//! With two or more on both sides it is Welch's one-sided t-test at [`SIGNIFICANCE`]: keep only
//! when the mean gain is in the wanted direction and a gain that large would arise by chance
//! (equal true means, unequal variances allowed) less than 2.5 % of the time ([`improves`]).
//!
//! # Screen, then confirm
//!
//! [`improves`] holds its level per candidate. A generation of K candidates that keeps the best of
//! those passing it does not: K no-ops get K chances. And the kept candidate's mean is optimistic,
//! since it was kept because its samples came out well. The generation rule splits the two jobs:
//!
//! 1. **Screen** ([`screen`]): each candidate is measured one sample at a time, at most `repeats`,
//!    against the bar (the best's samples). After each sample the pooled t statistic of its gain
//!    decides: below [`SCREEN_DROP`] it is dropped (clearly not better), above [`SCREEN_STOP`] it
//!    is promising at once; at `repeats` samples it is promising above [`SCREEN_PASS`]. No error
//!    level is claimed here: screening only chooses.
//! 2. **Confirm** ([`confirm`]): the promising candidate with the best screening mean, and only
//!    that one, is measured again, `repeats` fresh samples, and kept when Welch's one-sided test on
//!    the fresh samples against the bar passes at [`SIGNIFICANCE`] (a confirmation whose running
//!    mean is not better after two samples stops early: rejecting sooner never raises the level).
//!
//! One fresh test per generation, on samples the choice never saw, so a generation of no-ops is
//! kept with chance at most [`SIGNIFICANCE`] whatever K is; and the confirmation's samples are the
//! kept candidate's reported metric and the next bar, so the winner's curse does not raise it.
//! With `repeats` 1 the original's single-sample rule applies and nothing is screened.

use crate::spec::Direction;

/// One-sided level of the keep rule: the candidate is kept when the lower end of the two-sided
/// 95 % confidence interval of its gain is above zero.
pub const SIGNIFICANCE: f64 = 0.025;

/// Screening drops a candidate whose pooled t of its gain falls below this (clearly not better).
pub const SCREEN_DROP: f64 = 0.8;
/// Screening stops measuring a candidate whose pooled t rises above this (clearly better).
pub const SCREEN_STOP: f64 = 2.5;
/// At `repeats` samples a candidate is promising when its pooled t is above this.
pub const SCREEN_PASS: f64 = 1.0;

/// What screening makes of a candidate after its latest sample ([`screen`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screened {
    /// Measure it once more.
    Measure,
    /// Not better: drop it.
    Dropped,
    /// A contender for the generation's one confirmation.
    Promising,
}

/// Screens a candidate's samples so far against the bar (see the module docs). `repeats` is the
/// most samples a candidate gets; the bar needs two samples or more.
pub fn screen(direction: Direction, candidate: &[f64], bar: &[f64], repeats: usize) -> Screened {
    let t = pooled_t(direction, candidate, bar);
    if candidate.len() >= repeats {
        return if t > SCREEN_PASS {
            Screened::Promising
        } else {
            Screened::Dropped
        };
    }
    if t < SCREEN_DROP {
        Screened::Dropped
    } else if t > SCREEN_STOP {
        Screened::Promising
    } else {
        Screened::Measure
    }
}

/// What the confirmation makes of the chosen candidate after its latest fresh sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmed {
    /// Measure it once more.
    Measure,
    /// Not confirmed: nothing is kept this generation.
    Rejected,
    /// Confirmed: keep it; its fresh samples are the new bar.
    Kept,
}

/// Confirms the chosen candidate's fresh samples against the bar (see the module docs).
pub fn confirm(direction: Direction, fresh: &[f64], bar: &[f64], repeats: usize) -> Confirmed {
    if fresh.len() >= repeats {
        return if improves(direction, fresh, bar) {
            Confirmed::Kept
        } else {
            Confirmed::Rejected
        };
    }
    if fresh.len() >= 2 && !direction.improves(mean(fresh), mean(bar)) {
        Confirmed::Rejected
    } else {
        Confirmed::Measure
    }
}

/// Which measurement an evaluation of a candidate is (stored with its attempt).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A screening sample (or, under the single-test rule, one of its `repeats`).
    Select,
    /// A fresh sample of the generation's chosen candidate.
    Confirm,
    /// Not a sample of the keep rule: the holdout evaluator's, on the baseline or a kept
    /// candidate ([`judge`] never asks for one).
    Holdout,
}

/// Where a candidate stands on its samples so far ([`judge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Measure it once more, for this purpose.
    Measure(Purpose),
    /// Screened and promising: it waits to be chosen for its generation's confirmation.
    Promising,
    /// Kept: confirmed, or improving under the single-test rule.
    Kept,
    /// Not kept: dropped by screening, not confirmed, or not improving.
    Rejected,
}

/// Whether the screen-then-confirm rule applies: `repeats` 2 or more and a bar of two samples
/// or more (a best stored by an earlier version, or the original's `repeats` 1, has one). Else
/// the candidate gets its `repeats` samples and one test, [`improves`].
pub fn sequential(bar: &[f64], repeats: usize) -> bool {
    repeats >= 2 && bar.len() >= 2
}

/// The one keep rule, applied to a candidate's screening samples (`selection`), its fresh
/// confirmation samples (`fresh`) and the bar: what to measure next, or the verdict.
pub fn judge(
    direction: Direction,
    selection: &[f64],
    fresh: &[f64],
    bar: &[f64],
    repeats: usize,
) -> Standing {
    if !sequential(bar, repeats) {
        return if selection.len() < repeats {
            Standing::Measure(Purpose::Select)
        } else if improves(direction, selection, bar) {
            Standing::Kept
        } else {
            Standing::Rejected
        };
    }
    if !fresh.is_empty() {
        return match confirm(direction, fresh, bar, repeats) {
            Confirmed::Measure => Standing::Measure(Purpose::Confirm),
            Confirmed::Kept => Standing::Kept,
            Confirmed::Rejected => Standing::Rejected,
        };
    }
    match screen(direction, selection, bar, repeats) {
        Screened::Measure => Standing::Measure(Purpose::Select),
        Screened::Promising => Standing::Promising,
        Screened::Dropped => Standing::Rejected,
    }
}

/// The gain of `candidate` over `bar` in `direction` over its standard error, with one variance
/// pooled from both (the same evaluator on the same machine); 0 when neither has a spread.
fn pooled_t(direction: Direction, candidate: &[f64], bar: &[f64]) -> f64 {
    let (mc, mb) = (mean(candidate), mean(bar));
    let gain = if direction.improves(mc, mb) {
        (mc - mb).abs()
    } else {
        -(mc - mb).abs()
    };
    let squares = |xs: &[f64], m: f64| xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>();
    let df = (candidate.len() + bar.len()).saturating_sub(2);
    if df == 0 {
        return 0.0;
    }
    let pooled = (squares(candidate, mc) + squares(bar, mb)) / df as f64;
    let se = (pooled * (1.0 / candidate.len() as f64 + 1.0 / bar.len() as f64)).sqrt();
    if se == 0.0 {
        return if gain > 0.0 { f64::INFINITY } else { 0.0 };
    }
    gain / se
}

/// The mean of `samples` (NaN for none).
pub fn mean(samples: &[f64]) -> f64 {
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// The sample standard deviation (n - 1 in the denominator); `None` below two samples.
pub fn stddev(samples: &[f64]) -> Option<f64> {
    if samples.len() < 2 {
        return None;
    }
    let m = mean(samples);
    let ss: f64 = samples.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (samples.len() - 1) as f64).sqrt())
}

/// Whether `candidate`'s samples improve on `best`'s in `direction` (see the module docs).
pub fn improves(direction: Direction, candidate: &[f64], best: &[f64]) -> bool {
    let (mc, mb) = (mean(candidate), mean(best));
    if !direction.improves(mc, mb) {
        return false;
    }
    let (Some(sc), Some(sb)) = (stddev(candidate), stddev(best)) else {
        return true;
    };
    let vc = sc * sc / candidate.len() as f64;
    let vb = sb * sb / best.len() as f64;
    let se = (vc + vb).sqrt();
    if se == 0.0 {
        // Both sides are exact: any gain is real.
        return true;
    }
    let t = (mc - mb).abs() / se;
    let df = (vc + vb).powi(2)
        / (vc * vc / (candidate.len() - 1) as f64 + vb * vb / (best.len() - 1) as f64);
    student_t_upper_tail(t, df) < SIGNIFICANCE
}

/// P(T > t) for Student's t with `df` degrees of freedom, `t >= 0`.
pub fn student_t_upper_tail(t: f64, df: f64) -> f64 {
    0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// I_x(a, b), by its continued fraction (Lentz), on the side where it converges fast.
fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - qab * x / qap);
    let mut h = d;
    for m in 1..=300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    use std::f64::consts::PI;
    if x < 0.5 {
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |acc, (i, g)| acc + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_tail_matches_known_quantiles() {
        // Cauchy (df 1): P(T > 1) = 1/4; t(8) 0.975 quantile 2.306; t(30) 0.99 quantile 2.457.
        assert!((student_t_upper_tail(1.0, 1.0) - 0.25).abs() < 1e-9);
        assert!((student_t_upper_tail(2.306, 8.0) - 0.025).abs() < 2e-4);
        assert!((student_t_upper_tail(2.457, 30.0) - 0.01).abs() < 2e-4);
        assert!((student_t_upper_tail(0.0, 5.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn screening_drops_the_worse_stops_the_clearly_better_and_decides_at_repeats() {
        let bar = [10.0, 11.0, 9.0, 10.5, 9.5];
        let min = Direction::Minimize;
        assert_eq!(screen(min, &[11.0], &bar, 5), Screened::Dropped);
        assert_eq!(screen(min, &[9.0], &bar, 5), Screened::Measure);
        assert_eq!(screen(min, &[6.0, 6.5], &bar, 5), Screened::Promising);
        assert_eq!(
            screen(Direction::Maximize, &[6.0, 6.5], &bar, 5),
            Screened::Dropped
        );
        assert_eq!(
            screen(min, &[9.0, 9.5, 8.8, 9.4, 9.1], &bar, 5),
            Screened::Promising
        );
        assert_eq!(
            screen(min, &[9.9, 10.1, 9.8, 10.2, 9.9], &bar, 5),
            Screened::Dropped
        );
    }

    #[test]
    fn confirmation_is_welch_on_fresh_samples_and_rejects_early_when_not_better() {
        let bar = [10.0, 11.0, 9.0, 10.5, 9.5];
        let min = Direction::Minimize;
        assert_eq!(confirm(min, &[8.0], &bar, 5), Confirmed::Measure);
        assert_eq!(confirm(min, &[10.5, 10.4], &bar, 5), Confirmed::Rejected);
        assert_eq!(
            confirm(min, &[8.0, 9.0, 7.0, 8.5, 7.5], &bar, 5),
            Confirmed::Kept
        );
        assert_eq!(
            confirm(min, &[9.8, 10.8, 8.8, 10.3, 9.3], &bar, 5),
            Confirmed::Rejected
        );
    }

    #[test]
    fn single_samples_keep_the_strict_rule() {
        assert!(improves(Direction::Minimize, &[9.9], &[10.0]));
        assert!(!improves(Direction::Minimize, &[10.0], &[10.0]));
        assert!(improves(Direction::Maximize, &[10.1], &[10.0]));
    }

    #[test]
    fn repeated_samples_need_a_significant_gain() {
        let best = [10.0, 11.0, 9.0, 10.5, 9.5];
        // A mean gain of 0.2 with a spread near 0.8 is noise; 2 is not.
        assert!(!improves(
            Direction::Minimize,
            &[9.8, 10.8, 8.8, 10.3, 9.3],
            &best
        ));
        assert!(improves(
            Direction::Minimize,
            &[8.0, 9.0, 7.0, 8.5, 7.5],
            &best
        ));
        assert!(!improves(
            Direction::Maximize,
            &[8.0, 9.0, 7.0, 8.5, 7.5],
            &best
        ));
        // Exact on both sides: any gain counts, a tie does not.
        assert!(improves(Direction::Minimize, &[9.0, 9.0], &[10.0, 10.0]));
        assert!(!improves(Direction::Minimize, &[10.0, 10.0], &[10.0, 10.0]));
        assert_eq!(stddev(&[1.0]), None);
        assert_eq!(stddev(&[1.0, 3.0]), Some(2f64.sqrt()));
    }
}
