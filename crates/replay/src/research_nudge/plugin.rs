//! The plugin as the replay runs it: one validated row config and its policy.

use config::research_nudge::RowConfig;
use policy::Policy;

/// The plugin name DSH shows, the producer of the reminders it injected into a session (`source.kind`, or `source.plugin` in logs of earlier versions).
pub const PLUGIN_NAME: &str = "research-nudge";

/// research-nudge under one validated row config.
pub struct Plugin {
    pub(crate) policy: Policy,
    pub(crate) row: RowConfig,
}

impl Plugin {
    /// The plugin for a validated row.
    pub fn new(row: RowConfig) -> Self {
        Self {
            policy: Policy::new(row.settings()),
            row,
        }
    }

    /// Whether the plugin counts anything at all.
    pub fn enabled(&self) -> bool {
        self.row.enabled
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The validated row config.
    pub fn row(&self) -> &RowConfig {
        &self.row
    }
}
