//! JSON Schema for a whole `cordis.patch.yml` layer, for editors: a list of patch entries in which
//! the research-nudge row's `config` is checked against the row-config schema and every other row
//! is left open.

use crate::json_schema;
use serde_json::{Value, json};

/// The bundle row's id.
pub const ROW_ID: &str = "research-nudge";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-research-nudge";

/// The patch-file schema (draft-07, like the row schema it embeds).
pub fn patch_file_schema() -> Value {
    let mut row_config = json_schema();
    let draft = row_config
        .as_object_mut()
        .and_then(|schema| {
            schema.remove("title");
            schema.remove("$schema")
        })
        .unwrap_or_else(|| json!("http://json-schema.org/draft-07/schema#"));
    // A patch with `id: research-nudge` (or an inserted row with that id) gets its config checked.
    let our_config = json!({
        "if": { "properties": { "id": { "const": ROW_ID } }, "required": ["id"] },
        "then": { "properties": { "config": { "$ref": "#/definitions/researchNudgeConfig" } } },
    });
    let common = json!({
        "id": { "type": "string", "description": "Stable row id; a patch with an id targets that row." },
        "name": { "type": "string", "description": "Module specifier of the plugin (in a patch: a guard that must match the row)." },
        "config": { "description": "The row's config; a patch replaces it whole (omitted keys take the plugin's defaults)." },
        "group": { "type": "boolean" },
        "disabled": {
            "description": "Disable the row (`true`) or a `!!js` expression DSH evaluates at every mount decision.",
            "type": ["boolean", "string"],
        },
        "inject": { "description": "Extra services the row waits for." },
    });
    json!({
        "$schema": draft,
        "title": "cordis.patch.yml",
        "description": "A DeepSeek Harness patch layer: a list of patch entries applied in order.",
        "type": "array",
        "items": { "$ref": "#/definitions/patch" },
        "definitions": {
            "researchNudgeConfig": row_config,
            "row": {
                "type": "object",
                "description": "A row to insert.",
                "required": ["id", "name"],
                "properties": common,
                "allOf": [our_config],
            },
            "patch": {
                "type": "object",
                "description": "`insert` rows, or patch the row named by `id` (each key replaces the row's key whole).",
                "properties": {
                    "insert": { "type": "array", "items": { "$ref": "#/definitions/row" } },
                    "id": common["id"],
                    "name": common["name"],
                    "config": common["config"],
                    "group": common["group"],
                    "disabled": common["disabled"],
                    "inject": common["inject"],
                },
                "allOf": [our_config],
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeds_the_row_schema_for_our_row_only() {
        let schema = patch_file_schema();
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
        assert_eq!(schema["type"], "array");
        let embedded = &schema["definitions"]["researchNudgeConfig"];
        assert_eq!(embedded["additionalProperties"], false);
        assert_eq!(embedded["properties"]["debtThreshold"]["minimum"], 1);
        assert!(embedded.get("$schema").is_none());
        for kind in ["row", "patch"] {
            let rule = &schema["definitions"][kind]["allOf"][0];
            assert_eq!(rule["if"]["properties"]["id"]["const"], ROW_ID);
            assert_eq!(
                rule["then"]["properties"]["config"]["$ref"],
                "#/definitions/researchNudgeConfig"
            );
        }
    }
}
