//! limit-break's WebAssembly surface (cargo feature `limit-break`).
//!
//! The shim (`packages/limit-break/lib/index.js`) registers the tools whose definitions come from
//! [`tools`], and its drivers perform the I/O the cores ask for: `lib/memory.js` the file
//! operations of `limit-break-memory`'s save protocol, `lib/fetch.js` the steps of
//! `limit-break-fetch`'s ladder ([`fetch`]). Everything the drivers would otherwise have to decide
//! lives in the cores: argument rules, the store format, ranking, the lock protocol's decisions,
//! the index cache's freshness, where the home is, the tool definitions, the answers, their
//! texts and every message. These modules only carry JSON, bytes and numbers across; the drivers
//! only do I/O and hand over what they found (bytes, stat fields, error codes, the time).

pub mod fetch;
pub mod memory;
pub mod tools;

use ::memory::home;
use config::limit_break::RowConfig;
use wasm_bindgen::prelude::*;

validate_config_binding!(validateLimitBreakConfig, RowConfig);

/// The plugin for one validated config.
#[wasm_bindgen(js_name = LimitBreakPlugin)]
pub struct Plugin {
    row: RowConfig,
}

#[wasm_bindgen(js_class = LimitBreakPlugin)]
impl Plugin {
    /// Builds the plugin from config JSON; an invalid config throws the full
    /// `limit-break: invalid config: …` message.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str) -> Result<Plugin, JsError> {
        Self::from_json(config_json).map_err(|m| JsError::new(&m))
    }

    /// Whether the tools are registered at all.
    #[wasm_bindgen(getter)]
    pub fn enabled(&self) -> bool {
        self.row.enabled
    }

    /// Whether new sessions get the memory brief in their system prompt (`sessionBrief`).
    #[wasm_bindgen(getter, js_name = sessionBrief)]
    pub fn session_brief(&self) -> bool {
        self.row.session_brief
    }

    /// The most characters the brief takes (`briefMaxChars`).
    #[wasm_bindgen(getter, js_name = briefMaxChars)]
    pub fn brief_max_chars(&self) -> u32 {
        self.row.brief_max_chars
    }

    /// The tool definitions, as JSON text: a list of `{ name, description, parameters,
    /// outputSchema, timeoutMs, concurrencySafe }`.
    #[wasm_bindgen(js_name = toolsJson)]
    pub fn tools_json(&self) -> String {
        tools::definitions(&self.row).to_string()
    }

    /// The DSH home the store lives under, before the driver makes it absolute
    /// (`path.resolve`): the config's `dshHome`, else `$DSH_HOME` (`env`, ignored when blank),
    /// else `<os_home>/.dsh`; a leading `~`, `~/` or `~\` expands to `os_home`. `sep` is the
    /// platform's path separator.
    #[wasm_bindgen(js_name = dshHome)]
    pub fn dsh_home(&self, env: Option<String>, os_home: &str, sep: &str) -> String {
        home::resolve_home(&self.row.dsh_home, env.as_deref(), os_home, sep)
    }

    /// `memory_stats`'s answer, as JSON text, from what the driver found: the store's absolute
    /// path, `$DSH_HOME` and the OS home (for the displayed path), the file's bytes (`undefined`:
    /// no file), its size and mtime, and the lock file's age (`undefined`: no lock).
    #[wasm_bindgen(js_name = memoryStats)]
    #[allow(clippy::too_many_arguments)] // flat facts: one boundary crossing, no JS objects
    pub fn memory_stats(
        &self,
        path: &str,
        env: Option<String>,
        os_home: Option<String>,
        bytes: Option<Vec<u8>>,
        size: f64,
        mtime_ms: Option<f64>,
        lock_age_ms: Option<f64>,
    ) -> String {
        memory::stats(
            path,
            home::shown_env(&self.row.dsh_home, env.as_deref()),
            os_home.as_deref(),
            bytes.as_deref(),
            size,
            mtime_ms,
            lock_age_ms,
        )
    }
}

impl Plugin {
    /// The plugin for config JSON, or the one-line message naming every issue.
    pub fn from_json(config_json: &str) -> Result<Plugin, String> {
        let (row, ()) = config::load::<RowConfig>(config_json)?;
        Ok(Plugin { row })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn config_validation_answers_in_standard_schema_shape() {
        let ok: Value = serde_json::from_str(&validate_config("{}")).unwrap();
        assert_eq!(ok["value"]["enabled"], true);
        let bad: Value = serde_json::from_str(&validate_config(r#"{"enabeld": true}"#)).unwrap();
        assert_eq!(
            bad["issues"][0]["message"],
            "enabeld is not a config key; did you mean enabled? (got true)"
        );
        assert_eq!(bad["issues"][0]["path"][0], "enabeld");
        let broken: Value = serde_json::from_str(&validate_config("{")).unwrap();
        assert!(
            broken["issues"][0]["message"]
                .as_str()
                .unwrap()
                .starts_with("config must be JSON")
        );
        assert_eq!(
            Plugin::from_json(r#"{"enabled": 3}"#).err().unwrap(),
            "limit-break: invalid config: enabled must be true or false (got 3)"
        );
    }
}
