//! The mutable surface: which changed paths a candidate may contain.
//!
//! `mutable_globs` use the dialect of [`crate::glob`] (that of `globset` with a literal separator):
//! `*` and `?` stay within one path segment, `**` crosses segments, `{a,b}` and `[...]` classes
//! work, and a pattern is anchored at the worktree root (`src` matches only the path `src`; a
//! directory needs `src/**`).
//!
//! Some paths are protected even when a glob matches: anything under `.git`, `.gitmodules`, root
//! dependency manifests, and the evaluator's real inputs ([`evaluator_inputs`]: the command when it
//! is a path, argument paths, the provenance labels that are paths). An explicit allowlist entry
//! re-permits a protected path. A candidate touching any other path is a policy violation,
//! whatever its metric would have said, and is never evaluated.

use crate::glob::Glob;
use crate::spec::{Allowlists, Evaluation, path_problem};
use std::fmt;

/// Root-level dependency manifests and lockfiles, protected unless allowlisted as `dependencies`.
pub const DEPENDENCY_FILES: &[&str] = &[
    "package.json",
    "package-lock.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "bun.lockb",
    "Cargo.lock",
    "cordis.patch.yml",
];

/// Compiled `mutable_globs`.
#[derive(Clone)]
pub struct MutableSurface {
    globs: Vec<String>,
    compiled: Vec<Glob>,
}

impl fmt::Debug for MutableSurface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("MutableSurface").field(&self.globs).finish()
    }
}

impl PartialEq for MutableSurface {
    fn eq(&self, other: &Self) -> bool {
        self.globs == other.globs
    }
}

impl MutableSurface {
    /// Compiles safe relative glob patterns; on error returns the index and the rule broken.
    pub fn new(globs: &[String]) -> Result<Self, (usize, String)> {
        let mut compiled = Vec::with_capacity(globs.len());
        for (i, g) in globs.iter().enumerate() {
            if let Some(rule) = path_problem(g) {
                return Err((i, rule.to_owned()));
            }
            compiled.push(Glob::new(g).map_err(|e| (i, e.rule()))?);
        }
        Ok(MutableSurface {
            globs: globs.to_vec(),
            compiled,
        })
    }

    /// The patterns as given.
    pub fn globs(&self) -> &[String] {
        &self.globs
    }

    /// Whether a worktree-relative path matches a pattern.
    pub fn matches(&self, path: &str) -> bool {
        self.compiled.iter().any(|g| g.is_match(path))
    }
}

/// A path the evaluator reads, as the driver must hash it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum InputPath {
    /// Relative to the worktree root (normalized); protected from candidates.
    Worktree(String),
    /// Absolute, or relative to the worktree root but escaping it; hashed, not protected (a
    /// candidate cannot change it through the worktree).
    External(String),
}

impl InputPath {
    /// The path text the driver resolves (relative ones against the worktree root).
    pub fn as_str(&self) -> &str {
        match self {
            InputPath::Worktree(p) | InputPath::External(p) => p,
        }
    }
}

/// The evaluator's real inputs: the command if it is a path; every argument (or `--flag=value`
/// value) that is absolute or contains `/` or `.`; and the provenance labels that are safe relative
/// paths containing `/` or `.`. Relative ones resolve against `evaluation.cwd`, labels against the worktree root.
/// Sorted and de-duplicated. The driver hashes those that exist as regular files.
pub fn evaluator_inputs(evaluation: &Evaluation, provenance: &[&str]) -> Vec<InputPath> {
    let mut out = Vec::new();
    let cwd = &evaluation.cwd;
    if evaluation.argv.command.contains('/') {
        out.push(resolve(cwd, &evaluation.argv.command));
    }
    for arg in &evaluation.argv.args {
        let value = if arg.starts_with('-') {
            match arg.split_once('=') {
                Some((_, v)) => v,
                None => continue,
            }
        } else {
            arg.as_str()
        };
        if value.is_empty() || value.contains('\0') {
            continue;
        }
        if value.starts_with('/') || value.contains('/') || value.contains('.') {
            out.push(resolve(cwd, value));
        }
    }
    for label in provenance {
        if path_problem(label).is_none() && (label.contains('/') || label.contains('.')) {
            out.push(resolve(".", label));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn resolve(cwd: &str, path: &str) -> InputPath {
    if path.starts_with('/') {
        return InputPath::External(path.to_owned());
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in cwd.split('/').chain(path.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    let joined = if cwd == "." {
                        path.to_owned()
                    } else {
                        format!("{cwd}/{path}")
                    };
                    return InputPath::External(joined);
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        InputPath::External(path.to_owned())
    } else {
        InputPath::Worktree(parts.join("/"))
    }
}

/// Changed paths in the worktree, from `git status --porcelain=v1 -z --untracked-files=all
/// --ignored=matching --no-renames`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorktreeChanges {
    /// Staged, unstaged and untracked paths (both sides of a rename), sorted.
    pub changed: Vec<String>,
    /// Ignored untracked paths, sorted. They are never committed and are removed before the
    /// evaluator runs (`clean -ffdx`), so they cannot influence the metric and are not violations.
    pub ignored: Vec<String>,
}

/// Parses `git status --porcelain=v1 -z` output.
pub fn parse_status_z(stdout: &str) -> Result<WorktreeChanges, String> {
    let mut out = WorktreeChanges::default();
    let mut entries = stdout.split('\0').filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        if entry.len() < 4 || entry.as_bytes()[2] != b' ' || !entry.is_char_boundary(3) {
            return Err(format!(
                "malformed status entry {:?}",
                crate::metric::clip(entry, 80)
            ));
        }
        let (xy, path) = (&entry[..2], &entry[3..]);
        if xy == "!!" {
            out.ignored.push(path.to_owned());
            continue;
        }
        out.changed.push(path.to_owned());
        if xy.starts_with('R') || xy.starts_with('C') {
            match entries.next() {
                Some(from) => out.changed.push(from.to_owned()),
                None => return Err("rename entry without its source path".into()),
            }
        }
    }
    out.changed.sort();
    out.changed.dedup();
    out.ignored.sort();
    out.ignored.dedup();
    Ok(out)
}

/// Why one changed path is not allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathViolation {
    /// The path.
    pub path: String,
    /// Stable reason: `outside-mutable-globs`, `protected-git`, `protected-dependency`,
    /// `protected-evaluator-input`.
    pub reason: &'static str,
}

/// The outcome of checking a candidate's changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CandidateCheck {
    /// Every changed path is allowed; these are the paths to commit.
    Valid(Vec<String>),
    /// Nothing changed.
    Empty,
    /// Some paths are not allowed (all offending paths listed).
    Violation(Vec<PathViolation>),
}

/// Checks changed paths against the surface, the protections and the allowlists.
pub fn check_candidate(
    changes: &WorktreeChanges,
    surface: &MutableSurface,
    protected_inputs: &[InputPath],
    allow: &Allowlists,
) -> CandidateCheck {
    if changes.changed.is_empty() {
        return CandidateCheck::Empty;
    }
    let under = |path: &str, root: &str| path == root || path.starts_with(&format!("{root}/"));
    let listed = |list: &[String], path: &str| list.iter().any(|p| under(path, p));
    let mut violations = Vec::new();
    for path in &changes.changed {
        let reason = if path.split('/').any(|s| s == ".git") || path == ".gitmodules" {
            (!listed(&allow.submodules, path) && !listed(&allow.git_config, path))
                .then_some("protected-git")
        } else if DEPENDENCY_FILES.contains(&path.as_str()) {
            (!listed(&allow.dependencies, path)).then_some("protected-dependency")
        } else if protected_inputs
            .iter()
            .any(|i| matches!(i, InputPath::Worktree(p) if under(path, p)))
        {
            (!listed(&allow.evaluators, path) && !listed(&allow.datasets, path))
                .then_some("protected-evaluator-input")
        } else if surface.matches(path)
            || listed(&allow.dependencies, path)
            || listed(&allow.submodules, path)
        {
            None
        } else {
            Some("outside-mutable-globs")
        };
        if let Some(reason) = reason {
            violations.push(PathViolation {
                path: path.clone(),
                reason,
            });
        }
    }
    if violations.is_empty() {
        CandidateCheck::Valid(changes.changed.clone())
    } else {
        CandidateCheck::Violation(violations)
    }
}
