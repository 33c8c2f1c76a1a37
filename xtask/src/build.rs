//! `cargo xtask build`: the wasm crate, once per package with that package's feature, through
//! wasm-bindgen (as a library) into `packages/<row>/pkg/`.

use crate::packages::{self, Package};
use crate::util::{self, cargo_cmd, rel, root};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use wasm_bindgen_cli_support::Bindgen;

const TARGET: &str = "wasm32-unknown-unknown";
pub const WASM_PACKAGE: &str = "dsh-wasm-adapter";
/// The artifact cargo writes for [`WASM_PACKAGE`] (hyphens become underscores).
pub const WASM_ARTIFACT: &str = "dsh_wasm_adapter.wasm";

/// `cargo xtask build [--package ROW]...`.
pub fn run(args: &[String]) -> Result<()> {
    let (chosen, rest) = packages::selected(args)?;
    if let Some(arg) = rest.first() {
        bail!("`cargo xtask build` takes only --package ROW (got `{arg}`)");
    }
    chosen.into_iter().try_for_each(build)
}

/// Builds every package (the `build` step of `cargo xtask ci`).
pub fn build_all() -> Result<()> {
    packages::ALL.iter().try_for_each(build)
}

/// Copies `packages/shim-common/*.js` into the package's `lib/common/` (always: it is cheap and
/// must never be stale).
pub fn copy_common(lib_dir: &Path) -> Result<()> {
    let to = lib_dir.join("common");
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", rel(&to)))?;
    for file in util::files_with_suffix(&packages::shim_common_dir(), ".js")? {
        let target = to.join(file.file_name().context("shared module name")?);
        std::fs::copy(&file, &target)
            .with_context(|| format!("copying {} to {}", rel(&file), rel(&target)))?;
    }
    Ok(())
}

/// Builds `pkg/` unless it is newer than every input (crates, manifests, lockfile, xtask), and
/// refreshes `lib/common/`.
pub fn ensure_built(package: &Package) -> Result<()> {
    copy_common(&package.dir().join("lib"))?;
    let root = root();
    let outputs = package
        .all_glue()
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
            println!("build: {} is up to date", rel(&package.pkg_dir()));
            Ok(())
        }
        (None, _) => {
            println!("build: {} is missing; building", rel(&package.pkg_dir()));
            build(package)
        }
        _ => {
            println!(
                "build: {} is older than its sources; building",
                rel(&package.pkg_dir())
            );
            build(package)
        }
    }
}

/// Always builds: wasm target check, cargo build with only this package's plugin, wasm-bindgen,
/// sizes.
pub fn build(package: &Package) -> Result<()> {
    ensure_wasm_target()?;
    copy_common(&package.dir().join("lib"))?;

    let out_dir = package.pkg_dir();
    if out_dir.exists() {
        std::fs::remove_dir_all(&out_dir)
            .with_context(|| format!("clearing stale {}", rel(&out_dir)))?;
    }
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", rel(&out_dir)))?;
    let mut modules = vec![(package.feature, package.out_name)];
    if let Some(cli) = &package.cli {
        modules.push((cli.feature, cli.out_name));
    }
    for (feature, out_name) in modules {
        let started = Instant::now();
        util::run(&mut cargo_cmd([
            "build",
            "--release",
            "-p",
            WASM_PACKAGE,
            "--target",
            TARGET,
            "--no-default-features",
            "--features",
            feature,
        ]))?;
        let wasm_in = target_dir()?
            .join(TARGET)
            .join("release")
            .join(WASM_ARTIFACT);
        if !wasm_in.is_file() {
            bail!("cargo build succeeded but {} does not exist", rel(&wasm_in));
        }
        println!(
            "build: cargo build (feature {feature}) took {:.1}s",
            started.elapsed().as_secs_f64()
        );
        let started = Instant::now();
        println!(
            "build: wasm-bindgen (library; target web, out name {out_name}, no TypeScript) {} -> {}/",
            rel(&wasm_in),
            rel(&out_dir)
        );
        bindgen(out_name, &wasm_in, &out_dir, false)?;
        println!(
            "build: wasm-bindgen took {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }
    for file in package.all_glue() {
        if !file.is_file() {
            bail!("wasm-bindgen did not produce {}", rel(&file));
        }
    }
    if let Some(cli) = &package.cli {
        let cli_wasm = out_dir.join(format!("{}_bg.wasm", cli.out_name));
        let bytes = std::fs::read(&cli_wasm)?;
        println!(
            "build: {} (the CLI's) is {} bytes, {} bytes gzipped",
            rel(&cli_wasm),
            bytes.len(),
            gzip_len(&bytes)?
        );
    }

    let bytes = std::fs::read(package.glue_wasm())?;
    let gz = gzip_len(&bytes)?;
    println!(
        "build: {} is {} bytes ({:.1} KiB), {} bytes gzipped (-9, {:.1} KiB)",
        rel(&package.glue_wasm()),
        bytes.len(),
        bytes.len() as f64 / 1024.0,
        gz,
        gz as f64 / 1024.0
    );
    println!(
        "build: {} is {} bytes",
        rel(&package.glue_js()),
        std::fs::metadata(package.glue_js())?.len()
    );
    Ok(())
}

/// Runs wasm-bindgen (as a library) on `wasm_in` into `out_dir` with the shipped options;
/// `keep_names` keeps the name section (profiles of variants).
pub fn bindgen(out_name: &str, wasm_in: &Path, out_dir: &Path, keep_names: bool) -> Result<()> {
    // Notes on wasm-bindgen 0.2.130 options:
    // - weak refs: there is no switch any more; every exported class registers
    //   its wrapper with a FinalizationRegistry whenever the JS engine has one
    //   (free() still releases eagerly).
    // - reference types and multi-value: detected from the module's
    //   `target_features` section (`Bindgen::reference_types` is deprecated);
    //   rustc enables both by default for wasm32-unknown-unknown.
    Bindgen::new()
        .input_path(wasm_in)
        .out_name(out_name)
        .web(true)
        .context("selecting wasm-bindgen's `web` target")?
        .typescript(false)
        .remove_name_section(!keep_names)
        .remove_producers_section(true)
        .generate(out_dir)
        .map_err(|e| anyhow::anyhow!("wasm-bindgen failed on {}: {e:#}", rel(wasm_in)))
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
