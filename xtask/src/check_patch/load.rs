//! Reads a patch file into the JSON value DSH's loader builds from it, with the position of every
//! value and key.
//!
//! DSH parses `cordis.patch.yml` with js-yaml and its include's schema: js-yaml's `JSON_SCHEMA`
//! plus the scalar tag `!!js`, constructed as `{"__jsExpr": "<source>"}`. This module reproduces
//! that dialect on top of `saphyr-parser`'s YAML 1.2 event stream (which gives every event a
//! span): plain scalars resolve like js-yaml's null, bool, int and float types (so `True`, `0x1F`,
//! `0o17` and `.inf` are what js-yaml makes of them, and `yes`, `1_000` or `2001-12-14` stay
//! strings); quoted and block scalars are strings; explicit `!!str`, `!!null`, `!!bool`, `!!int`,
//! `!!float`, `!!seq`, `!!map` and `!!js` tags resolve or fail as in js-yaml; any other tag,
//! a duplicated key and a second document are errors, as they are for DSH.
//!
//! Every problem is a [`Diagnostic`] at a [`Pos`]; the parent module's schema check reports its
//! own with the same types, so they live here, below it.

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// Largest number of nodes a file may expand to through aliases.
const MAX_NODES: usize = 1_000_000;
/// The tag prefix `!!` stands for.
const CORE: &str = "tag:yaml.org,2002:";

/// A line and column, both 1-based (columns count characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
}

impl From<Marker> for Pos {
    fn from(marker: Marker) -> Self {
        Pos {
            line: marker.line(),
            col: marker.col() + 1,
        }
    }
}

/// One problem in a patch file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// Where it is.
    pub pos: Pos,
    /// What is wrong, naming the rule.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `pos`.
    pub fn at(pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            pos,
            message: message.into(),
        }
    }
}

/// A parsed file: the single document's value (`None` when the file holds no document) and
/// where each value and key starts, by JSON Pointer.
#[derive(Debug)]
pub struct Loaded {
    /// The document, as DSH sees it; `None` for an empty or comments-only file.
    pub value: Option<Value>,
    /// Where the value at each JSON Pointer starts.
    pub values: HashMap<String, Pos>,
    /// Where the key of the member at each JSON Pointer starts.
    pub keys: HashMap<String, Pos>,
}

/// A node of the document with its position, before conversion to JSON.
#[derive(Clone, Debug)]
struct Node {
    pos: Pos,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Scalar(Value),
    Seq(Vec<Node>),
    /// Keys as js-yaml stores them (`String(key)`), with their positions.
    Map(Vec<(String, Pos, Node)>),
}

enum Frame {
    Seq {
        pos: Pos,
        anchor: usize,
        tag: Option<String>,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        anchor: usize,
        tag: Option<String>,
        entries: Vec<(String, Pos, Node)>,
        key: Option<Node>,
    },
}

struct Builder<'a> {
    text: &'a str,
    /// Byte offset of each character of `text` (the parser counts characters).
    offsets: Vec<usize>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    documents: Vec<Node>,
    document_count: usize,
    errors: Vec<Diagnostic>,
    nodes: usize,
}

/// Parses `text` as DSH does. Errors are what js-yaml would throw on (js-yaml stops at the first;
/// here every one found is reported, except that a syntax error ends the scan).
pub fn load(text: &str) -> Result<Loaded, Vec<Diagnostic>> {
    let mut builder = Builder {
        text,
        offsets: text.char_indices().map(|(at, _)| at).collect(),
        stack: Vec::new(),
        anchors: HashMap::new(),
        documents: Vec::new(),
        document_count: 0,
        errors: Vec::new(),
        nodes: 0,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(event) = parser.next_event() {
        match event {
            Ok((event, span)) => builder.event(event, span),
            Err(error) => {
                let marker = *error.marker();
                builder.errors.push(Diagnostic::at(
                    marker.into(),
                    format!("YAML syntax error: {}", error.info()),
                ));
                break;
            }
        }
        if builder.nodes > MAX_NODES {
            builder.errors.push(Diagnostic::at(
                Pos { line: 1, col: 1 },
                format!("the document expands to more than {MAX_NODES} nodes through aliases"),
            ));
            break;
        }
    }
    if !builder.errors.is_empty() {
        builder.errors.sort();
        return Err(builder.errors);
    }
    let mut loaded = Loaded {
        value: None,
        values: HashMap::new(),
        keys: HashMap::new(),
    };
    if let Some(document) = builder.documents.pop() {
        let mut pointer = String::new();
        loaded.value = Some(to_json(document, &mut pointer, &mut loaded));
    }
    Ok(loaded)
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, span: Span) {
        let pos = Pos::from(span.start);
        if let Event::Scalar(_, _, _, Some(_))
        | Event::SequenceStart(_, Some(_))
        | Event::MappingStart(_, Some(_)) = &event
        {
            self.check_tag_token(span.start.index(), pos);
        }
        match event {
            Event::DocumentStart(_) => {
                self.document_count += 1;
                if self.document_count == 2 {
                    self.errors.push(Diagnostic::at(
                        pos,
                        "expected a single document in the stream, but found more (DSH reads one)",
                    ));
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|tag| full_tag(&tag));
                let value = self.scalar(&text, style, tag.as_deref(), pos);
                self.finish(
                    Node {
                        pos,
                        kind: Kind::Scalar(value),
                    },
                    anchor,
                );
            }
            Event::SequenceStart(anchor, tag) => self.stack.push(Frame::Seq {
                pos,
                anchor,
                tag: tag.map(|tag| full_tag(&tag)),
                items: Vec::new(),
            }),
            Event::MappingStart(anchor, tag) => self.stack.push(Frame::Map {
                pos,
                anchor,
                tag: tag.map(|tag| full_tag(&tag)),
                entries: Vec::new(),
                key: None,
            }),
            Event::SequenceEnd => {
                if let Some(Frame::Seq {
                    pos,
                    anchor,
                    tag,
                    items,
                }) = self.stack.pop()
                {
                    self.collection_tag(tag.as_deref(), "sequence", pos);
                    self.finish(
                        Node {
                            pos,
                            kind: Kind::Seq(items),
                        },
                        anchor,
                    );
                }
            }
            Event::MappingEnd => {
                if let Some(Frame::Map {
                    pos,
                    anchor,
                    tag,
                    entries,
                    ..
                }) = self.stack.pop()
                {
                    self.collection_tag(tag.as_deref(), "mapping", pos);
                    self.finish(
                        Node {
                            pos,
                            kind: Kind::Map(entries),
                        },
                        anchor,
                    );
                }
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some(node) => {
                    let mut node = node.clone();
                    self.nodes += count(&node);
                    node.pos = pos;
                    self.finish(node, 0);
                }
                None => self
                    .errors
                    .push(Diagnostic::at(pos, "unidentified alias (no such anchor)")),
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
        }
    }

    /// js-yaml reads a tag up to the next white space and refuses one that contains `,[]{}`, so
    /// `[!!str, !!seq]` fails in DSH although YAML ends the tags at the indicators.
    fn check_tag_token(&mut self, index: usize, pos: Pos) {
        let Some(&start) = self.offsets.get(index) else {
            return;
        };
        let mut rest = &self.text[start..];
        // The node's properties: an anchor and a tag, in either order.
        for _ in 0..2 {
            let end = rest.find([' ', '\t', '\r', '\n']).unwrap_or(rest.len());
            let token = &rest[..end];
            if token.starts_with('!')
                && !token.starts_with("!<")
                && token.contains([',', '[', ']', '{', '}'])
            {
                self.errors.push(Diagnostic::at(
                    pos,
                    format!("tag suffix cannot contain flow indicator characters (js-yaml reads `{token}` as the tag; put a space after the tag)"),
                ));
                return;
            }
            if !token.starts_with(['!', '&']) {
                return;
            }
            rest = rest[end..].trim_start_matches([' ', '\t']);
        }
    }

    /// Places a complete node into its parent (or as a document).
    fn finish(&mut self, node: Node, anchor: usize) {
        self.nodes += 1;
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.documents.push(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(key_node) => match js_key(&key_node) {
                    Ok(name) => {
                        if entries.iter().any(|(existing, _, _)| *existing == name) {
                            self.errors.push(Diagnostic::at(
                                key_node.pos,
                                format!("duplicated mapping key {name:?} (js-yaml, and so DSH, rejects the file)"),
                            ));
                        } else {
                            entries.push((name, key_node.pos, node));
                        }
                    }
                    Err(message) => self.errors.push(Diagnostic::at(key_node.pos, message)),
                },
            },
        }
    }

    /// The value of a scalar, resolved as js-yaml resolves it under DSH's schema.
    fn scalar(&mut self, text: &str, style: ScalarStyle, tag: Option<&str>, pos: Pos) -> Value {
        // A plain scalar is empty only when the node has no content at all (`key:`).
        let empty = style == ScalarStyle::Plain && text.is_empty();
        let Some(tag) = tag else {
            return if style != ScalarStyle::Plain {
                Value::String(text.to_owned())
            } else if empty {
                Value::Null
            } else {
                implicit(text)
            };
        };
        // `!` (the non-specific tag) keeps the text a string.
        if tag == "!" {
            return Value::String(text.to_owned());
        }
        let resolved = match tag.strip_prefix(CORE) {
            Some("str") => Some(Value::String(text.to_owned())),
            Some("null") => (empty || is_null(text)).then_some(Value::Null),
            Some("bool") => (!empty).then(|| boolean(text)).flatten().map(Value::Bool),
            Some("int") => (!empty).then(|| integer(text)).flatten().map(number),
            Some("float") => (!empty).then(|| float(text)).flatten().map(number),
            Some("js") => (!empty).then(|| {
                Value::Object(Map::from_iter([(
                    config::JS_EXPR_KEY.to_owned(),
                    Value::String(text.to_owned()),
                )]))
            }),
            Some("map") if empty => Some(Value::Object(Map::new())),
            Some("seq") if empty => Some(Value::Array(Vec::new())),
            Some(kind @ ("map" | "seq")) => {
                let expected = if kind == "map" { "mapping" } else { "sequence" };
                self.errors.push(Diagnostic::at(
                    pos,
                    format!("unacceptable node kind for !<{tag}> tag; it should be \"{expected}\", not \"scalar\""),
                ));
                return Value::Null;
            }
            _ => {
                self.errors.push(unknown_tag(tag, pos));
                return Value::Null;
            }
        };
        resolved.unwrap_or_else(|| {
            self.errors.push(Diagnostic::at(
                pos,
                format!("cannot resolve a node with !<{tag}> explicit tag (got {text:?})"),
            ));
            Value::Null
        })
    }

    /// Checks the tag of a sequence or mapping.
    fn collection_tag(&mut self, tag: Option<&str>, kind: &str, pos: Pos) {
        let Some(tag) = tag else { return };
        let expected = match tag.strip_prefix(CORE) {
            Some("seq") => "sequence",
            Some("map") => "mapping",
            Some("str" | "null" | "bool" | "int" | "float" | "js") => "scalar",
            _ if tag == "!" => return,
            _ => {
                self.errors.push(unknown_tag(tag, pos));
                return;
            }
        };
        if expected != kind {
            self.errors.push(Diagnostic::at(
                pos,
                format!("unacceptable node kind for !<{tag}> tag; it should be \"{expected}\", not \"{kind}\""),
            ));
        }
    }
}

fn unknown_tag(tag: &str, pos: Pos) -> Diagnostic {
    Diagnostic::at(
        pos,
        format!(
            "unknown tag !<{tag}> (DSH knows only !!js and the JSON schema's !!str, !!int, !!float, !!bool, !!null, !!seq, !!map)"
        ),
    )
}

/// The tag as a full name: `tag:yaml.org,2002:js` for `!!js`, `!foo` for a local tag, `!` for
/// the non-specific tag.
fn full_tag(tag: &Tag) -> String {
    match tag.handle.as_str() {
        "!" => format!("!{}", tag.suffix),
        _ => format!("{}{}", tag.handle, tag.suffix),
    }
}

fn count(node: &Node) -> usize {
    match &node.kind {
        Kind::Scalar(_) => 1,
        Kind::Seq(items) => 1 + items.iter().map(count).sum::<usize>(),
        Kind::Map(entries) => 1 + entries.iter().map(|(_, _, v)| count(v)).sum::<usize>(),
    }
}

/// A mapping key as js-yaml stores it: `String(key)`, with its rules for collections.
fn js_key(node: &Node) -> Result<String, String> {
    match &node.kind {
        Kind::Scalar(value) => Ok(js_string(value)),
        Kind::Map(_) => Ok("[object Object]".to_owned()),
        Kind::Seq(items) => {
            let mut parts = Vec::new();
            for item in items {
                parts.push(match &item.kind {
                    Kind::Seq(_) => {
                        return Err("nested arrays are not supported inside keys".to_owned());
                    }
                    Kind::Map(_) => "[object Object]".to_owned(),
                    // `Array.prototype.join` writes null as an empty string.
                    Kind::Scalar(Value::Null) => String::new(),
                    Kind::Scalar(value) => js_string(value),
                });
            }
            Ok(parts.join(","))
        }
    }
}

/// JavaScript's `String(value)` for a scalar value.
fn js_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 1e21 => format!("{x:.0}"),
            _ => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// Converts a node to JSON, recording positions under `pointer`.
fn to_json(node: Node, pointer: &mut String, loaded: &mut Loaded) -> Value {
    loaded.values.insert(pointer.clone(), node.pos);
    match node.kind {
        Kind::Scalar(value) => value,
        Kind::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.into_iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{index}"));
                out.push(to_json(item, pointer, loaded));
                pointer.truncate(len);
            }
            Value::Array(out)
        }
        Kind::Map(entries) => {
            let mut out = Map::new();
            for (key, key_pos, value) in entries {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                loaded.keys.insert(pointer.clone(), key_pos);
                let value = to_json(value, pointer, loaded);
                pointer.truncate(len);
                out.insert(key, value);
            }
            Value::Object(out)
        }
    }
}

/// A plain scalar with content, resolved by js-yaml's implicit types in order: null, bool, int,
/// float; anything else is a string.
fn implicit(text: &str) -> Value {
    if is_null(text) {
        Value::Null
    } else if let Some(b) = boolean(text) {
        Value::Bool(b)
    } else if let Some(n) = integer(text).or_else(|| float(text)) {
        number(n)
    } else {
        Value::String(text.to_owned())
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "~" | "null" | "Null" | "NULL")
}

fn boolean(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// js-yaml's `int`: an optional sign, then `0`, `0b…`, `0x…`, `0o…` or decimal digits (a leading
/// `0` followed by digits is decimal); the value must be finite.
fn integer(text: &str) -> Option<f64> {
    let (sign, digits) = match text.as_bytes().first() {
        Some(b'-') => (-1.0, &text[1..]),
        Some(b'+') => (1.0, &text[1..]),
        _ => (1.0, text),
    };
    let (radix, body) = match digits.get(..2) {
        Some("0b") => (2, &digits[2..]),
        Some("0x") => (16, &digits[2..]),
        Some("0o") => (8, &digits[2..]),
        _ => (10, digits),
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // Like `parseInt`: exact below 2^53, rounded above.
    let value = if radix == 10 {
        body.parse::<f64>().ok()?
    } else {
        body.chars()
            .filter_map(|c| c.to_digit(radix))
            .fold(0.0, |acc, d| acc * f64::from(radix) + f64::from(d))
    };
    value.is_finite().then_some(sign * value)
}

/// js-yaml's `float`: `[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?`, `\.[0-9]+([eE][-+]?[0-9]+)?`,
/// `[-+]?.inf` and `.nan` (in three spellings each); a finite number or one of the specials.
fn float(text: &str) -> Option<f64> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let sign = if negative { -1.0 } else { 1.0 };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Some(sign * f64::INFINITY);
    }
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Some(f64::NAN);
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let shape_ok = if whole.is_empty() {
        // `.5`: no sign, and digits after the dot.
        text == unsigned && fraction.is_some_and(|f| !f.is_empty() && digits(f))
    } else {
        digits(whole) && fraction.is_none_or(digits)
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if !shape_ok || !exponent_ok {
        return None;
    }
    let normalized = format!(
        "{}.{}e{}",
        if whole.is_empty() { "0" } else { whole },
        fraction.filter(|f| !f.is_empty()).unwrap_or("0"),
        exponent.unwrap_or("0")
    );
    let value = sign * normalized.parse::<f64>().ok()?;
    value.is_finite().then_some(value)
}

/// A JS number as JSON: integral values in the safe range as integers, other finite values as
/// floats. JSON has no `NaN` or infinities; they become the strings `NaN`, `Infinity` and
/// `-Infinity` (what `String()` prints), so a schema rejects them with that text.
fn number(value: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if value.fract() == 0.0 && value.abs() <= SAFE {
        // Exact: integral and within ±2^53.
        Value::Number(Number::from(value as i64))
    } else if let Some(n) = Number::from_f64(value) {
        Value::Number(n)
    } else if value.is_nan() {
        Value::String("NaN".to_owned())
    } else if value > 0.0 {
        Value::String("Infinity".to_owned())
    } else {
        Value::String("-Infinity".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(text: &str) -> Value {
        load(text).expect("loads").value.expect("a document")
    }

    fn errors(text: &str) -> Vec<String> {
        match load(text) {
            Ok(loaded) => panic!("expected errors, loaded {:?}", loaded.value),
            Err(diagnostics) => diagnostics
                .into_iter()
                .map(|d| format!("{}:{}: {}", d.pos.line, d.pos.col, d.message))
                .collect(),
        }
    }

    #[test]
    fn plain_scalars_resolve_like_js_yaml_json_schema() {
        let doc = value(
            "[~, null, Null, NULL, '', true, True, FALSE, yes, no, on, 0, -0, +12, 012, 0x1F, 0o17, 0b101, \
             1_000, 1.5, .5, -.5, 1., 1e3, 1.5E-2, +.inf, -.INF, .NaN, 2001-12-14, 0x, 1e, abc]",
        );
        assert_eq!(
            doc,
            json!([
                null,
                null,
                null,
                null,
                "",
                true,
                true,
                false,
                "yes",
                "no",
                "on",
                0,
                0,
                12,
                12,
                31,
                15,
                5,
                "1_000",
                1.5,
                0.5,
                "-.5",
                1,
                1000,
                0.015,
                "Infinity",
                "-Infinity",
                "NaN",
                "2001-12-14",
                "0x",
                "1e",
                "abc"
            ])
        );
    }

    #[test]
    fn quoted_and_block_scalars_stay_strings_and_empty_values_are_null() {
        let doc = value("a: '12'\nb: \"true\"\nc: |\n  1\nd:\ne: !!str\nf: ! 12\n");
        assert_eq!(
            doc,
            json!({ "a": "12", "b": "true", "c": "1\n", "d": null, "e": "", "f": "12" })
        );
    }

    #[test]
    fn js_scalars_become_expression_objects() {
        let doc = value(
            "- a: !!js process.env.X\n  b: !!js \"1 + 1\"\n  c: !<tag:yaml.org,2002:js> ctx\n",
        );
        assert_eq!(
            doc,
            json!([{ "a": { "__jsExpr": "process.env.X" }, "b": { "__jsExpr": "1 + 1" }, "c": { "__jsExpr": "ctx" } }])
        );
    }

    #[test]
    fn explicit_core_tags_resolve_or_fail_like_js_yaml() {
        assert_eq!(
            value("[!!int '12', !!float '1', !!bool 'true', !!null '~', !!str 12, !!map , !!seq ]"),
            json!([12, 1, true, null, "12", {}, []])
        );
        assert_eq!(
            errors(
                "a: !!int abc\nb: !!js\nc: !!js {x: 1}\nd: !!str [1]\ne: !foo bar\nf: !!set {}\n"
            ),
            vec![
                "1:4: cannot resolve a node with !<tag:yaml.org,2002:int> explicit tag (got \"abc\")",
                "2:4: cannot resolve a node with !<tag:yaml.org,2002:js> explicit tag (got \"\")",
                "3:4: unacceptable node kind for !<tag:yaml.org,2002:js> tag; it should be \"scalar\", not \"mapping\"",
                "4:4: unacceptable node kind for !<tag:yaml.org,2002:str> tag; it should be \"scalar\", not \"sequence\"",
                "5:4: unknown tag !<!foo> (DSH knows only !!js and the JSON schema's !!str, !!int, !!float, !!bool, !!null, !!seq, !!map)",
                "6:4: unknown tag !<tag:yaml.org,2002:set> (DSH knows only !!js and the JSON schema's !!str, !!int, !!float, !!bool, !!null, !!seq, !!map)",
            ]
        );
    }

    #[test]
    fn tags_run_to_white_space_as_in_js_yaml() {
        assert_eq!(
            errors("[!!str, &a !!int 1, !!seq]\n"),
            vec![
                "1:2: tag suffix cannot contain flow indicator characters (js-yaml reads `!!str,` as the tag; put a space after the tag)",
                "1:21: tag suffix cannot contain flow indicator characters (js-yaml reads `!!seq]` as the tag; put a space after the tag)",
            ]
        );
        assert_eq!(
            value("[!!str , &a !!int 1, !<tag:yaml.org,2002:str> x]"),
            json!(["", 1, "x"])
        );
    }

    #[test]
    fn duplicate_keys_compare_as_js_strings() {
        assert_eq!(
            errors("- id: a\n  id: b\n- 1: x\n  '1': y\n  0x1: z\n"),
            vec![
                "2:3: duplicated mapping key \"id\" (js-yaml, and so DSH, rejects the file)",
                "4:3: duplicated mapping key \"1\" (js-yaml, and so DSH, rejects the file)",
                "5:3: duplicated mapping key \"1\" (js-yaml, and so DSH, rejects the file)",
            ]
        );
        assert_eq!(
            value("{<<: {a: 1}, [a, 2]: b}"),
            json!({ "<<": { "a": 1 }, "a,2": "b" })
        );
    }

    #[test]
    fn documents_syntax_and_aliases() {
        let empty = load("# only a comment\n").expect("loads");
        assert!(empty.value.is_none());
        assert_eq!(value("---\n"), Value::Null);
        assert_eq!(
            errors("- a\n---\n- b\n"),
            vec!["2:1: expected a single document in the stream, but found more (DSH reads one)"]
        );
        assert!(errors("- [a\n")[0].starts_with("2:1: YAML syntax error:"));
        let loaded = load("- &x {a: 1}\n- *x\n").expect("loads");
        assert_eq!(loaded.value, Some(json!([{ "a": 1 }, { "a": 1 }])));
        assert_eq!(loaded.values["/1"], Pos { line: 2, col: 3 });
        assert_eq!(loaded.values["/1/a"], Pos { line: 1, col: 10 });
    }

    #[test]
    fn positions_of_values_and_keys() {
        let loaded = load("# c\n- id: x\n  config:\n    a/b: [1, 2]\n").expect("loads");
        assert_eq!(loaded.values[""], Pos { line: 2, col: 1 });
        assert_eq!(loaded.values["/0"], Pos { line: 2, col: 3 });
        assert_eq!(loaded.keys["/0/config"], Pos { line: 3, col: 3 });
        assert_eq!(loaded.keys["/0/config/a~1b"], Pos { line: 4, col: 5 });
        assert_eq!(loaded.values["/0/config/a~1b/1"], Pos { line: 4, col: 14 });
    }
}
