//! `cargo xtask fuzz`: builds the cargo-fuzz project in `fuzz/` and runs each libFuzzer target.
//!
//! cargo-fuzz is installed into the gitignored `.cache/cargo-fuzz` when missing (about 1.5 min
//! cold on 2 cores). libFuzzer needs nightly compiler flags: the `nightly` toolchain is used when
//! rustup has it; otherwise the default toolchain runs with `RUSTC_BOOTSTRAP=1`, which accepts
//! the same `-Z` flags, so a machine with only stable Rust can still fuzz.
//!
//! Targets are built with optimizations plus debug assertions and overflow checks (`-O -a`), so
//! arithmetic that is not saturating fails loudly, and without a sanitizer (`-s none`): every
//! crate under test is `#![forbid(unsafe_code)]`, so AddressSanitizer would only slow the search.
//! Each target runs in one process (one core). Corpora live in `fuzz/corpus/<target>` and crash
//! inputs in `fuzz/artifacts/<target>` (both gitignored); a summary goes to
//! `target/fuzz/summary.json`.

use crate::util::{self, cache_dir, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The libFuzzer targets in `fuzz/Cargo.toml`, in the order they run.
pub const TARGETS: &[&str] = &["config_validate", "fingerprint", "policy"];

/// The cargo-fuzz release installed into `.cache/cargo-fuzz`.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Seconds per target the CI smoke runs.
pub const CI_SECONDS: u64 = 10;

/// libFuzzer options per target. The fingerprint target builds its own long texts (repeating a
/// fuzzed pattern past both windows), so short inputs suffice and keep executions fast.
fn target_args(target: &str) -> &'static [&'static str] {
    match target {
        "fingerprint" => &["-max_len=1024"],
        _ => &[],
    }
}

/// The build flags shared by `build` and `run` (they must match, or `run` rebuilds).
const BUILD_FLAGS: &[&str] = &["-O", "-a", "-s", "none"];

/// How long to fuzz each target.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// Wall-clock seconds per target.
    Seconds(u64),
    /// Executions per target.
    Runs(u64),
}

struct Options {
    budget: Budget,
    targets: Vec<String>,
}

fn usage() -> String {
    format!(
        "usage: cargo xtask fuzz [--seconds N | --runs N] [TARGET...]\n\n  targets: {}\n  default: --seconds {CI_SECONDS} for every target",
        TARGETS.join(", ")
    )
}

fn parse(args: &[String]) -> Result<Options> {
    let mut budget = Budget::Seconds(CI_SECONDS);
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let number = |it: &mut std::slice::Iter<'_, String>, flag: &str| -> Result<u64> {
            let value = it
                .next()
                .with_context(|| format!("{flag} needs a number\n{}", usage()))?;
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .with_context(|| format!("{flag} needs a positive integer (got `{value}`)"))
        };
        match arg.as_str() {
            "--seconds" => budget = Budget::Seconds(number(&mut it, "--seconds")?),
            "--runs" => budget = Budget::Runs(number(&mut it, "--runs")?),
            "-h" | "--help" => bail!("{}", usage()),
            target if TARGETS.contains(&target) => targets.push(target.to_owned()),
            other => bail!("unknown argument `{other}`\n{}", usage()),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    Ok(Options { budget, targets })
}

/// `cargo xtask fuzz`.
pub fn run(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    fuzz(options.budget, &options.targets)
}

/// The CI smoke: every target for [`CI_SECONDS`].
pub fn smoke() -> Result<()> {
    let targets: Vec<String> = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    fuzz(Budget::Seconds(CI_SECONDS), &targets)
}

/// One target's result.
struct Outcome {
    target: String,
    executions: u64,
    seconds: f64,
    ok: bool,
    coverage: Option<u64>,
    corpus: Option<u64>,
}

fn fuzz(budget: Budget, targets: &[String]) -> Result<()> {
    let cargo_fuzz = ensure_cargo_fuzz()?;
    let toolchain = Toolchain::detect();
    println!("fuzz: {}", toolchain.describe());

    let started = Instant::now();
    util::run(
        toolchain
            .apply(&mut cargo_fuzz_cmd(&cargo_fuzz))
            .arg("build")
            .args(BUILD_FLAGS),
    )
    .context("building the fuzz targets")?;
    println!("fuzz: build took {:.1}s", started.elapsed().as_secs_f64());

    let log_dir = root().join("target").join("fuzz");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", rel(&log_dir)))?;
    let mut outcomes = Vec::new();
    for target in targets {
        outcomes.push(run_target(
            &cargo_fuzz,
            &toolchain,
            target,
            budget,
            &log_dir,
        )?);
    }

    println!("\nfuzz summary ({})", describe_budget(budget));
    println!(
        "  {:<16} {:>14} {:>8} {:>10} {:>6} {:>7}  result",
        "target", "executions", "seconds", "exec/s", "cov", "corpus"
    );
    for o in &outcomes {
        let rate = o.executions as f64 / o.seconds.max(1e-9);
        println!(
            "  {:<16} {:>14} {:>8.0} {:>10.0} {:>6} {:>7}  {}",
            o.target,
            o.executions,
            o.seconds,
            rate,
            o.coverage.map_or("-".into(), |c| c.to_string()),
            o.corpus.map_or("-".into(), |c| c.to_string()),
            if o.ok { "0 crashes" } else { "CRASHED" }
        );
    }
    let summary = json!({
        "budget": describe_budget(budget),
        "toolchain": toolchain.describe(),
        "flags": BUILD_FLAGS,
        "targets": outcomes.iter().map(|o| json!({
            "target": o.target,
            "executions": o.executions,
            "seconds": o.seconds,
            "crashed": !o.ok,
            "coverage": o.coverage,
            "corpus": o.corpus,
        })).collect::<Vec<_>>(),
    });
    let summary_path = log_dir.join("summary.json");
    std::fs::write(&summary_path, format!("{summary:#}\n"))
        .with_context(|| format!("writing {}", rel(&summary_path)))?;
    println!("fuzz: wrote {}", rel(&summary_path));

    let crashed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.ok)
        .map(|o| o.target.as_str())
        .collect();
    if !crashed.is_empty() {
        bail!(
            "fuzz target(s) crashed: {} (inputs in fuzz/artifacts/, logs in {})",
            crashed.join(", "),
            rel(&log_dir)
        );
    }
    Ok(())
}

fn describe_budget(budget: Budget) -> String {
    match budget {
        Budget::Seconds(s) => format!("{s} s per target"),
        Budget::Runs(n) => format!("{n} executions per target"),
    }
}

fn run_target(
    cargo_fuzz: &PathBuf,
    toolchain: &Toolchain,
    target: &str,
    budget: Budget,
    log_dir: &std::path::Path,
) -> Result<Outcome> {
    let corpus = root().join("fuzz").join("corpus").join(target);
    std::fs::create_dir_all(&corpus).with_context(|| format!("creating {}", rel(&corpus)))?;
    let limit = match budget {
        Budget::Seconds(s) => format!("-max_total_time={s}"),
        Budget::Runs(n) => format!("-runs={n}"),
    };
    let mut cmd = cargo_fuzz_cmd(cargo_fuzz);
    toolchain
        .apply(&mut cmd)
        .arg("run")
        .args(BUILD_FLAGS)
        .arg(target)
        .arg("--")
        .arg(limit)
        .args(target_args(target))
        .arg("-print_final_stats=1");
    println!("\n==> fuzz: {target} ({})", describe_budget(budget));
    println!("$ {}", util::display(&cmd));
    let log_path = log_dir.join(format!("{target}.log"));
    let mut log =
        std::fs::File::create(&log_path).with_context(|| format!("creating {}", rel(&log_path)))?;
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start `{}`", util::display(&cmd)))?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let mut executions = None;
    let mut coverage = None;
    let mut corpus_size = None;
    for line in BufReader::new(stderr).lines() {
        let line = line?;
        writeln!(log, "{line}")?;
        // Echo the interesting lines; the whole output is in the log.
        if line.contains("DONE")
            || line.contains("INITED")
            || line.starts_with("stat::")
            || line.contains("panicked")
            || line.contains("ERROR")
            || line.contains("SUMMARY")
            || line.starts_with("artifact_prefix")
            || line.contains("Test unit written")
            || line.starts_with("error")
        {
            eprintln!("{line}");
        }
        if let Some(n) = stat(&line, "stat::number_of_executed_units:") {
            executions = Some(n);
        }
        if line.contains("DONE") {
            coverage = field(&line, "cov:");
            corpus_size = line
                .split("corp:")
                .nth(1)
                .and_then(|rest| rest.trim().split('/').next())
                .and_then(|n| n.parse().ok());
        }
    }
    let status = child.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let ok = status.success();
    let executions = executions.unwrap_or(0);
    println!(
        "==> fuzz: {target}: {} after {executions} executions in {seconds:.0}s (log {})",
        if ok { "ok" } else { "CRASHED" },
        rel(&log_path)
    );
    Ok(Outcome {
        target: target.to_owned(),
        executions,
        seconds,
        ok,
        coverage,
        corpus: corpus_size,
    })
}

fn stat(line: &str, key: &str) -> Option<u64> {
    line.strip_prefix(key)?.trim().parse().ok()
}

fn field(line: &str, key: &str) -> Option<u64> {
    line.split(key)
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn cargo_fuzz_cmd(cargo_fuzz: &PathBuf) -> Command {
    let mut cmd = Command::new(cargo_fuzz);
    // cargo-fuzz is invoked as the `fuzz` subcommand of cargo.
    cmd.arg("fuzz").current_dir(root().join("fuzz"));
    cmd
}

/// Makes sure `.cache/cargo-fuzz/bin/cargo-fuzz` is [`CARGO_FUZZ_VERSION`]; returns its path.
fn ensure_cargo_fuzz() -> Result<PathBuf> {
    let prefix = cache_dir().join("cargo-fuzz");
    let bin = prefix.join("bin").join("cargo-fuzz");
    if bin.is_file()
        && let Ok(v) = util::stdout_of(Command::new(&bin).arg("--version"))
        && v.split_whitespace().nth(1) == Some(CARGO_FUZZ_VERSION)
    {
        println!("fuzz: using {} ({})", rel(&bin), v.trim());
        return Ok(bin);
    }
    println!(
        "fuzz: installing cargo-fuzz {CARGO_FUZZ_VERSION} into {} (about 1.5 min cold)",
        rel(&prefix)
    );
    let started = Instant::now();
    util::run(&mut util::cargo_cmd([
        "install",
        "--locked",
        "--root",
        &prefix.display().to_string(),
        "--version",
        CARGO_FUZZ_VERSION,
        "cargo-fuzz",
    ]))
    .context("installing cargo-fuzz")?;
    println!(
        "fuzz: cargo-fuzz installed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(bin)
}

/// Which compiler builds the fuzz targets.
enum Toolchain {
    /// rustup's `nightly` toolchain.
    Nightly,
    /// The default toolchain with `RUSTC_BOOTSTRAP=1`.
    Bootstrap,
}

impl Toolchain {
    fn detect() -> Self {
        let nightly = util::stdout_of(Command::new("rustc").args(["+nightly", "--version"]));
        match nightly {
            Ok(v) if v.contains("nightly") => Toolchain::Nightly,
            _ => Toolchain::Bootstrap,
        }
    }

    fn describe(&self) -> String {
        match self {
            Toolchain::Nightly => "building with the nightly toolchain".into(),
            Toolchain::Bootstrap => {
                "no nightly toolchain; building with the default one and RUSTC_BOOTSTRAP=1".into()
            }
        }
    }

    fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        // The xtask itself runs under `cargo`, whose RUSTUP_TOOLCHAIN would otherwise pin the
        // nested cargo to the same (stable) toolchain.
        match self {
            Toolchain::Nightly => cmd.env("RUSTUP_TOOLCHAIN", "nightly"),
            Toolchain::Bootstrap => cmd.env("RUSTC_BOOTSTRAP", "1"),
        }
    }
}
