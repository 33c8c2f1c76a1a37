//! The JSON wire format between the run core and the JS driver: each [`Effect`] as one JSON
//! object with a `kind`, each [`Input`] read from one JSON object with a `type`.
//!
//! `packages/autoresearch/wire/run.json` is this wire generated (`tests/wire.rs`: each effect's
//! fields from real runs, [`crate::Effect::answers`], each answer's fields) and the Node tests
//! check `lib/driver.js` against it.
//!
//! Effects (`id` is the number the answer names):
//!
//! | kind | fields | answer |
//! |---|---|---|
//! | `discover` | `repository` (string or null) | `discovered {facts: {toplevel, gitCommonDir, head, gitConfig, host, otherLiveRuns}}` |
//! | `openTracker` | `path` | `done` |
//! | `persist` | `statements: [{sql, params: {name: ["int", "5"] \| ["real", 1.5] \| ["text", "s"] \| null}}]` | `persisted {changes: [n…]}` |
//! | `loadRun` | `runId` | `loaded {rows: null \| {run, experiments, attempts, artifacts}}` (rows as SQLite returns them) |
//! | `createWorktree` | `path`, `branch` (null: a slot's scratch worktree, no branch), `startCommit` | `done` |
//! | `hashInputs` | `worktree`, `paths: [{path, external}]` | `hashed {files: [{path, sha256 \| null}]}` |
//! | `runEvaluator` | `attemptId`, `argv`, `worktree` (its slot's), `cwd`, `env`, `timeoutMs`, `graceMs`, `stdoutCap`, `stderrCap`, `artifactDir` | `spawned {process: {pid, pgid, startTime}}`, then `exited {outcome}` |
//! | `runProposer` | `worktree`, `argv` (null inside DSH), `handoff`, `timeoutMs`, `graceMs` | `proposerExited {outcome}` or `proposed {report: {hypothesis, summary}}` |
//! | `listChanges` | `worktree` | `changes {porcelainZ, worktree}` |
//! | `commit` | `worktree`, `parent`, `paths`, `message`, `keepRef` | `committed {commit}` (`keepRef` now names it) |
//! | `checkoutClean` | `worktree`, `commit` | `done` |
//! | `fastForward` | `branch`, `from`, `to` | `done` |
//! | `probeHost` | `host` (the stored JSON) | `hostProbed {alive: true \| false \| null}` |
//! | `terminateProcessGroup` | `attemptId`, `pid`, `pgid`, `startTime`, `graceMs` | `terminated {gone}` |
//! | `interrupt` | `target` (no id, no answer) | — |
//! | `exportTsv` | `path`, `contents` | `done` |
//! | `loadRetention` | — | `retention {rows: {runs, artifacts}}` (the rows of `listRetentionRuns` and `listRetentionArtifacts` as SQLite returns them) |
//! | `removeFiles` | `files`, `dirs` | `done` (unlink each file, a missing one counts as removed; then rmdir each dir that is empty) |
//! | `removeWorktree` | `path` | `done` |
//! | `report` | `status` (no id, no answer: read the result) | — |
//!
//! Any effect may instead be answered `failed {error}`. An `outcome` is `{exitCode, signal,
//! timedOut, cancelled, quiescent, stdoutTail, stdoutTruncated, stderrTail, artifacts: [{kind,
//! location, sizeBytes, sha256, truncated}], containment, worktree}`; omitted booleans are false,
//! omitted texts empty. A `worktree` is `{anomalies: [{kind, path}], gitConfig}` (`kind` one of
//! `git-link-changed`, `nested-git`, `undecodable-name`, `inside-gitlink`,
//! `tracked-changed`, `worktree-replaced`) and a `gitConfig` is
//! `[{origin, key}]`; omitted lists are empty. `{type: "cancel", reason}` stops the run.

use crate::protocol::{InputPath, ProposalReport, SqlValue};
use crate::{
    Anomaly, AnomalyKind, ArtifactFact, ConfigEntry, Effect, EffectId, HashedFile, Input,
    ProcessIdentity, ProcessOutcome, RepoFacts, WorktreeFacts,
};
use serde_json::{Map, Value, json};

/// An effect as JSON.
pub fn effect_json(effect: &Effect) -> Value {
    let id = effect.id().map(|i| i.0);
    let v = match effect {
        Effect::Discover { repository, .. } => {
            json!({"repository": repository})
        }
        Effect::OpenTracker { path, .. } => json!({"path": path}),
        Effect::Persist { statements, .. } => json!({"statements": statements.iter().map(|s| {
                let params: Map<String, Value> = s
                    .params
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), sql_value(value)))
                    .collect();
                json!({"sql": s.sql, "params": params})
            }).collect::<Vec<_>>(),
        }),
        Effect::LoadRun { run_id, .. } => json!({"runId": run_id}),
        Effect::CreateWorktree {
            path,
            branch,
            start_commit,
            ..
        } => {
            json!({"path": path, "branch": branch, "startCommit": start_commit})
        }
        Effect::HashInputs {
            worktree, paths, ..
        } => json!({"worktree": worktree,
            "paths": paths.iter().map(|p| json!({
                "path": p.as_str(), "external": matches!(p, InputPath::External(_)),
            })).collect::<Vec<_>>(),
        }),
        Effect::RunEvaluator {
            attempt_id,
            argv,
            worktree,
            commit,
            cwd,
            env,
            timeout_ms,
            grace_ms,
            stdout_cap,
            stderr_cap,
            artifact_dir,
            state_dir,
            ..
        } => json!({"attemptId": attempt_id, "argv": argv, "worktree": worktree,
            "commit": commit, "cwd": cwd, "env": env,
            "timeoutMs": timeout_ms, "graceMs": grace_ms, "stdoutCap": stdout_cap,
            "stderrCap": stderr_cap, "artifactDir": artifact_dir, "stateDir": state_dir,
        }),
        Effect::RunProposer {
            worktree,
            argv,
            handoff,
            timeout_ms,
            grace_ms,
            state_dir,
            confined,
            ..
        } => json!({"worktree": worktree, "argv": argv, "handoff": handoff,
            "timeoutMs": timeout_ms, "graceMs": grace_ms, "stateDir": state_dir,
            "confined": confined,
        }),
        Effect::ListChanges { worktree, .. } => {
            json!({"worktree": worktree})
        }
        Effect::Commit {
            worktree,
            parent,
            paths,
            message,
            keep_ref,
            ..
        } => json!({"worktree": worktree, "parent": parent, "paths": paths,
            "message": message, "keepRef": keep_ref}),
        Effect::CheckoutClean {
            worktree, commit, ..
        } => json!({"worktree": worktree, "commit": commit}),
        Effect::FastForwardRunBranch {
            branch, from, to, ..
        } => json!({"branch": branch, "from": from, "to": to}),
        Effect::TerminateProcessGroup {
            attempt_id,
            pid,
            pgid,
            start_time,
            grace_ms,
            ..
        } => json!({"attemptId": attempt_id, "pid": pid, "pgid": pgid,
            "startTime": start_time, "graceMs": grace_ms,
        }),
        Effect::TerminateProposers { grace_ms, .. } => {
            json!({"graceMs": grace_ms})
        }
        Effect::ProbeHost { host, .. } => json!({"host": host}),
        Effect::Interrupt { target } => json!({"target": target.0}),
        Effect::ExportTsv { path, contents, .. } => {
            json!({"path": path, "contents": contents})
        }
        Effect::LoadRetention { .. } => json!({}),
        Effect::RemoveFiles { files, dirs, .. } => {
            json!({"files": files, "dirs": dirs})
        }
        Effect::RemoveWorktree { path, .. } => json!({"path": path}),
        Effect::Report(result) => json!({"status": result.status_text()}),
    };
    // `kind` first, then the fields, then `id`.
    let mut out = Map::new();
    out.insert("kind".into(), json!(effect.kind()));
    if let Value::Object(fields) = v {
        out.extend(fields);
    }
    if let Some(id) = id {
        out.insert("id".into(), json!(id));
    }
    Value::Object(out)
}

/// A bound SQL value: integers travel as decimal text (JSON numbers lose precision past 2^53).
fn sql_value(value: &SqlValue) -> Value {
    match value {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => json!(["int", i.to_string()]),
        SqlValue::Real(f) => json!(["real", f]),
        SqlValue::Text(s) => json!(["text", s]),
    }
}

/// Reads one input; the error names the field that is wrong.
pub fn input_from_json(v: &Value) -> Result<Input, String> {
    let o = v.as_object().ok_or("an input must be a JSON object")?;
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or("an input needs a string `type`")?;
    if kind == "cancel" {
        return Ok(Input::Cancel {
            reason: text(o, "reason")?,
        });
    }
    let id = EffectId(
        o.get("id")
            .and_then(Value::as_u64)
            .ok_or("an input needs the numeric `id` of the effect it answers")?,
    );
    Ok(match kind {
        "discovered" => {
            let f = object(o, "facts")?;
            Input::Discovered {
                id,
                facts: RepoFacts {
                    toplevel: text(f, "toplevel")?,
                    git_common_dir: text(f, "gitCommonDir")?,
                    head: text(f, "head")?,
                    git_config: git_config(f)?,
                    host: opt_text(f, "host")?,
                    other_live_runs: opt_i64(f, "otherLiveRuns")?
                        .map_or(Ok(0), u32::try_from)
                        .map_err(|_| "otherLiveRuns must be a small non-negative integer")?,
                },
            }
        }
        "done" => Input::Done { id },
        "persisted" => Input::Persisted {
            id,
            changes: array(o, "changes")?
                .iter()
                .map(|c| c.as_u64().ok_or("changes must be non-negative integers"))
                .collect::<Result<_, _>>()?,
        },
        "loaded" => Input::Loaded {
            id,
            rows: match o.get("rows") {
                None | Some(Value::Null) => None,
                Some(rows) => Some(Box::new(rows_from_json(rows)?)),
            },
        },
        "retention" => Input::Retention {
            id,
            rows: rows_from_json(o.get("rows").ok_or("retention needs `rows`")?)?,
        },
        "hashed" => Input::Hashed {
            id,
            files: array(o, "files")?
                .iter()
                .map(|f| {
                    let f = f.as_object().ok_or("files[] must be objects")?;
                    Ok(HashedFile {
                        path: text(f, "path")?,
                        sha256: opt_text(f, "sha256")?,
                    })
                })
                .collect::<Result<_, String>>()?,
        },
        "spawned" => {
            let p = object(o, "process")?;
            Input::Spawned {
                id,
                process: ProcessIdentity {
                    pid: u32_of(p, "pid")?,
                    pgid: u32_of(p, "pgid")?,
                    start_time: opt_text(p, "startTime")?,
                },
            }
        }
        "exited" => Input::Exited {
            id,
            outcome: outcome(object(o, "outcome")?)?,
        },
        "proposerExited" => Input::ProposerExited {
            id,
            outcome: outcome(object(o, "outcome")?)?,
        },
        "proposed" => {
            let r = object(o, "report")?;
            Input::Proposed {
                id,
                report: ProposalReport {
                    hypothesis: text(r, "hypothesis")?,
                    summary: text(r, "summary")?,
                },
            }
        }
        "changes" => Input::Changes {
            id,
            porcelain_z: text(o, "porcelainZ")?,
            worktree: worktree_facts(o)?,
        },
        "committed" => Input::Committed {
            id,
            commit: text(o, "commit")?,
        },
        "hostProbed" => Input::HostProbed {
            id,
            alive: match o.get("alive") {
                None | Some(Value::Null) => None,
                Some(_) => Some(flag(o, "alive")?),
            },
        },
        "terminated" => Input::Terminated {
            id,
            gone: flag(o, "gone")?,
        },
        "failed" => Input::Failed {
            id,
            error: text(o, "error")?,
        },
        other => return Err(format!("unknown input type {other:?}")),
    })
}

fn outcome(o: &Map<String, Value>) -> Result<ProcessOutcome, String> {
    let exit_code = match o.get("exitCode") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or("outcome.exitCode must be an integer or null")?,
        ),
    };
    let artifacts = objects(o, "artifacts", "outcome.artifacts")?
        .map(|a| {
            let a = a?;
            Ok(ArtifactFact {
                kind: text(a, "kind")?,
                location: text(a, "location")?,
                size_bytes: a
                    .get("sizeBytes")
                    .and_then(Value::as_u64)
                    .ok_or("artifact sizeBytes must be a non-negative integer")?,
                sha256: text(a, "sha256")?,
                truncated: opt_flag(a, "truncated")?,
            })
        })
        .collect::<Result<_, String>>()?;
    Ok(ProcessOutcome {
        exit_code,
        signal: opt_text(o, "signal")?,
        timed_out: opt_flag(o, "timedOut")?,
        cancelled: opt_flag(o, "cancelled")?,
        quiescent: opt_flag(o, "quiescent")?,
        stdout_tail: opt_text(o, "stdoutTail")?.unwrap_or_default(),
        stdout_truncated: opt_flag(o, "stdoutTruncated")?,
        stderr_tail: opt_text(o, "stderrTail")?.unwrap_or_default(),
        artifacts,
        containment: opt_text(o, "containment")?.unwrap_or_default(),
        worktree: worktree_facts(o)?,
    })
}

fn git_config(o: &Map<String, Value>) -> Result<Vec<ConfigEntry>, String> {
    objects(o, "gitConfig", "gitConfig")?
        .map(|e| {
            let e = e?;
            Ok(ConfigEntry {
                origin: text(e, "origin")?,
                key: text(e, "key")?,
            })
        })
        .collect()
}

/// The optional `worktree` member of a `changes` answer or an evaluator outcome.
fn worktree_facts(o: &Map<String, Value>) -> Result<WorktreeFacts, String> {
    let w = match o.get("worktree") {
        None | Some(Value::Null) => return Ok(WorktreeFacts::default()),
        Some(Value::Object(w)) => w,
        Some(_) => return Err("worktree must be an object".into()),
    };
    let mut anomalies = objects(w, "anomalies", "worktree.anomalies")?
        .map(|a| {
            let a = a?;
            let kind = text(a, "kind")?;
            Ok(Anomaly {
                kind: AnomalyKind::parse(&kind)
                    .ok_or_else(|| format!("unknown anomaly kind {kind:?}"))?,
                path: text(a, "path")?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    anomalies.sort();
    anomalies.dedup();
    Ok(WorktreeFacts {
        anomalies,
        git_config: git_config(w)?,
    })
}

/// Rows of the tracker's columns by name (stored rows as `loaded` carries them, retention
/// rows); an error names the column (`runs[0].run_id: …`).
pub fn rows_from_json<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(v).map_err(|e| format!("{}: {}", e.path(), e.inner()))
}

/// The items of an optional array member (missing or null: none), each an object or the error
/// naming the member `label`.
fn objects<'a>(
    o: &'a Map<String, Value>,
    key: &str,
    label: &str,
) -> Result<impl Iterator<Item = Result<&'a Map<String, Value>, String>>, String> {
    let items = match o.get(key) {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(items)) => items.as_slice(),
        Some(_) => return Err(format!("{label} must be an array")),
    };
    let error = format!("{label}[] must be objects");
    Ok(items
        .iter()
        .map(move |i| i.as_object().ok_or(error.clone())))
}

fn object<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a Map<String, Value>, String> {
    o.get(key)
        .and_then(Value::as_object)
        .ok_or(format!("`{key}` must be an object"))
}

fn array<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a Vec<Value>, String> {
    o.get(key)
        .and_then(Value::as_array)
        .ok_or(format!("`{key}` must be an array"))
}

fn text(o: &Map<String, Value>, key: &str) -> Result<String, String> {
    o.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or(format!("`{key}` must be a string"))
}

fn opt_text(o: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string or null")),
    }
}

fn flag(o: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match o.get(key) {
        Some(Value::Bool(b)) => Ok(*b),
        _ => Err(format!("`{key}` must be true or false")),
    }
}

/// A boolean, or SQLite's 0/1; missing or null is false.
fn opt_flag(o: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Ok(false),
        Some(Value::Number(n)) if n.as_i64() == Some(1) => Ok(true),
        Some(_) => Err(format!("`{key}` must be true, false, 0 or 1")),
    }
}

fn opt_i64(o: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .map(Some)
            .ok_or(format!("`{key}` must be an integer")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("`{key}` must be an integer")),
        Some(_) => Err(format!("`{key}` must be an integer or null")),
    }
}

fn u32_of(o: &Map<String, Value>, key: &str) -> Result<u32, String> {
    o.get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or(format!("`{key}` must be a non-negative 32-bit integer"))
}
