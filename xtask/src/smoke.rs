//! `cargo xtask release-smoke`: the packed family in the real dsh, end to end.
//!
//! 1. pack (build + npm pack + checks), then Node 24, pnpm and dsh with its Cordis pins
//!    ([`crate::dsh`]);
//! 2. a throwaway `DSH_HOME` in `target/release-smoke/home`: `dsh plugin --profile headless add
//!    <tarball>` for every package, and `--dump-config` must show each `# == <package>` layer
//!    with every default (steps 1 and 2 are the shared [`setup`]);
//! 3. every `xtask/scenarios/*.json` turn against the scripted model, with its expectations
//!    ([`crate::scenario`]); a scenario's `session_fixture` is checked, and rewritten with
//!    `--update-fixture`.

use crate::harness::{Timings, setup};
use anyhow::{Result, bail};

/// `cargo xtask release-smoke [--update-fixture]`.
pub fn run(args: &[String]) -> Result<()> {
    let mut update = false;
    for arg in args {
        match arg.as_str() {
            "--update-fixture" => update = true,
            other => {
                bail!("`cargo xtask release-smoke` takes only --update-fixture (got `{other}`)")
            }
        }
    }
    let mut t = Timings::default();
    let h = setup("release-smoke", &mut t)?;
    let mut report: Vec<String> = h
        .layers
        .iter()
        .map(|layer| format!("layer seen: `{layer}` with every default"))
        .collect();
    let scenarios = crate::scenario::run_all(&h, &mut t, update)?;
    let count = scenarios.iter().filter(|l| !l.starts_with(' ')).count();
    report.extend(scenarios);

    println!("\nrelease-smoke report");
    for line in &report {
        println!("  {line}");
    }
    println!("  scenarios run: {count}");
    println!("\nseconds per step");
    print!("{}", t.table());
    Ok(())
}
