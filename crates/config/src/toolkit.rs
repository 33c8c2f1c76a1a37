//! The config toolkit every row module builds on: [`validate_fields`] checks a row's JSON against
//! its [`Field`]s' [`Rule`]s and builds its serde type, or returns every [`Issue`] found (each
//! naming the path, the rule and the value, and suggesting the closest key for an unknown one);
//! [`describe`] joins them into one line, [`render`] shows a value in a message and [`schema_of`]
//! derives a row's JSON Schema. It names no row, so the rows and the crate root can both use it.

use names::did_you_mean;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// Longest rendering of an offending value in a message, in characters (before the `…`).
const VALUE_PREVIEW_CHARS: usize = 60;
/// The key of the object the JS shim sends in place of a value JSON cannot carry.
const JS_SENTINEL_KEY: &str = "\u{0}js";

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

/// One line for all issues: `prefix` (e.g. `research-nudge: invalid config: `) followed by the
/// messages joined by `"; "`.
pub fn describe(prefix: &str, issues: &[Issue]) -> String {
    let messages: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    format!("{prefix}{}", messages.join("; "))
}

/// A row's serde type: the one source of its defaults and rules, validated once and turned
/// straight into its core's settings ([`Config::Settings`]).
pub trait Config: Serialize + Sized {
    /// Prefix of the one-line summary [`describe`] builds from validation issues.
    const MESSAGE_PREFIX: &'static str;
    /// What the core is built from (`()` when it reads the row itself).
    type Settings;
    /// Validates the row's JSON once: the row and its core settings, or every problem found.
    fn validate(value: &Value) -> Result<(Self, Self::Settings), Vec<Issue>>;
}

/// [`Config::validate`] of a row config given as JSON text.
pub fn parse<C: Config>(input: &str) -> Result<(C, C::Settings), Vec<Issue>> {
    let value: Value = serde_json::from_str(input).map_err(|error| {
        vec![Issue {
            path: Vec::new(),
            message: format!("config must be JSON ({error})"),
        }]
    })?;
    C::validate(&value)
}

/// [`parse`], or the one line naming every issue after the row's [`Config::MESSAGE_PREFIX`].
pub fn load<C: Config>(input: &str) -> Result<(C, C::Settings), String> {
    parse(input).map_err(|issues| describe(C::MESSAGE_PREFIX, &issues))
}

/// What a key's value must be; rows keep their bounds in consts shared with their schema.
#[derive(Clone, Copy)]
pub enum Rule {
    /// `true` or `false`.
    Flag,
    /// An integer in `min..=max` (an integral float such as `20.0` or `1e3` counts).
    Integer {
        /// Smallest allowed value.
        min: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// A finite number in `min..=max`, fractions allowed.
    Number {
        /// Smallest allowed value.
        min: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// A list of strings, each accepted by `check` (whose error names the rule).
    List {
        /// What the list holds, in messages: "must be a list of {of}".
        of: &'static str,
        /// The rule of one item.
        check: fn(&str) -> Result<(), String>,
    },
    /// A string with a non-whitespace character.
    Text,
    /// A string accepted by `check` (whose error names the rule).
    Str {
        /// What the value must be, in messages: "must be {what}".
        what: &'static str,
        /// The rule of the string.
        check: fn(&str) -> Result<(), String>,
    },
    /// One of these strings.
    OneOf(&'static [&'static str]),
}

/// A key of a row config with its rule.
pub type Field = (&'static str, Rule);

/// Validates a row config against its fields and builds it, or reports every problem found.
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
pub fn validate_fields<T: Default + DeserializeOwned>(
    fields: &[Field],
    value: &Value,
) -> Result<T, Vec<Issue>> {
    let object = match value {
        Value::Null => return Ok(T::default()),
        Value::Object(object) if js_sentinel(object) == Some("undefined") => {
            return Ok(T::default());
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
        match fields.iter().find(|(name, _)| name == key) {
            Some(&(_, rule)) => {
                if let Some(value) = check(rule, key, value, &mut issues) {
                    normalized.insert(key.clone(), value);
                }
            }
            None => issues.push(unknown_key(fields, key, value)),
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
        Rule::List { of, check } => match value {
            Value::Array(items) => {
                let before = issues.len();
                for (index, item) in items.iter().enumerate() {
                    let mut path = path.clone();
                    path.push(PathSegment::Index(index));
                    let problem = match item {
                        Value::String(text) => match check(text) {
                            Ok(()) => continue,
                            Err(problem) => problem,
                        },
                        _ => "must be a string".to_owned(),
                    };
                    issues.push(issue(path, format!("{problem} (got {})", render(item))));
                }
                return (issues.len() == before).then(|| value.clone());
            }
            _ => format!("must be a list of {of}"),
        },
        Rule::Text => match value {
            Value::String(text) if !text.trim().is_empty() => return Some(value.clone()),
            _ => "must be a string with some text".to_owned(),
        },
        Rule::Str { what, check } => match value {
            Value::String(text) => match check(text) {
                Ok(()) => return Some(value.clone()),
                Err(problem) => problem,
            },
            _ => format!("must be {what}"),
        },
        Rule::OneOf(choices) => match value {
            Value::String(text) if choices.contains(&text.as_str()) => return Some(value.clone()),
            _ => format!("must be one of {}", choices.join(", ")),
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

fn unknown_key(fields: &[Field], key: &str, value: &Value) -> Issue {
    let known = fields.iter().map(|&(name, _)| name);
    let suggestion = match did_you_mean(key, known) {
        Some(known) => format!("; did you mean {known}?"),
        None => String::new(),
    };
    issue(
        vec![PathSegment::Key(key.to_owned())],
        format!("is not a config key{suggestion} (got {})", render(value)),
    )
}

/// An issue at `path` whose message is the rendered path, a space and `rest`.
pub(crate) fn issue(path: Vec<PathSegment>, rest: String) -> Issue {
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
pub fn render(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    text::clip(&out, VALUE_PREVIEW_CHARS)
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

/// The JSON Schema (draft-07) of a row config type: types, bounds, defaults, descriptions,
/// `additionalProperties: false` (from `deny_unknown_fields`).
pub fn schema_of<T: schemars::JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}
