//! The search phrase of a failure: the one line of its text worth pasting into a web search,
//! stripped of what only this machine and this run know, short enough to quote in a reminder.
//!
//! Rules, in order:
//! 1. **Which line.** The last line with a strong marker (a word ending in `Error` or
//!    `Exception`, `error:`, `error[`, `panicked`, `fatal:`), else the last line with a weak one
//!    (`error`, `fail`, `not found`, `cannot`, `undefined`, `denied`), else the last non-blank line.
//! 2. **Invisible characters.** Control and invisible format characters (zero-width, bidi
//!    controls, soft hyphen, BOM, Unicode tags) are dropped, so the quoted text is what a reader sees.
//! 3. **Noise.** Whitespace-separated words that only this run knows are dropped: hex addresses
//!    (`0x7ffe…`), numbers (`123`, `12:5`), UUIDs and hashes (8+ hex digits with a digit and a
//!    letter). A path keeps its file name only (`/tmp/x/src/app.py:12:5` → `app.py`).
//! 4. **Quotes.** `"` becomes `'`, so the phrase never ends its own quotation.
//! 5. **Bound.** At most [`SEARCH_PHRASE_CHARS`] characters and [`SEARCH_PHRASE_BYTES`] bytes,
//!    cut at the last space before the bound when there is one. A phrase with no letter is none.

/// Longest search phrase, in characters.
pub const SEARCH_PHRASE_CHARS: usize = 80;
/// Longest search phrase, in UTF-8 bytes: a phrase of CJK characters or emoji (several tokens
/// each) stops sooner, so the reminder's tokens stay bounded whatever the failure's script.
pub const SEARCH_PHRASE_BYTES: usize = 160;

/// The search phrase of a failure text (its `head` and `tail` windows), if it has one.
pub fn search_phrase(head: &str, tail: &str) -> Option<String> {
    let lines = || {
        head.lines()
            .chain(tail.lines())
            .filter(|l| !l.trim().is_empty())
    };
    let line = lines()
        .rev()
        .find(|l| strength(l) == 2)
        .or_else(|| lines().rev().find(|l| strength(l) == 1))
        .or_else(|| lines().next_back())?;
    let visible: String = line.chars().filter(|&c| !invisible(c)).collect();
    let words: Vec<String> = visible.split_whitespace().filter_map(keep_word).collect();
    let phrase = bound(&words.join(" ").replace('"', "'"));
    phrase.chars().any(char::is_alphabetic).then_some(phrase)
}

/// 2 for a strong error marker, 1 for a weak one, 0 for none.
fn strength(line: &str) -> u8 {
    let strong = line
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| (w.ends_with("Error") || w.ends_with("Exception")) && w.len() > 5)
        || ["error:", "error[", "panicked", "fatal:"]
            .iter()
            .any(|m| line.contains(m));
    if strong {
        return 2;
    }
    let lower = line.to_lowercase();
    u8::from(
        [
            "error",
            "fail",
            "not found",
            "cannot",
            "undefined",
            "denied",
        ]
        .iter()
        .any(|m| lower.contains(m)),
    )
}

/// A control character, a soft hyphen, or one of the family's [`text::invisible`] characters.
fn invisible(c: char) -> bool {
    c.is_control() || c == '\u{00AD}' || text::invisible(c)
}

/// A word as the phrase keeps it: `None` for noise, a path's file name for a path.
fn keep_word(word: &str) -> Option<String> {
    let core = word.trim_matches(|c: char| "()[]{}<>,;'`\"".contains(c));
    if core.contains('/') || core.contains('\\') {
        let name = core.rsplit(['/', '\\']).next().unwrap_or("");
        let name = name.split(':').next().unwrap_or("");
        return (!name.is_empty()).then(|| name.to_owned());
    }
    let noise = core.starts_with("0x") && core.len() > 2
        || !core.is_empty()
            && core
                .chars()
                .all(|c| c.is_ascii_digit() || ":.,-#".contains(c))
            && core.chars().any(|c| c.is_ascii_digit())
        || hex_id(core);
    (!noise).then(|| word.to_owned())
}

fn hex_id(word: &str) -> bool {
    let hex: Vec<char> = word.chars().filter(|c| *c != '-').collect();
    hex.len() >= 8
        && hex.iter().all(char::is_ascii_hexdigit)
        && hex.iter().any(char::is_ascii_digit)
        && hex.iter().any(char::is_ascii_alphabetic)
}

fn bound(phrase: &str) -> String {
    let mut end = 0;
    for (count, (at, c)) in phrase.char_indices().enumerate() {
        if count == SEARCH_PHRASE_CHARS || at + c.len_utf8() > SEARCH_PHRASE_BYTES {
            let cut = &phrase[..at];
            return match cut.rfind(' ') {
                Some(space) if space > 0 => cut[..space].to_owned(),
                _ => cut.to_owned(),
            };
        }
        end = at + c.len_utf8();
    }
    phrase[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_telling_line_and_drops_the_noise() {
        let cases = [
            // A Python traceback: the exception line, not the summary after it.
            (
                "",
                "Traceback (most recent call last):\n  File \"/tmp/build-77/app.py\", line 12, in <module>\nTypeError: unsupported operand type(s) for +: 'int' and \"str\" at 0x7ffe1234\n",
            ),
            // A shell failure: `error:` wins over the weak `failed` summary after it.
            (
                "",
                "   Compiling app v0.1.0 (/home/a/app)\nerror: cannot find macro `sqlx_query` in this scope\nwarning: build failed, waiting for other jobs\n",
            ),
            // An error result with no marker: its last line, invisible characters dropped.
            ("connection reset by peer\u{200B}\u{202E}\u{7}", ""),
            // Nothing searchable: numbers only.
            ("12:5 0x1f 9fceb02d0ae598e9", ""),
            // Over the bound: cut at a space.
            (
                "ValueError: the quick brown fox jumps over the lazy dog and keeps on running across every field",
                "",
            ),
        ];
        let phrases: Vec<String> = cases
            .iter()
            .map(|(head, tail)| format!("{:?}", search_phrase(head, tail)))
            .collect();
        expect_test::expect_file!["snapshots/search-phrases.txt"].assert_eq(&phrases.join("\n"));
    }

    #[test]
    fn never_longer_than_the_bound() {
        let long = format!("Error: {}", "word ".repeat(100));
        let phrase = search_phrase(&long, "").unwrap();
        assert!(phrase.chars().count() <= SEARCH_PHRASE_CHARS, "{phrase}");
        let unbroken = format!("Error:{}", "e".repeat(200));
        assert_eq!(
            search_phrase(&unbroken, "").unwrap().chars().count(),
            SEARCH_PHRASE_CHARS
        );
        // Three-byte characters reach the byte bound first, cut on a character boundary.
        let wide = format!("Error:{}", "错".repeat(200));
        let phrase = search_phrase(&wide, "").unwrap();
        assert_eq!((phrase.len(), phrase.chars().count()), (159, 57));
        let emoji = format!("Error:{}", "🧨".repeat(200));
        assert!(search_phrase(&emoji, "").unwrap().len() <= SEARCH_PHRASE_BYTES);
    }
}
