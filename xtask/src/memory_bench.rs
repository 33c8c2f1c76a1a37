//! limit-break's memory figures: `cargo xtask recall-bench` (the labelled recall set, per
//! category) and the memory section of `cargo xtask bench` (native scale timings from the core's
//! `scale` example, then the shipped driver and WebAssembly core on Node 24), each figure with its
//! target and ratio. Measurements, never timed unit tests.

use crate::util::{self, cargo_cmd};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The memory core's package name.
const MEMORY_CRATE: &str = "limit-break-memory";

/// Runs an example of `package` in release mode and returns its stdout.
pub fn example(package: &str, name: &str) -> Result<String> {
    let mut cmd = cargo_cmd([
        "run",
        "--quiet",
        "--release",
        "-p",
        package,
        "--example",
        name,
    ]);
    println!("$ {}", util::display(&cmd));
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("running the {name} example"))?;
    if !out.status.success() {
        bail!("the {name} example failed ({})", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `cargo xtask recall-bench`: hit@1, hit@3 and MRR per category over `crates/memory/recall/`,
/// with and without the concept table, and every question not ranked first.
pub fn recall_bench(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("`cargo xtask recall-bench` takes no arguments (got `{arg}`)");
    }
    print!("{}", example(MEMORY_CRATE, "recall_bench")?);
    Ok(())
}

/// The `ratio` lines of the scale example: `(what, median ms, target ms, ratio)`.
fn scale_ratios(text: &str) -> Vec<Value> {
    let mut size = "";
    let mut out = Vec::new();
    for line in text.lines() {
        if line.ends_with(" MB") && line.contains(" facts, store ") {
            size = line.split(',').next().unwrap_or_default();
            continue;
        }
        let Some((what, rest)) = line.split_once(" median ") else {
            continue;
        };
        let number = |key: &str| -> Option<f64> {
            let after = rest.split(key).nth(1)?;
            after.split_whitespace().next()?.parse().ok()
        };
        let median = rest
            .split_whitespace()
            .next()
            .and_then(|m| m.parse::<f64>().ok());
        if let (Some(median), Some(target), Some(ratio)) =
            (median, number("target "), number("ratio "))
        {
            out.push(json!({
                "store": size,
                "what": what.trim(),
                "median_ms": median,
                "target_ms": target,
                "ratio": ratio,
            }));
        }
    }
    out
}

/// The memory section of `cargo xtask bench`; `node_bench` runs a `bench/` script on Node 24.
pub fn bench(node_bench: impl Fn(&str, &[&str]) -> Result<Value>) -> Result<Value> {
    println!("\n==> bench: limit-break memory, native (crates/memory/examples/scale.rs)");
    let scale = example(MEMORY_CRATE, "scale")?;
    print!("{scale}");
    println!("\n==> bench: limit-break memory through the driver and the .wasm (Node 24)");
    let node = node_bench("limit-break-memory.mjs", &[])?;
    let native = scale_ratios(&scale);
    println!("\nlimit-break memory: figures against targets (ratio < 1 meets the target)");
    for row in &native {
        println!(
            "  native {:<10} {:<44} {:>9.3} ms  target {:>5} ms  ratio {:.2}",
            row["store"].as_str().unwrap_or_default(),
            row["what"].as_str().unwrap_or_default(),
            row["median_ms"].as_f64().unwrap_or(f64::NAN),
            row["target_ms"],
            row["ratio"].as_f64().unwrap_or(f64::NAN),
        );
    }
    // Each row of the Node bench's table: [what, ms, target ms or null, ratio or null].
    for (facts, row) in node.as_object().into_iter().flatten() {
        for line in row["table"].as_array().into_iter().flatten() {
            let target = match (line[2].as_f64(), line[3].as_f64()) {
                (Some(t), Some(r)) => format!("  target {t:>5} ms  ratio {r:.2}"),
                _ => String::new(),
            };
            println!(
                "  wasm   {:<10} {:<44} {:>9.3} ms{target}",
                format!("{facts} facts"),
                line[0].as_str().unwrap_or_default(),
                line[1].as_f64().unwrap_or(f64::NAN),
            );
        }
    }
    Ok(json!({ "native": native, "native_output": scale, "node": node }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_lines_are_read_with_their_store() {
        let text = "\n10000 facts, store 6.5 MB\nparse store text                             median     5.527 ms  p95     6.507 ms\nwarm search, limit 5                         median     0.743 ms  p95     4.974 ms  target     5 ms  ratio 0.149\n";
        let rows = scale_ratios(text);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["store"], "10000 facts");
        assert_eq!(rows[0]["what"], "warm search, limit 5");
        assert_eq!(rows[0]["median_ms"], 0.743);
        assert_eq!(rows[0]["target_ms"], 5.0);
        assert_eq!(rows[0]["ratio"], 0.149);
    }
}
