//! Property tests of config validation (the same properties the `config_validate` fuzz target in
//! `fuzz/` asserts, here over proptest's generated JSON so they run in `cargo test`):
//!
//! - validation never panics and is a pure function of its input;
//! - a valid row serializes back to a value that validates to the same row, and its settings
//!   keep every pattern;
//! - an invalid row has at least one issue, every issue has a message, and `describe` starts with
//!   the documented prefix.

use dsh_config::research_nudge as config;

use proptest::prelude::*;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "enabled",
    "debtThreshold",
    "maxToolCallsWithoutResearch",
    "maxMinutesWithoutResearch",
    "cooldownMinutes",
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

fn check(input: &Value) -> Result<(), TestCaseError> {
    let first = config::validate(input);
    prop_assert_eq!(&first, &config::validate(input), "validation is pure");
    match first {
        Ok(row) => {
            let back = serde_json::to_value(&row).expect("a row serializes");
            let again = config::validate(&back);
            prop_assert_eq!(again.as_ref(), Ok(&row), "a valid row round-trips");
            let settings = row.settings();
            prop_assert_eq!(settings.research_tools.len(), row.research_tools.len());
            prop_assert_eq!(settings.mutation_tools.len(), row.mutation_tools.len());
            prop_assert_eq!(settings.execution_tools.len(), row.execution_tools.len());
        }
        Err(issues) => {
            prop_assert!(!issues.is_empty());
            prop_assert!(issues.iter().all(|issue| !issue.message.is_empty()));
            prop_assert!(
                dsh_config::describe(config::MESSAGE_PREFIX, &issues)
                    .starts_with(config::MESSAGE_PREFIX)
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_json_validates_or_names_its_issues(input in json()) {
        check(&input)?;
    }

    #[test]
    fn rows_with_real_keys_validate_or_name_their_issues(input in row()) {
        check(&input)?;
    }

    #[test]
    fn valid_numbers_in_range_are_accepted(threshold in 1..=1_000_000u32, minutes in 0.0..=525_600.0f64) {
        let input = serde_json::json!({ "debtThreshold": threshold, "cooldownMinutes": minutes });
        let row = config::validate(&input).expect("in range");
        prop_assert_eq!(row.debt_threshold, threshold);
        prop_assert_eq!(row.cooldown_minutes, minutes);
    }
}
