//! The Cordis row config of research-nudge.
//!
//! This crate owns the JSON shape of the plugin's row config (`id: research-nudge` in a profile's
//! `cordis.patch.yml`): the serde types ([`RowConfig`]), every default ([`RowConfig::default`] is the
//! one source of truth for them), whole-row replacement (DSH replaces a row's config as a whole, so
//! each omitted key takes its default and a missing or `null` config means all defaults), a
//! hand-written validation that collects every problem with a precise, path-naming message
//! ([`validate`], [`Issue`], [`describe`]), the conversion into the policy's
//! [`Settings`], and the JSON Schema of the row ([`json_schema`]).
//!
//! It must not know anything of WASM, JavaScript or DSH internals: it only knows the row's JSON
//! shape. The one concession to its JavaScript caller is documented on [`validate`]: values that
//! JSON cannot carry (`NaN`, `Infinity`, `undefined`, functions, bigints) arrive as the sentinel
//! object `{"\u0000js": "<text>"}`, are rejected like any other wrong value and are shown as their
//! bare text in messages.

mod patch_schema;
pub use patch_schema::{EDITOR_CUSTOM_TAG, JS_EXPR_KEY, PACKAGE_NAME, ROW_ID, patch_file_schema};

use policy::names::{EmptyPattern, Pattern};
use policy::{MINUTE, Millis, Settings, Weights};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Prefix of the one-line summary [`describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "research-nudge: invalid config: ";

/// The built-in reminder body (`reminder`'s default).
pub const DEFAULT_REMINDER: &str = "[Research Nudge]

Pause and reflect before continuing:

1. What problem am I trying to solve right now? Restate it precisely.
2. What approach am I currently taking, and how many attempts has it taken without success?
3. Am I fully confident this approach will work? If I am guessing at an API, an error message, a library's behavior, or platform details I have not verified, I am not fully confident.
4. If I am not fully confident: external research is cheaper than more local trial-and-error. Search the official documentation, GitHub issues, existing libraries, or the exact error message before trying again.

Do not search merely to satisfy this reminder. If the task is self-contained and external research would not help, continue normally. If you are deliberately making progress from local evidence and do not want another reminder for a while, use the research_nudge_snooze tool.";

/// Smallest `debtThreshold` and `maxToolCallsWithoutResearch`.
pub const THRESHOLD_MIN: u32 = 1;
/// Largest `debtThreshold`, `maxToolCallsWithoutResearch` and debt weight.
pub const COUNT_MAX: u32 = 1_000_000;
/// Smallest debt weight (`ordinaryToolDebt`, `mutationDebt`, …).
pub const WEIGHT_MIN: u32 = 0;
/// Smallest `maxMinutesWithoutResearch` and `cooldownMinutes`.
pub const MINUTES_MIN: u32 = 0;
/// Largest `maxMinutesWithoutResearch` and `cooldownMinutes` (one year).
pub const MINUTES_MAX: u32 = 525_600;
/// Smallest `maxAgentSnoozeMinutes`.
pub const SNOOZE_MIN: u32 = 1;
/// Largest `maxAgentSnoozeMinutes` (one week).
pub const SNOOZE_MAX: u32 = 10_080;

/// JSON Schema `pattern` of a tool-name pattern: at least one ASCII letter or digit, the same rule
/// as [`Pattern::new`].
const TOOL_PATTERN_REGEX: &str = "[A-Za-z0-9]";
/// JSON Schema `pattern` of the reminder: at least one non-whitespace character.
const REMINDER_REGEX: &str = "\\S";

/// Longest rendering of an offending value in a message, in characters (before the `…`).
const VALUE_PREVIEW_CHARS: usize = 60;
/// The key of the object the JS shim sends in place of a value JSON cannot carry.
const JS_SENTINEL_KEY: &str = "\u{0}js";

/// The config of the `research-nudge` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "research-nudge row config")]
pub struct RowConfig {
    /// Register the lifecycle listener and the snooze tool; `false` turns the plugin off.
    pub enabled: bool,
    /// Debt score that makes a reminder eligible.
    #[schemars(range(min = THRESHOLD_MIN, max = COUNT_MAX))]
    pub debt_threshold: u32,
    /// Call-count fallback threshold: counted tool calls without recognized research.
    #[schemars(range(min = THRESHOLD_MIN, max = COUNT_MAX))]
    pub max_tool_calls_without_research: u32,
    /// Elapsed-time fallback threshold: minutes without recognized research (fractions allowed).
    #[schemars(range(min = MINUTES_MIN, max = MINUTES_MAX))]
    pub max_minutes_without_research: f64,
    /// Minimum time between two reminders to one agent, in minutes (fractions allowed).
    #[schemars(range(min = MINUTES_MIN, max = MINUTES_MAX))]
    pub cooldown_minutes: f64,
    /// Debt weight for other local tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub ordinary_tool_debt: u32,
    /// Debt weight for write/edit/delete-style tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub mutation_debt: u32,
    /// Debt weight for shell/build/test-style tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub execution_debt: u32,
    /// Extra debt weight for a failed result.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub failure_debt: u32,
    /// Extra debt weight for a failure equivalent to a recent one.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub repeated_failure_debt: u32,
    /// Upper bound for one agent-requested snooze of reminders, in minutes.
    #[schemars(range(min = SNOOZE_MIN, max = SNOOZE_MAX))]
    pub max_agent_snooze_minutes: u32,
    /// Tool-name patterns whose successful call is external research and resets the agent's state.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub research_tools: Vec<String>,
    /// Tool-name patterns classed as write/edit/delete-style mutations.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub mutation_tools: Vec<String>,
    /// Tool-name patterns classed as shell/build/test-style executions.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub execution_tools: Vec<String>,
    /// Model-visible reminder body; the current signals are appended after a blank line.
    #[schemars(regex(pattern = REMINDER_REGEX))]
    pub reminder: String,
    /// Log resets and queued reminders to stderr.
    pub debug: bool,
}

impl Default for RowConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            debt_threshold: 20,
            max_tool_calls_without_research: 15,
            max_minutes_without_research: 15.0,
            cooldown_minutes: 10.0,
            ordinary_tool_debt: 1,
            mutation_debt: 2,
            execution_debt: 1,
            failure_debt: 4,
            repeated_failure_debt: 6,
            max_agent_snooze_minutes: 60,
            research_tools: strings(&[
                "web_search",
                "websearch",
                "web_fetch",
                "webfetch",
                "search_web",
                "browser_search",
                "github_search",
                "search_github",
                "fetch_url",
                "http_get",
                "docs_search",
                "documentation_search",
            ]),
            mutation_tools: strings(&[
                "write",
                "edit",
                "replace",
                "patch",
                "create_file",
                "delete_file",
                "apply_patch",
                "delete",
                "remove",
                "rename",
                "move",
                "mkdir",
                "rmdir",
                "create_directory",
            ]),
            execution_tools: strings(&[
                "bash",
                "sh",
                "zsh",
                "shell",
                "terminal",
                "exec",
                "execute",
                "run_command",
                "run",
                "test",
                "tests",
                "pytest",
                "compile",
                "build",
                "make",
                "cargo",
                "npm",
                "pnpm",
                "yarn",
                "node",
                "python",
            ]),
            reminder: DEFAULT_REMINDER.to_owned(),
            debug: false,
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|&s| s.to_owned()).collect()
}

impl RowConfig {
    /// The policy settings this config describes. Minutes become milliseconds (rounded to the
    /// nearest millisecond). Patterns are parsed; a config that passed [`validate`] has only valid
    /// ones, and an invalid one (possible only in a hand-built config) is skipped, never a panic.
    pub fn settings(&self) -> Settings {
        Settings {
            debt_threshold: self.debt_threshold,
            max_tool_calls_without_research: self.max_tool_calls_without_research,
            max_time_without_research: minutes_to_millis(self.max_minutes_without_research),
            cooldown: minutes_to_millis(self.cooldown_minutes),
            weights: Weights {
                ordinary: self.ordinary_tool_debt,
                mutation: self.mutation_debt,
                execution: self.execution_debt,
                failure: self.failure_debt,
                repeated_failure: self.repeated_failure_debt,
            },
            max_snooze_minutes: self.max_agent_snooze_minutes,
            research_tools: patterns(&self.research_tools),
            mutation_tools: patterns(&self.mutation_tools),
            execution_tools: patterns(&self.execution_tools),
            reminder: self.reminder.clone(),
        }
    }
}

/// Minutes to milliseconds, rounded; `as` saturates (and maps NaN to 0), so this cannot panic.
fn minutes_to_millis(minutes: f64) -> Millis {
    (minutes * MINUTE as f64).round() as Millis
}

fn patterns(sources: &[String]) -> Vec<Pattern> {
    sources
        .iter()
        .filter_map(|s| Pattern::new(s).ok())
        .collect()
}

/// One step of the path to an offending value: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PathSegment {
    /// An object key (serialized as a string).
    Key(String),
    /// An array index (serialized as a number).
    Index(usize),
}

/// One validation problem: where it is and a message that names the path, the rule and the value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Issue {
    /// Path from the config object to the offending value; empty for the config itself (and then
    /// left out when serialized, so hosts print no empty location).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<PathSegment>,
    /// The full message, e.g. `debtThreshold must be an integer >= 1 (got 0)`.
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One line for all issues: [`MESSAGE_PREFIX`] followed by the messages joined by `"; "`.
pub fn describe(issues: &[Issue]) -> String {
    let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    format!("{MESSAGE_PREFIX}{}", messages.join("; "))
}

/// What a key's value must be. The bounds are the `*_MIN`/`*_MAX` consts, shared with the schema.
#[derive(Clone, Copy)]
enum Rule {
    /// `true` or `false`.
    Flag,
    /// An integer in `min..=max` (an integral float such as `20.0` or `1e3` counts).
    Integer { min: u32, max: u32 },
    /// A finite number in `min..=max`, fractions allowed.
    Number { min: u32, max: u32 },
    /// A list of strings, each a valid [`Pattern`].
    Patterns,
    /// A string with a non-whitespace character.
    Text,
}

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [(&str, Rule); 16] = [
    ("enabled", Rule::Flag),
    ("debtThreshold", COUNT),
    ("maxToolCallsWithoutResearch", COUNT),
    ("maxMinutesWithoutResearch", MINUTES),
    ("cooldownMinutes", MINUTES),
    ("ordinaryToolDebt", WEIGHT),
    ("mutationDebt", WEIGHT),
    ("executionDebt", WEIGHT),
    ("failureDebt", WEIGHT),
    ("repeatedFailureDebt", WEIGHT),
    ("maxAgentSnoozeMinutes", SNOOZE),
    ("researchTools", Rule::Patterns),
    ("mutationTools", Rule::Patterns),
    ("executionTools", Rule::Patterns),
    ("reminder", Rule::Text),
    ("debug", Rule::Flag),
];

const COUNT: Rule = Rule::Integer {
    min: THRESHOLD_MIN,
    max: COUNT_MAX,
};
const WEIGHT: Rule = Rule::Integer {
    min: WEIGHT_MIN,
    max: COUNT_MAX,
};
const SNOOZE: Rule = Rule::Integer {
    min: SNOOZE_MIN,
    max: SNOOZE_MAX,
};
const MINUTES: Rule = Rule::Number {
    min: MINUTES_MIN,
    max: MINUTES_MAX,
};

/// Validates a row config and builds it, or reports every problem found.
///
/// `null` (a missing config) means all defaults, and so does the JS shim's `undefined` sentinel
/// in place of the whole config; any other non-object is an error. Each omitted key takes its
/// default. Issues come in the key order of the input object (the iteration order of
/// `serde_json::Map`, which is input order with serde_json's `preserve_order` feature, as the
/// workspace builds it), and within a list in index order.
///
/// Values JSON cannot carry arrive from the JS shim as `{"\u0000js": "<text>"}` (e.g. `NaN`,
/// `Infinity`, `undefined`, `function`, `bigint 12`); they are invalid for every key and appear in
/// messages as their bare text.
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    let object = match value {
        Value::Null => return Ok(RowConfig::default()),
        Value::Object(object) if js_sentinel(object) == Some("undefined") => {
            return Ok(RowConfig::default());
        }
        Value::Object(object) if js_sentinel(object).is_none() => object,
        other => {
            return Err(vec![issue(
                Vec::new(),
                format!("must be an object (got {})", render(other)),
            )]);
        }
    };

    let mut issues = Vec::new();
    let mut normalized = Map::new();
    for (key, value) in object {
        match FIELDS.iter().find(|(name, _)| name == key) {
            Some(&(_, rule)) => {
                if let Some(value) = check(rule, key, value, &mut issues) {
                    normalized.insert(key.clone(), value);
                }
            }
            None => issues.push(unknown_key(key, value)),
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    // Every value now has its field's shape, so this cannot fail; the mapping is kept defensive.
    serde_json::from_value(Value::Object(normalized)).map_err(|error| {
        vec![issue(
            Vec::new(),
            format!("could not be read after validation: {error}"),
        )]
    })
}

/// Checks one known key's value; returns it in the shape serde expects, or records issues.
fn check(rule: Rule, key: &str, value: &Value, issues: &mut Vec<Issue>) -> Option<Value> {
    let path = vec![PathSegment::Key(key.to_owned())];
    let problem = match rule {
        Rule::Flag => match value {
            Value::Bool(_) => return Some(value.clone()),
            _ => "must be true or false".to_owned(),
        },
        Rule::Integer { min, max } => match integer(value) {
            Some(n) if n < i128::from(min) => format!("must be an integer >= {min}"),
            Some(n) if n > i128::from(max) => format!("must be an integer <= {max}"),
            Some(n) => return u64::try_from(n).ok().map(Value::from),
            None => format!("must be an integer >= {min}"),
        },
        Rule::Number { min, max } => match value.as_f64() {
            Some(x) if x < f64::from(min) => format!("must be a number >= {min}"),
            Some(x) if x > f64::from(max) => format!("must be a number <= {max}"),
            Some(_) => return Some(value.clone()),
            None => format!("must be a number >= {min}"),
        },
        Rule::Patterns => match value {
            Value::Array(items) => {
                let before = issues.len();
                for (index, item) in items.iter().enumerate() {
                    let mut path = path.clone();
                    path.push(PathSegment::Index(index));
                    let problem = match item {
                        Value::String(text) => match Pattern::new(text) {
                            Ok(_) => continue,
                            Err(error @ EmptyPattern) => error.to_string(),
                        },
                        _ => "must be a string".to_owned(),
                    };
                    issues.push(issue(path, format!("{problem} (got {})", render(item))));
                }
                return (issues.len() == before).then(|| value.clone());
            }
            _ => "must be a list of tool-name patterns".to_owned(),
        },
        Rule::Text => match value {
            Value::String(text) if !text.trim().is_empty() => return Some(value.clone()),
            _ => "must be a string with some text".to_owned(),
        },
    };
    issues.push(issue(path, format!("{problem} (got {})", render(value))));
    None
}

/// The integer a JSON number stands for, if it is one (`20`, `-1`, `20.0`, `1e3`). Wide enough
/// that every `u64`/`i64` fits and out-of-range floats compare correctly with the bounds.
fn integer(value: &Value) -> Option<i128> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(n) = number.as_u64() {
        return Some(i128::from(n));
    }
    if let Some(n) = number.as_i64() {
        return Some(i128::from(n));
    }
    let x = number.as_f64()?;
    // `as` saturates far outside the bounds, which is all the comparisons need.
    (x.is_finite() && x.fract() == 0.0).then_some(x as i128)
}

fn unknown_key(key: &str, value: &Value) -> Issue {
    let suggestion = match closest_key(key) {
        Some(known) => format!("; did you mean {known}?"),
        None => String::new(),
    };
    issue(
        vec![PathSegment::Key(key.to_owned())],
        format!("is not a config key{suggestion} (got {})", render(value)),
    )
}

/// The known key closest to `key`: the same key up to case, `_` and `-`, or within a Levenshtein
/// distance of 2 (a quarter of the known key's length for long keys) of such a folded spelling.
fn closest_key(key: &str) -> Option<&'static str> {
    let folded = fold(key);
    FIELDS
        .iter()
        .filter_map(|&(known, _)| {
            let known_folded = fold(known);
            let limit = (known_folded.len() / 4).max(2);
            let distance = levenshtein(&folded, &known_folded, limit)?;
            Some((distance, known))
        })
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, known)| known)
}

/// Lowercases and drops `_` and `-`, as chars.
fn fold(key: &str) -> Vec<char> {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The edit distance of `a` and `b` if it is at most `limit`.
fn levenshtein(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

fn issue(path: Vec<PathSegment>, rest: String) -> Issue {
    let message = format!("{} {rest}", render_path(&path));
    Issue { path, message }
}

/// `config` for the root, otherwise keys joined by `.` with indexes as `[i]`.
fn render_path(path: &[PathSegment]) -> String {
    if path.is_empty() {
        return "config".to_owned();
    }
    let mut out = String::new();
    for segment in path {
        match segment {
            PathSegment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            PathSegment::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// The text of a JS-only value sentinel, if `object` is one.
fn js_sentinel(object: &Map<String, Value>) -> Option<&str> {
    match object.get(JS_SENTINEL_KEY) {
        Some(Value::String(text)) if object.len() == 1 => Some(text),
        _ => None,
    }
}

/// Compact JSON for a message, with JS sentinels as their bare text, cut after
/// [`VALUE_PREVIEW_CHARS`] characters with a trailing `…`.
fn render(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    match out.char_indices().nth(VALUE_PREVIEW_CHARS) {
        Some((cut, _)) => {
            out.truncate(cut);
            out.push('…');
            out
        }
        None => out,
    }
}

/// Enough bytes that a rendering this long surely exceeds the preview (4 bytes per char at most).
const RENDER_BUDGET: usize = 4 * (VALUE_PREVIEW_CHARS + 1);

/// Writes compact JSON, stopping early once the preview is surely exceeded.
fn write_value(value: &Value, out: &mut String) {
    if out.len() > RENDER_BUDGET {
        return;
    }
    match value {
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if out.len() > RENDER_BUDGET {
                    return;
                }
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            if let Some(text) = js_sentinel(object) {
                out.push_str(text);
                return;
            }
            out.push('{');
            for (index, (key, item)) in object.iter().enumerate() {
                if out.len() > RENDER_BUDGET {
                    return;
                }
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Writes a quoted, escaped string; only its start is escaped when it is longer than the preview.
fn write_string(text: &str, out: &mut String) {
    let end = text
        .char_indices()
        .nth(VALUE_PREVIEW_CHARS + 1)
        .map_or(text.len(), |(i, _)| i);
    let escaped = Value::String(text[..end].to_owned()).to_string();
    if end < text.len() {
        // Drop the closing quote: the rendering will be cut anyway.
        out.push_str(&escaped[..escaped.len() - 1]);
    } else {
        out.push_str(&escaped);
    }
}

/// The JSON Schema (draft-07) of the row config: types, bounds, defaults, descriptions,
/// `additionalProperties: false`.
pub fn json_schema() -> Value {
    schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<RowConfig>()
        .to_value()
}

#[cfg(test)]
mod tests;
