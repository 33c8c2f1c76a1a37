//! The ladder: a sans-I/O state machine that plans one step at a time and judges what the
//! driver reports back.
//!
//! One step is outstanding at a time. [`Ladder::poll`] shows it; the driver performs it and
//! answers with [`Ladder::handle`] (the step's id, one [`Input`], the time); [`Ladder::abort`]
//! ends the fetch when the tool call's signal fires. The driver makes no decision of its own:
//! redirects, address choice, timeouts, which failure moves to which rung, all come from here.

use crate::body;
use crate::curl::{self, CurlRequest, Family};
use crate::guard;
use crate::input::{Format, ToolInput};
use crate::outcome::{Failure, Outcome, Report, Rung, RungOutcome, RungRecord, Success};
use crate::sibling::{SIBLING_NOTE, sibling_url};
use crate::target::{UrlProblem, check_redirect, check_url, host_name};
use crate::{Millis, Settings};
use std::fmt;
use std::net::IpAddr;
use url::Url;

/// Identifies a step; a result must carry the id of the step it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StepId(pub u64);

/// Extra time a driver gives curl past `--max-time` before it kills the child.
pub const CURL_KILL_GRACE_MS: Millis = 1_000;

/// What the driver must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Resolve a host name. Answer with [`Input::Resolved`], [`Input::Failed`] or
    /// [`Input::TimedOut`].
    Resolve(Resolve),
    /// One GET with Node's `http`/`https` module, pinned. Answer with [`Input::Response`],
    /// [`Input::Failed`] or [`Input::TimedOut`].
    Http(HttpRequest),
    /// Run curl. Answer with [`Input::CurlExited`], [`Input::Failed`] (it could not be
    /// spawned) or [`Input::TimedOut`].
    Curl(CurlCommand),
    /// Finished: return [`Outcome::to_json`] as the tool result. Emitted once and then repeated
    /// by `poll`; no input is accepted any more.
    Done(Outcome),
}

impl Step {
    /// The step's `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Resolve(_) => "resolve",
            Step::Http(_) => "http",
            Step::Curl(_) => "curl",
            Step::Done(_) => "done",
        }
    }

    /// The kinds of answer the step takes. The ladder refuses any other
    /// ([`DriverError::WrongInput`]), and limit-break's `packages/limit-break/wire/fetch.json` is
    /// generated from it (the WebAssembly binding's tests), so the JavaScript performers are
    /// checked against the same rule.
    pub fn answers(&self) -> &'static [&'static str] {
        match self {
            Step::Resolve(_) => &["resolved", "failed", "timedOut"],
            Step::Http(_) => &["response", "failed", "timedOut"],
            Step::Curl(_) => &["curl", "failed", "timedOut"],
            Step::Done(_) => &[],
        }
    }
}

impl Input {
    /// The answer's `kind` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Input::Resolved(_) => "resolved",
            Input::Response(_) => "response",
            Input::CurlExited(_) => "curl",
            Input::Failed(_) => "failed",
            Input::TimedOut => "timedOut",
        }
    }
}

/// Resolve `host`: `dns.lookup(host, { all: true, verbatim: true })`, raced against
/// `timeout_ms`. Report every address, in the resolver's order; never filter them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolve {
    /// The step id.
    pub id: StepId,
    /// A host name (never an IP literal).
    pub host: String,
    /// Give up after this long and answer [`Input::TimedOut`].
    pub timeout_ms: Millis,
}

/// One GET with `node:http` (`tls == false`) or `node:https` (`tls == true`):
/// `request({ hostname: host, port, path, method: "GET", headers, agent: false, lookup })`,
/// where `lookup` ignores the name and answers with `addresses` only (as a list of
/// `{ address, family }` when called with `options.all`, else the first one), so the connection
/// goes to an address the guard approved while SNI, the `Host` header and certificate checks
/// use the name. No redirect following, no decompression, no proxy. Read at most
/// `max_body_bytes` of the body; if more arrives, keep the first `max_body_bytes`, destroy the
/// request and answer `complete: false`. Abort at `timeout_ms` and answer [`Input::TimedOut`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// The step id.
    pub id: StepId,
    /// The rung (always [`Rung::Fetch`] today).
    pub rung: Rung,
    /// The full URL, for logs.
    pub url: String,
    /// `https` rather than `http`.
    pub tls: bool,
    /// The host name, or an IP address without brackets.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Path and query.
    pub path: String,
    /// The vetted addresses the connection may use (the pin).
    pub addresses: Vec<IpAddr>,
    /// Request headers, fixed (never model text).
    pub headers: Vec<(String, String)>,
    /// Whole-request budget.
    pub timeout_ms: Millis,
    /// Body bytes to read at most.
    pub max_body_bytes: usize,
}

/// Spawn `argv[0]` with `argv[1..]`, no shell. Read at most `max_stdout_bytes` of stdout (then
/// kill the child and answer `stdout_complete: false`), keep the last few KiB of stderr, kill
/// the child at `kill_after_ms` and answer [`Input::TimedOut`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurlCommand {
    /// The step id.
    pub id: StepId,
    /// The rung.
    pub rung: Rung,
    /// The URL curl fetches, for logs (it is also the last argument).
    pub url: String,
    /// The argument vector ([`crate::curl::argv`]).
    pub argv: Vec<String>,
    /// curl's own `--max-time`.
    pub timeout_ms: Millis,
    /// When the driver kills curl if it is still running.
    pub kill_after_ms: Millis,
    /// Stdout bytes to read at most (headers plus the body cap).
    pub max_stdout_bytes: usize,
}

/// A result the driver reports for the outstanding step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// The addresses a [`Step::Resolve`] found (possibly none).
    Resolved(Vec<IpAddr>),
    /// The response to a [`Step::Http`]: any status, redirects included.
    Response(HttpResponse),
    /// curl's exit for a [`Step::Curl`].
    CurlExited(CurlExit),
    /// The step's I/O failed: a Node error (`ENOTFOUND`, `ECONNRESET`,
    /// `CERT_HAS_EXPIRED`, …) or a spawn error (`ENOENT`).
    Failed(TransportError),
    /// The step's time budget ran out.
    TimedOut,
}

/// An HTTP response as Node's client saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The `Location` header.
    pub location: Option<String>,
    /// Body bytes, at most the step's `max_body_bytes`.
    pub body: Vec<u8>,
    /// False when the driver stopped reading at the cap.
    pub complete: bool,
}

/// How curl ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CurlExit {
    /// The exit code, `None` if killed by a signal.
    pub exit_code: Option<i32>,
    /// Stdout bytes, at most the step's `max_stdout_bytes`.
    pub stdout: Vec<u8>,
    /// False when the driver stopped reading at the cap (and killed curl).
    pub stdout_complete: bool,
    /// The tail of stderr.
    pub stderr: String,
}

/// An I/O error as the driver saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportError {
    /// The error code (`err.code` in Node), or a short word.
    pub code: String,
    /// The error message.
    pub message: String,
}

/// The driver broke the protocol: a bug in the driver, not a world failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverError {
    /// The id is not the outstanding step's.
    UnknownStep {
        /// The outstanding step's id (`None` once done).
        expected: Option<StepId>,
        /// The id received.
        got: StepId,
    },
    /// The input does not answer that kind of step.
    WrongInput {
        /// The step kind.
        step: &'static str,
        /// The input kind.
        input: &'static str,
    },
    /// The fetch is already done.
    Finished,
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownStep { expected, got } => {
                write!(
                    f,
                    "result for step {} but step {expected:?} is outstanding",
                    got.0
                )
            }
            Self::WrongInput { step, input } => write!(f, "{input} does not answer a {step} step"),
            Self::Finished => f.write_str("the fetch is already done"),
        }
    }
}

impl std::error::Error for DriverError {}

/// Node error codes and curl words that mean the certificate did not verify.
const CERT_CODES: &[&str] = &[
    "CERT_HAS_EXPIRED",
    "CERT_NOT_YET_VALID",
    "CERT_REVOKED",
    "CERT_UNTRUSTED",
    "CERT_REJECTED",
    "DEPTH_ZERO_SELF_SIGNED_CERT",
    "SELF_SIGNED_CERT_IN_CHAIN",
    "UNABLE_TO_GET_ISSUER_CERT",
    "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "HOSTNAME_MISMATCH",
    "certificate",
];

/// Resolver codes that will not change by asking again.
const DNS_PERMANENT: &[&str] = &["ENOTFOUND", "ENODATA", "EAI_NONAME", "EAI_NODATA", "dns"];

#[derive(Clone, Debug)]
struct Active {
    rung: Rung,
    start_url: Url,
    url: Url,
    redirects: u32,
    started: Millis,
    ends: Millis,
}

/// One fetch: the ladder's state between steps.
#[derive(Clone, Debug)]
pub struct Ladder {
    settings: Settings,
    format: Format,
    start_index: usize,
    url: Url,
    curl: bool,
    deadline: Millis,
    next_rung: usize,
    active: Option<Active>,
    dns: Vec<(String, Result<Vec<IpAddr>, String>)>,
    cert_failed: Vec<String>,
    report: Report,
    step: Step,
    next_id: u64,
}

impl Ladder {
    /// Starts a fetch at `now`. `curl_available` is the driver's finding (curl on PATH).
    /// A refused URL finishes at once: [`Ladder::poll`] is then [`Step::Done`].
    #[must_use]
    pub fn new(input: ToolInput, settings: Settings, curl_available: bool, now: Millis) -> Self {
        let mut report = Report {
            curl_available,
            ..Report::default()
        };
        if !curl_available {
            report
                .notes
                .push("curl is not on PATH, so only rung 1 (fetch) was tried".to_owned());
        }
        let deadline = now.saturating_add(settings.deadline_ms);
        let checked = check_url(&input.url, settings.allow_private_network);
        let mut ladder = Self {
            format: input.format,
            start_index: input.start_index,
            url: input.url,
            curl: curl_available,
            deadline,
            next_rung: 0,
            active: None,
            dns: Vec::new(),
            cert_failed: Vec::new(),
            report,
            step: Step::Resolve(Resolve {
                id: StepId(0),
                host: String::new(),
                timeout_ms: 0,
            }),
            next_id: 0,
            settings,
        };
        match checked {
            Ok(url) => {
                ladder.url = url;
                ladder.advance(now);
            }
            Err(problem) => ladder.finish_failure(problem.code(), problem.to_string()),
        }
        ladder
    }

    /// The outstanding step (the same one until it is answered).
    #[must_use]
    pub fn poll(&self) -> &Step {
        &self.step
    }

    /// The outcome, once done.
    #[must_use]
    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.step {
            Step::Done(outcome) => Some(outcome),
            _ => None,
        }
    }

    /// Reports the result of the outstanding step at `now` (monotonic milliseconds).
    pub fn handle(&mut self, id: StepId, input: Input, now: Millis) -> Result<(), DriverError> {
        let expected = match &self.step {
            Step::Done(_) => return Err(DriverError::Finished),
            Step::Resolve(step) => step.id,
            Step::Http(step) => step.id,
            Step::Curl(step) => step.id,
        };
        if id != expected {
            return Err(DriverError::UnknownStep {
                expected: Some(expected),
                got: id,
            });
        }
        let wrong = DriverError::WrongInput {
            step: self.step.kind(),
            input: input.kind(),
        };
        if !self.step.answers().contains(&input.kind()) {
            return Err(wrong);
        }
        match (&self.step, input) {
            (Step::Resolve(step), Input::Resolved(addresses)) => {
                let host = step.host.clone();
                self.on_resolved(&host, &addresses, now);
            }
            (Step::Resolve(step), Input::Failed(error)) => {
                let host = step.host.clone();
                if DNS_PERMANENT.contains(&error.code.as_str()) {
                    self.dns.push((host.clone(), Err(describe(&error))));
                }
                self.rung_failed(
                    now,
                    format!("DNS lookup of {host} failed: {}", describe(&error)),
                );
            }
            (Step::Resolve(step), Input::TimedOut) => {
                let message = format!("DNS lookup of {} timed out", step.host);
                self.rung_failed(now, message);
            }
            (Step::Http(_), Input::Response(response)) => self.on_response(response, now),
            (Step::Curl(_), Input::CurlExited(exit)) => self.on_curl_exit(exit, now),
            (Step::Http(_) | Step::Curl(_), Input::Failed(error)) => {
                self.on_transport_error(&error, now);
            }
            (Step::Http(step), Input::TimedOut) => {
                let message = format!("timed out after {} ms", step.timeout_ms);
                self.rung_failed(now, message);
            }
            (Step::Curl(step), Input::TimedOut) => {
                let message = format!("curl was killed after {} ms", step.kill_after_ms);
                self.rung_failed(now, message);
            }
            // Outside `Step::answers`: refused above.
            _ => return Err(wrong),
        }
        self.advance(now);
        Ok(())
    }

    /// The tool call was cancelled (`exec.signal`): stop now. A no-op once done.
    pub fn abort(&mut self, now: Millis) {
        if matches!(self.step, Step::Done(_)) {
            return;
        }
        if let Some(active) = self.active.take() {
            self.record(
                &active,
                RungOutcome::Failed,
                None,
                now,
                Some("aborted".to_owned()),
            );
        }
        self.finish_failure("fetch.aborted", "the tool call was cancelled".to_owned());
    }

    fn on_resolved(&mut self, host: &str, addresses: &[IpAddr], now: Millis) {
        if addresses.is_empty() {
            self.dns
                .push((host.to_owned(), Err("no addresses".to_owned())));
            self.rung_failed(now, format!("DNS lookup of {host} returned no addresses"));
            return;
        }
        match guard::judge_resolved(host, addresses, self.settings.allow_private_network) {
            Ok(vetted) => self.dns.push((host.to_owned(), Ok(vetted))),
            Err(blocked) => self.refuse(&UrlProblem::Blocked(blocked), now),
        }
    }

    fn on_response(&mut self, response: HttpResponse, now: Millis) {
        let HttpResponse {
            status,
            content_type,
            location,
            body,
            complete,
        } = response;
        self.on_answer(status, content_type, location, &body, complete, now);
    }

    fn on_curl_exit(&mut self, exit: CurlExit, now: Millis) {
        let printed = curl::parse_printed(&exit.stdout);
        let capped = !exit.stdout_complete;
        match (printed, exit.exit_code) {
            (Some(p), code) if code == Some(0) || capped => {
                let body = &exit.stdout[p.body_start..];
                self.on_answer(p.status, p.content_type, p.location, body, !capped, now);
            }
            (None, Some(0)) => {
                self.rung_failed(now, "curl exited 0 but printed no HTTP response".to_owned())
            }
            (printed, Some(code)) => {
                let (word, phrase) = curl::exit_meaning(code);
                if word == "certificate" {
                    self.note_cert_failure();
                }
                let partial = if printed.is_some() {
                    " after the headers arrived"
                } else {
                    ""
                };
                let stderr = exit.stderr.trim();
                let detail = if stderr.is_empty() {
                    String::new()
                } else {
                    format!(": {}", text::clip(stderr, 300))
                };
                self.rung_failed(
                    now,
                    format!("{word}: {phrase}{partial} (curl exit {code}){detail}"),
                );
            }
            (_, None) => self.rung_failed(now, "curl was killed before it finished".to_owned()),
        }
    }

    fn on_transport_error(&mut self, error: &TransportError, now: Millis) {
        if CERT_CODES.contains(&error.code.as_str()) {
            self.note_cert_failure();
        }
        if error.code == "ENOENT" && matches!(self.step, Step::Curl(_)) {
            self.curl = false;
            self.report
                .notes
                .push("curl could not be spawned (ENOENT); later curl rungs were skipped".into());
        }
        self.rung_failed(now, describe(error));
    }

    fn note_cert_failure(&mut self) {
        if let Some(active) = &self.active {
            let host = host_name(&active.url);
            if !self.cert_failed.contains(&host) {
                self.cert_failed.push(host);
            }
        }
    }

    fn on_answer(
        &mut self,
        status: u16,
        content_type: Option<String>,
        location: Option<String>,
        body: &[u8],
        complete: bool,
        now: Millis,
    ) {
        let Some(active) = self.active.as_mut() else {
            return;
        };
        if let (true, Some(location)) = (is_redirect(status), &location) {
            if active.redirects >= self.settings.max_redirects {
                let message = format!(
                    "stopped after {} redirects (the limit); the last one pointed to {}",
                    active.redirects,
                    text::clip(location, 200)
                );
                let active = active.clone();
                self.record(
                    &active,
                    RungOutcome::Refused,
                    Some(status),
                    now,
                    Some(message.clone()),
                );
                self.active = None;
                self.finish_failure("fetch.too_many_redirects", message);
                return;
            }
            match check_redirect(&active.url, location, self.settings.allow_private_network) {
                Ok(next) => {
                    active.url = next;
                    active.redirects += 1;
                }
                Err(problem) => self.refuse(&problem, now),
            }
            return;
        }
        let active = active.clone();
        let rendered = body::render(
            body,
            complete,
            content_type.as_deref(),
            self.format,
            self.start_index,
            self.settings.max_body_bytes,
            self.settings.max_text_chars,
        );
        self.record(&active, RungOutcome::Answered, Some(status), now, None);
        self.active = None;
        self.report.answered = Some(active.rung);
        if active.rung == Rung::Sibling {
            self.report.notes.push(SIBLING_NOTE.to_owned());
        }
        match rendered {
            Ok(rendered) => {
                self.report.notes.extend(rendered.notes);
                let success = Success {
                    url: self.url.to_string(),
                    final_url: active.url.to_string(),
                    status,
                    content_type,
                    text: rendered.text,
                    truncated: rendered.truncated,
                    bytes: rendered.bytes,
                    total_chars: rendered.total_chars,
                    start_index: rendered.start_index,
                    next_index: rendered.next_index,
                    report: std::mem::take(&mut self.report),
                };
                self.step = Step::Done(Outcome::Success(success));
            }
            Err(unsupported) => {
                let message = format!(
                    "{} answered HTTP {status} with {}, which is not text ({} bytes read)",
                    active.url,
                    unsupported
                        .content_type
                        .as_deref()
                        .unwrap_or("no content type"),
                    unsupported.bytes
                );
                self.finish_failure("fetch.unsupported_content", message);
            }
        }
    }

    /// A rule stopped the fetch: record the rung as refused and finish.
    fn refuse(&mut self, problem: &UrlProblem, now: Millis) {
        if let Some(active) = self.active.take() {
            self.record(
                &active,
                RungOutcome::Refused,
                None,
                now,
                Some(problem.to_string()),
            );
        }
        self.finish_failure(problem.code(), problem.to_string());
    }

    fn rung_failed(&mut self, now: Millis, error: String) {
        if let Some(active) = self.active.take() {
            self.record(&active, RungOutcome::Failed, None, now, Some(error));
        }
    }

    fn record(
        &mut self,
        active: &Active,
        outcome: RungOutcome,
        status: Option<u16>,
        now: Millis,
        error: Option<String>,
    ) {
        self.report.rungs.push(RungRecord {
            rung: active.rung,
            outcome,
            url: Some(active.start_url.to_string()),
            status,
            ms: now.saturating_sub(active.started),
            error,
        });
    }

    fn skip(&mut self, rung: Rung, url: Option<&Url>, why: String) {
        self.report.rungs.push(RungRecord {
            rung,
            outcome: RungOutcome::Skipped,
            url: url.map(Url::to_string),
            status: None,
            ms: 0,
            error: Some(why),
        });
    }

    fn finish_failure(&mut self, code: &'static str, message: String) {
        self.active = None;
        self.step = Step::Done(Outcome::Failure(Failure {
            code,
            message,
            issue: None,
            report: std::mem::take(&mut self.report),
        }));
    }

    fn fresh_id(&mut self) -> StepId {
        self.next_id += 1;
        StepId(self.next_id)
    }

    /// Where `rung` would start, or why it cannot run.
    fn rung_start(&self, rung: Rung) -> Result<Url, String> {
        let host = host_name(&self.url);
        match rung {
            Rung::Fetch => Ok(self.url.clone()),
            Rung::CurlIpv6 | Rung::CurlIpv4 => {
                if !self.curl {
                    return Err("curl is not on PATH".to_owned());
                }
                if self.cert_failed.contains(&host) {
                    return Err(format!(
                        "the certificate of {host} failed verification on an earlier rung"
                    ));
                }
                if let Some((_, Err(error))) = self.dns.iter().find(|(h, _)| *h == host) {
                    return Err(format!("DNS lookup of {host} failed: {error}"));
                }
                Ok(self.url.clone())
            }
            Rung::Sibling => {
                if !self.curl {
                    return Err("curl is not on PATH".to_owned());
                }
                let sibling = sibling_url(&self.url)
                    .ok_or_else(|| "no sibling host for this URL".to_owned())?;
                check_url(&sibling, self.settings.allow_private_network).map_err(|p| p.to_string())
            }
        }
    }

    /// Plans the next step, recording skipped rungs on the way, until there is one to perform
    /// or the fetch is done.
    fn advance(&mut self, now: Millis) {
        loop {
            if matches!(self.step, Step::Done(_)) {
                return;
            }
            if now >= self.deadline {
                if let Some(active) = self.active.take() {
                    self.record(
                        &active,
                        RungOutcome::Failed,
                        None,
                        now,
                        Some("the overall deadline passed".to_owned()),
                    );
                }
                for &rung in &Rung::ALL[self.next_rung..] {
                    self.skip(rung, None, "the overall deadline passed".to_owned());
                }
                self.next_rung = Rung::ALL.len();
                let message = format!(
                    "no rung answered within the overall deadline of {} ms",
                    self.settings.deadline_ms
                );
                self.finish_failure("fetch.timeout", message);
                return;
            }
            let Some(active) = self.active.clone() else {
                if self.next_rung >= Rung::ALL.len() {
                    let summary = self
                        .report
                        .rungs
                        .iter()
                        .map(|r| {
                            format!(
                                "{} {} ({})",
                                r.rung.name(),
                                r.outcome.name(),
                                r.error.as_deref().unwrap_or("")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    self.finish_failure("fetch.failed", format!("no rung answered: {summary}"));
                    return;
                }
                let rung = Rung::ALL[self.next_rung];
                self.next_rung += 1;
                match self.rung_start(rung) {
                    Err(why) => {
                        let url = (rung != Rung::Sibling).then(|| self.url.clone());
                        self.skip(rung, url.as_ref(), why);
                    }
                    Ok(url) => {
                        let budget = self.rung_budget(now);
                        self.active = Some(Active {
                            rung,
                            start_url: url.clone(),
                            url,
                            redirects: 0,
                            started: now,
                            ends: now.saturating_add(budget),
                        });
                    }
                }
                continue;
            };
            if now >= active.ends {
                let message = format!(
                    "the rung's time budget ran out after {} redirects",
                    active.redirects
                );
                self.rung_failed(now, message);
                continue;
            }
            let remaining = active.ends - now;
            let host = host_name(&active.url);
            let addresses = match active.url.host() {
                Some(url::Host::Ipv4(v4)) => vec![IpAddr::V4(v4)],
                Some(url::Host::Ipv6(v6)) => vec![IpAddr::V6(v6)],
                _ => match self.dns.iter().find(|(h, _)| *h == host) {
                    None => {
                        let id = self.fresh_id();
                        self.step = Step::Resolve(Resolve {
                            id,
                            host,
                            timeout_ms: remaining,
                        });
                        return;
                    }
                    Some((_, Err(error))) => {
                        let message = format!("DNS lookup of {host} failed: {error}");
                        self.rung_failed(now, message);
                        continue;
                    }
                    Some((_, Ok(addresses))) => addresses.clone(),
                },
            };
            let chosen: Vec<IpAddr> = match active.rung {
                Rung::Fetch => addresses,
                Rung::CurlIpv6 => addresses
                    .into_iter()
                    .filter(IpAddr::is_ipv6)
                    .take(1)
                    .collect(),
                Rung::CurlIpv4 => addresses
                    .into_iter()
                    .filter(IpAddr::is_ipv4)
                    .take(1)
                    .collect(),
                Rung::Sibling => addresses.into_iter().take(1).collect(),
            };
            if chosen.is_empty() {
                let family = if active.rung == Rung::CurlIpv6 {
                    "IPv6"
                } else {
                    "IPv4"
                };
                let why = format!("{host} has no {family} address");
                if active.redirects == 0 {
                    self.active = None;
                    self.skip(active.rung, Some(&active.start_url), why);
                } else {
                    self.rung_failed(now, why);
                }
                continue;
            }
            let id = self.fresh_id();
            self.step = if active.rung == Rung::Fetch {
                Step::Http(self.http_step(id, &active.url, chosen, remaining))
            } else {
                let family = match active.rung {
                    Rung::CurlIpv6 => Family::V6,
                    Rung::CurlIpv4 => Family::V4,
                    _ => Family::Any,
                };
                let pin = match active.url.host() {
                    Some(url::Host::Domain(_)) => chosen.first().copied(),
                    _ => None,
                };
                let argv = curl::argv(&CurlRequest {
                    url: &active.url,
                    family,
                    pin,
                    timeout_ms: remaining,
                    connect_timeout_ms: self.settings.connect_timeout_ms,
                    user_agent: &self.settings.user_agent,
                });
                Step::Curl(CurlCommand {
                    id,
                    rung: active.rung,
                    url: active.url.to_string(),
                    argv,
                    timeout_ms: remaining,
                    kill_after_ms: remaining.saturating_add(CURL_KILL_GRACE_MS),
                    max_stdout_bytes: curl::stdout_cap(self.settings.max_body_bytes),
                })
            };
            return;
        }
    }

    /// The time a rung may take: the per-rung timeout, but no more than an equal share of what
    /// is left of the overall deadline among this rung and the later rungs that can run.
    fn rung_budget(&self, now: Millis) -> Millis {
        let remaining = self.deadline.saturating_sub(now);
        let runnable = 1 + Rung::ALL[self.next_rung..]
            .iter()
            .filter(|&&rung| self.rung_start(rung).is_ok())
            .count() as u64;
        self.settings
            .rung_timeout_ms
            .min(remaining / runnable)
            .max(1)
    }

    fn http_step(
        &self,
        id: StepId,
        url: &Url,
        addresses: Vec<IpAddr>,
        remaining: Millis,
    ) -> HttpRequest {
        let mut path = url.path().to_owned();
        if let Some(query) = url.query() {
            path.push('?');
            path.push_str(query);
        }
        HttpRequest {
            id,
            rung: Rung::Fetch,
            url: url.to_string(),
            tls: url.scheme() == "https",
            host: host_name(url),
            port: url.port_or_known_default().unwrap_or(80),
            path,
            addresses,
            headers: vec![
                ("User-Agent".to_owned(), self.settings.user_agent.clone()),
                ("Accept".to_owned(), curl::ACCEPT.to_owned()),
                ("Accept-Encoding".to_owned(), "identity".to_owned()),
            ],
            timeout_ms: remaining,
            max_body_bytes: self.settings.max_body_bytes,
        }
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn describe(error: &TransportError) -> String {
    let message = text::clip(error.message.trim(), 300);
    match (error.code.is_empty(), message.is_empty()) {
        (false, false) => format!("{}: {message}", error.code),
        (false, true) => error.code.clone(),
        (true, _) => message,
    }
}
