//! The store text kept with where each fact lies in it, so that a save rewrites only the facts it
//! changed, in place: byte for byte the text [`Store::to_text`] writes.
//!
//! [`Store::to_text`] is serde_json's pretty printer (two-space indentation) over
//! `{ schema_version, facts, ..unknown keys }`, and a final newline. A value's pretty text nested
//! `depth` levels deep is its pretty text alone with every line break followed by `depth` more
//! indents (a JSON string never holds a raw line break), so each fact's text does not depend on
//! the others'.

use crate::store::Store;
use serde::Serialize;
use std::ops::Range;

/// A store's text with the byte range of each fact's object in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The text, exactly [`Store::to_text`] of the store it was rendered from.
    pub text: String,
    /// Where the text before the facts ends: just after `"facts": [`.
    head_end: usize,
    /// Per fact, in order, the range of its object.
    facts: Vec<Range<usize>>,
    /// Where the text after the facts starts: just after the array's `]`.
    tail_start: usize,
}

impl Rendered {
    /// Renders the whole of `store`.
    pub fn of(store: &Store) -> Rendered {
        let mut head = String::from("{\n  \"schema_version\": ");
        match &store.schema_version {
            Some(v) => push_pretty(&mut head, v, 1),
            None => push_pretty(&mut head, &crate::store::SCHEMA_VERSION, 1),
        }
        head.push_str(",\n  \"facts\": [");
        let mut tail = String::new();
        for (k, v) in &store.extra {
            if k != "schema_version" && k != "facts" {
                tail.push_str(",\n  ");
                push_pretty(&mut tail, k, 1);
                tail.push_str(": ");
                push_pretty(&mut tail, v, 1);
            }
        }
        tail.push_str("\n}\n");
        let chunks = store.facts.iter().map(|fact| {
            let mut chunk = String::new();
            push_pretty(&mut chunk, fact, 2);
            chunk
        });
        Rendered::assemble(&head, chunks, store.facts.len(), &tail)
    }

    /// Brings the text up to `store`, the store this was rendered from after edits at `changed`
    /// positions (ascending; a position at or past its last fact was appended), in place: each
    /// edited fact's text is replaced and each appended one inserted after the last, so the
    /// other facts' text is not even copied when only appends follow it.
    pub fn edit(&mut self, store: &Store, changed: &[usize]) {
        if self.facts.is_empty() {
            // `"facts": []` has no fact to insert after.
            *self = Rendered::of(store);
            return;
        }
        let known = self.facts.len();
        for &i in changed.iter().rev().filter(|&&i| i < known) {
            let mut chunk = String::new();
            push_pretty(&mut chunk, &store.facts[i], 2);
            let range = self.facts[i].clone();
            self.text.replace_range(range.clone(), &chunk);
            let grown = chunk.len() as isize - range.len() as isize;
            self.facts[i].end = range.start + chunk.len();
            for later in &mut self.facts[i + 1..] {
                later.start = later.start.saturating_add_signed(grown);
                later.end = later.end.saturating_add_signed(grown);
            }
            self.tail_start = self.tail_start.saturating_add_signed(grown);
        }
        for fact in store.facts.iter().skip(known) {
            let mut chunk = String::from(",\n    ");
            push_pretty(&mut chunk, fact, 2);
            let at = self.facts.last().map_or(self.head_end, |last| last.end);
            self.text.insert_str(at, &chunk);
            self.facts.push(at + 6..at + chunk.len());
            self.tail_start += chunk.len();
        }
    }

    fn assemble<S: AsRef<str>>(
        head: &str,
        chunks: impl Iterator<Item = S>,
        count: usize,
        tail: &str,
    ) -> Rendered {
        let mut text = String::with_capacity(head.len() + tail.len() + count * 512);
        text.push_str(head);
        let head_end = text.len();
        let mut facts = Vec::with_capacity(count);
        for (i, chunk) in chunks.enumerate() {
            text.push_str(if i == 0 { "\n    " } else { ",\n    " });
            let start = text.len();
            text.push_str(chunk.as_ref());
            facts.push(start..text.len());
        }
        if !facts.is_empty() {
            text.push_str("\n  ");
        }
        text.push(']');
        let tail_start = text.len();
        text.push_str(tail);
        Rendered {
            text,
            head_end,
            facts,
            tail_start,
        }
    }
}

/// Appends `value`'s pretty text as it reads `depth` levels deep.
fn push_pretty(out: &mut String, value: &impl Serialize, depth: usize) {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let indent = "  ".repeat(depth);
    let mut lines = text.split('\n');
    if let Some(first) = lines.next() {
        out.push_str(first);
    }
    for line in lines {
        out.push('\n');
        out.push_str(&indent);
        out.push_str(line);
    }
}

#[cfg(test)]
mod tests;
