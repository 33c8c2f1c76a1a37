//! `resilient_fetch`'s binding: the sans-I/O [`Ladder`] of `limit-break-fetch` made drivable from
//! JavaScript (steps and inputs as JSON, payloads as bytes), and the core's text for a result.
//!
//! The driver (`lib/fetch.js`) loops: `poll()` returns the outstanding step as JSON; it performs
//! exactly that step (a DNS lookup, one pinned `http(s).request`, or curl spawned from the given
//! argument vector without a shell) and answers with `handle(stepId, inputJson, bytes, now)`,
//! where `bytes` carries the body or curl's stdout so no payload is ever JSON-escaped; on the
//! call's abort signal it calls `abort(now)` and kills what runs. At `done`, the step holds the
//! outcome, the tool's value. Times are the driver's monotonic milliseconds
//! (`performance.now()`).
//!
//! Steps, as JSON:
//! - `{ kind: "resolve", id, host, timeoutMs }`;
//! - `{ kind: "http", id, rung, url, tls, host, port, path, addresses: [{ address, family }],
//!   headers: { name: value }, timeoutMs, maxBodyBytes }`;
//! - `{ kind: "curl", id, rung, url, argv, timeoutMs, killAfterMs, maxStdoutBytes }`;
//! - `{ kind: "done", outcome }` (also `outcomeJson()` once done).
//!
//! Inputs, as JSON (with `bytes` where noted):
//! - `{ kind: "resolved", addresses: ["192.0.2.1", "2001:db8::1"] }`;
//! - `{ kind: "response", status, contentType?, location?, complete }` + the body bytes;
//! - `{ kind: "curl", exitCode (null when killed by a signal), complete, stderr }` + stdout;
//! - `{ kind: "failed", code, message }` (Node's `err.code`, `ENOENT` when curl cannot spawn);
//! - `{ kind: "timedOut" }`.
//!
//! A malformed input, an input for another step or one after the end is a driver bug and throws.

use super::Plugin;
use crate::millis;
use fetch::{
    CurlExit, Failure, HttpResponse, Input, Ladder, Outcome, Step, StepId, ToolInput,
    TransportError,
};
use serde_json::{Map, Value, json};
use std::net::IpAddr;
use wasm_bindgen::prelude::*;

enum State {
    Running(Box<Ladder>),
    /// The tool input did not validate: no step was ever planned.
    Refused(Outcome),
}

/// One `resilient_fetch` call.
#[wasm_bindgen(js_name = LimitBreakFetch)]
pub struct Fetch {
    state: State,
}

#[wasm_bindgen(js_class = LimitBreakFetch)]
impl Fetch {
    /// Starts a fetch of the tool arguments (JSON text) at `now_ms`; `curl` is whether the
    /// driver found curl on PATH. A refused input or URL is done at once: no DNS query is made.
    #[wasm_bindgen(constructor)]
    pub fn new(plugin: &Plugin, args_json: &str, curl: bool, now_ms: f64) -> Fetch {
        let args: Value = serde_json::from_str(args_json).unwrap_or(Value::Null);
        let state = match ToolInput::parse(&args) {
            Ok(input) => State::Running(Box::new(Ladder::new(
                input,
                plugin.row.fetch_settings(),
                curl,
                millis(now_ms),
            ))),
            Err(error) => State::Refused(Outcome::Failure(Failure::invalid_input(&error, curl))),
        };
        Fetch { state }
    }

    /// The outstanding step, as JSON (the same one until it is answered).
    pub fn poll(&self) -> String {
        match &self.state {
            State::Refused(outcome) => json!({ "kind": "done", "outcome": outcome.to_json() }),
            State::Running(ladder) => step_json(ladder.poll()),
        }
        .to_string()
    }

    /// Answers the outstanding step `step_id` with `input_json` (and `bytes` for a response's
    /// body or curl's stdout) at `now_ms`. Throws on driver misuse.
    pub fn handle(
        &mut self,
        step_id: f64,
        input_json: &str,
        bytes: Option<Vec<u8>>,
        now_ms: f64,
    ) -> Result<(), JsError> {
        let State::Running(ladder) = &mut self.state else {
            return Err(JsError::new("the fetch is already done"));
        };
        let input = input_of(input_json, bytes.unwrap_or_default())
            .map_err(|e| JsError::new(&format!("malformed input: {e}")))?;
        ladder
            .handle(StepId(step_id as u64), input, millis(now_ms))
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// The call was cancelled: end now (`fetch.aborted`). A no-op once done.
    pub fn abort(&mut self, now_ms: f64) {
        if let State::Running(ladder) = &mut self.state {
            ladder.abort(millis(now_ms));
        }
    }

    /// The outcome (the tool's value) as JSON text once done, else `undefined`.
    #[wasm_bindgen(js_name = outcomeJson)]
    pub fn outcome_json(&self) -> Option<String> {
        self.outcome().map(|v| v.to_string())
    }
}

impl Fetch {
    /// The outcome once done.
    pub fn outcome(&self) -> Option<Value> {
        match &self.state {
            State::Refused(outcome) => Some(outcome.to_json()),
            State::Running(ladder) => ladder.outcome().map(Outcome::to_json),
        }
    }
}

fn step_json(step: &Step) -> Value {
    match step {
        Step::Resolve(r) => json!({
            "kind": "resolve", "id": r.id.0, "host": r.host, "timeoutMs": r.timeout_ms,
        }),
        Step::Http(h) => {
            let headers: Map<String, Value> = h
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            let addresses: Vec<Value> = h
                .addresses
                .iter()
                .map(|a| json!({ "address": a.to_string(), "family": if a.is_ipv6() { 6 } else { 4 } }))
                .collect();
            json!({
                "kind": "http", "id": h.id.0, "rung": h.rung.name(), "url": h.url, "tls": h.tls,
                "host": h.host, "port": h.port, "path": h.path, "addresses": addresses,
                "headers": headers, "timeoutMs": h.timeout_ms, "maxBodyBytes": h.max_body_bytes,
            })
        }
        Step::Curl(c) => json!({
            "kind": "curl", "id": c.id.0, "rung": c.rung.name(), "url": c.url, "argv": c.argv,
            "timeoutMs": c.timeout_ms, "killAfterMs": c.kill_after_ms,
            "maxStdoutBytes": c.max_stdout_bytes,
        }),
        Step::Done(outcome) => json!({ "kind": "done", "outcome": outcome.to_json() }),
    }
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A driver input from its JSON and bytes.
pub fn input_of(input_json: &str, bytes: Vec<u8>) -> Result<Input, String> {
    let v: Value = serde_json::from_str(input_json).map_err(|e| e.to_string())?;
    let kind = text(&v, "kind").ok_or("no kind")?;
    Ok(match kind {
        "resolved" => {
            let list = v["addresses"].as_array().ok_or("addresses is not a list")?;
            let mut addresses = Vec::with_capacity(list.len());
            for a in list {
                let a = a.as_str().ok_or("an address is not a string")?;
                addresses.push(
                    a.parse::<IpAddr>()
                        .map_err(|_| format!("{a:?} is not an IP address"))?,
                );
            }
            Input::Resolved(addresses)
        }
        "response" => Input::Response(HttpResponse {
            status: v["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .ok_or("status is not a status code")?,
            content_type: text(&v, "contentType").map(str::to_owned),
            location: text(&v, "location").map(str::to_owned),
            body: bytes,
            complete: v["complete"].as_bool().ok_or("complete is not a boolean")?,
        }),
        "curl" => Input::CurlExited(CurlExit {
            exit_code: v["exitCode"].as_i64().and_then(|c| i32::try_from(c).ok()),
            stdout: bytes,
            stdout_complete: v["complete"].as_bool().ok_or("complete is not a boolean")?,
            stderr: text(&v, "stderr").unwrap_or_default().to_owned(),
        }),
        "failed" => Input::Failed(TransportError {
            code: text(&v, "code").unwrap_or_default().to_owned(),
            message: text(&v, "message").unwrap_or_default().to_owned(),
        }),
        "timedOut" => Input::TimedOut,
        other => return Err(format!("unknown kind {other:?}")),
    })
}

/// The text the model reads for a `resilient_fetch` value (JSON text of the tool's value), as
/// `limit-break-fetch` renders it, the page text framed with `nonce` (fresh random hex from the
/// driver for every answer); text that is not JSON comes back unchanged.
#[wasm_bindgen(js_name = renderFetchResult)]
pub fn render(value_json: &str, nonce: &str) -> String {
    match serde_json::from_str::<Value>(value_json) {
        Ok(v) => fetch::reply::render(&v, nonce),
        Err(_) => value_json.to_owned(),
    }
}

#[cfg(test)]
mod tests;
