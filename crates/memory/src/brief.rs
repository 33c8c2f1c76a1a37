//! The session-start brief: a short text naming what the store holds, put in front of a new
//! session's agent so that it knows what an earlier session learned without having to think of
//! calling `memory_recall` first.
//!
//! It lists the topics with their counts, then facts one per line (`- id: statement`), the
//! current project's facts first, each group newest first, until the budget is spent; it ends
//! with how to recall more. Superseded facts and facts of other projects are left out. A store
//! with nothing to show gives no brief at all (an empty string).
//!
//! The text is plain and stable: the same store and project give the same bytes. Runs of `{{`
//! and `}}` are broken up (`{ {`), because hosts render prompt text as a template.

use crate::recall::newest_first;
use crate::store::{Fact, Store};
use std::collections::BTreeMap;

/// `briefMaxChars`' default: the most characters the brief takes.
pub const DEFAULT_MAX_CHARS: usize = 1_500;
/// The smallest budget: the frame with eight long topic names and one fact fit in it.
pub const MIN_MAX_CHARS: usize = 800;
/// The largest budget.
pub const MAX_MAX_CHARS: usize = 20_000;
/// The longest statement shown on one line, in characters.
pub const STATEMENT_CHARS: usize = 200;
/// Topics named before the rest are counted.
pub const TOPICS_SHOWN: usize = 8;

/// The brief for `store` seen from `project` (the repository root of the agent's working
/// directory, `None` outside one), at most `max_chars` characters; `""` when no fact is shown.
pub fn brief(store: &Store, project: Option<&str>, max_chars: usize) -> String {
    let shown: Vec<usize> = (0..store.facts.len())
        .filter(|&i| store.facts[i].shown_in(project))
        .collect();
    if shown.is_empty() {
        return String::new();
    }
    let (mine, others): (Vec<usize>, Vec<usize>) = shown
        .iter()
        .partition(|&&i| project.is_some() && store.facts[i].project() == project);
    let mut order = newest_first(store, mine.clone());
    order.extend(newest_first(store, others));

    let in_project = if mine.is_empty() {
        String::new()
    } else {
        format!(" ({} of them for this project)", mine.len())
    };
    let head = untemplated(&format!(
        "# Memory\nThe durable memory store (memory_save, memory_recall) holds {} fact{} \
         saved by earlier sessions{in_project}. Topics: {}.\nFacts, {}newest first:\n",
        shown.len(),
        if shown.len() == 1 { "" } else { "s" },
        topics(store, &shown),
        if mine.is_empty() {
            ""
        } else {
            "this project's first, "
        },
    ));
    let foot = |left: usize| {
        if left == 0 {
            "Call memory_recall with a query for a fact's details.".to_owned()
        } else {
            format!(
                "{left} more not listed here: call memory_recall with a query to search, or \
                 without one to list facts newest first (offset pages on)."
            )
        }
    };
    let budget = max_chars.max(MIN_MAX_CHARS);
    let mut text = head;
    let mut listed = 0;
    for &i in &order {
        let line = untemplated(&fact_line(&store.facts[i]));
        let left = order.len() - listed - 1;
        if chars(&text) + chars(&line) + chars(&foot(left)) > budget {
            break;
        }
        text.push_str(&line);
        listed += 1;
    }
    text.push_str(&foot(order.len() - listed));
    if chars(&text) <= budget {
        text
    } else {
        text.chars().take(budget).collect()
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// `network 5, build 4, … and 3 more` (most facts first, then by name).
fn topics(store: &Store, shown: &[usize]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in shown {
        let topic = store.facts[i].topic.trim();
        *counts
            .entry(if topic.is_empty() { "(none)" } else { topic })
            .or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let more = ranked.len().saturating_sub(TOPICS_SHOWN);
    let mut out: Vec<String> = ranked
        .iter()
        .take(TOPICS_SHOWN)
        .map(|(t, n)| format!("{} {n}", one_line(t, 40)))
        .collect();
    if more > 0 {
        out.push(format!("and {more} more"));
    }
    out.join(", ")
}

/// `- id: statement\n`, both on one line and clipped.
fn fact_line(fact: &Fact) -> String {
    format!(
        "- {}: {}\n",
        one_line(&fact.id, 80),
        one_line(&fact.statement, STATEMENT_CHARS)
    )
}

/// `text` with every run of whitespace (newlines too) as one space, control and invisible
/// characters ([`::text::invisible`]: Unicode tags, bidi controls, zero-width characters) dropped,
/// in at most `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|&c| !c.is_control() && !::text::invisible(c))
        .collect();
    ::text::clip_within(&flat, max)
}

/// Breaks up `{{` and `}}`, so no host renders a fact's text as a template variable.
fn untemplated(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut prev = '\0';
    for c in text.chars() {
        if (c == '{' || c == '}') && prev == c {
            out.push(' ');
        }
        out.push(c);
        prev = c;
    }
    out
}

#[cfg(test)]
mod tests;
