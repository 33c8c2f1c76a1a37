//! Repository git config that would make git run a program on the run's behalf.
//!
//! The driver runs every git command with system and global config switched off and hooks,
//! fsmonitor and signing overridden on the command line; what is left is the repository's own
//! config. A key that names a program or pulls in another file ([`is_helper_key`]) makes the run
//! refuse (`git-config-unsafe`) unless `exceptional_allowlists.gitConfig` names the key, or names
//! the file it comes from (`.git/config`, `.git/config.worktree`). The check runs at discovery
//! and again after every proposal round.

use crate::protocol::ConfigEntry;

/// The allowlist entries that name a whole config file.
pub const CONFIG_FILES: &[&str] = &[".git/config", ".git/config.worktree"];

/// Whether a config key (as git prints it, or as a user writes it) makes git run a program or
/// read more config: `include.path`, `includeIf.<cond>.path`, `core.hooksPath`,
/// `core.fsmonitor`, `core.sshCommand`, `filter.<driver>.clean|smudge|process`,
/// `diff.<driver>.command|textconv`, `merge.<driver>.driver`.
pub fn is_helper_key(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let (subsection, variable) = match rest.rsplit_once('.') {
        Some((sub, var)) => (Some(sub), var),
        None => (None, rest),
    };
    let section = section.to_ascii_lowercase();
    let variable = variable.to_ascii_lowercase();
    matches!(
        (section.as_str(), subsection, variable.as_str()),
        ("include", None, "path")
            | ("includeif", Some(_), "path")
            | ("core", None, "hookspath" | "fsmonitor" | "sshcommand")
            | ("filter", Some(_), "clean" | "smudge" | "process")
            | ("diff", Some(_), "command" | "textconv")
            | ("merge", Some(_), "driver")
    )
}

/// The file an allowlist entry would name for this origin (`.git/config` for the common config,
/// `.git/config.worktree` for a worktree's own), if it is one of those.
fn origin_file(origin: &str) -> Option<&'static str> {
    let path = origin.strip_prefix("file:")?;
    if path.ends_with("/config.worktree") {
        Some(".git/config.worktree")
    } else if path.ends_with("/config") {
        Some(".git/config")
    } else {
        None
    }
}

/// Helper keys the allowlist does not cover, as evidence (`key (from origin)`), sorted.
/// Command-line entries (the driver's own `-c` hardening) are never counted.
pub fn unsafe_entries(entries: &[ConfigEntry], allow: &[String]) -> Vec<String> {
    let allowed = |e: &ConfigEntry| {
        allow.iter().any(|a| {
            a.eq_ignore_ascii_case(&e.key) && !CONFIG_FILES.contains(&a.as_str())
                || origin_file(&e.origin) == Some(a.as_str())
        })
    };
    let mut out: Vec<String> = entries
        .iter()
        .filter(|e| !e.origin.starts_with("command line:") && is_helper_key(&e.key))
        .filter(|e| !allowed(e))
        .map(|e| format!("{} (from {})", e.key, e.origin))
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(origin: &str, key: &str) -> ConfigEntry {
        ConfigEntry {
            origin: origin.into(),
            key: key.into(),
        }
    }

    #[test]
    fn helper_keys() {
        for key in [
            "include.path",
            "includeIf.gitdir:/x/.path",
            "includeif.onbranch:main.path",
            "core.hooksPath",
            "core.fsmonitor",
            "core.sshcommand",
            "filter.lfs.clean",
            "filter.a.b.smudge",
            "filter.x.process",
            "diff.pdf.textconv",
            "diff.x.command",
            "merge.ours.driver",
        ] {
            assert!(is_helper_key(key), "{key}");
        }
        for key in [
            "core.bare",
            "core.worktree",
            "filter.lfs.required",
            "user.name",
            "include",
            "diff.renames",
            "merge.driver",
            "remote.origin.url",
        ] {
            assert!(!is_helper_key(key), "{key}");
        }
    }

    #[test]
    fn allowlist_by_key_or_by_file() {
        let entries = vec![
            entry("file:/r/.git/config", "filter.lfs.smudge"),
            entry("file:/r/.git/config", "filter.lfs.clean"),
            entry(
                "file:/r/.git/worktrees/w/config.worktree",
                "diff.x.textconv",
            ),
            entry("file:/etc/extra", "merge.m.driver"),
            entry("command line:", "core.hookspath"),
            entry("file:/r/.git/config", "user.name"),
        ];
        assert_eq!(
            unsafe_entries(&entries, &[]),
            [
                "diff.x.textconv (from file:/r/.git/worktrees/w/config.worktree)",
                "filter.lfs.clean (from file:/r/.git/config)",
                "filter.lfs.smudge (from file:/r/.git/config)",
                "merge.m.driver (from file:/etc/extra)",
            ]
        );
        assert_eq!(
            unsafe_entries(&entries, &["filter.LFS.smudge".into()]).len(),
            3
        );
        assert_eq!(
            unsafe_entries(&entries, &[".git/config".into()]),
            [
                "diff.x.textconv (from file:/r/.git/worktrees/w/config.worktree)",
                "merge.m.driver (from file:/etc/extra)",
            ]
        );
        assert_eq!(
            unsafe_entries(
                &entries,
                &[".git/config.worktree".into(), "merge.m.driver".into()]
            ),
            [
                "filter.lfs.clean (from file:/r/.git/config)",
                "filter.lfs.smudge (from file:/r/.git/config)",
            ]
        );
    }
}
