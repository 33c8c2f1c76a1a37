//! Property tests of config validation. The properties themselves are in `tests/checks/mod.rs`,
//! shared with the `config_validate` fuzz target in `fuzz/` (which includes the same file); here
//! proptest generates the JSON so they run in `cargo test`. See that module for the list.

extern crate dsh_config as config;

#[path = "checks/mod.rs"]
mod checks;

use config::research_nudge as row;

use proptest::prelude::*;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "enabled",
    "debtThreshold",
    "maxToolCallsWithoutResearch",
    "maxMinutesWithoutResearch",
    "cooldownMinutes",
    "reminderBackoff",
    "ordinaryToolDebt",
    "mutationDebt",
    "executionDebt",
    "failureDebt",
    "repeatedFailureDebt",
    "maxAgentSnoozeMinutes",
    "researchTools",
    "mutationTools",
    "executionTools",
    "reminder",
    "debug",
    "debtthreshold",
    "enable",
    "",
    "\u{0}js",
];

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        proptest::sample::select(vec![
            0.0,
            1.0,
            -1.0,
            0.5,
            20.0,
            1e3,
            1e6,
            1_000_001.0,
            525_600.0,
            525_600.5,
            10_080.0,
            10_081.0,
            4_294_967_296.0,
            1e300,
            -0.0,
        ])
        .prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "web_search",
            "bash",
            "",
            " ",
            "_-_",
            "é",
            "undefined",
            "NaN"
        ])
        .prop_map(str::to_owned),
        ".{0,12}",
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string().prop_map(Value::String),
        string().prop_map(|s| {
            let mut m = Map::new();
            m.insert("\u{0}js".into(), Value::String(s));
            Value::Object(m)
        }),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            ),
        ]
    })
}

/// Objects with the real keys, so validation gets past the shape check.
fn row() -> impl Strategy<Value = Value> {
    proptest::collection::vec((proptest::sample::select(KEYS), json()), 0..8).prop_map(|pairs| {
        Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_json_validates_or_names_its_issues(input in json()) {
        checks::check(&input);
    }

    #[test]
    fn rows_with_real_keys_validate_or_name_their_issues(input in row()) {
        checks::check(&input);
    }

    #[test]
    fn valid_numbers_in_range_are_accepted(threshold in 1..=1_000_000u32, minutes in 0.0..=525_600.0f64) {
        let input = serde_json::json!({ "debtThreshold": threshold, "cooldownMinutes": minutes });
        let valid = row::validate(&input).expect("in range");
        prop_assert_eq!(valid.debt_threshold, threshold);
        prop_assert_eq!(valid.cooldown_minutes, minutes);
    }
}
