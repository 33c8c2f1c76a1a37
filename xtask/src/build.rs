//! `cargo xtask build`: the wasm crate → `pkg/` through wasm-bindgen (as a library).

use crate::util::{self, cargo_cmd, rel, root};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use wasm_bindgen_cli_support::Bindgen;

const TARGET: &str = "wasm32-unknown-unknown";
const WASM_PACKAGE: &str = "research-nudge-wasm";
/// The artifact cargo writes for [`WASM_PACKAGE`] (hyphens become underscores).
const WASM_ARTIFACT: &str = "research_nudge_wasm.wasm";
/// wasm-bindgen's out name: `pkg/research_nudge.js` + `pkg/research_nudge_bg.wasm`.
const OUT_NAME: &str = "research_nudge";

/// The generated ES module glue.
pub fn glue_js() -> PathBuf {
    root().join("pkg").join(format!("{OUT_NAME}.js"))
}

/// The generated (post-bindgen) WebAssembly module.
pub fn glue_wasm() -> PathBuf {
    root().join("pkg").join(format!("{OUT_NAME}_bg.wasm"))
}

/// `cargo xtask build`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("`cargo xtask build` takes no arguments (got `{arg}`)");
    }
    build()
}

/// Builds `pkg/` unless it is newer than every input (crates, manifests, lockfile, xtask).
pub fn ensure_built() -> Result<()> {
    let root = root();
    let outputs = [glue_js(), glue_wasm()]
        .iter()
        .map(|p| util::mtime(p))
        .collect::<Option<Vec<_>>>()
        .and_then(|times| times.into_iter().min());
    let inputs = [
        util::newest_mtime(&root.join("crates")),
        util::mtime(&root.join("Cargo.toml")),
        util::mtime(&root.join("Cargo.lock")),
        std::env::current_exe()
            .ok()
            .and_then(|exe| util::mtime(&exe)),
    ]
    .into_iter()
    .flatten()
    .max();
    match (outputs, inputs) {
        (Some(out), Some(inp)) if out >= inp => {
            println!("build: pkg/ is up to date");
            Ok(())
        }
        (None, _) => {
            println!("build: pkg/ is missing; building");
            build()
        }
        _ => {
            println!("build: pkg/ is older than its sources; building");
            build()
        }
    }
}

/// Always builds: wasm target check, cargo build, wasm-bindgen, sizes.
pub fn build() -> Result<()> {
    ensure_wasm_target()?;

    let started = Instant::now();
    util::run(&mut cargo_cmd([
        "build",
        "--release",
        "-p",
        WASM_PACKAGE,
        "--target",
        TARGET,
    ]))?;
    let wasm_in = target_dir()?
        .join(TARGET)
        .join("release")
        .join(WASM_ARTIFACT);
    if !wasm_in.is_file() {
        bail!("cargo build succeeded but {} does not exist", rel(&wasm_in));
    }
    println!(
        "build: cargo build took {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let out_dir = root().join("pkg");
    if out_dir.exists() {
        std::fs::remove_dir_all(&out_dir)
            .with_context(|| format!("clearing stale {}", rel(&out_dir)))?;
    }
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", rel(&out_dir)))?;
    println!(
        "build: wasm-bindgen (library; target web, out name {OUT_NAME}, no TypeScript) {} -> {}/",
        rel(&wasm_in),
        rel(&out_dir)
    );
    // Notes on wasm-bindgen 0.2.130 options:
    // - weak refs: there is no switch any more; every exported class registers
    //   its wrapper with a FinalizationRegistry whenever the JS engine has one
    //   (free() still releases eagerly).
    // - reference types and multi-value: detected from the module's
    //   `target_features` section (`Bindgen::reference_types` is deprecated);
    //   rustc enables both by default for wasm32-unknown-unknown.
    Bindgen::new()
        .input_path(&wasm_in)
        .out_name(OUT_NAME)
        .web(true)
        .context("selecting wasm-bindgen's `web` target")?
        .typescript(false)
        .remove_name_section(true)
        .remove_producers_section(true)
        .generate(&out_dir)
        .map_err(|e| anyhow::anyhow!("wasm-bindgen failed on {}: {e:#}", rel(&wasm_in)))?;
    for file in [glue_js(), glue_wasm()] {
        if !file.is_file() {
            bail!("wasm-bindgen did not produce {}", rel(&file));
        }
    }
    println!(
        "build: wasm-bindgen took {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let bytes = std::fs::read(glue_wasm())?;
    let gz = gzip_len(&bytes)?;
    println!(
        "build: {} is {} bytes ({:.1} KiB), {} bytes gzipped (-9, {:.1} KiB)",
        rel(&glue_wasm()),
        bytes.len(),
        bytes.len() as f64 / 1024.0,
        gz,
        gz as f64 / 1024.0
    );
    println!(
        "build: {} is {} bytes",
        rel(&glue_js()),
        std::fs::metadata(glue_js())?.len()
    );
    Ok(())
}

/// Installs the wasm target through rustup when it is missing.
fn ensure_wasm_target() -> Result<()> {
    let mut list = Command::new("rustup");
    list.args(["target", "list", "--installed"]);
    let installed = match util::stdout_of(&mut list) {
        Ok(out) => out,
        Err(e) => {
            println!(
                "build: could not ask rustup for installed targets ({e:#}); assuming {TARGET} is there"
            );
            return Ok(());
        }
    };
    if installed.lines().any(|line| line.trim() == TARGET) {
        return Ok(());
    }
    println!("build: the {TARGET} target is not installed; adding it with rustup");
    util::run(Command::new("rustup").args(["target", "add", TARGET])).with_context(|| {
        format!(
            "could not add the {TARGET} target (rustup needs to reach the Rust distribution server)"
        )
    })
}

/// Cargo's target directory (respects `CARGO_TARGET_DIR` and `build.target-dir`).
fn target_dir() -> Result<PathBuf> {
    let json = util::stdout_of(&mut cargo_cmd([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ]))?;
    let meta: serde_json::Value = serde_json::from_str(&json).context("parsing cargo metadata")?;
    let dir = meta["target_directory"]
        .as_str()
        .context("cargo metadata has no target_directory")?;
    Ok(Path::new(dir).to_path_buf())
}

fn gzip_len(bytes: &[u8]) -> Result<usize> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?.len())
}
