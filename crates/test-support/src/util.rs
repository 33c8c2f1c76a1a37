//! Shared helpers: workspace paths, running commands with clear errors.

use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};

/// The workspace root (two folders above this crate's manifest).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/test-support lies two folders below the workspace root")
        .to_path_buf()
}

/// The cache directory for every tool this xtask installs (gitignored).
pub fn cache_dir() -> PathBuf {
    root().join(".cache")
}

/// The cargo that runs us (`CARGO` is set by `cargo run`), else `cargo` on PATH.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// `path` relative to the workspace root when it lies inside it, for messages.
pub fn rel(path: &Path) -> String {
    let root = root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A shell-like rendering of a command line, for messages.
pub fn display(cmd: &Command) -> String {
    let mut parts = Vec::new();
    let program = PathBuf::from(cmd.get_program());
    let program = if cmd.get_program() == cargo() {
        "cargo".to_string()
    } else {
        rel(&program)
    };
    parts.push(program);
    for arg in cmd.get_args() {
        let arg = arg.to_string_lossy();
        if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
            parts.push(format!("'{}'", arg.replace('\'', r"'\''")));
        } else {
            parts.push(arg.into_owned());
        }
    }
    parts.join(" ")
}

fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => format!("{status} (killed by a signal)"),
    }
}

/// Runs `cmd` with inherited stdio, echoing it first; fails on a non-zero exit.
pub fn run(cmd: &mut Command) -> Result<()> {
    let line = display(cmd);
    println!("$ {line}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{line}`"))?;
    if !status.success() {
        bail!("command failed ({}): {line}", describe(status));
    }
    Ok(())
}

/// Runs `cmd` quietly and returns its captured output, whatever its exit status.
pub fn output(cmd: &mut Command) -> Result<Output> {
    let line = display(cmd);
    cmd.stdin(Stdio::null())
        .output()
        .with_context(|| format!("could not start `{line}`"))
}

/// Runs `cmd` quietly and returns its stdout; fails (showing stderr) on a non-zero exit.
pub fn stdout_of(cmd: &mut Command) -> Result<String> {
    let out = output(cmd)?;
    if !out.status.success() {
        bail!(
            "command failed ({}): {}\n{}",
            describe(out.status),
            display(cmd),
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    String::from_utf8(out.stdout)
        .with_context(|| format!("non-UTF-8 output from `{}`", display(cmd)))
}

/// Files directly in `dir` whose names end with `suffix`, sorted by name.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", rel(dir)))? {
        let entry = entry?;
        let name = entry.file_name();
        if entry.file_type()?.is_file() && name.to_string_lossy().ends_with(suffix) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}
