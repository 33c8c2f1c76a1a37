//! Arbitrary failure texts → `fingerprint::normalize`, `Failure::windows` and `fingerprint`.
//!
//! A short fuzzed pattern can be repeated into a text of up to 3 × `WINDOW_BYTES`, so texts longer than the
//! two windows (2 × `WINDOW_BYTES`) are exercised without raising libFuzzer's `-max_len`.
//!
//! Properties (asserted): nothing panics; a fingerprint is a pure function of its input (equal
//! for equal input held in different allocations, and twice in a row); fingerprinting a whole
//! text equals fingerprinting its `Failure::windows`; the windows are a prefix and a suffix of the
//! text, each at most `WINDOW_BYTES` and at least `WINDOW_BYTES - 3` long when the text is split;
//! bytes outside the windows never change a fingerprint (bounded cost); a whole text with no exit
//! code has a fingerprint exactly when its normalized form is non-empty; the normalized form has
//! single interior spaces only, no other whitespace, no ASCII capitals, and no digit except the
//! `0` of `0x#`; and every fingerprint and normalized form equals the one of the reference
//! implementation (the code before the scanner was optimized, kept in
//! `crates/fingerprint/tests/reference`).
#![no_main]

use arbitrary::Arbitrary;
use fingerprint::{Failure, WINDOW_BYTES, fingerprint, normalize};
use libfuzzer_sys::fuzz_target;

/// The implementation before the single-pass scanner, verbatim (shared with the crate's
/// differential property test): the optimized one must agree with it on every input.
#[path = "../../crates/fingerprint/tests/reference/mod.rs"]
mod reference;

fn same_as_reference(tool: &str, exit_code: Option<i64>, head: &str, tail: &str) -> Option<u64> {
    let new = fingerprint(&Failure {
        tool,
        exit_code,
        head,
        tail,
    })
    .map(|f| f.value());
    let old = reference::fingerprint(&reference::Failure {
        tool,
        exit_code,
        head,
        tail,
    })
    .map(|f| f.value());
    assert_eq!(new, old, "differs from the reference implementation");
    new
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    tool: &'a str,
    exit_code: Option<i64>,
    head: &'a str,
    tail: &'a str,
    /// How often `head` is repeated into a long whole text.
    repeat: u16,
    /// Extra text outside a full window.
    outside: &'a str,
}

fn failure<'a>(tool: &'a str, exit_code: Option<i64>, head: &'a str, tail: &'a str) -> Failure<'a> {
    Failure {
        tool,
        exit_code,
        head,
        tail,
    }
}

fn check_normalized(text: &str) {
    let n = normalize(text);
    assert_eq!(
        n,
        reference::normalize(text),
        "differs from the reference implementation"
    );
    assert!(
        !n.starts_with(' ') && !n.ends_with(' ') && !n.contains("  "),
        "{n:?}"
    );
    assert!(n.chars().all(|c| c == ' ' || !c.is_whitespace()), "{n:?}");
    assert!(!n.bytes().any(|b| b.is_ascii_uppercase()), "{n:?}");
    let b = n.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            assert!(
                c == b'0' && b[i + 1..].starts_with(b"x#"),
                "digit left in {n:?}"
            );
        }
    }
}

fn check(input: &Input<'_>) {
    let Input {
        tool,
        exit_code,
        head,
        tail,
        repeat,
        outside,
    } = *input;

    // Purity: same value twice, and from copies in fresh allocations.
    let f = failure(tool, exit_code, head, tail);
    let (tool2, head2, tail2) = (tool.to_owned(), head.to_owned(), tail.to_owned());
    let fp = fingerprint(&f);
    assert_eq!(fp, fingerprint(&f));
    assert_eq!(fp, fingerprint(&failure(&tool2, exit_code, &head2, &tail2)));

    // A whole text, possibly long.
    // One input in 32 is repeated into a text up to 3 windows long: enough to cut both windows
    // out of the middle of a repeated pattern, rare enough to keep executions fast.
    let times = if repeat % 32 == 0 {
        usize::from(repeat / 32)
    } else {
        1
    };
    let whole = if head.len().saturating_mul(times) <= 3 * WINDOW_BYTES {
        head.repeat(times)
    } else {
        head.to_owned()
    };
    let whole = whole + tail;
    let (h, t) = Failure::windows(&whole);
    assert!(whole.starts_with(h) && whole.ends_with(t));
    if whole.len() <= 2 * WINDOW_BYTES {
        assert_eq!((h, t), (whole.as_str(), ""));
        if exit_code.is_none() {
            let fp = fingerprint(&failure(tool, None, &whole, ""));
            assert_eq!(fp.is_none(), normalize(&whole).is_empty());
        }
    } else {
        assert!(h.len() <= WINDOW_BYTES && h.len() + 3 >= WINDOW_BYTES);
        assert!(t.len() <= WINDOW_BYTES && t.len() + 3 >= WINDOW_BYTES);
    }
    assert_eq!(
        same_as_reference(tool, exit_code, &whole, ""),
        same_as_reference(tool, exit_code, h, t),
        "a whole text and its windows fingerprint alike"
    );
    // Arbitrary head/tail pairs (not cut from one text) against the reference too.
    same_as_reference(tool, exit_code, head, tail);

    // Bounded window: bytes beyond WINDOW_BYTES from either end are never read.
    if h.len() >= WINDOW_BYTES.min(whole.len()) && !t.is_empty() && t.len() >= WINDOW_BYTES {
        let longer_head = format!("{h}{outside}");
        let longer_tail = format!("{outside}{t}");
        let base = fingerprint(&failure(tool, exit_code, h, t));
        assert_eq!(
            base,
            fingerprint(&failure(tool, exit_code, &longer_head, &longer_tail))
        );
    }

    check_normalized(head);
    if whole.len() <= 2 * WINDOW_BYTES {
        check_normalized(&whole);
    }
}

fuzz_target!(|input: Input<'_>| check(&input));
