//! The keep rule against noise (`cargo xtask bench --package autoresearch`): an evaluator that
//! prints its true value plus N(0, 1) noise, simulated, with every keep/reject decided by the run
//! core's own rule (`stats::improves`, what `Run` calls). Per `repeats` (1 and 5): how often a
//! no-op candidate (same true value as the best) is kept, and how often a true 3 sigma
//! improvement is, over 100 rounds (the figure) and over 100,000 (the expected rate).
//! Each round measures a fresh baseline and one candidate `repeats` times each. The last line is
//! the figures as JSON.

use autoresearch_core::spec::Direction;
use autoresearch_core::stats;
use serde_json::json;

/// Rounds of the figure, and of the expected rate.
const ROUNDS: [u32; 2] = [100, 100_000];
/// The targets at repeats 5: no-op kept at most, 3 sigma kept at least.
const NO_OP_MAX: f64 = 0.05;
const IMPROVEMENT_MIN: f64 = 0.95;

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
    println!("{}", json!(figures));
}
