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
            // Written straight to text: going through a `serde_json::Value` would compile a
            // second serializer on DSH's first validation (lazily compiled WebAssembly).
            let (key, text) = match config::parse::<$row>(input) {
                Ok((row, _)) => ("value", serde_json::to_string(&row)),
                Err(issues) => ("issues", serde_json::to_string(&issues)),
            };
            format!(r#"{{"{key}":{}}}"#, text.unwrap_or_else(|e| e.to_string()))
        }
    };
}

/// A guard's corpus replay binding (`replay --corpus`): labels, each run's lines between
/// `start` and `end`, then the report; `$make` builds the engine from the row config and half.
#[cfg(any(feature = "research-nudge-replay", feature = "pain-point-check"))]
macro_rules! corpus_binding {
    ($js:ident, $inner:ty, $make:expr) => {
        /// A corpus replay: labels, each run's lines between `start` and `end`, then the report.
        #[wasm_bindgen::prelude::wasm_bindgen(js_name = $js)]
        pub struct Corpus {
            inner: $inner,
        }

        #[wasm_bindgen::prelude::wasm_bindgen(js_class = $js)]
        impl Corpus {
            /// A corpus replay under the given row config (JSON text) of `half` (`tune`,
            /// `report`, or every run when absent); a bad config or half throws the full message.
            #[wasm_bindgen(constructor)]
            pub fn new(config_json: &str, half: Option<String>) -> Result<Corpus, JsError> {
                Self::from_json(config_json, half.as_deref()).map_err(|m| JsError::new(&m))
            }

            /// Reads the labels file's text; a bad one throws naming the entry.
            #[wasm_bindgen(js_name = setLabels)]
            pub fn set_labels(&mut self, text: &str) -> Result<(), JsError> {
                self.inner.set_labels(text).map_err(|m| JsError::new(&m))
            }

            /// Whether a run id is in the replayed half.
            pub fn wants(&self, id: &str) -> bool {
                self.inner.wants(id)
            }

            /// A run starts.
            pub fn start(&mut self, id: &str) {
                self.inner.start(id);
            }

            /// The next line of the current run; a malformed one throws `line N: …`.
            pub fn feed(&mut self, text: &str) -> Result<(), JsError> {
                self.inner.feed_line(text).map_err(|m| JsError::new(&m))
            }

            /// The current run ends.
            pub fn end(&mut self) {
                self.inner.end();
            }

            /// The report: a Markdown table, or one JSON object.
            pub fn report(&self, json: bool) -> String {
                self.inner.report(json)
            }
        }

        impl Corpus {
            /// A corpus replay under the given row config (JSON text) and half.
            pub fn from_json(config_json: &str, half: Option<&str>) -> Result<Self, String> {
                let half = half.map(replay::corpus::Half::from_key).transpose()?;
                let make: fn(&str, Option<replay::corpus::Half>) -> Result<$inner, String> = $make;
                Ok(Self {
                    inner: make(config_json, half)?,
                })
            }
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

#[cfg(any(feature = "research-nudge", feature = "pain-point-check"))]
mod shim_io;

#[cfg(feature = "research-nudge")]
pub mod research_nudge;

#[cfg(feature = "pain-point-check")]
pub mod pain_point_check;

#[cfg(feature = "autoresearch")]
pub mod autoresearch;

#[cfg(feature = "limit-break")]
pub mod limit_break;
