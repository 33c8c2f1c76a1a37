//! The result of one `resilient_fetch` call and its JSON form.
//!
//! Success: `{ ok: true, url, finalUrl, status, contentType, text, truncated, bytes, totalChars,
//! startIndex, nextIndex, report }` (`nextIndex` is `null` when no text is left after `text`).
//! Failure: `{ ok: false, code, message, report }` (plus `field` and `rule` for
//! `fetch.invalid_input`). The report: `{ answered, curl, rungs, notes }`, where `answered` is the
//! rung name or `null`, `curl` is `"available"` or `"missing"`, each rung is
//! `{ rung, outcome, url?, status?, ms, error? }` and `notes` is a list of sentences.
//!
//! Every number is a non-negative integer and no field is ever `undefined`, NaN or `-0`, as the
//! host's lossless-JSON snapshot requires.

use crate::Millis;
use crate::input::InputError;
use serde_json::{Map, Value, json};

/// The four rungs, in ladder order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rung {
    /// Rung 1: Node's own HTTP client, address pinned.
    Fetch,
    /// Rung 2: curl over IPv6.
    CurlIpv6,
    /// Rung 3: curl over IPv4.
    CurlIpv4,
    /// Rung 4: curl to a sibling host of the same service.
    Sibling,
}

impl Rung {
    /// All rungs in order.
    pub const ALL: [Rung; 4] = [Rung::Fetch, Rung::CurlIpv6, Rung::CurlIpv4, Rung::Sibling];

    /// The report's name for the rung.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Fetch => "fetch",
            Self::CurlIpv6 => "curl-ipv6",
            Self::CurlIpv4 => "curl-ipv4",
            Self::Sibling => "sibling",
        }
    }
}

/// How a rung ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RungOutcome {
    /// It produced the answer (any HTTP status).
    Answered,
    /// A transport failure: no complete response; the ladder moved on.
    Failed,
    /// Not attempted; `error` says why.
    Skipped,
    /// Stopped by a rule (SSRF guard, redirect rules); the ladder stopped too.
    Refused,
}

impl RungOutcome {
    /// The report's name for the outcome.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
            Self::Refused => "refused",
        }
    }
}

/// One rung's line in the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RungRecord {
    /// Which rung.
    pub rung: Rung,
    /// How it ended.
    pub outcome: RungOutcome,
    /// The URL the rung started from (the sibling's for rung 4); `None` when skipped before one
    /// was known.
    pub url: Option<String>,
    /// The HTTP status of the answer, when there was one.
    pub status: Option<u16>,
    /// Time spent, from the rung's first step to its end.
    pub ms: Millis,
    /// What went wrong or why it was skipped.
    pub error: Option<String>,
}

/// Which rung answered, what every rung did, and notes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The rung that answered, if any.
    pub answered: Option<Rung>,
    /// Whether the driver found curl on PATH.
    pub curl_available: bool,
    /// One record per rung reached, in order.
    pub rungs: Vec<RungRecord>,
    /// Things the caller should know (curl missing, lossy decoding, sibling format, caps).
    pub notes: Vec<String>,
}

/// A fetch that produced an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Success {
    /// The requested URL, normalised.
    pub url: String,
    /// The URL that answered, after redirects (the sibling's on rung 4).
    pub final_url: String,
    /// Its HTTP status (any: a 404 is an answer).
    pub status: u16,
    /// Its `Content-Type`, as served.
    pub content_type: Option<String>,
    /// The body as text (see [`crate::body::render`]).
    pub text: String,
    /// A cap applied.
    pub truncated: bool,
    /// Body bytes read.
    pub bytes: usize,
    /// The whole text's length in UTF-16 code units (`text` is the part from `start_index`).
    pub total_chars: usize,
    /// Where `text` starts in the whole text.
    pub start_index: usize,
    /// The `start_index` of the next part, when the character cap left text after this one.
    pub next_index: Option<usize>,
    /// The ladder report.
    pub report: Report,
}

/// A fetch that ended without an answer, or refused to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `fetch.invalid_input`, `fetch.invalid_url`, `fetch.blocked`, `fetch.redirect_refused`,
    /// `fetch.too_many_redirects`, `fetch.unsupported_content`, `fetch.failed`, `fetch.timeout`
    /// or `fetch.aborted`.
    pub code: &'static str,
    /// One or two sentences for the model.
    pub message: String,
    /// For `fetch.invalid_input`: the field and the rule it broke.
    pub issue: Option<(String, String)>,
    /// The ladder report (empty rungs when the fetch never started).
    pub report: Report,
}

impl Failure {
    /// The failure for a tool input that did not validate.
    #[must_use]
    pub fn invalid_input(error: &InputError, curl_available: bool) -> Self {
        Self {
            code: "fetch.invalid_input",
            message: error.to_string(),
            issue: Some((error.field.clone(), error.rule.clone())),
            report: Report {
                curl_available,
                ..Report::default()
            },
        }
    }
}

/// How a fetch ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An answer.
    Success(Success),
    /// No answer.
    Failure(Failure),
}

impl Outcome {
    /// The report, whichever way it ended.
    #[must_use]
    pub fn report(&self) -> &Report {
        match self {
            Self::Success(success) => &success.report,
            Self::Failure(failure) => &failure.report,
        }
    }

    /// The tool result as JSON (field names in camelCase, as the JS side reads them).
    #[must_use]
    pub fn to_json(&self) -> Value {
        match self {
            Self::Success(s) => json!({
                "ok": true,
                "url": s.url,
                "finalUrl": s.final_url,
                "status": s.status,
                "contentType": s.content_type,
                "text": s.text,
                "truncated": s.truncated,
                "bytes": s.bytes,
                "totalChars": s.total_chars,
                "startIndex": s.start_index,
                "nextIndex": s.next_index,
                "report": report_json(&s.report),
            }),
            Self::Failure(f) => {
                let mut map = Map::new();
                map.insert("ok".into(), Value::Bool(false));
                map.insert("code".into(), Value::from(f.code));
                map.insert("message".into(), Value::from(f.message.clone()));
                if let Some((field, rule)) = &f.issue {
                    map.insert("field".into(), Value::from(field.clone()));
                    map.insert("rule".into(), Value::from(rule.clone()));
                }
                map.insert("report".into(), report_json(&f.report));
                Value::Object(map)
            }
        }
    }
}

fn report_json(report: &Report) -> Value {
    let rungs: Vec<Value> = report
        .rungs
        .iter()
        .map(|record| {
            let mut map = Map::new();
            map.insert("rung".into(), Value::from(record.rung.name()));
            map.insert("outcome".into(), Value::from(record.outcome.name()));
            if let Some(url) = &record.url {
                map.insert("url".into(), Value::from(url.clone()));
            }
            if let Some(status) = record.status {
                map.insert("status".into(), Value::from(status));
            }
            map.insert("ms".into(), Value::from(record.ms));
            if let Some(error) = &record.error {
                map.insert("error".into(), Value::from(error.clone()));
            }
            Value::Object(map)
        })
        .collect();
    json!({
        "answered": report.answered.map(Rung::name),
        "curl": if report.curl_available { "available" } else { "missing" },
        "rungs": rungs,
        "notes": report.notes,
    })
}
