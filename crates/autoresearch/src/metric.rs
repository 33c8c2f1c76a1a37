//! Final-line JSON parsing: the evaluator's metric (`final-line-json-v1`) and the headless
//! proposer's report.
//!
//! The protocol: CRLF and CR become LF, trailing whitespace (blank lines included) is dropped, and
//! the last remaining line must be one JSON object. For the metric, that object must hold
//! `metric_name` exactly once, as a finite JSON number; other keys are allowed (evaluators often
//! print timings beside the score) and earlier lines are free-form logs. A duplicate key anywhere
//! in the final object is an error, because JSON parsers disagree on which value wins.
//!
//! Parsing always reads the raw bytes the evaluator wrote; nothing here ever sees a redacted view
//! (the original's bug 3: redaction could corrupt the metric line).

use crate::failure::Failure;
use crate::protocol::ProposalReport;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// Name of the metric protocol, recorded in provenance.
pub const METRIC_PROTOCOL: &str = "final-line-json-v1";

/// Why no metric (or report) could be read from an output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The output is empty or only whitespace.
    Empty,
    /// The output was truncated and its tail holds no complete final line.
    TruncatedLine,
    /// The final line is not a JSON object.
    NotAnObject(String),
    /// The final object repeats a key.
    DuplicateKey(String),
    /// The final object lacks the key.
    MissingKey(String),
    /// The key's value is not a finite JSON number (strings such as `"1"` are refused).
    NotANumber(String),
    /// The key's value is a JSON number past a 64-bit float's range (`1e309`): the key and the
    /// number as written.
    OutOfRange(String, String),
    /// A report field is missing or not a non-empty string.
    BadField(String),
}

impl ParseError {
    /// Stable machine code of the error, as stored in `failure_code`.
    pub fn code(&self) -> Failure {
        match self {
            ParseError::TruncatedLine => Failure::OutputLimit,
            _ => Failure::MetricProtocol,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "output is empty; the final line must be a JSON object"),
            ParseError::TruncatedLine => {
                write!(
                    f,
                    "output was truncated and no complete final line survived"
                )
            }
            ParseError::NotAnObject(line) => {
                write!(
                    f,
                    "final line is not a JSON object: {}",
                    text::clip_within(line, 200)
                )
            }
            ParseError::DuplicateKey(key) => write!(f, "final line repeats key {key:?}"),
            ParseError::MissingKey(key) => write!(f, "final line has no key {key:?}"),
            ParseError::NotANumber(key) => {
                write!(
                    f,
                    "key {key:?} on the final line is not a finite JSON number"
                )
            }
            ParseError::OutOfRange(key, number) => write!(
                f,
                "key {key:?} on the final line is a number out of range ({}: not a finite \
                 64-bit float)",
                text::clip_within(number, 40)
            ),
            ParseError::BadField(key) => {
                write!(
                    f,
                    "key {key:?} on the final line must be a non-empty string"
                )
            }
        }
    }
}

/// Reads the metric `metric_name` from an evaluator's stdout. `truncated` says the driver kept only
/// the tail of a longer output; then the final line counts only if a line break precedes it.
pub fn parse_metric(stdout: &str, metric_name: &str, truncated: bool) -> Result<f64, ParseError> {
    let entries = final_object(stdout, truncated)?;
    let raw = single(&entries, metric_name)?.get();
    let not_a_number = || ParseError::NotANumber(metric_name.to_owned());
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .ok_or_else(not_a_number),
        Ok(_) => Err(not_a_number()),
        // A value the object held that does not parse alone: only a number can be out of range.
        Err(_) if raw.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => Err(
            ParseError::OutOfRange(metric_name.to_owned(), raw.to_owned()),
        ),
        Err(_) => Err(not_a_number()),
    }
}

/// Reads a headless proposer's report `{hypothesis, summary}` from its stdout's final line.
pub fn parse_report(stdout: &str, truncated: bool) -> Result<ProposalReport, ParseError> {
    let entries = final_object(stdout, truncated)?;
    let field = |key: &str| match serde_json::from_str(single(&entries, key)?.get()) {
        Ok(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        _ => Err(ParseError::BadField(key.to_owned())),
    };
    Ok(ProposalReport {
        hypothesis: field("hypothesis")?,
        summary: field("summary")?,
    })
}

/// Why a proposal report is too long: as JSON (`{"hypothesis", "summary"}`) it has more than
/// `max` characters (the row's `maxHandoffChars`, which bounds the report as the original's did).
pub fn report_too_long(report: &ProposalReport, max: usize) -> Option<String> {
    let chars = serde_json::json!({"hypothesis": report.hypothesis, "summary": report.summary})
        .to_string()
        .chars()
        .count();
    (chars > max).then(|| {
        format!(
            "the report is {chars} characters as JSON and maxHandoffChars allows {max}: shorten hypothesis or summary"
        )
    })
}

fn single<'a>(
    entries: &'a [(String, Box<RawValue>)],
    key: &str,
) -> Result<&'a RawValue, ParseError> {
    entries
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| &**v)
        .ok_or_else(|| ParseError::MissingKey(key.to_owned()))
}

fn final_object(stdout: &str, truncated: bool) -> Result<Vec<(String, Box<RawValue>)>, ParseError> {
    let text = stdout.replace("\r\n", "\n").replace('\r', "\n");
    let text = text.trim_end();
    if text.trim().is_empty() {
        return Err(if truncated {
            ParseError::TruncatedLine
        } else {
            ParseError::Empty
        });
    }
    let line = match text.rfind('\n') {
        Some(i) => &text[i + 1..],
        None if truncated => return Err(ParseError::TruncatedLine),
        None => text,
    };
    let line = line.trim();
    let entries: Entries =
        serde_json::from_str(line).map_err(|_| ParseError::NotAnObject(line.to_owned()))?;
    let mut seen = std::collections::BTreeSet::new();
    for (key, _) in &entries.0 {
        if !seen.insert(key.as_str()) {
            return Err(ParseError::DuplicateKey(key.clone()));
        }
    }
    Ok(entries.0)
}

/// A JSON object's entries in order, duplicates kept (serde_json's `Map` would merge them), each
/// value as written: only the values read are parsed, so a number out of range elsewhere (an
/// evaluator's timing) is no error, and one under the key read is named as such.
struct Entries(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(Entries(out))
            }
        }
        deserializer.deserialize_map(V)
    }
}
