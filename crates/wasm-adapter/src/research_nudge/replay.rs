//! `research-nudge replay`'s WebAssembly surface (cargo feature `research-nudge-replay`): the
//! engine, its session-log mapping and the `--html` chart are `dsh-replay`'s
//! (`replay::research_nudge`); this only reads the config and passes lines and outputs through.

use crate::research_nudge::Plugin;
use wasm_bindgen::prelude::*;

/// A replay over one input stream.
#[wasm_bindgen]
pub struct Replay {
    inner: replay::research_nudge::Replay,
}

#[wasm_bindgen]
impl Replay {
    /// A replay under the given row config (JSON text); an invalid config throws the full message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Replay, JsError> {
        Self::from_json(config_json).map_err(|m| JsError::new(&m))
    }

    /// Feeds the next input line; returns the output (one or more lines, without the final
    /// newline), or nothing. A malformed line throws `line N: …` naming the field.
    pub fn feed(&mut self, text: &str) -> Result<Option<String>, JsError> {
        self.feed_line(text).map_err(|m| JsError::new(&m))
    }

    /// Whether a session log is printed as JSON lines instead of the timeline. The replay event
    /// format always prints JSON lines.
    #[wasm_bindgen(setter)]
    pub fn set_json(&mut self, json: bool) {
        self.inner.set_json(json);
    }

    /// Whether the replay is drawn (`--html`): every line is read and nothing is printed until
    /// [`Replay::finish`], which returns one self-contained HTML page.
    #[wasm_bindgen(setter)]
    pub fn set_html(&mut self, html: bool) {
        self.inner.set_html(html);
    }

    /// The closing output after the last line (the timeline's summary, or the whole page with
    /// `html`), if any.
    pub fn finish(&self) -> Option<String> {
        self.inner.finish()
    }
}

corpus_binding!(
    Corpus,
    replay::research_nudge::CorpusReplay,
    |config_json, half| Ok(replay::research_nudge::CorpusReplay::with_row(
        Plugin::from_json(config_json)?.row,
        half
    ))
);

impl Replay {
    /// A replay under the given row config (JSON text).
    pub fn from_json(config_json: &str) -> Result<Self, String> {
        let row = Plugin::from_json(config_json)?.row;
        Ok(Self {
            inner: replay::research_nudge::Replay::new(row),
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
    fn an_invalid_config_is_refused_with_the_full_message() {
        let error = Replay::from_json(r#"{"debtThreshold":0}"#).err().unwrap();
        assert_eq!(
            error,
            "research-nudge: invalid config: debtThreshold must be an integer >= 1 (got 0)"
        );
    }

    #[test]
    fn lines_pass_through_to_the_engine() {
        let mut replay = Replay::from_json("{}").unwrap();
        assert_eq!(
            replay
                .feed_line(r#"{"at_ms":0,"tool":"read"}"#)
                .unwrap()
                .as_deref(),
            Some(
                r#"{"agent":"default","debt":1,"tool_calls_since_research":1,"failures":0,"repeated_failures":0,"nudge":false}"#
            )
        );
        assert_eq!(
            replay.feed_line("[]").unwrap_err(),
            "line 2: must be a JSON object (got [])"
        );
        assert_eq!(replay.finish(), None);
    }
}
