//! The durable tracker's SQL: schema migrations, pragmas and every statement, as constants with
//! named parameters. The core builds [`Statement`]s (text plus bound values) inside
//! `Effect::Persist`; the driver runs them on one SQLite database per repository state
//! root (`<git-common-dir>/<state_root>/tracker.sqlite`) and never writes SQL of its own.
//!
//! Driver contract for opening: create the directory owner-only (0700), open the file (0600), run
//! [`PRAGMAS`], read `PRAGMA user_version`, ask [`migration_plan`] which [`migrations`] to apply,
//! and apply each one inside `BEGIN IMMEDIATE … COMMIT` followed by `PRAGMA user_version = N`.
//! A database newer than [`SCHEMA_VERSION`] is refused. Every `Effect::Persist` is one
//! `BEGIN IMMEDIATE` transaction; the driver answers with each statement's change count.
//!
//! The database enforces the run transition table itself (the `run_transitions` table plus a
//! trigger), and a terminal run's state can never change again.

use crate::protocol::{SqlValue, Statement};
use crate::state::{RunState, transition_allowed};

/// The schema version the latest migration produces.
pub const SCHEMA_VERSION: i64 = 5;

/// How long a connection waits for another's write lock: the one place it is said.
macro_rules! busy_timeout {
    () => {
        "PRAGMA busy_timeout = 5000;"
    };
}

/// Connection settings, run on every open before migrating.
pub const PRAGMAS: &str = concat!(
    "PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
",
    busy_timeout!()
);

/// Run on every read-only open: the runner's `list` and `show`, the original's files.
pub const READ_ONLY_PRAGMAS: &str = busy_timeout!();

/// One schema migration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The `user_version` after it.
    pub version: i64,
    /// Statements to run (a batch; no parameters).
    pub sql: String,
}

/// Every migration, oldest first.
pub fn migrations() -> Vec<Migration> {
    vec![
        Migration {
            version: 1,
            sql: V1.replace("{run_transitions}", &transition_rows()),
        },
        Migration {
            version: 2,
            sql: V2.to_owned(),
        },
        Migration {
            version: 3,
            sql: V3.to_owned(),
        },
        Migration {
            version: 4,
            sql: V4.to_owned(),
        },
        Migration {
            version: 5,
            sql: V5.to_owned(),
        },
    ]
}

/// The `run_transitions` rows: [`transition_allowed`]'s table, so the database enforces the
/// very table the core follows.
fn transition_rows() -> String {
    let mut rows = Vec::new();
    for from in RunState::ALL {
        for to in RunState::ALL {
            if transition_allowed(from, to) {
                rows.push(format!("  ('{}', '{}')", from.as_str(), to.as_str()));
            }
        }
    }
    rows.join(",\n")
}

/// Why a database cannot be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaTooNew {
    /// Its `user_version`.
    pub found: i64,
}

impl std::fmt::Display for SchemaTooNew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the tracker's schema version {} is newer than this dsh-autoresearch understands ({SCHEMA_VERSION}); upgrade the package",
            self.found
        )
    }
}

/// The migrations to apply to a database at `user_version == current`.
pub fn migration_plan(current: i64) -> Result<Vec<Migration>, SchemaTooNew> {
    if !(0..=SCHEMA_VERSION).contains(&current) {
        return Err(SchemaTooNew { found: current });
    }
    Ok(migrations()
        .into_iter()
        .filter(|m| m.version > current)
        .collect())
}

const V1: &str = "
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  repository_id TEXT NOT NULL,
  run_tag TEXT NOT NULL,
  branch TEXT NOT NULL UNIQUE,
  worktree TEXT NOT NULL UNIQUE,
  start_commit TEXT NOT NULL CHECK (length(start_commit) = 40),
  policy_json TEXT NOT NULL,
  policy_sha256 TEXT NOT NULL CHECK (length(policy_sha256) = 64),
  provenance_json TEXT,
  provenance_sha256 TEXT,
  state TEXT NOT NULL CHECK (state IN ('initializing', 'baseline-running', 'ready', 'proposing',
    'candidate-prepared', 'candidate-running', 'deciding', 'target-reached', 'budget-limited',
    'baseline-blocked', 'blocked', 'round-failed', 'cancelled')),
  baseline_commit TEXT,
  baseline_metric REAL,
  best_commit TEXT,
  best_metric REAL,
  best_experiment_id TEXT,
  consecutive_failures INTEGER NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  terminal_reason TEXT,
  blocker_json TEXT,
  quiescent INTEGER NOT NULL DEFAULT 1 CHECK (quiescent IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  terminal_at INTEGER
) STRICT;

CREATE TABLE experiments (
  experiment_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  ordinal INTEGER NOT NULL CHECK (ordinal >= 0),
  kind TEXT NOT NULL CHECK (kind IN ('baseline', 'candidate')),
  state TEXT NOT NULL CHECK (state IN ('proposing', 'prepared', 'running', 'evaluated',
    'accepted', 'rejected', 'failed', 'policy-violation', 'cancelled')),
  parent_commit TEXT NOT NULL,
  candidate_commit TEXT,
  hypothesis TEXT,
  summary TEXT,
  changed_paths_json TEXT,
  metric REAL,
  decision TEXT CHECK (decision IS NULL OR decision IN ('accept', 'reject', 'fail')),
  failure_code TEXT,
  failure_message TEXT,
  evidence_json TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (run_id, ordinal),
  CHECK (kind = 'candidate' OR ordinal = 0),
  CHECK (state NOT IN ('accepted', 'rejected') OR (metric IS NOT NULL AND failure_code IS NULL))
) STRICT;

CREATE TABLE attempts (
  attempt_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  experiment_id TEXT NOT NULL REFERENCES experiments (experiment_id),
  ordinal INTEGER NOT NULL CHECK (ordinal >= 1),
  state TEXT NOT NULL CHECK (state IN ('running', 'exited', 'interrupted')),
  argv_json TEXT NOT NULL,
  cwd TEXT NOT NULL,
  env_json TEXT NOT NULL,
  provenance_sha256 TEXT NOT NULL,
  timeout_ms INTEGER NOT NULL CHECK (timeout_ms > 0),
  pid INTEGER,
  pgid INTEGER,
  process_start_time TEXT,
  exit_code INTEGER,
  signal TEXT,
  timed_out INTEGER CHECK (timed_out IS NULL OR timed_out IN (0, 1)),
  quiescent INTEGER CHECK (quiescent IS NULL OR quiescent IN (0, 1)),
  failure_code TEXT,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  UNIQUE (experiment_id, ordinal)
) STRICT;

CREATE TABLE artifacts (
  artifact_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id),
  experiment_id TEXT NOT NULL REFERENCES experiments (experiment_id),
  attempt_id TEXT NOT NULL REFERENCES attempts (attempt_id),
  kind TEXT NOT NULL CHECK (kind IN ('stdout', 'stderr')),
  location TEXT NOT NULL,
  size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  truncated INTEGER NOT NULL CHECK (truncated IN (0, 1)),
  created_at INTEGER NOT NULL,
  UNIQUE (run_id, location)
) STRICT;

CREATE TABLE locks (
  run_id TEXT PRIMARY KEY,
  repository_id TEXT NOT NULL,
  run_tag TEXT NOT NULL,
  acquired_at INTEGER NOT NULL,
  released_at INTEGER
) STRICT;
CREATE UNIQUE INDEX locks_live_tag ON locks (repository_id, run_tag) WHERE released_at IS NULL;

CREATE TABLE run_transitions (
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  PRIMARY KEY (from_state, to_state)
) STRICT, WITHOUT ROWID;
INSERT INTO run_transitions (from_state, to_state) VALUES
{run_transitions};

CREATE TRIGGER runs_transition_checked BEFORE UPDATE OF state ON runs
WHEN NEW.state IS NOT OLD.state AND NOT EXISTS (
  SELECT 1 FROM run_transitions WHERE from_state = OLD.state AND to_state = NEW.state)
BEGIN
  SELECT RAISE(ABORT, 'autoresearch: illegal run transition');
END;

CREATE TRIGGER runs_identity_immutable BEFORE UPDATE OF run_id, repository_id, run_tag, branch,
  worktree, start_commit, policy_json, policy_sha256 ON runs
BEGIN
  SELECT RAISE(ABORT, 'autoresearch: run identity is immutable');
END;
";

/// The host that drives a run (so a later host can prove it dead and reconcile the run), when a
/// terminal run's worktree, TSV and artifacts were removed by retention (the rows stay, marked).
const V2: &str = "
ALTER TABLE runs ADD COLUMN host_json TEXT;
ALTER TABLE runs ADD COLUMN interrupted_at INTEGER;
ALTER TABLE runs ADD COLUMN worktree_removed_at INTEGER;
ALTER TABLE runs ADD COLUMN tsv_removed_at INTEGER;
ALTER TABLE artifacts ADD COLUMN removed_at INTEGER;
";

/// Each attempt's own metric (`repeats`: an experiment's metric is the mean of its attempts').
const V3: &str = "
ALTER TABLE attempts ADD COLUMN metric REAL;
";

/// `parallelism`: a candidate that improved on the best but lost to a better one of its
/// generation stays `rejected`, naming the winner (an earlier version reads it as rejected).
const V4: &str = "
ALTER TABLE experiments ADD COLUMN superseded_by TEXT;
";

/// Which measurement an attempt is: NULL for a screening sample (or one of `repeats` under the
/// single-test rule, and every attempt of an earlier version), [`PURPOSE_CONFIRM`] for a fresh
/// sample of a generation's chosen candidate (`stats::judge`), [`PURPOSE_HOLDOUT`] for a run of
/// the holdout evaluator.
const V5: &str = "
ALTER TABLE attempts ADD COLUMN purpose TEXT;
";

/// `attempts.purpose` of a confirmation sample.
pub const PURPOSE_CONFIRM: &str = "confirm";
/// `attempts.purpose` of a holdout evaluation.
pub const PURPOSE_HOLDOUT: &str = "holdout";

/// The statements the core writes with: each a type whose fields are exactly the `:name`
/// parameters of its text (in order of first use), so a call site names every parameter once.
macro_rules! statements {
    ($($(#[$doc:meta])* $name:ident { $($param:ident),* } = $sql:expr;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Debug, PartialEq)]
            #[allow(missing_docs)]
            pub struct $name { $(pub $param: SqlValue),* }

            impl $name {
                /// The statement's text.
                pub const SQL: &'static str = $sql;
            }

            impl From<$name> for Statement {
                fn from(statement: $name) -> Statement {
                    Statement {
                        sql: $name::SQL,
                        params: vec![$((stringify!($param), statement.$param)),*],
                    }
                }
            }
        )*

        /// Every write statement's text and its fields, for tests and driver-side preparation.
        pub const WRITES: &[(&str, &[&str])] = &[$(($name::SQL, &[$(stringify!($param)),*])),*];
    };
}

statements! {
    /// Takes a repository lock for a new run. Changes 0 rows when the repository already has
    /// `:max_active` live runs; fails with a UNIQUE constraint when the tag is live.
    AcquireLock { run_id, repository_id, run_tag, now, max_active } = "INSERT INTO locks (run_id, repository_id, run_tag, acquired_at, released_at)
SELECT :run_id, :repository_id, :run_tag, :now, NULL
WHERE (SELECT count(*) FROM locks WHERE repository_id = :repository_id AND released_at IS NULL) < :max_active";

    /// Releases a run's lock (idempotent).
    ReleaseLock { now, run_id } = "UPDATE locks SET released_at = :now WHERE run_id = :run_id AND released_at IS NULL";

    /// Inserts a fresh run in `initializing`, only if it holds a live lock (run in the same
    /// transaction as [`AcquireLock`], so a lock never exists without its run).
    InsertRun { run_id, repository_id, run_tag, branch, worktree, start_commit, policy_json, policy_sha256, now } = "INSERT INTO runs (run_id, repository_id, run_tag, branch, worktree, start_commit,
  policy_json, policy_sha256, state, created_at, updated_at)
SELECT :run_id, :repository_id, :run_tag, :branch, :worktree, :start_commit, :policy_json,
  :policy_sha256, 'initializing', :now, :now
WHERE EXISTS (SELECT 1 FROM locks WHERE run_id = :run_id AND released_at IS NULL)";

    /// Moves a run from `:from` to `:to` (compare-and-set: changes 0 rows if the state moved).
    SetRunState { to, now, run_id, from } = "UPDATE runs SET state = :to, updated_at = :now WHERE run_id = :run_id AND state = :from";

    /// Freezes the run's evaluator provenance.
    SetProvenance { provenance_json, provenance_sha256, now, run_id } = "UPDATE runs SET provenance_json = :provenance_json,
  provenance_sha256 = :provenance_sha256, updated_at = :now WHERE run_id = :run_id";

    /// Records the baseline and makes it the first best.
    SetBaseline { commit, metric, experiment_id, now, run_id } = "UPDATE runs SET baseline_commit = :commit, baseline_metric = :metric,
  best_commit = :commit, best_metric = :metric, best_experiment_id = :experiment_id,
  updated_at = :now WHERE run_id = :run_id";

    /// Records a new best (after an accepted candidate).
    SetBest { commit, metric, experiment_id, now, run_id } = "UPDATE runs SET best_commit = :commit, best_metric = :metric,
  best_experiment_id = :experiment_id, updated_at = :now WHERE run_id = :run_id";

    /// Marks a rejected candidate as superseded by its generation's kept one.
    SetSuperseded { superseded_by, now, experiment_id } = "UPDATE experiments SET superseded_by = :superseded_by,
  updated_at = :now WHERE experiment_id = :experiment_id";

    /// Records the consecutive failed-round count.
    SetFailures { consecutive_failures, now, run_id } = "UPDATE runs SET consecutive_failures = :consecutive_failures,
  updated_at = :now WHERE run_id = :run_id";

    /// Moves a run into a terminal state with its reason and blocker evidence.
    SetTerminal { to, reason, blocker_json, quiescent, now, run_id, from } = "UPDATE runs SET state = :to, terminal_reason = :reason,
  blocker_json = :blocker_json, quiescent = :quiescent, terminal_at = :now, updated_at = :now
WHERE run_id = :run_id AND state = :from";

    /// Marks a terminal run's processes as proven gone (recovery of a non-quiescent run).
    SetQuiescent { now, run_id } = "UPDATE runs SET quiescent = 1, updated_at = :now WHERE run_id = :run_id";

    /// Inserts an experiment.
    InsertExperiment { experiment_id, run_id, ordinal, kind, state, parent_commit, candidate_commit, now } = "INSERT INTO experiments (experiment_id, run_id, ordinal, kind, state,
  parent_commit, candidate_commit, created_at, updated_at)
VALUES (:experiment_id, :run_id, :ordinal, :kind, :state, :parent_commit, :candidate_commit, :now, :now)";

    /// Sets an experiment's state.
    SetExperimentState { state, now, experiment_id } = "UPDATE experiments SET state = :state, updated_at = :now WHERE experiment_id = :experiment_id";

    /// Records a proposal's report and validated paths (experiment → `prepared`).
    SetExperimentProposal { hypothesis, summary, changed_paths_json, now, experiment_id } = "UPDATE experiments SET state = 'prepared', hypothesis = :hypothesis,
  summary = :summary, changed_paths_json = :changed_paths_json, updated_at = :now
WHERE experiment_id = :experiment_id";

    /// Records a candidate's commit.
    SetExperimentCommit { candidate_commit, now, experiment_id } = "UPDATE experiments SET candidate_commit = :candidate_commit,
  updated_at = :now WHERE experiment_id = :experiment_id";

    /// Records an experiment's final (or measured) facts.
    FinishExperiment { state, metric, decision, failure_code, failure_message, evidence_json, hypothesis, summary, now, experiment_id } = "UPDATE experiments SET state = :state, metric = :metric,
  decision = :decision, failure_code = :failure_code, failure_message = :failure_message,
  evidence_json = :evidence_json, hypothesis = coalesce(:hypothesis, hypothesis),
  summary = coalesce(:summary, summary), updated_at = :now
WHERE experiment_id = :experiment_id";

    /// Records an evaluator attempt's spawn intent (before spawning).
    InsertAttempt { attempt_id, run_id, experiment_id, ordinal, argv_json, cwd, env_json, provenance_sha256, timeout_ms, purpose, now } = "INSERT INTO attempts (attempt_id, run_id, experiment_id, ordinal, state,
  argv_json, cwd, env_json, provenance_sha256, timeout_ms, purpose, started_at)
VALUES (:attempt_id, :run_id, :experiment_id, :ordinal, 'running', :argv_json, :cwd, :env_json,
  :provenance_sha256, :timeout_ms, :purpose, :now)";

    /// Records the spawned process group (evidence for recovery).
    SetAttemptProcess { pid, pgid, process_start_time, attempt_id } = "UPDATE attempts SET pid = :pid, pgid = :pgid,
  process_start_time = :process_start_time WHERE attempt_id = :attempt_id";

    /// Records an attempt's exit facts and its metric (a successful evaluation's).
    FinishAttempt { state, exit_code, signal, timed_out, quiescent, failure_code, metric, now, attempt_id } = "UPDATE attempts SET state = :state, exit_code = :exit_code,
  signal = :signal, timed_out = :timed_out, quiescent = :quiescent, failure_code = :failure_code,
  metric = :metric, ended_at = :now WHERE attempt_id = :attempt_id AND state = 'running'";

    /// Records that an attempt's process group is proven gone.
    MarkAttemptQuiescent { attempt_id } = "UPDATE attempts SET quiescent = 1 WHERE attempt_id = :attempt_id";

    /// Records the host now driving the run.
    SetHost { host_json, now, run_id } =
        "UPDATE runs SET host_json = :host_json, updated_at = :now WHERE run_id = :run_id";

    /// Marks a run whose host died as interrupted (its lock is released beside it).
    SetInterrupted { now, run_id } =
        "UPDATE runs SET interrupted_at = :now, updated_at = :now WHERE run_id = :run_id";

    /// Clears the interrupted mark of a run being resumed.
    ClearInterrupted { now, run_id } =
        "UPDATE runs SET interrupted_at = NULL, updated_at = :now WHERE run_id = :run_id";

    /// Takes an interrupted run's released lock again. Changes 0 rows when the repository
    /// already has `:max_active` live runs; fails with a UNIQUE constraint when its tag is live.
    RetakeLock { now, run_id, repository_id, max_active } =
        "UPDATE locks SET released_at = NULL, acquired_at = :now
WHERE run_id = :run_id AND released_at IS NOT NULL
  AND (SELECT count(*) FROM locks WHERE repository_id = :repository_id AND released_at IS NULL) < :max_active";

    /// Records an evaluator output artifact.
    InsertArtifact { artifact_id, run_id, experiment_id, attempt_id, kind, location, size_bytes, sha256, truncated, now } = "INSERT INTO artifacts (artifact_id, run_id, experiment_id, attempt_id, kind,
  location, size_bytes, sha256, truncated, created_at)
VALUES (:artifact_id, :run_id, :experiment_id, :attempt_id, :kind, :location, :size_bytes,
  :sha256, :truncated, :now)";

    /// Marks an artifact's file as removed by retention (the row stays).
    MarkArtifactRemoved { now, artifact_id } = "UPDATE artifacts SET removed_at = :now WHERE artifact_id = :artifact_id AND removed_at IS NULL";

    /// Marks an ended run's worktree as removed by retention (the row, branch and refs stay).
    MarkWorktreeRemoved { now, run_id } = "UPDATE runs SET worktree_removed_at = :now WHERE run_id = :run_id AND worktree_removed_at IS NULL";

    /// Marks an ended run's TSV export as removed by retention (the row stays).
    MarkTsvRemoved { now, run_id } = "UPDATE runs SET tsv_removed_at = :now WHERE run_id = :run_id AND tsv_removed_at IS NULL";
}

/// Loads one run (columns map one-to-one onto `StoredRun`'s fields; `lock_held` is 0/1).
pub const LOAD_RUN: &str =
    "SELECT run_id, repository_id, run_tag, branch, worktree, start_commit, policy_json,
  policy_sha256, provenance_json, provenance_sha256, state, baseline_commit, baseline_metric,
  best_commit, best_metric, best_experiment_id, consecutive_failures, terminal_reason,
  blocker_json, quiescent,
  EXISTS (SELECT 1 FROM locks l WHERE l.run_id = runs.run_id AND l.released_at IS NULL) AS lock_held,
  host_json, interrupted_at, worktree_removed_at, tsv_removed_at
FROM runs WHERE run_id = :run_id";

/// Loads a run's experiments, by ordinal (columns map onto `StoredExperiment`).
pub const LOAD_EXPERIMENTS: &str =
    "SELECT experiment_id, ordinal, kind, state, parent_commit, candidate_commit,
  hypothesis, summary, changed_paths_json, metric, decision, failure_code, failure_message,
  superseded_by
FROM experiments WHERE run_id = :run_id ORDER BY ordinal";

/// Loads a run's attempts (columns map onto `StoredAttempt`).
pub const LOAD_ATTEMPTS: &str =
    "SELECT attempt_id, experiment_id, ordinal, state, pid, pgid, process_start_time,
  quiescent, metric, purpose FROM attempts WHERE run_id = :run_id ORDER BY experiment_id, ordinal";

/// Loads a run's artifacts (columns map onto `ArtifactFact` plus ids).
pub const LOAD_ARTIFACTS: &str =
    "SELECT artifact_id, experiment_id, attempt_id, kind, location, size_bytes, sha256,
  truncated, removed_at FROM artifacts WHERE run_id = :run_id ORDER BY created_at, artifact_id";

/// Lists the tracker's `:limit` newest runs, newest first (read-only; for the runner's `list`).
pub const LIST_RUNS: &str = "SELECT run_id, run_tag, state, branch, baseline_metric, best_metric,
  json_extract(policy_json, '$.metric_name') AS metric_name,
  json_extract(policy_json, '$.metric_direction') AS metric_direction,
  (SELECT count(*) FROM experiments e WHERE e.run_id = runs.run_id AND e.kind = 'candidate')
    AS candidates,
  created_at, updated_at, interrupted_at,
  EXISTS (SELECT 1 FROM locks l WHERE l.run_id = runs.run_id AND l.released_at IS NULL) AS lock_held
FROM runs ORDER BY created_at DESC, run_id LIMIT :limit";

/// The retention cleanup's runs: every ended run with a worktree, TSV or artifact not yet
/// removed (columns map onto `RetentionRun`; whether each is due, and whether a held lock makes
/// it live, is the core's decision).
pub const LIST_RETENTION_RUNS: &str = "SELECT run_id, state, worktree, terminal_at,
  worktree_removed_at, tsv_removed_at,
  EXISTS (SELECT 1 FROM locks l WHERE l.run_id = runs.run_id AND l.released_at IS NULL) AS lock_held
FROM runs WHERE terminal_at IS NOT NULL AND (worktree_removed_at IS NULL OR tsv_removed_at IS NULL
  OR EXISTS (SELECT 1 FROM artifacts a WHERE a.run_id = runs.run_id AND a.removed_at IS NULL))
ORDER BY terminal_at, run_id";

/// The artifacts of ended runs not yet removed, with their attempt's failure code (columns map
/// onto `RetentionArtifact`).
pub const LIST_RETENTION_ARTIFACTS: &str =
    "SELECT a.artifact_id, a.run_id, a.attempt_id, a.location,
  t.failure_code AS attempt_failure_code
FROM artifacts a JOIN attempts t ON t.attempt_id = a.attempt_id
  JOIN runs r ON r.run_id = a.run_id
WHERE a.removed_at IS NULL AND r.terminal_at IS NOT NULL ORDER BY a.run_id, a.artifact_id";

/// The original dsh-autoresearch's lock database (`dsh-autoresearch-locks.sqlite`), read-only:
/// its `active_locks` table's columns, by name (the original's versions differ).
pub const ORIGINAL_LOCK_COLUMNS: &str = "PRAGMA table_info(active_locks)";

/// The original's per-run tracker, read-only: its `runs` table's columns, by name.
pub const ORIGINAL_RUN_COLUMNS: &str = "PRAGMA table_info(runs)";

/// The run ids holding a live lock in the original's lock database whose `active_locks` has
/// `columns` (a lock is live until `released_at` is set, where that column exists).
pub fn original_live_locks(columns: &[String]) -> String {
    let live = if columns.iter().any(|c| c == "released_at") {
        " WHERE released_at IS NULL"
    } else {
        ""
    };
    format!("SELECT run_id FROM active_locks{live}")
}

/// The original's runs as `list` shows them, from a tracker whose `runs` has `columns`: the
/// columns `list` reads that this version of the original has.
pub fn original_runs(columns: &[String]) -> String {
    let pick: Vec<&str> = [
        "run_id",
        "run_tag",
        "state",
        "branch",
        "best_metric",
        "created_at",
        "updated_at",
    ]
    .into_iter()
    .filter(|c| columns.iter().any(|have| have == c))
    .collect();
    format!("SELECT {} FROM runs", pick.join(", "))
}

/// Every read statement's text (the driver runs them itself), for tests.
pub const READS: &[&str] = &[
    LOAD_RUN,
    LOAD_EXPERIMENTS,
    LOAD_ATTEMPTS,
    LOAD_ARTIFACTS,
    LIST_RUNS,
    LIST_RETENTION_RUNS,
    LIST_RETENTION_ARTIFACTS,
];

/// The distinct `:name` parameters a statement's text uses, in order of first use.
pub fn parameter_names(sql: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' {
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            if end > start && !out.contains(&&sql[start..end]) {
                out.push(&sql[start..end]);
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}
