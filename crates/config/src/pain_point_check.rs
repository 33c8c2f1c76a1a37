//! The `pain-point-check` row: its serde type, every default (taken from `pain-point-gate`, the
//! one source of them), its validation rules and schema, and the conversion into the gate's
//! [`Settings`].

use crate::toolkit::{Field, Issue, PathSegment, Rule, validate_fields};
use gate::{
    Counting, DEFAULT_ALLOWLIST, DEFAULT_FAILURE_THRESHOLD, DEFAULT_MAX_DENIALS,
    DEFAULT_REPEAT_THRESHOLD, LanguageChoice, MAX_DENIALS_MAX, MAX_DENIALS_MIN, PatternProblem,
    Settings, SettingsError, SettingsInput, THRESHOLD_MAX, THRESHOLD_MIN, ToolPattern,
};
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

fn tool_pattern(text: &str) -> Result<(), String> {
    ToolPattern::new(text)
        .map(|_| ())
        .map_err(|e| PatternProblem::from(e).to_string())
}

/// Validates a `pain-point-check` row config and builds it, or reports every problem found: the
/// per-key rules first, then what only the whole list shows (an entry repeating an earlier one).
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    <RowConfig as crate::Config>::validate(value).map(|(row, _)| row)
}

/// The row validated once: the per-key rules, then [`Settings::new`], whose settings the gate
/// keeps.
impl crate::Config for RowConfig {
    const MESSAGE_PREFIX: &'static str = MESSAGE_PREFIX;
    type Settings = Settings;
    fn validate(value: &Value) -> Result<(Self, Settings), Vec<Issue>> {
        let row: RowConfig = validate_fields(&FIELDS, value)?;
        let settings = row.settings()?;
        Ok((row, settings))
    }
}

impl RowConfig {
    /// The gate's settings, or the issues [`Settings::new`] finds (with their paths).
    pub fn settings(&self) -> Result<Settings, Vec<Issue>> {
        let input = SettingsInput {
            enabled: self.enabled,
            failure_threshold: self.failure_threshold,
            repeat_threshold: self.repeat_threshold,
            allowlist: self.allowlist.clone(),
            extra_allowlist: self.extra_allowlist.clone(),
            language: self.language.into(),
            max_denials: self.max_denials,
            counting: self.counting.into(),
        };
        Settings::new(&input).map_err(|errors| errors.iter().map(issue_of).collect())
    }
}

fn issue_of(error: &SettingsError) -> Issue {
    match error {
        SettingsError::OutOfRange {
            field,
            value,
            min,
            max,
        } => crate::toolkit::issue(
            vec![PathSegment::Key(field.key().to_owned())],
            format!("must be an integer in {min}..={max} (got {value})"),
        ),
        SettingsError::InvalidPattern {
            field,
            index,
            pattern,
            problem,
        } => crate::toolkit::issue(
            vec![
                PathSegment::Key(field.key().to_owned()),
                PathSegment::Index(*index),
            ],
            format!(
                "{problem} (got {})",
                crate::toolkit::render(&Value::String(pattern.clone()))
            ),
        ),
    }
}

/// The JSON Schema (draft-07) of the row config.
pub fn json_schema() -> Value {
    crate::toolkit::schema_of::<RowConfig>()
}

#[cfg(test)]
mod tests;
