//! The keep rule against noise (`cargo xtask bench --package autoresearch`): an evaluator that
//! prints its true value plus N(0, 1) noise, simulated, with every keep/reject decided by the run
//! core's own functions (`stats::improves`, the single-test rule). Per `repeats` (1 and 5): how often a
//! no-op candidate (same true value as the best) is kept, and how often a true 3 sigma
//! improvement is, over 100 rounds (the figure) and over 100,000 (the expected rate).
//! Each round measures a fresh baseline and one candidate `repeats` times each.
//!
//! Then whole generations of K candidates (K = 1, 2, 4, 8 and 16, the most a row allows, `repeats` 5, [`GENERATIONS`] each):
//! today's rule (every candidate measured `repeats` times, the best of those passing
//! `stats::improves` kept) against the generation rule (`stats::judge`, what `Run` calls: screen each
//! candidate, then confirm the best promising one on fresh samples). Per K: how often a generation of K
//! no-ops keeps one, how often a generation of one true 3 sigma gain and K - 1 no-ops keeps the
//! gain, and the evaluations per candidate on a mix of no-ops, 1 sigma and 3 sigma gains (a third
//! each; the confirmation's evaluations included). The last line is the figures as JSON.

use autoresearch_core::spec::Direction;
use autoresearch_core::stats;
use serde_json::json;

/// Rounds of the figure, and of the expected rate.
const ROUNDS: [u32; 2] = [100, 100_000];
/// The targets at repeats 5: no-op kept at most, 3 sigma kept at least.
const NO_OP_MAX: f64 = 0.05;
const IMPROVEMENT_MIN: f64 = 0.95;
/// Generations simulated per K and rule.
const GENERATIONS: u32 = 100_000;
/// The generation rule's targets: a no-op generation kept at most (every K), a 3 sigma gain kept
/// at least (K = 4), evaluations per candidate on the mix at most (share of fixed `repeats`, K = 4).
const GENERATION_NO_OP_MAX: f64 = 0.025;
const GENERATION_GAIN_MIN: f64 = 0.90;
const MIX_EVALUATIONS_MAX: f64 = 0.60;

/// splitmix64: a fixed seed gives the same figures on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// N(0, 1) by Box-Muller.
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    fn samples(&mut self, truth: f64, n: u32) -> Vec<f64> {
        (0..n).map(|_| truth + self.normal()).collect()
    }
}

/// The share of `rounds` in which a candidate `gain` sigma better (minimize) was kept.
fn kept_rate(rng: &mut Rng, repeats: u32, gain: f64, rounds: u32) -> f64 {
    let kept = (0..rounds)
        .filter(|_| {
            let best = rng.samples(10.0, repeats);
            let candidate = rng.samples(10.0 - gain, repeats);
            stats::improves(Direction::Minimize, &candidate, &best)
        })
        .count();
    kept as f64 / f64::from(rounds)
}

/// Repeats of the generation study.
const REPEATS: usize = 5;

/// Which keep rule a generation runs.
#[derive(Clone, Copy)]
enum Rule {
    /// Today's: `repeats` samples each, the best of those passing `stats::improves`.
    BestOfPassing,
    /// Screen, then confirm the best promising candidate on fresh samples.
    ScreenThenConfirm,
}

/// One generation of candidates with the given true values (minimize; the best's is 10) under
/// `rule`: the index kept, if any, and the evaluations spent.
fn generation(rng: &mut Rng, truths: &[f64], rule: Rule) -> (Option<usize>, usize) {
    let min = Direction::Minimize;
    let bar: Vec<f64> = rng.samples(10.0, REPEATS as u32);
    let mut evaluations = 0;
    let mut chosen: Option<(usize, Vec<f64>, f64)> = None;
    for (i, &truth) in truths.iter().enumerate() {
        let mut samples = Vec::new();
        let passed = loop {
            samples.push(truth + rng.normal());
            match rule {
                Rule::BestOfPassing if samples.len() == REPEATS => {
                    break stats::improves(min, &samples, &bar);
                }
                Rule::BestOfPassing => {}
                Rule::ScreenThenConfirm => match stats::judge(min, &samples, &[], &bar, REPEATS) {
                    stats::Standing::Measure(_) => {}
                    stats::Standing::Promising | stats::Standing::Kept => break true,
                    stats::Standing::Rejected => break false,
                },
            }
        };
        evaluations += samples.len();
        let m = stats::mean(&samples);
        if passed && chosen.as_ref().is_none_or(|(_, _, best)| m < *best) {
            chosen = Some((i, samples, m));
        }
    }
    let Some((i, samples, _)) = chosen else {
        return (None, evaluations);
    };
    if let Rule::BestOfPassing = rule {
        return (Some(i), evaluations);
    }
    let mut fresh = Vec::new();
    loop {
        fresh.push(truths[i] + rng.normal());
        match stats::judge(min, &samples, &fresh, &bar, REPEATS) {
            stats::Standing::Measure(_) => {}
            stats::Standing::Kept => return (Some(i), evaluations + fresh.len()),
            stats::Standing::Promising | stats::Standing::Rejected => {
                return (None, evaluations + fresh.len());
            }
        }
    }
}

/// Per K: (no-op generation kept, 3 sigma gain kept, evaluations per candidate on the mix).
fn generation_study(rule: Rule, k: usize) -> (f64, f64, f64) {
    let mut rng = Rng(0x9e4e_0000 + k as u64);
    let (mut no_op, mut gain, mut evaluations) = (0u32, 0u32, 0usize);
    for g in 0..GENERATIONS as usize {
        if generation(&mut rng, &vec![10.0; k], rule).0.is_some() {
            no_op += 1;
        }
        let mut truths = vec![10.0; k];
        truths[0] = 7.0;
        if generation(&mut rng, &truths, rule).0 == Some(0) {
            gain += 1;
        }
        let mix: Vec<f64> = (0..k)
            .map(|j| 10.0 - [0.0, 1.0, 3.0][(g * k + j) % 3])
            .collect();
        evaluations += generation(&mut rng, &mix, rule).1;
    }
    let n = f64::from(GENERATIONS);
    (
        f64::from(no_op) / n,
        f64::from(gain) / n,
        evaluations as f64 / (n * k as f64),
    )
}

fn main() {
    let mut figures = Vec::new();
    println!("autoresearch keep rule, evaluator = true value + N(0, 1), Welch one-sided 2.5 %");
    for repeats in [1, 5] {
        for rounds in ROUNDS {
            let mut rng = Rng(0x5eed_0000 + u64::from(repeats));
            let no_op = kept_rate(&mut rng, repeats, 0.0, rounds);
            let improvement = kept_rate(&mut rng, repeats, 3.0, rounds);
            let verdict = if repeats == 1 {
                "(for comparison)".to_owned()
            } else {
                let ok = no_op <= NO_OP_MAX && improvement >= IMPROVEMENT_MIN;
                format!(
                    "targets no-op <= {:.0} %, 3 sigma >= {:.0} %: {}",
                    NO_OP_MAX * 100.0,
                    IMPROVEMENT_MIN * 100.0,
                    if ok { "met" } else { "MISSED" }
                )
            };
            println!(
                "  repeats {repeats}  {rounds:>6} rounds  no-op kept {:>5.1} %  3 sigma kept {:>5.1} %  {verdict}",
                no_op * 100.0,
                improvement * 100.0
            );
            figures.push(
                json!({"repeats": repeats, "rounds": rounds, "no_op_kept": no_op,
                "improvement_kept": improvement}),
            );
        }
    }
    println!(
        "\nper generation, repeats {REPEATS}, {GENERATIONS} generations per K: no-op generation kept / \
         3 sigma gain kept / evaluations per candidate on the mix (share of {REPEATS})"
    );
    let mut generations = Vec::new();
    for k in [1, 2, 4, 8, 16] {
        let today = generation_study(Rule::BestOfPassing, k);
        let new = generation_study(Rule::ScreenThenConfirm, k);
        let share = new.2 / REPEATS as f64;
        let ok = new.0 <= GENERATION_NO_OP_MAX
            && (k != 4 || (new.1 >= GENERATION_GAIN_MIN && share <= MIX_EVALUATIONS_MAX));
        println!(
            "  K {k}  best of passing {:>5.2} % / {:>5.1} % / {:.2}   screen then confirm {:>5.2} % / {:>5.1} % / {:.2} ({:.0} %)  {}",
            today.0 * 100.0,
            today.1 * 100.0,
            today.2,
            new.0 * 100.0,
            new.1 * 100.0,
            new.2,
            share * 100.0,
            if ok { "met" } else { "MISSED" }
        );
        generations.push(json!({"k": k,
            "best_of_passing": {"no_op_kept": today.0, "gain_kept": today.1, "evaluations": today.2},
            "screen_then_confirm": {"no_op_kept": new.0, "gain_kept": new.1, "evaluations": new.2}}));
    }
    println!(
        "  targets: no-op generation kept <= {:.1} % at every K; at K 4 a 3 sigma gain kept >= {:.0} % and evaluations <= {:.0} % of {REPEATS}",
        GENERATION_NO_OP_MAX * 100.0,
        GENERATION_GAIN_MIN * 100.0,
        MIX_EVALUATIONS_MAX * 100.0
    );
    println!("{}", json!({"single": figures, "generations": generations}));
}
