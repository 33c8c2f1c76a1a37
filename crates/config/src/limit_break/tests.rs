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
    assert_eq!(row.dsh_home, "");
    assert!(!row.allow_private_network);
    assert_eq!(
        (
            row.rung_timeout_ms,
            row.connect_timeout_ms,
            row.fetch_timeout_ms
        ),
        (10_000, 5_000, 30_000)
    );
    assert_eq!(row.max_redirects, 5);
    assert_eq!(
        row.max_body_bytes,
        2 * 1024 * 1024,
        "the documented 2 MiB read cap"
    );
    assert_eq!(
        row.max_text_chars, 20_000,
        "the documented 20 000-character cap"
    );
    assert_eq!(
        row.fetch_settings(),
        Settings::default(),
        "one source of defaults"
    );
}

#[test]
fn a_full_valid_row_converts_into_fetch_settings() {
    let row = validate(&json!({
        "enabled": true,
        "dshHome": "",
        "allowPrivateNetwork": true,
        "rungTimeoutMs": 2000,
        "connectTimeoutMs": 500,
        "fetchTimeoutMs": 6000,
        "maxRedirects": 0,
        "maxBodyBytes": 65536,
        "maxTextChars": 1000,
    }))
    .unwrap();
    let settings = row.fetch_settings();
    assert!(settings.allow_private_network);
    assert_eq!(settings.rung_timeout_ms, 2000);
    assert_eq!(settings.connect_timeout_ms, 500);
    assert_eq!(settings.deadline_ms, 6000);
    assert_eq!(settings.max_redirects, 0);
    assert_eq!(settings.max_body_bytes, 65536);
    assert_eq!(settings.max_text_chars, 1000);
    assert_eq!(settings.user_agent, Settings::default().user_agent);
    let back = serde_json::to_value(&row).unwrap();
    assert_eq!(validate(&back).unwrap(), row);
}

#[test]
fn a_full_valid_row_round_trips() {
    let row = validate(&json!({"enabled": false, "dshHome": "~/elsewhere"})).unwrap();
    assert!(!row.enabled);
    assert_eq!(row.dsh_home, "~/elsewhere");
    let back = serde_json::to_value(&row).unwrap();
    assert_eq!(validate(&back).unwrap(), row);
    assert_eq!(
        validate(&json!({"dshHome": ""})).unwrap(),
        RowConfig::default()
    );
}

#[test]
fn bad_rows_name_the_field_the_rule_and_the_value() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"enabled": "yes"}),
            vec!["enabled must be true or false (got \"yes\")"],
        ),
        (
            json!({"dshHome": 5}),
            vec!["dshHome must be a string (got 5)"],
        ),
        (
            json!({"dshHome": null}),
            vec!["dshHome must be a string (got null)"],
        ),
        (
            json!({"dsh_home": "/x"}),
            vec!["dsh_home is not a config key; did you mean dshHome? (got \"/x\")"],
        ),
        (
            json!({"enable": true}),
            vec!["enable is not a config key; did you mean enabled? (got true)"],
        ),
        (json!("on"), vec!["config must be an object (got \"on\")"]),
        (
            json!({"allowPrivateNetwork": "true"}),
            vec!["allowPrivateNetwork must be true or false (got \"true\")"],
        ),
        (
            json!({"rungTimeoutMs": 100}),
            vec!["rungTimeoutMs must be an integer >= 500 (got 100)"],
        ),
        (
            json!({"fetchTimeoutMs": 300_001}),
            vec!["fetchTimeoutMs must be an integer <= 300000 (got 300001)"],
        ),
        (
            json!({"maxRedirects": 1.5}),
            vec!["maxRedirects must be an integer >= 0 (got 1.5)"],
        ),
        (
            json!({"maxBodyBytes": 1e9}),
            vec!["maxBodyBytes must be an integer <= 16777216 (got 1000000000.0)"],
        ),
        (
            json!({"maxTextChars": "20000"}),
            vec!["maxTextChars must be an integer >= 1000 (got \"20000\")"],
        ),
        (
            json!({"allowPrivateNetworks": true}),
            vec![
                "allowPrivateNetworks is not a config key; did you mean allowPrivateNetwork? (got true)",
            ],
        ),
        (
            json!({"timeoutMs": 5000}),
            vec!["timeoutMs is not a config key (got 5000)"],
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(issues(input.clone()), expected, "input: {input}");
    }
}

#[test]
fn timeouts_need_not_nest() {
    // The core takes the least of them, so lowering one key alone is a valid row.
    let row = validate(&json!({"fetchTimeoutMs": 5000})).unwrap();
    assert_eq!(row.fetch_settings().deadline_ms, 5000);
    assert_eq!(row.rung_timeout_ms, 10_000);
    assert!(validate(&json!({"rungTimeoutMs": 1000})).is_ok());
}

#[test]
fn describe_uses_the_plugin_prefix() {
    let found = validate(&json!({"enabled": 1})).unwrap_err();
    assert_eq!(
        describe(MESSAGE_PREFIX, &found),
        "limit-break: invalid config: enabled must be true or false (got 1)"
    );
}

#[test]
fn the_schema_matches_the_rules() {
    let schema = json_schema();
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("definitions").is_none());
    let properties = schema["properties"].as_object().unwrap();
    let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
    let fields: Vec<&str> = FIELDS.iter().map(|&(key, _)| key).collect();
    assert_eq!(keys, fields);
    for (key, rule) in FIELDS {
        let property = &properties[key];
        match rule {
            Rule::Flag => assert_eq!(property["type"], "boolean", "{key}"),
            Rule::Str { .. } => assert_eq!(property["type"], "string", "{key}"),
            Rule::Integer { min, max } => {
                assert_eq!(property["type"], "integer", "{key}");
                assert_eq!(property["minimum"], min, "{key}");
                assert_eq!(property["maximum"], max, "{key}");
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
        assert_eq!(
            property["default"],
            serde_json::to_value(RowConfig::default()).unwrap()[key],
            "{key}"
        );
    }
}
