//! Canonical hashing of tool-call arguments, and the per-call key built from it.
//!
//! Two calls are "identical" when they have the same tool name and the same canonical arguments.
//! Canonical means: object keys sorted (so key order does not matter), numbers compared by value
//! (`1`, `1.0` and `1e0` are the same number, as they are after `JSON.parse`), strings compared
//! exactly (whitespace inside a string matters). The canonical form is never built as text: it is
//! fed straight into a 64-bit FNV-1a hash with a type tag and a length before every value, so
//! `["ab"]` and `["a","b"]` cannot collide by concatenation.

use crate::json::Json;
use serde_json::Value;

/// The 64-bit hash of a call's canonical arguments (see [`canonical_args_hash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArgsHash(pub u64);

/// The arguments hash: [`::text::Fnv1a`] with a length before every text.
pub(crate) struct Fnv(::text::Fnv1a);

impl Fnv {
    pub(crate) fn new() -> Self {
        Self(::text::Fnv1a::new())
    }

    pub(crate) fn byte(&mut self, b: u8) {
        self.0.byte(b);
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        self.0.bytes(bytes);
    }

    /// The hash so far.
    pub(crate) fn value(&self) -> u64 {
        self.0.value()
    }

    fn len(&mut self, n: usize) {
        self.bytes(&(n as u64).to_le_bytes());
    }

    pub(crate) fn text(&mut self, text: &str) {
        self.len(text.len());
        self.bytes(text.as_bytes());
    }
}

/// Hashes parsed arguments canonically: object keys sorted, numbers by value.
pub fn canonical_args_hash(value: &Value) -> ArgsHash {
    json_hash(&Json::from(value))
}

/// [`canonical_args_hash`] of the borrowed tree.
pub(crate) fn json_hash(value: &Json<'_>) -> ArgsHash {
    let mut h = Fnv::new();
    feed(&mut h, value);
    ArgsHash(h.value())
}

/// Hashes arguments given as JSON text. Empty (or all-whitespace) text is `{}`, as DSH parses an
/// empty argument string. Text that is not valid JSON is hashed verbatim under its own tag, so it
/// equals only the same text, never a parsed value.
pub fn canonical_args_hash_str(text: &str) -> ArgsHash {
    if is_blank(text) {
        return json_hash(&Json::empty_object());
    }
    match Json::parse(text) {
        Ok(value) => json_hash(&value),
        Err(_) => {
            let mut h = Fnv::new();
            h.byte(b'R');
            h.text(text);
            ArgsHash(h.value())
        }
    }
}

/// Whether arguments text is empty or all whitespace (`trim().is_empty()`, deciding at the first
/// char of a JSON text).
pub(crate) fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

/// Feeds one value. Recursion depth is the value's nesting depth; values parsed by serde_json are
/// at most 128 levels deep.
fn feed(h: &mut Fnv, value: &Json<'_>) {
    match value {
        Json::Null => h.byte(b'n'),
        Json::Bool(true) => h.byte(b't'),
        Json::Bool(false) => h.byte(b'f'),
        Json::Number(number) => {
            h.byte(b'#');
            h.text(&canonical_number(number));
        }
        Json::String(text) => {
            h.byte(b'"');
            h.text(text);
        }
        Json::Array(items) => {
            h.byte(b'[');
            h.len(items.len());
            for item in items {
                feed(h, item);
            }
        }
        // Already sorted by key.
        Json::Object(entries) => {
            h.byte(b'{');
            h.len(entries.len());
            for (key, item) in entries {
                h.text(key);
                feed(h, item);
            }
        }
    }
}

/// Integers (also integral floats that fit an `i64`) as plain decimal; other floats in Rust's
/// shortest round-trip form.
fn canonical_number(number: &serde_json::Number) -> String {
    if let Some(n) = number.as_i64() {
        return n.to_string();
    }
    if let Some(n) = number.as_u64() {
        return n.to_string();
    }
    match number.as_f64() {
        // Exclusive upper bound: `i64::MAX as f64` rounds up to 2^63, which does not fit.
        Some(x) if x.fract() == 0.0 && x >= i64::MIN as f64 && x < i64::MAX as f64 => {
            (x as i64).to_string()
        }
        Some(x) => format!("{x:?}"),
        None => number.to_string(),
    }
}

/// One call's identity: the exact tool name and its [`ArgsHash`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CallKey(pub(crate) u64);

impl CallKey {
    pub(crate) fn new(name: &str, args: ArgsHash) -> Self {
        let mut h = Fnv::new();
        h.text(name);
        h.byte(0xFF);
        h.bytes(&args.0.to_le_bytes());
        Self(h.value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hash(text: &str) -> ArgsHash {
        canonical_args_hash_str(text)
    }

    #[test]
    fn key_order_does_not_matter_at_any_depth() {
        assert_eq!(hash(r#"{"a":1,"b":2}"#), hash(r#"{"b":2,"a":1}"#));
        assert_eq!(
            hash(r#"{"o":{"x":[1,{"q":true,"p":null}],"y":"s"}}"#),
            hash(r#"{"o":{"y":"s","x":[1,{"p":null,"q":true}]}}"#)
        );
        assert_eq!(
            canonical_args_hash(&json!({"cmd": "cargo test", "timeout": 60})),
            hash(r#"{ "timeout" : 60, "cmd" : "cargo test" }"#)
        );
    }

    #[test]
    fn values_that_differ_hash_differently() {
        assert_ne!(hash(r#"{"x":1}"#), hash(r#"{"x":2}"#));
        assert_ne!(hash(r#"{"x":"1"}"#), hash(r#"{"x":1}"#));
        assert_ne!(hash(r#"["ab"]"#), hash(r#"["a","b"]"#));
        assert_ne!(hash(r#"[[1],2]"#), hash(r#"[1,[2]]"#));
        assert_ne!(hash(r#"{"a":null}"#), hash(r#"{}"#));
        assert_ne!(hash(r#"{"s":"a b"}"#), hash(r#"{"s":"a  b"}"#));
        assert_ne!(hash("true"), hash("false"));
        assert_ne!(hash("0.5"), hash("0.25"));
        // Array order matters.
        assert_ne!(hash("[1,2]"), hash("[2,1]"));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert_eq!(hash(r#"{"n":1}"#), hash(r#"{"n":1.0}"#));
        assert_eq!(hash(r#"{"n":1000}"#), hash(r#"{"n":1e3}"#));
        assert_eq!(hash(r#"{"n":-0.0}"#), hash(r#"{"n":0}"#));
        assert_eq!(hash("0.5"), hash("5e-1"));
    }

    #[test]
    fn empty_text_is_the_empty_object_and_invalid_json_is_verbatim() {
        assert_eq!(hash(""), hash("{}"));
        assert_eq!(hash("  \n"), hash("{}"));
        assert_eq!(hash("{not json"), hash("{not json"));
        assert_ne!(hash("{not json"), hash("{not  json"));
        // The raw text `x` is not the JSON string "x".
        assert_ne!(hash("x"), hash(r#""x""#));
    }

    #[test]
    fn the_hash_is_stable() {
        // Pinned so a change to the canonical form is a deliberate one.
        assert_eq!(hash("{}"), hash(r#"{ }"#));
        assert_eq!(hash("null").0, {
            let mut h = Fnv::new();
            h.byte(b'n');
            h.value()
        });
        assert_eq!(hash("null").0, 0xaf63_e34c_8601_f871);
    }

    #[test]
    fn call_keys_separate_name_and_arguments() {
        let args = hash(r#"{"x":1}"#);
        assert_eq!(CallKey::new("bash", args), CallKey::new("bash", args));
        assert_ne!(CallKey::new("bash", args), CallKey::new("pwsh", args));
        assert_ne!(
            CallKey::new("bash", args),
            CallKey::new("bash", hash(r#"{"x":2}"#))
        );
    }
}
