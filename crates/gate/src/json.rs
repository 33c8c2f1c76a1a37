//! A call's arguments as a borrowed JSON tree ([`Json`]): what the gate reads of them (canonical
//! hashing, a few string fields) without `serde_json::Value`'s ordered maps and owned strings,
//! so parsing a call's arguments allocates little. Parsed by serde_json's own parser (its number
//! and string rules, its depth limit); an object keeps the last value of a repeated key, as
//! `Value` does.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::fmt;

/// A JSON value whose strings borrow from the parsed text where they can.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Entries sorted by key, each key once.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// Parses JSON text.
    pub(crate) fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The empty object (DSH's reading of empty arguments).
    pub(crate) fn empty_object() -> Self {
        Json::Object(Vec::new())
    }

    /// The value of `key`, when this is an object that has it.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(entries) => entries
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|at| &entries[at].1),
            _ => None,
        }
    }

    /// The text, when this is a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }
}

/// Sorts entries by key and keeps the last of each repeated key.
fn object<'a>(mut entries: Vec<(Cow<'a, str>, Json<'a>)>) -> Vec<(Cow<'a, str>, Json<'a>)> {
    // A stable sort keeps repeated keys in input order: the last one wins.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut kept: Vec<(Cow<'a, str>, Json<'a>)> = Vec::with_capacity(entries.len());
    for entry in entries {
        match kept.last_mut() {
            Some(last) if last.0 == entry.0 => *last = entry,
            _ => kept.push(entry),
        }
    }
    kept
}

impl<'a> From<&'a Value> for Json<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.clone()),
            Value::String(s) => Json::String(Cow::Borrowed(s)),
            Value::Array(items) => Json::Array(items.iter().map(Json::from).collect()),
            Value::Object(map) => Json::Object(object(
                map.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Json::from(v)))
                    .collect(),
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Json::Number(n.into()))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Self::Value, E> {
        // serde_json parses only finite numbers; `Null` mirrors `Value::from(f64::NAN)`.
        Ok(Number::from_f64(x).map_or(Json::Null, Json::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            entries.push((key.0, map.next_value()?));
        }
        Ok(Json::Object(object(entries)))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::json_hash;
    use crate::{Shot, canonical_args_hash};
    use proptest::prelude::*;

    /// The text's reading as a `Value` (the reference) and as the borrowed tree agree.
    fn agree(text: &str) {
        let value: Value = serde_json::from_str(text).unwrap();
        let tree = Json::parse(text).unwrap();
        assert_eq!(tree, Json::from(&value), "{text}");
        assert_eq!(json_hash(&tree), canonical_args_hash(&value), "{text}");
        assert_eq!(
            Shot::from_json("bash", text),
            Shot::new("bash", &value),
            "{text}"
        );
    }

    #[test]
    fn repeated_keys_escapes_and_numbers_read_as_a_value_reads_them() {
        agree(r#"{"a":1,"b":2,"a":3}"#);
        agree(r#"{"k\u0065y":"v\n\"q\"","key":"last"}"#);
        agree(
            r#"{"command":"cd /r && pytest tests/a.py::t1","n":[1,1.0,-0.0,1e300,18446744073709551615,-9223372036854775808]}"#,
        );
        agree(r#"{"o":{"z":null,"y":[true,false,{}],"x":"\ud83d\ude00"}}"#);
        agree(r#"[{"path":"a"},"x",2]"#);
        assert_eq!(
            Json::parse(r#"{"a":1,"a":2}"#).unwrap().get("a"),
            Some(&Json::Number(2.into()))
        );
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z\\\\\"\u{e9}\n ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[a-c\"]{0,2}", inner), 0..5)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_arguments_read_as_a_value_reads_them(v in value()) {
            agree(&v.to_string());
        }
    }
}
