//! The `autoresearch` row: its serde type, every default, its validation rules (per key, then
//! across keys) and schema, and (cargo feature `autoresearch`) the conversion into
//! `autoresearch-core`'s `Settings`, whose defaults a test checks against these.
//!
//! The dependency on the core is optional: the core turns on serde_json's `float_roundtrip`, and
//! feature unification would carry it into every other package's `.wasm` (~33 KB).

use crate::toolkit::{Field, Issue, PathSegment, Rule, validate_fields};
#[cfg(feature = "autoresearch")]
use autoresearch::{Limits, Retention, Settings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The row's id in a profile's `cordis.patch.yml`.
pub const ROW_ID: &str = "autoresearch";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-autoresearch";
/// Prefix of the one-line summary [`crate::describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "autoresearch: invalid config: ";

/// Bounds of `defaultMaxExperiments` and `maxExperiments`.
pub const EXPERIMENTS_MIN: u32 = 1;
/// Largest candidate cap a deployment may allow.
pub const EXPERIMENTS_MAX: u32 = 1_000;
/// Smallest per-attempt timeout (1 s).
pub const TIMEOUT_MIN_MS: u32 = 1_000;
/// Largest per-attempt timeout (24 h).
pub const TIMEOUT_MAX_MS: u32 = 86_400_000;
/// Largest grace between SIGTERM and SIGKILL (10 min).
pub const GRACE_MAX_MS: u32 = 600_000;
/// Largest `maxParallelism` (the spec's own bound, `autoresearch::MAX_PARALLELISM`, is the same).
pub const PARALLELISM_MAX: u32 = 16;
/// Default largest `parallelism` a spec may ask for.
pub const DEFAULT_PARALLELISM_CAP: u32 = 4;
/// Largest number of concurrent runs per repository.
pub const ACTIVE_RUNS_MAX: u32 = 64;
/// Smallest output cap (1 KiB).
pub const OUTPUT_MIN_BYTES: u32 = 1_024;
/// Largest output cap (256 MiB).
pub const OUTPUT_MAX_BYTES: u32 = 268_435_456;
/// Smallest result limit.
pub const RESULT_MIN_CHARS: u32 = 1_024;
/// Largest result limit.
pub const RESULT_MAX_CHARS: u32 = 1_000_000;
/// Default result limit (the tool result and the runner's `--json` line).
pub const DEFAULT_MAX_RESULT_CHARS: u32 = 16_384;
/// Default candidate cap of a spec without `max_experiments`.
pub const DEFAULT_MAX_EXPERIMENTS: u32 = 20;
/// Default largest `max_experiments`.
pub const DEFAULT_EXPERIMENTS_CAP: u32 = 100;
/// Default per-attempt timeout (15 min).
pub const DEFAULT_TIMEOUT_MS: u32 = 900_000;
/// Default largest per-attempt timeout (60 min).
pub const DEFAULT_TIMEOUT_CAP_MS: u32 = 3_600_000;
/// Default SIGTERM-to-SIGKILL grace.
pub const DEFAULT_GRACE_MS: u32 = 5_000;
/// Default output cap per stream (1 MiB).
pub const DEFAULT_OUTPUT_BYTES: u32 = 1_048_576;
/// Smallest proposal handoff and report limit.
pub const HANDOFF_MIN_CHARS: u32 = 1_024;
/// Largest proposal handoff and report limit.
pub const HANDOFF_MAX_CHARS: u32 = 1_000_000;
/// Default proposal handoff and report limit (the original's).
pub const DEFAULT_MAX_HANDOFF_CHARS: u32 = 16_384;
/// Smallest `maxTokens` (DSH's agents take any positive integer).
pub const TOKENS_MIN: u32 = 1;
/// Bounds of the retention windows, in days.
pub const RETENTION_MIN_DAYS: u32 = 1;
/// Largest retention window (ten years).
pub const RETENTION_MAX_DAYS: u32 = 3_650;
/// Default retention window, in days.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;

/// JSON Schema `pattern` of `provider` and `model`: text without surrounding whitespace, CR, LF or
/// NUL.
const ROUTE_NAME_REGEX: &str = "^[^\\s\\u0000](?:[^\\r\\n\\u0000]*[^\\s\\u0000])?$";
/// JSON Schema `pattern` of `gitExecutable`: a bare program name or an absolute path.
const GIT_EXECUTABLE_REGEX: &str = "^(/[^\\u0000]+|[^/\\s\\u0000]+)$";
/// JSON Schema `pattern` of `stateRoot`: relative, no backslash (the `..` rule is Rust's).
const STATE_ROOT_REGEX: &str = "^[^/\\\\\\s][^\\\\\\u0000]*$";
/// JSON Schema `pattern` of `branchPrefix`: ref-safe characters ending in `/`.
const BRANCH_PREFIX_REGEX: &str = "^[A-Za-z0-9][A-Za-z0-9._/-]*/$";

/// The config of the `autoresearch` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "autoresearch row config")]
pub struct RowConfig {
    /// Provider route of each proposal round's child agent (absent: the calling agent's), passed
    /// to DSH's `resolveChildAgentOptions` as DSH's subagent tool passes its `agentOptions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", regex(pattern = ROUTE_NAME_REGEX))]
    pub provider: Option<String>,
    /// Model of each proposal round's child agent (absent: the calling agent's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", regex(pattern = ROUTE_NAME_REGEX))]
    pub model: Option<String>,
    /// Output-token cap of each model request of a proposal round's child agent (absent: the
    /// calling agent's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = TOKENS_MIN, max = u32::MAX))]
    pub max_tokens: Option<u32>,
    /// The git binary: a bare name looked up on PATH, or an absolute path.
    #[schemars(regex(pattern = GIT_EXECUTABLE_REGEX))]
    pub git_executable: String,
    /// State directory (tracker, worktrees, artifacts, TSV exports), relative to the repository's
    /// git common directory.
    #[schemars(regex(pattern = STATE_ROOT_REGEX))]
    pub state_root: String,
    /// Prefix of each run's branch (`<prefix><run_tag>-<run_id>`); must end in `/`.
    #[schemars(regex(pattern = BRANCH_PREFIX_REGEX))]
    pub branch_prefix: String,
    /// Candidate cap when a run's spec gives no `max_experiments` (the baseline is separate).
    #[schemars(range(min = EXPERIMENTS_MIN, max = EXPERIMENTS_MAX))]
    pub default_max_experiments: u32,
    /// Largest `max_experiments` a spec may ask for.
    #[schemars(range(min = EXPERIMENTS_MIN, max = EXPERIMENTS_MAX))]
    pub max_experiments: u32,
    /// Longest proposal handoff (the run's state in the round prompt; its history is shortened to
    /// fit, never the objective) and longest proposal report (hypothesis and summary as JSON),
    /// in characters.
    #[schemars(range(min = HANDOFF_MIN_CHARS, max = HANDOFF_MAX_CHARS))]
    pub max_handoff_chars: u32,
    /// Per-attempt timeout (evaluator and proposer) when a spec gives no `timeout_ms`.
    #[schemars(range(min = TIMEOUT_MIN_MS, max = TIMEOUT_MAX_MS))]
    pub default_timeout_ms: u32,
    /// Largest `timeout_ms` a spec may ask for.
    #[schemars(range(min = TIMEOUT_MIN_MS, max = TIMEOUT_MAX_MS))]
    pub max_timeout_ms: u32,
    /// Largest `parallelism` a spec may ask for: candidates evaluated at once, each with its own
    /// proposer (a child agent in DSH) and evaluator process.
    #[schemars(range(min = 1, max = PARALLELISM_MAX))]
    pub max_parallelism: u32,
    /// Grace between SIGTERM and SIGKILL when a process group is stopped.
    #[schemars(range(max = GRACE_MAX_MS))]
    pub termination_grace_ms: u32,
    /// Runs that may hold a lock in one repository at once.
    #[schemars(range(min = 1, max = ACTIVE_RUNS_MAX))]
    pub max_active_runs_per_repository: u32,
    /// Evaluator stdout kept per attempt (its tail); a longer final line fails the metric.
    #[schemars(range(min = OUTPUT_MIN_BYTES, max = OUTPUT_MAX_BYTES))]
    pub max_stdout_bytes: u32,
    /// Evaluator stderr kept per attempt (its tail).
    #[schemars(range(min = OUTPUT_MIN_BYTES, max = OUTPUT_MAX_BYTES))]
    pub max_stderr_bytes: u32,
    /// Longest result JSON (tool result, job output, the runner's `--json` line), in characters.
    #[schemars(range(min = RESULT_MIN_CHARS, max = RESULT_MAX_CHARS))]
    pub max_result_chars: u32,
    /// Days an ended run's evaluator artifacts are kept: the cleanup at each run's start and end
    /// removes the artifact files of runs that ended longer ago (their tracker rows stay, marked).
    #[schemars(range(min = RETENTION_MIN_DAYS, max = RETENTION_MAX_DAYS))]
    pub artifact_retention_days: u32,
    /// Keep the artifacts of failed evaluator attempts; false removes them as soon as their
    /// experiment ends (their tracker rows stay, marked).
    pub retain_failed_artifacts: bool,
    /// Keep an ended run's worktree; false removes it when the run ends (its branch, refs and
    /// tracker rows stay).
    pub retain_worktrees: bool,
    /// Remove a run's worktree when it ends `target-reached` or `budget-limited`, even while
    /// `retainWorktrees` keeps the others.
    pub cleanup_worktrees_on_success: bool,
    /// Write `<stateRoot>/exports/<run_id>.tsv` when a run ends.
    pub export_tsv: bool,
    /// Days a run's TSV export is kept: the cleanup at each run's start and end removes the
    /// exports of runs that ended longer ago (their tracker rows stay, marked).
    #[schemars(range(min = RETENTION_MIN_DAYS, max = RETENTION_MAX_DAYS))]
    pub tsv_retention_days: u32,
    /// Repositories (absolute paths) whose unfinished runs are reconciled when the plugin starts,
    /// besides the one DSH runs in.
    pub recover_repositories: Vec<String>,
}

impl Default for RowConfig {
    fn default() -> Self {
        Self {
            provider: None,
            model: None,
            max_tokens: None,
            git_executable: "git".into(),
            state_root: "dsh-autoresearch".into(),
            branch_prefix: "autoresearch/".into(),
            default_max_experiments: DEFAULT_MAX_EXPERIMENTS,
            max_experiments: DEFAULT_EXPERIMENTS_CAP,
            max_handoff_chars: DEFAULT_MAX_HANDOFF_CHARS,
            default_timeout_ms: DEFAULT_TIMEOUT_MS,
            max_timeout_ms: DEFAULT_TIMEOUT_CAP_MS,
            max_parallelism: DEFAULT_PARALLELISM_CAP,
            termination_grace_ms: DEFAULT_GRACE_MS,
            max_active_runs_per_repository: 1,
            max_stdout_bytes: DEFAULT_OUTPUT_BYTES,
            max_stderr_bytes: DEFAULT_OUTPUT_BYTES,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            artifact_retention_days: DEFAULT_RETENTION_DAYS,
            retain_failed_artifacts: true,
            retain_worktrees: true,
            cleanup_worktrees_on_success: false,
            export_tsv: true,
            tsv_retention_days: DEFAULT_RETENTION_DAYS,
            recover_repositories: Vec::new(),
        }
    }
}

const EXPERIMENTS: Rule = Rule::Integer {
    min: EXPERIMENTS_MIN,
    max: EXPERIMENTS_MAX,
};
const TIMEOUT: Rule = Rule::Integer {
    min: TIMEOUT_MIN_MS,
    max: TIMEOUT_MAX_MS,
};
const OUTPUT: Rule = Rule::Integer {
    min: OUTPUT_MIN_BYTES,
    max: OUTPUT_MAX_BYTES,
};
const RETENTION: Rule = Rule::Integer {
    min: RETENTION_MIN_DAYS,
    max: RETENTION_MAX_DAYS,
};

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [Field; 24] = [
    (
        "provider",
        Rule::Str {
            what: "a provider route name",
            check: route_name,
        },
    ),
    (
        "model",
        Rule::Str {
            what: "a model id",
            check: route_name,
        },
    ),
    (
        "maxTokens",
        Rule::Integer {
            min: TOKENS_MIN,
            max: u32::MAX,
        },
    ),
    (
        "gitExecutable",
        Rule::Str {
            what: "a bare program name or an absolute path",
            check: git_executable,
        },
    ),
    (
        "stateRoot",
        Rule::Str {
            what: "a relative directory",
            check: state_root,
        },
    ),
    (
        "branchPrefix",
        Rule::Str {
            what: "a branch name prefix ending in /",
            check: branch_prefix,
        },
    ),
    ("defaultMaxExperiments", EXPERIMENTS),
    ("maxExperiments", EXPERIMENTS),
    (
        "maxHandoffChars",
        Rule::Integer {
            min: HANDOFF_MIN_CHARS,
            max: HANDOFF_MAX_CHARS,
        },
    ),
    ("defaultTimeoutMs", TIMEOUT),
    ("maxTimeoutMs", TIMEOUT),
    (
        "maxParallelism",
        Rule::Integer {
            min: 1,
            max: PARALLELISM_MAX,
        },
    ),
    (
        "terminationGraceMs",
        Rule::Integer {
            min: 0,
            max: GRACE_MAX_MS,
        },
    ),
    (
        "maxActiveRunsPerRepository",
        Rule::Integer {
            min: 1,
            max: ACTIVE_RUNS_MAX,
        },
    ),
    ("maxStdoutBytes", OUTPUT),
    ("maxStderrBytes", OUTPUT),
    (
        "maxResultChars",
        Rule::Integer {
            min: RESULT_MIN_CHARS,
            max: RESULT_MAX_CHARS,
        },
    ),
    ("artifactRetentionDays", RETENTION),
    ("retainFailedArtifacts", Rule::Flag),
    ("retainWorktrees", Rule::Flag),
    ("cleanupWorktreesOnSuccess", Rule::Flag),
    ("exportTsv", Rule::Flag),
    ("tsvRetentionDays", RETENTION),
    (
        "recoverRepositories",
        Rule::List {
            of: "absolute repository paths",
            check: absolute_path,
        },
    ),
];

fn absolute_path(text: &str) -> Result<(), String> {
    if !text.starts_with('/') || text.contains(['\0', '\r', '\n']) {
        return Err("must be an absolute path without NUL, CR or LF".into());
    }
    Ok(())
}

fn route_name(text: &str) -> Result<(), String> {
    if text.trim().is_empty() || text.trim() != text || text.contains(['\0', '\r', '\n']) {
        return Err("must be non-empty text without surrounding whitespace, CR, LF or NUL".into());
    }
    Ok(())
}

fn git_executable(text: &str) -> Result<(), String> {
    let bare = !text.is_empty() && !text.contains('/') && !text.chars().any(char::is_whitespace);
    let absolute = text.starts_with('/') && text.len() > 1;
    if text.contains('\0') || !(bare || absolute) {
        return Err("must be a bare program name (no / or whitespace) or an absolute path".into());
    }
    Ok(())
}

fn state_root(text: &str) -> Result<(), String> {
    let problem = if text.is_empty() || text.trim() != text {
        "must be a non-empty relative path without surrounding whitespace"
    } else if text.contains(['\0', '\r', '\n', '\\']) {
        "must not contain NUL, CR, LF or a backslash"
    } else if text.starts_with('/') {
        "must be relative (no leading /)"
    } else if text.split('/').any(|s| s == "..") {
        "must not contain a .. segment"
    } else if text.split('/').any(|s| s == "." || s.is_empty()) {
        "must not contain a . or empty segment"
    } else {
        return Ok(());
    };
    Err(problem.into())
}

fn branch_prefix(text: &str) -> Result<(), String> {
    let ok_chars = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._/-".contains(&b));
    let starts = text
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric());
    let segments_ok = text
        .trim_end_matches('/')
        .split('/')
        .all(|s| !s.is_empty() && !s.starts_with('.') && !s.ends_with(".lock"));
    if !text.ends_with('/') {
        return Err("must end in /".into());
    }
    if !ok_chars || !starts || text.contains("..") || !segments_ok {
        return Err("must start with a letter or digit and hold only letters, digits, `.`, `_`, `-` and `/`, with no empty segment, `..`, segment starting with `.` or ending in `.lock`".into());
    }
    Ok(())
}

/// Validates an `autoresearch` row config and builds it, or reports every problem found: the
/// per-key rules first, then the rules across keys.
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    let row: RowConfig = validate_fields(&FIELDS, value)?;
    let issues = row.across();
    if issues.is_empty() {
        Ok(row)
    } else {
        Err(issues)
    }
}

fn across(key: &str, message: String) -> Issue {
    crate::toolkit::issue(vec![PathSegment::Key(key.to_owned())], message)
}

impl RowConfig {
    /// The problems only several keys together show.
    fn across(&self) -> Vec<Issue> {
        let mut issues = Vec::new();
        if self.default_max_experiments > self.max_experiments {
            issues.push(across(
                "defaultMaxExperiments",
                format!(
                    "must be <= maxExperiments ({}) (got {})",
                    self.max_experiments, self.default_max_experiments
                ),
            ));
        }
        if self.default_timeout_ms > self.max_timeout_ms {
            issues.push(across(
                "defaultTimeoutMs",
                format!(
                    "must be <= maxTimeoutMs ({}) (got {})",
                    self.max_timeout_ms, self.default_timeout_ms
                ),
            ));
        }
        issues
    }

    /// The core's settings, or the issues only several keys together show.
    #[cfg(feature = "autoresearch")]
    pub fn settings(&self) -> Result<Settings, Vec<Issue>> {
        let issues = self.across();
        if issues.is_empty() {
            Ok(self.core_settings())
        } else {
            Err(issues)
        }
    }

    /// The core's settings of a row that passed [`validate`].
    #[cfg(feature = "autoresearch")]
    fn core_settings(&self) -> Settings {
        Settings {
            limits: Limits {
                default_max_experiments: self.default_max_experiments,
                max_experiments: self.max_experiments,
                default_timeout_ms: u64::from(self.default_timeout_ms),
                max_timeout_ms: u64::from(self.max_timeout_ms),
                max_parallelism: self.max_parallelism,
            },
            state_root: self.state_root.clone(),
            branch_prefix: self.branch_prefix.clone(),
            termination_grace_ms: u64::from(self.termination_grace_ms),
            max_stdout_bytes: u64::from(self.max_stdout_bytes),
            max_stderr_bytes: u64::from(self.max_stderr_bytes),
            max_active_runs_per_repository: self.max_active_runs_per_repository,
            max_attempts_per_experiment: autoresearch::run::MAX_ATTEMPTS_PER_EXPERIMENT,
            max_handoff_chars: self.max_handoff_chars as usize,
            export_tsv: self.export_tsv,
            retention: Retention {
                artifact_retention_days: self.artifact_retention_days,
                retain_failed_artifacts: self.retain_failed_artifacts,
                retain_worktrees: self.retain_worktrees,
                cleanup_worktrees_on_success: self.cleanup_worktrees_on_success,
                tsv_retention_days: self.tsv_retention_days,
            },
        }
    }
}

#[cfg(feature = "autoresearch")]
impl crate::Config for RowConfig {
    const MESSAGE_PREFIX: &'static str = MESSAGE_PREFIX;
    type Settings = Settings;
    fn validate(value: &Value) -> Result<(Self, Settings), Vec<Issue>> {
        let row = validate(value)?;
        let settings = row.core_settings();
        Ok((row, settings))
    }
}

/// The JSON Schema (draft-07) of the row config.
pub fn json_schema() -> Value {
    crate::toolkit::schema_of::<RowConfig>()
}

#[cfg(test)]
mod tests;
