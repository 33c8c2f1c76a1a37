//! JSON Schema for a whole `cordis.patch.yml` layer, for editors and `cargo xtask check-patch`: a
//! list of patch entries in which the `config` of each of the family's rows ([`crate::ROWS`]) is
//! checked against that row's schema and every other row is left open.
//!
//! # `!!js` values
//!
//! DSH parses patch files with js-yaml's JSON schema plus one scalar tag, `!!js`, which it
//! constructs as the object `{"__jsExpr": "<source>"}`; the Loader evaluates such objects anywhere
//! inside a row's `config` and in `disabled`. This schema describes that parsed value, so every
//! place DSH evaluates expressions accepts exactly the object DSH builds, through
//! `if: {type: object, required: [__jsExpr]}` / `then: jsExpr` / `else: <the plain rule>`:
//!
//! - a plain value never has that shape, so it meets the unchanged plain rule (an integer with its
//!   bounds, a boolean, …) and gets that rule's message;
//! - `cargo xtask check-patch` turns `!!js <source>` into `{"__jsExpr": "<source>"}` as DSH does;
//! - yaml-language-server (1.24 or newer) with `yaml.customTags` set to
//!   `["tag:yaml.org,2002:js scalar:object"]` types a tagged scalar as `object` for validation
//!   while keeping it a string node, so `type: object` matches and the object keywords
//!   (`required`, `additionalProperties`) are not applied to it. The entry must spell the full tag
//!   name: the server expands `!!js` to `tag:yaml.org,2002:js` before it looks for a custom tag,
//!   so an entry written `!!js …` never matches (the tag stays "Unresolved"). Without a return
//!   type the tagged scalar validates as a string (its source text).
//!
//! A string alternative would be the other way to admit `!!js` in an editor, since the language
//! server otherwise sees the tagged scalar as a string; it would also admit every plain string
//! (`debtThreshold: "20"`), which the tag cannot be told apart from. Values of other rows, and
//! fields DSH never evaluates (`id`, `name`, `insert`, …), keep their plain rules.

use crate::ROWS;
use serde_json::{Map, Value, json};

/// The key of the object DSH's YAML loader builds for a `!!js` scalar.
pub const JS_EXPR_KEY: &str = "__jsExpr";
/// The `yaml.customTags` entry that makes yaml-language-server validate `!!js` like DSH (the full
/// name of `!!js`, which is what the server matches custom tags against).
pub const EDITOR_CUSTOM_TAG: &str = "tag:yaml.org,2002:js scalar:object";

const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";
const JS_EXPR_REF: &str = "#/definitions/jsExpr";

/// The patch-file schema (draft-07, like the row schema it embeds).
pub fn patch_file_schema() -> Value {
    let common = [
        (
            "id",
            json!({
                "type": "string",
                "description": "Stable row id. A patch with an `id` (and no `insert`) replaces that row's keys, each key whole.",
            }),
        ),
        (
            "name",
            json!({
                "type": "string",
                "description": "Module specifier of the plugin (a package name or a path). In a patch it is a guard: a mismatch skips the patch.",
            }),
        ),
        (
            "config",
            json!({
                "description": "The row's config. A patch replaces it whole, never merged; omitted keys take the plugin's defaults. `!!js` values are evaluated at mount.",
            }),
        ),
        (
            "group",
            json!({ "type": ["boolean", "null"], "description": "The row is a group whose `config` is a list of rows." }),
        ),
        (
            "disabled",
            with_js(json!({
                "description": "`true` disables the row (rows cannot be removed). A `!!js` expression is evaluated at every mount decision.",
                "type": ["boolean", "null"],
            })),
        ),
        (
            "inject",
            json!({ "description": "Services the row waits for." }),
        ),
    ];
    let row_properties: Map<String, Value> = common
        .iter()
        .map(|(key, schema)| ((*key).to_owned(), schema.clone()))
        .collect();
    let mut patch_properties = Map::new();
    patch_properties.insert(
        "insert".to_owned(),
        json!({
            "type": "array",
            "items": { "$ref": "#/definitions/row" },
            "description": "Rows to append: at the top level, or into the group named by `id`.",
        }),
    );
    patch_properties.extend(row_properties.clone());
    for key in ["intercept", "isolate"] {
        patch_properties.insert(key.to_owned(), json!({}));
    }

    // A row or patch with one of our ids gets its config checked against that row's schema.
    let mut definitions = Map::new();
    let mut our_configs = Vec::new();
    for row in ROWS {
        let name = format!("{}Config", camel(row.id));
        our_configs.push(json!({
            "if": { "properties": { "id": { "const": row.id } }, "required": ["id"] },
            "then": { "properties": { "config": { "$ref": format!("#/definitions/{name}") } } },
        }));
        definitions.insert(name, patch_form_of_row_config((row.schema)()));
    }
    let row_rules = our_configs.clone();
    let mut patch_rules = our_configs;
    // DSH skips a non-insert patch without an id (with a warning).
    patch_rules.push(json!({
        "if": { "not": { "required": ["insert"] } },
        "then": { "required": ["id"] },
    }));

    let editors =
        format!("set yaml-language-server's `yaml.customTags` to [\"{EDITOR_CUSTOM_TAG}\"]");
    definitions.insert(
        "jsExpr".to_owned(),
        json!({
            "title": "!!js expression",
            "description": format!("A `!!js` scalar, which DSH parses to this object and evaluates at mount. Editors: {editors}."),
            "type": "object",
            "required": [JS_EXPR_KEY],
            "properties": { JS_EXPR_KEY: { "type": "string" } },
            "additionalProperties": false,
        }),
    );
    definitions.insert(
        "row".to_owned(),
        json!({
            "title": "row",
            "type": "object",
            "description": "A row to insert.",
            "required": ["id", "name"],
            "properties": row_properties,
            "allOf": row_rules,
        }),
    );
    definitions.insert(
        "patch".to_owned(),
        json!({
            "title": "patch entry",
            "type": "object",
            "description": "`insert` rows, or patch the row named by `id` (each key replaces the row's key whole).",
            "properties": patch_properties,
            "allOf": patch_rules,
        }),
    );
    json!({
        "$schema": DRAFT_07,
        "title": "cordis.patch.yml",
        "description": format!("A DeepSeek Harness patch layer: a list of patch entries applied in order. For `!!js` values, {editors}."),
        "type": "array",
        "items": { "$ref": "#/definitions/patch" },
        "definitions": definitions,
    })
}

/// `research-nudge` → `researchNudge`: a row's definition name in the schema.
fn camel(id: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in id.chars() {
        if c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The row-config schema as it appears in a patch file: `null` (all defaults) is allowed, and the
/// config, each of its values and each list item may be a `!!js` expression.
fn patch_form_of_row_config(mut row: Value) -> Value {
    if let Some(schema) = row.as_object_mut() {
        schema.remove("$schema");
        schema.insert("type".to_owned(), json!(["object", "null"]));
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for field in properties.values_mut() {
                if let Some(items) = field.get_mut("items") {
                    *items = with_js(items.take());
                }
                *field = with_js(field.take());
            }
        }
    }
    with_js(row)
}

/// `plain`, or a `!!js` expression in its place. The annotations (`title`, `description`,
/// `default`) move to the wrapper, where editors show them for either form.
fn with_js(mut plain: Value) -> Value {
    let mut wrapper = Map::new();
    if let Some(schema) = plain.as_object_mut() {
        for key in ["title", "description", "default"] {
            if let Some(annotation) = schema.remove(key) {
                wrapper.insert(key.to_owned(), annotation);
            }
        }
    }
    wrapper.insert(
        "if".to_owned(),
        json!({ "type": "object", "required": [JS_EXPR_KEY] }),
    );
    wrapper.insert("then".to_owned(), json!({ "$ref": JS_EXPR_REF }));
    wrapper.insert("else".to_owned(), plain);
    Value::Object(wrapper)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(source: &str) -> Value {
        json!({ JS_EXPR_KEY: source })
    }

    fn config_field<'a>(schema: &'a Value, key: &str) -> &'a Value {
        &schema["definitions"]["researchNudgeConfig"]["else"]["properties"][key]
    }

    #[test]
    fn embeds_the_row_schema_for_our_row_only() {
        let schema = patch_file_schema();
        assert_eq!(schema["$schema"], DRAFT_07);
        assert_eq!(schema["type"], "array");
        let embedded = &schema["definitions"]["researchNudgeConfig"]["else"];
        assert_eq!(embedded["additionalProperties"], false);
        assert_eq!(embedded["type"], json!(["object", "null"]));
        assert!(embedded.get("$schema").is_none());
        let threshold = config_field(&schema, "debtThreshold");
        assert_eq!(threshold["else"]["type"], "integer");
        assert_eq!(threshold["else"]["minimum"], 1);
        assert_eq!(threshold["then"]["$ref"], JS_EXPR_REF);
        assert_eq!(threshold["default"], 20);
        assert!(threshold["else"].get("default").is_none());
        let tools = config_field(&schema, "researchTools");
        assert_eq!(tools["else"]["items"]["then"]["$ref"], JS_EXPR_REF);
        for kind in ["row", "patch"] {
            for (rule, row) in schema["definitions"][kind]["allOf"]
                .as_array()
                .unwrap()
                .iter()
                .zip(ROWS)
            {
                assert_eq!(rule["if"]["properties"]["id"]["const"], row.id);
                let reference = format!("#/definitions/{}Config", camel(row.id));
                assert_eq!(
                    rule["then"]["properties"]["config"]["$ref"],
                    reference.as_str()
                );
            }
        }
        assert_eq!(camel("pain-point-check"), "painPointCheck");
    }

    #[test]
    fn every_row_config_key_is_in_the_patch_form() {
        let schema = patch_file_schema();
        for row in ROWS {
            let plain = (row.schema)();
            let plain = plain["properties"].as_object().expect("row properties");
            let name = format!("{}Config", camel(row.id));
            let patch = schema["definitions"][&name]["else"]["properties"]
                .as_object()
                .expect("patch-form properties");
            let plain_keys: Vec<&String> = plain.keys().collect();
            let patch_keys: Vec<&String> = patch.keys().collect();
            assert_eq!(plain_keys, patch_keys, "{}", row.id);
            for (key, field) in plain {
                let mut expected = field.clone();
                for annotation in ["title", "description", "default"] {
                    expected
                        .as_object_mut()
                        .expect("field schema")
                        .remove(annotation);
                }
                if let Some(items) = expected.get_mut("items") {
                    *items = with_js(items.take());
                }
                assert_eq!(patch[key]["else"], expected, "{key}");
            }
        }
    }

    /// A tiny evaluator for the keywords the `!!js` wrappers use, enough to pin their logic
    /// without a JSON Schema engine in this crate (xtask runs a real one over fixtures).
    fn js_wrapper_accepts(wrapper: &Value, value: &Value) -> Option<bool> {
        let is_js_shaped = value
            .as_object()
            .is_some_and(|object| object.contains_key(JS_EXPR_KEY));
        if is_js_shaped {
            let object = value.as_object()?;
            return Some(object.len() == 1 && object[JS_EXPR_KEY].is_string());
        }
        let plain = &wrapper["else"];
        match plain["type"].as_str()? {
            "integer" => Some(value.as_u64().is_some_and(|n| {
                plain["minimum"].as_u64().is_none_or(|min| n >= min)
                    && plain["maximum"].as_u64().is_none_or(|max| n <= max)
            })),
            "boolean" => Some(value.is_boolean()),
            _ => None,
        }
    }

    #[test]
    fn js_expressions_stand_in_for_plain_values_without_loosening_them() {
        let schema = patch_file_schema();
        let threshold = config_field(&schema, "debtThreshold");
        let debug = config_field(&schema, "debug");
        for (wrapper, value, ok) in [
            (threshold, json!(20), true),
            (threshold, json!(0), false),
            (threshold, json!("20"), false),
            (threshold, json!({ "other": 1 }), false),
            (threshold, js("Number(process.env.T)"), true),
            (threshold, json!({ JS_EXPR_KEY: "1", "x": 2 }), false),
            (threshold, json!({ JS_EXPR_KEY: 1 }), false),
            (debug, json!(true), true),
            (debug, json!("true"), false),
            (debug, js("!!process.env.DEBUG"), true),
        ] {
            assert_eq!(js_wrapper_accepts(wrapper, &value), Some(ok), "{value}");
        }
        let js_expr = &schema["definitions"]["jsExpr"];
        assert_eq!(js_expr["required"], json!([JS_EXPR_KEY]));
        assert_eq!(js_expr["additionalProperties"], false);
    }

    #[test]
    fn disabled_takes_booleans_null_or_js() {
        let schema = patch_file_schema();
        for kind in ["row", "patch"] {
            let disabled = &schema["definitions"][kind]["properties"]["disabled"];
            assert_eq!(disabled["else"]["type"], json!(["boolean", "null"]));
            assert_eq!(disabled["then"]["$ref"], JS_EXPR_REF);
            assert!(disabled["description"].is_string());
        }
        let patch = &schema["definitions"]["patch"];
        let rules = patch["allOf"].as_array().expect("patch rules");
        assert_eq!(rules.len(), ROWS.len() + 1);
        assert_eq!(rules[ROWS.len()]["then"]["required"], json!(["id"]));
        assert!(patch.get("additionalProperties").is_none());
        assert_eq!(
            schema["definitions"]["row"]["required"],
            json!(["id", "name"])
        );
    }

    #[test]
    fn the_editor_tag_setting_names_the_js_tag_as_an_object() {
        assert!(EDITOR_CUSTOM_TAG.starts_with("tag:yaml.org,2002:js "));
        assert!(EDITOR_CUSTOM_TAG.ends_with(":object"));
        let schema = patch_file_schema();
        assert!(
            schema["description"]
                .as_str()
                .is_some_and(|d| d.contains(EDITOR_CUSTOM_TAG))
        );
    }
}
