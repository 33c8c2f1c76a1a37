//! `cargo xtask build-fault`: the fault-injection build of the plugin, for `tests/panic.test.mjs`.
//!
//! It is the shipped build plus the `fault-injection` cargo feature of the wasm crate, which adds
//! one panicking path (see the `fault-injection` feature in `crates/wasm-adapter`). It goes
//! to the gitignored `target/pkg-fault/` (`pkg/` and a copy of the real `lib/`), never to `pkg/`:
//! the shipped package contains no trace of it.

use crate::packages;
use crate::util::{self, rel, root};
use crate::variant::{self, Variant};
use anyhow::{Result, bail};
use std::path::PathBuf;

/// Where the fault-injection build goes.
pub fn dir() -> PathBuf {
    root().join("target").join("pkg-fault")
}

/// `cargo xtask build-fault`: rebuilds when the wasm crates, manifests or shim changed.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("`cargo xtask build-fault` takes no arguments (got `{arg}`)");
    }
    let dir = dir();
    let built = util::mtime(&variant::wasm_path(&dir, packages::research_nudge()));
    let root = root();
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
    match (built, inputs) {
        (Some(out), Some(newest)) if out >= newest => {
            // The shim is copied every time: it is cheap and must never be stale.
            variant::copy_lib(&dir, packages::research_nudge())?;
            println!("build-fault: {} is up to date", rel(&dir));
            Ok(())
        }
        _ => {
            let fault = Variant {
                features: &["fault-injection"],
                ..Variant::SHIPPED
            };
            variant::build(&fault, packages::research_nudge(), &dir)?;
            println!("build-fault: built {}", rel(&dir));
            Ok(())
        }
    }
}
