//! `cargo xtask vectors`: each package's conformance vectors (`packages/<row>/vectors/`) replayed
//! through its CLI (`packages/<row>/bin/<command>.js replay`).
//!
//! Layout in a package's `vectors/`:
//! - `NAME.jsonl` + `NAME.expected.jsonl` (+ optional `NAME.config.json`): the
//!   replay must exit 0 and print, line for line, JSON values equal to the
//!   expected file's (blank lines are ignored on both sides).
//! - `NAME.exit2.jsonl` + `NAME.stderr.txt` (+ optional `NAME.exit2.config.json`
//!   or `NAME.config.json`): the replay must exit with code 2 and its stderr
//!   must contain the text of `NAME.stderr.txt` (surrounding whitespace
//!   trimmed; `NAME.exit2.stderr.txt` is accepted too).
//!
//! Session-log vectors in `vectors/sessions/` (DSH session logs, run through
//! the same CLI):
//! - `NAME.jsonl`, `NAME.jsonl.zstd` (DSH's default encoding) or
//!   `NAME.jsonl.gz`, with `NAME.expected.txt` (the default timeline, compared
//!   exactly) and/or `NAME.expected.jsonl` (the `--json` output, compared as
//!   JSON values), + optional `NAME.config.json`. Every encoding of `NAME` is
//!   checked against the same expectations.
//! - `NAME.exit2.jsonl` + `NAME.stderr.txt`: exit 2, as above.
//!
//! On a Node whose `node:zlib` has no Zstandard (before 22.15), a `.zstd`
//! vector must instead exit 2 with the CLI's "needs a newer Node" message.
//! After a fixture changes, regenerate its expectations on Node 24 with
//! `node bin/research-nudge.js replay FILE > NAME.expected.txt` and
//! `node bin/research-nudge.js replay --json FILE > NAME.expected.jsonl`,
//! and review the diff.
//!
//! Every vector runs on the pinned Node 24, then again on the system `node`
//! when that is Node 20..=23, to prove the CLI runs on the oldest supported Node.

use crate::build;
use crate::node;
use crate::packages::{self, Package};
use crate::util::{self, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

enum Expect {
    /// Exit 0 with this stdout (JSON lines, compared as values).
    Stdout(PathBuf),
    /// Exit 0 with exactly the text of this file on stdout.
    Text(PathBuf),
    /// Exit 2 with stderr containing the text of this file.
    Exit2(PathBuf),
}

struct Vector {
    input: PathBuf,
    config: Option<PathBuf>,
    /// Extra CLI arguments (`--json`).
    args: Vec<&'static str>,
    expect: Expect,
}

impl Vector {
    /// A Zstandard-compressed input, which needs `node:zlib` Zstandard support.
    fn zstd(&self) -> bool {
        self.input.to_string_lossy().ends_with(".zstd")
    }

    fn label(&self) -> String {
        let mut label = rel(&self.input);
        for arg in &self.args {
            label.push(' ');
            label.push_str(arg);
        }
        label
    }
}

/// What stderr says when the running Node cannot decompress Zstandard.
const NO_ZSTD: &str = "cannot decompress it: run this on Node 22.15 or newer";

/// A Node to run the vectors on.
struct Runtime {
    node: PathBuf,
    label: String,
    zstd: bool,
}

/// `cargo xtask vectors [--package ROW]...`.
pub fn run(args: &[String]) -> Result<()> {
    let (chosen, rest) = packages::selected(args)?;
    if let Some(arg) = rest.first() {
        bail!("`cargo xtask vectors` takes only --package ROW (got `{arg}`)");
    }
    for package in chosen {
        let dir = package.dir().join("vectors");
        if dir.is_dir() {
            run_package(package, &dir)?;
        } else {
            println!("vectors: {} has no vectors/", package.npm);
        }
    }
    Ok(())
}

fn run_package(package: &Package, dir: &Path) -> Result<()> {
    let mut vectors = discover(dir)?;
    let sessions = dir.join("sessions");
    if sessions.is_dir() {
        vectors.extend(discover_sessions(&sessions)?);
    }
    if vectors.is_empty() {
        println!("vectors: no vectors in vectors/ yet; nothing to run");
        return Ok(());
    }
    let cli = package
        .dir()
        .join("bin")
        .join(format!("{}.js", package.bins[0]));
    if !cli.is_file() {
        bail!(
            "{} vector(s) in vectors/ but {} does not exist",
            vectors.len(),
            rel(&cli)
        );
    }

    build::ensure_built(package)?;
    let node24 = node::ensure_node()?.join("node");

    let mut runtimes = vec![(node24, format!("node v{}", node::NODE_VERSION))];
    match system_node() {
        Ok(Some((path, version))) => runtimes.push((path, format!("system node {version}"))),
        Ok(None) => {}
        Err(e) => println!("vectors: {e:#}"),
    }
    let runtimes: Vec<Runtime> = runtimes
        .into_iter()
        .map(|(node, label)| Runtime {
            zstd: has_zstd(&node),
            node,
            label,
        })
        .collect();

    let (mut passed, mut failed) = (0usize, 0usize);
    for runtime in &runtimes {
        let label = &runtime.label;
        let note = if runtime.zstd {
            ""
        } else {
            "; no Zstandard in node:zlib, so .zstd vectors expect the CLI's refusal"
        };
        println!(
            "vectors: running {} vector(s) on {label}{note}",
            vectors.len()
        );
        for vector in &vectors {
            match check(runtime, &cli, vector) {
                Ok(()) => {
                    passed += 1;
                    println!("  ok    {} ({label})", vector.label());
                }
                Err(e) => {
                    failed += 1;
                    println!("  FAIL  {} ({label})\n{e:#}\n", vector.label());
                }
            }
        }
    }
    println!("vectors: {}: {passed} passed, {failed} failed", package.npm);
    if failed > 0 {
        bail!("{failed} vector run(s) failed");
    }
    Ok(())
}

/// Pairs each input with its expectation; warns about inputs that have none.
fn discover(dir: &Path) -> Result<Vec<Vector>> {
    // The first of `names` that exists in `dir`.
    let sibling = |names: &[String]| names.iter().map(|n| dir.join(n)).find(|p| p.is_file());
    let mut vectors = Vec::new();
    for input in util::files_with_suffix(dir, ".jsonl")? {
        let name = input
            .file_name()
            .and_then(|n| n.to_str())
            .context("vector file name is not UTF-8")?
            .to_string();
        if name.ends_with(".expected.jsonl") {
            continue;
        }
        // `base` keeps an `.exit2` infix, `stem` drops it; siblings may use either.
        let base = name.strip_suffix(".jsonl").unwrap_or(&name);
        let stem = base.strip_suffix(".exit2").unwrap_or(base);
        let expect = if base != stem {
            let names = [format!("{stem}.stderr.txt"), format!("{base}.stderr.txt")];
            let Some(stderr) = sibling(&names) else {
                bail!(
                    "{} has no sibling vectors/{} (the text its stderr must contain)",
                    rel(&input),
                    names[0]
                );
            };
            Expect::Exit2(stderr)
        } else {
            let expected = dir.join(format!("{stem}.expected.jsonl"));
            if !expected.is_file() {
                println!(
                    "vectors: warning: {} has no {} (nor is it an .exit2.jsonl vector); skipped",
                    rel(&input),
                    rel(&expected)
                );
                continue;
            }
            Expect::Stdout(expected)
        };
        vectors.push(Vector {
            config: sibling(&[format!("{base}.config.json"), format!("{stem}.config.json")]),
            args: Vec::new(),
            expect,
            input: input.clone(),
        });
    }
    Ok(vectors)
}

/// Session-log encodings a vector input may have.
const SESSION_SUFFIXES: [&str; 3] = [".jsonl", ".jsonl.zstd", ".jsonl.gz"];

/// Pairs each session log in `vectors/sessions/` with its expectations.
fn discover_sessions(dir: &Path) -> Result<Vec<Vector>> {
    let sibling = |name: String| Some(dir.join(name)).filter(|p| p.is_file());
    let mut inputs = Vec::new();
    for suffix in SESSION_SUFFIXES {
        inputs.extend(util::files_with_suffix(dir, suffix)?);
    }
    inputs.sort();
    let mut vectors = Vec::new();
    for input in inputs {
        let name = input
            .file_name()
            .and_then(|n| n.to_str())
            .context("vector file name is not UTF-8")?
            .to_string();
        if name.ends_with(".expected.jsonl") {
            continue;
        }
        let Some(base) = SESSION_SUFFIXES
            .iter()
            .rev()
            .find_map(|suffix| name.strip_suffix(suffix))
        else {
            continue;
        };
        let stem = base.strip_suffix(".exit2").unwrap_or(base);
        let config = sibling(format!("{base}.config.json"))
            .or_else(|| sibling(format!("{stem}.config.json")));
        if base != stem {
            let Some(stderr) = sibling(format!("{stem}.stderr.txt"))
                .or_else(|| sibling(format!("{base}.stderr.txt")))
            else {
                bail!(
                    "{} has no sibling {}/{stem}.stderr.txt (the text its stderr must contain)",
                    rel(&input),
                    rel(dir)
                );
            };
            vectors.push(Vector {
                input,
                config,
                args: Vec::new(),
                expect: Expect::Exit2(stderr),
            });
            continue;
        }
        let text = sibling(format!("{stem}.expected.txt"));
        let json = sibling(format!("{stem}.expected.jsonl"));
        if text.is_none() && json.is_none() {
            println!(
                "vectors: warning: {} has neither {stem}.expected.txt nor {stem}.expected.jsonl; skipped",
                rel(&input)
            );
        }
        if let Some(text) = text {
            vectors.push(Vector {
                input: input.clone(),
                config: config.clone(),
                args: Vec::new(),
                expect: Expect::Text(text),
            });
        }
        if let Some(json) = json {
            vectors.push(Vector {
                input,
                config,
                args: vec!["--json"],
                expect: Expect::Stdout(json),
            });
        }
    }
    Ok(vectors)
}

/// Whether this Node's `node:zlib` decompresses Zstandard (Node 22.15+ / 23.8+).
fn has_zstd(node: &Path) -> bool {
    Command::new(node)
        .args([
            "-e",
            "process.exit(typeof require('node:zlib').createZstdDecompress === 'function' ? 0 : 1)",
        ])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The system `node` on PATH when its major version is 20..=23.
fn system_node() -> Result<Option<(PathBuf, String)>> {
    let Some(path) = util::which("node") else {
        println!("vectors: no system `node` on PATH; skipping the Node 20 run");
        return Ok(None);
    };
    let version = util::stdout_of(Command::new(&path).arg("--version"))
        .with_context(|| format!("asking {} for its version", path.display()))?;
    let version = version.trim().to_string();
    match util::node_major(&version) {
        Some(20..=23) => Ok(Some((path, version))),
        _ => {
            println!(
                "vectors: system node at {} is {version}, not 20..=23; skipping the Node 20 run",
                path.display()
            );
            Ok(None)
        }
    }
}

/// Replays one vector on a runtime and compares with its expectation.
fn check(runtime: &Runtime, cli: &Path, vector: &Vector) -> Result<()> {
    let mut cmd = Command::new(&runtime.node);
    cmd.current_dir(root()).arg(rel(cli)).arg("replay");
    if let Some(config) = &vector.config {
        cmd.arg("--config").arg(rel(config));
    }
    cmd.arg(rel(&vector.input)).args(&vector.args);
    let line = util::display(&cmd);
    let out = util::output(&mut cmd)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    let stderr_note = || {
        if stderr.trim().is_empty() {
            String::new()
        } else {
            format!("\n  stderr:\n{}", indent(stderr.trim_end()))
        }
    };

    if vector.zstd() && !runtime.zstd {
        if code != Some(2) || !stderr.contains(NO_ZSTD) {
            bail!(
                "  command: {line}\n  this Node has no Zstandard: expected exit code 2 and stderr containing \"{NO_ZSTD}\", got exit {}{}",
                code.map_or("by a signal".to_string(), |c| c.to_string()),
                stderr_note()
            );
        }
        return Ok(());
    }

    match &vector.expect {
        Expect::Text(expected_file) => {
            if code != Some(0) {
                bail!(
                    "  command: {line}\n  expected exit code 0, got {}{}",
                    code.map_or("a signal".to_string(), |c| c.to_string()),
                    stderr_note()
                );
            }
            let expected = std::fs::read_to_string(expected_file)
                .with_context(|| format!("reading {}", rel(expected_file)))?;
            if expected == stdout {
                return Ok(());
            }
            let (e, a): (Vec<&str>, Vec<&str>) =
                (expected.split('\n').collect(), stdout.split('\n').collect());
            let i = (0..e.len().max(a.len()))
                .find(|&i| e.get(i) != a.get(i))
                .unwrap_or(0);
            bail!(
                "  command: {line}\n  stdout differs from {} at line {}:\n  -  {}\n  +  {}{}",
                rel(expected_file),
                i + 1,
                e.get(i).map_or("(end)".to_string(), |l| truncate(l)),
                a.get(i).map_or("(end)".to_string(), |l| truncate(l)),
                stderr_note()
            )
        }
        Expect::Exit2(stderr_file) => {
            let wanted = std::fs::read_to_string(stderr_file)
                .with_context(|| format!("reading {}", rel(stderr_file)))?;
            let wanted = wanted.trim();
            if code != Some(2) {
                bail!(
                    "  command: {line}\n  expected exit code 2, got {}{}",
                    code.map_or("a signal".to_string(), |c| c.to_string()),
                    stderr_note()
                );
            }
            if !stderr.contains(wanted) {
                bail!(
                    "  command: {line}\n  stderr does not contain the text of {}:\n{}{}",
                    rel(stderr_file),
                    indent(wanted),
                    stderr_note()
                );
            }
            Ok(())
        }
        Expect::Stdout(expected_file) => {
            if code != Some(0) {
                bail!(
                    "  command: {line}\n  expected exit code 0, got {}{}",
                    code.map_or("a signal".to_string(), |c| c.to_string()),
                    stderr_note()
                );
            }
            let expected_text = std::fs::read_to_string(expected_file)
                .with_context(|| format!("reading {}", rel(expected_file)))?;
            let expected = json_lines(&expected_text)
                .with_context(|| format!("{} is not JSON lines", rel(expected_file)))?;
            let actual = match json_lines(&stdout) {
                Ok(actual) => actual,
                Err(e) => bail!(
                    "  command: {line}\n  stdout is not JSON lines: {e:#}{}",
                    stderr_note()
                ),
            };
            match first_mismatch(&expected, &actual) {
                None => Ok(()),
                Some(i) => bail!(
                    "  command: {line}\n{}{}",
                    diff(rel(expected_file), &expected, &actual, i),
                    stderr_note()
                ),
            }
        }
    }
}

/// One parsed line: (1-based line number in its text, the raw line, its value).
type JsonLine = (usize, String, Value);

fn json_lines(text: &str) -> Result<Vec<JsonLine>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let value = serde_json::from_str(l)
                .with_context(|| format!("line {}: {}", i + 1, truncate(l)))?;
            Ok((i + 1, l.to_string(), value))
        })
        .collect()
}

/// The index of the first differing value, or of the first extra/missing line.
fn first_mismatch(expected: &[JsonLine], actual: &[JsonLine]) -> Option<usize> {
    (0..expected.len().max(actual.len())).find(|&i| match (expected.get(i), actual.get(i)) {
        (Some(e), Some(a)) => e.2 != a.2,
        _ => true,
    })
}

/// A unified-diff-like view around record `i` (up to 2 records of context).
fn diff(expected_name: String, expected: &[JsonLine], actual: &[JsonLine], i: usize) -> String {
    let at = |lines: &[JsonLine]| {
        lines
            .get(i)
            .map_or("end".to_string(), |l| format!("line {}", l.0))
    };
    let mut out = format!(
        "  first difference at record {} ({expected_name} {}, stdout {}; expected {} records, got {})\n  --- {expected_name}\n  +++ stdout\n",
        i + 1,
        at(expected),
        at(actual),
        expected.len(),
        actual.len()
    );
    for record in &expected[i.saturating_sub(2)..i] {
        out.push_str(&format!("     {}\n", truncate(&record.1)));
    }
    match expected.get(i) {
        Some(e) => out.push_str(&format!("  -  {}\n", truncate(&e.1))),
        None => out.push_str("  -  (no more expected records)\n"),
    }
    match actual.get(i) {
        Some(a) => out.push_str(&format!("  +  {}\n", truncate(&a.1))),
        None => out.push_str("  +  (no more output)\n"),
    }
    if let (Some(e), Some(a)) = (expected.get(i), actual.get(i)) {
        for path in value_diffs(&e.2, &a.2, "$").into_iter().take(5) {
            out.push_str(&format!("     differs at {path}\n"));
        }
    }
    out.trim_end().to_string()
}

/// JSON paths where two values differ (first few suffice for a hint).
fn value_diffs(expected: &Value, actual: &Value, path: &str) -> Vec<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let mut keys: Vec<&String> = e.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| match (e.get(k), a.get(k)) {
                    (Some(ev), Some(av)) => value_diffs(ev, av, &format!("{path}.{k}")),
                    (Some(_), None) => vec![format!("{path}.{k} (missing in stdout)")],
                    (None, _) => vec![format!("{path}.{k} (not expected)")],
                })
                .collect()
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .flat_map(|(i, (ev, av))| value_diffs(ev, av, &format!("{path}[{i}]")))
            .collect(),
        _ if expected == actual => Vec::new(),
        _ => vec![path.to_string()],
    }
}

fn truncate(line: &str) -> String {
    const MAX: usize = 400;
    match line.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
