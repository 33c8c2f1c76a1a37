//! The run spec (the `autoresearch` tool's arguments and the headless runner's `SPEC.json`) and its
//! validation into a [`RunPolicy`].
//!
//! Validation is hand-written and collects every problem as a [`SpecError`] naming the field (a
//! dotted path such as `evaluation.cwd`), the rule and the offending value; unknown keys get a
//! did-you-mean. Deployment limits ([`Limits`]) bound `timeout_ms` and `max_experiments` and supply
//! their defaults, which are then written into the policy so a stored run never depends on a later
//! deployment's defaults.

use crate::jcs;
use crate::surface::MutableSurface;
pub use crate::surface::{Allowlists, path_problem};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;

/// Longest `objective`, in characters.
pub const MAX_OBJECTIVE_CHARS: usize = 8_000;
/// Longest `run_tag`, in characters.
pub const MAX_RUN_TAG_CHARS: usize = 64;
/// Longest `metric_name`, in characters.
pub const MAX_METRIC_NAME_CHARS: usize = 128;
/// Most entries in `mutable_globs`, `constraints` or an allowlist.
pub const MAX_LIST_ENTRIES: usize = 256;
/// Default for `max_consecutive_failures`.
pub const DEFAULT_MAX_CONSECUTIVE_FAILURES: u32 = 3;
/// Default for `repeats`: one evaluation per experiment, the original's single sample.
pub const DEFAULT_REPEATS: u32 = 1;
/// Largest `repeats`.
pub const MAX_REPEATS: u32 = 20;
/// Default for `parallelism`: one candidate at a time, as the original.
pub const DEFAULT_PARALLELISM: u32 = 1;
/// Largest `parallelism` any deployment allows (the row's `maxParallelism` bounds it further).
pub const MAX_PARALLELISM: u32 = 16;
/// The variable every evaluator gets with its slot (`0` to `parallelism - 1`, the candidate's
/// place in its generation), so a recipe can pin a GPU or a port per slot; the run sets it, so a
/// spec cannot.
pub const SLOT_ENV: &str = "AUTORESEARCH_SLOT";

/// Deployment limits and defaults (the plugin row config, converted); the spec is validated
/// against them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `max_experiments` when the spec has none.
    pub default_max_experiments: u32,
    /// Largest `max_experiments`.
    pub max_experiments: u32,
    /// `timeout_ms` when the spec has none.
    pub default_timeout_ms: u64,
    /// Largest `timeout_ms`.
    pub max_timeout_ms: u64,
    /// Largest `parallelism`.
    pub max_parallelism: u32,
}

/// One problem with a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// Dotted path of the field (`evaluation.args[2]`), or `(spec)` for the whole document.
    pub field: String,
    /// The rule that was broken.
    pub rule: String,
    /// The offending value as compact JSON, clipped (empty when the field is missing).
    pub value: String,
    /// For an unknown key: the closest known key.
    pub did_you_mean: Option<String>,
}

impl SpecError {
    /// As the JS side reads it: `{field, rule, value, didYouMean, message}`.
    pub fn to_json(&self) -> Value {
        json!({
            "field": self.field, "rule": self.rule, "value": self.value,
            "didYouMean": self.did_you_mean, "message": self.to_string(),
        })
    }
}

/// One terminal line: a key the spec chose (in `field`) or a value can hold any character, so
/// controls, line breaks and bidi overrides are shown escaped.
impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = format!("{}: {}", self.field, self.rule);
        if !self.value.is_empty() {
            line.push_str(&format!(" (got {})", self.value));
        }
        if let Some(s) = &self.did_you_mean {
            line.push_str(&format!("; did you mean `{s}`?"));
        }
        f.write_str(&crate::escape::escape_inline(&line))
    }
}

/// Minimize or maximize the metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Lower is better.
    Minimize,
    /// Higher is better.
    Maximize,
}

impl Direction {
    /// The direction `as_str` names.
    pub fn parse(name: &str) -> Option<Direction> {
        [Direction::Minimize, Direction::Maximize]
            .into_iter()
            .find(|d| d.as_str() == name)
    }

    /// `minimize` or `maximize`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Minimize => "minimize",
            Direction::Maximize => "maximize",
        }
    }

    /// Whether `candidate` strictly improves on `best` (ties do not).
    pub fn improves(self, candidate: f64, best: f64) -> bool {
        match self {
            Direction::Minimize => candidate < best,
            Direction::Maximize => candidate > best,
        }
    }

    /// Whether `metric` meets `target` (inclusive).
    pub fn meets(self, metric: f64, target: f64) -> bool {
        match self {
            Direction::Minimize => metric <= target,
            Direction::Maximize => metric >= target,
        }
    }
}

/// Background job or blocking call (DSH tool only; not part of the durable policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Run as a `dsh-jobs` background job (the default).
    Background,
    /// Block the caller until the run ends.
    Foreground,
}

/// A program and its arguments, run without a shell. Arguments are kept exactly as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The program: a bare name looked up on `PATH`, or a path.
    pub command: String,
    /// Its arguments, in order, duplicates kept.
    pub args: Vec<String>,
}

/// The evaluator: a shell-free argv and a working directory inside the worktree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Program and arguments.
    pub argv: Command,
    /// Safe relative directory inside the worktree (`.` when not given).
    pub cwd: String,
}

/// One evaluator environment value: its hash always, the value itself only in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvValue {
    /// Lowercase hex SHA-256 of the value's UTF-8 bytes.
    pub sha256: String,
    /// The value, when known (never written anywhere).
    pub value: Option<String>,
}

impl EnvValue {
    /// A known value.
    pub fn known(value: &str) -> Self {
        EnvValue {
            sha256: jcs::sha256_hex(value.as_bytes()),
            value: Some(value.to_owned()),
        }
    }
}

/// A validated spec for a fresh run. Built only by [`validate`].
#[derive(Clone, Debug, PartialEq)]
pub struct RunPolicy {
    /// Immutable objective.
    pub objective: String,
    /// Compiled mutable surface.
    pub surface: MutableSurface,
    /// Evaluator.
    pub evaluation: Evaluation,
    /// Key of the metric on the final line.
    pub metric_name: String,
    /// Minimize or maximize.
    pub direction: Direction,
    /// Exclusion tag of the run.
    pub run_tag: String,
    /// Immutable policy constraints, handed to the proposer.
    pub constraints: Vec<String>,
    /// Allowlists.
    pub allowlists: Allowlists,
    /// Per-attempt timeout.
    pub timeout_ms: u64,
    /// Candidate experiment cap (the baseline is separate).
    pub max_experiments: u32,
    /// Consecutive failed rounds after which the run ends `round-failed`.
    pub max_consecutive_failures: u32,
    /// Evaluations of the baseline and of every candidate (`stats` decides on them).
    pub repeats: u32,
    /// Candidates evaluated at once, each in its own worktree (a generation).
    pub parallelism: u32,
    /// Candidates in a row without a kept one after which the run ends `budget-limited`
    /// (reason `plateau`); `None`: only the budget ends it.
    pub max_stale_experiments: Option<u32>,
    /// Optional stopping threshold (inclusive).
    pub target: Option<f64>,
    /// Provenance label or path of the evaluator.
    pub provenance_evaluator: Option<String>,
    /// Provenance label or path of the dataset.
    pub provenance_dataset: Option<String>,
    /// Evaluator environment overrides, sorted by key. The durable policy keeps only each
    /// value's hash; a policy read back from the tracker has the values only once a resume
    /// supplies them again ([`RunPolicy::supply_environment`]).
    pub environment: BTreeMap<String, EnvValue>,
    /// Headless proposer program (required by the headless runner, unused inside DSH).
    pub proposer: Option<Command>,
    /// A second evaluator, run on the baseline and on each kept candidate only, whose metric the
    /// proposer never sees; its inputs lie outside the repository ([`holdout_problem`]).
    pub holdout: Option<Evaluation>,
    /// Whether a kept candidate whose holdout metric is not better than the previous best's ends
    /// the run (else the result warns).
    pub holdout_stop: bool,
    /// Repository as given (resolved by the driver against the caller's cwd, never the host's).
    pub repository: Option<String>,
}

/// What a spec asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// Start a fresh run.
    Fresh {
        /// The validated policy.
        policy: Box<RunPolicy>,
        /// Background or foreground.
        mode: Mode,
    },
    /// Resume a stored run. Its policy comes from the database; `given` holds the other keys the
    /// spec carried, which must agree with the stored policy (see [`check_resume`]).
    Resume {
        /// The run id (a validated lowercase UUID).
        run_id: String,
        /// Background or foreground.
        mode: Mode,
        /// Repository as given.
        repository: Option<String>,
        /// Policy keys the resume spec carried.
        given: Map<String, Value>,
        /// Go on even when the run's host cannot be proven dead (see `Run::force`).
        force: bool,
    },
    /// End a stored run nobody will resume (see `Run::abandon`).
    Abandon {
        /// The run id (a validated lowercase UUID).
        run_id: String,
        /// Repository as given.
        repository: Option<String>,
        /// Why, for the run's blocker (a default names the tool).
        reason: Option<String>,
        /// Go on even when the run's host cannot be proven dead (see `Run::force`).
        force: bool,
    },
}

const TOP_KEYS: &[&str] = &[
    "objective",
    "mutable_globs",
    "evaluation",
    "metric_name",
    "metric_direction",
    "run_tag",
    "resume_run_id",
    "constraints",
    "exceptional_allowlists",
    "timeout_ms",
    "max_experiments",
    "max_consecutive_failures",
    "repeats",
    "parallelism",
    "max_stale_experiments",
    "target",
    "provenance",
    "environment",
    "mode",
    "proposer",
    "holdout",
    "holdout_stop",
    "repository",
    "abandon_run_id",
    "reason",
    "force",
];
const EVALUATION_KEYS: &[&str] = &["command", "args", "cwd"];
const PROPOSER_KEYS: &[&str] = &["command", "args"];
const PROVENANCE_KEYS: &[&str] = &["evaluator", "dataset"];
const ALLOWLIST_KEYS: &[&str] = &[
    "dependencies",
    "evaluators",
    "datasets",
    "submodules",
    "gitConfig",
];
/// Keys that never enter the durable policy.
const NON_POLICY_KEYS: &[&str] = &[
    "resume_run_id",
    "mode",
    "repository",
    "abandon_run_id",
    "reason",
    "force",
];
/// An abandoned run's reason when the spec gives none.
pub const ABANDON_REASON: &str = "abandoned with abandon_run_id";
/// Keys that may go with `abandon_run_id`.
const ABANDON_KEYS: &[&str] = &["abandon_run_id", "repository", "reason", "force"];

/// What the headless runner says when a fresh spec has no proposer.
pub const PROPOSER_REQUIRED: &str = "is required by the headless runner: {command, args} of a program that edits the worktree (its cwd), reads the JSON handoff on stdin and prints {\"hypothesis\", \"summary\"} as its last stdout line";
/// What the DSH tool says of a `proposer`.
const PROPOSER_ONLY_HEADLESS: &str =
    "is only for the headless runner (inside DSH a child agent proposes each candidate)";

/// [`parse`] for one reader: the headless runner (`headless`: a fresh spec needs `proposer`) or
/// the DSH tool (no `proposer`: a child agent proposes).
pub fn parse_for(text: &str, limits: &Limits, headless: bool) -> Result<Request, Vec<SpecError>> {
    let request = parse(text, limits)?;
    if let Request::Fresh { policy, .. } = &request {
        let rule = match (&policy.proposer, headless) {
            (None, true) => PROPOSER_REQUIRED,
            (Some(_), false) => PROPOSER_ONLY_HEADLESS,
            _ => return Ok(request),
        };
        return Err(vec![SpecError {
            field: "proposer".into(),
            rule: rule.into(),
            value: String::new(),
            did_you_mean: None,
        }]);
    }
    Ok(request)
}

/// `abandon_run_id` (with only `repository`, `reason` and `force` beside it).
fn abandon(
    mut v: Check,
    obj: &Map<String, Value>,
    id: &Value,
    repository: Option<String>,
    force: bool,
) -> Result<Request, Vec<SpecError>> {
    for key in obj.keys() {
        if !ABANDON_KEYS.contains(&key.as_str()) && TOP_KEYS.contains(&key.as_str()) {
            v.err(
                key,
                "does not go with abandon_run_id (only repository, reason and force do)",
                obj.get(key),
            );
        }
    }
    let run_id = match id {
        Value::String(s) if is_uuid(s) => Some(s.clone()),
        other => {
            v.err(
                "abandon_run_id",
                "must be a lowercase UUID (8-4-4-4-12 hex)",
                Some(other),
            );
            None
        }
    };
    let reason = obj
        .get("reason")
        .and_then(|r| v.text("reason", r, 1000, false));
    match (run_id, v.errors.is_empty()) {
        (Some(run_id), true) => Ok(Request::Abandon {
            run_id,
            repository,
            reason,
            force,
        }),
        _ => Err(v.errors),
    }
}

impl Mode {
    /// The spec's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Background => "background",
            Mode::Foreground => "foreground",
        }
    }
}

/// Parses and validates a spec document (JSON text).
pub fn parse(text: &str, limits: &Limits) -> Result<Request, Vec<SpecError>> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => validate(&value, limits),
        Err(e) => Err(vec![SpecError {
            field: "(spec)".into(),
            rule: format!("must be valid JSON ({e})"),
            value: String::new(),
            did_you_mean: None,
        }]),
    }
}

/// Validates a spec value.
pub fn validate(value: &Value, limits: &Limits) -> Result<Request, Vec<SpecError>> {
    let mut v = Check::default();
    let Some(obj) = value.as_object() else {
        v.err("(spec)", "must be a JSON object", Some(value));
        return Err(v.errors);
    };
    v.unknown_keys("", obj, TOP_KEYS);
    let mode = match obj.get("mode") {
        None => Mode::Background,
        Some(Value::String(s)) if s == "background" => Mode::Background,
        Some(Value::String(s)) if s == "foreground" => Mode::Foreground,
        Some(other) => {
            v.err(
                "mode",
                "must be \"background\" or \"foreground\"",
                Some(other),
            );
            Mode::Background
        }
    };
    let repository = obj
        .get("repository")
        .and_then(|r| v.text("repository", r, 4096, false));
    let force = match obj.get("force") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            v.err("force", "must be a boolean", Some(other));
            false
        }
    };
    if let Some(id) = obj.get("abandon_run_id") {
        return abandon(v, obj, id, repository, force);
    }
    if let Some(reason) = obj.get("reason") {
        v.err("reason", "goes only with abandon_run_id", Some(reason));
    }
    match (obj.get("run_tag"), obj.get("resume_run_id")) {
        (Some(_), Some(_)) => {
            v.err(
                "resume_run_id",
                "run_tag and resume_run_id are mutually exclusive",
                None,
            );
            Err(v.errors)
        }
        (None, None) => {
            v.err(
                "run_tag",
                "exactly one of run_tag or resume_run_id is required",
                None,
            );
            Err(v.errors)
        }
        (None, Some(id)) => {
            let run_id = match id {
                Value::String(s) if is_uuid(s) => Some(s.clone()),
                other => {
                    v.err(
                        "resume_run_id",
                        "must be a lowercase UUID (8-4-4-4-12 hex)",
                        Some(other),
                    );
                    None
                }
            };
            let given: Map<String, Value> = obj
                .iter()
                .filter(|(k, _)| {
                    !NON_POLICY_KEYS.contains(&k.as_str()) && TOP_KEYS.contains(&k.as_str())
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            match (run_id, v.errors.is_empty()) {
                (Some(run_id), true) => Ok(Request::Resume {
                    run_id,
                    mode,
                    repository,
                    given,
                    force,
                }),
                _ => Err(v.errors),
            }
        }
        (Some(_), None) => {
            if let Some(f) = obj.get("force") {
                v.err(
                    "force",
                    "goes only with resume_run_id or abandon_run_id",
                    Some(f),
                );
            }
            let policy = policy(&mut v, obj, limits, repository);
            if let Some(p) = &policy {
                for key in p.missing_environment() {
                    v.err(
                        &format!("environment.{key}"),
                        "value must be a string without NUL",
                        Some(&json!({"sha256": p.environment[&key].sha256})),
                    );
                }
                for c in crate::surface::covered_protections(
                    &p.surface,
                    &p.evaluation.argv.command,
                    &p.evaluation.argv.args,
                    &p.evaluation.cwd,
                    &p.allowlists,
                ) {
                    v.err(
                        &format!("mutable_globs[{}]", c.index),
                        &c.rule(),
                        Some(&json!(c.glob)),
                    );
                }
            }
            match (policy, v.errors.is_empty()) {
                (Some(policy), true) => Ok(Request::Fresh {
                    policy: Box::new(policy),
                    mode,
                }),
                _ => Err(v.errors),
            }
        }
    }
}

/// Validates the durable policy JSON stored with a run ([`RunPolicy::to_json`]).
pub fn policy_from_json(value: &Value, limits: &Limits) -> Result<RunPolicy, Vec<SpecError>> {
    let mut v = Check::default();
    let Some(obj) = value.as_object() else {
        v.err("(policy)", "must be a JSON object", Some(value));
        return Err(v.errors);
    };
    v.unknown_keys("", obj, TOP_KEYS);
    let repository = obj
        .get("repository")
        .and_then(|r| v.text("repository", r, 4096, false));
    match (policy(&mut v, obj, limits, repository), v.errors.is_empty()) {
        (Some(p), true) => Ok(p),
        _ => Err(v.errors),
    }
}

/// A resume whose spec disagrees with the stored policy: the fields that differ (refused before
/// anything is written).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyMismatch {
    /// Top-level keys whose value differs from the stored one.
    pub fields: Vec<String>,
}

/// Checks a resume spec's policy keys against the stored policy JSON: every key the resume spec
/// carries must, once validated, equal the stored value. Keys it omits are taken from the store.
pub fn check_resume(
    stored: &Value,
    given: &Map<String, Value>,
    limits: &Limits,
) -> Result<(), PolicyMismatch> {
    let Some(stored_obj) = stored.as_object() else {
        return Err(PolicyMismatch {
            fields: vec!["(policy)".into()],
        });
    };
    let mut merged = stored_obj.clone();
    for (k, v) in given {
        merged.insert(k.clone(), v.clone());
    }
    let mut fields = Vec::new();
    match policy_from_json(&Value::Object(merged), limits) {
        Ok(p) => {
            let normalized = p.to_json();
            for key in given.keys() {
                if normalized.get(key) != stored_obj.get(key) {
                    fields.push(key.clone());
                }
            }
        }
        Err(errors) => fields.extend(errors.into_iter().map(|e| e.field)),
    }
    fields.sort();
    fields.dedup();
    if fields.is_empty() {
        Ok(())
    } else {
        Err(PolicyMismatch { fields })
    }
}

impl RunPolicy {
    /// The durable policy JSON (every default written out; no `mode`, `resume_run_id` or
    /// `repository`). It re-validates through [`policy_from_json`] into an equal policy.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("objective".into(), json!(self.objective));
        obj.insert("mutable_globs".into(), json!(self.surface.globs()));
        let mut evaluation = Map::new();
        evaluation.insert("command".into(), json!(self.evaluation.argv.command));
        evaluation.insert("args".into(), json!(self.evaluation.argv.args));
        evaluation.insert("cwd".into(), json!(self.evaluation.cwd));
        obj.insert("evaluation".into(), Value::Object(evaluation));
        obj.insert("metric_name".into(), json!(self.metric_name));
        obj.insert("metric_direction".into(), json!(self.direction.as_str()));
        obj.insert("run_tag".into(), json!(self.run_tag));
        obj.insert("constraints".into(), json!(self.constraints));
        obj.insert(
            "exceptional_allowlists".into(),
            json!({
                "dependencies": self.allowlists.dependencies,
                "evaluators": self.allowlists.evaluators,
                "datasets": self.allowlists.datasets,
                "submodules": self.allowlists.submodules,
                "gitConfig": self.allowlists.git_config,
            }),
        );
        obj.insert("timeout_ms".into(), json!(self.timeout_ms));
        obj.insert("max_experiments".into(), json!(self.max_experiments));
        obj.insert(
            "max_consecutive_failures".into(),
            json!(self.max_consecutive_failures),
        );
        // Written only when set, so a stored policy of the single-sample default (and its
        // hash) is what earlier versions wrote.
        if self.repeats != DEFAULT_REPEATS {
            obj.insert("repeats".into(), json!(self.repeats));
        }
        if self.parallelism != DEFAULT_PARALLELISM {
            obj.insert("parallelism".into(), json!(self.parallelism));
        }
        if let Some(n) = self.max_stale_experiments {
            obj.insert("max_stale_experiments".into(), json!(n));
        }
        if let Some(t) = self.target {
            obj.insert("target".into(), json!(t));
        }
        let mut provenance = Map::new();
        if let Some(e) = &self.provenance_evaluator {
            provenance.insert("evaluator".into(), json!(e));
        }
        if let Some(d) = &self.provenance_dataset {
            provenance.insert("dataset".into(), json!(d));
        }
        obj.insert("provenance".into(), Value::Object(provenance));
        let sealed: Map<String, Value> = self
            .environment
            .iter()
            .map(|(k, v)| (k.clone(), json!({ "sha256": v.sha256 })))
            .collect();
        obj.insert("environment".into(), Value::Object(sealed));
        if let Some(p) = &self.proposer {
            obj.insert(
                "proposer".into(),
                json!({"command": p.command, "args": p.args}),
            );
        }
        // Written only when set, as `repeats`: a policy without one hashes as before.
        if let Some(h) = &self.holdout {
            obj.insert(
                "holdout".into(),
                json!({"command": h.argv.command, "args": h.argv.args, "cwd": h.cwd}),
            );
        }
        if self.holdout_stop {
            obj.insert("holdout_stop".into(), json!(true));
        }
        Value::Object(obj)
    }

    /// The names whose values are not known (a policy read back from the tracker).
    pub fn missing_environment(&self) -> Vec<String> {
        self.environment
            .iter()
            .filter(|(_, v)| v.value.is_none())
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Takes values from a resume spec's `environment` for the names whose hash they match.
    pub fn supply_environment(&mut self, given: &Map<String, Value>) {
        let Some(Value::Object(values)) = given.get("environment") else {
            return;
        };
        for (key, entry) in &mut self.environment {
            if let Some(Value::String(s)) = values.get(key)
                && jcs::sha256_hex(s.as_bytes()) == entry.sha256
            {
                entry.value = Some(s.clone());
            }
        }
    }

    /// SHA-256 of the canonical durable policy JSON.
    pub fn sha256(&self) -> String {
        jcs::canonical_sha256(&self.to_json())
    }
}

fn policy(
    v: &mut Check,
    obj: &Map<String, Value>,
    limits: &Limits,
    repository: Option<String>,
) -> Option<RunPolicy> {
    let objective = v
        .required(obj, "objective")
        .and_then(|x| v.text("objective", x, MAX_OBJECTIVE_CHARS, true));
    let globs = v
        .required(obj, "mutable_globs")
        .and_then(|x| v.path_list("mutable_globs", x, true));
    let surface = globs.and_then(|g| match MutableSurface::new(&g) {
        Ok(s) => Some(s),
        Err((i, rule)) => {
            v.err(&format!("mutable_globs[{i}]"), &rule, Some(&json!(g[i])));
            None
        }
    });
    let evaluation = v
        .required(obj, "evaluation")
        .and_then(|x| evaluator(v, "evaluation", x));
    let holdout = match obj.get("holdout") {
        None | Some(Value::Null) => Some(None),
        Some(x) => evaluator(v, "holdout", x).and_then(|h| {
            let problems = holdout_problem(&h);
            for (field, value) in &problems {
                v.err(
                    field,
                    "must be an absolute path outside the repository (a proposer can read every \
                     file of its worktree, and the holdout's must stay unseen)",
                    Some(&json!(value)),
                );
            }
            problems.is_empty().then_some(Some(h))
        }),
    };
    let holdout_stop = match obj.get("holdout_stop") {
        None => Some(false),
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            v.err("holdout_stop", "must be true or false", Some(other));
            None
        }
    };
    if holdout_stop == Some(true) && matches!(holdout, Some(None)) {
        v.err("holdout_stop", "needs a holdout", Some(&json!(true)));
    }
    let metric_name = v.required(obj, "metric_name").and_then(|x| match x {
        Value::String(s) if is_metric_name(s) => Some(s.clone()),
        other => {
            v.err(
                "metric_name",
                "must match ^[A-Za-z_][A-Za-z0-9_.-]*$ (at most 128 characters)",
                Some(other),
            );
            None
        }
    });
    let direction = v.required(obj, "metric_direction").and_then(|x| {
        match x.as_str().and_then(Direction::parse) {
            Some(d) => Some(d),
            None => {
                v.err(
                    "metric_direction",
                    "must be \"minimize\" or \"maximize\"",
                    Some(x),
                );
                None
            }
        }
    });
    let run_tag = v.required(obj, "run_tag").and_then(|x| match x {
        Value::String(s) if is_run_tag(s) => Some(s.clone()),
        other => {
            v.err(
                "run_tag",
                "must match ^[a-z0-9][a-z0-9._-]*$, contain no \"..\", not end in \".\" and have at most 64 characters",
                Some(other),
            );
            None
        }
    });
    let constraints = match obj.get("constraints") {
        None => Some(Vec::new()),
        Some(x) => v.text_list("constraints", x),
    };
    let allowlists = match obj.get("exceptional_allowlists") {
        None => Some(Allowlists::default()),
        Some(x) => allowlists(v, x),
    };
    let timeout_ms = match obj.get("timeout_ms") {
        None => Some(limits.default_timeout_ms),
        Some(x) => v.int("timeout_ms", x, 1, limits.max_timeout_ms),
    };
    let max_experiments = match obj.get("max_experiments") {
        None => Some(limits.default_max_experiments),
        Some(x) => v
            .int("max_experiments", x, 1, u64::from(limits.max_experiments))
            .map(|n| n as u32),
    };
    let max_consecutive_failures = match obj.get("max_consecutive_failures") {
        None => Some(DEFAULT_MAX_CONSECUTIVE_FAILURES),
        Some(x) => v
            .int(
                "max_consecutive_failures",
                x,
                1,
                u64::from(limits.max_experiments),
            )
            .map(|n| n as u32),
    };
    let repeats = match obj.get("repeats") {
        None => Some(DEFAULT_REPEATS),
        Some(x) => v
            .int("repeats", x, 1, u64::from(MAX_REPEATS))
            .map(|n| n as u32),
    };
    let parallelism = match obj.get("parallelism") {
        None => Some(DEFAULT_PARALLELISM),
        Some(x) => v
            .int("parallelism", x, 1, u64::from(limits.max_parallelism))
            .map(|n| n as u32),
    };
    let max_stale_experiments = match obj.get("max_stale_experiments") {
        None | Some(Value::Null) => Some(None),
        Some(x) => v
            .int(
                "max_stale_experiments",
                x,
                1,
                u64::from(limits.max_experiments),
            )
            .map(|n| Some(n as u32)),
    };
    let target = match obj.get("target") {
        None | Some(Value::Null) => Some(None),
        Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => Some(n.as_f64()),
        Some(other) => {
            v.err("target", "must be a finite number", Some(other));
            None
        }
    };
    let (prov_eval, prov_data) = match obj.get("provenance") {
        None => (Some(None), Some(None)),
        Some(Value::Object(p)) => {
            v.unknown_keys("provenance.", p, PROVENANCE_KEYS);
            let e = p
                .get("evaluator")
                .map(|x| v.text("provenance.evaluator", x, 4096, false));
            let d = p
                .get("dataset")
                .map(|x| v.text("provenance.dataset", x, 4096, false));
            (
                match e {
                    None => Some(None),
                    Some(Some(s)) => Some(Some(s)),
                    Some(None) => None,
                },
                match d {
                    None => Some(None),
                    Some(Some(s)) => Some(Some(s)),
                    Some(None) => None,
                },
            )
        }
        Some(other) => {
            v.err(
                "provenance",
                "must be an object {evaluator?, dataset?}",
                Some(other),
            );
            (None, None)
        }
    };
    let environment = match obj.get("environment") {
        None => Some(BTreeMap::new()),
        Some(x) => environment(v, x),
    };
    let proposer = match obj.get("proposer") {
        None => Some(None),
        Some(Value::Object(p)) => {
            v.unknown_keys("proposer.", p, PROPOSER_KEYS);
            command(v, "proposer", p).map(Some)
        }
        Some(other) => {
            v.err("proposer", "must be an object {command, args}", Some(other));
            None
        }
    };
    Some(RunPolicy {
        objective: objective?,
        surface: surface?,
        evaluation: evaluation?,
        metric_name: metric_name?,
        direction: direction?,
        run_tag: run_tag?,
        constraints: constraints?,
        allowlists: allowlists?,
        timeout_ms: timeout_ms?,
        max_experiments: max_experiments?,
        max_consecutive_failures: max_consecutive_failures?,
        repeats: repeats?,
        parallelism: parallelism?,
        max_stale_experiments: max_stale_experiments?,
        target: target?,
        provenance_evaluator: prov_eval?,
        provenance_dataset: prov_data?,
        environment: environment?,
        proposer: proposer?,
        holdout: holdout?,
        holdout_stop: holdout_stop?,
        repository,
    })
}

fn command(v: &mut Check, prefix: &str, obj: &Map<String, Value>) -> Option<Command> {
    let cmd = match obj.get("command") {
        Some(Value::String(s)) if !s.is_empty() && !s.contains('\0') && s.trim() == s => {
            Some(s.clone())
        }
        Some(other) => {
            v.err(
                &format!("{prefix}.command"),
                "must be a non-empty string without NUL or surrounding whitespace",
                Some(other),
            );
            None
        }
        None => {
            v.err(&format!("{prefix}.command"), "is required", None);
            None
        }
    };
    let args = match obj.get("args") {
        None => Some(Vec::new()),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !s.contains('\0') => out.push(s.clone()),
                    other => {
                        v.err(
                            &format!("{prefix}.args[{i}]"),
                            "must be a string without NUL",
                            Some(other),
                        );
                        ok = false;
                    }
                }
            }
            ok.then_some(out)
        }
        Some(other) => {
            v.err(
                &format!("{prefix}.args"),
                "must be an array of strings (no shell: one argument per entry)",
                Some(other),
            );
            None
        }
    };
    Some(Command {
        command: cmd?,
        args: args?,
    })
}

/// The holdout's inputs a proposer could read: every path its argv names that is not absolute
/// (relative paths resolve inside the worktree), as (field, value). A path inside the repository
/// given absolutely is caught by the run once the repository is known.
pub fn holdout_problem(h: &Evaluation) -> Vec<(String, String)> {
    let inside = |value: &str| {
        crate::surface::evaluator_inputs("-", &[value.to_owned()], &h.cwd, &[])
            .iter()
            .any(|i| !matches!(i, crate::protocol::InputPath::External(p) if p.starts_with('/')))
    };
    let mut out = Vec::new();
    if h.argv.command.contains('/') && !h.argv.command.starts_with('/') {
        out.push(("holdout.command".to_owned(), h.argv.command.clone()));
    }
    for (i, arg) in h.argv.args.iter().enumerate() {
        if inside(arg) {
            out.push((format!("holdout.args[{i}]"), arg.clone()));
        }
    }
    out
}

fn evaluator(v: &mut Check, field: &str, x: &Value) -> Option<Evaluation> {
    let Value::Object(obj) = x else {
        v.err(field, "must be an object {command, args, cwd?}", Some(x));
        return None;
    };
    v.unknown_keys(&format!("{field}."), obj, EVALUATION_KEYS);
    let argv = command(v, field, obj);
    let cwd = match obj.get("cwd") {
        None => Some(".".to_owned()),
        Some(Value::String(s)) if s == "." => Some(".".to_owned()),
        Some(c) => v.safe_path(&format!("{field}.cwd"), c),
    };
    Some(Evaluation {
        argv: argv?,
        cwd: cwd?,
    })
}

fn allowlists(v: &mut Check, x: &Value) -> Option<Allowlists> {
    let Value::Object(obj) = x else {
        v.err("exceptional_allowlists", "must be an object", Some(x));
        return None;
    };
    v.unknown_keys("exceptional_allowlists.", obj, ALLOWLIST_KEYS);
    let mut list = |key: &str| match obj.get(key) {
        None => Some(Vec::new()),
        Some(x) => v.path_list(&format!("exceptional_allowlists.{key}"), x, false),
    };
    let out = Allowlists {
        dependencies: list("dependencies")?,
        evaluators: list("evaluators")?,
        datasets: list("datasets")?,
        submodules: list("submodules")?,
        git_config: list("gitConfig")?,
    };
    for (i, p) in out.git_config.iter().enumerate() {
        if !crate::git_config::CONFIG_FILES.contains(&p.as_str())
            && !crate::git_config::is_helper_key(p)
        {
            v.err(
                &format!("exceptional_allowlists.gitConfig[{i}]"),
                "must be .git/config, .git/config.worktree or a git config key that runs a \
                 program (include.path, includeIf.<cond>.path, core.hooksPath, core.fsmonitor, \
                 core.sshCommand, filter.<driver>.clean|smudge|process, \
                 diff.<driver>.command|textconv, merge.<driver>.driver)",
                Some(&json!(p)),
            );
        }
    }
    Some(out)
}

/// A spec's values (strings), or a stored policy's hashes (`{"sha256": hex}`).
fn environment(v: &mut Check, x: &Value) -> Option<BTreeMap<String, EnvValue>> {
    let Value::Object(obj) = x else {
        v.err("environment", "must be an object of string values", Some(x));
        return None;
    };
    let mut out = BTreeMap::new();
    let mut ok = true;
    for (key, value) in obj {
        let field = format!("environment.{key}");
        if !is_env_key(key) {
            v.err(
                &field,
                "key must match ^[A-Za-z_][A-Za-z0-9_]*$",
                Some(&json!(key)),
            );
            ok = false;
        } else if key.to_ascii_uppercase().starts_with("DSH_") {
            v.err(&field, "the DSH_ prefix is reserved", Some(&json!(key)));
            ok = false;
        } else if key == SLOT_ENV {
            v.err(
                &field,
                "is set by the run (the evaluator's slot)",
                Some(&json!(key)),
            );
            ok = false;
        }
        let sealed = value
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.get("sha256"))
            .and_then(Value::as_str)
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        match (value, sealed) {
            (Value::String(s), _) if !s.contains('\0') => {
                out.insert(key.clone(), EnvValue::known(s));
            }
            (_, Some(hash)) => {
                out.insert(
                    key.clone(),
                    EnvValue {
                        sha256: hash.to_ascii_lowercase(),
                        value: None,
                    },
                );
            }
            (other, _) => {
                // The value is never echoed: it may be a secret.
                let shown = match other {
                    Value::String(_) => json!("(a string with NUL)"),
                    o => o.clone(),
                };
                v.err(&field, "value must be a string without NUL", Some(&shown));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

#[derive(Default)]
struct Check {
    errors: Vec<SpecError>,
}

impl Check {
    fn err(&mut self, field: &str, rule: &str, value: Option<&Value>) {
        self.errors.push(SpecError {
            field: field.to_owned(),
            rule: rule.to_owned(),
            value: value
                .map(|v| text::clip_within(&v.to_string(), 120))
                .unwrap_or_default(),
            did_you_mean: None,
        });
    }

    fn required<'a>(&mut self, obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
        let found = obj.get(key);
        if found.is_none() {
            self.err(key, "is required", None);
        }
        found
    }

    fn unknown_keys(&mut self, prefix: &str, obj: &Map<String, Value>, known: &[&str]) {
        for key in obj.keys() {
            if !known.contains(&key.as_str()) {
                self.errors.push(SpecError {
                    field: format!("{prefix}{key}"),
                    rule: "unknown key".into(),
                    value: String::new(),
                    did_you_mean: suggest(key, known).map(str::to_owned),
                });
            }
        }
    }

    /// Non-empty text without NUL or surrounding whitespace; `multiline` allows LF.
    fn text(&mut self, field: &str, x: &Value, max: usize, multiline: bool) -> Option<String> {
        match x {
            Value::String(s)
                if !s.trim().is_empty()
                    && s.trim() == s
                    && !s.contains('\0')
                    && !s.contains('\r')
                    && (multiline || !s.contains('\n'))
                    && s.chars().count() <= max =>
            {
                Some(s.clone())
            }
            other => {
                let lines = if multiline { "" } else { ", single-line" };
                self.err(
                    field,
                    &format!("must be non-empty text{lines} without NUL/CR or surrounding whitespace, at most {max} characters"),
                    Some(other),
                );
                None
            }
        }
    }

    fn text_list(&mut self, field: &str, x: &Value) -> Option<Vec<String>> {
        let Value::Array(items) = x else {
            self.err(field, "must be an array of strings", Some(x));
            return None;
        };
        if items.len() > MAX_LIST_ENTRIES {
            self.err(
                field,
                &format!("must have at most {MAX_LIST_ENTRIES} entries"),
                None,
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.text(&format!("{field}[{i}]"), item, MAX_OBJECTIVE_CHARS, false) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn safe_path(&mut self, field: &str, x: &Value) -> Option<String> {
        match x {
            Value::String(s) => match path_problem(s) {
                None => Some(s.clone()),
                Some(rule) => {
                    self.err(field, rule, Some(x));
                    None
                }
            },
            other => {
                self.err(field, "must be a relative path string", Some(other));
                None
            }
        }
    }

    fn path_list(&mut self, field: &str, x: &Value, non_empty: bool) -> Option<Vec<String>> {
        let Value::Array(items) = x else {
            self.err(
                field,
                "must be an array of relative paths or globs",
                Some(x),
            );
            return None;
        };
        if non_empty && items.is_empty() {
            self.err(field, "must not be empty", Some(x));
            return None;
        }
        if items.len() > MAX_LIST_ENTRIES {
            self.err(
                field,
                &format!("must have at most {MAX_LIST_ENTRIES} entries"),
                None,
            );
            return None;
        }
        let mut out: Vec<String> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            match self.safe_path(&format!("{field}[{i}]"), item) {
                Some(s) if !out.contains(&s) => out.push(s),
                Some(_) => {}
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn int(&mut self, field: &str, x: &Value, min: u64, max: u64) -> Option<u64> {
        match x.as_u64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                // Integral floats such as 5.0 are accepted as JavaScript would send them.
                if let Some(f) = x
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= min as f64 && *f <= max as f64)
                {
                    return Some(f as u64);
                }
                self.err(
                    field,
                    &format!("must be an integer from {min} to {max}"),
                    Some(x),
                );
                None
            }
        }
    }
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| {
            g.len() == n
                && g.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// Whether `s` is a valid run id (a lowercase UUID).
pub fn is_run_id(s: &str) -> bool {
    is_uuid(s)
}

fn is_run_tag(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_RUN_TAG_CHARS
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(c))
        && !s.ends_with('.')
        && !s.contains("..")
        && !s.ends_with(".lock")
}

fn is_metric_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_METRIC_NAME_CHARS
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
}

fn is_env_key(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The known key closest to `key` (the family's shared suggestion, [`names::did_you_mean`]).
pub fn suggest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    names::did_you_mean(key, known.iter().copied())
}
