//! dsh-autoresearch's WebAssembly surface (cargo feature `autoresearch`).
//!
//! [`Run`] wraps the sans-I/O run core for a JS driver: `poll()` hands out the next effect as JSON
//! ([`wire`] documents every shape), the driver performs it and feeds the answer back with
//! `handle(inputJson, now)`, until a `report` effect; then the result is read as bounded JSON, TSV
//! or a table. The same driver serves the headless runner (`bin/dsh-autoresearch.js`) and the DSH
//! tool. Besides the run, this module validates the row config and run specs (every error naming
//! the field, the rule and the value), renders the runner's `list` and `show`, and hands the
//! driver the tracker's SQL texts so it never writes SQL of its own. Nothing here performs I/O or
//! knows DSH.

use autoresearch::escape::escape_controls;
use autoresearch::progress::Progress;
use autoresearch::spec::{self, Request, SpecError};
use autoresearch::sql;
use autoresearch::tool;
use autoresearch::wire;
use autoresearch::{Input, Phase, RunResult, Settings};
use config::autoresearch::RowConfig;
use serde_json::{Map, Value, json};
use wasm_bindgen::prelude::*;

validate_config_binding!(validateAutoresearchConfig, RowConfig);

/// Validates a run spec against the deployment's limits for the headless runner (`headless`) or
/// the DSH tool ([`autoresearch::run::parse_spec`]). Answers `{"ok": {"kind": "fresh", "mode", "runTag",
/// "repository"}}`, `{"ok": {"kind": "resume", "runId", "mode", "repository"}}` or
/// `{"errors": [{"field", "rule", "value", "didYouMean", "message"}]}`.
pub fn check_spec(spec_json: &str, settings: &Settings, headless: bool) -> Value {
    match autoresearch::run::parse_spec(spec_json, settings, headless) {
        Ok(Request::Fresh { policy, mode }) => json!({"ok": {
            "kind": "fresh", "mode": mode.as_str(), "runTag": policy.run_tag,
            "repository": policy.repository,
        }}),
        Ok(Request::Resume {
            run_id,
            mode,
            repository,
            ..
        }) => json!({"ok": {
            "kind": "resume", "runId": run_id, "mode": mode.as_str(), "repository": repository,
        }}),
        Ok(Request::Abandon {
            run_id, repository, ..
        }) => json!({"ok": {
            "kind": "abandon", "runId": run_id, "mode": "foreground", "repository": repository,
        }}),
        Err(errors) => json!({"errors": errors.iter().map(SpecError::to_json).collect::<Vec<_>>()}),
    }
}

/// [`check_spec`] for JS; throws only for an invalid config.
#[wasm_bindgen(js_name = validateAutoresearchSpec)]
pub fn validate_spec(
    spec_json: &str,
    config_json: &str,
    headless: bool,
) -> Result<String, JsError> {
    let (_, settings) = config::load::<RowConfig>(config_json).map_err(|m| JsError::new(&m))?;
    Ok(check_spec(spec_json, &settings, headless).to_string())
}

/// Whether `text` is a valid run id (a lowercase UUID), checked before any file is touched.
#[wasm_bindgen(js_name = isAutoresearchRunId)]
pub fn is_run_id(text: &str) -> bool {
    spec::is_run_id(text)
}

/// The tracker database of a repository whose absolute git common dir is `git_common_dir`.
#[wasm_bindgen(js_name = autoresearchTrackerPath)]
pub fn tracker_path(git_common_dir: &str, config_json: &str) -> Result<String, JsError> {
    let (_, settings) = config::load::<RowConfig>(config_json).map_err(|m| JsError::new(&m))?;
    Ok(autoresearch::tracker_path(
        git_common_dir,
        &settings.state_root,
    ))
}

/// The tracker's SQL for the driver: `{pragmas, readOnlyPragmas, schemaVersion, loadRun,
/// loadExperiments, loadAttempts, loadArtifacts, listRuns, listRetentionRuns,
/// listRetentionArtifacts, originalLockColumns, originalRunColumns}` (the load statements take
/// `:run_id`, `listRuns` `:limit`, the others nothing).
#[wasm_bindgen(js_name = autoresearchSql)]
pub fn sql_texts() -> String {
    json!({
        "pragmas": sql::PRAGMAS, "readOnlyPragmas": sql::READ_ONLY_PRAGMAS,
        "originalLockColumns": sql::ORIGINAL_LOCK_COLUMNS,
        "originalRunColumns": sql::ORIGINAL_RUN_COLUMNS,
        "schemaVersion": sql::SCHEMA_VERSION, "loadRun": sql::LOAD_RUN,
        "loadExperiments": sql::LOAD_EXPERIMENTS, "loadAttempts": sql::LOAD_ATTEMPTS,
        "loadArtifacts": sql::LOAD_ARTIFACTS, "listRuns": sql::LIST_RUNS,
        "listRetentionRuns": sql::LIST_RETENTION_RUNS,
        "listRetentionArtifacts": sql::LIST_RETENTION_ARTIFACTS,
    })
    .to_string()
}

/// The query for the original's live locks ([`sql::original_live_locks`]) or its runs
/// ([`sql::original_runs`]) — `table` `active_locks` or `runs` — given that table's columns
/// (`columns_json`, an array of names).
#[wasm_bindgen(js_name = autoresearchOriginalQuery)]
pub fn original_query(table: &str, columns_json: &str) -> Result<String, JsError> {
    let columns: Vec<String> = serde_json::from_str(columns_json)?;
    match table {
        "active_locks" => Ok(sql::original_live_locks(&columns)),
        "runs" => Ok(sql::original_runs(&columns)),
        other => Err(JsError::new(&format!("no original query over {other:?}"))),
    }
}

/// The migrations to apply to a tracker at `PRAGMA user_version` = `current`, as JSON
/// `[{"version", "sql"}]`; throws for a database newer than this package.
#[wasm_bindgen(js_name = autoresearchMigrations)]
pub fn migrations(current: f64) -> Result<String, JsError> {
    migrations_json(current as i64).map_err(|m| JsError::new(&m))
}

/// [`migrations`] in plain Rust.
pub fn migrations_json(current: i64) -> Result<String, String> {
    let plan = sql::migration_plan(current).map_err(|e| e.to_string())?;
    Ok(json!(
        plan.iter()
            .map(|m| json!({"version": m.version, "sql": m.sql}))
            .collect::<Vec<_>>()
    )
    .to_string())
}

/// [`autoresearch::list::render`] over rows given as JSON text (from `listRuns`, newest first).
pub fn render_list(rows_json: &str, format: &str) -> Result<String, String> {
    let rows: Vec<Map<String, Value>> =
        serde_json::from_str(rows_json).map_err(|e| format!("rows must be a JSON array ({e})"))?;
    autoresearch::list::render(&rows, format)
}

/// `show`: one stored run (rows as `loaded` carries them) as a table, TSV or bounded JSON, without
/// recovering or writing anything.
pub fn render_stored(
    rows_json: &str,
    tracker: &str,
    config_json: &str,
    format: &str,
) -> Result<String, String> {
    let (row, settings) = config::load::<RowConfig>(config_json)?;
    let value: Value =
        serde_json::from_str(rows_json).map_err(|e| format!("rows must be JSON ({e})"))?;
    let rows = wire::rows_from_json(&value)?;
    let result = autoresearch::Run::snapshot(&rows, tracker, settings)?;
    result.render(format, row.max_result_chars as usize)
}

/// [`render_list`] for JS.
#[wasm_bindgen(js_name = renderAutoresearchList)]
pub fn render_list_js(rows_json: &str, format: &str) -> Result<String, JsError> {
    render_list(rows_json, format).map_err(|m| JsError::new(&m))
}

/// [`escape_controls`] for JS: text for a terminal that a candidate wrote (`show --diff`).
#[wasm_bindgen(js_name = autoresearchEscapeControls)]
pub fn escape_controls_js(text: &str) -> String {
    escape_controls(text)
}

/// [`render_stored`] for JS.
#[wasm_bindgen(js_name = renderAutoresearchRun)]
pub fn render_stored_js(
    rows_json: &str,
    tracker: &str,
    config_json: &str,
    format: &str,
) -> Result<String, JsError> {
    render_stored(rows_json, tracker, config_json, format).map_err(|m| JsError::new(&m))
}

/// The DSH tool's texts and shapes (see [`tool::texts`]) as JSON text.
#[wasm_bindgen(js_name = autoresearchToolTexts)]
pub fn tool_texts() -> String {
    tool::texts().to_string()
}

/// The proposal child's first message for one round.
#[wasm_bindgen(js_name = autoresearchRoundPrompt)]
pub fn round_prompt(handoff: &str) -> String {
    tool::round_prompt(handoff)
}

/// The guard's refusal of a call after the report.
#[wasm_bindgen(js_name = autoresearchRoundOver)]
pub fn round_over(tool_name: &str) -> String {
    tool::round_over(tool_name)
}

/// Why a confined proposal child's file-tool call is refused, or "" to let it run.
#[wasm_bindgen(js_name = autoresearchOutsideWorktree)]
pub fn outside_worktree(tool_name: &str, args_json: &str) -> String {
    tool::outside_worktree(tool_name, args_json).unwrap_or_default()
}

/// Checks the report tool's arguments against the row's `maxHandoffChars`: `{"ok": {hypothesis,
/// summary}}` or `{"error"}`.
#[wasm_bindgen(js_name = checkAutoresearchReport)]
pub fn check_report(args_json: &str, config_json: &str) -> Result<String, JsError> {
    let (_, settings) = config::load::<RowConfig>(config_json).map_err(|m| JsError::new(&m))?;
    Ok(tool::check_report(args_json, settings.max_handoff_chars).to_string())
}

/// The model-facing text of a tool output value (JSON text).
#[wasm_bindgen(js_name = renderAutoresearchOutput)]
pub fn render_output(value_json: &str) -> String {
    match serde_json::from_str::<Value>(value_json) {
        Ok(v) => tool::render_output(&v),
        Err(_) => value_json.to_owned(),
    }
}

/// A background job's final output from the bounded result JSON.
#[wasm_bindgen(js_name = autoresearchJobOutput)]
pub fn job_output(result_json: &str) -> String {
    tool::job_output(result_json)
}

/// The prompt note about unfinished runs (from `listRuns` rows), or `undefined`.
#[wasm_bindgen(js_name = autoresearchInterruptedNote)]
pub fn interrupted_note(rows_json: &str) -> Option<String> {
    tool::interrupted_note(rows_json)
}

/// One git step's command ([`autoresearch::git::command`]): `step_json` is `{"executable",
/// "gitDir"?, "workTree"?, "args", "indexFile"?, "commitDate"?, "startup"?}`; the answer
/// `{"argv", "shown", "env", "unsetPrefix", "stdoutCap", "stderrCap", "timeoutMs", "graceMs"}`.
#[wasm_bindgen(js_name = autoresearchGitCommand)]
pub fn git_command(step_json: &str) -> Result<String, JsError> {
    let v: Value = serde_json::from_str(step_json)?;
    let text = |k: &str| v.get(k).and_then(Value::as_str);
    let args: Vec<String> = serde_json::from_value(v["args"].clone())?;
    let c = autoresearch::git::command(&autoresearch::git::Step {
        executable: text("executable")
            .ok_or_else(|| JsError::new("step.executable must be a string"))?,
        git_dir: text("gitDir"),
        work_tree: text("workTree"),
        args: &args,
        index_file: text("indexFile"),
        commit_date: text("commitDate"),
        startup: v["startup"].as_bool().unwrap_or(false),
    });
    Ok(json!({
        "argv": c.argv, "shown": c.shown, "env": c.env, "unsetPrefix": c.unset_prefix,
        "stdoutCap": c.stdout_cap, "stderrCap": c.stderr_cap, "timeoutMs": c.timeout_ms,
        "graceMs": c.grace_ms,
    })
    .to_string())
}

/// One autoresearch run, driven from JS.
#[wasm_bindgen(js_name = AutoresearchRun)]
pub struct Run {
    inner: autoresearch::Run,
    row: RowConfig,
    progress: Progress,
}

impl Run {
    fn wrap(inner: autoresearch::Run, row: RowConfig) -> Run {
        Run {
            inner,
            row,
            progress: Progress::default(),
        }
    }

    /// A run from a validated spec: a fresh run under `run_id` (a fresh lowercase UUID from the
    /// driver), or the resume the spec asks for (`run_id` is then unused). `caller_repository`
    /// stands in when the spec names no repository (the caller's cwd).
    pub fn from_spec(
        spec_json: &str,
        run_id: &str,
        config_json: &str,
        now: u64,
    ) -> Result<Run, String> {
        let (row, settings) = config::load::<RowConfig>(config_json)?;
        let request = spec::parse(spec_json, &settings.limits).map_err(|errors| {
            let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
            format!("invalid spec: {}", list.join("; "))
        })?;
        let inner = autoresearch::Run::from_request(request, run_id, settings, now)
            .map_err(|e| e.to_string())?;
        Ok(Run::wrap(inner, row))
    }

    /// Resumes `run_id` with its stored policy; `environment` (a JSON object of strings)
    /// supplies the evaluator's environment values, of which only hashes are stored.
    pub fn resume_id(
        run_id: &str,
        repository: Option<String>,
        config_json: &str,
        environment: Option<&str>,
        now: u64,
    ) -> Result<Run, String> {
        let (row, settings) = config::load::<RowConfig>(config_json)?;
        let mut given = Map::new();
        if let Some(text) = environment {
            let value: Value = serde_json::from_str(text)
                .map_err(|e| format!("resume: environment is not JSON ({e})"))?;
            given.insert("environment".into(), value);
        }
        let inner = autoresearch::Run::resume(run_id, given, repository, settings, now)
            .map_err(|_| format!("resume: run id must be a lowercase UUID (got {run_id:?})"))?;
        Ok(Run::wrap(inner, row))
    }

    /// Abandons `run_id` (see [`autoresearch::Run::abandon`]).
    pub fn abandon_id(
        run_id: &str,
        reason: &str,
        repository: Option<String>,
        config_json: &str,
        now: u64,
    ) -> Result<Run, String> {
        let (row, settings) = config::load::<RowConfig>(config_json)?;
        let inner = autoresearch::Run::abandon(run_id, reason, repository, settings, now)
            .map_err(|_| format!("abandon: run id must be a lowercase UUID (got {run_id:?})"))?;
        Ok(Run::wrap(inner, row))
    }

    /// Reconciles `run_id` after a restart (see [`autoresearch::Run::reconcile`]).
    pub fn reconcile_id(
        run_id: &str,
        repository: Option<String>,
        config_json: &str,
        now: u64,
    ) -> Result<Run, String> {
        let (row, settings) = config::load::<RowConfig>(config_json)?;
        let inner = autoresearch::Run::reconcile(run_id, repository, settings, now)
            .map_err(|_| format!("reconcile: run id must be a lowercase UUID (got {run_id:?})"))?;
        Ok(Run::wrap(inner, row))
    }

    /// The next effect as JSON.
    pub fn poll_json(&mut self) -> Option<Value> {
        let effect = self.inner.poll()?;
        self.progress.on_effect(&effect, self.inner.run_id());
        Some(wire::effect_json(&effect))
    }

    /// Feeds one input given as JSON.
    pub fn handle_json(&mut self, input: &Value, now: u64) -> Result<(), String> {
        let input: Input = wire::input_from_json(input)?;
        self.inner
            .handle(input, now)
            .map_err(|e| format!("driver error: {e}"))?;
        let result = self.inner.result();
        self.progress.observe(&result);
        Ok(())
    }

    /// The result: final once done, else as it stands.
    pub fn result(&self) -> RunResult {
        match self.inner.status() {
            Phase::Done(r) => *r,
            Phase::Waiting => self.inner.result(),
        }
    }
}

#[wasm_bindgen(js_class = AutoresearchRun)]
impl Run {
    /// See [`Run::from_spec`]; throws `invalid spec: …` or the config message.
    #[wasm_bindgen(js_name = fromSpec)]
    pub fn from_spec_js(
        spec_json: &str,
        run_id: &str,
        config_json: &str,
        now: f64,
    ) -> Result<Run, JsError> {
        Run::from_spec(spec_json, run_id, config_json, now as u64).map_err(|m| JsError::new(&m))
    }

    /// Resumes `run_id` with its stored policy; `repository` (the caller's cwd) locates it and
    /// `environment_json` (or `undefined`) supplies the evaluator's environment values.
    #[wasm_bindgen(js_name = resume)]
    pub fn resume_js(
        run_id: &str,
        repository: Option<String>,
        config_json: &str,
        now: f64,
        environment_json: Option<String>,
    ) -> Result<Run, JsError> {
        Run::resume_id(
            run_id,
            repository,
            config_json,
            environment_json.as_deref(),
            now as u64,
        )
        .map_err(|m| JsError::new(&m))
    }

    /// Abandons `run_id`: terminates leftover process groups, cancels it, releases its lock.
    #[wasm_bindgen(js_name = abandon)]
    pub fn abandon_js(
        run_id: &str,
        reason: &str,
        repository: Option<String>,
        config_json: &str,
        now: f64,
    ) -> Result<Run, JsError> {
        Run::abandon_id(run_id, reason, repository, config_json, now as u64)
            .map_err(|m| JsError::new(&m))
    }

    /// Reconciles `run_id` after a restart: a run whose host is provably dead has its leftover
    /// processes stopped, its lock released, and is marked interrupted; others are untouched.
    #[wasm_bindgen(js_name = reconcile)]
    pub fn reconcile_js(
        run_id: &str,
        repository: Option<String>,
        config_json: &str,
        now: f64,
    ) -> Result<Run, JsError> {
        Run::reconcile_id(run_id, repository, config_json, now as u64).map_err(|m| JsError::new(&m))
    }

    /// Lets a resume or abandon go on when the run's host cannot be proven dead (see
    /// [`autoresearch::Run::force`]).
    pub fn force(&mut self) {
        self.inner.force();
    }

    /// The next effect as JSON text, or `undefined` when none is ready.
    pub fn poll(&mut self) -> Option<String> {
        self.poll_json().map(|v| v.to_string())
    }

    /// Feeds the answer to an effect (or `{"type": "cancel", "reason"}`) as JSON text; throws on
    /// driver misuse (an unknown id, a wrong answer, a malformed input).
    pub fn handle(&mut self, input_json: &str, now: f64) -> Result<(), JsError> {
        let value: Value = serde_json::from_str(input_json)
            .map_err(|e| JsError::new(&format!("input must be JSON ({e})")))?;
        self.handle_json(&value, now as u64)
            .map_err(|m| JsError::new(&m))
    }

    /// Whether the run reported its result.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        matches!(self.inner.status(), Phase::Done(_))
    }

    /// The run state as last written.
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> String {
        self.inner.state().as_str().to_owned()
    }

    /// The run id.
    #[wasm_bindgen(getter, js_name = runId)]
    pub fn run_id(&self) -> String {
        self.inner.run_id().to_owned()
    }

    /// The result status (`target-reached`, …) once done.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> Option<String> {
        match self.inner.status() {
            Phase::Done(r) => Some(r.status.as_str().to_owned()),
            Phase::Waiting => None,
        }
    }

    /// The dsh-jobs status of the finished run: `completed`, `failed` or `killed`.
    #[wasm_bindgen(getter, js_name = jobStatus)]
    pub fn job_status(&self) -> Option<String> {
        match self.inner.status() {
            Phase::Done(r) => Some(r.status.job_status().to_owned()),
            Phase::Waiting => None,
        }
    }

    /// The result as JSON text of at most the config's `maxResultChars` characters.
    #[wasm_bindgen(js_name = resultJson)]
    pub fn result_json(&self) -> String {
        escape_controls(
            &self
                .result()
                .to_json(self.row.max_result_chars as usize)
                .to_string(),
        )
    }

    /// The result's experiments as TSV.
    #[wasm_bindgen(js_name = resultTsv)]
    pub fn result_tsv(&self) -> String {
        self.result().to_tsv()
    }

    /// The result as a human table of the last `window` experiments.
    #[wasm_bindgen(js_name = resultTable)]
    pub fn result_table(&self, window: u32) -> String {
        self.result().to_table(window as usize)
    }

    /// Progress lines since the last call, joined by `\n`, or `undefined`.
    #[wasm_bindgen(js_name = takeProgress)]
    pub fn take_progress(&mut self) -> Option<String> {
        self.progress.take()
    }
}

#[cfg(test)]
mod tests;
