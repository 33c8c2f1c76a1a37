use super::*;

const CONFIG: &str = "{}";

/// The validated row and its core settings, or the one-line `autoresearch: invalid config: …`.
fn settings_of(config_json: &str) -> Result<(RowConfig, Settings), String> {
    config::load(config_json)
}

fn spec(extra: Value) -> String {
    let mut v = json!({
        "objective": "lower the score",
        "mutable_globs": ["score.txt"],
        "evaluation": {"command": "node", "args": ["eval.mjs"]},
        "metric_name": "score",
        "metric_direction": "minimize",
        "run_tag": "t1",
        "proposer": {"command": "node", "args": ["propose.mjs"]},
    });
    for (k, x) in extra.as_object().unwrap() {
        if x.is_null() {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = x.clone();
        }
    }
    v.to_string()
}

fn settings() -> Settings {
    settings_of(CONFIG).unwrap().1
}

#[test]
fn spec_errors_name_field_rule_and_value() {
    let v = check_spec(
        &spec(json!({"metric_direction": "down", "timeout_ms": 0, "mutable_glob": ["x"]})),
        &settings(),
        true,
    );
    let errors = v["errors"].as_array().unwrap();
    let unknown = errors
        .iter()
        .find(|e| e["field"] == "mutable_glob")
        .unwrap();
    assert_eq!(unknown["didYouMean"], "mutable_globs");
    let dir = errors
        .iter()
        .find(|e| e["field"] == "metric_direction")
        .unwrap();
    assert_eq!(dir["value"], "\"down\"");
    expect_test::expect_file!["snapshots/spec-errors.json"]
        .assert_eq(&serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn the_headless_runner_needs_a_proposer_and_dsh_refuses_one() {
    let v = check_spec(&spec(json!({"proposer": null})), &settings(), true);
    assert_eq!(v["errors"][0]["field"], "proposer");
    assert_eq!(v["errors"][0]["rule"], spec::PROPOSER_REQUIRED);
    let v = check_spec(&spec(json!({})), &settings(), false);
    assert_eq!(v["errors"][0]["field"], "proposer");
    let v = check_spec(&spec(json!({})), &settings(), true);
    assert_eq!(v["ok"]["kind"], "fresh");
    assert_eq!(v["ok"]["runTag"], "t1");
    let v = check_spec(
        r#"{"resume_run_id": "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"}"#,
        &settings(),
        true,
    );
    assert_eq!(v["ok"]["kind"], "resume");
    let v = check_spec(r#"{"resume_run_id": "../.."}"#, &settings(), true);
    assert_eq!(v["errors"][0]["field"], "resume_run_id");
}

#[test]
fn config_limits_bound_the_spec() {
    let config = r#"{"maxExperiments": 5, "defaultMaxExperiments": 2}"#;
    let (_, s) = settings_of(config).unwrap();
    let v = check_spec(&spec(json!({"max_experiments": 6})), &s, true);
    assert_eq!(v["errors"][0]["field"], "max_experiments");
    expect_test::expect!["autoresearch: invalid config: maxExperiment is not a config key; did you mean maxExperiments? (got 5)"].assert_eq(&settings_of(r#"{"maxExperiment": 5}"#).unwrap_err());
}

#[test]
fn a_run_speaks_json_effects_and_inputs() {
    let mut run = Run::from_spec(
        &spec(json!({"repository": "sub"})),
        "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
        CONFIG,
        1,
    )
    .unwrap();
    let e = run.poll_json().unwrap();
    assert_eq!(e, json!({"kind": "discover", "repository": "sub", "id": 1}));
    run.handle_json(
        &json!({"type": "discovered", "id": 1, "facts": {"toplevel": "/r", "gitCommonDir": "/r/.git", "head": "a".repeat(40)}}),
        2,
    )
    .unwrap();
    let e = run.poll_json().unwrap();
    assert_eq!(e["kind"], "openTracker");
    assert_eq!(e["path"], "/r/.git/dsh-autoresearch/tracker.sqlite");
    run.handle_json(&json!({"type": "done", "id": 2}), 3)
        .unwrap();
    // The cleanup at the start reads the tracker's ended runs first.
    assert_eq!(
        run.poll_json().unwrap(),
        json!({"kind": "loadRetention", "id": 3})
    );
    let bad_rows = run
        .handle_json(
            &json!({"type": "retention", "id": 3, "rows": {"runs": [{"run_id": 1}]}}),
            3,
        )
        .unwrap_err();
    assert_eq!(
        bad_rows,
        "runs[0].run_id: invalid type: integer `1`, expected a string"
    );
    run.handle_json(
        &json!({"type": "retention", "id": 3, "rows": {"runs": [], "artifacts": []}}),
        3,
    )
    .unwrap();
    let e = run.poll_json().unwrap();
    assert_eq!(e["kind"], "persist");
    let params = &e["statements"][0]["params"];
    assert_eq!(params["max_active"], json!(["int", "1"]));
    assert_eq!(params["run_tag"], json!(["text", "t1"]));
    // Misuse is an error naming the problem, never a state.
    let unknown = run
        .handle_json(&json!({"type": "done", "id": 99}), 4)
        .unwrap_err();
    let malformed = run
        .handle_json(&json!({"type": "persisted", "id": 4}), 4)
        .unwrap_err();
    expect_test::expect![[r#"
        driver error: no outstanding effect 99
        `changes` must be an array"#]]
    .assert_eq(&format!("{unknown}\n{malformed}"));
    // A refused lock ends the run with a report.
    run.handle_json(&json!({"type": "persisted", "id": 4, "changes": [0, 0]}), 4)
        .unwrap();
    let mut kinds = Vec::new();
    while let Some(e) = run.poll_json() {
        kinds.push(e["kind"].as_str().unwrap().to_owned());
    }
    assert_eq!(kinds.last().unwrap(), "report");
    assert_eq!(run.result().blocker.unwrap().code, "lock-unavailable");
}

#[test]
fn bad_ids_are_refused_before_any_effect() {
    assert!(Run::resume_id("../..", None, CONFIG, None, 1).is_err());
    assert!(Run::abandon_id("x", "r", None, CONFIG, 1).is_err());
    assert!(!is_run_id("0B1C2D3E-4F50-4617-8293-A4B5C6D7E8F9"));
}

#[test]
fn migrations_and_sql_for_the_driver() {
    let plan: Value = serde_json::from_str(&migrations_json(0).unwrap()).unwrap();
    assert_eq!(plan[0]["version"], 1);
    assert_eq!(plan[1]["version"], 2);
    let after_v1: Value = serde_json::from_str(&migrations_json(1).unwrap()).unwrap();
    assert_eq!(after_v1[0]["version"], 2);
    assert_eq!(plan[2]["version"], 3);
    assert_eq!(plan[3]["version"], 4);
    assert_eq!(plan[4]["version"], 5);
    assert_eq!(migrations_json(5).unwrap(), "[]");
    expect_test::expect!["the tracker's schema version 9 is newer than this dsh-autoresearch understands (5); upgrade the package"].assert_eq(&migrations_json(9).unwrap_err());
    let sql: Value = serde_json::from_str(&sql_texts()).unwrap();
    expect_test::expect![[r#"
        SELECT run_id, run_tag, state, branch, baseline_metric, best_metric,
          json_extract(policy_json, '$.metric_name') AS metric_name,
          json_extract(policy_json, '$.metric_direction') AS metric_direction,
          (SELECT count(*) FROM experiments e WHERE e.run_id = runs.run_id AND e.kind = 'candidate')
            AS candidates,
          created_at, updated_at, interrupted_at,
          EXISTS (SELECT 1 FROM locks l WHERE l.run_id = runs.run_id AND l.released_at IS NULL) AS lock_held
        FROM runs ORDER BY created_at DESC, run_id LIMIT :limit"#]].assert_eq(sql["listRuns"].as_str().unwrap());
}

#[test]
fn list_renders_table_tsv_and_json() {
    let rows = json!([{"run_id": "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9", "run_tag": "t1", "state": "ready",
        "branch": "autoresearch/t1-x", "baseline_metric": 10.0, "best_metric": 7.5, "metric_name": "score",
        "metric_direction": "minimize", "candidates": 3, "created_at": 1, "updated_at": 2, "lock_held": 1}])
    .to_string();
    let table = render_list(&rows, "table").unwrap();
    let tsv = render_list(&rows, "tsv").unwrap();
    assert_eq!(tsv.lines().count(), 2);
    let json_line = render_list(&rows, "json").unwrap();
    expect_test::expect_file!["snapshots/list.txt"]
        .assert_eq(&format!("{table}\n--- tsv\n{tsv}\n--- json\n{json_line}"));
    assert_eq!(
        render_list("[]", "table").unwrap(),
        "no autoresearch runs in this repository\n"
    );
    assert!(render_list("[]", "xml").is_err());
}

#[test]
fn report_arguments_are_checked() {
    let ok = tool::check_report(
        r#"{"hypothesis": " cache the parse ", "summary": "memoized"}"#,
        1_024,
    );
    assert_eq!(ok["ok"]["hypothesis"], "cache the parse");
    let bad = tool::check_report(r#"{"hypothesis": "", "sumary": "x"}"#, 1_024);
    expect_test::expect![[r#"sumary: unknown key (use hypothesis and summary); hypothesis: must be a non-empty string (got ""); summary: is required"#]].assert_eq(bad["error"].as_str().unwrap());
    assert!(tool::check_report("[]", 1_024)["error"].is_string());
    // The row's maxHandoffChars bounds the report as JSON; the child is told how to fix it.
    let long = json!({"hypothesis": "h".repeat(1_000), "summary": "s"}).to_string();
    expect_test::expect!["the report is 1031 characters as JSON and maxHandoffChars allows 1024: shorten hypothesis or summary"]
        .assert_eq(tool::check_report(&long, 1_024)["error"].as_str().unwrap());
    assert!(tool::check_report(&long, 1_031)["ok"].is_object());
}

#[test]
fn tool_outputs_render_for_the_model() {
    let bg = json!({"kind": "background", "runId": "r1", "jobId": "autoresearch-1", "branch": "autoresearch/t-r1", "worktree": "/w"});
    expect_test::expect![[r#"
        Started autoresearch run r1 as background job autoresearch-1.
        branch autoresearch/t-r1
        worktree /w
        Collect the result with job_output (job_id autoresearch-1, wait: true); stop it with job_kill. If the host stops first, continue later with resume_run_id r1."#]].assert_eq(&tool::render_output(&bg));
    let failed = json!({"kind": "background-start-failed", "status": "failed", "reason": "lock-unavailable", "evidence": ["run_tag=t"]});
    assert_eq!(
        tool::render_output(&failed),
        "The autoresearch run could not start (failed): lock-unavailable\n- run_tag=t"
    );
    let run = json!({"run_id": "r1", "status": "budget-limited", "metric_name": "score", "metric_direction": "minimize",
        "target": null, "baseline": {"metric": 10.0, "commit": "aaaaaaaaaa"}, "best": {"metric": 8.0, "commit": "bbbbbbbbbb"},
        "counts": {"experiments_started": 2, "accepted": 1, "rejected": 0, "failed": 1, "policy_violations": 0},
        "branch": "autoresearch/t-r1", "blocker": null,
        "experiments": [{"ordinal": 0, "state": "accepted", "metric": 10.0, "candidate_commit": null},
            {"ordinal": 1, "state": "accepted", "metric": 8.0, "candidate_commit": "bbbbbbbbbb", "hypothesis": "smaller"},
            {"ordinal": 2, "state": "failed", "metric": null, "candidate_commit": null, "failure_code": "timeout", "failure_message": "timed out"}]});
    let text = tool::render_output(&json!({"kind": "foreground", "run": run}));
    expect_test::expect_file!["snapshots/foreground-output.txt"].assert_eq(&text);
    expect_test::expect_file!["snapshots/job-output.txt"]
        .assert_eq(&tool::job_output(&run.to_string()));
}

#[test]
fn the_texts_hold_the_schemas_and_the_round_prompt_carries_the_handoff() {
    let t = tool::texts();
    assert_eq!(t["name"], "autoresearch");
    assert_eq!(t["outputSchema"]["required"], json!(["kind"]));
    let props = t["parameters"]["properties"].as_object().unwrap();
    for key in [
        "objective",
        "mutable_globs",
        "evaluation",
        "metric_name",
        "metric_direction",
        "run_tag",
        "resume_run_id",
        "mode",
    ] {
        assert!(props.contains_key(key), "{key}");
    }
    assert!(
        !props.contains_key("proposer"),
        "the DSH tool has no proposer parameter"
    );
    assert_eq!(t["report"]["name"], "autoresearch_report");
    expect_test::expect_file!["snapshots/round-prompt.txt"]
        .assert_eq(&tool::round_prompt("{\"ordinal\":1}"));
    let note = tool::interrupted_note(&json!([{"run_id": "r1", "run_tag": "t", "state": "candidate-running"}, {"run_id": "r2", "state": "budget-limited"}]).to_string()).unwrap();
    expect_test::expect![[r#"
        # autoresearch: unfinished runs
        These runs are unfinished and hold their repository lock (another host may still drive them, or it cannot be proven dead). Resume one only when the user asks, with resume_run_id; end one with abandon_run_id:
        - r1 (tag t, state candidate-running)"#]].assert_eq(&note);
    assert_eq!(tool::interrupted_note("[]"), None);
}
