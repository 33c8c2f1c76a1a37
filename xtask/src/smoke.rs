//! `cargo xtask release-smoke`: the packed family in the real dsh, end to end.
//!
//! 1. pack (build + npm pack + checks), then Node 24, pnpm and dsh with its Cordis pins
//!    ([`crate::dsh`]);
//! 2. a throwaway `DSH_HOME` in `target/release-smoke/home`: `dsh plugin --profile headless add
//!    <tarball>` for every package, and `--dump-config` must show each `# == <package>` layer
//!    with every default (steps 1 and 2 are the shared [`setup`], over
//!    [`test_support::harness`]);
//! 3. every `xtask/scenarios/*.json` turn against the scripted model, with its expectations
//!    ([`test_support::scenario`]); a scenario's `session_fixture` is checked, and rewritten with
//!    `--update-fixture`.

use crate::packages;
use crate::{dsh, pack, schema};
use anyhow::{Result, bail};
use test_support::harness::{self, Harness, Plugin, Timings};

/// Packs every package and installs the toolchain, then makes `target/<name>/`'s fresh
/// `DSH_HOME` with every package added and its `--dump-config` checked.
pub fn setup(name: &str, timings: &mut Timings) -> Result<Harness> {
    let packed = timings.step("pack (build + npm pack + checks)", pack::pack_all)?;
    let toolchain = timings.step("toolchain (node 24, pnpm, dsh + Cordis pins)", dsh::ensure)?;
    let plugins = packages::ALL
        .iter()
        .zip(packed)
        .map(|(package, packed)| Plugin {
            row: package.row,
            name: packed.name,
            tarball: packed.tarball,
            unpacked: pack::unpacked_dir(package),
            patch_file: package.dir().join(schema::PATCH_FILE),
            wasm: format!("pkg/{}_bg.wasm", package.out_name),
            bins: package.bins,
        })
        .collect();
    harness::setup(name, timings, toolchain, plugins)
}

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
    let scenarios = test_support::scenario::run_all(&h, &mut t, update)?;
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
