//! The conformance vectors runner behind `cargo xtask vectors`: each package's conformance vectors (`packages/<row>/vectors/`) replayed
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
//! Command vectors in `vectors/cli/` (any package; the CLI's own subcommands,
//! not `replay`):
//! - `NAME.json`: `{"about": one line, "args": [...], "files": {PATH: text or
//!   JSON value}, "git": [DIR...], "cwd": DIR, "stdout": "text"|"json"|"jsonl",
//!   "after": [PATH...]}`. The runner makes an empty scratch directory, writes
//!   `files` into it (a JSON value is written pretty-printed with a final
//!   newline; every file's mtime is set to 2026-01-01T00:00:00Z), turns each `git` folder into a repository with one commit of
//!   its files (fixed author, committer and dates, branch `main`), and runs
//!   `node bin/<command>.js ARGS...` in `cwd` (default: the scratch directory)
//!   with `DSH_HOME=<scratch>/home`, `HOME=<scratch>`, `TZ=UTC`, no git
//!   system/global config, and the running Node first on PATH (so `node` in
//!   an evaluator or proposer is the same Node). `<scratch>` in `args` and in
//!   `files` texts stands for the scratch directory's absolute path.
//! - `NAME.expected.json`: `{"exit": CODE, "stdout": ..., "stderr": TEXT,
//!   "after": {PATH: text, or null when the file is gone}}`, compared as JSON
//!   values. `stdout` is the text, or with `"stdout": "json"` the one JSON value
//!   stdout holds (`"jsonl"`: an array, one value per non-blank line; stdout
//!   that does not parse is kept as its text). `after` holds the bytes (UTF-8)
//!   of each `after` file once the command has exited.
//! - Normalization, applied to stdout, stderr and the `after` texts before the
//!   comparison: the scratch directory's absolute path becomes `<scratch>`,
//!   and each distinct lowercase UUID (8-4-4-4-12 hex, such as a run id)
//!   becomes `<uuid-1>`, `<uuid-2>`, … in order of first appearance (stdout,
//!   then stderr, then the `after` files), so which ids are equal still counts;
//!   likewise each distinct 40-hex-digit commit hash becomes `<commit-N>`
//!   (autoresearch's candidate commits name the random run id in their
//!   message, so their hashes differ from run to run even though the initial
//!   commit's dates are fixed). Nothing else is rewritten.
//!
//! Every vector runs on the pinned Node 24, then again on the system `node`
//! when that is Node 20..=23 and the package's `engines.node` allows it (the
//! lowest major it names is at most the system one), to prove the CLI runs on
//! the oldest supported Node.
//!
//! `cargo xtask vectors --update` rewrites expectations instead of failing on a
//! difference, through the same comparison: on the Node 24 run, an expectation
//! that differs is overwritten with the actual output (`NAME.expected.jsonl`,
//! `NAME.expected.txt` and `NAME.expected.json` whole, except that the
//! unchanged records of a `.expected.jsonl` keep their lines and new ones follow
//! its spacing; a `NAME.stderr.txt` with the whole trimmed stderr when the exit
//! code is 2 but the text is not in it, so a hand-trimmed excerpt comes back
//! whole), and each changed file is printed. Expectations that match are not touched, so
//! on a clean tree it changes nothing. What cannot be rewritten still fails: a
//! wrong exit code for the `.jsonl` forms (their file names say the code), and
//! any difference on the system Node run, which checks the rewritten files.

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
    /// A command vector (`vectors/cli/NAME.json`): this is `NAME.expected.json`.
    Cli(PathBuf),
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

/// Runs the vectors in a package's `vectors/` through `cli` on each Node of `nodes` (path and
/// label, Node 24 first: `update` rewrites on that run only), naming each rewritten file in
/// `changed`.
pub fn run(
    package: &str,
    dir: &Path,
    cli: &Path,
    nodes: Vec<(PathBuf, String)>,
    update: bool,
    changed: &mut Vec<String>,
) -> Result<()> {
    let mut vectors = discover(dir)?;
    let sessions = dir.join("sessions");
    if sessions.is_dir() {
        vectors.extend(discover_sessions(&sessions)?);
    }
    let cli_dir = dir.join("cli");
    if cli_dir.is_dir() {
        vectors.extend(discover_cli(&cli_dir)?);
    }
    if vectors.is_empty() {
        println!("vectors: no vectors in vectors/ yet; nothing to run");
        return Ok(());
    }
    if !cli.is_file() {
        bail!(
            "{} vector(s) in vectors/ but {} does not exist",
            vectors.len(),
            rel(cli)
        );
    }
    let runtimes: Vec<Runtime> = nodes
        .into_iter()
        .map(|(node, label)| Runtime {
            zstd: has_zstd(&node),
            node,
            label,
        })
        .collect();

    let (mut passed, mut failed) = (0usize, 0usize);
    for (index, runtime) in runtimes.iter().enumerate() {
        // `--update` rewrites on the first (Node 24) run; later runs check the result.
        let update = update && index == 0;
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
            match check(runtime, cli, vector, update) {
                Ok(None) => {
                    passed += 1;
                    println!("  ok    {} ({label})", vector.label());
                }
                Ok(Some(file)) => {
                    passed += 1;
                    println!(
                        "  UPDATED {} ({label}): rewrote {}",
                        vector.label(),
                        rel(&file)
                    );
                    changed.push(rel(&file));
                }
                Err(e) => {
                    failed += 1;
                    println!("  FAIL  {} ({label})\n{e:#}\n", vector.label());
                }
            }
        }
    }
    println!("vectors: {package}: {passed} passed, {failed} failed");
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

/// Replays one vector on a runtime and compares with its expectation. With
/// `update`, a differing expectation is rewritten instead, and its path returned.
fn check(runtime: &Runtime, cli: &Path, vector: &Vector, update: bool) -> Result<Option<PathBuf>> {
    if let Expect::Cli(expected) = &vector.expect {
        return check_cli(runtime, cli, &vector.input, expected, update);
    }
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
        return Ok(None);
    }

    match &vector.expect {
        Expect::Cli(_) => unreachable!("command vectors are checked above"),
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
                return Ok(None);
            }
            if update {
                return rewrite(expected_file, &stdout);
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
                if update {
                    return rewrite(stderr_file, &format!("{}\n", stderr.trim()));
                }
                bail!(
                    "  command: {line}\n  stderr does not contain the text of {}:\n{}{}",
                    rel(stderr_file),
                    indent(wanted),
                    stderr_note()
                );
            }
            Ok(None)
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
                None => Ok(None),
                Some(_) if update => rewrite(
                    expected_file,
                    &updated_lines(&expected_text, &expected, &actual),
                ),
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

/// A line of a diff, at most 400 characters.
fn truncate(line: &str) -> String {
    text::clip(line, 400)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--update` of a JSON-lines expectation: records whose value is unchanged keep
/// their line as written; the others take the CLI's line, re-spaced like the file
/// when the file writes `{"a": 1, "b": 2}` rather than `{"a":1,"b":2}`.
fn updated_lines(expected_text: &str, expected: &[JsonLine], actual: &[JsonLine]) -> String {
    let spaced_file = expected
        .iter()
        .any(|e| spaced(&e.1) == e.1 && spaced(&e.1) != compact(&e.1));
    let mut out = String::new();
    for (i, a) in actual.iter().enumerate() {
        let line = match expected.get(i) {
            Some(e) if e.2 == a.2 => e.1.clone(),
            _ if spaced_file => spaced(&a.1),
            _ => a.1.clone(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    if !expected_text.is_empty() && !expected_text.ends_with('\n') {
        out.pop();
    }
    out
}

/// A JSON line with the whitespace outside strings removed.
fn compact(line: &str) -> String {
    respace(line, false)
}

/// A JSON line with one space after each `,` and `:` outside strings.
fn spaced(line: &str) -> String {
    respace(line, true)
}

fn respace(line: &str, spaces: bool) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in line.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            c if c.is_whitespace() => {}
            ',' | ':' if spaces => {
                out.push(c);
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// `--update`: writes `text` as the new expectation `file`; returns its path.
fn rewrite(file: &Path, text: &str) -> Result<Option<PathBuf>> {
    std::fs::write(file, text).with_context(|| format!("writing {}", rel(file)))?;
    Ok(Some(file.to_path_buf()))
}

/// Pairs each command vector `NAME.json` in `vectors/cli/` with `NAME.expected.json`.
fn discover_cli(dir: &Path) -> Result<Vec<Vector>> {
    let mut vectors = Vec::new();
    for input in util::files_with_suffix(dir, ".json")? {
        let name = input
            .file_name()
            .and_then(|n| n.to_str())
            .context("vector file name is not UTF-8")?
            .to_string();
        if name.ends_with(".expected.json") {
            continue;
        }
        let stem = name.strip_suffix(".json").unwrap_or(&name);
        let expected = dir.join(format!("{stem}.expected.json"));
        if !expected.is_file() {
            println!(
                "vectors: warning: {} has no {} (run `cargo xtask vectors --update` to write it); skipped",
                rel(&input),
                rel(&expected)
            );
            continue;
        }
        vectors.push(Vector {
            input,
            config: None,
            args: Vec::new(),
            expect: Expect::Cli(expected),
        });
    }
    Ok(vectors)
}

/// A command vector's input (`vectors/cli/NAME.json`).
struct CliInput {
    args: Vec<String>,
    files: Vec<(String, Vec<u8>)>,
    git: Vec<String>,
    cwd: Option<String>,
    stdout: String,
    after: Vec<String>,
}

fn strings(input: &Value, key: &str) -> Result<Vec<String>> {
    match input.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .with_context(|| format!("`{key}` holds a non-string: {v}"))
            })
            .collect(),
        Some(other) => bail!("`{key}` must be an array of strings (got {other})"),
    }
}

/// A relative path without `..`, `.` or empty segments (vector files stay in the scratch dir).
fn safe_relative(path: &str) -> Result<&str> {
    if path.is_empty()
        || path.starts_with('/')
        || path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
    {
        bail!("`{path}` must be a relative path inside the scratch directory");
    }
    Ok(path)
}

fn parse_cli_input(file: &Path, scratch: &str) -> Result<CliInput> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", rel(file)))?;
    let input: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", rel(file)))?;
    let Some(object) = input.as_object() else {
        bail!("{} must hold a JSON object", rel(file));
    };
    const KEYS: [&str; 7] = ["about", "args", "files", "git", "cwd", "stdout", "after"];
    if let Some(key) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        bail!(
            "{}: unknown key `{key}` (known: {})",
            rel(file),
            KEYS.join(", ")
        );
    }
    if !object.get("about").is_some_and(Value::is_string) {
        bail!(
            "{}: `about` (one line saying what it checks) is required",
            rel(file)
        );
    }
    let fill = |s: &str| s.replace("<scratch>", scratch);
    let mut files = Vec::new();
    if let Some(map) = object.get("files") {
        let Some(map) = map.as_object() else {
            bail!("{}: `files` must be an object of path → content", rel(file));
        };
        for (path, content) in map {
            let bytes = match content {
                Value::String(text) => fill(text).into_bytes(),
                value => format!("{}\n", serde_json::to_string_pretty(value)?).into_bytes(),
            };
            files.push((safe_relative(path)?.to_string(), bytes));
        }
    }
    let stdout = match object.get("stdout") {
        None => "text".to_string(),
        Some(Value::String(mode)) if ["text", "json", "jsonl"].contains(&mode.as_str()) => {
            mode.clone()
        }
        Some(other) => bail!(
            "{}: `stdout` must be \"text\", \"json\" or \"jsonl\" (got {other})",
            rel(file)
        ),
    };
    let cwd = match object.get("cwd") {
        None => None,
        Some(Value::String(dir)) => Some(safe_relative(dir)?.to_string()),
        Some(other) => bail!("{}: `cwd` must be a string (got {other})", rel(file)),
    };
    let git = strings(&input, "git").with_context(|| rel(file))?;
    let after = strings(&input, "after").with_context(|| rel(file))?;
    for path in git.iter().chain(&after) {
        safe_relative(path).with_context(|| rel(file))?;
    }
    Ok(CliInput {
        args: strings(&input, "args")
            .with_context(|| rel(file))?
            .iter()
            .map(|a| fill(a))
            .collect(),
        files,
        git,
        cwd,
        stdout,
        after,
    })
}

/// The modification time of every file a command vector writes: 2026-01-01T00:00:00Z.
fn file_time() -> std::time::SystemTime {
    std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600)
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir() -> Result<Scratch> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("xtask-vector-{}-{n}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir.canonicalize()?;
    Ok(Scratch(dir))
}

/// Git with no system or global config, fixed identities and dates.
fn git_in(dir: &Path, scratch: &Path, args: &[&str]) -> Result<()> {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(args)
        .env("HOME", scratch)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "vector")
        .env("GIT_AUTHOR_EMAIL", "vector@example.com")
        .env("GIT_COMMITTER_NAME", "vector")
        .env("GIT_COMMITTER_EMAIL", "vector@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z");
    let line = util::display(&cmd);
    let out = util::output(&mut cmd)?;
    if !out.status.success() {
        bail!(
            "`{line}` failed:\n{}",
            indent(String::from_utf8_lossy(&out.stderr).trim_end())
        );
    }
    Ok(())
}

/// Runs one command vector on a runtime and compares with (or, with `update`,
/// rewrites) `NAME.expected.json`.
fn check_cli(
    runtime: &Runtime,
    cli: &Path,
    input_file: &Path,
    expected_file: &Path,
    update: bool,
) -> Result<Option<PathBuf>> {
    let scratch = scratch_dir()?;
    let root_dir = &scratch.0;
    let scratch_text = root_dir.to_string_lossy().to_string();
    let input = parse_cli_input(input_file, &scratch_text)?;
    for (path, bytes) in &input.files {
        let target = root_dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, bytes).with_context(|| format!("writing {}", target.display()))?;
        // A fixed modification time, so what reports it (limit-break's stats) is deterministic.
        std::fs::File::options()
            .write(true)
            .open(&target)
            .and_then(|f| f.set_modified(file_time()))
            .with_context(|| format!("setting the mtime of {}", target.display()))?;
    }
    for repo in &input.git {
        let dir = root_dir.join(repo);
        std::fs::create_dir_all(&dir)?;
        git_in(&dir, root_dir, &["init", "-q", "-b", "main"])?;
        git_in(&dir, root_dir, &["add", "-A"])?;
        git_in(
            &dir,
            root_dir,
            &["commit", "-q", "--allow-empty", "-m", "vector"],
        )?;
    }
    let node_dir = runtime
        .node
        .parent()
        .context("the node binary has no folder")?;
    let mut cmd = Command::new(&runtime.node);
    cmd.current_dir(
        input
            .cwd
            .as_ref()
            .map_or(root_dir.clone(), |d| root_dir.join(d)),
    )
    .arg(cli)
    .args(&input.args)
    .env("DSH_HOME", root_dir.join("home"))
    .env("HOME", root_dir)
    .env("TZ", "UTC")
    .env("GIT_CONFIG_NOSYSTEM", "1")
    .env("GIT_CONFIG_GLOBAL", "/dev/null")
    .env("PATH", path_with_first(node_dir)?);
    let line = format!(
        "{} (in a scratch dir, for {})",
        util::display(&cmd),
        rel(input_file)
    );
    let out = util::output(&mut cmd)?;

    let mut ids = Vec::new();
    let mut normal =
        |bytes: &[u8]| normalize(&String::from_utf8_lossy(bytes), &scratch_text, &mut ids);
    let stdout = normal(&out.stdout);
    let stderr = normal(&out.stderr);
    let mut after = serde_json::Map::new();
    for path in &input.after {
        let value = match std::fs::read(root_dir.join(path)) {
            Ok(bytes) => Value::String(normal(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Null,
            Err(e) => bail!("reading {path} after the command: {e}"),
        };
        after.insert(path.clone(), value);
    }
    let stdout_value = match input.stdout.as_str() {
        "json" => serde_json::from_str(&stdout).unwrap_or(Value::String(stdout)),
        "jsonl" => match json_lines(&stdout) {
            Ok(lines) => Value::Array(lines.into_iter().map(|l| l.2).collect()),
            Err(_) => Value::String(stdout),
        },
        _ => Value::String(stdout),
    };
    let mut actual = serde_json::Map::new();
    actual.insert(
        "exit".to_string(),
        out.status.code().map_or(Value::Null, Value::from),
    );
    actual.insert("stdout".to_string(), stdout_value);
    actual.insert("stderr".to_string(), Value::String(stderr));
    if !input.after.is_empty() {
        actual.insert("after".to_string(), Value::Object(after));
    }
    let actual = Value::Object(actual);

    let expected_text = std::fs::read_to_string(expected_file)
        .with_context(|| format!("reading {}", rel(expected_file)))?;
    let expected: Value = serde_json::from_str(&expected_text)
        .with_context(|| format!("{} is not JSON", rel(expected_file)))?;
    if expected == actual {
        return Ok(None);
    }
    if update {
        return rewrite(
            expected_file,
            &format!("{}\n", serde_json::to_string_pretty(&actual)?),
        );
    }
    let mut report = format!(
        "  command: {line}\n  the outcome differs from {} at:\n",
        rel(expected_file)
    );
    for path in value_diffs(&expected, &actual, "$").into_iter().take(8) {
        let pick = |v: &Value| {
            json_path(v, &path).map_or("(absent)".to_string(), |v| truncate(&v.to_string()))
        };
        report.push_str(&format!(
            "    {path}\n    -  {}\n    +  {}\n",
            pick(&expected),
            pick(&actual)
        ));
    }
    bail!("{}", report.trim_end())
}

/// The value at a path `value_diffs` printed (`$.a.b[2]`), if it is there.
fn json_path<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let path = path.split(" (").next()?.strip_prefix('$')?;
    let mut current = value;
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (key, indexes) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        if !key.is_empty() {
            current = current.get(key)?;
        }
        for index in indexes.split('[').filter(|s| !s.is_empty()) {
            current = current.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(current)
}

/// The scratch path → `<scratch>`; each distinct lowercase UUID → `<uuid-N>`
/// and each distinct 40-hex-digit commit hash → `<commit-N>` (numbered across
/// one vector's outputs by first appearance, in `ids`).
fn normalize(text: &str, scratch: &str, ids: &mut Vec<String>) -> String {
    let text = text.replace(scratch, "<scratch>");
    let bytes = text.as_bytes();
    let is_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    // The kind and length of a UUID or commit hash starting at `at`, if one does.
    let token = |at: usize| -> Option<(&str, usize)> {
        if at > 0 && is_hex(bytes[at - 1]) {
            return None;
        }
        let bounded = |len: usize| bytes.get(at + len).is_none_or(|&b| !is_hex(b) && b != b'-');
        let uuid = bytes.get(at..at + 36).is_some_and(|candidate| {
            candidate.iter().enumerate().all(|(i, &b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => is_hex(b),
            })
        });
        // A UUID may be followed by `-baseline` and the like (experiment ids).
        if uuid && bytes.get(at + 36).is_none_or(|&b| !is_hex(b)) {
            return Some(("uuid", 36));
        }
        let commit = bytes
            .get(at..at + 40)
            .is_some_and(|candidate| candidate.iter().all(|&b| is_hex(b)));
        if commit && bounded(40) {
            return Some(("commit", 40));
        }
        None
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if let Some((kind, len)) = token(i) {
            let id = format!("{kind}:{}", &text[i..i + len]);
            let n = match ids
                .iter()
                .filter(|k| k.starts_with(kind))
                .position(|known| *known == id)
            {
                Some(n) => n + 1,
                None => {
                    ids.push(id);
                    ids.iter().filter(|k| k.starts_with(kind)).count()
                }
            };
            out.push_str(&format!("<{kind}-{n}>"));
            i += len;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// PATH with `dir` in front of the current one.
fn path_with_first(dir: &Path) -> Result<std::ffi::OsString> {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).context("building PATH")
}
