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
    /// Answers `memory_recall` for an agent working in `project` (the repository root of its
    /// working directory, `None` outside one): ranked search when `args.query` is set, otherwise
    /// a listing, newest first (by timestamp, then later in the file first).
    ///
    /// Facts a later save superseded are hidden unless `include_superseded`, and facts scoped
    /// to another project unless `all_projects`; the answer counts what it hid. When searching,
    /// the current project's facts rank first.
    ///
    /// Success is `{ ok: true, mode: "search" | "list", query?, facts: [fact + score], count,
    /// total, offset, next_offset?, in_store, truncated, hidden?, note? }`: each fact has all
    /// its stored fields (unknown keys too) and, when searching, its `score`; `total` is how
    /// many facts matched before paging and the cut to `limit` and to [`MAX_ANSWER_BYTES`];
    /// `next_offset` is where the next page starts when facts are left; `note` says how to get
    /// them. Facts that score zero are left out.
    pub fn recall(&self, args: &RecallArgs, project: Option<&str>) -> Value {
        let store = self.store();
        let mut notes: Vec<String> = Vec::new();
        if let Some(asked) = args.limit_lowered_from {
            notes.push(format!(
                "limit {asked} was lowered to {}",
                args.limit.unwrap_or(0)
            ));
        }
        let candidates = self.filter(&args.tags);
        let mut hidden_superseded = 0;
        let mut hidden_projects = 0;
        let shown: Vec<usize> = candidates
            .into_iter()
            .filter(|&i| {
                let fact = &store.facts[i];
                if !args.include_superseded && fact.superseded_by().is_some() {
                    hidden_superseded += 1;
                    return false;
                }
                if !args.all_projects && fact.project().is_some_and(|p| Some(p) != project) {
                    hidden_projects += 1;
                    return false;
                }
                true
            })
            .collect();
        let offset = args.offset;
        let (mode, picked, total): (&str, Vec<(usize, Option<f64>)>, usize) = match &args.query {
            Some(q) => {
                let allowed = self.mask(&shown);
                let first: Option<Vec<bool>> =
                    project.map(|p| store.facts.iter().map(|f| f.project() == Some(p)).collect());
                let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
                let ranking = self.search_within(
                    q,
                    Some(&allowed),
                    first.as_deref(),
                    offset.saturating_add(limit),
                );
                let picked = ranking
                    .hits
                    .iter()
                    .skip(offset)
                    .map(|h| (h.fact, Some(h.score)))
                    .collect();
                ("search", picked, ranking.total)
            }
            None => {
                let total = shown.len();
                let cut = args.limit.unwrap_or(usize::MAX);
                (
                    "list",
                    newest_first(store, shown)
                        .into_iter()
                        .skip(offset)
                        .take(cut)
                        .map(|i| (i, None))
                        .collect(),
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
        let mut hidden = Vec::new();
        if hidden_superseded > 0 {
            hidden.push(format!(
                "{hidden_superseded} superseded (include_superseded: true shows them)"
            ));
        }
        if hidden_projects > 0 {
            hidden.push(format!(
                "{hidden_projects} of other projects (all_projects: true shows them)"
            ));
        }
        if !hidden.is_empty() {
            head.insert(
                "hidden".into(),
                json!({ "superseded": hidden_superseded, "other_projects": hidden_projects }),
            );
        }
        let facts = picked
            .iter()
            .map(|&(i, score)| fact_json(&store.facts[i], score));
        let page = Page {
            total,
            offset,
            in_store: store.facts.len(),
            hidden,
        };
        bounded(head, facts, &page, notes)
    }
}

/// Positions of `facts`, newest first: by timestamp descending (ISO-8601 UTC strings sort in
/// time order), then later in the file first (a save appends).
pub fn newest_first(store: &Store, mut facts: Vec<usize>) -> Vec<usize> {
    facts.sort_by(|&a, &b| {
        store.facts[b]
            .timestamp
            .cmp(&store.facts[a].timestamp)
            .then(b.cmp(&a))
    });
    facts
}

/// Where a page of answers sits among all that matched.
struct Page {
    total: usize,
    offset: usize,
    in_store: usize,
    /// What was hidden and how to show it, for the note.
    hidden: Vec<String>,
}

/// Answers `memory_recall` in one step from the store text (`None`: no store file yet).
/// A driver that recalls repeatedly should cache [`Index::build`] instead.
pub fn recall_text(text: Option<&str>, args: &RecallArgs) -> Result<Value, Failure> {
    let store = match text {
        None => Store::empty(),
        Some(t) => Store::parse(t)?,
    };
    Ok(Index::build(store).recall(args, None))
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
/// until the pretty JSON fits [`MAX_ANSWER_BYTES`]; says where the next page starts.
fn bounded(
    head: Map<String, Value>,
    candidates: impl Iterator<Item = Map<String, Value>>,
    page: &Page,
    mut notes: Vec<String>,
) -> Value {
    let build = |facts: &[Map<String, Value>], notes: &[String]| {
        let mut v = head.clone();
        let shown = facts.len();
        let next = page.offset.saturating_add(shown);
        v.insert(
            "facts".into(),
            Value::Array(facts.iter().cloned().map(Value::Object).collect()),
        );
        v.insert("count".into(), json!(shown));
        v.insert("total".into(), json!(page.total));
        v.insert("offset".into(), json!(page.offset));
        let more = next < page.total;
        if more {
            v.insert("next_offset".into(), json!(next));
        }
        v.insert("in_store".into(), json!(page.in_store));
        v.insert("truncated".into(), json!(more || !notes.is_empty()));
        let mut all = notes.to_vec();
        if more {
            all.push(format!(
                "showing {} to {} of {} matching facts; call memory_recall again with the same \
                 arguments and offset {next} for the next page",
                (page.offset + 1).min(next),
                next,
                page.total
            ));
        } else if page.offset > 0 && shown == 0 {
            all.push(format!(
                "offset {} is past the {} matching facts",
                page.offset, page.total
            ));
        }
        if !page.hidden.is_empty() {
            all.push(format!("hidden: {}", page.hidden.join(", ")));
        }
        if !all.is_empty() {
            v.insert("note".into(), json!(all.join("; ")));
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
