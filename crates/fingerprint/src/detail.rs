//! The **detail** of a failure: what changed between two failures that share a fingerprint.
//!
//! A fingerprint erases every number, so `3 failed` and `2 failed`, or a traceback ending at
//! line 12 and one ending at line 40, are the same failure. That is right for "is this the same
//! problem?" and wrong for "did the last edit change anything?". [`detail`] answers the second
//! question: it hashes the end of the failure text with numbers, line numbers and file names kept,
//! and masks only what changes between two runs of the same unchanged code:
//!
//! 1. **Durations** (`0.52s`, `12ms`, `3.1sec`), **times and dates** (a token with a digit on
//!    both sides of `:`, or two `-` between digits: `12:03:44`, `2024-01-02`), **hex addresses**
//!    (`0x7ffe…`) and **long hex identifiers** (8 or more hex digits with a digit and a letter) each
//!    become `#`.
//! 2. **Directories** of a path are dropped; its file name is kept (temporary directories differ
//!    from run to run, `repro.py` and `test_a.py` do not).
//! 3. Whitespace runs become one space; everything else is kept as it is.
//!
//! Only the last [`DETAIL_BYTES`] bytes are read (cut on a char boundary), where a test runner
//! prints its summary and an interpreter its exception, so the cost is constant.

use text::Fnv1a;

/// Bytes at the end of a failure text that [`detail`] reads.
pub const DETAIL_BYTES: usize = 2048;

/// The detail hash of a failure's text (see the module docs): equal for two runs of unchanged
/// code, different when the error, its line, or a test summary moved.
pub fn detail(text: &str) -> u64 {
    let window = text::tail_bytes(text, DETAIL_BYTES);
    // A cut window starts inside a token: drop it.
    let window = if window.len() < text.len() {
        window
            .split_once(char::is_whitespace)
            .map_or("", |(_, rest)| rest)
    } else {
        window
    };
    let mut hash = Fnv1a::new();
    for token in window.split_whitespace() {
        let token = token.rsplit(['/', '\\']).next().unwrap_or(token);
        if volatile(token) {
            hash.byte(b'#');
        } else {
            hash.bytes(token.as_bytes());
        }
        hash.byte(b' ');
    }
    hash.value()
}

/// Whether a token changes between two runs of the same code (rule 1 of the module docs).
fn volatile(token: &str) -> bool {
    let core = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let bytes = core.as_bytes();
    if bytes.is_empty() || !bytes.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let lower = core.to_ascii_lowercase();
    if lower.starts_with("0x") {
        return true;
    }
    let digits_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    if digits_end > 0
        && matches!(
            &lower[digits_end..],
            "s" | "ms" | "us" | "µs" | "ns" | "sec" | "secs"
        )
    {
        return true;
    }
    let between_digits = |sep: u8| {
        bytes
            .windows(3)
            .filter(|w| w[1] == sep && w[0].is_ascii_digit() && w[2].is_ascii_digit())
            .count()
    };
    if between_digits(b':') >= 1 && !lower.contains(|c: char| c.is_ascii_alphabetic()) {
        return true;
    }
    if between_digits(b'-') >= 2 {
        return true;
    }
    let hex = bytes.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    hex == bytes.len()
        && hex >= 8
        && bytes.iter().any(u8::is_ascii_digit)
        && bytes.iter().any(u8::is_ascii_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::detail;

    #[test]
    fn noise_between_runs_of_the_same_code_is_masked() {
        assert_eq!(
            detail("FAILED tests/a.py::t - AssertionError\n== 1 failed, 3 passed in 0.52s =="),
            detail("FAILED tests/a.py::t - AssertionError\n== 1 failed, 3 passed in 1.07s ==")
        );
        assert_eq!(
            detail("<Foo object at 0x7f3a12> at 12:03:44 in /tmp/tmp-77/run/repro.py"),
            detail("<Foo object at 0x7f3b99> at 12:04:01 in /tmp/tmp-91/run/repro.py")
        );
        assert_eq!(
            detail("build 9fceb02d0ae5 on 2024-01-02"),
            detail("build 77aa02d0ae51 on 2025-11-30")
        );
    }

    #[test]
    fn another_line_another_error_or_another_summary_is_a_change() {
        assert_ne!(
            detail("  File \"repro.py\", line 12\nTypeError: x"),
            detail("  File \"repro.py\", line 40\nTypeError: x")
        );
        assert_ne!(
            detail("== 3 failed, 1 passed in 0.5s =="),
            detail("== 2 failed, 2 passed in 0.5s ==")
        );
        assert_ne!(detail("TypeError: x"), detail("ValueError: x"));
        assert_ne!(detail("/a/repro.py: boom"), detail("/a/test_b.py: boom"));
    }

    #[test]
    fn only_the_end_is_read() {
        let end = "same line\n".repeat(300);
        let long = format!("{}{end}TypeError: x", "noise 1 ".repeat(2000));
        let other = format!("{}{end}TypeError: x", "other 2 ".repeat(10));
        assert_eq!(detail(&long), detail(&other));
    }
}
