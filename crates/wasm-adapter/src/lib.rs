//! The WebAssembly surface of the DSH plugin family.
//!
//! Each plugin's surface is a module behind a cargo feature of the same name, so each npm package
//! ships a `.wasm` holding only its own plugin (`cargo xtask build` compiles the crate once per
//! package with `--no-default-features --features <row>`); the default features turn every plugin
//! on, so `cargo test` and clippy see them all. This is the only crate that knows wasm-bindgen and
//! JS value shapes; it knows nothing of DSH's runtime: each package's shim turns DSH events into
//! flat arguments, and everything that decides behaviour happens here or in the pure crates.

#[cfg(feature = "research-nudge")]
pub mod research_nudge;

use config::Issue;
use serde_json::{Value, json};

/// Reads a row config the shim sent as JSON text and validates it with the row's `validate`.
pub(crate) fn parse_row<T>(
    input: &str,
    validate: fn(&Value) -> Result<T, Vec<Issue>>,
) -> Result<T, Vec<Issue>> {
    let value: Value = serde_json::from_str(input).map_err(|error| {
        vec![Issue {
            path: Vec::new(),
            message: format!("config must be JSON ({error})"),
        }]
    })?;
    validate(&value)
}

/// A validation result in the shape of a Standard Schema v1 result, as JSON text:
/// `{"value": <normalized config>}` or `{"issues": [{"message", "path"}]}`.
pub(crate) fn standard_schema_json<T: serde::Serialize>(result: Result<T, Vec<Issue>>) -> String {
    match result {
        Ok(row) => json!({ "value": row }),
        Err(issues) => json!({ "issues": issues }),
    }
    .to_string()
}

#[cfg(feature = "pain-point-check")]
pub mod pain_point_check;

#[cfg(feature = "autoresearch")]
pub mod autoresearch;

#[cfg(feature = "limit-break")]
pub mod limit_break;
