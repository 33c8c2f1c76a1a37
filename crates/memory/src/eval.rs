//! Recall quality measurement: hit@1, hit@3 and MRR of labelled questions against a store, per
//! category and overall. Pure: the caller supplies the questions' JSON and the store.

use crate::index::Index;
use serde::Deserialize;
use std::collections::BTreeMap;

/// How deep a question's expected fact is looked for; deeper counts as a miss (reciprocal rank 0).
pub const DEPTH: usize = 10;

/// One labelled question.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Question {
    /// What is asked.
    pub query: String,
    /// The id of the fact that answers it.
    pub expect: String,
    /// A category (`keyword`, `stem`, `prefix`, `dotted id`, `phrase`, `chinese`, `crosslang`,
    /// `paraphrase`).
    pub category: String,
}

/// Parses a JSON array of questions.
pub fn parse_questions(text: &str) -> Result<Vec<Question>, String> {
    serde_json::from_str(text).map_err(|e| format!("questions: {e}"))
}

/// Where one question's expected fact ranked.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The question.
    pub question: Question,
    /// 1-based rank of the expected fact within [`DEPTH`], if found.
    pub rank: Option<usize>,
    /// The ids ranked first (up to three).
    pub top: Vec<String>,
}

/// Aggregate scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scores {
    /// Questions.
    pub n: usize,
    /// Share with the expected fact first.
    pub hit1: f64,
    /// Share with the expected fact in the top three.
    pub hit3: f64,
    /// Mean reciprocal rank.
    pub mrr: f64,
}

/// Runs every question against `index`.
pub fn evaluate(index: &Index, questions: &[Question]) -> Vec<Outcome> {
    questions
        .iter()
        .map(|q| {
            let ranking = index.search(&q.query, &[], DEPTH);
            let ids: Vec<&str> = ranking
                .hits
                .iter()
                .map(|h| index.store().facts[h.fact].id.as_str())
                .collect();
            Outcome {
                question: q.clone(),
                rank: ids.iter().position(|id| *id == q.expect).map(|p| p + 1),
                top: ids.iter().take(3).map(|s| (*s).to_owned()).collect(),
            }
        })
        .collect()
}

/// Scores a set of outcomes.
pub fn scores<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> Scores {
    let (mut n, mut h1, mut h3, mut rr) = (0usize, 0usize, 0usize, 0f64);
    for o in outcomes {
        n += 1;
        if let Some(r) = o.rank {
            h1 += usize::from(r == 1);
            h3 += usize::from(r <= 3);
            rr += 1.0 / r as f64;
        }
    }
    let d = n.max(1) as f64;
    Scores {
        n,
        hit1: h1 as f64 / d,
        hit3: h3 as f64 / d,
        mrr: rr / d,
    }
}

/// Scores per category (sorted by name) and overall.
pub fn by_category(outcomes: &[Outcome]) -> (Vec<(String, Scores)>, Scores) {
    let mut cats: BTreeMap<&str, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        cats.entry(o.question.category.as_str())
            .or_default()
            .push(o);
    }
    let rows = cats
        .into_iter()
        .map(|(c, os)| (c.to_owned(), scores(os)))
        .collect();
    (rows, scores(outcomes))
}

/// A plain-text table of [`by_category`], then every question not ranked first.
pub fn report(outcomes: &[Outcome]) -> String {
    let (rows, all) = by_category(outcomes);
    let mut out = format!(
        "{:<12} {:>3}  {:>6}  {:>6}  {:>6}\n",
        "category", "n", "hit@1", "hit@3", "MRR"
    );
    for (c, s) in rows
        .iter()
        .chain(std::iter::once(&("overall".to_owned(), all)))
    {
        out.push_str(&format!(
            "{:<12} {:>3}  {:>6.3}  {:>6.3}  {:>6.3}\n",
            c, s.n, s.hit1, s.hit3, s.mrr
        ));
    }
    let misses: Vec<&Outcome> = outcomes.iter().filter(|o| o.rank != Some(1)).collect();
    if !misses.is_empty() {
        out.push_str("\nnot first:\n");
        for o in misses {
            out.push_str(&format!(
                "  [{}] {:?}: expected {} at {}, top {:?}\n",
                o.question.category,
                o.question.query,
                o.question.expect,
                o.rank.map_or("-".to_owned(), |r| r.to_string()),
                o.top
            ));
        }
    }
    out
}
