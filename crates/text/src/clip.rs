//! Text cut to a size: in characters for what a person reads (with `…` marking a cut), in bytes
//! on a character boundary for bounded windows. A leaf.

/// At most `max` characters of `text`, followed by `…` when it was cut (a cut text is `max + 1`
/// characters long).
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `text` in at most `width` characters: whole when it fits, else its first `width - 1`
/// characters and `…`.
pub fn clip_within(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
#[inline]
pub fn head_bytes(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest suffix of `text` of at most `max` bytes that starts on a character boundary.
#[inline]
pub fn tail_bytes(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_max_characters_and_marks_the_cut() {
        assert_eq!(clip("héllo wörld", 5), "héllo…");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("ab", 0), "…");
    }

    #[test]
    fn clip_within_counts_the_mark() {
        assert_eq!(clip_within("héllo wörld", 5), "héll…");
        assert_eq!(clip_within("héllo", 5), "héllo");
        assert_eq!(clip_within("ab", 0), "…");
    }

    #[test]
    fn byte_windows_never_split_a_character() {
        let text = "a中b";
        assert_eq!(head_bytes(text, 2), "a");
        assert_eq!(head_bytes(text, 4), "a中");
        assert_eq!(head_bytes(text, 99), text);
        assert_eq!(tail_bytes(text, 2), "b");
        assert_eq!(tail_bytes(text, 4), "中b");
        assert_eq!(tail_bytes(text, 0), "");
    }
}
