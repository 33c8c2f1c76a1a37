//! The WebAssembly surface of the DSH plugin family.
//!
//! Each plugin's surface is a module behind a cargo feature of the same name, so each npm package
//! ships a `.wasm` holding only its own plugin (`cargo xtask build` compiles the crate once per
//! package with `--no-default-features --features <row>`); the default features turn every plugin
//! on, so `cargo test` and clippy see them all. This is the only crate that knows wasm-bindgen and
//! JS value shapes; it knows nothing of DSH's runtime: each package's shim turns DSH events into
//! flat arguments, and everything that decides behaviour happens here or in the pure crates.

/// A row's `validate…Config` binding (`validate_config`): the row config given as JSON text (as
/// the shim encodes it), validated by [`config::parse`], in the shape of a Standard Schema v1
/// result, as JSON text: `{"value": <normalized config>}` or `{"issues": [{"message", "path"}]}`.
macro_rules! validate_config_binding {
    ($js_name:ident, $row:ty) => {
        /// Validates a row config given as JSON text (as the shim encodes it) and answers in the
        /// shape of a Standard Schema v1 result, as JSON text: `{"value": <normalized config>}`
        /// or `{"issues": [{"message", "path"}]}`.
        #[wasm_bindgen::prelude::wasm_bindgen(js_name = $js_name)]
        pub fn validate_config(input: &str) -> String {
            match config::parse::<$row>(input) {
                Ok((row, _)) => serde_json::json!({ "value": row }),
                Err(issues) => serde_json::json!({ "issues": issues }),
            }
            .to_string()
        }
    };
}

/// A JS number (a clock reading such as `performance.now()`, fractional ms, or a byte count) as a
/// whole number; one that is not finite and positive is 0.
#[cfg(any(feature = "research-nudge", feature = "limit-break"))]
fn millis(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

#[cfg(feature = "research-nudge")]
pub mod research_nudge;

#[cfg(feature = "pain-point-check")]
pub mod pain_point_check;

#[cfg(feature = "autoresearch")]
pub mod autoresearch;

#[cfg(feature = "limit-break")]
pub mod limit_break;
