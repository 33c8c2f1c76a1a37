use super::*;

const CONFIG: &str = "{}";

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
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"metric_direction"), "{v}");
    assert!(fields.contains(&"timeout_ms"), "{v}");
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
    assert!(dir["message"].as_str().unwrap().contains("minimize"));
}

#[test]
fn the_headless_runner_needs_a_proposer_and_dsh_refuses_one() {
    let v = check_spec(&spec(json!({"proposer": null})), &settings(), true);
    assert_eq!(v["errors"][0]["field"], "proposer");
    assert_eq!(v["errors"][0]["rule"], PROPOSER_REQUIRED);
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
    assert!(settings_of(r#"{"maxExperiment": 5}"#)
        .unwrap_err()
        .starts_with("autoresearch: invalid config: maxExperiment is not a config key; did you mean maxExperiments?"));
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
    let e = run.poll_json().unwrap();
    assert_eq!(e["kind"], "persist");
    let params = &e["statements"][0]["params"];
    assert_eq!(params["max_active"], json!(["int", "1"]));
    assert_eq!(params["run_tag"], json!(["text", "t1"]));
    // Misuse is an error naming the problem, never a state.
    assert!(
        run.handle_json(&json!({"type": "done", "id": 99}), 4)
            .unwrap_err()
            .contains("no outstanding effect 99")
    );
    assert!(
        run.handle_json(&json!({"type": "persisted", "id": 3}), 4)
            .unwrap_err()
            .contains("`changes` must be an array")
    );
    // A refused lock ends the run with a report.
    run.handle_json(&json!({"type": "persisted", "id": 3, "changes": [0, 0]}), 4)
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
    assert_eq!(migrations_json(1).unwrap(), "[]");
    assert!(migrations_json(9).unwrap_err().contains("newer"));
    let sql: Value = serde_json::from_str(&sql_texts()).unwrap();
    assert!(sql["listRuns"].as_str().unwrap().contains(":limit"));
}

#[test]
fn list_renders_table_tsv_and_json() {
    let rows = json!([{"run_id": "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9", "run_tag": "t1", "state": "ready",
        "branch": "autoresearch/t1-x", "baseline_metric": 10.0, "best_metric": 7.5, "metric_name": "score",
        "metric_direction": "minimize", "candidates": 3, "created_at": 1, "updated_at": 2, "lock_held": 1}])
    .to_string();
    let table = render_list(&rows, "table").unwrap();
    assert!(
        table.contains("ready") && table.contains("7.5") && table.contains("not finished"),
        "{table}"
    );
    let tsv = render_list(&rows, "tsv").unwrap();
    assert_eq!(tsv.lines().count(), 2);
    let json_line = render_list(&rows, "json").unwrap();
    assert!(json_line.contains("\"lock_held\":true"));
    assert_eq!(
        render_list("[]", "table").unwrap(),
        "no autoresearch runs in this repository\n"
    );
    assert!(render_list("[]", "xml").is_err());
}

#[test]
fn report_arguments_are_checked() {
    let ok = tool::check_report(r#"{"hypothesis": " cache the parse ", "summary": "memoized"}"#);
    assert_eq!(ok["ok"]["hypothesis"], "cache the parse");
    let bad = tool::check_report(r#"{"hypothesis": "", "sumary": "x"}"#);
    let error = bad["error"].as_str().unwrap();
    assert!(error.contains("sumary: unknown key"), "{error}");
    assert!(
        error.contains("hypothesis: must be a non-empty string (got \"\")"),
        "{error}"
    );
    assert!(error.contains("summary: is required"), "{error}");
    assert!(tool::check_report("[]")["error"].is_string());
}

#[test]
fn tool_outputs_render_for_the_model() {
    let bg = json!({"kind": "background", "runId": "r1", "jobId": "autoresearch-1", "branch": "autoresearch/t-r1", "worktree": "/w"});
    let text = tool::render_output(&bg);
    assert!(text.starts_with("Started autoresearch run r1 as background job autoresearch-1."));
    assert!(text.contains("job_output (job_id autoresearch-1, wait: true)"));
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
    assert!(text.starts_with("autoresearch run r1: budget-limited\nmetric score (minimize): baseline 10 at aaaaaaaa, best 8 at bbbbbbbb\n"), "{text}");
    assert!(text.contains("#1 accepted 8 bbbbbbbb — smaller"), "{text}");
    assert!(
        text.contains("#2 failed - - — timeout: timed out"),
        "{text}"
    );
    assert!(tool::job_output(&run.to_string()).contains("result JSON:"));
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
    let prompt = tool::round_prompt("{\"ordinal\":1}");
    assert!(prompt.starts_with("AUTORESEARCH PROPOSAL ROUND"));
    assert!(prompt.contains("{\"ordinal\":1}"));
    let note = tool::interrupted_note(&json!([{"run_id": "r1", "run_tag": "t", "state": "candidate-running"}, {"run_id": "r2", "state": "budget-limited"}]).to_string()).unwrap();
    assert!(note.contains("- r1 (tag t, state candidate-running)") && !note.contains("r2"));
    assert_eq!(tool::interrupted_note("[]"), None);
}
