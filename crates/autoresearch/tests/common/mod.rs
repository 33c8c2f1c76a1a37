//! A fake driver for the run core: an in-memory git world (commits as file snapshots), a real
//! in-memory SQLite running the core's SQL, and scripted proposer and evaluator.
#![allow(dead_code, missing_docs)]

mod fixture;

use autoresearch_core as core;
use core::jcs::sha256_hex;
use core::protocol::SqlValue;
use core::sql;
use core::*;
pub use fixture::{limits, settings};
use rusqlite::Connection;
use std::collections::BTreeMap;

pub type Files = BTreeMap<String, String>;
pub const RUN_ID: &str = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9";
pub const NOW: Millis = 1_700_000_000_000;

/// What the scripted evaluator does.
pub type Evaluator = Box<dyn FnMut(&mut Files, u32) -> ProcessOutcome>;
/// What the scripted proposer does in round `n` (edits files; returns a report or an error).
pub type Proposer = Box<dyn FnMut(&mut Files, u32) -> Result<(String, String), String>>;

pub struct World {
    pub db: Connection,
    pub commits: BTreeMap<String, Files>,
    pub start: String,
    pub caller_branch: (String, String),
    pub run_branch: Option<(String, String)>,
    pub worktree_head: Option<String>,
    pub files: Files,
    pub evaluator: Evaluator,
    /// What an evaluator under [`HOLDOUT_DIR`] prints (the holdout's), when set.
    pub holdout: Option<Evaluator>,
    pub proposer: Proposer,
    pub evaluations: u32,
    pub rounds: u32,
    pub log: Vec<String>,
    /// Effects performed so far; `crash_after` stops driving after that many.
    pub performed: usize,
    pub crash_after: Option<usize>,
    /// Fail the nth effect whose log line starts with the prefix.
    pub fail: Option<(String, String)>,
    /// Whether interrupted process groups are gone when asked to terminate.
    pub groups_gone: bool,
    /// Outstanding (spawned but not exited) evaluator, when a crash happened mid-evaluation.
    pub cancel_during_eval: Option<u32>,
    pub reports: Vec<RunResult>,
    pub interrupts: u32,
    pub tsv: Option<String>,
    /// The repository's git config, as discovery and every round report it.
    pub git_config: Vec<ConfigEntry>,
    /// What the driver's worktree walk reports after proposal round `n` (by round).
    pub anomalies: BTreeMap<u32, Vec<Anomaly>>,
    /// When set, the git config every round reports (discovery still reports `git_config`).
    pub round_config: Option<Vec<ConfigEntry>>,
    /// The host discovery reports (the driving host), stored with the run.
    pub host: Option<String>,
    /// What probing a stored host answers.
    pub host_alive: Option<bool>,
    /// The original's live runs discovery reports.
    pub other_live_runs: u32,
    /// Files and worktrees retention removed, in order (`file <path>`, `worktree <path>`).
    pub removed: Vec<String>,
    /// The time the driver stamps its first answer with (later ones count up by 1 ms).
    pub clock: Millis,
    /// Whether each evaluation reports its stdout and stderr artifacts in `artifact_dir`.
    pub write_artifacts: bool,
    /// The handoff of each proposal round.
    pub handoffs: Vec<String>,
    /// The worktree `files` and `worktree_head` are of (`None` before the first).
    pub current: Option<String>,
    /// Every other worktree's files and head (the slots' under `parallelism`).
    pub trees: BTreeMap<String, (Files, Option<String>)>,
    /// Each evaluation's `AUTORESEARCH_SLOT`, in order.
    pub slots: Vec<String>,
    /// The evaluators held by `cancel_during_eval`, unanswered.
    pub held: Vec<EffectId>,
    /// Every effect performed, as the driver reads it ([`core::wire::effect_json`]), and the
    /// answers it takes.
    pub wire: Vec<(serde_json::Value, &'static [&'static str])>,
}

pub fn metric_out(name: &str, value: f64) -> ProcessOutcome {
    ProcessOutcome {
        exit_code: Some(0),
        quiescent: true,
        stdout_tail: format!("log line\n{{\"{name}\": {value}}}\n"),
        ..ProcessOutcome::default()
    }
}

/// The evaluator reads `score.txt` and prints `{"score": <its number>}`.
pub fn score_evaluator() -> Evaluator {
    Box::new(|files, _| {
        let v: f64 = files
            .get("score.txt")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(f64::NAN);
        if v.is_nan() {
            return ProcessOutcome {
                exit_code: Some(1),
                quiescent: true,
                stderr_tail: "no score".into(),
                ..Default::default()
            };
        }
        metric_out("score", v)
    })
}

/// `score.txt`'s number plus a fixed offset cycling +0.5, -0.5, 0 per evaluation (spread 0.5).
pub fn noisy_evaluator() -> Evaluator {
    let mut score = score_evaluator();
    Box::new(move |files, n| {
        let mut out = score(files, n);
        let offset = [0.0, 0.5, -0.5][(n % 3) as usize];
        let value: f64 = out
            .stdout_tail
            .rsplit(": ")
            .next()
            .and_then(|v| v.trim().trim_end_matches('}').parse().ok())
            .unwrap_or(f64::NAN);
        if value.is_finite() {
            out = metric_out("score", value + offset);
        }
        out
    })
}

/// Round 1 breaks the score (its evaluation fails), later rounds write `7 - n`.
pub fn failing_first() -> Proposer {
    Box::new(|files, n| {
        let text = if n == 1 {
            "oops\n".to_owned()
        } else {
            format!("{}\n", 7 - n)
        };
        files.insert("score.txt".into(), text);
        Ok((format!("round {n}"), "edited score.txt".into()))
    })
}

/// Writes each value in turn to `score.txt`.
pub fn score_proposer(values: Vec<f64>) -> Proposer {
    Box::new(move |files, n| {
        let v = values.get((n - 1) as usize).copied().unwrap_or(0.0);
        files.insert(
            "score.txt".into(),
            format!("{v}\n{}", " ".repeat(n as usize)),
        );
        Ok((format!("try {v}"), format!("set score to {v}")))
    })
}

pub fn base_files() -> Files {
    let mut f = Files::new();
    f.insert("score.txt".into(), "10\n".into());
    f.insert("eval.mjs".into(), "print score".into());
    f.insert("README.md".into(), "hello".into());
    f
}

/// Where the tests' holdout evaluator lives (outside any repository).
pub const HOLDOUT_DIR: &str = "/srv/holdout/";

pub fn spec_json(extra: serde_json::Value) -> serde_json::Value {
    let mut v = serde_json::json!({
        "objective": "lower the score",
        "mutable_globs": ["score.txt", "src/**"],
        "evaluation": {"command": "node", "args": ["eval.mjs"]},
        "metric_name": "score",
        "metric_direction": "minimize",
        "run_tag": "exp-1",
        "max_experiments": 3
    });
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = x.clone();
        }
    }
    v
}

pub fn policy(extra: serde_json::Value) -> RunPolicy {
    match spec::validate(&spec_json(extra), &limits()).unwrap() {
        Request::Fresh { policy, .. } => *policy,
        other => panic!("{other:?}"),
    }
}

fn commit_id(parent: &str, files: &Files) -> String {
    let text = format!("{parent}\n{files:?}");
    sha256_hex(text.as_bytes())[..40].to_owned()
}

impl World {
    pub fn new(evaluator: Evaluator, proposer: Proposer) -> World {
        let db = Connection::open_in_memory().unwrap();
        db.execute_batch(sql::PRAGMAS).unwrap();
        for m in sql::migration_plan(0).unwrap() {
            db.execute_batch(&format!(
                "BEGIN IMMEDIATE; {} PRAGMA user_version = {}; COMMIT;",
                m.sql, m.version
            ))
            .unwrap();
        }
        let files = base_files();
        let start = commit_id("root", &files);
        let mut commits = BTreeMap::new();
        commits.insert(start.clone(), files);
        World {
            db,
            commits,
            start: start.clone(),
            caller_branch: ("main".into(), start),
            run_branch: None,
            worktree_head: None,
            files: Files::new(),
            evaluator,
            holdout: None,
            proposer,
            evaluations: 0,
            rounds: 0,
            log: Vec::new(),
            performed: 0,
            crash_after: None,
            fail: None,
            groups_gone: true,
            host: Some(r#"{"hostname":"h","bootId":"b","pidNs":"pid:[4026531836]","pid":4000,"startTime":"1"}"#.into()),
            host_alive: Some(false),
            other_live_runs: 0,
            cancel_during_eval: None,
            reports: Vec::new(),
            interrupts: 0,
            tsv: None,
            git_config: Vec::new(),
            anomalies: BTreeMap::new(),
            round_config: None,
            removed: Vec::new(),
            clock: NOW,
            write_artifacts: false,
            handoffs: Vec::new(),
            current: None,
            trees: BTreeMap::new(),
            slots: Vec::new(),
            held: Vec::new(),
            wire: Vec::new(),
        }
    }

    /// Makes `path` the worktree `files` and `worktree_head` describe.
    fn enter(&mut self, path: &str) {
        if self.current.as_deref() == Some(path) {
            return;
        }
        let (files, head) = self.trees.remove(path).unwrap_or_default();
        let files = std::mem::replace(&mut self.files, files);
        let head = std::mem::replace(&mut self.worktree_head, head);
        if let Some(old) = self.current.replace(path.to_owned()) {
            self.trees.insert(old, (files, head));
        }
    }

    /// The worktree an effect works in, if any.
    fn worktree_of(effect: &Effect) -> Option<&str> {
        match effect {
            Effect::HashInputs { worktree, .. }
            | Effect::RunEvaluator { worktree, .. }
            | Effect::RunProposer { worktree, .. }
            | Effect::ListChanges { worktree, .. }
            | Effect::Commit { worktree, .. }
            | Effect::CheckoutClean { worktree, .. } => Some(worktree),
            Effect::CreateWorktree { path, .. } => Some(path),
            _ => None,
        }
    }

    fn fails(&mut self, line: &str) -> Option<String> {
        if let Some((prefix, error)) = &self.fail
            && line.starts_with(prefix.as_str())
        {
            let e = error.clone();
            self.fail = None;
            return Some(e);
        }
        None
    }

    /// Performs one effect, returning the answers (none for Interrupt/Report), each one the
    /// effect takes on the wire ([`Effect::answers`]): every test's driving checks that table.
    pub fn perform(&mut self, effect: Effect) -> Vec<Input> {
        let takes = effect.answers();
        let kind = effect.kind();
        self.wire.push((core::wire::effect_json(&effect), takes));
        let inputs = self.perform_unchecked(effect);
        for input in &inputs {
            assert!(
                takes.contains(&input.kind()),
                "{} does not answer {kind} on the wire",
                input.kind()
            );
        }
        inputs
    }

    fn perform_unchecked(&mut self, effect: Effect) -> Vec<Input> {
        self.performed += 1;
        let line = describe(&effect);
        self.log.push(line.clone());
        if let Some(error) = self.fails(&line)
            && let Some(id) = effect.id()
        {
            return vec![Input::Failed { id, error }];
        }
        if let Some(path) = World::worktree_of(&effect) {
            self.enter(path);
        }
        match effect {
            Effect::Discover { id, .. } => vec![Input::Discovered {
                id,
                facts: RepoFacts {
                    toplevel: "/repo".into(),
                    git_common_dir: "/repo/.git".into(),
                    head: self.start.clone(),
                    git_config: self.git_config.clone(),
                    host: self.host.clone(),
                    other_live_runs: self.other_live_runs,
                },
            }],
            Effect::OpenTracker { id, .. } => vec![Input::Done { id }],
            Effect::Persist { id, statements } => match self.persist(&statements) {
                Ok(changes) => vec![Input::Persisted { id, changes }],
                Err(error) => vec![Input::Failed { id, error }],
            },
            Effect::LoadRun { id, run_id } => vec![Input::Loaded {
                id,
                rows: self.load(&run_id).map(Box::new),
            }],
            Effect::CreateWorktree {
                id,
                branch: None,
                start_commit,
                ..
            } => {
                if self.worktree_head.is_none() {
                    self.files = self.commits[&start_commit].clone();
                    self.worktree_head = Some(start_commit);
                }
                vec![Input::Done { id }]
            }
            Effect::CreateWorktree {
                id,
                branch: Some(branch),
                start_commit,
                ..
            } => {
                if let Some((b, c)) = &self.run_branch
                    && (b != &branch || c != &start_commit)
                {
                    return vec![Input::Failed {
                        id,
                        error: "branch exists".into(),
                    }];
                }
                if self.run_branch.is_none() {
                    self.run_branch = Some((branch, start_commit.clone()));
                    self.files = self.commits[&start_commit].clone();
                    self.worktree_head = Some(start_commit);
                }
                vec![Input::Done { id }]
            }
            Effect::HashInputs { id, paths, .. } => vec![Input::Hashed {
                id,
                files: paths
                    .iter()
                    .map(|p| HashedFile {
                        path: p.as_str().to_owned(),
                        sha256: self.files.get(p.as_str()).map(|c| sha256_hex(c.as_bytes())),
                    })
                    .collect(),
            }],
            Effect::RunEvaluator {
                id,
                attempt_id,
                artifact_dir,
                env,
                argv,
                ..
            } => {
                self.evaluations += 1;
                self.slots
                    .push(env.get(spec::SLOT_ENV).cloned().unwrap_or_default());
                let mut out = vec![Input::Spawned {
                    id,
                    process: ProcessIdentity {
                        pid: 4000 + self.evaluations,
                        pgid: 4000 + self.evaluations,
                        start_time: Some("123".into()),
                    },
                }];
                if self.crash_after.is_some_and(|n| self.performed >= n) {
                    // The host dies mid-evaluation: the process was spawned, never reported exit.
                    let _ = attempt_id;
                    return out;
                }
                if self
                    .cancel_during_eval
                    .is_some_and(|n| self.evaluations >= n)
                {
                    // Hold the evaluator (and every later one): the test cancels, and the
                    // interrupt answers it.
                    self.log.push("(evaluator held)".into());
                    self.held.push(id);
                    return out;
                }
                let holdout = argv.iter().any(|a| a.starts_with(HOLDOUT_DIR));
                let mut o = match (&mut self.holdout, holdout) {
                    (Some(h), true) => h(&mut self.files, self.evaluations),
                    _ => (self.evaluator)(&mut self.files, self.evaluations),
                };
                if self.write_artifacts {
                    for (kind, text) in [("stdout", &o.stdout_tail), ("stderr", &o.stderr_tail)] {
                        o.artifacts.push(ArtifactFact {
                            kind: kind.into(),
                            location: format!("{artifact_dir}/{kind}.log"),
                            size_bytes: text.len() as u64,
                            sha256: sha256_hex(text.as_bytes()),
                            truncated: false,
                        });
                    }
                }
                out.push(Input::Exited { id, outcome: o });
                out
            }
            Effect::RunProposer { id, handoff, .. } => {
                self.handoffs.push(handoff);
                self.rounds += 1;
                match (self.proposer)(&mut self.files, self.rounds) {
                    Ok((hypothesis, summary)) => {
                        vec![Input::Proposed {
                            id,
                            report: core::protocol::ProposalReport {
                                hypothesis,
                                summary,
                            },
                        }]
                    }
                    Err(error) => vec![Input::Failed { id, error }],
                }
            }
            Effect::ListChanges { id, .. } => {
                let head = &self.commits[self.worktree_head.as_ref().unwrap()];
                let mut out = String::new();
                for (path, content) in &self.files {
                    match head.get(path) {
                        None if path.ends_with(".cache") => out.push_str(&format!("!! {path}\0")),
                        None => out.push_str(&format!("?? {path}\0")),
                        Some(c) if c != content => out.push_str(&format!(" M {path}\0")),
                        _ => {}
                    }
                }
                for path in head.keys() {
                    if !self.files.contains_key(path) {
                        out.push_str(&format!(" D {path}\0"));
                    }
                }
                vec![Input::Changes {
                    id,
                    porcelain_z: out,
                    worktree: WorktreeFacts {
                        anomalies: self
                            .anomalies
                            .get(&self.rounds)
                            .cloned()
                            .unwrap_or_default(),
                        git_config: self
                            .round_config
                            .clone()
                            .unwrap_or_else(|| self.git_config.clone()),
                    },
                }]
            }
            Effect::Commit {
                id, parent, paths, ..
            } => {
                let mut snap = self.commits[&parent].clone();
                for p in &paths {
                    match self.files.get(p) {
                        Some(c) => snap.insert(p.clone(), c.clone()),
                        None => snap.remove(p),
                    };
                }
                let c = commit_id(&parent, &snap);
                self.commits.insert(c.clone(), snap.clone());
                self.files = snap;
                self.worktree_head = Some(c.clone());
                vec![Input::Committed { id, commit: c }]
            }
            Effect::CheckoutClean { id, commit, .. } => {
                self.files = self.commits[&commit].clone();
                self.worktree_head = Some(commit);
                vec![Input::Done { id }]
            }
            Effect::FastForwardRunBranch {
                id,
                branch,
                from,
                to,
            } => {
                let (b, c) = self.run_branch.clone().unwrap();
                assert_eq!(b, branch, "only the run branch ever moves");
                if c == to {
                    return vec![Input::Done { id }];
                }
                if c != from {
                    return vec![Input::Failed {
                        id,
                        error: format!("branch at {c}, expected {from}"),
                    }];
                }
                self.run_branch = Some((b, to));
                vec![Input::Done { id }]
            }
            Effect::TerminateProcessGroup { id, .. } => vec![Input::Terminated {
                id,
                gone: self.groups_gone,
            }],
            Effect::TerminateProposers { id, .. } => vec![Input::Terminated { id, gone: true }],
            Effect::ProbeHost { id, .. } => vec![Input::HostProbed {
                id,
                alive: self.host_alive,
            }],
            Effect::Interrupt { .. } => {
                self.interrupts += 1;
                vec![]
            }
            Effect::ExportTsv { id, contents, .. } => {
                self.tsv = Some(contents);
                vec![Input::Done { id }]
            }
            Effect::LoadRetention { id } => vec![Input::Retention {
                id,
                rows: self.retention(),
            }],
            Effect::RemoveFiles { id, files, .. } => {
                self.removed
                    .extend(files.iter().map(|f| format!("file {f}")));
                vec![Input::Done { id }]
            }
            Effect::RemoveWorktree { id, path } => {
                self.removed.push(format!("worktree {path}"));
                vec![Input::Done { id }]
            }
            Effect::Report(r) => {
                self.reports.push(*r);
                vec![]
            }
        }
    }

    fn persist(&mut self, statements: &[core::protocol::Statement]) -> Result<Vec<u64>, String> {
        let tx = self.db.unchecked_transaction().map_err(|e| e.to_string())?;
        let mut changes = Vec::new();
        for st in statements {
            let names = sql::parameter_names(st.sql);
            let mut given: Vec<&str> = st.params.iter().map(|(n, _)| *n).collect();
            given.sort();
            let mut want = names.clone();
            want.sort();
            assert_eq!(given, want, "parameters of {}", st.sql);
            let owned: Vec<(String, rusqlite::types::Value)> = st
                .params
                .iter()
                .map(|(n, v)| (format!(":{n}"), to_sql(v)))
                .collect();
            let refs: Vec<(&str, &dyn rusqlite::ToSql)> = owned
                .iter()
                .map(|(n, v)| (n.as_str(), v as &dyn rusqlite::ToSql))
                .collect();
            let n = tx
                .execute(st.sql, refs.as_slice())
                .map_err(|e| e.to_string())?;
            changes.push(n as u64);
        }
        tx.commit().map_err(|e| e.to_string())?;
        Ok(changes)
    }

    pub fn load(&self, run_id: &str) -> Option<StoredRows> {
        let mut q = self.db.prepare(sql::LOAD_RUN).unwrap();
        let run = q
            .query_row(rusqlite::named_params! {":run_id": run_id}, |r| {
                Ok(StoredRun {
                    run_id: r.get("run_id")?,
                    repository_id: r.get("repository_id")?,
                    run_tag: r.get("run_tag")?,
                    branch: r.get("branch")?,
                    worktree: r.get("worktree")?,
                    start_commit: r.get("start_commit")?,
                    policy_json: r.get("policy_json")?,
                    policy_sha256: r.get("policy_sha256")?,
                    provenance_json: r.get("provenance_json")?,
                    provenance_sha256: r.get("provenance_sha256")?,
                    state: r.get("state")?,
                    baseline_commit: r.get("baseline_commit")?,
                    baseline_metric: r.get("baseline_metric")?,
                    best_commit: r.get("best_commit")?,
                    best_metric: r.get("best_metric")?,
                    best_experiment_id: r.get("best_experiment_id")?,
                    consecutive_failures: r.get("consecutive_failures")?,
                    terminal_reason: r.get("terminal_reason")?,
                    blocker_json: r.get("blocker_json")?,
                    quiescent: r.get::<_, i64>("quiescent")? == 1,
                    lock_held: r.get::<_, i64>("lock_held")? == 1,
                    host_json: r.get("host_json")?,
                    interrupted_at: r.get("interrupted_at")?,
                    worktree_removed_at: r.get("worktree_removed_at")?,
                    tsv_removed_at: r.get("tsv_removed_at")?,
                })
            })
            .ok()?;
        let mut q = self.db.prepare(sql::LOAD_EXPERIMENTS).unwrap();
        let experiments = q
            .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
                Ok(StoredExperiment {
                    experiment_id: r.get("experiment_id")?,
                    ordinal: r.get("ordinal")?,
                    kind: r.get("kind")?,
                    state: r.get("state")?,
                    parent_commit: r.get("parent_commit")?,
                    candidate_commit: r.get("candidate_commit")?,
                    hypothesis: r.get("hypothesis")?,
                    summary: r.get("summary")?,
                    changed_paths_json: r.get("changed_paths_json")?,
                    metric: r.get("metric")?,
                    decision: r.get("decision")?,
                    failure_code: r.get("failure_code")?,
                    failure_message: r.get("failure_message")?,
                    superseded_by: r.get("superseded_by")?,
                })
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let mut q = self.db.prepare(sql::LOAD_ATTEMPTS).unwrap();
        let attempts = q
            .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
                Ok(StoredAttempt {
                    attempt_id: r.get("attempt_id")?,
                    experiment_id: r.get("experiment_id")?,
                    ordinal: r.get("ordinal")?,
                    state: r.get("state")?,
                    pid: r.get("pid")?,
                    pgid: r.get("pgid")?,
                    process_start_time: r.get("process_start_time")?,
                    quiescent: r.get::<_, Option<i64>>("quiescent")?.map(|q| q == 1),
                    purpose: r.get("purpose")?,
                    metric: r.get("metric")?,
                })
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let mut q = self.db.prepare(sql::LOAD_ARTIFACTS).unwrap();
        let artifacts = q
            .query_map(rusqlite::named_params! {":run_id": run_id}, |r| {
                Ok(StoredArtifact {
                    artifact_id: r.get("artifact_id")?,
                    experiment_id: r.get("experiment_id")?,
                    attempt_id: r.get("attempt_id")?,
                    kind: r.get("kind")?,
                    location: r.get("location")?,
                    size_bytes: r.get("size_bytes")?,
                    sha256: r.get("sha256")?,
                    truncated: r.get::<_, i64>("truncated")? == 1,
                    removed_at: r.get("removed_at")?,
                })
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        Some(StoredRows {
            run,
            experiments,
            attempts,
            artifacts,
        })
    }

    /// The retention cleanup's rows, read with the core's SQL.
    pub fn retention(&self) -> RetentionRows {
        let mut q = self.db.prepare(sql::LIST_RETENTION_RUNS).unwrap();
        let runs = q
            .query_map([], |r| {
                Ok(RetentionRun {
                    run_id: r.get("run_id")?,
                    state: r.get("state")?,
                    worktree: r.get("worktree")?,
                    terminal_at: r.get("terminal_at")?,
                    worktree_removed_at: r.get("worktree_removed_at")?,
                    tsv_removed_at: r.get("tsv_removed_at")?,
                    lock_held: r.get::<_, i64>("lock_held")? == 1,
                })
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let mut q = self.db.prepare(sql::LIST_RETENTION_ARTIFACTS).unwrap();
        let artifacts = q
            .query_map([], |r| {
                Ok(RetentionArtifact {
                    artifact_id: r.get("artifact_id")?,
                    run_id: r.get("run_id")?,
                    attempt_id: r.get("attempt_id")?,
                    location: r.get("location")?,
                    attempt_failure_code: r.get("attempt_failure_code")?,
                })
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        RetentionRows { runs, artifacts }
    }

    pub fn scalar<T: rusqlite::types::FromSql>(&self, sql: &str) -> T {
        self.db.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// Drives `run` until it reports or a crash is simulated. Returns the report, if any.
    pub fn drive(&mut self, run: &mut Run) -> Option<RunResult> {
        let mut now = self.clock;
        for _ in 0..100_000 {
            if self.crash_after.is_some_and(|n| self.performed >= n) {
                return None;
            }
            let Some(effect) = run.poll() else {
                return match run.status() {
                    Phase::Done(r) => Some(*r),
                    Phase::Waiting => None,
                };
            };
            for input in self.perform(effect) {
                now += 1;
                run.handle(input, now).expect("driver contract");
            }
        }
        panic!("the run did not finish");
    }
}

fn to_sql(v: &SqlValue) -> rusqlite::types::Value {
    match v {
        SqlValue::Null => rusqlite::types::Value::Null,
        SqlValue::Integer(i) => rusqlite::types::Value::Integer(*i),
        SqlValue::Real(f) => rusqlite::types::Value::Real(*f),
        SqlValue::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

/// One line per effect, for transcripts.
pub fn describe(e: &Effect) -> String {
    match e {
        Effect::Discover { .. } => "discover".into(),
        Effect::OpenTracker { .. } => "open-tracker".into(),
        Effect::Persist { statements, .. } => {
            let names: Vec<String> = statements
                .iter()
                .map(|s| {
                    let first = s
                        .sql
                        .split_whitespace()
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" ");
                    match s.params.iter().find(|(n, _)| *n == "to" || *n == "state") {
                        Some((_, SqlValue::Text(t))) => format!("{first}→{t}"),
                        _ => first,
                    }
                })
                .collect();
            format!("persist [{}]", names.join("; "))
        }
        Effect::LoadRun { .. } => "load-run".into(),
        Effect::CreateWorktree {
            branch: Some(branch),
            ..
        } => format!("create-worktree {branch}"),
        Effect::CreateWorktree { path, .. } => {
            format!("create-worktree {}", path.rsplit('/').next().unwrap_or(""))
        }
        Effect::HashInputs { paths, .. } => format!(
            "hash {:?}",
            paths.iter().map(|p| p.as_str()).collect::<Vec<_>>()
        ),
        Effect::RunEvaluator {
            argv, attempt_id, ..
        } => format!("evaluate {argv:?} {attempt_id}"),
        Effect::RunProposer { .. } => "propose".into(),
        Effect::ListChanges { .. } => "list-changes".into(),
        Effect::Commit { paths, .. } => format!("commit {paths:?}"),
        Effect::CheckoutClean { commit, .. } => format!("checkout-clean {}", &commit[..8]),
        Effect::FastForwardRunBranch { to, .. } => format!("fast-forward {}", &to[..8]),
        Effect::TerminateProcessGroup { pid, .. } => format!("terminate {pid:?}"),
        Effect::TerminateProposers { .. } => "terminate-proposers".into(),
        Effect::ProbeHost { .. } => "probe-host".into(),
        Effect::Interrupt { target } => format!("interrupt {}", target.0),
        Effect::ExportTsv { .. } => "export-tsv".into(),
        Effect::LoadRetention { .. } => "load-retention".into(),
        Effect::RemoveFiles { files, .. } => format!("remove-files {}", files.len()),
        Effect::RemoveWorktree { .. } => "remove-worktree".into(),
        Effect::Report(r) => format!("report {}", r.status.as_str()),
    }
}

pub fn start(policy: RunPolicy) -> Run {
    Run::start(policy, RUN_ID, settings(), NOW).unwrap()
}

/// Every crash point of the run `setup` makes: for each step `k` a first run performs, a fresh
/// world crashed after step `k`, then resumed to its report. A crash before the run's row existed
/// (`run-missing`) is passed over; every other run must end `budget-limited`, and `check(k,
/// world, report)` says what else it must show.
pub fn for_every_crash_point(
    setup: impl Fn() -> (World, RunPolicy),
    mut check: impl FnMut(usize, &World, &RunResult),
) {
    let total = {
        let (mut probe, policy) = setup();
        probe.drive(&mut start(policy)).expect("report");
        probe.performed
    };
    for k in 1..total {
        let (mut w, policy) = setup();
        let mut run = start(policy);
        w.crash_after = Some(k);
        let r = match w.drive(&mut run) {
            Some(r) => r,
            None => {
                drop(run);
                let mut run = Run::resume(
                    RUN_ID,
                    Default::default(),
                    None,
                    settings(),
                    NOW + 1_000_000,
                )
                .unwrap();
                w.crash_after = None;
                w.drive(&mut run).expect("report")
            }
        };
        if r.blocker.as_ref().is_some_and(|b| b.code == "run-missing") {
            continue;
        }
        assert_eq!(
            r.status,
            Status::BudgetLimited,
            "crash at {k}: {:?}",
            r.blocker
        );
        check(k, &w, &r);
    }
}
