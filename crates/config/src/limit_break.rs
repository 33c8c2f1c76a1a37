//! The `limit-break` row: its serde type and every default (the fetch ones taken from
//! `limit-break-fetch`'s [`Settings`], the one source of them), its validation rules and schema,
//! and the conversion into the fetch core's [`Settings`].
//!
//! The memory tools need where the DSH home is (`dshHome`, empty: DSH's own rule, `$DSH_HOME`
//! then `~/.dsh`) and the session-start brief's switch and budget (`sessionBrief`,
//! `briefMaxChars`, the default from `limit-break-memory`); the lock's numbers are the contract between every writer of the store, so they
//! are constants of `limit-break-memory`, not config.

use crate::toolkit::{Field, Issue, Rule, validate_fields};
use fetch::Settings;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The row's id in a profile's `cordis.patch.yml`.
pub const ROW_ID: &str = "limit-break";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-limit-break";
/// Prefix of the one-line summary [`crate::describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "limit-break: invalid config: ";

/// The config of the `limit-break` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "limit-break row config")]
pub struct RowConfig {
    /// Register the four tools; `false` turns the plugin off.
    pub enabled: bool,
    /// The DSH home holding `memory/facts.json`, as DSH's own plugins take it (`~` expands).
    /// Empty: DSH's rule, `$DSH_HOME`, else `~/.dsh`.
    pub dsh_home: String,
    /// Put a short brief of the memory store (topics, the current project's and the newest
    /// facts, how to recall more) into each new session's system prompt; `false` turns it off.
    pub session_brief: bool,
    /// The most characters the session-start brief takes.
    #[schemars(range(min = BRIEF_CHARS_MIN, max = BRIEF_CHARS_MAX))]
    pub brief_max_chars: u32,
    /// Let `resilient_fetch` reach loopback, private (RFC 1918), shared (CGNAT), link-local and
    /// unique-local addresses and local names. Cloud metadata addresses stay refused.
    pub allow_private_network: bool,
    /// The most one rung of the fetch ladder may take, DNS and redirects included (ms); a rung
    /// also gets no more than an equal share of what is left of `fetchTimeoutMs`.
    #[schemars(range(min = RUNG_TIMEOUT_MIN, max = RUNG_TIMEOUT_MAX))]
    pub rung_timeout_ms: u32,
    /// curl's connect timeout on rungs 2 to 4 (ms; capped by the rung's budget).
    #[schemars(range(min = CONNECT_TIMEOUT_MIN, max = CONNECT_TIMEOUT_MAX))]
    pub connect_timeout_ms: u32,
    /// The most one `resilient_fetch` call may take, all rungs together (ms).
    #[schemars(range(min = FETCH_TIMEOUT_MIN, max = FETCH_TIMEOUT_MAX))]
    pub fetch_timeout_ms: u32,
    /// Redirects followed per rung, each hop checked like the first URL.
    #[schemars(range(min = REDIRECTS_MIN, max = REDIRECTS_MAX))]
    pub max_redirects: u32,
    /// Body bytes read per response; more is cut, not streamed.
    #[schemars(range(min = BODY_BYTES_MIN, max = BODY_BYTES_MAX))]
    pub max_body_bytes: u32,
    /// Characters of text returned (UTF-16 code units, after HTML became text).
    #[schemars(range(min = TEXT_CHARS_MIN, max = TEXT_CHARS_MAX))]
    pub max_text_chars: u32,
}

/// Smallest `briefMaxChars`.
pub const BRIEF_CHARS_MIN: u32 = memory::brief::MIN_MAX_CHARS as u32;
/// Largest `briefMaxChars`.
pub const BRIEF_CHARS_MAX: u32 = memory::brief::MAX_MAX_CHARS as u32;
/// Smallest `rungTimeoutMs`.
pub const RUNG_TIMEOUT_MIN: u32 = 500;
/// Largest `rungTimeoutMs`.
pub const RUNG_TIMEOUT_MAX: u32 = 120_000;
/// Smallest `connectTimeoutMs`.
pub const CONNECT_TIMEOUT_MIN: u32 = 100;
/// Largest `connectTimeoutMs`.
pub const CONNECT_TIMEOUT_MAX: u32 = 60_000;
/// Smallest `fetchTimeoutMs`.
pub const FETCH_TIMEOUT_MIN: u32 = 1_000;
/// Largest `fetchTimeoutMs` (5 minutes).
pub const FETCH_TIMEOUT_MAX: u32 = 300_000;
/// Smallest `maxRedirects` (0: a redirect is an answer refused as too many).
pub const REDIRECTS_MIN: u32 = 0;
/// Largest `maxRedirects`.
pub const REDIRECTS_MAX: u32 = 10;
/// Smallest `maxBodyBytes`.
pub const BODY_BYTES_MIN: u32 = 1_024;
/// Largest `maxBodyBytes` (16 MiB).
pub const BODY_BYTES_MAX: u32 = 16 * 1024 * 1024;
/// Smallest `maxTextChars`.
pub const TEXT_CHARS_MIN: u32 = 1_000;
/// Largest `maxTextChars`; DSH spills a result over 50 000 bytes into a file, so more rarely helps.
pub const TEXT_CHARS_MAX: u32 = 200_000;

/// `value` as the row's `u32`, saturating (the defaults all fit).
fn u32_of(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

impl Default for RowConfig {
    fn default() -> Self {
        let fetch = Settings::default();
        Self {
            enabled: true,
            dsh_home: String::new(),
            session_brief: true,
            brief_max_chars: memory::brief::DEFAULT_MAX_CHARS as u32,
            allow_private_network: fetch.allow_private_network,
            rung_timeout_ms: u32_of(fetch.rung_timeout_ms),
            connect_timeout_ms: u32_of(fetch.connect_timeout_ms),
            fetch_timeout_ms: u32_of(fetch.deadline_ms),
            max_redirects: fetch.max_redirects,
            max_body_bytes: u32_of(fetch.max_body_bytes as u64),
            max_text_chars: u32_of(fetch.max_text_chars as u64),
        }
    }
}

/// Any string: an empty `dshHome` means DSH's own rule.
const ANY_STRING: Rule = Rule::Str {
    what: "a string",
    check: |_| Ok(()),
};

const fn integer(min: u32, max: u32) -> Rule {
    Rule::Integer { min, max }
}

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [Field; 11] = [
    ("enabled", Rule::Flag),
    ("dshHome", ANY_STRING),
    ("sessionBrief", Rule::Flag),
    ("briefMaxChars", integer(BRIEF_CHARS_MIN, BRIEF_CHARS_MAX)),
    ("allowPrivateNetwork", Rule::Flag),
    ("rungTimeoutMs", integer(RUNG_TIMEOUT_MIN, RUNG_TIMEOUT_MAX)),
    (
        "connectTimeoutMs",
        integer(CONNECT_TIMEOUT_MIN, CONNECT_TIMEOUT_MAX),
    ),
    (
        "fetchTimeoutMs",
        integer(FETCH_TIMEOUT_MIN, FETCH_TIMEOUT_MAX),
    ),
    ("maxRedirects", integer(REDIRECTS_MIN, REDIRECTS_MAX)),
    ("maxBodyBytes", integer(BODY_BYTES_MIN, BODY_BYTES_MAX)),
    ("maxTextChars", integer(TEXT_CHARS_MIN, TEXT_CHARS_MAX)),
];

/// Validates a `limit-break` row config and builds it, or reports every problem found.
///
/// The timeouts need not nest: the fetch core gives each rung the least of `rungTimeoutMs` and an
/// equal share of what is left of `fetchTimeoutMs`, and caps curl's connect timeout by the
/// rung's budget, so `{ fetchTimeoutMs: 5000 }` alone is a valid row.
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    validate_fields(&FIELDS, value)
}

impl crate::Config for RowConfig {
    const MESSAGE_PREFIX: &'static str = MESSAGE_PREFIX;
    /// The plugin reads the row itself ([`RowConfig::fetch_settings`] for the fetch core).
    type Settings = ();
    fn validate(value: &Value) -> Result<(Self, ()), Vec<Issue>> {
        validate(value).map(|row| (row, ()))
    }
}

impl RowConfig {
    /// The fetch core's settings (the user agent is the core's).
    pub fn fetch_settings(&self) -> Settings {
        Settings {
            allow_private_network: self.allow_private_network,
            rung_timeout_ms: u64::from(self.rung_timeout_ms),
            connect_timeout_ms: u64::from(self.connect_timeout_ms),
            deadline_ms: u64::from(self.fetch_timeout_ms),
            max_redirects: self.max_redirects,
            max_body_bytes: self.max_body_bytes as usize,
            max_text_chars: self.max_text_chars as usize,
            ..Settings::default()
        }
    }
}

/// The JSON Schema (draft-07) of the row config.
pub fn json_schema() -> Value {
    crate::toolkit::schema_of::<RowConfig>()
}

#[cfg(test)]
mod tests;
