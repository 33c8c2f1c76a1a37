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
    vocab: Vocab,
    /// Per fact, its analysis (kept so a rebuild after a save reuses it).
    analyzed: Vec<Analyzed>,
    /// `postings[term]`: the facts holding it, in fact order.
    postings: Vec<Vec<u32>>,
    /// `weights[term]`: per posting, the term's token weights summed per field; a search turns
    /// them into the posting's pseudo-frequency with its fact's `scale`
    /// ([`Index::frequencies`]), so a save does not recompute every posting.
    weights: Vec<FieldWeights>,
    /// Per fact, each field's BM25F factor: its weight over its length normalisation for the
    /// current average lengths ([`Index::refresh`]).
    scale: Vec<[f32; FIELDS]>,
    /// Per field, the summed lengths of every fact (whole numbers, so exact in any order).
    totals: [f64; FIELDS],
    /// Ids of prefix-matchable terms (words) some fact holds, sorted by text.
    words_sorted: Vec<u32>,
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
        let mut vocab = Vocab::default();
        let mut memo = Memo::default();
        let analyzed = store
            .facts
            .iter()
            .map(|fact| analyze(fact, &analyzer, &mut vocab, &mut memo))
            .collect();
        assemble(store, analyzer, vocab, analyzed)
    }

    /// The index of `store`, a later version of this index's store (after a save): a fact at
    /// the same position with the same indexed text keeps its analysis, so only new and changed
    /// facts are tokenised. Ranks exactly as [`Index::build`] of `store` does.
    pub fn rebuild(self, store: Store) -> Index {
        let Index {
            store: old,
            analyzer,
            vocab,
            analyzed: mut old_analyzed,
            ..
        } = self;
        let mut vocab = vocab;
        let mut memo = Memo::default();
        let analyzed = store
            .facts
            .iter()
            .enumerate()
            .map(|(i, fact)| match old.facts.get(i) {
                Some(before) if field_texts(before) == field_texts(fact) => {
                    std::mem::take(&mut old_analyzed[i])
                }
                _ => analyze(fact, &analyzer, &mut vocab, &mut memo),
            })
            .collect();
        assemble(store, analyzer, vocab, analyzed)
    }

    /// Applies a save's edits in place: each `(position, fact)` replaces the fact there, or
    /// appends it at the position one past the last (positions ascending). Only the edited facts
    /// are tokenised and only their postings move; then each fact's field factors follow the
    /// new average lengths. Ranks exactly as [`Index::build`] of the edited store does.
    pub fn update(&mut self, edits: Vec<(usize, Fact)>) {
        let mut memo = Memo::default();
        let mut moved = false;
        for (i, fact) in edits {
            if let Some(old) = self.store.facts.get(i) {
                if field_texts(old) == field_texts(&fact) {
                    // Only unindexed keys changed (a supersession mark): nothing to re-index.
                    self.store.facts[i] = fact;
                    continue;
                }
                self.remove_postings(i);
            }
            moved = true;
            let analyzed = analyze(&fact, &self.analyzer, &mut self.vocab, &mut memo);
            self.postings.resize_with(self.vocab.terms.len(), Vec::new);
            self.weights
                .resize_with(self.vocab.terms.len(), FieldWeights::default);
            let tags = lowered_tags(&fact);
            let id = lowered_id(&fact);
            if i < self.store.facts.len() {
                self.store.facts[i] = fact;
                self.analyzed[i] = analyzed;
                self.tags[i] = tags;
            } else {
                self.store.facts.push(fact);
                self.analyzed.push(analyzed);
                self.tags.push(tags);
            }
            let docs = self.ids.entry(id).or_default();
            let at = docs.partition_point(|&d| (d as usize) < i);
            docs.insert(at, i as u32);
            self.insert_postings(i);
        }
        if moved {
            self.refresh();
        }
    }

    /// Takes fact `i`'s postings, lengths and id out of the index (before it is replaced).
    fn remove_postings(&mut self, i: usize) {
        let doc = i as u32;
        for (term, _) in summed(&self.analyzed[i]) {
            let t = term as usize;
            if let Ok(at) = self.postings[t].binary_search(&doc) {
                self.postings[t].remove(at);
                self.weights[t].remove(at);
                if self.postings[t].is_empty() && self.vocab.prefixable[t] {
                    let text = self.vocab.terms[t].as_str();
                    let vocab = &self.vocab;
                    if let Ok(w) = self
                        .words_sorted
                        .binary_search_by(|&w| vocab.terms[w as usize].as_str().cmp(text))
                    {
                        self.words_sorted.remove(w);
                    }
                }
            }
        }
        for (total, len) in self.totals.iter_mut().zip(self.analyzed[i].len) {
            *total -= f64::from(len);
        }
        let id = lowered_id(&self.store.facts[i]);
        if let Some(docs) = self.ids.get_mut(&id) {
            docs.retain(|&d| d != doc);
            if docs.is_empty() {
                self.ids.remove(&id);
            }
        }
    }

    /// Puts fact `i`'s analysis into the postings (its field factors left for [`Index::refresh`]).
    fn insert_postings(&mut self, i: usize) {
        let doc = i as u32;
        for (term, sums) in summed(&self.analyzed[i]) {
            let t = term as usize;
            let at = self.postings[t].partition_point(|&d| d < doc);
            if self.postings[t].is_empty() && self.vocab.prefixable[t] {
                let text = self.vocab.terms[t].as_str();
                let vocab = &self.vocab;
                let w = self
                    .words_sorted
                    .partition_point(|&w| vocab.terms[w as usize].as_str() < text);
                self.words_sorted.insert(w, term);
            }
            self.postings[t].insert(at, doc);
            self.weights[t].insert(at, &sums);
        }
        for (total, len) in self.totals.iter_mut().zip(self.analyzed[i].len) {
            *total += f64::from(len);
        }
    }

    /// Recomputes each fact's field factors from the average lengths: one row per fact, not one
    /// per posting.
    fn refresh(&mut self) {
        let n = self.analyzed.len();
        let avg: Vec<f32> = self
            .totals
            .iter()
            .map(|t| {
                if n == 0 {
                    1.0
                } else {
                    ((t / n as f64) as f32).max(1.0)
                }
            })
            .collect();
        self.scale = self
            .analyzed
            .iter()
            .map(|a| {
                std::array::from_fn(|f| {
                    let norm = 1.0 - FIELD_B[f] + FIELD_B[f] * a.len[f] / avg[f];
                    FIELD_WEIGHT[f] / norm.max(0.05)
                })
            })
            .collect();
    }

    /// Term `t`'s postings with their pseudo-frequencies: each field's summed weight times its
    /// fact's factor, summed.
    fn frequencies(&self, t: usize) -> impl Iterator<Item = (u32, f32)> + '_ {
        let weights = &self.weights[t];
        let mut sums = weights.sums.iter();
        self.postings[t]
            .iter()
            .zip(&weights.masks)
            .map(move |(&doc, &mask)| {
                let mut tf = 0f32;
                for (f, s) in self.scale[doc as usize].iter().enumerate() {
                    if mask & (1 << f) != 0 {
                        tf += s * sums.next().copied().unwrap_or(0.0);
                    }
                }
                (doc, tf)
            })
    }

    /// The id of the term `text` when some fact holds it (after a rebuild the vocabulary can
    /// still name a term only a replaced fact held).
    fn term(&self, text: &str) -> Option<u32> {
        self.vocab
            .ids
            .get(text)
            .copied()
            .filter(|&t| !self.postings[t as usize].is_empty())
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
            let exact_term = self.term(text);
            let exact = exact_term.map(|t| &self.postings[t as usize]);
            if let Some(t) = exact_term {
                let w = idf(self.postings[t as usize].len());
                if kind.in_phrase() {
                    phrase_idf += w;
                }
                for (d, tf) in self.frequencies(t as usize) {
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
                    .partition_point(|&t| self.vocab.terms[t as usize].as_str() < text.as_str());
                for &t in &self.words_sorted[start..] {
                    let word = &self.vocab.terms[t as usize];
                    if !word.starts_with(text.as_str()) {
                        break;
                    }
                    if word == text {
                        continue;
                    }
                    for (d, tf) in self.frequencies(t as usize) {
                        let has_exact = exact.is_some_and(|p| p.binary_search(&d).is_ok());
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
            .map(|t| self.term(&t.text))
            .collect::<Option<Vec<u32>>>()
            .unwrap_or_default();
        if phrase.len() >= 2 {
            let bonus = PHRASE_FACTOR * phrase_idf;
            for &d in &touched {
                let seq = &self.analyzed[d as usize].seq;
                if seq.windows(phrase.len()).any(|w| w == phrase.as_slice()) {
                    acc[d as usize] += bonus;
                }
            }
        }
        // Id bonus.
        if let Some(docs) = self.ids.get(&query.trim().to_lowercase()) {
            let bonus: f32 = distinct
                .iter()
                .filter_map(|(t, _)| self.term(t))
                .map(|t| idf(self.postings[t as usize].len()))
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
/// Term ids in order of first appearance. A rebuild keeps them and appends new terms, so a
/// term's id may differ from a fresh build's; no ranking depends on it.
#[derive(Debug, Default)]
struct Vocab {
    ids: FastMap<String, u32>,
    terms: Vec<String>,
    /// Per term: a word the prefix fallback may match.
    prefixable: Vec<bool>,
}

/// One fact's analysis, a function of its indexed text alone: `(term, field, token weight)` per
/// token, field lengths, and its phrase sequence (term ids, fields separated by [`SEP`]).
#[derive(Debug, Default)]
struct Analyzed {
    entries: Vec<(u32, u8, f32)>,
    len: [f32; FIELDS],
    seq: Vec<u32>,
}

fn analyze(fact: &Fact, analyzer: &Analyzer, vocab: &mut Vocab, memo: &mut Memo) -> Analyzed {
    let mut out = Analyzed::default();
    let mut tokens: Vec<Token> = Vec::new();
    for (field, texts) in field_texts(fact).iter().enumerate() {
        for text in texts {
            tokens.clear();
            analyzer.analyze_memo(text, &mut tokens, memo);
            if tokens.is_empty() {
                continue;
            }
            if !out.seq.is_empty() {
                out.seq.push(SEP);
            }
            for tok in tokens.drain(..) {
                let kind = tok.kind;
                let id = *vocab.ids.entry(tok.text).or_insert_with_key(|text| {
                    vocab.terms.push(text.clone());
                    vocab.prefixable.push(
                        matches!(kind, Kind::Word | Kind::Joined)
                            && !text.chars().any(crate::text::is_cjk),
                    );
                    (vocab.terms.len() - 1) as u32
                });
                if kind.in_phrase() {
                    out.len[field] += 1.0;
                    out.seq.push(id);
                }
                out.entries.push((id, field as u8, kind.weight()));
            }
        }
    }
    out
}

/// Pass 2: the postings with each fact's summed field weights, the field factors for the
/// average field lengths ([`Index::refresh`]), the prefix word list, tags and ids.
fn assemble(store: Store, analyzer: Analyzer, vocab: Vocab, analyzed: Vec<Analyzed>) -> Index {
    let mut totals = [0f64; FIELDS];
    for a in &analyzed {
        for (t, l) in totals.iter_mut().zip(a.len) {
            *t += f64::from(l);
        }
    }
    let mut postings: Vec<Vec<u32>> = vec![Vec::new(); vocab.terms.len()];
    let mut weights: Vec<FieldWeights> = Vec::new();
    weights.resize_with(vocab.terms.len(), FieldWeights::default);
    for (doc, a) in analyzed.iter().enumerate() {
        for (term, sums) in summed(a) {
            postings[term as usize].push(doc as u32);
            weights[term as usize].push(&sums);
        }
    }
    // A term only a replaced fact held has no postings: left out, as a fresh build never had it.
    let mut words_sorted: Vec<u32> = (0..vocab.terms.len() as u32)
        .filter(|&t| vocab.prefixable[t as usize] && !postings[t as usize].is_empty())
        .collect();
    words_sorted.sort_unstable_by(|a, b| vocab.terms[*a as usize].cmp(&vocab.terms[*b as usize]));
    let tags = store.facts.iter().map(lowered_tags).collect();
    let mut ids: FastMap<String, Vec<u32>> = FastMap::default();
    for (i, f) in store.facts.iter().enumerate() {
        ids.entry(lowered_id(f)).or_default().push(i as u32);
    }
    let mut index = Index {
        store,
        analyzer,
        vocab,
        analyzed,
        postings,
        weights,
        scale: Vec::new(),
        totals,
        words_sorted,
        tags,
        ids,
    };
    index.refresh();
    index
}

/// A fact's tags as the tag filter compares them.
fn lowered_tags(fact: &Fact) -> Vec<String> {
    fact.tags.iter().map(|t| t.trim().to_lowercase()).collect()
}

/// A fact's id as the id bonus compares it.
fn lowered_id(fact: &Fact) -> String {
    fact.id.trim().to_lowercase()
}

/// One fact's terms, ascending, each with its token weights summed per field (in token order).
fn summed(a: &Analyzed) -> Vec<(u32, [f32; FIELDS])> {
    let mut entries = a.entries.clone();
    entries.sort_by_key(|e| e.0);
    let mut out: Vec<(u32, [f32; FIELDS])> = Vec::new();
    for (term, field, w) in entries {
        match out.last_mut() {
            Some((t, sums)) if *t == term => sums[usize::from(field)] += w,
            _ => {
                let mut sums = [0f32; FIELDS];
                sums[usize::from(field)] = w;
                out.push((term, sums));
            }
        }
    }
    out
}

/// The mask of the fields with a nonzero sum, and those sums in field order.
fn packed(sums: &[f32; FIELDS]) -> (u8, impl Iterator<Item = f32> + '_) {
    let mask = sums
        .iter()
        .enumerate()
        .filter(|(_, s)| **s != 0.0)
        .fold(0u8, |m, (f, _)| m | 1 << f);
    (mask, sums.iter().copied().filter(|s| *s != 0.0))
}

/// One term's summed field weights, per posting: a mask of the fields holding it and, packed,
/// the sums of those fields (most terms sit in one field of a fact, so this is about five bytes a
/// posting where a full row would be twenty-four).
#[derive(Debug, Default)]
struct FieldWeights {
    masks: Vec<u8>,
    sums: Vec<f32>,
}

impl FieldWeights {
    /// Appends a posting's sums.
    fn push(&mut self, sums: &[f32; FIELDS]) {
        let (mask, present) = packed(sums);
        self.masks.push(mask);
        self.sums.extend(present);
    }

    /// Inserts a posting's sums at posting position `at`.
    fn insert(&mut self, at: usize, sums: &[f32; FIELDS]) {
        let offset = self.offset(at);
        let (mask, present) = packed(sums);
        self.masks.insert(at, mask);
        self.sums.splice(offset..offset, present);
    }

    /// Removes the posting at position `at`.
    fn remove(&mut self, at: usize) {
        let offset = self.offset(at);
        let mask = self.masks.remove(at);
        self.sums.drain(offset..offset + mask.count_ones() as usize);
    }

    /// Where the sums of posting `at` start.
    fn offset(&self, at: usize) -> usize {
        if at == self.masks.len() {
            return self.sums.len();
        }
        self.masks[..at]
            .iter()
            .map(|m| m.count_ones() as usize)
            .sum()
    }
}

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
