use super::*;
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
    assert!(row.enabled);
    assert_eq!((row.failure_threshold, row.repeat_threshold), (2, 2));
    assert_eq!(row.max_denials, 8);
    assert_eq!(row.language, Language::Auto);
    assert_eq!(
        &row.allowlist[..8],
        [
            "read",
            "read_image",
            "glob",
            "grep",
            "web_search",
            "ask_user_question",
            "skill",
            "todo_write"
        ]
    );
    assert!(row.extra_allowlist.is_empty());
    assert_eq!(row.settings(), Settings::default());
}

#[test]
fn a_full_valid_row_round_trips_into_settings() {
    let row = validate(&json!({
        "enabled": true,
        "failureThreshold": 3,
        "repeatThreshold": 1,
        "allowlist": ["read", "grep"],
        "extraAllowlist": ["mcp__docs__*", "job_output"],
        "language": "zh",
        "maxDenials": 20,
    }))
    .unwrap();
    let settings = row.settings();
    assert_eq!(settings.failure_threshold(), 3);
    assert_eq!(settings.repeat_threshold(), 1);
    assert_eq!(settings.max_denials(), 20);
    assert_eq!(settings.language(), LanguageChoice::Zh);
    assert!(settings.is_allowlisted("mcp__docs__search"));
    assert!(settings.is_allowlisted("job_output"));
    assert!(!settings.is_allowlisted("bash"));
    assert!(
        !settings.is_allowlisted("glob"),
        "allowlist replaces the defaults"
    );
    let back = serde_json::to_value(&row).unwrap();
    assert_eq!(validate(&back).unwrap(), row);
}

#[test]
fn bad_rows_name_the_field_the_rule_and_the_value() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"failureThreshold": 0}),
            vec!["failureThreshold must be an integer >= 1 (got 0)"],
        ),
        (
            json!({"repeatThreshold": 101}),
            vec!["repeatThreshold must be an integer <= 100 (got 101)"],
        ),
        (
            json!({"failureThreshold": 2.5}),
            vec!["failureThreshold must be an integer >= 1 (got 2.5)"],
        ),
        (
            json!({"failureThreshold": "2"}),
            vec!["failureThreshold must be an integer >= 1 (got \"2\")"],
        ),
        (
            json!({"maxDenials": 0}),
            vec!["maxDenials must be an integer >= 1 (got 0)"],
        ),
        (
            json!({"failureTreshold": 3}),
            vec!["failureTreshold is not a config key; did you mean failureThreshold? (got 3)"],
        ),
        (
            json!({"allowList": ["read"]}),
            vec!["allowList is not a config key; did you mean allowlist? (got [\"read\"])"],
        ),
        (
            json!({"language": "fr"}),
            vec!["language must be one of auto, zh, en (got \"fr\")"],
        ),
        (
            json!({"allowlist": "read"}),
            vec!["allowlist must be a list of tool names or `*` patterns (got \"read\")"],
        ),
        (
            json!({"extraAllowlist": ["*"]}),
            vec![
                "extraAllowlist[0] must contain at least one letter or digit (a bare `*` would allow every tool; use enabled: false to turn the gate off) (got \"*\")",
            ],
        ),
        (
            json!({"extraAllowlist": ["web search", 7]}),
            vec![
                "extraAllowlist[0] must be a tool name or a `*` pattern of ASCII letters, digits and separators (found ' ') (got \"web search\")",
                "extraAllowlist[1] must be a string (got 7)",
            ],
        ),
        (
            json!({"allowlist": ["read", "Read"]}),
            vec!["allowlist[1] repeats entry [0] of the same list (got \"Read\")"],
        ),
        (
            json!({"enabled": "yes"}),
            vec!["enabled must be true or false (got \"yes\")"],
        ),
        (json!([1]), vec!["config must be an object (got [1])"]),
    ];
    for (input, expected) in cases {
        assert_eq!(issues(input.clone()), expected, "input: {input}");
    }
}

#[test]
fn bounds_are_inclusive() {
    for (failure, repeat, denials) in [(1, 1, 1), (100, 100, 1000)] {
        let settings = validate(&json!({
            "failureThreshold": failure,
            "repeatThreshold": repeat,
            "maxDenials": denials,
        }))
        .unwrap()
        .settings();
        assert_eq!(
            (
                settings.failure_threshold(),
                settings.repeat_threshold(),
                settings.max_denials()
            ),
            (failure, repeat, denials)
        );
    }
}

#[test]
fn repeats_are_reported_per_list_and_merged_across_lists() {
    assert_eq!(
        issues(json!({
            "allowlist": ["read", "grep", "READ", "Read"],
            "extraAllowlist": ["mcp__docs__*", "Mcp__Docs__*"],
        })),
        [
            "allowlist[2] repeats entry [0] of the same list (got \"READ\")",
            "allowlist[3] repeats entry [0] of the same list (got \"Read\")",
            "extraAllowlist[1] repeats entry [0] of the same list (got \"Mcp__Docs__*\")",
        ]
    );
    // What only the whole list shows is checked once every entry is valid.
    assert_eq!(
        issues(json!({"failureThreshold": 0, "allowlist": ["read", "Read"]})),
        ["failureThreshold must be an integer >= 1 (got 0)"]
    );
    let settings = validate(&json!({"extraAllowlist": ["Read", "bash"]}))
        .unwrap()
        .settings();
    assert_eq!(settings.allowlist().len(), DEFAULT_ALLOWLIST.len() + 1);
    assert!(settings.is_allowlisted("bash"));
}

#[test]
fn describe_uses_the_plugin_prefix() {
    let found = validate(&json!({"failureThreshold": 0})).unwrap_err();
    assert_eq!(
        describe(MESSAGE_PREFIX, &found),
        "pain-point-check: invalid config: failureThreshold must be an integer >= 1 (got 0)"
    );
}

#[test]
fn the_schema_matches_the_rules() {
    let schema = json_schema();
    assert_eq!(schema["additionalProperties"], false);
    assert!(
        schema.get("definitions").is_none(),
        "no refs: the patch schema embeds this one"
    );
    let properties = schema["properties"].as_object().unwrap();
    let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    let fields: Vec<&str> = FIELDS.iter().map(|&(key, _)| key).collect();
    assert_eq!(keys, fields);
    for (key, rule) in FIELDS {
        let property = &properties[key];
        match rule {
            Rule::Flag => assert_eq!(property["type"], "boolean", "{key}"),
            Rule::Integer { min, max } => {
                assert_eq!(property["type"], "integer", "{key}");
                assert_eq!(property["minimum"], min, "{key}");
                assert_eq!(property["maximum"], max, "{key}");
            }
            Rule::List { .. } => {
                assert_eq!(property["items"]["pattern"], TOOL_PATTERN_REGEX, "{key}")
            }
            Rule::OneOf(choices) => {
                let consts: Vec<&Value> = property["oneOf"]
                    .as_array()
                    .map(|alternatives| alternatives.iter().map(|a| &a["const"]).collect())
                    .unwrap_or_default();
                assert_eq!(json!(consts), json!(choices), "{key}");
            }
            other => panic!(
                "{key}: no schema check for {:?}",
                std::mem::discriminant(&other)
            ),
        }
        assert!(
            property["description"]
                .as_str()
                .is_some_and(|d| d.len() > 10),
            "{key} has no description"
        );
    }
    assert_eq!(properties["failureThreshold"]["default"], 2);
    assert_eq!(properties["allowlist"]["default"][10], "report");
}
