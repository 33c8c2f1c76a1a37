//! The `resilient_fetch` tool input, `{ url, format?, start_index? }`, validated once into
//! [`ToolInput`].
//!
//! Shape and syntax only: the URL must be a string that the WHATWG parser (the same rules as
//! Node's `URL`) reads as an absolute `http:` or `https:` URL. Whether its host may be reached is
//! the business of [`crate::guard`], which the ladder asks when it starts, so that
//! `http://evil@127.0.0.1` is refused as loopback rather than as "has credentials".

use serde_json::Value;
use std::fmt;
use url::Url;

/// The longest `url` accepted, in bytes.
pub const MAX_URL_LEN: usize = 8192;

/// The input keys, in documentation order.
pub const KEYS: &[&str] = &["url", "format", "start_index"];

/// Spellings a model is likely to use for a key, mapped to the key.
const ALIASES: &[(&str, &str)] = &[
    ("uri", "url"),
    ("link", "url"),
    ("href", "url"),
    ("address", "url"),
    ("mode", "format"),
    ("output", "format"),
    ("fmt", "format"),
    ("startindex", "start_index"),
    ("start", "start_index"),
    ("offset", "start_index"),
    ("from", "start_index"),
];

/// The `format` spellings, in documentation order.
pub const FORMATS: &[&str] = &["text", "page", "raw"];

const FORMAT_RULE: &str = "must be \"text\", \"page\" or \"raw\"";

/// What the caller wants back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// HTML becomes the readable text of the page's main content; other text types pass
    /// through (the default).
    #[default]
    Text,
    /// HTML becomes the readable text of the whole page, navigation and footers included (what
    /// `text` gave before main-content extraction); other text types pass through.
    Page,
    /// The decoded body as served, HTML included.
    Raw,
}

impl Format {
    /// The input spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Page => "page",
            Self::Raw => "raw",
        }
    }
}

/// A validated tool input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInput {
    /// The parsed URL (scheme `http` or `https`, with a host).
    pub url: Url,
    /// The requested rendering.
    pub format: Format,
    /// Where the returned text starts in the whole text, in UTF-16 code units (0: the start).
    pub start_index: usize,
}

/// Why the tool input was refused: the field at fault, the rule it broke and the value it had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The field (`url`, `format`, an unknown key, or `input` for the whole object).
    pub field: String,
    /// The rule, as a phrase that completes "`<field>` …" (e.g. "must use http or https").
    pub rule: String,
    /// The offending value, rendered as short JSON (at most about 120 characters).
    pub value: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} (got {})", self.field, self.rule, self.value)
    }
}

impl std::error::Error for InputError {}

impl ToolInput {
    /// Validates the tool's JSON arguments.
    pub fn parse(input: &Value) -> Result<Self, InputError> {
        let Value::Object(map) = input else {
            return Err(error(
                "input",
                "must be an object like { \"url\": \"https://…\" }",
                input,
            ));
        };
        for (key, value) in map {
            if !KEYS.contains(&key.as_str()) {
                let rule = match suggest(key, KEYS, ALIASES) {
                    Some(known) => format!("is not an input key; did you mean {known}?"),
                    None => format!("is not an input key (known: {})", KEYS.join(", ")),
                };
                return Err(error(key, &rule, value));
            }
        }
        let url = match map.get("url") {
            None | Some(Value::Null) => {
                return Err(error("url", "is required", &Value::Null));
            }
            Some(value) => parse_url(value)?,
        };
        let format = match map.get("format") {
            None | Some(Value::Null) => Format::default(),
            Some(Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
                "text" => Format::Text,
                "raw" => Format::Raw,
                "page" => Format::Page,
                other => {
                    let rule = match suggest(other, FORMATS, &[("html", "raw"), ("full", "page")]) {
                        Some(known) => format!("{FORMAT_RULE}; did you mean {known}?"),
                        None => FORMAT_RULE.to_owned(),
                    };
                    return Err(error("format", &rule, &map["format"]));
                }
            },
            Some(other) => return Err(error("format", FORMAT_RULE, other)),
        };
        let start_index = match map.get("start_index") {
            None | Some(Value::Null) => 0,
            Some(value) => value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| {
                    error(
                        "start_index",
                        "must be a non-negative whole number: the character offset to read from (a previous answer's nextIndex)",
                        value,
                    )
                })?,
        };
        Ok(Self {
            url,
            format,
            start_index,
        })
    }
}

fn parse_url(value: &Value) -> Result<Url, InputError> {
    let Value::String(text) = value else {
        return Err(error("url", "must be a string", value));
    };
    if text.trim().is_empty() {
        return Err(error("url", "must not be empty", value));
    }
    if text.len() > MAX_URL_LEN {
        return Err(error(
            "url",
            &format!("must be at most {MAX_URL_LEN} bytes long"),
            value,
        ));
    }
    let url = match Url::parse(text) {
        Ok(url) => url,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            return Err(error(
                "url",
                "must be an absolute URL with a scheme, like https://example.org/",
                value,
            ));
        }
        Err(e) => return Err(error("url", &format!("must be a valid URL ({e})"), value)),
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(error("url", "must use http or https", value));
    }
    if url.host().is_none() {
        return Err(error("url", "must have a host", value));
    }
    Ok(url)
}

fn error(field: &str, rule: &str, value: &Value) -> InputError {
    InputError {
        field: field.to_owned(),
        rule: rule.to_owned(),
        value: render(value),
    }
}

/// Short JSON for a message: strings and scalars whole up to 120 characters, then cut with `…`.
pub(crate) fn render(value: &Value) -> String {
    const MAX: usize = 120;
    let text = value.to_string();
    if text.chars().count() <= MAX {
        return text;
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

/// The known word closest to `word`: an alias (compared up to case, `_` and `-`), else the
/// family's shared suggestion ([`names::did_you_mean`]).
pub(crate) fn suggest(
    word: &str,
    known: &[&'static str],
    aliases: &[(&str, &'static str)],
) -> Option<&'static str> {
    let folded: String = word
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect();
    if let Some(&(_, target)) = aliases.iter().find(|(alias, _)| *alias == folded) {
        return Some(target);
    }
    names::did_you_mean(word, known.iter().copied())
}
