//! The driver contract: [`Effect`]s the core asks for and [`Input`]s the driver feeds back.
//!
//! **API boundary.** Every effect carries an [`EffectId`] (except [`Effect::Interrupt`] and
//! [`Effect::Report`]); the driver performs it and answers with exactly one input naming that id,
//! or [`Input::Failed`] when it could not perform it. The core never assumes an effect succeeded.
//! A driver makes no decisions: it performs, reports facts, and feeds them back. This module is a
//! leaf: it names no other module of the crate, and every type an effect or input carries is here.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// Identifies one effect; results name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EffectId(pub u64);

/// Something the driver must do. Each variant says what to do and what to answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Resolve `repository` (default: the caller's cwd; a relative value against the **caller's**
    /// cwd, never the host process's) and run `git rev-parse --show-toplevel`,
    /// `--git-common-dir` (absolute) and `--verify HEAD^{commit}`. Read-only.
    /// Answer [`Input::Discovered`].
    Discover {
        /// Id.
        id: EffectId,
        /// Repository as the spec gave it.
        repository: Option<String>,
    },
    /// Open (creating owner-only if needed) the tracker at `path`, run `sql::PRAGMAS` and
    /// the migrations from `sql::migration_plan`. Answer [`Input::Done`].
    OpenTracker {
        /// Id.
        id: EffectId,
        /// Absolute path of the database file.
        path: String,
    },
    /// Run `statements` in order in one `BEGIN IMMEDIATE` transaction (roll back on any error).
    /// Answer [`Input::Persisted`] with each statement's change count.
    Persist {
        /// Id.
        id: EffectId,
        /// Statements with named parameters.
        statements: Vec<Statement>,
    },
    /// Run `sql::LOAD_RUN`, `LOAD_EXPERIMENTS`, `LOAD_ATTEMPTS` and `LOAD_ARTIFACTS` with
    /// `:run_id`. Answer [`Input::Loaded`] (`None` when there is no such run).
    LoadRun {
        /// Id.
        id: EffectId,
        /// The run.
        run_id: String,
    },
    /// Create the run's worktree, detached at `start_commit`, and the new branch `branch` at
    /// `start_commit` (`git worktree add --detach <path> <start>`, `git branch <branch> <start>`).
    /// Never touches the caller's checkout or existing branches: an existing branch or path is an
    /// error unless it is exactly this run's (same path, branch at `start_commit`), which makes the
    /// effect idempotent for recovery. Without `branch` (a slot's scratch worktree under
    /// `parallelism`) no branch is made, and an existing worktree at `path` counts as done.
    /// Answer [`Input::Done`].
    CreateWorktree {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        path: String,
        /// Full branch name (without `refs/heads/`), `None` for a slot's worktree.
        branch: Option<String>,
        /// 40-hex commit.
        start_commit: String,
    },
    /// SHA-256 each path that exists as a regular file (relative paths against `worktree`; do not
    /// follow a final symlink). Answer [`Input::Hashed`] with one entry per requested path.
    HashInputs {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        worktree: String,
        /// Paths to hash.
        paths: Vec<InputPath>,
    },
    /// Spawn `argv` without a shell in `cwd`, stdin ignored, in its own process group, with
    /// `env` merged onto the scrubbed parent environment. Kill the group after `timeout_ms`
    /// (SIGTERM, `grace_ms`, SIGKILL), keep each stream's tail up to its cap, write the raw
    /// streams as owner-only artifacts under `artifact_dir`, and wait for the group to be gone.
    /// Answer [`Input::Spawned`] once spawned (optional, but recovery needs it), then
    /// [`Input::Exited`]; [`Input::Failed`] if it could not be spawned at all.
    RunEvaluator {
        /// Id.
        id: EffectId,
        /// Attempt id (also in `env` as `DSH_AUTORESEARCH_ATTEMPT`, a marker the driver can find
        /// the process group by).
        attempt_id: String,
        /// Program and arguments, exactly as given.
        argv: Vec<String>,
        /// Absolute path of the worktree it evaluates (its slot's).
        worktree: String,
        /// The commit checked out there: after the evaluation, every tracked file must still
        /// equal it (else a `tracked-changed` anomaly per path).
        commit: String,
        /// Absolute working directory inside that worktree.
        cwd: String,
        /// Environment overrides.
        env: BTreeMap<String, String>,
        /// Per-attempt timeout.
        timeout_ms: u64,
        /// Grace between SIGTERM and SIGKILL.
        grace_ms: u64,
        /// Stdout cap in bytes (tail kept).
        stdout_cap: u64,
        /// Stderr cap in bytes (tail kept).
        stderr_cap: u64,
        /// Directory for this attempt's artifacts.
        artifact_dir: String,
        /// The run's state directory: where the driver can, the process may not write there
        /// (its own `worktree` excepted).
        state_dir: String,
    },
    /// Run one proposal round in `worktree`: the headless runner spawns `argv` (like the
    /// evaluator, with `handoff` on stdin) and answers [`Input::ProposerExited`]; the DSH shim
    /// runs a delegated agent with `handoff` as its prompt and answers [`Input::Proposed`] with the
    /// validated report. Either may answer [`Input::Failed`].
    RunProposer {
        /// Id.
        id: EffectId,
        /// Absolute worktree path (the proposer's cwd).
        worktree: String,
        /// The proposer program (headless runner), `None` inside DSH.
        argv: Option<Vec<String>>,
        /// JSON handoff (bounded).
        handoff: String,
        /// Timeout for the round.
        timeout_ms: u64,
        /// Grace between SIGTERM and SIGKILL.
        grace_ms: u64,
        /// The run's state directory, as for [`Effect::RunEvaluator`].
        state_dir: String,
        /// The run has a holdout: the DSH shim keeps the child agent's file tools inside
        /// `worktree` (`tool::outside_worktree`), so the holdout's files stay unseen. The
        /// headless runner's proposer is a program and cannot be held so.
        confined: bool,
    },
    /// Check the worktree's `.git` link (restore it if it changed), walk the worktree for what
    /// status cannot show, read the git config, and run `git status --porcelain=v1 -z
    /// --untracked-files=all --ignored=matching --no-renames` with an explicit git dir and work
    /// tree. Answer [`Input::Changes`] with its raw stdout and the [`WorktreeFacts`].
    ListChanges {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        worktree: String,
    },
    /// Commit exactly `paths` (additions, edits and deletions) on top of `parent` without
    /// touching any branch: a temporary index from `parent`, `git add -A -- <paths>`,
    /// `write-tree`, `commit-tree` with a fixed author; then detach the worktree at the new commit
    /// and `clean -ffdx` (nothing unvalidated survives into the evaluation). Before answering,
    /// point `keep_ref` at the new commit (`git update-ref`, moving it if it exists), so the
    /// candidate stays reachable (and `git gc` keeps it) whatever is decided. Answer
    /// [`Input::Committed`].
    Commit {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        worktree: String,
        /// Parent commit (the current best).
        parent: String,
        /// Validated paths.
        paths: Vec<String>,
        /// Commit message.
        message: String,
        /// The full ref that keeps the candidate (`refs/autoresearch/<run_id>/candidate-<n>`).
        keep_ref: String,
    },
    /// Put the worktree exactly at `commit`, detached, whatever its HEAD and contents are now:
    /// `checkout --detach --force <commit>`, `reset --hard`, `clean -ffdx`. Used after every
    /// evaluation (so evaluator byproducts never reach a later diff), on reject, on cancel and in
    /// recovery. Answer [`Input::Done`].
    CheckoutClean {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        worktree: String,
        /// 40-hex commit.
        commit: String,
    },
    /// Fast-forward the run branch: `git update-ref refs/heads/<branch> <to> <from>`. Already at
    /// `to` counts as done (idempotent for recovery); any other value is an error. The only branch
    /// the core ever moves. Answer [`Input::Done`].
    FastForwardRunBranch {
        /// Id.
        id: EffectId,
        /// Run branch.
        branch: String,
        /// Expected current commit.
        from: String,
        /// New commit (a descendant of `from`).
        to: String,
    },
    /// Make sure the process group of an interrupted attempt is gone: if a process with `pid`
    /// still has `start_time` (or carries the marker in its environment), kill the group (SIGTERM,
    /// grace, SIGKILL) and wait. Answer [`Input::Terminated`] with whether it is provably gone.
    TerminateProcessGroup {
        /// Id.
        id: EffectId,
        /// Attempt id (the `DSH_AUTORESEARCH_ATTEMPT` marker).
        attempt_id: String,
        /// Leader pid, if it was recorded.
        pid: Option<u32>,
        /// Process group, if it was recorded.
        pgid: Option<u32>,
        /// Leader start time (`/proc/<pid>/stat` field 22), if it was recorded.
        start_time: Option<String>,
        /// Grace between SIGTERM and SIGKILL.
        grace_ms: u64,
    },
    /// Stop every process carrying the run's proposer marker (`DSH_AUTORESEARCH_PROPOSER` =
    /// the run id): what a dead host's headless proposers left behind, before recovery touches
    /// the worktree. Answer [`Input::Terminated`] with whether they are provably gone.
    TerminateProposers {
        /// Id.
        id: EffectId,
        /// Grace between SIGTERM and SIGKILL.
        grace_ms: u64,
    },
    /// Tell whether the process of the host that last drove a run (`host`, as stored: its `pid`
    /// and `startTime`) is still alive. The core asks only about a host record of this machine,
    /// boot and PID namespace. Answer [`Input::HostProbed`].
    ProbeHost {
        /// Id.
        id: EffectId,
        /// The stored host JSON.
        host: String,
    },
    /// Abort the outstanding effect `target` (an evaluator or proposer): terminate its process
    /// group or cancel the agent. No answer of its own; `target` then completes as usual.
    Interrupt {
        /// The effect to abort.
        target: EffectId,
    },
    /// Write `contents` to `path` atomically (temp file, fsync, rename, 0600). Answer
    /// [`Input::Done`].
    ExportTsv {
        /// Id.
        id: EffectId,
        /// Absolute path.
        path: String,
        /// TSV text.
        contents: String,
    },
    /// Read the retention cleanup's rows: `sql::LIST_RETENTION_RUNS` and
    /// `sql::LIST_RETENTION_ARTIFACTS` (no parameters). Answer [`Input::Retention`].
    LoadRetention {
        /// Id.
        id: EffectId,
    },
    /// Retention: unlink each of `files` (one already gone counts as removed; never through a
    /// symlink: unlink removes the link itself), then remove each of `dirs`, in order, when it
    /// is empty (a missing or non-empty one is left as it is). Every path lies under the state
    /// directory. Answer [`Input::Done`], or [`Input::Failed`] when a file could not be removed.
    RemoveFiles {
        /// Id.
        id: EffectId,
        /// Absolute file paths.
        files: Vec<String>,
        /// Absolute directory paths, deepest first.
        dirs: Vec<String>,
    },
    /// `git worktree remove --force <path>` of an ended run (a worktree already gone is only
    /// pruned), for `retainWorktrees: false` or `cleanupWorktreesOnSuccess`. Answer
    /// [`Input::Done`].
    RemoveWorktree {
        /// Id.
        id: EffectId,
        /// Absolute worktree path.
        path: String,
    },
    /// The run is over: return this result to the caller. Emitted exactly once, last.
    Report(Box<RunResult>),
}

impl Effect {
    /// The id the answer must name (`None` for [`Effect::Interrupt`] and [`Effect::Report`]).
    pub fn id(&self) -> Option<EffectId> {
        match self {
            Effect::Discover { id, .. }
            | Effect::OpenTracker { id, .. }
            | Effect::Persist { id, .. }
            | Effect::LoadRun { id, .. }
            | Effect::CreateWorktree { id, .. }
            | Effect::HashInputs { id, .. }
            | Effect::RunEvaluator { id, .. }
            | Effect::RunProposer { id, .. }
            | Effect::ListChanges { id, .. }
            | Effect::Commit { id, .. }
            | Effect::CheckoutClean { id, .. }
            | Effect::FastForwardRunBranch { id, .. }
            | Effect::TerminateProcessGroup { id, .. }
            | Effect::TerminateProposers { id, .. }
            | Effect::ProbeHost { id, .. }
            | Effect::ExportTsv { id, .. }
            | Effect::LoadRetention { id }
            | Effect::RemoveFiles { id, .. }
            | Effect::RemoveWorktree { id, .. } => Some(*id),
            Effect::Interrupt { .. } | Effect::Report(_) => None,
        }
    }
}

/// Facts about the repository, from [`Effect::Discover`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepoFacts {
    /// Absolute top-level directory.
    pub toplevel: String,
    /// Absolute git common directory.
    pub git_common_dir: String,
    /// HEAD commit, 40 lowercase hex.
    pub head: String,
    /// Every entry of the repository's own git config (system and global config are never
    /// read), includes followed.
    pub git_config: Vec<ConfigEntry>,
    /// The host driving this run, as JSON `{hostname, bootId, pid, startTime}` (stored with the
    /// run so that a later host can ask whether it is dead); none when the driver has no /proc.
    pub host: Option<String>,
    /// Live runs of the original dsh-autoresearch in this repository (its lock database): they
    /// count toward `max_active_runs_per_repository`.
    pub other_live_runs: u32,
}

/// One git config entry, as `git config --list --show-origin` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigEntry {
    /// Where git read it (`file:/abs/.git/config`, …).
    pub origin: String,
    /// The key, as git prints it (section and variable lower-cased, subsection as written).
    pub key: String,
}

/// Something in the worktree that `git status` does not show, found by the driver's own walk
/// (no symlink followed) and its check of the worktree's `.git` link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// The worktree's `.git` was not the file written when the worktree was created; the
    /// driver has put that file back.
    GitLinkChanged,
    /// A `.git` entry below the worktree root (a nested repository or a crafted link).
    NestedGit,
    /// A file name that is not valid UTF-8 (git and the tracker cannot name it faithfully).
    UndecodableName,
    /// A file inside a submodule (gitlink) path, which `git status` and `git clean` skip.
    InsideGitlink,
    /// After an evaluation, a tracked file no longer equals the evaluated commit's (the
    /// evaluated code, or something it left running, changed what was measured).
    TrackedChanged,
    /// The worktree path is no longer the directory git made (renamed, and a symlink or another
    /// file put in its place); nothing was done through it.
    WorktreeReplaced,
}

impl AnomalyKind {
    /// Stable reason, as evidence shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            AnomalyKind::GitLinkChanged => "git-link-changed",
            AnomalyKind::NestedGit => "nested-git",
            AnomalyKind::UndecodableName => "undecodable-name",
            AnomalyKind::InsideGitlink => "inside-gitlink",
            AnomalyKind::TrackedChanged => "tracked-changed",
            AnomalyKind::WorktreeReplaced => "worktree-replaced",
        }
    }

    /// The kind named by [`AnomalyKind::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        [
            AnomalyKind::GitLinkChanged,
            AnomalyKind::NestedGit,
            AnomalyKind::UndecodableName,
            AnomalyKind::InsideGitlink,
            AnomalyKind::TrackedChanged,
            AnomalyKind::WorktreeReplaced,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One [`AnomalyKind`] at one path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Anomaly {
    /// What was found.
    pub kind: AnomalyKind,
    /// Worktree-relative path (an undecodable byte shown as `\xNN`).
    pub path: String,
}

/// What the driver saw of the worktree and its git config after a proposer or an evaluator ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorktreeFacts {
    /// Anomalies, sorted.
    pub anomalies: Vec<Anomaly>,
    /// The repository's git config as it stands now (the worktree's own config included).
    pub git_config: Vec<ConfigEntry>,
}

/// One hashed path, from [`Effect::HashInputs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashedFile {
    /// The path as requested.
    pub path: String,
    /// Lowercase hex SHA-256, or `None` when it is missing or not a regular file.
    pub sha256: Option<String>,
}

/// The spawned process group, for recovery evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// Leader pid.
    pub pid: u32,
    /// Process group id.
    pub pgid: u32,
    /// Leader start time (`/proc/<pid>/stat` field 22) where available.
    pub start_time: Option<String>,
}

/// A captured output stream stored as an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactFact {
    /// `stdout` or `stderr`.
    pub kind: String,
    /// Where the driver stored it (opaque to the core).
    pub location: String,
    /// Bytes written.
    pub size_bytes: u64,
    /// SHA-256 of the bytes written (the raw stream, never a redacted view).
    pub sha256: String,
    /// Whether the cap cut the stream.
    pub truncated: bool,
}

/// How a process ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// Exit code, if it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal name, if any.
    pub signal: Option<String>,
    /// Killed by the timeout.
    pub timed_out: bool,
    /// Killed by an [`Effect::Interrupt`].
    pub cancelled: bool,
    /// Whether the whole process group is provably gone.
    pub quiescent: bool,
    /// Tail of stdout (at most the cap), raw.
    pub stdout_tail: String,
    /// Whether stdout exceeded the cap.
    pub stdout_truncated: bool,
    /// Tail of stderr, raw (at most the cap; the core keeps a bounded excerpt).
    pub stderr_tail: String,
    /// Artifacts written.
    pub artifacts: Vec<ArtifactFact>,
    /// How the driver kept the process's descendants in reach: `cgroup` (a cgroup v2 group
    /// per process: everything in it is killed and proven gone) or `process-scan` (its process
    /// group, marker variable and descendants seen by polling `/proc`: best effort).
    pub containment: String,
    /// The worktree after an evaluator (empty for a proposer, whose facts come with
    /// [`Input::Changes`]).
    pub worktree: WorktreeFacts,
}

impl Effect {
    /// The effect's `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Effect::Discover { .. } => "discover",
            Effect::OpenTracker { .. } => "openTracker",
            Effect::Persist { .. } => "persist",
            Effect::LoadRun { .. } => "loadRun",
            Effect::CreateWorktree { .. } => "createWorktree",
            Effect::HashInputs { .. } => "hashInputs",
            Effect::RunEvaluator { .. } => "runEvaluator",
            Effect::RunProposer { .. } => "runProposer",
            Effect::ListChanges { .. } => "listChanges",
            Effect::Commit { .. } => "commit",
            Effect::CheckoutClean { .. } => "checkoutClean",
            Effect::FastForwardRunBranch { .. } => "fastForward",
            Effect::TerminateProcessGroup { .. } => "terminateProcessGroup",
            Effect::TerminateProposers { .. } => "terminateProposers",
            Effect::ProbeHost { .. } => "probeHost",
            Effect::Interrupt { .. } => "interrupt",
            Effect::ExportTsv { .. } => "exportTsv",
            Effect::LoadRetention { .. } => "loadRetention",
            Effect::RemoveFiles { .. } => "removeFiles",
            Effect::RemoveWorktree { .. } => "removeWorktree",
            Effect::Report(_) => "report",
        }
    }

    /// The `type`s of answer the effect takes (`failed` too, for every effect that takes one;
    /// none for `interrupt` and `report`). `packages/autoresearch/wire/run.json` is generated
    /// from it (`tests/wire.rs`), and every test's fake driver checks its answers against it.
    pub fn answers(&self) -> &'static [&'static str] {
        match self {
            Effect::Discover { .. } => &["discovered", "failed"],
            Effect::OpenTracker { .. }
            | Effect::CreateWorktree { .. }
            | Effect::CheckoutClean { .. }
            | Effect::FastForwardRunBranch { .. }
            | Effect::ExportTsv { .. }
            | Effect::RemoveFiles { .. }
            | Effect::RemoveWorktree { .. } => &["done", "failed"],
            Effect::Persist { .. } => &["persisted", "failed"],
            Effect::LoadRun { .. } => &["loaded", "failed"],
            Effect::HashInputs { .. } => &["hashed", "failed"],
            Effect::RunEvaluator { .. } => &["spawned", "exited", "failed"],
            Effect::RunProposer { .. } => &["proposerExited", "proposed", "failed"],
            Effect::ListChanges { .. } => &["changes", "failed"],
            Effect::Commit { .. } => &["committed", "failed"],
            Effect::TerminateProcessGroup { .. } | Effect::TerminateProposers { .. } => {
                &["terminated", "failed"]
            }
            Effect::ProbeHost { .. } => &["hostProbed", "failed"],
            Effect::LoadRetention { .. } => &["retention", "failed"],
            Effect::Interrupt { .. } | Effect::Report(_) => &[],
        }
    }
}

impl Input {
    /// The input's `type` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Input::Cancel { .. } => "cancel",
            Input::Discovered { .. } => "discovered",
            Input::Done { .. } => "done",
            Input::Persisted { .. } => "persisted",
            Input::Loaded { .. } => "loaded",
            Input::Retention { .. } => "retention",
            Input::Hashed { .. } => "hashed",
            Input::Spawned { .. } => "spawned",
            Input::Exited { .. } => "exited",
            Input::ProposerExited { .. } => "proposerExited",
            Input::Proposed { .. } => "proposed",
            Input::Changes { .. } => "changes",
            Input::Committed { .. } => "committed",
            Input::HostProbed { .. } => "hostProbed",
            Input::Terminated { .. } => "terminated",
            Input::Failed { .. } => "failed",
        }
    }
}

/// What the driver feeds the core.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// Stop the run (job kill, signal, unload). Idempotent; the first reason wins.
    Cancel {
        /// Why.
        reason: String,
    },
    /// Answer to [`Effect::Discover`].
    Discovered {
        /// Id.
        id: EffectId,
        /// Facts.
        facts: RepoFacts,
    },
    /// Success of an effect without data.
    Done {
        /// Id.
        id: EffectId,
    },
    /// Answer to [`Effect::Persist`].
    Persisted {
        /// Id.
        id: EffectId,
        /// Rows changed by each statement, in order.
        changes: Vec<u64>,
    },
    /// Answer to [`Effect::LoadRun`].
    Loaded {
        /// Id.
        id: EffectId,
        /// The rows, or `None` when the run does not exist.
        rows: Option<Box<StoredRows>>,
    },
    /// Answer to [`Effect::LoadRetention`].
    Retention {
        /// Id.
        id: EffectId,
        /// The rows.
        rows: RetentionRows,
    },
    /// Answer to [`Effect::HashInputs`].
    Hashed {
        /// Id.
        id: EffectId,
        /// One entry per requested path.
        files: Vec<HashedFile>,
    },
    /// The evaluator of [`Effect::RunEvaluator`] is running.
    Spawned {
        /// Id.
        id: EffectId,
        /// Its process group.
        process: ProcessIdentity,
    },
    /// Answer to [`Effect::RunEvaluator`].
    Exited {
        /// Id.
        id: EffectId,
        /// How it ended.
        outcome: ProcessOutcome,
    },
    /// Answer to [`Effect::RunProposer`] from the headless runner (the core parses the report).
    ProposerExited {
        /// Id.
        id: EffectId,
        /// How it ended.
        outcome: ProcessOutcome,
    },
    /// Answer to [`Effect::RunProposer`] from the DSH shim (the agent's validated report).
    Proposed {
        /// Id.
        id: EffectId,
        /// The report.
        report: ProposalReport,
    },
    /// Answer to [`Effect::ListChanges`].
    Changes {
        /// Id.
        id: EffectId,
        /// Raw `git status --porcelain=v1 -z` stdout.
        porcelain_z: String,
        /// What `git status` cannot show, and the git config now.
        worktree: WorktreeFacts,
    },
    /// Answer to [`Effect::Commit`].
    Committed {
        /// Id.
        id: EffectId,
        /// The new commit, 40 lowercase hex.
        commit: String,
    },
    /// Answer to [`Effect::ProbeHost`]: `Some(true)` alive, `Some(false)` provably dead (another
    /// boot, or no such process), `None` when it cannot tell (another machine, unreadable).
    HostProbed {
        /// Id.
        id: EffectId,
        /// Whether the host is alive.
        alive: Option<bool>,
    },
    /// Answer to [`Effect::TerminateProcessGroup`].
    Terminated {
        /// Id.
        id: EffectId,
        /// Whether the group is provably gone.
        gone: bool,
    },
    /// The driver could not perform the effect.
    Failed {
        /// Id.
        id: EffectId,
        /// What went wrong (bounded by the driver).
        error: String,
    },
}

/// The rows a resume loads (`sql::LOAD_RUN` and friends).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct StoredRows {
    /// The run.
    pub run: StoredRun,
    /// Its experiments.
    #[serde(default, deserialize_with = "list")]
    pub experiments: Vec<StoredExperiment>,
    /// Its attempts.
    #[serde(default, deserialize_with = "list")]
    pub attempts: Vec<StoredAttempt>,
    /// Its artifacts.
    #[serde(default, deserialize_with = "list")]
    pub artifacts: Vec<StoredArtifact>,
}

/// A `runs` row.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[allow(missing_docs)]
pub struct StoredRun {
    pub run_id: String,
    pub repository_id: String,
    pub run_tag: String,
    pub branch: String,
    pub worktree: String,
    pub start_commit: String,
    pub policy_json: String,
    pub policy_sha256: String,
    pub provenance_json: Option<String>,
    pub provenance_sha256: Option<String>,
    pub state: String,
    pub baseline_commit: Option<String>,
    pub baseline_metric: Option<f64>,
    pub best_commit: Option<String>,
    pub best_metric: Option<f64>,
    pub best_experiment_id: Option<String>,
    #[serde(default, deserialize_with = "zero_if_null")]
    pub consecutive_failures: i64,
    pub terminal_reason: Option<String>,
    pub blocker_json: Option<String>,
    #[serde(default, deserialize_with = "flag")]
    pub quiescent: bool,
    #[serde(default, deserialize_with = "flag")]
    pub lock_held: bool,
    /// The host that last drove the run (JSON: `{hostname, bootId, pid, startTime}`).
    pub host_json: Option<String>,
    /// When a later host found this run's host dead and reconciled it.
    pub interrupted_at: Option<i64>,
    /// When retention removed the terminal run's worktree.
    pub worktree_removed_at: Option<i64>,
    /// When retention removed the terminal run's TSV export.
    pub tsv_removed_at: Option<i64>,
}

/// An `experiments` row.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[allow(missing_docs)]
pub struct StoredExperiment {
    pub experiment_id: String,
    pub ordinal: i64,
    pub kind: String,
    pub state: String,
    pub parent_commit: String,
    pub candidate_commit: Option<String>,
    pub hypothesis: Option<String>,
    pub summary: Option<String>,
    pub changed_paths_json: Option<String>,
    pub metric: Option<f64>,
    pub decision: Option<String>,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    /// The kept candidate of its generation that beat this improving one (schema 4).
    #[serde(default)]
    pub superseded_by: Option<String>,
}

/// An `attempts` row (the columns recovery needs).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[allow(missing_docs)]
pub struct StoredAttempt {
    pub attempt_id: String,
    pub experiment_id: String,
    pub ordinal: i64,
    pub state: String,
    pub pid: Option<i64>,
    pub pgid: Option<i64>,
    pub process_start_time: Option<String>,
    #[serde(default, deserialize_with = "optional_flag")]
    pub quiescent: Option<bool>,
    /// A successful evaluation's metric (schema 3; absent in older rows).
    #[serde(default)]
    pub metric: Option<f64>,
    /// Which measurement it is (schema 5; `sql::PURPOSE_CONFIRM` or absent).
    #[serde(default)]
    pub purpose: Option<String>,
}

/// An `artifacts` row.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[allow(missing_docs)]
pub struct StoredArtifact {
    pub artifact_id: String,
    pub experiment_id: String,
    pub attempt_id: String,
    pub kind: String,
    pub location: String,
    #[serde(default, deserialize_with = "zero_if_null")]
    pub size_bytes: i64,
    pub sha256: String,
    #[serde(default, deserialize_with = "flag")]
    pub truncated: bool,
    /// When retention removed the artifact's file.
    pub removed_at: Option<i64>,
}

/// A run as the retention cleanup reads it (`sql::LIST_RETENTION_RUNS`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[allow(missing_docs)]
pub struct RetentionRun {
    pub run_id: String,
    pub state: String,
    pub worktree: String,
    pub terminal_at: Option<i64>,
    pub worktree_removed_at: Option<i64>,
    pub tsv_removed_at: Option<i64>,
    #[serde(default, deserialize_with = "flag")]
    pub lock_held: bool,
}

/// An artifact not yet removed, of an ended run (`sql::LIST_RETENTION_ARTIFACTS`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[allow(missing_docs)]
pub struct RetentionArtifact {
    pub artifact_id: String,
    pub run_id: String,
    pub attempt_id: String,
    pub location: String,
    /// The attempt's failure code (`None`: the evaluation succeeded).
    pub attempt_failure_code: Option<String>,
}

/// What the retention cleanup reads from the tracker.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct RetentionRows {
    /// Ended runs with something left to remove (live ones included: the core skips them).
    #[serde(default, deserialize_with = "list")]
    pub runs: Vec<RetentionRun>,
    /// Their artifacts not yet removed.
    #[serde(default, deserialize_with = "list")]
    pub artifacts: Vec<RetentionArtifact>,
}

/// What retention removed of one run (its tracker rows stay, marked).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// The worktree (its branch and refs stay).
    pub worktree: bool,
    /// The TSV export.
    pub tsv: bool,
    /// The ids of the artifacts whose files are gone.
    pub artifacts: std::collections::BTreeSet<String>,
}

impl Removed {
    /// Whether nothing was removed.
    pub fn is_empty(&self) -> bool {
        !self.worktree && !self.tsv && self.artifacts.is_empty()
    }

    /// What the stored rows say was removed.
    pub fn of(rows: &StoredRows) -> Removed {
        Removed {
            worktree: rows.run.worktree_removed_at.is_some(),
            tsv: rows.run.tsv_removed_at.is_some(),
            artifacts: rows
                .artifacts
                .iter()
                .filter(|a| a.removed_at.is_some())
                .map(|a| a.artifact_id.clone())
                .collect(),
        }
    }
}

/// Driver misuse (a bug in the driver, never a world failure).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverError {
    /// No outstanding effect has this id.
    UnknownEffect(EffectId),
    /// The input does not answer the kind of effect with this id.
    WrongAnswer {
        /// The effect.
        id: EffectId,
        /// What kind of answer it expects.
        expected: &'static str,
    },
    /// The run already reported its result.
    Finished,
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriverError::UnknownEffect(id) => write!(f, "no outstanding effect {}", id.0),
            DriverError::WrongAnswer { id, expected } => {
                write!(f, "effect {} expects {expected}", id.0)
            }
            DriverError::Finished => write!(f, "the run has already reported its result"),
        }
    }
}

// ----- what effects and inputs carry -----

/// What a proposal round reports: why this change, and what it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProposalReport {
    /// The hypothesis the round tested.
    pub hypothesis: String,
    /// What the round changed.
    pub summary: String,
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

/// A bound SQL value.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    /// `NULL`.
    Null,
    /// `INTEGER`.
    Integer(i64),
    /// `REAL` (always finite).
    Real(f64),
    /// `TEXT`.
    Text(String),
}

impl From<&str> for SqlValue {
    fn from(s: &str) -> Self {
        SqlValue::Text(s.to_owned())
    }
}
impl From<String> for SqlValue {
    fn from(s: String) -> Self {
        SqlValue::Text(s)
    }
}
impl From<i64> for SqlValue {
    fn from(n: i64) -> Self {
        SqlValue::Integer(n)
    }
}
impl From<u64> for SqlValue {
    fn from(n: u64) -> Self {
        SqlValue::Integer(i64::try_from(n).unwrap_or(i64::MAX))
    }
}
impl From<u32> for SqlValue {
    fn from(n: u32) -> Self {
        SqlValue::Integer(i64::from(n))
    }
}
impl From<bool> for SqlValue {
    fn from(b: bool) -> Self {
        SqlValue::Integer(i64::from(b))
    }
}
impl From<f64> for SqlValue {
    fn from(f: f64) -> Self {
        if f.is_finite() {
            SqlValue::Real(f)
        } else {
            SqlValue::Null
        }
    }
}
impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(o: Option<T>) -> Self {
        o.map_or(SqlValue::Null, Into::into)
    }
}

/// One statement with its named parameters (`:name` in the text, `name` here, without the colon).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// One of this module's constants.
    pub sql: &'static str,
    /// Every parameter the text names, exactly once.
    pub params: Vec<(&'static str, SqlValue)>,
}

// ----- the run result -----

/// Terminal status of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The target was met.
    TargetReached,
    /// The candidate budget was used up.
    BudgetLimited,
    /// The baseline produced no metric.
    BaselineBlocked,
    /// The run cannot continue safely (evidence attached), or it was refused before starting.
    Blocked,
    /// Too many consecutive rounds failed.
    RoundFailed,
    /// The run was cancelled.
    Cancelled,
}

/// A measured commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// 40-hex commit.
    pub commit: String,
    /// Its metric.
    pub metric: f64,
    /// The experiment that measured it.
    pub experiment_id: String,
}

/// Why a run stopped short, with evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocker {
    /// Stable code (`worktree-failed`, `policy-mismatch`, `not-quiescent`, …).
    pub code: String,
    /// Human message.
    pub message: String,
    /// Evidence lines.
    pub evidence: Vec<String>,
}

/// Counts over a run's experiments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Candidate experiments started (the budget used).
    pub experiments_started: u32,
    /// Candidate experiments finished.
    pub experiments_completed: u32,
    /// Accepted candidates.
    pub accepted: u32,
    /// Rejected candidates.
    pub rejected: u32,
    /// Candidates that improved on the best but lost to a better one of their generation.
    pub superseded: u32,
    /// Failed candidate rounds (proposer, empty diff, evaluator failure).
    pub failed: u32,
    /// Policy violations.
    pub policy_violations: u32,
    /// Evaluator attempts, the baseline's included.
    pub attempts: u32,
}

/// One experiment as rendered.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentRow {
    /// Id.
    pub experiment_id: String,
    /// 0 for the baseline.
    pub ordinal: u32,
    /// `baseline` or `candidate`.
    pub kind: &'static str,
    /// Experiment state (`superseded`: rejected because a better one of its generation was kept).
    pub state: String,
    /// Parent commit.
    pub parent_commit: String,
    /// Candidate commit.
    pub candidate_commit: Option<String>,
    /// Metric: the mean of `confirmation` when the candidate was confirmed, else of `samples`.
    pub metric: Option<f64>,
    /// Each successful screening evaluation's metric (each of `repeats` under the single-test
    /// rule).
    pub samples: Vec<f64>,
    /// Each fresh confirmation evaluation's metric (empty unless its generation chose it).
    pub confirmation: Vec<f64>,
    /// The mean of its holdout evaluations (the baseline and kept candidates, with `holdout`;
    /// `None` when none ran or one failed).
    pub holdout: Option<f64>,
    /// `accept`, `reject` or `fail`.
    pub decision: Option<String>,
    /// For a `superseded` candidate: the kept candidate of its generation that beat it.
    pub superseded_by: Option<String>,
    /// Failure code.
    pub failure_code: Option<String>,
    /// Failure message.
    pub failure_message: Option<String>,
    /// Proposer hypothesis.
    pub hypothesis: Option<String>,
    /// Proposer summary.
    pub summary: Option<String>,
}

/// An artifact reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactRef {
    /// Id.
    pub artifact_id: String,
    /// `stdout` or `stderr`.
    pub kind: String,
    /// Location (opaque).
    pub location: String,
    /// Size.
    pub size_bytes: u64,
    /// SHA-256.
    pub sha256: String,
}

/// A finished run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// Status.
    pub status: Status,
    /// Run id.
    pub run_id: String,
    /// Run branch (empty before it was allocated).
    pub branch: String,
    /// Worktree path (empty before it was allocated).
    pub worktree: String,
    /// Tracker path (empty before discovery).
    pub tracker: String,
    /// Whether the terminal state is durable (false for refusals before any write).
    pub persisted: bool,
    /// Metric name.
    pub metric_name: String,
    /// Direction.
    pub direction: &'static str,
    /// Target.
    pub target: Option<f64>,
    /// Evaluations per experiment.
    pub repeats: u32,
    /// Baseline.
    pub baseline: Option<Point>,
    /// Best so far.
    pub best: Option<Point>,
    /// Counts.
    pub counts: Counts,
    /// Every experiment, by ordinal (rendering bounds it).
    pub experiments: Vec<ExperimentRow>,
    /// Every artifact (rendering bounds it).
    pub artifacts: Vec<ArtifactRef>,
    /// Blocker evidence (for every status but the two successes; a cancel carries its reason).
    pub blocker: Option<Blocker>,
    /// Non-fatal problems (TSV export or a retention removal failed).
    pub warnings: Vec<String>,
    /// What retention removed of this run.
    pub removed: Removed,
    /// Set only for a run that has not ended (a read-only `show` of a live or interrupted run):
    /// its stored state. `status` is then a placeholder and rendered as this state instead.
    pub state: Option<String>,
}

/// A SQLite 0/1 (or a JSON boolean) as a flag; null is false.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(optional_flag(d)?.unwrap_or(false))
}

/// A SQLite 0/1 (or a JSON boolean), or null.
fn optional_flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(d)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Bool(b)) => Ok(Some(b)),
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(0) => Ok(Some(false)),
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(1) => Ok(Some(true)),
        Some(other) => Err(D::Error::custom(format!(
            "{other} is not a flag (0, 1, true or false)"
        ))),
    }
}

/// An integer column that may be null (as 0).
fn zero_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Ok(Option::<i64>::deserialize(d)?.unwrap_or(0))
}

/// A list that may be null or missing (as empty).
fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}
