//! `cargo xtask vectors`: builds each package, finds the Nodes to run on (the pinned Node 24, and
//! the system Node when it is 20..=23 and the package's `engines` allows it), and hands them to
//! [`test_support::vectors`], whose docs say what a vector is.

use crate::packages::{self, Package};
use crate::util;
use crate::{build, node};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use test_support::util::rel;

/// `cargo xtask vectors [--update] [--package ROW]...`.
pub fn run(args: &[String]) -> Result<()> {
    let (chosen, rest) = packages::selected(args)?;
    let mut update = false;
    for arg in rest {
        match arg.as_str() {
            "--update" => update = true,
            _ => bail!("`cargo xtask vectors` takes only --update and --package ROW (got `{arg}`)"),
        }
    }
    let mut changed = Vec::new();
    let mut result = Ok(());
    for package in chosen {
        let dir = package.dir().join("vectors");
        if dir.is_dir() {
            if let Err(e) = run_package(package, &dir, update, &mut changed) {
                result = Err(e);
                break;
            }
        } else {
            println!("vectors: {} has no vectors/", package.npm);
        }
    }
    if update {
        if changed.is_empty() {
            println!("vectors --update: no expectation changed");
        } else {
            println!(
                "vectors --update: {} expectation file(s) rewritten:",
                changed.len()
            );
            for file in &changed {
                println!("  {file}");
            }
        }
    }
    result
}

fn run_package(
    package: &Package,
    dir: &std::path::Path,
    update: bool,
    changed: &mut Vec<String>,
) -> Result<()> {
    build::ensure_built(package)?;
    let node24 = node::ensure_node()?.join("node");
    let mut nodes = vec![(node24, format!("node v{}", node::NODE_VERSION))];
    match system_node() {
        Ok(Some((path, version))) => match engines_floor(package)? {
            Some(floor) if util::node_major(&version).is_some_and(|major| major < floor) => {
                println!(
                    "vectors: {} needs Node {floor} or newer (package.json engines); skipping the system node {version} run",
                    package.npm
                );
            }
            _ => nodes.push((path, format!("system node {version}"))),
        },
        Ok(None) => {}
        Err(e) => println!("vectors: {e:#}"),
    }
    let cli = package
        .dir()
        .join("bin")
        .join(format!("{}.js", package.bins[0]));
    test_support::vectors::run(package.npm, dir, &cli, nodes, update, changed)
}

/// The system `node` on PATH when its major version is 20..=23.
fn system_node() -> Result<Option<(PathBuf, String)>> {
    let Some(path) = util::which("node") else {
        println!("vectors: no system `node` on PATH; skipping the Node 20 run");
        return Ok(None);
    };
    let version = util::stdout_of(Command::new(&path).arg("--version"))
        .with_context(|| format!("asking {} for its version", path.display()))?;
    let version = version.trim().to_string();
    match util::node_major(&version) {
        Some(20..=23) => Ok(Some((path, version))),
        _ => {
            println!(
                "vectors: system node at {} is {version}, not 20..=23; skipping the Node 20 run",
                path.display()
            );
            Ok(None)
        }
    }
}

/// The lowest Node major that the package's `engines.node` names (`>=20` → 20,
/// `^22.13.0 || >=24.0.0` → 22), if it names one.
fn engines_floor(package: &Package) -> Result<Option<u32>> {
    let file = package.dir().join("package.json");
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", rel(&file)))?;
    let manifest: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", rel(&file)))?;
    let Some(range) = manifest.pointer("/engines/node").and_then(Value::as_str) else {
        return Ok(None);
    };
    Ok(range
        .split("||")
        .filter_map(|part| {
            let digits: String = part
                .trim_start_matches(|c: char| !c.is_ascii_digit())
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .min())
}
