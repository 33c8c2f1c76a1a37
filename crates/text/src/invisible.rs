//! Characters a person cannot see that can still carry text to a model: the Unicode tag block
//! (U+E0000–E007F, which spells ASCII invisibly), the bidirectional controls (embeddings,
//! overrides, isolates, marks) and the zero-width characters. Text from outside (a page, a
//! stored fact) has them removed before a model reads it. A leaf.

use std::borrow::Cow;

/// Whether `c` is one of the invisible characters (see the module documentation).
#[inline]
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{E0000}'..='\u{E007F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061C}'
        | '\u{FEFF}'
        | '\u{180E}')
}

/// `text` without its [`invisible`] characters (borrowed when it has none).
pub fn strip_invisible(text: &str) -> Cow<'_, str> {
    if text.chars().any(invisible) {
        Cow::Owned(text.chars().filter(|&c| !invisible(c)).collect())
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bidi_and_zero_width_characters_go() {
        let hidden: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let text = format!("a\u{200B}b\u{202E}c\u{2066}d\u{FEFF}e{hidden}\u{E007F}");
        assert_eq!(strip_invisible(&text), "abcde");
        assert!(matches!(strip_invisible("plain 中文 ü"), Cow::Borrowed(_)));
        assert!(!invisible('\u{00AD}') && !invisible('\n') && !invisible(' '));
    }
}
