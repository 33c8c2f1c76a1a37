//! The model-visible tool definitions the row registers, composed from the cores:
//! `limit-break-memory`'s [`memory::tools`] and `limit-break-fetch`'s [`fetch::tool`] (the
//! fetch tool's caps and timeout from the row's fetch settings).

use config::limit_break::RowConfig;
use serde_json::{Value, json};

pub use fetch::tool::NAME as RESILIENT_FETCH;
pub use memory::tools::{MEMORY_RECALL, MEMORY_SAVE, MEMORY_STATS};

/// Every tool the row registers, in order: `memory_save`, `memory_recall`, `memory_stats`,
/// `resilient_fetch`.
pub fn definitions(row: &RowConfig) -> Value {
    let [save, recall, stats] = memory::tools::definitions();
    json!([
        save,
        recall,
        stats,
        fetch::tool::definition(&row.fetch_settings())
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keywords rc.8 accepts in an output schema (`dsh-tools` `checkSchemaNode`).
    const SUBSET: &[&str] = &[
        "type",
        "oneOf",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "description",
        "title",
    ];

    fn walk(schema: &Value, at: &str, out: &mut Vec<String>) {
        let Some(map) = schema.as_object() else {
            out.push(format!("{at} is not an object"));
            return;
        };
        for (key, value) in map {
            if !SUBSET.contains(&key.as_str()) {
                out.push(format!("{at}.{key}"));
            }
            match key.as_str() {
                "properties" => {
                    for (name, child) in value.as_object().into_iter().flatten() {
                        walk(child, &format!("{at}.{name}"), out);
                    }
                }
                "items" => walk(value, &format!("{at}[]"), out),
                "oneOf" => {
                    for (i, child) in value.as_array().into_iter().flatten().enumerate() {
                        walk(child, &format!("{at}|{i}"), out);
                    }
                }
                _ => {}
            }
        }
        if map.contains_key("type") && map.contains_key("oneOf") {
            out.push(format!("{at} has both type and oneOf"));
        }
    }

    #[test]
    fn schemas_stay_inside_what_dsh_accepts() {
        let defs = definitions(&RowConfig::default());
        let mut names = Vec::new();
        for def in defs.as_array().unwrap() {
            let name = def["name"].as_str().unwrap();
            names.push(name);
            let mut bad = Vec::new();
            walk(&def["outputSchema"], name, &mut bad);
            walk(&def["parameters"], name, &mut bad);
            assert!(bad.is_empty(), "{name}: outside the subset: {bad:?}");
            assert_eq!(def["parameters"]["type"], "object");
            assert!(def["description"].as_str().unwrap().len() > 80);
            assert!(def["timeoutMs"].as_u64().unwrap() > 0);
        }
        assert_eq!(
            names,
            [MEMORY_SAVE, MEMORY_RECALL, MEMORY_STATS, RESILIENT_FETCH]
        );
    }
}
