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
    ];
    for (input, expected) in cases {
        assert_eq!(issues(input.clone()), expected, "input: {input}");
    }
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
            Rule::AnyText => assert_eq!(property["type"], "string", "{key}"),
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
