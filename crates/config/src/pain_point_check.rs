//! The `pain-point-check` row: its serde type, every default (taken from `pain-point-gate`, the
//! one source of them), its validation rules and schema, and the conversion into the gate's
//! [`Settings`].

use crate::toolkit::{Field, Issue, PathSegment, Rule, validate_fields};
use gate::{
    Counting, DEFAULT_ALLOWLIST, DEFAULT_FAILURE_THRESHOLD, DEFAULT_MAX_DENIALS,
    DEFAULT_REPEAT_THRESHOLD, LanguageChoice, MAX_DENIALS_MAX, MAX_DENIALS_MIN, Settings,
    THRESHOLD_MAX, THRESHOLD_MIN, ToolPattern,
};
use names::AnchoredPatternError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The row's id in a profile's `cordis.patch.yml`.
pub const ROW_ID: &str = "pain-point-check";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-pain-point-check";
/// Prefix of the one-line summary [`crate::describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "pain-point-check: invalid config: ";

/// JSON Schema `pattern` of an allowlist entry: ASCII letters, digits, separators and `*`, with at
/// least one letter or digit (the rule of [`ToolPattern::new`]).
const TOOL_PATTERN_REGEX: &str = "^[\\x21-\\x7e]*[A-Za-z0-9][\\x21-\\x7e]*$";

/// The config of the `pain-point-check` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "pain-point-check row config")]
pub struct RowConfig {
    /// Register the gate; `false` turns the plugin off.
    pub enabled: bool,
    /// Failed experiments on one problem (error results, non-zero exits, kills, timeouts of calls
    /// with one target) that arm the gate (inclusive); under `counting: any-failure`, any failed
    /// calls.
    #[schemars(range(min = THRESHOLD_MIN, max = THRESHOLD_MAX))]
    pub failure_threshold: u32,
    /// Repeats of one call (same tool, same arguments, same outcome; in a row or as an A-B-A-B
    /// cycle) that arm the gate (inclusive); under `counting: any-failure`, consecutive identical
    /// calls whatever they returned.
    #[schemars(range(min = THRESHOLD_MIN, max = THRESHOLD_MAX))]
    pub repeat_threshold: u32,
    /// Investigation tools still callable while the gate is pending: exact names or anchored `*`
    /// patterns. Replaces the default list; use `extraAllowlist` to add to it.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub allowlist: Vec<String>,
    /// More allowlisted tools, added to `allowlist` (e.g. `mcp__docs__*`).
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub extra_allowlist: Vec<String>,
    /// Language of the check block and denials: `auto` follows the user's last prompt.
    pub language: Language,
    /// Refused calls in one pending episode after which the gate opens by itself (the escape).
    #[schemars(range(min = MAX_DENIALS_MIN, max = MAX_DENIALS_MAX))]
    pub max_denials: u32,
    /// How failures and repeats are counted: `no-progress` (failed retries of one problem that
    /// change nothing; a shell run whose failure changed is progress), `same-problem` (every failed
    /// retry of one problem, the counting of 0.3) or `any-failure` (every failure and identical
    /// call since the last reset, the counting before 0.3).
    pub counting: CountingKey,
}

/// The `counting` key's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(inline)]
pub enum CountingKey {
    /// Failed retries of one problem that change nothing.
    NoProgress,
    /// Failures per target; a success on the target resolves them.
    SameProblem,
    /// Every failure since the last reset (the counting before 0.3).
    AnyFailure,
}

impl From<CountingKey> for Counting {
    fn from(key: CountingKey) -> Self {
        match key {
            CountingKey::NoProgress => Self::NoProgress,
            CountingKey::SameProblem => Self::SameProblem,
            CountingKey::AnyFailure => Self::AnyFailure,
        }
    }
}

/// The `language` key's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// Inline: the patch-file schema embeds this row's schema, where a `#/definitions/…` ref would
// point at the wrong root.
#[schemars(inline)]
pub enum Language {
    /// Chinese when the user's last prompt has Chinese or Japanese characters, else English.
    Auto,
    /// Chinese.
    Zh,
    /// English.
    En,
}

impl From<Language> for LanguageChoice {
    fn from(language: Language) -> Self {
        match language {
            Language::Auto => Self::Auto,
            Language::Zh => Self::Zh,
            Language::En => Self::En,
        }
    }
}

impl Default for RowConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            failure_threshold: DEFAULT_FAILURE_THRESHOLD,
            repeat_threshold: DEFAULT_REPEAT_THRESHOLD,
            allowlist: DEFAULT_ALLOWLIST.iter().map(|&s| s.to_owned()).collect(),
            extra_allowlist: Vec::new(),
            language: Language::Auto,
            max_denials: DEFAULT_MAX_DENIALS,
            counting: CountingKey::NoProgress,
        }
    }
}

const THRESHOLD: Rule = Rule::Integer {
    min: THRESHOLD_MIN,
    max: THRESHOLD_MAX,
};
const TOOL_PATTERNS: Rule = Rule::List {
    of: "tool names or `*` patterns",
    check: tool_pattern,
};
const LANGUAGES: [&str; 3] = ["auto", "zh", "en"];
const COUNTINGS: [&str; 3] = ["no-progress", "same-problem", "any-failure"];

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [Field; 8] = [
    ("enabled", Rule::Flag),
    ("failureThreshold", THRESHOLD),
    ("repeatThreshold", THRESHOLD),
    ("allowlist", TOOL_PATTERNS),
    ("extraAllowlist", TOOL_PATTERNS),
    ("language", Rule::OneOf(&LANGUAGES)),
    (
        "maxDenials",
        Rule::Integer {
            min: MAX_DENIALS_MIN,
            max: MAX_DENIALS_MAX,
        },
    ),
    ("counting", Rule::OneOf(&COUNTINGS)),
];

/// An allowlist entry's rule: the same as [`ToolPattern::new`]. A bare `*` would allow every
/// tool and so switch the gate off; `enabled: false` says that plainly.
fn tool_pattern(text: &str) -> Result<(), String> {
    match ToolPattern::new(text) {
        Ok(_) => Ok(()),
        Err(AnchoredPatternError::NoLetterOrDigit) => Err(
            "must contain at least one letter or digit (a bare `*` would allow every tool; \
             use enabled: false to turn the gate off)"
                .to_owned(),
        ),
        Err(error) => Err(error.to_string()),
    }
}

/// Validates a `pain-point-check` row config and builds it, or reports every problem found: the
/// per-key rules first, then what only the whole list shows (an entry repeating an earlier one).
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    <RowConfig as crate::Config>::validate(value).map(|(row, _)| row)
}

/// The row validated once, here; the gate's settings are built from it and never re-checked.
impl crate::Config for RowConfig {
    const MESSAGE_PREFIX: &'static str = MESSAGE_PREFIX;
    type Settings = Settings;
    fn validate(value: &Value) -> Result<(Self, Settings), Vec<Issue>> {
        let row: RowConfig = validate_fields(&FIELDS, value)?;
        let repeats = repeated_entries(&row);
        if !repeats.is_empty() {
            return Err(repeats);
        }
        let settings = row.settings();
        Ok((row, settings))
    }
}

/// An entry of `allowlist` or `extraAllowlist` that repeats an earlier one of the same list (up
/// to case and separators); across the two lists a repeat is merged silently.
fn repeated_entries(row: &RowConfig) -> Vec<Issue> {
    let mut issues = Vec::new();
    for (key, sources) in [
        ("allowlist", &row.allowlist),
        ("extraAllowlist", &row.extra_allowlist),
    ] {
        let mut seen: Vec<(usize, ToolPattern)> = Vec::new();
        for (index, source) in sources.iter().enumerate() {
            let Ok(pattern) = ToolPattern::new(source) else {
                continue;
            };
            match seen.iter().find(|(_, p)| p.same_as(&pattern)) {
                Some(&(first_index, _)) => issues.push(crate::toolkit::issue(
                    vec![PathSegment::Key(key.to_owned()), PathSegment::Index(index)],
                    format!(
                        "repeats entry [{first_index}] of the same list (got {})",
                        crate::toolkit::render(&Value::String(source.clone()))
                    ),
                )),
                None => seen.push((index, pattern)),
            }
        }
    }
    issues
}

impl RowConfig {
    /// The gate's settings this config describes. Patterns are parsed; a config that passed
    /// [`validate`] has only valid ones, and an invalid one (possible only in a hand-built config)
    /// is skipped, never a panic.
    pub fn settings(&self) -> Settings {
        Settings::default()
            .with_enabled(self.enabled)
            .with_failure_threshold(self.failure_threshold)
            .with_repeat_threshold(self.repeat_threshold)
            .with_max_denials(self.max_denials)
            .with_language(self.language.into())
            .with_counting(self.counting.into())
            .with_allowlist(patterns(&self.allowlist))
            .with_extra_allowlist(patterns(&self.extra_allowlist))
    }
}

fn patterns(sources: &[String]) -> Vec<ToolPattern> {
    sources
        .iter()
        .filter_map(|source| ToolPattern::new(source).ok())
        .collect()
}

/// The JSON Schema (draft-07) of the row config.
pub fn json_schema() -> Value {
    crate::toolkit::schema_of::<RowConfig>()
}

#[cfg(test)]
mod tests;
