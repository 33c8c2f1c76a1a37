//! Alternative builds of the plugin for measurement and tests, never for shipping: a different
//! opt-level, cargo features, a kept name section, wasm-opt. Each variant is a directory holding
//! `pkg/` (wasm-bindgen output) and a copy of `lib/` (the real shim), so `<dir>/lib/index.js`
//! loads that variant's WebAssembly exactly as the shipped package loads its own.
//!
//! Variants build in their own cargo target directories (`target/variants/opt-<level>[-<features>]`),
//! so they never disturb the shipped `pkg/` or the main build cache.

use crate::build::{self, WASM_ARTIFACT, WASM_PACKAGE};
use crate::packages::Package;
use crate::util::{self, cargo_cmd, rel, root};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-unknown-unknown";

/// How to build one variant.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The release profile's opt-level for this build (`"s"`, `"z"`, `"3"`, …).
    pub opt_level: &'static str,
    /// Cargo features of the wasm crate besides the package's own.
    pub features: &'static [&'static str],
    /// Keep the wasm name section (function names in profiles).
    pub keep_names: bool,
    /// Arguments for binaryen's `wasm-opt` run on the bindgen output (e.g. `["-Oz"]`), if any.
    pub wasm_opt: Option<&'static [&'static str]>,
}

impl Variant {
    /// The shipped settings: opt-level "s", no features, names removed, no wasm-opt.
    pub const SHIPPED: Variant = Variant {
        opt_level: "s",
        features: &[],
        keep_names: false,
        wasm_opt: None,
    };
}

/// The generated wasm file inside a variant directory.
pub fn wasm_path(dir: &Path, package: &Package) -> PathBuf {
    dir.join("pkg")
        .join(format!("{}_bg.wasm", package.out_name))
}

/// Builds `variant` into `dir` (`dir/pkg` + `dir/lib`), replacing what was there.
pub fn build(variant: &Variant, package: &Package, dir: &Path) -> Result<()> {
    // One cargo target directory per opt-level and feature set: switching settings in a shared
    // one would rebuild every time, and concurrent variant builds would race for its artifact.
    let mut key = format!("{}-opt-{}", package.row, variant.opt_level);
    for feature in variant.features {
        key.push('-');
        key.push_str(feature);
    }
    let cargo_target = root().join("target").join("variants").join(key);
    let mut cmd = cargo_cmd([
        "build",
        "--release",
        "-p",
        WASM_PACKAGE,
        "--target",
        TARGET,
        "--no-default-features",
        "--target-dir",
    ]);
    cmd.arg(&cargo_target)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", variant.opt_level);
    let mut features = vec![package.feature];
    features.extend(variant.features);
    cmd.arg("--features").arg(features.join(","));
    util::run(&mut cmd)?;
    let wasm_in = cargo_target
        .join(TARGET)
        .join("release")
        .join(WASM_ARTIFACT);
    if !wasm_in.is_file() {
        bail!("cargo build succeeded but {} does not exist", rel(&wasm_in));
    }

    let pkg = dir.join("pkg");
    if pkg.exists() {
        std::fs::remove_dir_all(&pkg).with_context(|| format!("clearing {}", rel(&pkg)))?;
    }
    std::fs::create_dir_all(&pkg).with_context(|| format!("creating {}", rel(&pkg)))?;
    build::bindgen(package.out_name, &wasm_in, &pkg, variant.keep_names)?;

    if let Some(args) = variant.wasm_opt {
        let wasm = wasm_path(dir, package);
        let mut opt = wasm_opt_cmd()?;
        opt.args(args)
            // Rust enables these by default for wasm32-unknown-unknown; wasm-opt must keep them.
            .args([
                "--enable-bulk-memory",
                "--enable-mutable-globals",
                "--enable-nontrapping-float-to-int",
                "--enable-sign-ext",
                "--enable-reference-types",
                "--enable-multivalue",
            ])
            .arg(&wasm)
            .arg("-o")
            .arg(&wasm);
        util::run(&mut opt)?;
    }
    copy_lib(dir, package)
}

/// Copies the shim (`lib/*.js`) into `dir/lib`, so it imports `dir/pkg`.
pub fn copy_lib(dir: &Path, package: &Package) -> Result<()> {
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).with_context(|| format!("creating {}", rel(&lib)))?;
    for file in util::files_with_suffix(&package.dir().join("lib"), ".js")? {
        let to = lib.join(file.file_name().context("lib file name")?);
        std::fs::copy(&file, &to)
            .with_context(|| format!("copying {} to {}", rel(&file), rel(&to)))?;
    }
    build::copy_common(&lib)
}

/// The binaryen release whose `wasm-opt` the size study measures.
pub const BINARYEN_VERSION: &str = "132.0.0";

/// binaryen's `wasm-opt` from the npm package `binaryen` (a JS/WebAssembly build, no native
/// download), installed on demand into the gitignored `.cache/binaryen`. It is a measuring tool
/// for `cargo xtask bench --wasm-study`, not a dependency of the build (see README, Performance).
pub fn wasm_opt_cmd() -> Result<Command> {
    let prefix = crate::util::cache_dir().join("binaryen");
    let bin = prefix
        .join("node_modules")
        .join("binaryen")
        .join("bin")
        .join("wasm-opt");
    if !bin.is_file() {
        println!(
            "variant: installing binaryen@{BINARYEN_VERSION} into {}",
            rel(&prefix)
        );
        std::fs::create_dir_all(&prefix).with_context(|| format!("creating {}", rel(&prefix)))?;
        util::run(crate::node::npm().args([
            "install",
            "--prefix",
            &rel(&prefix),
            "--no-save",
            "--no-package-lock",
            "--ignore-scripts",
            &format!("binaryen@{BINARYEN_VERSION}"),
        ]))?;
        if !bin.is_file() {
            bail!("{} is missing after installing binaryen", rel(&bin));
        }
    }
    let node = crate::node::ensure_node()?;
    let mut cmd = Command::new(node.join("node"));
    cmd.arg(bin);
    Ok(cmd)
}
