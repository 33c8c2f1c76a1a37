//! research-nudge's replay (cargo feature `research-nudge`): recorded tool events or a DSH session
//! log through exactly the policy the plugin runs, printed as JSON lines, a timeline or (`--html`)
//! one self-contained chart page.
//!
//! `events` is the replay event format and the [`Engine`](crate::Engine); `session_log` maps a
//! DSH session log's events to the policy and renders its timeline; `call` observes one recorded
//! call as the plugin does (the snooze tool's argument rules included); `chart` draws the page.

mod call;
pub mod chart;
mod corpus;
mod events;
mod plugin;
pub mod session_log;

pub use events::{CorpusReplay, Nudge, Replay};
pub use plugin::{PLUGIN_NAME, Plugin};
