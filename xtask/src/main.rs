//! `cargo xtask`: build, test and check the DSH plugin family's workspace and npm packages.
//!
//! Every tool and cache it installs lives under the gitignored `.cache/`.

mod bench;
mod build;
mod chart;
mod check_patch;
mod ci;
mod demo;
mod dsh;
mod editor;
mod extraction;
mod fault;
mod fuzz;
mod memory_bench;
mod node;
mod pack;
mod packages;
mod recipe;
mod schema;
mod smoke;
mod util;
mod variant;
mod vectors;

use std::process::ExitCode;

const COMMANDS: &[(&str, &str)] = &[
    (
        "build",
        "per package: the wasm crate (release, only that plugin) + wasm-bindgen into packages/<row>/pkg/",
    ),
    (
        "test-node",
        "build if needed, then run each package's tests/*.test.mjs on the pinned Node 24",
    ),
    (
        "vectors [--update]",
        "replay each package's vectors/ through its CLI on Node 24 (and system Node 20..23); --update rewrites the expectations that differ",
    ),
    (
        "schema [--check]",
        "write schema/*.json and every cordis.patch.yml from crates/config (--check: fail if stale)",
    ),
    (
        "check-patch [--dump] FILE... | --fixtures",
        "check DSH patch files (cordis.patch.yml) as DSH parses them and against the patch schema",
    ),
    (
        "pack",
        "per package: build if needed, npm pack into target/pack/, check the file allowlist and the manifest",
    ),
    (
        "release-smoke [--update-fixture]",
        "pack all, install dsh 0.1.0-rc.8 (.cache/dsh), add every package, run real turns on a mock model",
    ),
    (
        "scenario [NAME...] [--update-fixture]",
        "pack all, install dsh, run only the named xtask/scenarios/*.json turns (all without names), checking (or rewriting) their session fixtures",
    ),
    (
        "demo",
        "the plugins in the real dsh: turns against a scripted model, explained",
    ),
    (
        "bench [--package ROW] [--quick | --profile | --wasm-study]",
        "measure cost per tool event, failure sizes, cold start, size, memory; limit-break's memory at scale",
    ),
    (
        "recall-bench",
        "limit-break's recall set (crates/memory/recall): hit@1, hit@3, MRR per category",
    ),
    (
        "recipe-test",
        "dsh-autoresearch's Ray recipe on a local Ray cluster (pip installs Ray into .cache/ray) in a private network namespace",
    ),
    (
        "extraction",
        "limit-break's main-content extraction: WCXB dev by page type, ScrapingHub, Debian docs; ours, whole page, trafilatura, readability-lxml",
    ),
    (
        "chart-test [--write-example]",
        "research-nudge replay --html and dsh-autoresearch show --html in headless Chromium (apt-get installs it when missing): screenshots, checked",
    ),
    (
        "build-fault",
        "build the fault-injection variant (a panicking path) into target/pkg-fault/ for tests/panic",
    ),
    (
        "fuzz [--seconds N | --runs N] [TARGET...]",
        "run each cargo-fuzz target in fuzz/ (default 10 s each; installs cargo-fuzz into .cache/)",
    ),
    (
        "editor-test [--print FILE...]",
        "run yaml-language-server over cordis.patch.yml and xtask/fixtures/patch (--print: just show)",
    ),
    (
        "ci",
        "fmt, clippy, cargo test, schema --check, build, test-node, vectors, pack, release-smoke (what .ci/run runs)",
    ),
    ("help", "show this list"),
];

fn help() -> String {
    let width = COMMANDS.iter().map(|c| c.0.len()).max().unwrap_or(0);
    let mut text = String::from("usage: cargo xtask <command>\n\ncommands:\n");
    for (name, what) in COMMANDS {
        text.push_str(&format!("  {name:<width$}  {what}\n"));
    }
    text
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => {
            eprint!("{}", help());
            return ExitCode::from(2);
        }
    };
    let result = match command {
        "build" => build::run(rest),
        "test-node" => node::test_node(rest),
        "vectors" => vectors::run(rest),
        "schema" => schema::run(rest),
        "check-patch" => check_patch::run(rest),
        "editor-test" => editor::run(rest),
        "pack" => pack::run(rest),
        "release-smoke" => smoke::run(rest),
        "scenario" => test_support::scenario::run(rest, smoke::setup),
        "demo" => demo::run(rest),
        "bench" => bench::run(rest),
        "chart-test" => chart::run(rest),
        "recipe-test" => recipe::run(rest),
        "extraction" => extraction::run(rest),
        "recall-bench" => memory_bench::recall_bench(rest),
        "build-fault" => fault::run(rest),
        "fuzz" => fuzz::run(rest),
        "ci" => ci::run(rest),
        "help" | "-h" | "--help" => {
            print!("{}", help());
            Ok(())
        }
        other => {
            eprintln!("error: unknown command `{other}`\n");
            eprint!("{}", help());
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
