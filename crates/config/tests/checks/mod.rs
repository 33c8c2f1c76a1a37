//! The config validator's properties, written once: `tests/properties.rs` (proptest, in
//! `cargo test`) and `fuzz/fuzz_targets/config_validate.rs` (libFuzzer) both include this module
//! with `#[path]` and feed it their own generated JSON. Each property is an assertion, so a
//! violation panics: a failed proptest case there, a crash here.
//!
//! - validation never panics and is a pure function of its input;
//! - a valid row serializes back to a value that validates to the same row, its settings keep
//!   every pattern, and they build a policy;
//! - an invalid row has at least one issue, every issue has a message, and `describe` starts with
//!   the documented prefix.

use config::research_nudge as row;
use serde_json::Value;

/// Every property of one config value.
pub fn check(input: &Value) {
    let first = row::validate(input);
    assert_eq!(first, row::validate(input), "validation is pure");
    match first {
        Ok(valid) => {
            let back = serde_json::to_value(&valid).expect("a row serializes");
            assert_eq!(
                row::validate(&back).as_ref(),
                Ok(&valid),
                "a valid row round-trips"
            );
            let settings = valid.settings();
            assert_eq!(settings.research_tools.len(), valid.research_tools.len());
            assert_eq!(settings.mutation_tools.len(), valid.mutation_tools.len());
            assert_eq!(settings.execution_tools.len(), valid.execution_tools.len());
            assert!(settings.reminder_backoff >= 1.0);
            let _ = policy::Policy::new(settings);
        }
        Err(issues) => {
            assert!(
                !issues.is_empty(),
                "an invalid row names at least one issue"
            );
            assert!(issues.iter().all(|issue| !issue.message.is_empty()));
            assert!(
                config::describe(row::MESSAGE_PREFIX, &issues).starts_with(row::MESSAGE_PREFIX)
            );
        }
    }
}
