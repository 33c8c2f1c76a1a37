//! The Cordis config toolkit of the DSH plugin family, and every row's config.
//!
//! DSH mounts each plugin from a row of a profile's `cordis.patch.yml` and replaces the row's
//! `config` whole, so every omitted key takes its default and a missing or `null` config means all
//! defaults. The toolkit ([`validate_fields`], [`Rule`], [`Issue`], [`describe`], [`schema_of`],
//! re-exported here from a module that names no row, and [`did_you_mean`] from `names`) turns a
//! row's JSON into its serde type while collecting every problem with a message that names the
//! path, the rule and the value, and suggests the closest key for an unknown one. Each row lives in
//! its own module ([`research_nudge`], …) with its serde type (the one source of truth for its
//! defaults), its rules and its JSON Schema; the type implements [`Config`], so [`parse`] (and
//! [`load`], its one-line message) validates a row's JSON text once into the row and its core's
//! settings. [`ROWS`] lists them for the generated patch files and the patch-file schema
//! ([`patch_file_schema`]).
//!
//! It must not know anything of WASM, JavaScript or DSH internals: it only knows the rows' JSON
//! shapes. The one concession to JavaScript callers is documented on [`validate_fields`]: values
//! that JSON cannot carry (`NaN`, `Infinity`, `undefined`, functions, bigints) arrive as the
//! sentinel object `{"\u0000js": "<text>"}`, are rejected like any other wrong value and are shown
//! as their bare text in messages.

pub mod autoresearch;
pub mod limit_break;
pub mod pain_point_check;
mod patch_schema;
pub mod research_nudge;
mod toolkit;
pub use names::did_you_mean;
pub use patch_schema::{EDITOR_CUSTOM_TAG, JS_EXPR_KEY, patch_file_schema};
pub use toolkit::{
    Config, Field, Issue, PathSegment, Rule, describe, load, parse, render, schema_of,
    validate_fields,
};

use serde::Serialize;
use serde_json::Value;

/// One row of the family: what the generated patch files and the patch-file schema need.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The row id (`- id: …`).
    pub id: &'static str,
    /// The npm package the row mounts (`name: …`).
    pub package: &'static str,
    /// The row config with every default, as JSON.
    pub defaults: fn() -> Value,
    /// The row config's JSON Schema.
    pub schema: fn() -> Value,
}

/// Every row of the family, in mount order.
pub const ROWS: &[Row] = &[
    Row {
        id: research_nudge::ROW_ID,
        package: research_nudge::PACKAGE_NAME,
        defaults: || defaults_of::<research_nudge::RowConfig>(),
        schema: research_nudge::json_schema,
    },
    Row {
        id: pain_point_check::ROW_ID,
        package: pain_point_check::PACKAGE_NAME,
        defaults: || defaults_of::<pain_point_check::RowConfig>(),
        schema: pain_point_check::json_schema,
    },
    Row {
        id: autoresearch::ROW_ID,
        package: autoresearch::PACKAGE_NAME,
        defaults: || defaults_of::<autoresearch::RowConfig>(),
        schema: autoresearch::json_schema,
    },
    Row {
        id: limit_break::ROW_ID,
        package: limit_break::PACKAGE_NAME,
        defaults: || defaults_of::<limit_break::RowConfig>(),
        schema: limit_break::json_schema,
    },
];

/// The row whose id is `id`.
pub fn row(id: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.id == id)
}

fn defaults_of<T: Default + Serialize>() -> Value {
    serde_json::to_value(T::default()).unwrap_or(Value::Null)
}

// The core's test fixture, checked against the defaults here, names the crate so.
#[cfg(all(test, feature = "autoresearch"))]
extern crate autoresearch as autoresearch_core;
