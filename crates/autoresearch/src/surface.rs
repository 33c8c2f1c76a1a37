//! The mutable surface: which changed paths a candidate may contain.
//!
//! `mutable_globs` use the dialect of [`crate::glob`] (that of `globset` with a literal separator):
//! `*` and `?` stay within one path segment, `**` crosses segments, `{a,b}` and `[...]` classes
//! work, and a pattern is anchored at the worktree root (`src` matches only the path `src`; a
//! directory needs `src/**`).
//!
//! Some paths are protected even when a glob matches: any `.git` entry and git's own files
//! ([`GIT_FILES`], never re-permitted), dependency, build and toolchain files at any depth
//! ([`is_dependency_file`]), and the evaluator's real inputs ([`evaluator_inputs`]: the command
//! when it is a path, argument paths, the provenance labels that are paths). An explicit
//! allowlist entry re-permits a dependency file or an evaluator input. Paths git would refuse to
//! commit are never allowed either ([`git_refuses`]: names git's `verify_path` rejects, paths
//! over [`MAX_PATH_BYTES`], a directory replaced by a file or a symlink), so such a candidate
//! fails its round instead of failing the commit and with it the run. A candidate touching any
//! other path is a policy violation, whatever its metric would have said, and is never evaluated.
//! A fresh spec whose glob covers the evaluator's directory or a dependency file is refused up
//! front ([`covered_protections`]).

use crate::glob::Glob;
use crate::protocol::InputPath;
use std::fmt;

/// Dependency manifests, lockfiles and package-manager settings, and the build, test-runner and
/// toolchain files that run code or pick a program before the evaluator's own, by file name at
/// any depth, compared without case (NuGet, make and case-insensitive file systems read them so);
/// protected unless allowlisted as `dependencies`. [`DEPENDENCY_PATTERNS`], [`DEPENDENCY_PATHS`]
/// and [`DEPENDENCY_DIRS`] name more.
pub const DEPENDENCY_FILES: &[&str] = &[
    // JavaScript, TypeScript
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    ".yarnrc",
    ".yarnrc.yml",
    "bun.lock",
    "bun.lockb",
    "bunfig.toml",
    ".npmrc",
    ".nvmrc",
    ".node-version",
    "deno.json",
    "deno.lock",
    "tsconfig.json",
    // Rust
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "rust-toolchain",
    "rust-toolchain.toml",
    // Go
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    // Python
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "pdm.lock",
    "pip.conf",
    "tox.ini",
    "pytest.ini",
    "conftest.py",
    "sitecustomize.py",
    "usercustomize.py",
    ".python-version",
    // Ruby, PHP, JVM, .NET
    "Gemfile",
    "Gemfile.lock",
    ".ruby-version",
    "composer.json",
    "composer.lock",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "gradle.properties",
    "packages.lock.json",
    "Directory.Packages.props",
    "Directory.Build.props",
    "Directory.Build.targets",
    "NuGet.Config",
    // C, C++ and anything built by make
    "Makefile",
    "GNUmakefile",
    "CMakeLists.txt",
    // Toolchain versions and environments (asdf, mise, direnv, dotenv)
    ".tool-versions",
    ".envrc",
    ".env",
    // DSH
    "cordis.patch.yml",
];

/// Dependency and build files named by a prefix and a suffix (lower case; compared without
/// case), at any depth: `requirements-dev.txt`, `tsconfig.build.json`, `jest.config.ts`,
/// `.babelrc.json`, `.env.local`.
pub const DEPENDENCY_PATTERNS: &[(&str, &str)] = &[
    ("requirements", ".txt"),
    ("constraints", ".txt"),
    ("tsconfig.", ".json"),
    ("babel.config.", ""),
    (".babelrc", ""),
    ("jest.config.", ""),
    ("vitest.config.", ""),
    ("vite.config.", ""),
    (".env.", ""),
];

/// Dependency files named by their directory and name, at any depth: Cargo's `.cargo/config`
/// and `.cargo/config.toml`, Go's `vendor/modules.txt`.
pub const DEPENDENCY_PATHS: &[(&str, &str)] = &[
    (".cargo", "config"),
    (".cargo", "config.toml"),
    ("vendor", "modules.txt"),
];

/// Directories whose whole content is installed dependencies, at any depth.
pub const DEPENDENCY_DIRS: &[&str] = &["node_modules"];

/// One path of each rule that [`DEPENDENCY_FILES`] does not list: with those files, what
/// [`covered_protections`] probes a glob with when a fresh spec is read.
pub(crate) const DEPENDENCY_EXAMPLES: &[&str] = &[
    "requirements.txt",
    "constraints.txt",
    "tsconfig.base.json",
    "babel.config.js",
    ".babelrc.json",
    "jest.config.js",
    "vitest.config.ts",
    "vite.config.ts",
    ".env.local",
    ".cargo/config.toml",
    "vendor/modules.txt",
    "node_modules/x/index.js",
];

/// Git's own files in the tree (attributes route files through filters, modules and LFS config
/// point git at other programs and places); protected at any depth, never re-permitted.
pub const GIT_FILES: &[&str] = &[".gitattributes", ".gitmodules", ".lfsconfig"];

/// Whether a worktree path is a dependency file: its last segment is one of
/// [`DEPENDENCY_FILES`] or fits one of [`DEPENDENCY_PATTERNS`], its last two segments are one of
/// [`DEPENDENCY_PATHS`], or a directory on its way is one of [`DEPENDENCY_DIRS`] (all without
/// case).
pub fn is_dependency_file(path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    let name = segments[segments.len() - 1].to_ascii_lowercase();
    let dir = segments.len().checked_sub(2).map(|i| segments[i]);
    DEPENDENCY_FILES
        .iter()
        .any(|f| f.eq_ignore_ascii_case(&name))
        || DEPENDENCY_PATTERNS.iter().any(|(prefix, suffix)| {
            name.strip_prefix(prefix)
                .is_some_and(|rest| rest.ends_with(suffix))
        })
        || DEPENDENCY_PATHS.iter().any(|(d, n)| {
            dir.is_some_and(|dir| dir.eq_ignore_ascii_case(d)) && n.eq_ignore_ascii_case(&name)
        })
        || segments[..segments.len() - 1]
            .iter()
            .any(|s| DEPENDENCY_DIRS.iter().any(|d| d.eq_ignore_ascii_case(s)))
}

/// Whether a worktree path is a `.git` entry or one of [`GIT_FILES`].
pub fn is_git_path(path: &str) -> bool {
    path.split('/').any(|s| s == ".git")
        || GIT_FILES.contains(&path.rsplit('/').next().unwrap_or(path))
}

/// Longest changed path a candidate may hold, in bytes. git sets no limit of its own, but the
/// system limits a whole path, the worktree's included (`PATH_MAX`: 4,096 bytes on Linux, 1,024
/// on macOS), and git fails past it; no real source tree needs longer paths.
pub const MAX_PATH_BYTES: usize = 1024;

/// Code points HFS+ ignores in a file name, so `.g\u{200c}it` is `.git` there (git's
/// `next_hfs_char`).
const HFS_IGNORED: &[char] = &[
    '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
    '\u{202e}', '\u{206a}', '\u{206b}', '\u{206c}', '\u{206d}', '\u{206e}', '\u{206f}', '\u{feff}',
];

/// Whether git refuses to add `path` to an index ("invalid path"), as its `verify_path` does
/// with `core.protectNTFS` (on by default everywhere) and `core.protectHFS` (on by default on
/// macOS) both on, for a file or a symlink (`git status` does not tell them apart):
/// - a segment that is empty, `.` or `..`;
/// - `.git` in any case, or a name NTFS reads as `.git`: `.git` or its short name `git~1` (any
///   case) followed only by dots and spaces, or by `:` and an alternate data stream; a backslash
///   separates names there;
/// - a name HFS+ reads as `.git`: `.git` (any case) with code points HFS+ ignores anywhere in it;
/// - the same forms of `.gitmodules` (refused for a symlink): NTFS's short names `gitmod~1` to
///   `~4`, or `gi7eba~N` and its shorter prefixes with more digits, eight characters in all.
pub fn git_refuses(path: &str) -> bool {
    let hfs = |segment: &str, needle: &str| {
        let folded: String = segment
            .chars()
            .filter(|c| !HFS_IGNORED.contains(c))
            .collect();
        folded.eq_ignore_ascii_case(needle)
    };
    let ntfs = |name: &str| {
        let stem = name
            .split(':')
            .next()
            .unwrap_or(name)
            .trim_end_matches(['.', ' ']);
        let short = stem.as_bytes();
        let fallback = short.len() == 8
            && short.iter().position(|b| *b == b'~').is_some_and(|t| {
                t <= 6
                    && short[..t].eq_ignore_ascii_case(&b"gi7eba"[..t])
                    && (b'1'..=b'9').contains(&short[t + 1])
                    && short[t + 2..].iter().all(u8::is_ascii_digit)
            });
        [".git", "git~1", ".gitmodules"]
            .iter()
            .any(|n| stem.eq_ignore_ascii_case(n))
            || (short.len() == 8
                && short[..6].eq_ignore_ascii_case(b"gitmod")
                && short[6] == b'~'
                && (b'1'..=b'4').contains(&short[7]))
            || fallback
    };
    path.split('/').any(|segment| {
        matches!(segment, "" | "." | "..")
            || segment.split('\\').any(ntfs)
            || hfs(segment, ".git")
            || hfs(segment, ".gitmodules")
    })
}

/// File names probed in a directory the evaluator runs from or is read from: a glob that
/// matches one of them lets a candidate add a module the evaluator would import before its own
/// (`json.py` beside `eval.py`). Python finds a module as source, as a sourceless `.pyc`, as a
/// package directory, or as an extension module, and a hash-based `.pyc` in `__pycache__` that
/// is not checked stands in for its unchanged source; Node loads a directory's `index.js`, Lua
/// its `init.lua`, Perl `.pm` modules.
const SHADOW_PROBES: &[&str] = &[
    "json.py",
    "json.pyc",
    "json/__init__.py",
    "json/__init__.pyc",
    "__pycache__/util.cpython-313.pyc",
    "json.cpython-313-x86_64-linux-gnu.so",
    "json.abi3.so",
    "json.pyd",
    "index.js",
    "util.js",
    "util.mjs",
    "util.cjs",
    "util.ts",
    "util/index.js",
    "util.rb",
    "util.pm",
    "util.pl",
    "util.lua",
    "util/init.lua",
    "util.sh",
    "util.go",
    "util.rs",
    "lib.so",
];

/// A mutable glob that covers a protected place, found when a fresh spec is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Index in `mutable_globs`.
    pub index: usize,
    /// The glob.
    pub glob: String,
    /// What it covers.
    pub covers: Covered,
}

/// The protected place a glob covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Covered {
    /// A directory the evaluator runs in or reads from, and the probe file name it matched.
    EvaluatorDir {
        /// The directory (`.` for the root).
        dir: String,
        /// The probe path the glob matched.
        probe: String,
    },
    /// Root dependency files it matches.
    Dependencies(Vec<String>),
}

impl Coverage {
    /// The rule, naming the protected path and the allowlist that re-permits it.
    pub fn rule(&self) -> String {
        match &self.covers {
            Covered::EvaluatorDir { dir, probe } => format!(
                "covers the evaluator's directory {dir:?} (it matches {probe:?}, a file the \
                 evaluator could import before its own); narrow the glob, or name the directory \
                 in exceptional_allowlists.evaluators"
            ),
            Covered::Dependencies(paths) => {
                let shown = paths.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
                let more = match paths.len() {
                    n if n > 5 => format!(" and {} more", n - 5),
                    _ => String::new(),
                };
                format!(
                    "covers dependency files ({shown}{more}); narrow the glob, or name each in \
                     exceptional_allowlists.dependencies"
                )
            }
        }
    }
}

/// The mutable globs that cover a directory the evaluator runs in or reads from (its cwd and
/// the directory of each input it reads from the worktree), or root dependency files, minus what
/// the allowlists re-permit. (A dependency file deeper down is still refused in any candidate.)
pub fn covered_protections(
    surface: &MutableSurface,
    command: &str,
    args: &[String],
    cwd: &str,
    allow: &Allowlists,
) -> Vec<Coverage> {
    let parent = |p: &str| {
        p.rsplit_once('/')
            .map_or(".".to_owned(), |(d, _)| d.to_owned())
    };
    let mut evaluator_dirs: Vec<String> = vec![cwd.to_owned()];
    for input in evaluator_inputs(command, args, cwd, &[]) {
        if let InputPath::Worktree(p) = input {
            evaluator_dirs.push(parent(&p));
        }
    }
    evaluator_dirs.sort();
    evaluator_dirs.dedup();
    let join = |dir: &str, name: &str| {
        if dir == "." {
            name.to_owned()
        } else {
            format!("{dir}/{name}")
        }
    };
    let mut out = Vec::new();
    for (index, (glob, compiled)) in surface.globs.iter().zip(&surface.compiled).enumerate() {
        let shadow = evaluator_dirs
            .iter()
            .filter(|dir| !allow.evaluators.contains(dir))
            .find_map(|dir| {
                SHADOW_PROBES
                    .iter()
                    .map(|n| join(dir, n))
                    .find(|p| compiled.is_match(p))
                    .map(|probe| (dir.clone(), probe))
            });
        if let Some((dir, probe)) = shadow {
            out.push(Coverage {
                index,
                glob: glob.clone(),
                covers: Covered::EvaluatorDir { dir, probe },
            });
        }
        let manifests: Vec<String> = DEPENDENCY_FILES
            .iter()
            .chain(DEPENDENCY_EXAMPLES)
            .map(|n| (*n).to_owned())
            .filter(|p| compiled.is_match(p) && !listed(&allow.dependencies, p))
            .collect();
        if !manifests.is_empty() {
            out.push(Coverage {
                index,
                glob: glob.clone(),
                covers: Covered::Dependencies(manifests),
            });
        }
    }
    out
}

/// Paths re-permitted although a protection rule covers them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Allowlists {
    /// Dependency manifests and lockfiles (`package.json`, `Cargo.lock`, …).
    pub dependencies: Vec<String>,
    /// Evaluator inputs the proposer may nevertheless change.
    pub evaluators: Vec<String>,
    /// Dataset inputs the proposer may nevertheless change.
    pub datasets: Vec<String>,
    /// Submodule (gitlink) paths.
    pub submodules: Vec<String>,
    /// Git config that may define programs: a key (`filter.lfs.smudge`) or a whole file
    /// (`.git/config`, `.git/config.worktree`); see the `git_config` module.
    pub git_config: Vec<String>,
}

/// Why `path` is not a safe relative path (or glob), if it is not.
pub fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() || path.trim() != path {
        return Some("must be a non-empty relative path without surrounding whitespace");
    }
    if path.contains(['\0', '\r', '\n']) {
        return Some("must not contain NUL, CR or LF");
    }
    if path.contains('\\') {
        return Some("must use / as the separator (no backslash)");
    }
    if path.starts_with('/') {
        return Some("must be relative (no leading /)");
    }
    let b = path.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return Some("must be relative (no drive letter)");
    }
    if path.split('/').any(|seg| seg == "..") {
        return Some("must not contain a .. segment");
    }
    None
}

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
pub fn evaluator_inputs(
    command: &str,
    args: &[String],
    cwd: &str,
    provenance: &[&str],
) -> Vec<InputPath> {
    let mut out = Vec::new();
    if command.contains('/') {
        out.push(resolve(cwd, command));
    }
    for arg in args {
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
                text::clip_within(entry, 80)
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
    /// `protected-evaluator-input`, or one that git could not commit: `git-invalid-path` (see
    /// [`git_refuses`]), `path-too-long` (over [`MAX_PATH_BYTES`]), `directory-replaced` (a
    /// changed path that other changed paths sit under: a directory replaced by a file or a
    /// symlink, which git refuses to look beyond).
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

/// Whether `path` is `root` or inside it.
fn under(path: &str, root: &str) -> bool {
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Whether an allowlist names `path` or a directory it is in.
fn listed(list: &[String], path: &str) -> bool {
    list.iter().any(|root| under(path, root))
}

/// Whether a sorted list holds a path inside `dir`.
fn has_inside(sorted: &[String], dir: &str) -> bool {
    let prefix = format!("{dir}/");
    let at = sorted.partition_point(|p| p.as_str() < prefix.as_str());
    sorted.get(at).is_some_and(|p| p.starts_with(&prefix))
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
    let mut violations = Vec::new();
    for path in &changes.changed {
        let reason = if is_git_path(path) {
            Some("protected-git")
        } else if git_refuses(path) {
            Some("git-invalid-path")
        } else if path.len() > MAX_PATH_BYTES {
            Some("path-too-long")
        } else if has_inside(&changes.changed, path) {
            Some("directory-replaced")
        } else if is_dependency_file(path) {
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
