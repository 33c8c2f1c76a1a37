//! The npm packages of the family: where each lives and what its build is called.
//!
//! Row ids, package names and defaults come from `crates/config` ([`config::ROWS`]; a test checks
//! this table holds exactly its rows, in its order); this table adds only what the build needs:
//! the folder under `packages/`, the wasm-adapter feature that selects the plugin, the
//! wasm-bindgen out name and the CLI commands the package ships.

use crate::util::root;
use anyhow::{Result, bail};
use std::path::PathBuf;

/// One npm package of the family.
#[derive(Debug)]
pub struct Package {
    /// The row id DSH mounts it under, also its folder under `packages/`.
    pub row: &'static str,
    /// The npm package name.
    pub npm: &'static str,
    /// The `crates/wasm-adapter` feature that compiles in only this plugin.
    pub feature: &'static str,
    /// wasm-bindgen's out name: `pkg/<out>.js` + `pkg/<out>_bg.wasm`.
    pub out_name: &'static str,
    /// The `bin` commands of its package.json, each `bin/<command>.js`.
    pub bins: &'static [&'static str],
    /// Files it ships besides the common ones, its glue, bins and schemas (e.g. `lib/driver.js`).
    pub extra_files: &'static [&'static str],
    /// A second module for the package's CLI, when it needs code the plugin does not (its
    /// wasm-adapter feature and wasm-bindgen out name): the plugin's module stays small.
    pub cli: Option<Cli>,
}

/// A package's CLI module: `pkg/<out>.js` + `pkg/<out>_bg.wasm`, built with its own feature.
#[derive(Debug)]
pub struct Cli {
    /// The `crates/wasm-adapter` feature of the CLI's module.
    pub feature: &'static str,
    /// wasm-bindgen's out name.
    pub out_name: &'static str,
}

/// Every package, in the order they are built, packed and mounted: [`config::ROWS`]'s order.
pub const ALL: &[Package] = &[
    Package {
        row: config::research_nudge::ROW_ID,
        npm: config::research_nudge::PACKAGE_NAME,
        feature: "research-nudge",
        out_name: "research_nudge",
        bins: &["research-nudge"],
        cli: Some(Cli {
            feature: "research-nudge-replay",
            out_name: "research_nudge_cli",
        }),
        extra_files: &[],
    },
    Package {
        row: config::pain_point_check::ROW_ID,
        npm: config::pain_point_check::PACKAGE_NAME,
        feature: "pain-point-check",
        out_name: "pain_point_check",
        bins: &["pain-point-check"],
        cli: None,
        extra_files: &[],
    },
    Package {
        row: config::autoresearch::ROW_ID,
        npm: config::autoresearch::PACKAGE_NAME,
        feature: "autoresearch",
        out_name: "autoresearch",
        bins: &["dsh-autoresearch"],
        extra_files: &[
            "lib/contain.js",
            "lib/driver.js",
            "lib/dsh-runner.js",
            "lib/git.js",
            "lib/process.js",
            "lib/original.js",
            "lib/round.js",
            "lib/tracker.js",
        ],
        cli: None,
    },
    Package {
        row: config::limit_break::ROW_ID,
        npm: config::limit_break::PACKAGE_NAME,
        feature: "limit-break",
        out_name: "limit_break",
        bins: &["limit-break"],
        extra_files: &["lib/memory.js", "lib/fetch.js"],
        cli: None,
    },
];

impl Package {
    /// `packages/<row>/`.
    pub fn dir(&self) -> PathBuf {
        root().join("packages").join(self.row)
    }

    /// The build output folder, `packages/<row>/pkg/` (gitignored).
    pub fn pkg_dir(&self) -> PathBuf {
        self.dir().join("pkg")
    }

    /// The generated ES module glue.
    pub fn glue_js(&self) -> PathBuf {
        self.pkg_dir().join(format!("{}.js", self.out_name))
    }

    /// The generated (post-bindgen) WebAssembly module.
    pub fn glue_wasm(&self) -> PathBuf {
        self.pkg_dir().join(format!("{}_bg.wasm", self.out_name))
    }

    /// Every generated file of `pkg/`: the plugin's glue and module, then the CLI's, if any.
    pub fn all_glue(&self) -> Vec<PathBuf> {
        let mut files = vec![self.glue_js(), self.glue_wasm()];
        if let Some(cli) = &self.cli {
            files.push(self.pkg_dir().join(format!("{}.js", cli.out_name)));
            files.push(self.pkg_dir().join(format!("{}_bg.wasm", cli.out_name)));
        }
        files
    }

    /// The package's `tests/` folder of `node --test` suites.
    pub fn tests_dir(&self) -> PathBuf {
        self.dir().join("tests")
    }
}

/// `packages/shim-common/`: the JS modules every shim shares, copied into each package.
pub fn shim_common_dir() -> PathBuf {
    root().join("packages").join("shim-common")
}

/// The package whose row id is `row`.
pub fn by_row(row: &str) -> Result<&'static Package> {
    match ALL.iter().find(|p| p.row == row) {
        Some(p) => Ok(p),
        None => bail!(
            "no package `{row}` (the packages are: {})",
            ALL.iter().map(|p| p.row).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// Packages named on a command line (`--package ROW`, repeatable), or all of them.
pub fn selected(args: &[String]) -> Result<(Vec<&'static Package>, Vec<String>)> {
    let mut chosen = Vec::new();
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--package" || arg == "-p" {
            let Some(row) = it.next() else {
                bail!("{arg} needs a package (one of: {})", rows().join(", "));
            };
            chosen.push(by_row(row)?);
        } else {
            rest.push(arg.clone());
        }
    }
    if chosen.is_empty() {
        chosen = ALL.iter().collect();
    }
    Ok((chosen, rest))
}

fn rows() -> Vec<&'static str> {
    ALL.iter().map(|p| p.row).collect()
}

/// dsh-research-nudge, whose fault-injection build, bench and wasm study are its own.
pub fn research_nudge() -> &'static Package {
    &ALL[0]
}

/// dsh-autoresearch, whose run picture `chart-test` checks.
pub fn autoresearch() -> &'static Package {
    by_row("autoresearch").expect("autoresearch is one of the packages")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packages_are_config_rows_in_their_order() {
        let packages: Vec<(&str, &str)> = ALL.iter().map(|p| (p.row, p.npm)).collect();
        let rows: Vec<(&str, &str)> = config::ROWS.iter().map(|r| (r.id, r.package)).collect();
        assert_eq!(
            packages, rows,
            "xtask/src/packages.rs must list crates/config's ROWS"
        );
        for package in ALL {
            assert!(
                package.dir().join("package.json").is_file(),
                "{}",
                package.row
            );
        }
    }
}
