//! `cargo xtask ci`: every check, in order, stopping at the first failure.

use crate::util::{self, cargo_cmd};
use crate::{build, chart, check_patch, editor, fuzz, node, pack, recipe, schema, smoke, vectors};
use anyhow::{Result, bail};
use std::process::Command;
use std::time::Instant;

type Step = (&'static str, Box<dyn Fn() -> Result<()>>);

fn cargo_step(args: &'static [&'static str]) -> Box<dyn Fn() -> Result<()>> {
    Box::new(move || util::run(&mut cargo_cmd(args)))
}

/// `cargo xtask ci`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("`cargo xtask ci` takes no arguments (got `{arg}`)");
    }
    let steps: Vec<Step> = vec![
        ("rust components", Box::new(ensure_components)),
        ("fmt", cargo_step(&["fmt", "--all", "--", "--check"])),
        (
            "clippy",
            cargo_step(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        ("cargo test", cargo_step(&["test", "--workspace"])),
        (
            "schema --check",
            Box::new(|| schema::run(&["--check".into()])),
        ),
        ("check-patch", Box::new(check_patch::ci)),
        ("editor-test", Box::new(|| editor::run(&[]))),
        ("build", Box::new(build::build_all)),
        ("test-node", Box::new(|| node::test_node(&[]))),
        ("vectors", Box::new(|| vectors::run(&[]))),
        ("chart-test", Box::new(|| chart::run(&[]))),
        ("recipe-test", Box::new(|| recipe::run(&[]))),
        ("pack", Box::new(|| pack::run(&[]))),
        ("release-smoke", Box::new(|| smoke::run(&[]))),
        // Each cargo-fuzz target for fuzz::CI_SECONDS (cold machine: ~1.5 min to install
        // cargo-fuzz, ~1.5 min to build the targets).
        ("fuzz smoke", Box::new(fuzz::smoke)),
    ];

    let total = Instant::now();
    let mut results: Vec<(&str, &str, f64)> = Vec::new();
    let mut failure = None;
    for (name, step) in &steps {
        println!("\n==> ci: {name}");
        let started = Instant::now();
        let outcome = step();
        let secs = started.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => {
                println!("==> ci: {name}: ok ({secs:.1}s)");
                results.push((name, "ok", secs));
            }
            Err(e) => {
                println!("==> ci: {name}: FAILED ({secs:.1}s)");
                results.push((name, "FAILED", secs));
                failure = Some((*name, e));
                break;
            }
        }
    }
    for (name, _) in steps.iter().skip(results.len()) {
        results.push((name, "not run", 0.0));
    }

    let width = results.iter().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    println!("\nci summary");
    println!("  {:<width$}  {:<7}  {:>8}", "step", "result", "seconds");
    for (name, status, secs) in &results {
        let secs = if *status == "not run" {
            "-".to_string()
        } else {
            format!("{secs:.1}")
        };
        println!("  {name:<width$}  {status:<7}  {secs:>8}");
    }
    println!(
        "  {:<width$}  {:<7}  {:>8.1}",
        "total",
        "",
        total.elapsed().as_secs_f64()
    );

    match failure {
        Some((name, e)) => Err(e.context(format!("ci step `{name}` failed"))),
        None => Ok(()),
    }
}

/// Adds rustfmt and clippy through rustup when the toolchain lacks them.
fn ensure_components() -> Result<()> {
    let installed = match util::stdout_of(Command::new("rustup").args([
        "component",
        "list",
        "--installed",
    ])) {
        Ok(out) => out,
        Err(e) => {
            println!(
                "could not ask rustup for installed components ({e:#}); assuming rustfmt and clippy are there"
            );
            return Ok(());
        }
    };
    let missing: Vec<&str> = ["rustfmt", "clippy"]
        .into_iter()
        .filter(|c| !installed.lines().any(|l| l.starts_with(&format!("{c}-"))))
        .collect();
    if missing.is_empty() {
        println!("rustfmt and clippy are installed");
        return Ok(());
    }
    println!("adding missing rustup component(s): {}", missing.join(", "));
    util::run(
        Command::new("rustup")
            .args(["component", "add"])
            .args(&missing),
    )
}
