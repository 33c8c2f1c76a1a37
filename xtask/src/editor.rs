//! `cargo xtask editor-test [--print FILE...]`: the patch schema in a real editor engine.
//!
//! Runs `yaml-language-server --stdio` (the npm devDependency: the server behind VS Code's YAML
//! extension and most LSP editors' YAML support) on the pinned Node 24 and talks LSP JSON-RPC to
//! it the way an editor does: `initialize`, answers the server's `workspace/configuration` pull
//! with the settings the README recommends (`yaml.customTags` =
//! `["tag:yaml.org,2002:js scalar:object"]`, no schema store), `didOpen` each file, and collects `textDocument/publishDiagnostics`. Each file finds
//! the schema through its own `# yaml-language-server: $schema=…` modeline, as a profile's patch
//! file would.
//!
//! The files are the bundle's `cordis.patch.yml` (no diagnostics allowed) and the fixtures in
//! `xtask/fixtures/patch/`, whose `# expect-ls: <part of the message>` comments name the
//! diagnostics expected on their lines (none for `good-*.yml`). `--print` only shows what the
//! server reports for the given files.

use crate::check_patch::{self, expectations_of_fixture, mismatches};
use crate::node::{ensure_node, ensure_node_modules};
use crate::schema;
use crate::util::rel;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::time::Instant;
use test_support::yaml_ls::Server;

/// `cargo xtask editor-test [--print FILE...]`.
pub fn run(args: &[String]) -> Result<()> {
    let print_only = match args.split_first() {
        None => None,
        Some((flag, files)) if flag == "--print" && !files.is_empty() => Some(files),
        Some(_) => bail!("usage: cargo xtask editor-test [--print FILE...]"),
    };
    let files: Vec<PathBuf> = match print_only {
        Some(files) => files.iter().map(PathBuf::from).collect(),
        None => {
            // The family patch: its modeline resolves in the repository (a package's patch points at the
            // `schema/` its tarball carries).
            let mut files = vec![schema::family_patch()];
            files.extend(check_patch::fixtures()?);
            files
        }
    };

    let started = Instant::now();
    let bin = ensure_node()?;
    ensure_node_modules()?;
    let setup = started.elapsed();

    let mut server = Server::start(&bin.join("node"))?;
    let result = server.diagnose(&files);
    let timings = server.timings.clone();
    server.stop();
    let (version, reports) = result?;
    println!(
        "editor-test: yaml-language-server {version} on Node from {}: setup {:.1}s, start+initialize {:.1}s, settings {:.1}s, diagnostics for {} file(s) {:.1}s",
        rel(&bin),
        setup.as_secs_f64(),
        timings.initialize.as_secs_f64(),
        timings.configure.as_secs_f64(),
        files.len(),
        timings.diagnose.as_secs_f64(),
    );

    let mut failures = Vec::new();
    for (path, diagnostics) in files.iter().zip(&reports) {
        let got: Vec<(usize, String)> = diagnostics
            .iter()
            .map(|d| (d.line, d.message.clone()))
            .collect();
        let problems = match print_only {
            Some(_) => Vec::new(),
            None => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", rel(path)))?;
                let expected = expectations_of_fixture(path, &text, "ls")?;
                mismatches(&expected, &got)
            }
        };
        println!(
            "editor-test: {}: {} diagnostic(s){}",
            rel(path),
            got.len(),
            if problems.is_empty() {
                ""
            } else {
                " — MISMATCH"
            }
        );
        for d in diagnostics {
            println!("  {}:{}: {} [{}]", d.line, d.col, d.message, d.source);
        }
        for problem in problems {
            failures.push(format!("{}: {problem}", rel(path)));
        }
    }
    if !failures.is_empty() {
        bail!(
            "yaml-language-server diagnostics do not match the fixtures:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}
