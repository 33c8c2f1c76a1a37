//! Escapes for text that reaches a terminal or one table cell: what a proposer, a candidate or
//! a stored row wrote is shown, never interpreted. A leaf: every renderer and the spec's error
//! messages use it.

use std::fmt::Write as _;

/// Text for a terminal: every control character but `\n` and `\t` (C0, DEL, C1: escape
/// sequences a proposer could have written into a hypothesis), and the bidirectional overrides
/// and isolates, as `\u00XX`/`\u202E` escapes. Inside JSON text the same escapes are valid JSON,
/// so a JSON rendering passed through it decodes to the same value.
pub fn escape_controls(text: &str) -> String {
    escape(text, |c| c == '\n' || c == '\t')
}

/// Text for one line of a terminal: as [`escape_controls`], with `\n` and `\t` escaped too (a
/// run tag or a spec's key that could break a line or a table).
pub fn escape_inline(text: &str) -> String {
    escape(text, |_| false)
}

fn escape(text: &str, kept: impl Fn(char) -> bool) -> String {
    let unsafe_char = |c: char| {
        (c.is_control() && !kept(c))
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    if !text.chars().any(unsafe_char) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}
