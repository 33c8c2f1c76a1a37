//! The search index: built once from a store snapshot, then searched many times.
//!
//! The driver caches an [`Index`] keyed by what identifies the file version it read (mtime and
//! size, or a content hash) and rebuilds it only when that changes, so repeated recalls neither
//! re-parse nor re-tokenise an unchanged store.
//!
//! Ranking is BM25F over five indexed fields plus `value`/`unit`:
//!
//! | field | weight | length normalisation `b` |
//! |---|---|---|
//! | id (split into segments) | 3.0 | 0.3 |
//! | topic | 2.0 | 0 |
//! | tags | 2.0 | 0.3 |
//! | statement | 1.0 | 0.75 |
//! | details | 0.5 | 0.75 |
//! | value and unit | 0.5 | 0 |
//!
//! A term's pseudo-frequency in a fact is the sum over fields of weight × token weight ×
//! occurrences / (1 − b + b × length / average length); its contribution is
//! `idf × tf (k1 + 1) / (k1 + tf)` with `k1 = 1.2` and `idf = ln(1 + (N − df + 0.5) / (df + 0.5))`
//! (always positive and finite). On top of that:
//!
//! - **prefix fallback**: a query word of three or more characters that a fact does not contain
//!   as a whole word matches the fact's words that start with it (`ray` → `raytracer`), at
//!   [`PREFIX_FACTOR`] of a whole-word match, once per fact (the best such word);
//! - **phrase bonus**: when the query's content words (two or more) appear contiguously, in order,
//!   in one field of the fact, it gains [`PHRASE_FACTOR`] × the sum of their idf;
//! - **id bonus**: a query that is exactly a fact's id (ignoring case and surrounding space)
//!   gains the sum of its terms' idf;
//! - **order**: the current project's facts first (when recall names a project), then score
//!   (rounded to three decimals, the precision shown) descending, then id ascending byte-wise,
//!   then file position: deterministic, and the same on every platform.

use crate::store::{Fact, Store};
use crate::text::{Analyzer, FastMap, Kind, Memo, Token};

/// BM25 saturation.
const K1: f32 = 1.2;
/// Share of a whole-word match a prefix match earns.
pub const PREFIX_FACTOR: f32 = 0.5;
/// Phrase bonus, as a share of the phrase terms' summed idf.
pub const PHRASE_FACTOR: f32 = 0.5;
/// Shortest query word (in characters) that may match by prefix.
pub const MIN_PREFIX_CHARS: usize = 3;

const FIELDS: usize = 6;
const FIELD_WEIGHT: [f32; FIELDS] = [3.0, 2.0, 2.0, 1.0, 0.5, 0.5];
const FIELD_B: [f32; FIELDS] = [0.3, 0.0, 0.3, 0.75, 0.75, 0.0];
/// Separates fields in a fact's phrase sequence.
const SEP: u32 = u32::MAX;

/// One ranked result: the fact's position in the store and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Index into [`Store::facts`].
    pub fact: usize,
    /// The score, rounded to three decimals.
    pub score: f64,
}

/// Ranked results of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// The best `limit` hits, best first.
    pub hits: Vec<Hit>,
    /// How many facts scored above zero (and passed the tag filter) before the cut to `limit`.
    pub total: usize,
}

/// A store snapshot with its inverted index.
#[derive(Debug)]
pub struct Index {
    store: Store,
    analyzer: Analyzer,
    vocab: FastMap<String, u32>,
    terms: Vec<String>,
    /// `postings[term]`: `(fact, pseudo-frequency)` in fact order.
    postings: Vec<Vec<(u32, f32)>>,
    /// Ids of prefix-matchable terms (words), sorted by text.
    words_sorted: Vec<u32>,
    /// Per fact, its phrase sequences (term ids), fields separated by [`SEP`].
    sequences: Vec<Vec<u32>>,
    /// Per fact, its lowercased tags.
    tags: Vec<Vec<String>>,
    /// Lowercased id → facts with that id.
    ids: FastMap<String, Vec<u32>>,
}

impl Index {
    /// Indexes `store`, taking ownership (recall answers read the facts from it).
    pub fn build(store: Store) -> Index {
        Index::build_with(store, Analyzer::new(true))
    }

    /// Indexes `store` without the concept table: plain keyword ranking, the baseline the recall
    /// bench measures the table against. Not for the tools.
    pub fn build_keyword_only(store: Store) -> Index {
        Index::build_with(store, Analyzer::new(false))
    }

    fn build_with(store: Store, analyzer: Analyzer) -> Index {
        let n = store.facts.len();
        let mut vocab: FastMap<String, u32> = FastMap::default();
        let mut terms: Vec<String> = Vec::new();
        let mut prefixable: Vec<bool> = Vec::new();
        // Pass 1: per fact, (term, field, weighted count) and field lengths.
        let mut per_fact: Vec<Vec<(u32, u8, f32)>> = Vec::with_capacity(n);
        let mut lengths: Vec<[f32; FIELDS]> = Vec::with_capacity(n);
        let mut sequences = Vec::with_capacity(n);
        let mut tokens: Vec<Token> = Vec::new();
        let mut memo = Memo::default();
        let mut totals = [0f64; FIELDS];
        for fact in &store.facts {
            let mut entries: Vec<(u32, u8, f32)> = Vec::new();
            let mut len = [0f32; FIELDS];
            let mut seq: Vec<u32> = Vec::new();
            for (field, texts) in field_texts(fact).iter().enumerate() {
                for text in texts {
                    tokens.clear();
                    analyzer.analyze_memo(text, &mut tokens, &mut memo);
                    if tokens.is_empty() {
                        continue;
                    }
                    if !seq.is_empty() {
                        seq.push(SEP);
                    }
                    for tok in tokens.drain(..) {
                        let kind = tok.kind;
                        let id = *vocab.entry(tok.text).or_insert_with_key(|text| {
                            terms.push(text.clone());
                            prefixable.push(
                                matches!(kind, Kind::Word | Kind::Joined)
                                    && !text.chars().any(crate::text::is_cjk),
                            );
                            (terms.len() - 1) as u32
                        });
                        if kind.in_phrase() {
                            len[field] += 1.0;
                            seq.push(id);
                        }
                        entries.push((id, field as u8, kind.weight()));
                    }
                }
            }
            for (t, l) in totals.iter_mut().zip(len) {
                *t += f64::from(l);
            }
            per_fact.push(entries);
            lengths.push(len);
            sequences.push(seq);
        }
        let avg: Vec<f32> = totals
            .iter()
            .map(|t| {
                if n == 0 {
                    1.0
                } else {
                    ((t / n as f64) as f32).max(1.0)
                }
            })
            .collect();
        // Pass 2: pseudo-frequencies into postings.
        let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); terms.len()];
        let mut acc: FastMap<u32, f32> = FastMap::default();
        for (doc, entries) in per_fact.into_iter().enumerate() {
            acc.clear();
            let len = &lengths[doc];
            for (term, field, w) in entries {
                let f = usize::from(field);
                let norm = 1.0 - FIELD_B[f] + FIELD_B[f] * len[f] / avg[f];
                *acc.entry(term).or_insert(0.0) += FIELD_WEIGHT[f] * w / norm.max(0.05);
            }
            for (&term, &tf) in &acc {
                postings[term as usize].push((doc as u32, tf));
            }
        }
        let mut words_sorted: Vec<u32> = (0..terms.len() as u32)
            .filter(|&t| prefixable[t as usize])
            .collect();
        words_sorted.sort_unstable_by(|a, b| terms[*a as usize].cmp(&terms[*b as usize]));
        let tags = store
            .facts
            .iter()
            .map(|f| f.tags.iter().map(|t| t.trim().to_lowercase()).collect())
            .collect();
        let mut ids: FastMap<String, Vec<u32>> = FastMap::default();
        for (i, f) in store.facts.iter().enumerate() {
            ids.entry(f.id.trim().to_lowercase())
                .or_default()
                .push(i as u32);
        }
        Index {
            store,
            analyzer,
            vocab,
            terms,
            postings,
            words_sorted,
            sequences,
            tags,
            ids,
        }
    }

    /// The store this index was built from.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Gives the store back.
    pub fn into_store(self) -> Store {
        self.store
    }

    /// Facts (in file order) carrying every tag in `tags`, ignoring case; all facts for no tags.
    pub fn filter(&self, tags: &[String]) -> Vec<usize> {
        let want: Vec<String> = tags.iter().map(|t| t.trim().to_lowercase()).collect();
        (0..self.store.facts.len())
            .filter(|&i| want.iter().all(|w| self.tags[i].contains(w)))
            .collect()
    }

    /// Ranks facts for `query`, keeping those that carry every tag in `tags`, best `limit` first.
    pub fn search(&self, query: &str, tags: &[String], limit: usize) -> Ranking {
        let allowed = (!tags.is_empty()).then(|| self.mask(&self.filter(tags)));
        self.search_within(query, allowed.as_deref(), None, limit)
    }

    /// `true` at each of `facts` (positions), `false` elsewhere.
    pub fn mask(&self, facts: &[usize]) -> Vec<bool> {
        let mut v = vec![false; self.store.facts.len()];
        for &i in facts {
            v[i] = true;
        }
        v
    }

    /// Ranks the facts `allowed` marks (all for `None`) for `query`, best `limit` first; facts
    /// `first` marks rank before every other fact, whatever their scores.
    pub fn search_within(
        &self,
        query: &str,
        allowed: Option<&[bool]>,
        first: Option<&[bool]>,
        limit: usize,
    ) -> Ranking {
        let n = self.store.facts.len();
        let ok = |d: usize| allowed.is_none_or(|a| a[d]);
        let tier = |d: u32| first.is_some_and(|f| f[d as usize]);
        let mut tokens = Vec::new();
        self.analyzer.analyze(query, &mut tokens);
        // Distinct query terms, in order of first appearance.
        let mut distinct: Vec<(String, Kind)> = Vec::new();
        for tok in &tokens {
            if !distinct.iter().any(|(t, _)| *t == tok.text) {
                distinct.push((tok.text.clone(), tok.kind));
            }
        }
        let mut acc = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        let nf = n as f32;
        let idf = |df: usize| (1.0 + (nf - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
        let sat = |tf: f32| tf * (K1 + 1.0) / (K1 + tf);
        let mut phrase_idf = 0f32;
        for (text, kind) in &distinct {
            let exact = self.vocab.get(text).map(|&t| &self.postings[t as usize]);
            if let Some(post) = exact {
                let w = idf(post.len());
                if kind.in_phrase() {
                    phrase_idf += w;
                }
                for &(d, tf) in post {
                    if ok(d as usize) {
                        bump(&mut acc, &mut touched, d, w * sat(tf));
                    }
                }
            }
            let chars = text.chars().count();
            if matches!(kind, Kind::Word) && chars >= MIN_PREFIX_CHARS && !text.starts_with('~') {
                let mut cand: Vec<(u32, f32)> = Vec::new();
                let start = self
                    .words_sorted
                    .partition_point(|&t| self.terms[t as usize].as_str() < text.as_str());
                for &t in &self.words_sorted[start..] {
                    let word = &self.terms[t as usize];
                    if !word.starts_with(text.as_str()) {
                        break;
                    }
                    if word == text {
                        continue;
                    }
                    for &(d, tf) in &self.postings[t as usize] {
                        let has_exact =
                            exact.is_some_and(|p| p.binary_search_by_key(&d, |x| x.0).is_ok());
                        if ok(d as usize) && !has_exact {
                            cand.push((d, tf));
                        }
                    }
                }
                if !cand.is_empty() {
                    cand.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
                    cand.dedup_by_key(|x| x.0);
                    let df = cand.len() + exact.map_or(0, Vec::len);
                    let w = PREFIX_FACTOR * idf(df);
                    for (d, tf) in cand {
                        bump(&mut acc, &mut touched, d, w * sat(tf));
                    }
                }
            }
        }
        // Phrase bonus.
        let phrase: Vec<u32> = tokens
            .iter()
            .filter(|t| t.kind.in_phrase())
            .map(|t| self.vocab.get(&t.text).copied())
            .collect::<Option<Vec<u32>>>()
            .unwrap_or_default();
        if phrase.len() >= 2 {
            let bonus = PHRASE_FACTOR * phrase_idf;
            for &d in &touched {
                let seq = &self.sequences[d as usize];
                if seq.windows(phrase.len()).any(|w| w == phrase.as_slice()) {
                    acc[d as usize] += bonus;
                }
            }
        }
        // Id bonus.
        if let Some(docs) = self.ids.get(&query.trim().to_lowercase()) {
            let bonus: f32 = distinct
                .iter()
                .filter_map(|(t, _)| self.vocab.get(t))
                .map(|&t| idf(self.postings[t as usize].len()))
                .sum::<f32>()
                .max(1.0);
            for &d in docs {
                if ok(d as usize) {
                    bump(&mut acc, &mut touched, d, bonus);
                }
            }
        }
        let mut hits: Vec<(i64, u32)> = touched
            .iter()
            .map(|&d| ((f64::from(acc[d as usize]) * 1000.0).round() as i64, d))
            .filter(|(s, _)| *s > 0)
            .collect();
        let total = hits.len();
        let facts = &self.store.facts;
        let order = |a: &(i64, u32), b: &(i64, u32)| {
            tier(b.1)
                .cmp(&tier(a.1))
                .then(b.0.cmp(&a.0))
                .then_with(|| facts[a.1 as usize].id.cmp(&facts[b.1 as usize].id))
                .then(a.1.cmp(&b.1))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        Ranking {
            hits: hits
                .into_iter()
                .map(|(s, d)| Hit {
                    fact: d as usize,
                    score: s as f64 / 1000.0,
                })
                .collect(),
            total,
        }
    }
}

/// Adds `s` to fact `d`'s score, noting the fact the first time it scores.
fn bump(acc: &mut [f32], touched: &mut Vec<u32>, d: u32, s: f32) {
    if acc[d as usize] == 0.0 {
        touched.push(d);
    }
    acc[d as usize] += s;
}

/// The texts of each field, in [`FIELD_WEIGHT`] order.
fn field_texts(fact: &Fact) -> [Vec<&str>; FIELDS] {
    [
        vec![fact.id.as_str()],
        vec![fact.topic.as_str()],
        fact.tags.iter().map(String::as_str).collect(),
        vec![fact.statement.as_str()],
        vec![fact.details.as_str()],
        vec![fact.value.as_str(), fact.unit.as_str()],
    ]
}
