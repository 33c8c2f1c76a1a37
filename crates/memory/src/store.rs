//! The store file, `$DSH_HOME/memory/facts.json`: parsing, writing, and the pure edits a save,
//! a forget or an import makes.
//!
//! The format is plain JSON, `{ "schema_version": 1, "facts": [ { id, topic, statement, value,
//! unit, details, source, timestamp, tags } ] }`, written with two-space indentation and a final
//! newline. Reading is lenient and writing is faithful:
//!
//! - keys this crate does not know are kept as they are, both at the top level and in each fact;
//!   a rewrite puts `schema_version` and `facts` first, then the unknown top-level keys in their
//!   order, and in each fact the nine known fields first, then its unknown keys in their order;
//! - a missing known field reads as `""` (or `[]` for `tags`); a number or boolean in a string
//!   field, or in `tags`, reads as its JSON text, and `null` as `""`: those are normalised on the
//!   next write;
//! - a missing `facts` reads as no facts; a leading UTF-8 byte-order mark is skipped;
//! - an empty (or whitespace-only) file is corrupt, not absent: this crate never writes one (a
//!   write is a rename of a complete file), so an empty store means something else truncated
//!   it, and a save over it would hide that;
//! - anything else (not JSON, a top level that is not an object, a fact that is not an object, an
//!   array or object where a string belongs) makes the store *corrupt*: readers report it, writers
//!   refuse with `memory.corrupt` and the file is never overwritten;
//! - a `schema_version` other than 1 can be read but not rewritten (`memory.unsupported_version`).

use crate::failure::{Code, Failure};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::fmt;

/// The one schema version this crate writes.
pub const SCHEMA_VERSION: u64 = 1;

/// The nine fields every fact has, in the order they are written.
pub const FACT_FIELDS: [&str; 9] = [
    "id",
    "topic",
    "statement",
    "value",
    "unit",
    "details",
    "source",
    "timestamp",
    "tags",
];

/// One fact, as stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fact {
    /// The key a save overwrites by; by convention dotted (`network.wikipedia.sni`).
    pub id: String,
    /// A grouping word; a save without one takes the id's first dotted segment.
    pub topic: String,
    /// The fact itself, one sentence.
    pub statement: String,
    /// A value the statement is about (a number, a host), as text.
    pub value: String,
    /// The unit of `value`.
    pub unit: String,
    /// Longer explanation.
    pub details: String,
    /// Where the fact came from.
    pub source: String,
    /// When it was last saved, ISO-8601 UTC (any string is accepted when reading).
    pub timestamp: String,
    /// Free tags.
    pub tags: Vec<String>,
    /// Keys this crate does not know, kept as they are.
    pub extra: Map<String, Value>,
    /// The string fields (bit `i` for [`Fact::strings`]`[i]`) the file wrote as a JSON number:
    /// their text is the number exactly as written, and they are written back as that number.
    pub numeric: u8,
}

/// The bit of `id` in [`Fact::numeric`].
pub const ID_BIT: u8 = 1;

/// The store text of the file's `bytes`, or `memory.corrupt` when they are not UTF-8: a store is
/// never repaired by a lossy decode (and then written back).
pub fn text_of(bytes: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(
            Code::Corrupt,
            format!(
                "the memory store is not UTF-8 text (invalid byte at offset {}). The file was \
                 left exactly as it is; fix it by hand (or move it aside) and saves will work \
                 again.",
                e.valid_up_to()
            ),
        )
    })
}

/// A parsed store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Store {
    /// The file's `schema_version`, if it had one (`None` is written as 1).
    pub schema_version: Option<Value>,
    /// The facts, in file order.
    pub facts: Vec<Fact>,
    /// Top-level keys this crate does not know, kept as they are.
    pub extra: Map<String, Value>,
}

impl Store {
    /// An empty store (what a missing file means).
    pub fn empty() -> Store {
        Store::default()
    }

    /// Parses store text. `Err` is always `memory.corrupt`, with a message saying where and what.
    pub fn parse(text: &str) -> Result<Store, Failure> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let text = replace_lone_surrogates(text);
        let text = text.as_ref();
        if text.trim().is_empty() {
            return Err(Failure::new(
                Code::Corrupt,
                "the memory store file is empty (no JSON at all). A store this plugin wrote is \
                 never empty, so something else truncated it; it was left as it is: restore it \
                 from a backup, or delete it and saves will start a new store.",
            ));
        }
        // Numbers are read fast as integers; a float (or an integer beyond 64 bits, which the
        // fast path can only read as a float) sends the store through the exact path, which
        // keeps every number's text as written.
        let float_seen = Cell::new(false);
        let parsed = parse_with(text, Numbers::Fast, &float_seen);
        let parsed = match parsed {
            Ok(_) if float_seen.get() => parse_with(text, Numbers::Exact, &float_seen),
            other => other,
        };
        parsed.map_err(|e| {
            Failure::new(
                Code::Corrupt,
                format!(
                    "the memory store is not readable: {e}. The file was left exactly as it is; \
                     fix it by hand (or move it aside) and saves will work again."
                ),
            )
        })
    }

    /// Parses the current store text as a writer sees it: `None` (no file) is an empty store.
    /// Besides corruption, refuses a store whose `schema_version` is not 1.
    pub fn parse_for_write(text: Option<&str>) -> Result<Store, Failure> {
        let store = match text {
            None => Store::empty(),
            Some(text) => Store::parse(text)?,
        };
        store.check_writable()?;
        Ok(store)
    }

    /// `Err(memory.unsupported_version)` unless this crate may rewrite the store.
    pub fn check_writable(&self) -> Result<(), Failure> {
        match &self.schema_version {
            None => Ok(()),
            Some(v) if v.as_u64() == Some(SCHEMA_VERSION) => Ok(()),
            Some(v) => Err(Failure::new(
                Code::UnsupportedVersion,
                format!(
                    "the memory store has schema_version {v}; this plugin writes only version \
                     {SCHEMA_VERSION}, so it will read the store but not rewrite it."
                ),
            )),
        }
    }

    /// The store as file text: two-space indented JSON and a final newline.
    pub fn to_text(&self) -> String {
        let estimate = self.facts.len() * 512 + 64;
        let mut buf = Vec::with_capacity(estimate);
        if serde_json::to_writer_pretty(&mut buf, self).is_err() {
            // Serialising strings and `Value`s into memory cannot fail; write a valid empty store
            // rather than panic if it ever did.
            buf = b"{\"schema_version\": 1, \"facts\": []}".to_vec();
        }
        buf.push(b'\n');
        String::from_utf8(buf).unwrap_or_default()
    }

    /// The index of the first fact whose id is `id`.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.facts.iter().position(|f| f.id == id)
    }
}

/// The key naming the id of the fact that superseded this one (kept among the unknown keys, so
/// the nine-field format stays the original's).
pub const SUPERSEDED_BY: &str = "superseded_by";
/// The key holding when this fact was superseded (ISO-8601 UTC).
pub const SUPERSEDED_AT: &str = "superseded_at";
/// The key holding a fact's scope: absent (or `global`) or `project`.
pub const SCOPE: &str = "scope";
/// The key holding the repository root a `project`-scoped fact belongs to.
pub const PROJECT: &str = "project";

impl Fact {
    /// The id of the fact that superseded this one, if a save did.
    pub fn superseded_by(&self) -> Option<&str> {
        self.extra
            .get(SUPERSEDED_BY)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// The repository root this fact is scoped to; `None` for a global fact.
    pub fn project(&self) -> Option<&str> {
        (self.extra.get(SCOPE).and_then(Value::as_str) == Some("project"))
            .then(|| self.extra.get(PROJECT).and_then(Value::as_str))
            .flatten()
    }

    /// Whether recall shows this fact by default in `project` (the current repository root,
    /// `None` outside one): not superseded, and global or of that project.
    pub fn shown_in(&self, project: Option<&str>) -> bool {
        self.superseded_by().is_none() && self.project().is_none_or(|p| Some(p) == project)
    }

    /// The fact as a JSON object: the nine fields in order, then its unknown keys.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut map = Map::with_capacity(FACT_FIELDS.len() + self.extra.len());
        for (key, text) in self.strings() {
            map.insert(key.to_owned(), Value::String(text.to_owned()));
        }
        map.insert(
            "tags".to_owned(),
            Value::Array(self.tags.iter().cloned().map(Value::String).collect()),
        );
        for (k, v) in &self.extra {
            if !map.contains_key(k) {
                map.insert(k.clone(), v.clone());
            }
        }
        map
    }

    /// The eight string fields with their names, in file order.
    pub fn strings(&self) -> [(&'static str, &str); 8] {
        [
            ("id", &self.id),
            ("topic", &self.topic),
            ("statement", &self.statement),
            ("value", &self.value),
            ("unit", &self.unit),
            ("details", &self.details),
            ("source", &self.source),
            ("timestamp", &self.timestamp),
        ]
    }
}

/// `text` with every `\uXXXX` escape of an unpaired UTF-16 surrogate (which no Rust string can
/// hold, and which would make the whole store unreadable) replaced by `\ufffd`, the same length,
/// so positions in parse errors still point into the file. Linear in the text; borrowed when
/// there is none.
fn replace_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    fn surrogate_at(bytes: &[u8], at: usize) -> Option<u16> {
        let escape = bytes.get(at..at + 6)?;
        if escape[0] != b'\\' || escape[1] != b'u' {
            return None;
        }
        let hex = std::str::from_utf8(&escape[2..]).ok()?;
        let unit = u16::from_str_radix(hex, 16).ok()?;
        (0xD800..=0xDFFF).contains(&unit).then_some(unit)
    }
    let bytes = text.as_bytes();
    let mut lone: Vec<usize> = Vec::new();
    let mut i = 0;
    while let Some(found) = text.get(i..).and_then(|rest| rest.find('\\')) {
        i += found;
        match surrogate_at(bytes, i) {
            Some(0xD800..=0xDBFF) => {
                if matches!(surrogate_at(bytes, i + 6), Some(0xDC00..=0xDFFF)) {
                    i += 12;
                } else {
                    lone.push(i);
                    i += 6;
                }
            }
            Some(_) => {
                lone.push(i);
                i += 6;
            }
            // Any other escape (`\\` included) is two characters.
            None => i += 2,
        }
    }
    if lone.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for at in lone {
        out.push_str(&text[from..at]);
        out.push_str("\\ufffd");
        from = at + 6;
    }
    out.push_str(&text[from..]);
    std::borrow::Cow::Owned(out)
}

impl Serialize for Fact {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(FACT_FIELDS.len() + self.extra.len()))?;
        for (bit, (key, text)) in self.strings().into_iter().enumerate() {
            let number = (self.numeric & (1 << bit) != 0)
                .then(|| serde_json::value::RawValue::from_string(text.to_owned()).ok())
                .flatten();
            match number {
                Some(number) => map.serialize_entry(key, &number)?,
                None => map.serialize_entry(key, text)?,
            }
        }
        map.serialize_entry("tags", &self.tags)?;
        for (k, v) in &self.extra {
            if !FACT_FIELDS.contains(&k.as_str()) {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

impl Serialize for Store {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2 + self.extra.len()))?;
        match &self.schema_version {
            Some(v) => map.serialize_entry("schema_version", v)?,
            None => map.serialize_entry("schema_version", &SCHEMA_VERSION)?,
        }
        map.serialize_entry("facts", &self.facts)?;
        for (k, v) in &self.extra {
            if k != "schema_version" && k != "facts" {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// How a fact's number fields are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbers {
    /// Integers of up to 64 bits as their text; a float is flagged (the caller reads again).
    Fast,
    /// Every number as the text it was written with (slower: each field is captured raw).
    Exact,
}

fn parse_with(text: &str, numbers: Numbers, float_seen: &Cell<bool>) -> serde_json::Result<Store> {
    let mut de = serde_json::Deserializer::from_str(text);
    let store = StoreSeed {
        numbers,
        float_seen,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(store)
}

struct StoreSeed<'a> {
    numbers: Numbers,
    float_seen: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for StoreSeed<'_> {
    type Value = Store;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Store, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for StoreSeed<'_> {
    type Value = Store;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a store object { \"schema_version\": 1, \"facts\": [...] }")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Store, A::Error> {
        let mut store = Store::empty();
        let mut seen_facts = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "facts" => {
                    if seen_facts {
                        return Err(de::Error::custom("the key `facts` appears twice"));
                    }
                    seen_facts = true;
                    store.facts = map.next_value_seed(FactsSeed {
                        numbers: self.numbers,
                        float_seen: self.float_seen,
                    })?;
                }
                "schema_version" => store.schema_version = Some(map.next_value()?),
                _ => {
                    let v: Value = map.next_value()?;
                    store.extra.insert(key, v);
                }
            }
        }
        Ok(store)
    }
}

struct FactsSeed<'a> {
    numbers: Numbers,
    float_seen: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for FactsSeed<'_> {
    type Value = Vec<Fact>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Fact>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FactsSeed<'_> {
    type Value = Vec<Fact>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`facts` to be an array of fact objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Fact>, A::Error> {
        let mut facts = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(fact) = seq.next_element_seed(FactSeed {
            n: facts.len(),
            numbers: self.numbers,
            float_seen: self.float_seen,
        })? {
            facts.push(fact);
        }
        Ok(facts)
    }
}

/// Deserialises fact number `n` (0-based; messages say `facts[n]`).
struct FactSeed<'a> {
    n: usize,
    numbers: Numbers,
    float_seen: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for FactSeed<'_> {
    type Value = Fact;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fact, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FactSeed<'_> {
    type Value = Fact;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "facts[{}] to be a fact object", self.n)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fact, A::Error> {
        let n = self.n;
        let mut fact = Fact::default();
        while let Some(key) = map.next_key::<FactKey>()? {
            let slot = match key {
                FactKey::Unknown(key) => {
                    let value: Value = map.next_value()?;
                    fact.extra.insert(key, value);
                    continue;
                }
                FactKey::Tags => {
                    let tags: Option<Vec<Lenient>> = map.next_value().map_err(|e| {
                        de::Error::custom(format!(
                            "facts[{n}].tags must be an array of strings: {e}"
                        ))
                    })?;
                    fact.tags = tags.unwrap_or_default().into_iter().map(|t| t.0).collect();
                    continue;
                }
                FactKey::Id => &mut fact.id,
                FactKey::Topic => &mut fact.topic,
                FactKey::Statement => &mut fact.statement,
                FactKey::Value => &mut fact.value,
                FactKey::Unit => &mut fact.unit,
                FactKey::Details => &mut fact.details,
                FactKey::Source => &mut fact.source,
                FactKey::Timestamp => &mut fact.timestamp,
            };
            let name = key.name();
            let bit = 1 << FACT_FIELDS.iter().position(|f| *f == name).unwrap_or(0);
            if self.numbers == Numbers::Fast {
                let Lenient(text, number) = map
                    .next_value()
                    .map_err(|e| de::Error::custom(format!("facts[{n}].{name}: {e}")))?;
                *slot = text;
                match number {
                    Some(NumberKind::Integer) => fact.numeric |= bit,
                    Some(NumberKind::Float) => self.float_seen.set(true),
                    None => {}
                }
                continue;
            }
            let raw: Box<serde_json::value::RawValue> = map
                .next_value()
                .map_err(|e| de::Error::custom(format!("facts[{n}].{name}: {e}")))?;
            let raw = raw.get();
            if raw.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                // A number keeps the text it was written with (a 30-digit integer included).
                *slot = raw.to_owned();
                fact.numeric |= bit;
            } else if raw.starts_with(['[', '{']) {
                let got = if raw.starts_with('[') {
                    "an array"
                } else {
                    "an object"
                };
                return Err(de::Error::custom(format!(
                    "facts[{n}].{name} must be a string, a number, a boolean or null (got {got})"
                )));
            } else {
                // A string, a boolean or null: valid JSON already, so this cannot fail.
                *slot = serde_json::from_str::<Lenient>(raw)
                    .map_err(|e| de::Error::custom(format!("facts[{n}].{name}: {e}")))?
                    .0;
            }
        }
        Ok(fact)
    }
}

/// A fact's key, read without allocating for the nine known ones.
enum FactKey {
    Id,
    Topic,
    Statement,
    Value,
    Unit,
    Details,
    Source,
    Timestamp,
    Tags,
    Unknown(String),
}

impl FactKey {
    fn name(&self) -> &str {
        match self {
            FactKey::Id => "id",
            FactKey::Topic => "topic",
            FactKey::Statement => "statement",
            FactKey::Value => "value",
            FactKey::Unit => "unit",
            FactKey::Details => "details",
            FactKey::Source => "source",
            FactKey::Timestamp => "timestamp",
            FactKey::Tags => "tags",
            FactKey::Unknown(k) => k,
        }
    }
}

impl<'de> Deserialize<'de> for FactKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FactKey, D::Error> {
        d.deserialize_identifier(FactKeyVisitor)
    }
}

struct FactKeyVisitor;

impl Visitor<'_> for FactKeyVisitor {
    type Value = FactKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<FactKey, E> {
        Ok(match v {
            "id" => FactKey::Id,
            "topic" => FactKey::Topic,
            "statement" => FactKey::Statement,
            "value" => FactKey::Value,
            "unit" => FactKey::Unit,
            "details" => FactKey::Details,
            "source" => FactKey::Source,
            "timestamp" => FactKey::Timestamp,
            "tags" => FactKey::Tags,
            other => FactKey::Unknown(other.to_owned()),
        })
    }
}

/// Which kind of number a [`Lenient`] string was written as.
#[derive(Clone, Copy)]
enum NumberKind {
    /// An integer of at most 64 bits: its text is exactly as written.
    Integer,
    /// A float, or an integer too big for 64 bits: its text went through an `f64`.
    Float,
}

/// A string read leniently: numbers and booleans as their JSON text, `null` as `""`; arrays and
/// objects are errors. The second field says when it was a number.
struct Lenient(String, Option<NumberKind>);

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lenient, D::Error> {
        d.deserialize_any(LenientVisitor)
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Lenient;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Lenient, E> {
        Ok(Lenient(v.to_owned(), None))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Lenient, E> {
        Ok(Lenient(v, None))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Lenient, E> {
        Ok(Lenient(v.to_string(), None))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Lenient, E> {
        Ok(Lenient(v.to_string(), Some(NumberKind::Integer)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Lenient, E> {
        Ok(Lenient(v.to_string(), Some(NumberKind::Integer)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Lenient, E> {
        Ok(Lenient(Value::from(v).to_string(), Some(NumberKind::Float)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lenient, E> {
        Ok(Lenient(String::new(), None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Lenient, E> {
        Ok(Lenient(String::new(), None))
    }
}
