//! How a run ends: the cancel asked for, the ending under way, the warnings and the report.

use crate::protocol::{Blocker, RunResult, Status};

/// An ending: its status, blocker, and whether the run's processes are proven gone.
pub(super) type Outcome = (Status, Option<Blocker>, bool);

/// How the run ends: a cancel asked for, the ending under way, and the report.
#[derive(Default)]
pub(super) struct Ending {
    /// The reason of a cancel (the driver's, an abandon's, or an ending's in a generation).
    pub(super) cancel: Option<String>,
    /// The ending being written; set once, first reason wins.
    pub(super) finishing: Option<Outcome>,
    /// An ending that waits for the generation's other effects to drain (interrupted first).
    pub(super) stopping: Option<Outcome>,
    /// Notes for the result.
    pub(super) warnings: Vec<String>,
    /// The reported result.
    pub(super) done: Option<Box<RunResult>>,
}
