//! A call's arguments as a borrowed JSON tree ([`Json`]): what the gate reads of them (canonical
//! hashing, a few string fields) without `serde_json::Value`'s ordered maps and owned strings,
//! so parsing a call's arguments allocates little. Read by a small hand-written reader that
//! accepts exactly the texts serde_json accepts: its string rules (control characters, escapes,
//! surrogate pairs), its number grammar (any number but a plain integer is handed to serde_json
//! itself, so its values match to the bit), its whitespace and its depth limit; the tests hold
//! the two to each other. An object keeps the last value of a repeated key, as `Value` does.

use serde_json::{Number, Value};
use std::borrow::Cow;

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
    /// Parses JSON text; `Err` exactly when serde_json rejects it.
    pub(crate) fn parse(text: &'a str) -> Result<Self, NotJson> {
        let mut reader = Reader {
            text,
            at: 0,
            depth: DEPTH_LIMIT,
        };
        let value = reader.value()?;
        reader.skip_whitespace();
        if reader.at == text.len() {
            Ok(value)
        } else {
            Err(NotJson)
        }
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

/// Sorts entries by key and keeps the last of each repeated key, in place.
fn object<'a>(mut entries: Vec<(Cow<'a, str>, Json<'a>)>) -> Vec<(Cow<'a, str>, Json<'a>)> {
    // A stable sort keeps repeated keys in input order: the last one wins, moved into the slot
    // `dedup_by` keeps.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|later, kept| {
        let repeated = later.0 == kept.0;
        if repeated {
            std::mem::swap(later, kept);
        }
        repeated
    });
    entries
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

/// Text that is not JSON (serde_json would reject it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NotJson;

/// serde_json's recursion limit: a text may nest at most this many arrays and objects, less one.
const DEPTH_LIMIT: u32 = 128;

struct Reader<'a> {
    text: &'a str,
    at: usize,
    /// Containers that may still open (serde_json's `remaining_depth`).
    depth: u32,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> Result<(), NotJson> {
        if self.text[self.at..].starts_with(literal) {
            self.at += literal.len();
            Ok(())
        } else {
            Err(NotJson)
        }
    }

    fn value(&mut self) -> Result<Json<'a>, NotJson> {
        self.skip_whitespace();
        match self.peek().ok_or(NotJson)? {
            b'n' => self.eat("null").map(|()| Json::Null),
            b't' => self.eat("true").map(|()| Json::Bool(true)),
            b'f' => self.eat("false").map(|()| Json::Bool(false)),
            b'"' => self.string().map(Json::String),
            b'-' | b'0'..=b'9' => self.number().map(Json::Number),
            b'[' => self.nested(Self::array),
            b'{' => self.nested(Self::object),
            _ => Err(NotJson),
        }
    }

    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<Json<'a>, NotJson>,
    ) -> Result<Json<'a>, NotJson> {
        self.depth -= 1;
        if self.depth == 0 {
            return Err(NotJson);
        }
        self.at += 1;
        let value = read(self);
        self.depth += 1;
        value
    }

    fn array(&mut self) -> Result<Json<'a>, NotJson> {
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(NotJson),
            }
        }
    }

    fn object(&mut self) -> Result<Json<'a>, NotJson> {
        let mut entries = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(entries));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(NotJson);
            }
            let key = self.string()?;
            self.skip_whitespace();
            if self.peek() != Some(b':') {
                return Err(NotJson);
            }
            self.at += 1;
            entries.push((key, self.value()?));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Json::Object(object(entries)));
                }
                _ => return Err(NotJson),
            }
        }
    }

    /// A string, at its opening quote: borrowed unless it has escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, NotJson> {
        self.at += 1;
        let start = self.at;
        let bytes = self.text.as_bytes();
        let mut own: Option<String> = None;
        let mut run = start;
        loop {
            // Plain bytes in one sweep.
            self.at += bytes[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(NotJson)?;
            match bytes[self.at] {
                b'"' => {
                    let text = match own {
                        Some(mut own) => {
                            own.push_str(&self.text[run..self.at]);
                            Cow::Owned(own)
                        }
                        None => Cow::Borrowed(&self.text[start..self.at]),
                    };
                    self.at += 1;
                    return Ok(text);
                }
                b'\\' => {
                    let own = own.get_or_insert_with(String::new);
                    own.push_str(&self.text[run..self.at]);
                    self.at += 1;
                    self.escape(own)?;
                    run = self.at;
                }
                // A control character.
                _ => return Err(NotJson),
            }
        }
    }

    /// An escape, after its backslash (serde_json's rules: a surrogate must pair).
    fn escape(&mut self, out: &mut String) -> Result<(), NotJson> {
        let b = self.peek().ok_or(NotJson)?;
        self.at += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                let code = match high {
                    0xDC00..=0xDFFF => return Err(NotJson),
                    0xD800..=0xDBFF => {
                        self.eat("\\u")?;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(NotJson);
                        }
                        0x1_0000 + ((high - 0xD800) << 10 | (low - 0xDC00))
                    }
                    _ => high,
                };
                char::from_u32(code).ok_or(NotJson)?
            }
            _ => return Err(NotJson),
        };
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, NotJson> {
        let digits = self.text.get(self.at..self.at + 4).ok_or(NotJson)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(NotJson);
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).map_err(|_| NotJson)
    }

    /// A number by JSON's grammar; a plain integer that fits a `u64` is read here, any other
    /// by serde_json itself.
    fn number(&mut self) -> Result<Number, NotJson> {
        let start = self.at;
        let digits = |reader: &mut Self| {
            let from = reader.at;
            while reader.peek().is_some_and(|b| b.is_ascii_digit()) {
                reader.at += 1;
            }
            reader.at - from
        };
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        let int_digits = digits(self);
        if int_digits == 0 || (int_digits > 1 && self.text.as_bytes()[int_start] == b'0') {
            return Err(NotJson);
        }
        let mut plain = !negative;
        if self.peek() == Some(b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(NotJson);
            }
            plain = false;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(NotJson);
            }
            plain = false;
        }
        let text = &self.text[start..self.at];
        if plain {
            if let Ok(n) = text.parse::<u64>() {
                return Ok(n.into());
            }
        }
        serde_json::from_str(text).map_err(|_| NotJson)
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

    /// The reader accepts `text` exactly when serde_json does, and then reads what it reads.
    fn same_verdict(text: &str) {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => assert_eq!(Json::parse(text), Ok(Json::from(&value)), "{text:?}"),
            Err(_) => assert_eq!(Json::parse(text), Err(NotJson), "{text:?}"),
        }
    }

    #[test]
    fn rejects_exactly_what_serde_json_rejects() {
        for text in [
            "",
            " ",
            "nul",
            "nulls",
            "true ",
            " false",
            "tru",
            "[",
            "]",
            "[1,]",
            "[,1]",
            "{,}",
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{"a":1,}"#,
            r#"{a:1}"#,
            r#"{"a" : 1 , "b":[ ] }"#,
            "01",
            "-01",
            "-",
            "-a",
            "1.",
            ".5",
            "1.e3",
            "1e",
            "1e+",
            "1E-2",
            "+1",
            "0x10",
            "1_0",
            "-0",
            "-0.0",
            "0e0",
            "1e400",
            "-1e400",
            "1e-400",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "3.141592653589793238462643383279",
            "1x",
            r#""\u00e9""#,
            r#""\u00E9\n\t\b\f\r\/\\\"""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""\ud83d\ude00""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\ud83d\ud83d\ude00""#,
            r#""\ud83dx""#,
            "\"a\u{1}b\"",
            "\"a\u{1f}b\"",
            "\"a\u{7f}b\"",
            "\"é\"",
            "\"\t\"",
            "\"unterminated",
            "[1 2]",
            "{\"a\":1 \"b\":2}",
            "\u{a0}1",
            "1\u{a0}",
            "\u{feff}{}",
            "[]\n\r\t ",
            "NaN",
            "Infinity",
            "[-]",
            r#"{"a":1}{"#,
            "\"\\",
        ] {
            same_verdict(text);
        }
    }

    #[test]
    fn nests_as_deep_as_serde_json_allows() {
        for depth in [126, 127, 128, 129] {
            same_verdict(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            same_verdict(&format!("{}1{}", "[".repeat(depth), "]".repeat(depth)));
            same_verdict(&format!(
                "{}{}",
                r#"{"a":"#.repeat(depth),
                "}".repeat(depth)
            ));
        }
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

        #[test]
        fn any_text_gets_serde_json_s_verdict(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"), Just(" "),
                    Just("\""), Just("\\"), Just("\\u"), Just("d83d"), Just("de00"),
                    Just("00e9"), Just("n"), Just("a"), Just("null"), Just("true"), Just("-"),
                    Just("0"), Just("1"), Just("."), Just("e"), Just("+"), Just("\n"),
                    Just("\u{1}"), Just("\u{1f}"), Just("é"),
                ],
                0..16,
            ),
        ) {
            same_verdict(&parts.concat());
        }
    }
}
