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
    assert!(Run::resume_id("../..", None, CONFIG, 1).is_err());
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
