//! `memory_recall` answers, bounded to stay under DSH's 50 000-byte spill threshold.

use crate::args::{DEFAULT_LIMIT, RecallArgs};
use crate::failure::Failure;
use crate::index::Index;
use crate::store::{Fact, Store};
use serde_json::{Map, Value, json};

/// The most bytes a recall answer takes as two-space-indented JSON (the larger of the two usual
/// renderings; compact JSON is smaller). DSH spills text results over 50 000 UTF-8 bytes into a
/// file; this leaves 2 000 bytes for the host's own wrapping.
pub const MAX_ANSWER_BYTES: usize = 48_000;

impl Index {
    /// Answers `memory_recall`: ranked search when `args.query` is set, otherwise a listing in
    /// file order (all facts, or the first `limit` if a limit was given).
    ///
    /// Success is `{ ok: true, mode: "search" | "list", query?, facts: [fact + score], count,
    /// total, in_store, truncated, note? }`: each fact has all its stored fields (unknown keys
    /// too) and, when searching, its `score`; `total` is how many facts matched before the cut
    /// to `limit` and to [`MAX_ANSWER_BYTES`]; `truncated` says whether anything was cut and
    /// `note` says why and what to do. Facts that score zero are left out.
    pub fn recall(&self, args: &RecallArgs) -> Value {
        let store = self.store();
        let mut notes: Vec<String> = Vec::new();
        if let Some(asked) = args.limit_lowered_from {
            notes.push(format!(
                "limit {asked} was lowered to {}",
                args.limit.unwrap_or(0)
            ));
        }
        let (mode, picked, total): (&str, Vec<(usize, Option<f64>)>, usize) = match &args.query {
            Some(q) => {
                let ranking = self.search(q, &args.tags, args.limit.unwrap_or(DEFAULT_LIMIT));
                let picked = ranking
                    .hits
                    .iter()
                    .map(|h| (h.fact, Some(h.score)))
                    .collect();
                ("search", picked, ranking.total)
            }
            None => {
                let all = self.filter(&args.tags);
                let total = all.len();
                let cut = args.limit.unwrap_or(usize::MAX);
                (
                    "list",
                    all.into_iter().take(cut).map(|i| (i, None)).collect(),
                    total,
                )
            }
        };
        let mut head = Map::new();
        head.insert("ok".into(), Value::Bool(true));
        head.insert("mode".into(), Value::from(mode));
        if let Some(q) = &args.query {
            head.insert("query".into(), Value::from(q.as_str()));
        }
        if !args.tags.is_empty() {
            head.insert("tags".into(), json!(args.tags));
        }
        let facts = picked
            .iter()
            .map(|&(i, score)| fact_json(&store.facts[i], score));
        bounded(head, facts, total, store.facts.len(), notes)
    }
}

/// Answers `memory_recall` in one step from the store text (`None`: no store file yet).
/// A driver that recalls repeatedly should cache [`Index::build`] instead.
pub fn recall_text(text: Option<&str>, args: &RecallArgs) -> Result<Value, Failure> {
    let store = match text {
        None => Store::empty(),
        Some(t) => Store::parse(t)?,
    };
    Ok(Index::build(store).recall(args))
}

fn fact_json(fact: &Fact, score: Option<f64>) -> Map<String, Value> {
    let mut map = fact.to_json();
    if let Some(s) = score {
        map.insert("score".into(), json!(s));
    }
    map
}

fn pretty_len(v: &Value) -> usize {
    serde_json::to_string_pretty(v).map_or(usize::MAX, |s| s.len())
}

/// Puts `facts` under `head`, dropping facts from the end (and clipping a lone oversized fact)
/// until the pretty JSON fits [`MAX_ANSWER_BYTES`].
fn bounded(
    head: Map<String, Value>,
    candidates: impl Iterator<Item = Map<String, Value>>,
    total: usize,
    in_store: usize,
    mut notes: Vec<String>,
) -> Value {
    let build = |facts: &[Map<String, Value>], notes: &[String]| {
        let mut v = head.clone();
        let shown = facts.len();
        v.insert(
            "facts".into(),
            Value::Array(facts.iter().cloned().map(Value::Object).collect()),
        );
        v.insert("count".into(), json!(shown));
        v.insert("total".into(), json!(total));
        v.insert("in_store".into(), json!(in_store));
        v.insert(
            "truncated".into(),
            json!(shown < total || !notes.is_empty()),
        );
        if shown < total {
            let mut all = notes.to_vec();
            all.push(format!(
                "showing {shown} of {total} matching facts; ask with a narrower query, tags or \
                 a limit to see others"
            ));
            v.insert("note".into(), json!(all.join("; ")));
        } else if !notes.is_empty() {
            v.insert("note".into(), json!(notes.join("; ")));
        }
        Value::Object(v)
    };
    // Estimate per fact (its pretty size, indented three levels deeper), then verify exactly.
    let base = pretty_len(&build(&[], &notes)) + 200;
    let mut used = base;
    let mut facts: Vec<Map<String, Value>> = Vec::new();
    for mut f in candidates {
        let text = serde_json::to_string_pretty(&f).unwrap_or_default();
        let size = text.len() + 4 * text.lines().count() + 2;
        if used + size > MAX_ANSWER_BYTES {
            if facts.is_empty() {
                clip(&mut f, MAX_ANSWER_BYTES.saturating_sub(base));
                notes.push(format!(
                    "the first fact was clipped to fit {MAX_ANSWER_BYTES} bytes"
                ));
                facts.push(f);
            }
            break;
        }
        used += size;
        facts.push(f);
    }
    loop {
        let v = build(&facts, &notes);
        if pretty_len(&v) <= MAX_ANSWER_BYTES || facts.is_empty() {
            return v;
        }
        facts.pop();
    }
}

/// Shrinks one fact's JSON under `budget` bytes: drops unknown non-string keys, then halves the
/// longest strings; marks it `"clipped": true`.
fn clip(fact: &mut Map<String, Value>, budget: usize) {
    fact.insert("clipped".into(), Value::Bool(true));
    let size = |f: &Map<String, Value>| pretty_len(&Value::Object(f.clone())) * 5 / 4;
    let known = crate::store::FACT_FIELDS;
    if size(fact) > budget {
        fact.retain(|k, v| {
            known.contains(&k.as_str())
                || matches!(k.as_str(), "score" | "clipped")
                || v.is_string()
        });
    }
    let mut rounds = 0;
    while size(fact) > budget && rounds < 64 {
        rounds += 1;
        let longest = fact
            .iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.chars().count())))
            .max_by_key(|(_, n)| *n);
        match longest {
            Some((k, n)) if n > 16 => {
                let s = fact[&k].as_str().unwrap_or_default();
                let cut: String = s.chars().take(n / 2).collect();
                fact.insert(k, Value::String(format!("{cut}…")));
            }
            _ => {
                if let Some(Value::Array(tags)) = fact.get_mut("tags") {
                    tags.truncate(tags.len() / 2);
                    if !tags.is_empty() {
                        continue;
                    }
                }
                break;
            }
        }
    }
}
