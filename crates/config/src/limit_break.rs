//! The `limit-break` row: its serde type and every default, its validation rules and schema.
//!
//! The memory tools need only where the DSH home is (`dshHome`, empty: DSH's own rule, `$DSH_HOME`
//! then `~/.dsh`); the lock's numbers are the contract between every writer of the store, so they
//! are constants of `limit-break-memory`, not config.

use crate::{Field, Issue, Rule, validate_fields};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The row's id in a profile's `cordis.patch.yml`.
pub const ROW_ID: &str = "limit-break";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-limit-break";
/// Prefix of the one-line summary [`crate::describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "limit-break: invalid config: ";

/// The config of the `limit-break` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "limit-break row config")]
pub struct RowConfig {
    /// Register the four tools; `false` turns the plugin off.
    pub enabled: bool,
    /// The DSH home holding `memory/facts.json`, as DSH's own plugins take it (`~` expands).
    /// Empty: DSH's rule, `$DSH_HOME`, else `~/.dsh`.
    pub dsh_home: String,
}

impl Default for RowConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            dsh_home: String::new(),
        }
    }
}

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [Field; 2] = [("enabled", Rule::Flag), ("dshHome", Rule::AnyText)];

/// Validates a `limit-break` row config and builds it, or reports every problem found.
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    validate_fields(&FIELDS, value)
}

/// The JSON Schema (draft-07) of the row config.
pub fn json_schema() -> Value {
    crate::schema_of::<RowConfig>()
}

#[cfg(test)]
mod tests;
