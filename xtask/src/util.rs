//! Shared helpers: workspace paths, running commands with clear errors, mtimes.

use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::SystemTime;

/// The workspace root: the parent of xtask's manifest directory.
pub fn root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .expect("xtask's manifest directory has a parent")
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

/// A `cargo` command whose working directory is the workspace root.
pub fn cargo_cmd<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = Command::new(cargo());
    cmd.args(args).current_dir(root());
    cmd
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

/// The modification time of `path`, or `None` when it does not exist.
pub fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of any file under `dir` (recursively), skipping
/// `target` directories and hidden entries.
pub fn newest_mtime(dir: &Path) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if let Ok(modified) = meta.modified() {
                newest = newest.max(Some(modified));
            }
        }
    }
    newest
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

/// Finds `program` on PATH (the first executable match).
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// PATH with `dir` in front of the current one.
pub fn path_with_first(dir: &Path) -> Result<OsString> {
    let mut dirs = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).context("building PATH")
}

/// The major version from `node --version` output such as `v24.22.3`.
pub fn node_major(version: &str) -> Option<u32> {
    version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}
