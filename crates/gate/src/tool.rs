//! What the gate reads of a tool besides its name ([`ToolFacts`]): whether the allowlist holds
//! it and whether it is `job_output`, both by its canonical spelling. A `&str` works them out on
//! every call; a [`Tool`] works them out once, for a driver that sees the same few names over and
//! over.

use crate::settings::Settings;

/// A tool as the gate reads it.
pub trait ToolFacts {
    /// The name the model called it by.
    fn name(&self) -> &str;
    /// Whether `settings`' allowlist holds it.
    fn is_allowlisted(&self, settings: &Settings) -> bool;
    /// Whether it is `job_output` (by canonical spelling).
    fn is_job_output(&self) -> bool;
}

impl ToolFacts for str {
    fn name(&self) -> &str {
        self
    }

    fn is_allowlisted(&self, settings: &Settings) -> bool {
        settings.is_allowlisted(self)
    }

    fn is_job_output(&self) -> bool {
        names::with_normalized(self, |name| name == "job_output")
    }
}

/// A tool name with its facts worked out once, against the settings it was made with: pass it
/// only with those.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    name: String,
    allowlisted: bool,
    job_output: bool,
}

impl Tool {
    /// The tool `name` under `settings`.
    pub fn new(settings: &Settings, name: String) -> Self {
        Self {
            allowlisted: settings.is_allowlisted(&name),
            job_output: name.is_job_output(),
            name,
        }
    }
}

impl ToolFacts for Tool {
    fn name(&self) -> &str {
        &self.name
    }

    fn is_allowlisted(&self, _: &Settings) -> bool {
        self.allowlisted
    }

    fn is_job_output(&self) -> bool {
        self.job_output
    }
}
