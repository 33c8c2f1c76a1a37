use super::*;

// The core's test fixture: it must be the row's shipped defaults.
#[cfg(feature = "autoresearch")]
#[allow(dead_code)]
#[path = "../../../autoresearch/tests/common/fixture.rs"]
mod fixture;
use crate::describe;
use serde_json::json;

fn issues(value: Value) -> Vec<String> {
    match validate(&value) {
        Ok(row) => panic!("{value} should be invalid, got {row:?}"),
        Err(issues) => issues.into_iter().map(|i| i.message).collect(),
    }
}

#[test]
fn empty_and_null_configs_are_the_documented_defaults() {
    for value in [json!({}), Value::Null, json!({"\u{0}js": "undefined"})] {
        assert_eq!(validate(&value).unwrap(), RowConfig::default());
    }
    let row = RowConfig::default();
    assert_eq!(row.git_executable, "git");
    assert_eq!(row.state_root, "dsh-autoresearch");
    assert_eq!(row.branch_prefix, "autoresearch/");
    assert_eq!(
        (row.default_max_experiments, row.max_experiments),
        (20, 100)
    );
    assert_eq!(
        (row.default_timeout_ms, row.max_timeout_ms),
        (900_000, 3_600_000)
    );
    assert_eq!(row.termination_grace_ms, 5_000);
    assert_eq!(row.max_parallelism, 4);
    #[cfg(feature = "autoresearch")]
    assert_eq!(PARALLELISM_MAX, autoresearch::MAX_PARALLELISM);
    assert_eq!(row.max_active_runs_per_repository, 1);
    assert_eq!(
        (row.max_stdout_bytes, row.max_stderr_bytes),
        (1_048_576, 1_048_576)
    );
    assert_eq!(row.max_result_chars, 16_384);
    assert_eq!(
        (row.artifact_retention_days, row.tsv_retention_days),
        (30, 30)
    );
    assert!(row.retain_failed_artifacts && row.retain_worktrees && row.export_tsv);
    assert!(!row.cleanup_worktrees_on_success);
    assert_eq!(row.max_handoff_chars, 16_384);
    // The proposal route is absent (the calling agent's), and absent from the shipped row.
    assert_eq!(
        (&row.provider, &row.model, row.max_tokens),
        (&None, &None, None)
    );
    #[cfg(feature = "autoresearch")]
    assert_eq!(row.settings().unwrap(), fixture::settings());
    let full = RowConfig {
        provider: Some("p".into()),
        model: Some("m".into()),
        max_tokens: Some(1),
        ..row
    };
    let keys: Vec<String> = serde_json::to_value(&full)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let fields: Vec<&str> = FIELDS.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, fields, "FIELDS lists every key in declaration order");
}

#[cfg(feature = "autoresearch")]
#[test]
fn a_full_valid_row_round_trips_into_settings() {
    let row = validate(&json!({
        "provider": "deepseek",
        "model": "deepseek-reasoner",
        "maxTokens": 8192,
        "gitExecutable": "/usr/bin/git",
        "stateRoot": "state/ar",
        "branchPrefix": "exp/ar/",
        "defaultMaxExperiments": 5,
        "maxExperiments": 10,
        "maxHandoffChars": 4096,
        "defaultTimeoutMs": 60_000,
        "maxTimeoutMs": 120_000,
        "terminationGraceMs": 0,
        "maxActiveRunsPerRepository": 2,
        "maxStdoutBytes": 4096,
        "maxStderrBytes": 2048,
        "maxResultChars": 4096,
        "artifactRetentionDays": 7,
        "retainFailedArtifacts": false,
        "retainWorktrees": false,
        "cleanupWorktreesOnSuccess": true,
        "exportTsv": false,
        "tsvRetentionDays": 9,
    }))
    .unwrap();
    let s = row.settings().unwrap();
    assert_eq!(s.limits.default_max_experiments, 5);
    assert_eq!(s.limits.max_timeout_ms, 120_000);
    assert_eq!(s.state_root, "state/ar");
    assert_eq!(s.branch_prefix, "exp/ar/");
    assert_eq!(s.termination_grace_ms, 0);
    assert_eq!(s.max_active_runs_per_repository, 2);
    assert_eq!((s.max_stdout_bytes, s.max_stderr_bytes), (4096, 2048));
    assert!(!s.export_tsv);
    assert_eq!(s.max_handoff_chars, 4096);
    assert_eq!(
        s.retention,
        autoresearch::Retention {
            artifact_retention_days: 7,
            retain_failed_artifacts: false,
            retain_worktrees: false,
            cleanup_worktrees_on_success: true,
            tsv_retention_days: 9,
        }
    );
    // The route is the shim's: it reaches DSH as the row's JSON, never the core.
    assert_eq!(
        (
            row.provider.as_deref(),
            row.model.as_deref(),
            row.max_tokens
        ),
        (Some("deepseek"), Some("deepseek-reasoner"), Some(8192))
    );
    let back = serde_json::to_value(&row).unwrap();
    assert_eq!(validate(&back).unwrap(), row);
}

#[test]
fn bad_rows_name_the_field_the_rule_and_the_value() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"maxExperiments": 0}),
            vec!["maxExperiments must be an integer >= 1 (got 0)"],
        ),
        (
            json!({"defaultTimeoutMs": 100}),
            vec!["defaultTimeoutMs must be an integer >= 1000 (got 100)"],
        ),
        (
            json!({"maxExperiment": 3}),
            vec!["maxExperiment is not a config key; did you mean maxExperiments? (got 3)"],
        ),
        (
            json!({"statRoot": "x"}),
            vec!["statRoot is not a config key; did you mean stateRoot? (got \"x\")"],
        ),
        (
            json!({"branchPrefix": "autoresearch"}),
            vec!["branchPrefix must end in / (got \"autoresearch\")"],
        ),
        (
            json!({"branchPrefix": "a..b/"}),
            vec![
                "branchPrefix must start with a letter or digit and hold only letters, digits, `.`, `_`, `-` and `/`, with no empty segment, `..`, segment starting with `.` or ending in `.lock` (got \"a..b/\")",
            ],
        ),
        (
            json!({"stateRoot": "a/./b"}),
            vec!["stateRoot must not contain a . or empty segment (got \"a/./b\")"],
        ),
        (
            json!({"stateRoot": "../elsewhere"}),
            vec!["stateRoot must not contain a .. segment (got \"../elsewhere\")"],
        ),
        (
            json!({"stateRoot": "/tmp/x"}),
            vec!["stateRoot must be relative (no leading /) (got \"/tmp/x\")"],
        ),
        (
            json!({"gitExecutable": "bin/git"}),
            vec![
                "gitExecutable must be a bare program name (no / or whitespace) or an absolute path (got \"bin/git\")",
            ],
        ),
        (
            json!({"gitExecutable": 7}),
            vec!["gitExecutable must be a bare program name or an absolute path (got 7)"],
        ),
        (
            json!({"exportTsv": "yes"}),
            vec!["exportTsv must be true or false (got \"yes\")"],
        ),
        (
            json!({"defaultMaxExperiments": 50, "maxExperiments": 10}),
            vec!["defaultMaxExperiments must be <= maxExperiments (10) (got 50)"],
        ),
        (
            json!({"defaultTimeoutMs": 9_000, "maxTimeoutMs": 5_000}),
            vec!["defaultTimeoutMs must be <= maxTimeoutMs (5000) (got 9000)"],
        ),
        (
            json!({"maxHandoffChars": 100}),
            vec!["maxHandoffChars must be an integer >= 1024 (got 100)"],
        ),
        (
            json!({"provider": " deepseek"}),
            vec![
                "provider must be non-empty text without surrounding whitespace, CR, LF or NUL (got \" deepseek\")",
            ],
        ),
        (
            json!({"model": ""}),
            vec![
                "model must be non-empty text without surrounding whitespace, CR, LF or NUL (got \"\")",
            ],
        ),
        (
            json!({"model": null}),
            vec!["model must be a model id (got null)"],
        ),
        (
            json!({"maxTokens": 0}),
            vec!["maxTokens must be an integer >= 1 (got 0)"],
        ),
        (
            json!({"maxTokens": 1.5}),
            vec!["maxTokens must be an integer >= 1 (got 1.5)"],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(issues(value.clone()), want, "{value}");
    }
    let all = validate(&json!({"maxExperiments": 0, "exportTsv": 1})).unwrap_err();
    assert_eq!(
        describe(MESSAGE_PREFIX, &all),
        "autoresearch: invalid config: maxExperiments must be an integer >= 1 (got 0); exportTsv must be true or false (got 1)"
    );
    assert_eq!(all[0].path, vec![PathSegment::Key("maxExperiments".into())]);
}

#[test]
fn the_originals_shipped_row_is_valid_as_it_is() {
    // EveGoodEvening/dsh-autoresearch's cordis.patch.yml, key for key.
    let original = json!({
        "gitExecutable": "git", "stateRoot": "dsh-autoresearch", "branchPrefix": "autoresearch/",
        "defaultMaxExperiments": 20, "maxExperiments": 100, "maxHandoffChars": 16384,
        "maxResultChars": 16384, "maxStdoutBytes": 1048576, "maxStderrBytes": 1048576,
        "defaultTimeoutMs": 900000, "maxTimeoutMs": 3600000, "terminationGraceMs": 5000,
        "maxActiveRunsPerRepository": 1, "artifactRetentionDays": 30,
        "retainFailedArtifacts": true, "retainWorktrees": true,
        "cleanupWorktreesOnSuccess": false, "exportTsv": true, "tsvRetentionDays": 30,
    });
    assert_eq!(validate(&original).unwrap(), RowConfig::default());
    // Removing only successful runs' worktrees (what the original did with retainWorktrees:
    // false and cleanupWorktreesOnSuccess: true, since it never read retainWorktrees) is
    // cleanupWorktreesOnSuccess: true with retainWorktrees: true.
    let success_only = validate(&json!({"cleanupWorktreesOnSuccess": true})).unwrap();
    assert!(success_only.retain_worktrees && success_only.cleanup_worktrees_on_success);
}

#[test]
fn the_schema_carries_every_key_with_its_bounds_and_default() {
    let schema = json_schema();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.len(), FIELDS.len());
    assert_eq!(schema["additionalProperties"], false);
    let defaults = serde_json::to_value(RowConfig::default()).unwrap();
    for (name, rule) in FIELDS {
        let p = &properties[name];
        assert_eq!(p["default"], defaults[name], "{name}");
        assert!(
            p["description"].as_str().is_some_and(|d| d.len() > 10),
            "{name}"
        );
        match rule {
            Rule::Flag => assert_eq!(p["type"], "boolean", "{name}"),
            Rule::Integer { min, max } => {
                assert_eq!(p["type"], "integer", "{name}");
                assert_eq!(p["minimum"], min, "{name}");
                assert_eq!(p["maximum"], max, "{name}");
            }
            Rule::Str { .. } => {
                assert_eq!(p["type"], "string", "{name}");
                assert!(p["pattern"].is_string(), "{name}");
            }
            Rule::List { .. } => {
                assert_eq!(p["type"], "array", "{name}");
                assert_eq!(p["items"]["type"], "string", "{name}");
            }
            _ => panic!("{name}: unexpected rule"),
        }
    }
}
