//! The keep rule for repeated evaluations (`repeats`): a candidate's samples against the best's,
//! and the summaries (mean, spread, n) the result and the TSV report.
//!
//! With one sample on either side the rule is the original's: a strict improvement of the value.
//! With two or more on both sides it is Welch's one-sided t-test at [`SIGNIFICANCE`]: keep only
//! when the mean gain is in the wanted direction and a gain that large would arise by chance
//! (equal true means, unequal variances allowed) less than 2.5 % of the time.

use crate::spec::Direction;

/// One-sided level of the keep rule: the candidate is kept when the lower end of the two-sided
/// 95 % confidence interval of its gain is above zero.
pub const SIGNIFICANCE: f64 = 0.025;

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
