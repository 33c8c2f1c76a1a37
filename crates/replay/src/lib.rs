//! The family's replay engines, in pure Rust (no wasm-bindgen, no JS): what each plugin would
//! have done over a recorded input, one line in, its output lines out.
//!
//! [`Replay`] is the one driver every replay CLI shares: it numbers the lines, skips blank ones,
//! lets the first non-blank line decide the format of the whole input (a DSH session log, read by
//! `dsh-session-log`, or the plugin's own event format), keeps the event format's per-agent state
//! ([`Agents`]) and prefixes an event line's error with `line N: `. What an event means and what
//! is printed is each plugin's [`Engine`], behind a cargo feature of the plugin's name:
//! `research-nudge` (its policy, the timeline and the `--html` chart) and `pain-point-check` (its
//! gate and timeline). [`corpus`] replays a guard over a folder of runs and reports it per source
//! and label. `crates/wasm-adapter` only exposes them to JS.

pub mod corpus;
mod driver;

pub use driver::{Agents, DEFAULT_AGENT, Engine, Format, Replay};

#[cfg(feature = "pain-point-check")]
pub mod pain_point_check;
#[cfg(feature = "research-nudge")]
pub mod research_nudge;
