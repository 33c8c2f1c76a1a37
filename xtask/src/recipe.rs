//! `cargo xtask recipe-test`: dsh-autoresearch's Ray recipe (`packages/autoresearch/recipes/ray`)
//! run for real. Ray comes from PyPI, pinned, into a virtual environment in `.cache/ray`; the
//! recipe's test, `tests/support/ray-recipe.mjs`, then runs inside `unshare -n -p -f --mount-proc` (as root), so the
//! cluster reaches only loopback and dies with the namespace.

use crate::util::{self, cache_dir, rel};
use crate::{build, node, packages};
use anyhow::{Context, Result, bail, ensure};
use std::process::Command;

/// The Ray release the recipe is tested with.
const RAY_VERSION: &str = "2.60.0";

/// `cargo xtask recipe-test`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("unknown argument `{arg}`\nusage: cargo xtask recipe-test");
    }
    let package = packages::autoresearch();
    build::ensure_built(package)?;
    let node = node::ensure_node()?.join("node");
    let venv = cache_dir().join("ray");
    let bin = venv.join("bin");
    let installed = util::stdout_of(Command::new(bin.join("ray")).arg("--version"))
        .is_ok_and(|v| v.contains(RAY_VERSION));
    if !installed {
        println!(
            "recipe-test: installing ray[default]=={RAY_VERSION} from PyPI into {}",
            rel(&venv)
        );
        let python = util::which("python3").context("recipe-test needs python3 (with venv)")?;
        util::run(Command::new(python).args(["-m", "venv"]).arg(&venv))?;
        util::run(
            Command::new(bin.join("pip"))
                .args(["install", "--quiet", "--disable-pip-version-check"])
                .arg(format!("ray[default]=={RAY_VERSION}")),
        )?;
    }
    ensure!(
        util::which("unshare").is_some(),
        "recipe-test needs unshare (util-linux) to run the cluster in a private network"
    );
    util::run(
        Command::new("unshare")
            .args(["-n", "-p", "-f", "--mount-proc"])
            .arg(&node)
            .arg("tests/support/ray-recipe.mjs")
            .arg(&bin)
            .current_dir(package.dir()),
    )
}
