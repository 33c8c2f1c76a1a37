//! The driver contract's wire files (ARCHITECTURE.md, "The driver contract"): each machine's
//! generator (a test of its crate) serializes one example of every step and answer, with and
//! without each optional field, and [`describe`] turns them into the fields of each kind with
//! their JSON shapes; the Node tests check what the JavaScript performers see and answer against
//! the file with `check.mjs`, this crate's other half.
//!
//! A shape ([`SHAPES`]) is a JSON type name (`"string"`, `"number"`, `"boolean"`, `"null"`,
//! `"any"`, or several joined by `|`), `{"array": shape}`, `{"object": {field: shape}}` or
//! `{"map": shape}` (any keys), a composite one with `"nullable": true` when it may be `null`,
//! or `{"oneOf": [shape, …]}` (a value that is a text in one example and an object in another).

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// What a wire file says its shapes are.
pub const SHAPES: &str = "a JSON type name (several joined by |), {array: shape}, \
    {object: {field: shape}} or {map: shape}, nullable when it may be null, or {oneOf: [shape]}";

/// Where examples do not show a shape by their fields, by path (`kind.field.sub`, `[]` for an
/// array's items).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rules<'a> {
    /// Objects whose keys are data, not fields (a statement's parameters, headers).
    pub maps: &'a [&'a str],
    /// Objects whose fields are listed but whose values are left open (`"any"`): tracker rows
    /// as SQLite returns them, which the reader takes in more than one form.
    pub open: &'a [&'a str],
    /// Values the wire leaves to another contract (`"any"`): the tool's value a `done` step
    /// carries, which its crate's own tests pin.
    pub any: &'a [&'a str],
}

/// The fields of each kind in `examples` (serialized steps or answers, tagged by `tag`) with
/// their shapes, every example of a kind merged: a field that is `null` in one and a string in
/// another is `"null|string"`. Panics when a list is empty in every example of its kind (its
/// items' shape would be unknown) or two examples disagree past what a shape can say.
pub fn describe(
    examples: impl IntoIterator<Item = Value>,
    tag: &str,
    rules: Rules<'_>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for mut example in examples {
        let object = example
            .as_object_mut()
            .expect("an example is a JSON object");
        let kind = object
            .shift_remove(tag)
            .and_then(|k| k.as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("an example has a string `{tag}`"));
        let shaped = shape(&example, &kind, rules);
        let merged = out.get(&kind).map_or(shaped.clone(), |s| merge(s, &shaped));
        out.insert(kind, merged);
    }
    for (kind, shape) in &mut out {
        assert!(
            !shape.to_string().contains("\"nothing\""),
            "{kind}: an empty list in every example leaves its items unknown: {shape}"
        );
        *shape = shape["object"].clone();
    }
    out
}

/// The shape of `value` at `path`.
fn shape(value: &Value, path: &str, rules: Rules<'_>) -> Value {
    let open = rules
        .open
        .iter()
        .any(|r| path.starts_with(&format!("{r}.")));
    let items = |values: &mut dyn Iterator<Item = &Value>, path: String| {
        values
            .map(|item| shape(item, &path, rules))
            .reduce(|a, b| merge(&a, &b))
            .unwrap_or(json!("nothing"))
    };
    match value {
        _ if rules.any.contains(&path) => json!("any"),
        _ if open && !value.is_object() && !value.is_array() => json!("any"),
        Value::Null => json!("null"),
        Value::Bool(_) => json!("boolean"),
        Value::Number(_) => json!("number"),
        Value::String(_) => json!("string"),
        Value::Array(list) => json!({ "array": items(&mut list.iter(), format!("{path}[]")) }),
        Value::Object(object) if rules.maps.contains(&path) => {
            json!({ "map": items(&mut object.values(), format!("{path}.*")) })
        }
        Value::Object(object) => {
            let fields: Map<String, Value> = object
                .iter()
                .map(|(k, v)| (k.clone(), shape(v, &format!("{path}.{k}"), rules)))
                .collect();
            json!({ "object": fields })
        }
    }
}

/// One shape that admits what `a` and `b` admit.
fn merge(a: &Value, b: &Value) -> Value {
    if a == b || b == "nothing" {
        return a.clone();
    }
    if a == "nothing" {
        return b.clone();
    }
    match (a, b) {
        (Value::String(x), Value::String(y)) => {
            let types: BTreeSet<&str> = x.split('|').chain(y.split('|')).collect();
            json!(types.into_iter().collect::<Vec<_>>().join("|"))
        }
        (composite, Value::String(null)) | (Value::String(null), composite)
            if null == "null" && composite.get("oneOf").is_none() =>
        {
            let mut composite = composite.clone();
            composite["nullable"] = json!(true);
            composite
        }
        (Value::Object(x), Value::Object(y)) if class(a) == class(b) => {
            let mut out = x.clone();
            for (key, theirs) in y {
                let merged = match (key.as_str(), x.get(key), theirs) {
                    ("object", Some(Value::Object(ours)), Value::Object(theirs)) => {
                        let mut fields = ours.clone();
                        for (field, shape) in theirs {
                            let merged = fields
                                .get(field)
                                .map_or(shape.clone(), |mine| merge(mine, shape));
                            fields.insert(field.clone(), merged);
                        }
                        Value::Object(fields)
                    }
                    ("nullable", _, _) | (_, None, _) => theirs.clone(),
                    (_, Some(ours), _) => merge(ours, theirs),
                };
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        _ => {
            // Alternatives of different classes: each merged with its own class's.
            let mut alternatives: Vec<Value> = Vec::new();
            for shape in [a, b].into_iter().flat_map(alternatives_of) {
                match alternatives
                    .iter_mut()
                    .find(|alt| class(alt) == class(&shape))
                {
                    Some(alt) => *alt = merge(alt, &shape),
                    None => alternatives.push(shape),
                }
            }
            json!({ "oneOf": alternatives })
        }
    }
}

/// A shape's alternatives: a `oneOf`'s, else itself.
fn alternatives_of(shape: &Value) -> Vec<Value> {
    shape
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| vec![shape.clone()])
}

/// What merges with what: type names with type names, arrays with arrays, objects with objects,
/// maps with maps.
fn class(shape: &Value) -> &'static str {
    ["array", "object", "map", "oneOf"]
        .into_iter()
        .find(|key| shape.get(key).is_some())
        .unwrap_or("type")
}

/// A machine's wire file as its generator writes it (pretty JSON, a final newline): what it is,
/// who wrote it, [`SHAPES`], then under `steps_key` each step kind's `fields` and the `answers`
/// it takes, and under `answers` each answer kind's `fields`.
pub fn wire_file(
    machine: &str,
    generated_by: &str,
    steps_key: &str,
    steps: impl IntoIterator<Item = (String, Value, Value)>,
    answers: impl IntoIterator<Item = (String, Value)>,
) -> String {
    let steps: Map<String, Value> = steps
        .into_iter()
        .map(|(kind, fields, takes)| (kind, json!({ "fields": fields, "answers": takes })))
        .collect();
    let answers: Map<String, Value> = answers
        .into_iter()
        .map(|(kind, fields)| (kind, json!({ "fields": fields })))
        .collect();
    let mut file = Map::new();
    file.insert("machine".into(), json!(machine));
    file.insert("generatedBy".into(), json!(generated_by));
    file.insert("shapes".into(), json!(SHAPES));
    file.insert(steps_key.into(), Value::Object(steps));
    file.insert("answers".into(), Value::Object(answers));
    format!(
        "{}\n",
        serde_json::to_string_pretty(&Value::Object(file)).unwrap_or_default()
    )
}

/// A kind's fields for a docs table, without `id`: each by name, what an object or a list of
/// objects holds in braces, an open object (a row) by name only; `—` for none.
pub fn render(fields: &Map<String, Value>) -> String {
    let shown: Vec<String> = fields
        .iter()
        .filter(|(name, _)| *name != "id")
        .map(|(name, field)| match inner(field) {
            Some(inner) => format!("`{name}: {inner}`"),
            None => format!("`{name}`"),
        })
        .collect();
    if shown.is_empty() {
        "—".to_owned()
    } else {
        shown.join(", ")
    }
}

fn inner(shape: &Value) -> Option<String> {
    if let Some(alternatives) = shape.get("oneOf").and_then(Value::as_array) {
        return alternatives.iter().find_map(inner);
    }
    if let Some(item) = shape.get("array") {
        return inner(item).map(|inner| format!("[{inner}]"));
    }
    if let Some(item) = shape.get("map") {
        return Some(format!(
            "{{name: {}}}",
            inner(item).unwrap_or("value".into())
        ));
    }
    let fields = shape.get("object")?.as_object()?;
    if fields.values().all(|v| v == "any") {
        return None;
    }
    let shown: Vec<String> = fields
        .iter()
        .map(|(name, field)| match inner(field) {
            Some(inner) => format!("{name}: {inner}"),
            None => name.clone(),
        })
        .collect();
    Some(format!("{{{}}}", shown.join(", ")))
}

/// The field names a hand-written shape in docs lists: `text` from its `{` on, up to the
/// matching `}`, split at the top level; each item's name is its first word (`key?` is `key`,
/// `addresses: [..]` is `addresses`, `exitCode (null when …)` is `exitCode`). For checking a
/// hand-written docs table against a generated wire file.
pub fn braced_fields(text: &str) -> Vec<String> {
    let mut depth = 0;
    let mut items = vec![String::new()];
    for c in text.chars().skip_while(|c| *c != '{') {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 1 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            break;
        }
        if depth == 1 && c != '{' {
            items.last_mut().expect("one item at least").push(c);
        }
    }
    items
        .iter()
        .filter_map(|item| {
            let name: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_merge_into_one_shape_per_kind() {
        let rules = Rules {
            maps: &["http.headers"],
            open: &["loaded.rows"],
            any: &[],
        };
        let described = describe(
            [
                json!({"kind": "http", "id": 1, "headers": {"accept": "*/*"}, "to": null, "list": []}),
                json!({"kind": "http", "id": 2, "headers": {}, "to": "x", "list": [{"a": 1}]}),
                json!({"kind": "http", "id": 3, "headers": {}, "to": "x", "list": null}),
                json!({"kind": "create", "data": "edited"}),
                json!({"kind": "create", "data": {"text": "t"}}),
                json!({"kind": "create", "data": null}),
                json!({"kind": "loaded", "rows": {"run": {"flag": 1, "name": "r"}}}),
            ],
            "kind",
            rules,
        );
        expect_test::expect![[r#"{"http":{"id":"number","headers":{"map":"string"},"to":"null|string","list":{"array":{"object":{"a":"number"}},"nullable":true}},"create":{"data":{"oneOf":["null|string",{"object":{"text":"string"}}]}},"loaded":{"rows":{"object":{"run":{"object":{"flag":"any","name":"any"}}}}}}"#]]
            .assert_eq(&Value::Object(described.clone()).to_string());
        expect_test::expect!["`headers: {name: value}`, `to`, `list: [{a}]`"]
            .assert_eq(&render(described["http"].as_object().unwrap()));
        expect_test::expect!["`rows: {run}`"]
            .assert_eq(&render(described["loaded"].as_object().unwrap()));
    }

    #[test]
    fn a_hand_written_shape_names_its_fields() {
        assert_eq!(
            braced_fields(
                r#"`{ kind: "curl", exitCode (null when killed, say), complete?, addresses: [{ address, family }] }` + stdout"#
            ),
            ["kind", "exitCode", "complete", "addresses"]
        );
        assert_eq!(braced_fields("`edit`"), Vec::<String>::new());
    }

    #[test]
    #[should_panic(expected = "an empty list in every example")]
    fn a_list_never_shown_with_items_is_refused() {
        describe(
            [json!({"kind": "list", "names": []})],
            "kind",
            Rules::default(),
        );
    }
}
