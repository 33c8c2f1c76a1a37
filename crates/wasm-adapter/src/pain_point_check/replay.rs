//! `pain-point-check replay`'s WebAssembly surface: the engine is `dsh-replay`'s
//! (`replay::pain_point_check`); this only reads the config and passes lines and outputs through.

use super::Plugin;
use wasm_bindgen::prelude::*;

/// A replay over one input stream.
#[wasm_bindgen(js_name = PainPointReplay)]
pub struct Replay {
    inner: replay::pain_point_check::Replay,
}

#[wasm_bindgen(js_class = PainPointReplay)]
impl Replay {
    /// A replay under the given row config (JSON text); an invalid config throws the full message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Replay, JsError> {
        Self::from_json(config_json).map_err(|m| JsError::new(&m))
    }

    /// Feeds the next input line; returns the output (one or more lines), or nothing. A
    /// malformed line throws `line N: …` naming the field.
    pub fn feed(&mut self, text: &str) -> Result<Option<String>, JsError> {
        self.feed_line(text).map_err(|m| JsError::new(&m))
    }

    /// Whether a session log is printed as JSON lines instead of the timeline. The event format
    /// always prints JSON lines.
    #[wasm_bindgen(setter)]
    pub fn set_json(&mut self, json: bool) {
        self.inner.set_json(json);
    }

    /// The closing output after the last line (the timeline's summary), if any.
    pub fn finish(&self) -> Option<String> {
        self.inner.finish()
    }
}

corpus_binding!(
    PainPointCorpus,
    replay::pain_point_check::CorpusReplay,
    |config_json, half| Ok(replay::pain_point_check::CorpusReplay::with_settings(
        Plugin::from_json(config_json)?.settings,
        half
    ))
);

impl Replay {
    /// A replay under the given row config (JSON text).
    pub fn from_json(config_json: &str) -> Result<Self, String> {
        let settings = Plugin::from_json(config_json)?.settings;
        Ok(Self {
            inner: replay::pain_point_check::Replay::new(settings),
        })
    }

    /// Feeds the next input line (see [`Replay::feed`]).
    pub fn feed_line(&mut self, text: &str) -> Result<Option<String>, String> {
        self.inner.feed_line(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_config_is_refused_with_the_row_prefix() {
        let error = Replay::from_json(r#"{"repeatThreshold": 0}"#)
            .err()
            .unwrap();
        assert_eq!(
            error,
            "pain-point-check: invalid config: repeatThreshold must be an integer >= 1 (got 0)"
        );
    }

    #[test]
    fn lines_pass_through_to_the_engine() {
        let mut replay = Replay::from_json("{}").unwrap();
        assert_eq!(
            replay.feed_line(r#"{"step":true}"#).unwrap().as_deref(),
            Some(
                r#"{"line":1,"agent":"default","event":"step","timeline":[],"gate":"idle","failures":0,"run":0,"denials":0}"#
            )
        );
        assert_eq!(
            replay.feed_line("{}").unwrap_err(),
            "line 2: needs one of tool, user, assistant or step"
        );
        assert_eq!(replay.finish(), None);
    }
}
