//! Shared helpers: mtimes, PATH, cargo; workspace paths and running commands come from
//! [`test_support::util`].

use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;
pub use test_support::util::{
    cache_dir, cargo, display, files_with_suffix, output, rel, root, run, stdout_of,
};

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
