//! Validation of tool arguments, once, into types ([`SaveArgs`], [`RecallArgs`]) that the rest of
//! the crate trusts. Every message names the field, the rule and the value; an unknown key gets a
//! did-you-mean.

use crate::failure::{Code, Failure, show};
use serde_json::{Map, Value};

/// Longest id, in characters.
pub const MAX_ID_CHARS: usize = 200;
/// Longest `statement`, in characters.
pub const MAX_STATEMENT_CHARS: usize = 4_000;
/// Longest `details`, in characters.
pub const MAX_DETAILS_CHARS: usize = 8_000;
/// Longest `value`, `unit`, `source` or `topic`, in characters.
pub const MAX_SHORT_CHARS: usize = 1_000;
/// Most tags on one fact.
pub const MAX_TAGS: usize = 32;
/// Longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 64;
/// Longest recall query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;
/// Results a recall returns when it is not given `limit`.
pub const DEFAULT_LIMIT: usize = 5;
/// Largest `limit`; a larger one is lowered to this, and the answer says so.
pub const MAX_LIMIT: usize = 50;

/// The validated arguments of `memory_save`. Strings are trimmed; absent optional strings are `""`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveArgs {
    /// Non-blank, at most [`MAX_ID_CHARS`], no control characters.
    pub id: String,
    /// Non-blank, at most [`MAX_STATEMENT_CHARS`].
    pub statement: String,
    /// A string, or a number or boolean as its JSON text.
    pub value: String,
    /// Unit of `value`.
    pub unit: String,
    /// Longer explanation.
    pub details: String,
    /// Where the fact came from.
    pub source: String,
    /// Trimmed, non-blank, de-duplicated ignoring case, first spelling kept.
    pub tags: Vec<String>,
    /// `None` when not given: the save derives it from the id.
    pub topic: Option<String>,
    /// Ids of the facts this one replaces: they stay in the file, marked superseded.
    pub supersedes: Vec<String>,
    /// Whether the fact belongs to every project or to the current one.
    pub scope: Scope,
}

/// Where a fact applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Scope {
    /// Everywhere (the default, and every fact the original wrote).
    #[default]
    Global,
    /// Only in the repository the saving agent worked in (its root is stored with the fact).
    Project,
}

impl Scope {
    /// The word the model and the store use: `global` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::Project => "project",
        }
    }
}

/// The validated arguments of `memory_recall`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecallArgs {
    /// `None` (absent, `null` or blank) lists facts instead of searching.
    pub query: Option<String>,
    /// How many results at most, 1..=[`MAX_LIMIT`]. `None` when not given.
    pub limit: Option<usize>,
    /// The `limit` the caller asked for when it was above [`MAX_LIMIT`] and was lowered.
    pub limit_lowered_from: Option<u64>,
    /// Only facts carrying every one of these tags (ignoring case) are considered.
    pub tags: Vec<String>,
    /// How many results to skip (paging); 0 when not given.
    pub offset: usize,
    /// Also show facts a later save superseded.
    pub include_superseded: bool,
    /// Also show facts scoped to other projects than the current one.
    pub all_projects: bool,
}

const SAVE_KEYS: &[&str] = &[
    "id",
    "statement",
    "value",
    "unit",
    "details",
    "tags",
    "source",
    "topic",
    "supersedes",
    "scope",
];
const RECALL_KEYS: &[&str] = &[
    "query",
    "limit",
    "offset",
    "tags",
    "include_superseded",
    "all_projects",
];
/// Most ids one save may supersede.
pub const MAX_SUPERSEDES: usize = 32;
/// Largest `offset`.
pub const MAX_OFFSET: u64 = 10_000_000;

/// Words a model plausibly uses for a key, mapped to the key it meant.
const ALIASES: &[(&str, &str)] = &[
    ("text", "statement"),
    ("content", "statement"),
    ("fact", "statement"),
    ("body", "statement"),
    ("description", "details"),
    ("detail", "details"),
    ("note", "details"),
    ("notes", "details"),
    ("key", "id"),
    ("name", "id"),
    ("tag", "tags"),
    ("labels", "tags"),
    ("q", "query"),
    ("search", "query"),
    ("question", "query"),
    ("k", "limit"),
    ("top_k", "limit"),
    ("topk", "limit"),
    ("max", "limit"),
    ("max_results", "limit"),
    ("count", "limit"),
    ("n", "limit"),
    ("url", "source"),
    ("category", "topic"),
];

/// Validates `memory_save` arguments. Invisible characters ([`::text::invisible`]: Unicode tags,
/// bidi controls, zero-width characters) are stripped from every string first, so a fact holds
/// only what a person reading the store sees (and a value of nothing else is blank).
pub fn parse_save_args(args: &Value) -> Result<SaveArgs, Failure> {
    let visible = visible(args);
    let map = object(&visible, "memory_save")?;
    unknown_keys(map, SAVE_KEYS)?;
    let id = check_id("id", &required_string(map, "id", MAX_ID_CHARS)?)?;
    let statement = required_string(map, "statement", MAX_STATEMENT_CHARS)?;
    let value = optional_scalar(map, "value", MAX_SHORT_CHARS)?;
    let unit = optional_string(map, "unit", MAX_SHORT_CHARS)?.unwrap_or_default();
    let details = optional_string(map, "details", MAX_DETAILS_CHARS)?.unwrap_or_default();
    let source = optional_string(map, "source", MAX_SHORT_CHARS)?.unwrap_or_default();
    let topic = optional_string(map, "topic", MAX_SHORT_CHARS)?.filter(|t| !t.is_empty());
    let tags = tags(map)?;
    let supersedes = supersedes(map, &id)?;
    let scope = match map.get("scope") {
        None | Some(Value::Null) => Scope::Global,
        Some(Value::String(s)) if s.trim() == "global" => Scope::Global,
        Some(Value::String(s)) if s.trim() == "project" => Scope::Project,
        Some(other) => {
            return Err(invalid(format!(
                "`scope` must be \"global\" or \"project\" (got {})",
                show(other)
            )));
        }
    };
    Ok(SaveArgs {
        id,
        statement,
        value,
        unit,
        details,
        source,
        tags,
        topic,
        supersedes,
        scope,
    })
}

/// `args` with the invisible characters stripped from its strings and arrays' strings (the
/// shapes `memory_save` takes); borrowed when there are none.
fn visible(args: &Value) -> std::borrow::Cow<'_, Value> {
    fn has(v: &Value) -> bool {
        match v {
            Value::String(s) => s.chars().any(::text::invisible),
            Value::Array(items) => items.iter().any(has),
            Value::Object(map) => map.values().any(has),
            _ => false,
        }
    }
    fn strip(v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(::text::strip_invisible(s).into_owned()),
            Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), strip(v))).collect())
            }
            other => other.clone(),
        }
    }
    if has(args) {
        std::borrow::Cow::Owned(strip(args))
    } else {
        std::borrow::Cow::Borrowed(args)
    }
}

/// Validates `memory_recall` arguments. `null` (no arguments) is accepted as `{}`.
pub fn parse_recall_args(args: &Value) -> Result<RecallArgs, Failure> {
    let empty = Map::new();
    let map = match args {
        Value::Null => &empty,
        other => object(other, "memory_recall")?,
    };
    unknown_keys(map, RECALL_KEYS)?;
    let query = optional_string(map, "query", MAX_QUERY_CHARS)?.filter(|q| !q.is_empty());
    let (limit, limit_lowered_from) = match map.get("limit") {
        None | Some(Value::Null) => (None, None),
        Some(v) => {
            let n = whole_number(v);
            match n {
                Some(0) | None => {
                    return Err(invalid(format!(
                        "`limit` must be a whole number from 1 to {MAX_LIMIT} (got {})",
                        show(v)
                    )));
                }
                Some(n) if n > MAX_LIMIT as u64 => (Some(MAX_LIMIT), Some(n)),
                Some(n) => (Some(n as usize), None),
            }
        }
    };
    let tags = tags(map)?;
    let offset = match map.get("offset") {
        None | Some(Value::Null) => 0,
        Some(v) => match whole_number(v) {
            Some(n) if n <= MAX_OFFSET => n as usize,
            _ => {
                return Err(invalid(format!(
                    "`offset` must be a whole number from 0 to {MAX_OFFSET} (got {})",
                    show(v)
                )));
            }
        },
    };
    Ok(RecallArgs {
        query,
        limit,
        limit_lowered_from,
        tags,
        offset,
        include_superseded: flag(map, "include_superseded")?,
        all_projects: flag(map, "all_projects")?,
    })
}

/// A whole number as models send one: `5`, `5.0` or `"5"`.
fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse::<f64>().ok()))
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// An optional boolean argument (absent or `null`: false).
fn flag(map: &Map<String, Value>, field: &str) -> Result<bool, Failure> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(invalid(format!(
            "`{field}` must be true or false when given (got {})",
            show(other)
        ))),
    }
}

/// `supersedes`: ids of other facts (an array of strings, or one string), each following the
/// id rules, never the saved id itself.
fn supersedes(map: &Map<String, Value>, own_id: &str) -> Result<Vec<String>, Failure> {
    let raw: Vec<&Value> = match map.get("supersedes") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(one @ Value::String(_)) => vec![one],
        Some(Value::Array(items)) => {
            if items.len() > MAX_SUPERSEDES {
                return Err(Failure::new(
                    Code::TooLarge,
                    format!(
                        "`supersedes` must hold at most {MAX_SUPERSEDES} ids (got {})",
                        items.len()
                    ),
                ));
            }
            items.iter().collect()
        }
        Some(other) => {
            return Err(invalid(format!(
                "`supersedes` must be an array of fact ids (got {})",
                show(other)
            )));
        }
    };
    let mut out: Vec<String> = Vec::new();
    for (i, item) in raw.into_iter().enumerate() {
        let field = format!("supersedes[{i}]");
        let Value::String(s) = item else {
            return Err(invalid(format!(
                "`{field}` must be a fact id (got {})",
                show(item)
            )));
        };
        let id = check_id(&field, s)?;
        if id == own_id {
            return Err(invalid(format!(
                "`{field}` is the saved fact's own id {}; a save with the same id already \
                 replaces that fact",
                show(item)
            )));
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// The id rules (non-blank, at most [`MAX_ID_CHARS`], no control characters), for `field`.
pub fn check_id(field: &str, raw: &str) -> Result<String, Failure> {
    let id = raw.trim();
    if id.is_empty() {
        return Err(invalid(format!(
            "`{field}` must not be blank (got {})",
            show(&Value::from(raw))
        )));
    }
    check_len(field, id, MAX_ID_CHARS)?;
    if let Some(c) = id.chars().find(|c| c.is_control()) {
        return Err(invalid(format!(
            "`{field}` must not contain control characters (found U+{:04X} in {})",
            c as u32,
            show(&Value::from(id))
        )));
    }
    Ok(id.to_owned())
}

/// The known key closest to `key`: an alias (`text` → `statement`, …), else the family's shared
/// suggestion ([`names::did_you_mean`]).
pub fn did_you_mean(key: &str, known: &[&'static str]) -> Option<&'static str> {
    let lower = key.trim().to_lowercase();
    if let Some((_, to)) = ALIASES.iter().find(|(from, _)| *from == lower) {
        return Some(to);
    }
    names::did_you_mean(key, known.iter().copied())
}

fn invalid(message: String) -> Failure {
    Failure::new(Code::Invalid, message)
}

fn object<'a>(args: &'a Value, tool: &str) -> Result<&'a Map<String, Value>, Failure> {
    args.as_object().ok_or_else(|| {
        invalid(format!(
            "{tool} takes an object of named arguments (got {})",
            show(args)
        ))
    })
}

fn unknown_keys(map: &Map<String, Value>, known: &[&'static str]) -> Result<(), Failure> {
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let hint = match did_you_mean(key, known) {
                Some(k) => format!("; did you mean `{k}`?"),
                None => ".".to_owned(),
            };
            return Err(invalid(format!(
                "unknown argument `{}`{hint} The arguments are: {}.",
                ::text::clip(key, 40),
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

fn check_len(field: &str, text: &str, max: usize) -> Result<(), Failure> {
    let n = text.chars().count();
    if n > max {
        return Err(Failure::new(
            Code::TooLarge,
            format!(
                "`{field}` must be at most {max} characters (got {n}: {})",
                ::text::clip(text, 40)
            ),
        ));
    }
    Ok(())
}

fn required_string(map: &Map<String, Value>, field: &str, max: usize) -> Result<String, Failure> {
    match map.get(field) {
        None | Some(Value::Null) => Err(invalid(format!(
            "`{field}` is required (a non-empty string)"
        ))),
        Some(Value::String(s)) if s.trim().is_empty() => Err(invalid(format!(
            "`{field}` must not be blank (got {})",
            show(&map[field])
        ))),
        Some(Value::String(s)) => {
            let s = s.trim();
            check_len(field, s, max)?;
            Ok(s.to_owned())
        }
        Some(other) => Err(invalid(format!(
            "`{field}` must be a string (got {})",
            show(other)
        ))),
    }
}

fn optional_string(
    map: &Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<String>, Failure> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            check_len(field, s, max)?;
            Ok(Some(s.to_owned()))
        }
        Some(other) => Err(invalid(format!(
            "`{field}` must be a string when given (got {})",
            show(other)
        ))),
    }
}

/// `value` may be a string, a number or a boolean; it is stored as text.
fn optional_scalar(map: &Map<String, Value>, field: &str, max: usize) -> Result<String, Failure> {
    match map.get(field) {
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Ok(v.to_string()),
        Some(v @ (Value::Array(_) | Value::Object(_))) => Err(invalid(format!(
            "`{field}` must be a string, number or boolean when given (got {})",
            show(v)
        ))),
        _ => Ok(optional_string(map, field, max)?.unwrap_or_default()),
    }
}

/// `tags`: an array of strings, or one string of comma-separated tags.
fn tags(map: &Map<String, Value>) -> Result<Vec<String>, Failure> {
    let raw: Vec<&str> = match map.get("tags") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => s.split(',').collect(),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.push(s.as_str()),
                    other => {
                        return Err(invalid(format!(
                            "`tags[{i}]` must be a string (got {})",
                            show(other)
                        )));
                    }
                }
            }
            out
        }
        Some(other) => {
            return Err(invalid(format!(
                "`tags` must be an array of strings, e.g. [\"network\"] (got {})",
                show(other)
            )));
        }
    };
    // Linear in the input: a set of lowered spellings, and a refusal as soon as the distinct
    // tags pass the cap (the count in the message is then a lower bound).
    let mut tags: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (i, tag) in raw.iter().enumerate() {
        let tag = tag.trim();
        if tag.is_empty() {
            continue;
        }
        check_len(&format!("tags[{i}]"), tag, MAX_TAG_CHARS)?;
        if seen.insert(tag.to_lowercase()) {
            if tags.len() == MAX_TAGS {
                return Err(Failure::new(
                    Code::TooLarge,
                    format!(
                        "`tags` must hold at most {MAX_TAGS} distinct tags (got more: tags[{i}] \
                         is number {})",
                        MAX_TAGS + 1
                    ),
                ));
            }
            tags.push(tag.to_owned());
        }
    }
    Ok(tags)
}
