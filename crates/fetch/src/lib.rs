//! The pure core of dsh-limit-break's `resilient_fetch`: a four-rung fetch ladder planned here and
//! performed by a JavaScript driver.
//!
//! The ladder is plain fetch (Node's `http`/`https`, address pinned) → curl over IPv6 → curl
//! over IPv4 → curl to a sibling host of the same service whose certificate still verifies
//! (Wikipedia → the Wikimedia REST API). It never disables certificate checks and never uses a
//! proxy.
//!
//! This crate:
//! - validates the tool input ([`ToolInput::parse`]);
//! - guards against server-side request forgery ([`guard`]): the URL's host however it is
//!   spelled, every address a name resolves to, every redirect hop, with cloud metadata closed
//!   even when `allow_private_network` opens private ranges;
//! - plans each step ([`Ladder`]): resolve a name, request with Node pinned to the vetted
//!   addresses, or run curl from an argument vector it builds ([`curl::argv`]), each with the
//!   time it may take; and judges every result the driver reports back;
//! - turns the answer into text ([`body::render`]: the page's main content by
//!   [`main_content::to_text`], or the whole page by [`html::to_text`]) within the caps, and builds
//!   the JSON result ([`Outcome::to_json`]);
//! - renders that result as the text the model reads ([`reply::render`]);
//! - defines the model-visible tool: name, description, schemas, timeout ([`tool::definition`]).
//!
//! **Architecture invariant:** no I/O and no clock. No network, no process, no file system, no
//! DNS: every fact (addresses, responses, curl's exit, the time as [`Millis`]) arrives as an
//! [`Input`] from the driver, and every action leaves as a [`Step`]. It knows nothing of WASM,
//! JavaScript objects, DSH or config files; the config crate builds [`Settings`], the wasm adapter
//! carries the JSON. It builds for `wasm32-unknown-unknown`.
//!
//! # The driver protocol
//!
//! 1. Parse the tool arguments with [`ToolInput::parse`]; on error return
//!    `Outcome::Failure(Failure::invalid_input(..)).to_json()`.
//! 2. Find out once whether curl is on PATH, then `Ladder::new(input, settings, curl, now)`. A
//!    refused URL (SSRF guard, credentials) is already [`Step::Done`]: no DNS query is made.
//! 3. Loop on [`Ladder::poll`], performing exactly the step it shows and answering with
//!    [`Ladder::handle`]`(id, input, now)`:
//!    - [`Step::Resolve`]: `dns.lookup(host, { all: true, verbatim: true })`, every address
//!      as [`Input::Resolved`] (the core judges them; one refused address refuses the name);
//!    - [`Step::Http`] (rung 1): `http(s).request` with `agent: false` and a `lookup` that
//!      answers with the step's vetted `addresses` only (the pin; global `fetch` cannot be
//!      pinned without undici), no redirect following, body read up to the cap, as
//!      [`Input::Response`] (a 3xx with its `Location` too: the core follows it);
//!    - [`Step::Curl`] (rungs 2 to 4): spawn `argv` without a shell (`--resolve` pins the
//!      address, `--max-redirs 0`), stdout read up to the cap, as [`Input::CurlExited`];
//!    - any I/O error is [`Input::Failed`] with Node's `err.code`; a step whose time ran out is
//!      [`Input::TimedOut`].
//!
//!    Each step carries its own time budget (`timeout_ms`); the core derives it from the
//!    per-rung timeout, an equal share of what is left of the overall deadline, and the time
//!    already spent on the rung. A redirect comes back as a new step for the next hop (a new
//!    [`Step::Resolve`] first when the host changes), checked like the first URL.
//! 4. On `exec.signal`, call [`Ladder::abort`]`(now)` and kill whatever is running.
//! 5. At [`Step::Done`], return [`Outcome::to_json`].
//!
//! The driver never branches on the ladder's state, never retries, and never judges an address.
//! Answering the wrong step, or with the wrong kind of input, is a [`DriverError`].
//!
//! # Size
//!
//! `url` is the one dependency beyond `serde_json`: WHATWG URL parsing, the rules Node's `URL`
//! follows, which is what makes `2130706433`, `0x7f.1` and `%31%32%37.0.0.1` parse as
//! `127.0.0.1` here exactly as they would in the driver. It brings `idna` with ICU4X
//! normalisation tables: in a `wasm32` release build (`opt-level = "s"`, LTO) `Url::parse` alone
//! costs about 218 KB (76 KB gzipped) over an empty module; a probe module exporting this
//! crate's ladder and renderer is about 367 KB (138 KB gzipped). The older `idna_adapter` 1.1
//! (unicode-rs tables) measured larger, about 345 KB for `Url::parse` alone.

mod about;
pub mod body;
pub mod curl;
pub mod guard;
pub mod html;
pub mod input;
pub mod ladder;
pub mod main_content;
pub mod outcome;
pub mod reply;
mod settings;
pub mod sibling;
pub mod target;
pub mod tool;

pub use input::{Format, InputError, ToolInput};
pub use ladder::{
    CurlCommand, CurlExit, DriverError, HttpRequest, HttpResponse, Input, Ladder, Resolve, Step,
    StepId, TransportError,
};
pub use outcome::{Failure, Outcome, Report, Rung, RungOutcome, RungRecord, Success};
pub use settings::{DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_TEXT_CHARS, Millis, Settings};
pub use target::{UrlProblem, check_redirect, check_url};

#[cfg(test)]
mod tests;
