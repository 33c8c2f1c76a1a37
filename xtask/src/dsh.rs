//! The real DeepSeek Harness for `release-smoke` and `demo`: Node 24 (from [`node`]), pnpm 11
//! and `@deepseek-ai/dsh` with its Cordis pins, all under `.cache/dsh/`, and a command builder
//! that keeps every cache, config and state directory there too.
//!
//! The install inputs are committed in `xtask/dsh/` (a `package.json` naming dsh, a
//! `pnpm-workspace.yaml` with `nodeLinker: hoisted`, `strictDepBuilds: false` and the five
//! Cordis overrides, and the `pnpm-lock.yaml` they resolve to); `.cache/dsh/app/` is a copy of
//! them plus `node_modules`, installed with `--frozen-lockfile` and reused while it matches.

use crate::node;
use crate::util::{self, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
pub use test_support::toolchain::Toolchain;
use test_support::toolchain::dsh_dir;

/// The exact pnpm release (`dsh plugin` runs `pnpm` from PATH).
pub const PNPM_VERSION: &str = "11.28.11";
/// The dsh release the smoke runs against.
pub const DSH_VERSION: &str = "0.1.0-rc.8";
/// Every package's `engines.dsh`: from the release the smoke runs through the 0.2 line, whose
/// source the shims follow by feature detection (read, not run: the READMEs' "DSH versions").
/// DSH 0.2's plugin manager reads it as the update gate (`dsh.engines.dsh`, else `engines.dsh`).
pub const DSH_RANGE: &str = ">=0.1.0-rc.8 <0.3.0-0";
/// Cordis packages dsh 0.1.0-rc.8 must get these exact versions of (pnpm `overrides`).
pub const CORDIS_PINS: [(&str, &str); 5] = [
    ("@deepseek-ai/cordis", "4.0.1"),
    ("@deepseek-ai/cordis-plugin-loader", "1.0.2"),
    ("@deepseek-ai/cordis-plugin-hmr", "1.0.16"),
    ("@deepseek-ai/cordis-plugin-include", "1.0.6"),
    ("@deepseek-ai/cordis-plugin-timer", "1.1.3"),
];
/// The committed install inputs, copied into `.cache/dsh/app/`.
const INPUTS: [&str; 3] = ["package.json", "pnpm-workspace.yaml", "pnpm-lock.yaml"];
/// Written into `.cache/dsh/app/` after a complete install.
const STAMP: &str = ".research-nudge-installed";

/// Where dsh and its dependencies are installed (`.cache/dsh/app`).
pub fn app_dir() -> PathBuf {
    dsh_dir().join("app")
}

/// Installs (or reuses) Node 24, pnpm and dsh; prints what it does and how long it took.
pub fn ensure() -> Result<Toolchain> {
    let started = Instant::now();
    let node_bin = node::ensure_node()?;
    let pnpm_bin = ensure_pnpm(&node_bin)?;
    let toolchain = Toolchain::new(
        node_bin,
        pnpm_bin,
        app_dir()
            .join("node_modules")
            .join("@deepseek-ai")
            .join("dsh")
            .join("lib")
            .join("bin.js"),
    );
    ensure_dsh(&toolchain)?;
    println!(
        "dsh: toolchain ready in {:.1}s (node v{}, pnpm {PNPM_VERSION}, dsh {DSH_VERSION})",
        started.elapsed().as_secs_f64(),
        node::NODE_VERSION
    );
    Ok(toolchain)
}

/// pnpm from the npm registry into `.cache/dsh/pnpm`, with the system npm.
fn ensure_pnpm(node_bin: &Path) -> Result<PathBuf> {
    let prefix = dsh_dir().join("pnpm");
    let bin = prefix.join("node_modules").join(".bin");
    let manifest = prefix
        .join("node_modules")
        .join("pnpm")
        .join("package.json");
    if package_version(&manifest).as_deref() == Some(PNPM_VERSION) && bin.join("pnpm").is_file() {
        println!("pnpm: using {} ({PNPM_VERSION})", rel(&bin.join("pnpm")));
        return Ok(bin);
    }
    println!(
        "pnpm: installing pnpm@{PNPM_VERSION} into {} with the system npm",
        rel(&prefix)
    );
    std::fs::create_dir_all(&prefix).with_context(|| format!("creating {}", rel(&prefix)))?;
    util::run(node::npm().args([
        "install",
        "--prefix",
        &rel(&prefix),
        "--no-save",
        "--no-package-lock",
        "--ignore-scripts",
        "--loglevel=error",
        &format!("pnpm@{PNPM_VERSION}"),
    ]))?;
    // pnpm 11 needs a newer Node than the system one: ask it through Node 24.
    let mut version = Command::new(bin.join("pnpm"));
    version
        .arg("--version")
        .env("PATH", util::path_with_first(node_bin)?);
    let got = util::stdout_of(&mut version)?;
    if got.trim() != PNPM_VERSION {
        bail!(
            "{} reports {}, want {PNPM_VERSION}",
            rel(&bin.join("pnpm")),
            got.trim()
        );
    }
    println!("pnpm: installed {PNPM_VERSION}");
    Ok(bin)
}

/// `version` from a package.json, if it exists and has one.
fn package_version(manifest: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value["version"].as_str().map(str::to_owned)
}

/// Whether `.cache/dsh/app` holds a finished install of exactly the committed inputs.
fn app_is_current(toolchain: &Toolchain) -> bool {
    let app = app_dir();
    let inputs = root().join("xtask").join("dsh");
    let same_inputs = INPUTS.iter().all(|name| {
        matches!(
            (std::fs::read(inputs.join(name)), std::fs::read(app.join(name))),
            (Ok(a), Ok(b)) if a == b
        )
    });
    same_inputs
        && std::fs::read_to_string(app.join(STAMP)).is_ok_and(|s| s.trim() == PNPM_VERSION)
        && toolchain.dsh_js().is_file()
}

fn ensure_dsh(toolchain: &Toolchain) -> Result<()> {
    let app = app_dir();
    if app_is_current(toolchain) {
        println!("dsh: using {} (matches xtask/dsh/)", rel(&app));
    } else {
        println!(
            "dsh: installing @deepseek-ai/dsh@{DSH_VERSION} into {} with pnpm {PNPM_VERSION} (frozen xtask/dsh/pnpm-lock.yaml, hoisted, Cordis pinned)",
            rel(&app)
        );
        let started = Instant::now();
        std::fs::create_dir_all(&app).with_context(|| format!("creating {}", rel(&app)))?;
        let _ = std::fs::remove_file(app.join(STAMP));
        for name in INPUTS {
            let from = root().join("xtask").join("dsh").join(name);
            std::fs::copy(&from, app.join(name))
                .with_context(|| format!("copying {} into {}", rel(&from), rel(&app)))?;
        }
        let mut install = toolchain.command(&toolchain.pnpm());
        install.current_dir(&app).args([
            "install",
            "--frozen-lockfile",
            "--config.confirmModulesPurge=false",
        ]);
        util::run(&mut install).context("installing dsh with pnpm")?;
        std::fs::write(app.join(STAMP), format!("{PNPM_VERSION}\n"))?;
        println!("dsh: installed in {:.1}s", started.elapsed().as_secs_f64());
    }
    verify_pins()?;
    let mut version = toolchain.dsh(None);
    version.arg("--version");
    let got = util::stdout_of(&mut version)?;
    if got.trim() != DSH_VERSION {
        bail!("dsh --version says {}, want {DSH_VERSION}", got.trim());
    }
    Ok(())
}

/// dsh and every Cordis pin are installed at the exact versions (hoisted: one copy each).
fn verify_pins() -> Result<()> {
    let modules = app_dir().join("node_modules");
    let mut wanted = vec![("@deepseek-ai/dsh", DSH_VERSION)];
    wanted.extend(CORDIS_PINS);
    let mut wrong = Vec::new();
    for (package, version) in wanted {
        let got = package_version(&modules.join(package).join("package.json"));
        if got.as_deref() != Some(version) {
            wrong.push(format!(
                "{package}: want {version}, found {}",
                got.as_deref().unwrap_or("nothing")
            ));
        }
    }
    if !wrong.is_empty() {
        bail!(
            "{} does not hold the pinned versions ({}); delete .cache/dsh/app and rerun",
            rel(&modules),
            wrong.join("; ")
        );
    }
    println!(
        "dsh: {DSH_VERSION} with {} verified",
        CORDIS_PINS
            .iter()
            .map(|(p, v)| format!("{}@{v}", p.trim_start_matches("@deepseek-ai/")))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
