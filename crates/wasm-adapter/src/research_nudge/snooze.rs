//! The `research_nudge_snooze` tool's definition and argument rules live in `research-nudge-policy`
//! (`policy::snooze`); this path keeps `snooze::…` working inside the adapter.

pub use policy::snooze::*;
