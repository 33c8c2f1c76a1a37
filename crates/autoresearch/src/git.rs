//! The git commands behind the run's git effects, decided here: each one's argument vector,
//! environment, output caps, timeout and, for a candidate's commit, identity. The driver
//! (`lib/git.js`) picks the step (which subcommand, which temporary index) and spawns exactly
//! what [`command`] returns: `argv[0]` with `argv[1..]` directly (no shell), the parent's
//! environment without any variable starting with [`Command::unset_prefix`] and with
//! [`Command::env`] on top, at most [`Command::stdout_cap`] bytes of stdout (more is the error
//! `git-output-limit`), a [`Command::stderr_cap`] tail of stderr, and a SIGTERM at
//! [`Command::timeout_ms`] (SIGKILL [`Command::grace_ms`] later).
//!
//! The argument vector, in order:
//!
//! | Argument | Why |
//! |---|---|
//! | the executable | The row config's `gitExecutable`. |
//! | `-c core.hooksPath=/dev/null` | No hook runs: a proposer could have written one. |
//! | `-c core.fsmonitor=false`, `-c core.untrackedCache=false` | No filesystem monitor program, no cached view of untracked files a process could have staged. |
//! | `-c gc.auto=0`, `-c maintenance.auto=false` | No background gc or maintenance that could prune a candidate's objects or outlive the command. |
//! | `-c commit.gpgSign=false` | No signing program. |
//! | `-c advice.detachedHead=false` | The run's worktrees are detached on purpose. |
//! | `-c core.quotePath=false` | Paths as bytes, not C-quoted, so `-z` output parses as is. |
//! | `-c core.attributesFile=/dev/null` | No user attributes file routes a path through a filter. |
//! | `--git-dir <dir>` | Every command but discovery names its repository (the common dir, or a worktree's admin dir, neither writable from inside a worktree): git never discovers one from a path a proposer or evaluator can write. |
//! | `--work-tree <path>` | Worktree commands name the work tree too. |
//! | the step's arguments | From the driver. |
//!
//! The environment: no `GIT_*` variable of the parent's; `GIT_CONFIG_NOSYSTEM=1`,
//! `GIT_CONFIG_GLOBAL=/dev/null` and `GIT_ATTR_NOSYSTEM=1` (only the repository's own config and
//! attributes), `GIT_TERMINAL_PROMPT=0` and `GIT_PAGER=cat` (nothing waits on a terminal),
//! `GIT_OPTIONAL_LOCKS=0` (a read never takes the index lock), `LC_ALL=C` (messages and sorting
//! as in every test). A worktree command adds `GIT_ATTR_SOURCE=HEAD` (git 2.40+): attributes of the
//! checked-out commit, never of a `.gitattributes` a proposer wrote. A step with a temporary index
//! adds `GIT_INDEX_FILE` and `GIT_LITERAL_PATHSPECS=1` (a path a proposer named is never a glob or
//! a magic pathspec). A candidate's commit adds [`AUTHOR_NAME`] and [`AUTHOR_EMAIL`] as author and
//! committer and the parent's date as both dates, so the commit is deterministic and replayable.

use std::collections::BTreeMap;

/// Stdout kept from one git command; more is an error (`git-output-limit`).
pub const OUTPUT_CAP: u64 = 64 * 1024 * 1024;
/// Stderr kept from one git command (its tail).
pub const STDERR_CAP: u64 = 64 * 1024;
/// How long one git command of a run may take.
pub const TIMEOUT_MS: u64 = 300_000;
/// How long one git command may take while the plugin starts (reconciling unfinished runs, which
/// must not hold DSH's start-up).
pub const STARTUP_TIMEOUT_MS: u64 = 10_000;
/// Between SIGTERM and SIGKILL.
pub const GRACE_MS: u64 = 2_000;
/// The author and committer of every candidate commit.
pub const AUTHOR_NAME: &str = "dsh-autoresearch";
/// Their email.
pub const AUTHOR_EMAIL: &str = "autoresearch@localhost";

/// Flags on every command.
pub const HARDENING: [&str; 9] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "advice.detachedHead=false",
    "core.quotePath=false",
    "core.attributesFile=/dev/null",
];

/// The environment every command gets on top of the parent's (less its `GIT_*` variables).
const ENV: [(&str, &str); 7] = [
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PAGER", "cat"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("LC_ALL", "C"),
];

/// One git step as the driver asks for it.
#[derive(Clone, Debug, Default)]
pub struct Step<'a> {
    /// The git executable (the row config's `gitExecutable`).
    pub executable: &'a str,
    /// `--git-dir`: the common dir or a worktree's admin dir (`None` only for discovery).
    pub git_dir: Option<&'a str>,
    /// `--work-tree`, for a command inside a worktree.
    pub work_tree: Option<&'a str>,
    /// The subcommand and its arguments.
    pub args: &'a [String],
    /// A temporary index the step works in.
    pub index_file: Option<&'a str>,
    /// A candidate's commit: the parent's date (`git show -s --format=%ad --date=raw`).
    pub commit_date: Option<&'a str>,
    /// While the plugin starts ([`STARTUP_TIMEOUT_MS`]).
    pub startup: bool,
}

/// A git command to spawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The executable, then its arguments.
    pub argv: Vec<String>,
    /// How an error names the command: `git`, then the first six arguments after the flags.
    pub shown: String,
    /// Set on top of the parent's environment.
    pub env: BTreeMap<String, String>,
    /// The parent's variables starting with this are left out.
    pub unset_prefix: &'static str,
    /// Stdout bytes read at most.
    pub stdout_cap: u64,
    /// Stderr bytes kept (the tail).
    pub stderr_cap: u64,
    /// SIGTERM after this long.
    pub timeout_ms: u64,
    /// SIGKILL this long after the SIGTERM.
    pub grace_ms: u64,
}

/// The command for `step` (see the module documentation).
#[must_use]
pub fn command(step: &Step<'_>) -> Command {
    let mut argv = vec![step.executable.to_owned()];
    for flag in HARDENING {
        argv.extend(["-c".to_owned(), flag.to_owned()]);
    }
    if let Some(dir) = step.git_dir {
        argv.extend(["--git-dir".to_owned(), dir.to_owned()]);
    }
    if let Some(tree) = step.work_tree {
        argv.extend(["--work-tree".to_owned(), tree.to_owned()]);
    }
    argv.extend(step.args.iter().cloned());
    let named: Vec<&str> = argv[1 + 2 * HARDENING.len()..]
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("-c"))
        .take(6)
        .collect();
    let shown = format!("git {}", named.join(" "));
    let mut env: BTreeMap<String, String> = ENV
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let mut set = |k: &str, v: &str| env.insert(k.to_owned(), v.to_owned());
    if step.work_tree.is_some() {
        set("GIT_ATTR_SOURCE", "HEAD");
    }
    if let Some(index) = step.index_file {
        set("GIT_INDEX_FILE", index);
        set("GIT_LITERAL_PATHSPECS", "1");
    }
    if let Some(date) = step.commit_date {
        for (k, v) in [
            ("GIT_AUTHOR_NAME", AUTHOR_NAME),
            ("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL),
            ("GIT_COMMITTER_NAME", AUTHOR_NAME),
            ("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL),
            ("GIT_AUTHOR_DATE", date),
            ("GIT_COMMITTER_DATE", date),
        ] {
            set(k, v);
        }
    }
    Command {
        argv,
        shown,
        env,
        unset_prefix: "GIT_",
        stdout_cap: OUTPUT_CAP,
        stderr_cap: STDERR_CAP,
        timeout_ms: if step.startup {
            STARTUP_TIMEOUT_MS
        } else {
            TIMEOUT_MS
        },
        grace_ms: GRACE_MS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(c: &Command) -> String {
        format!(
            "{}\n{}\n{}\nunset {}* · stdout {} · stderr {} · timeout {} ms · grace {} ms\n",
            c.argv.join(" "),
            c.shown,
            c.env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
            c.unset_prefix,
            c.stdout_cap,
            c.stderr_cap,
            c.timeout_ms,
            c.grace_ms
        )
    }

    #[test]
    fn every_kind_of_step_as_spawned() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let discover = args(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
        let status = args(&["status", "--porcelain=v1", "-z"]);
        let commit = args(&["commit-tree", "t", "-p", "p", "-m", "m", "--no-gpg-sign"]);
        let steps = [
            Step {
                executable: "git",
                args: &discover,
                startup: true,
                ..Step::default()
            },
            Step {
                executable: "/usr/bin/git",
                git_dir: Some("/r/.git/worktrees/w"),
                work_tree: Some("/w"),
                args: &status,
                ..Step::default()
            },
            Step {
                executable: "git",
                git_dir: Some("/r/.git/worktrees/w"),
                work_tree: Some("/w"),
                args: &commit,
                index_file: Some("/tmp/i/index"),
                commit_date: Some("1700000000 +0000"),
                ..Step::default()
            },
        ];
        let text: String = steps.iter().map(|s| shown(&command(s))).collect();
        expect_test::expect_file!["../tests/snapshots/git-commands.txt"].assert_eq(&text);
    }
}
