#![allow(dead_code)] // each includer uses the checks it needs

//! The fingerprint's properties, written once: `tests/properties.rs` and `tests/differential.rs`
//! (proptest, in `cargo test`) and `fuzz/fuzz_targets/fingerprint.rs` (libFuzzer) all include
//! this module with `#[path]` and feed it their own generated texts. Each property is an
//! assertion, so a violation panics: a failed proptest case there, a crash here.
//!
//! - nothing panics on any text, head or tail;
//! - a fingerprint is a pure function of its input (same value twice and for copies in fresh
//!   allocations);
//! - the windows of a whole text are a prefix and a suffix, each at most `WINDOW_BYTES` and at
//!   least `WINDOW_BYTES - 3` long when the text is split;
//! - fingerprinting a whole text equals fingerprinting its `Failure::windows`;
//! - bytes beyond `WINDOW_BYTES` from either end never change a fingerprint (bounded cost);
//! - a whole text with no exit code has a fingerprint exactly when it normalizes to something;
//! - the normalized form has single interior spaces only, no other whitespace, no ASCII capitals
//!   and no digit except the `0` of `0x#`;
//! - every fingerprint and normalized form equals the reference implementation's (the code
//!   before the scanner was optimized, kept verbatim in `tests/reference`), byte for byte.

use fingerprint::{Failure, WINDOW_BYTES, fingerprint, normalize};

#[path = "../reference/mod.rs"]
pub mod reference;

/// The fingerprint of one failure, asserted equal to the reference implementation's.
pub fn same_as_reference(
    tool: &str,
    exit_code: Option<i64>,
    head: &str,
    tail: &str,
) -> Option<u64> {
    let failure = Failure {
        tool,
        exit_code,
        head,
        tail,
    };
    let new = fingerprint(&failure).map(|f| f.value());
    let old = reference::fingerprint(&reference::Failure {
        tool,
        exit_code,
        head,
        tail,
    })
    .map(|f| f.value());
    assert_eq!(new, old, "differs from the reference implementation");
    // Pure: the same value twice, and from copies in fresh allocations.
    assert_eq!(new, fingerprint(&failure).map(|f| f.value()));
    let (tool2, head2, tail2) = (tool.to_owned(), head.to_owned(), tail.to_owned());
    let copy = Failure {
        tool: &tool2,
        exit_code,
        head: &head2,
        tail: &tail2,
    };
    assert_eq!(new, fingerprint(&copy).map(|f| f.value()));
    new
}

/// The normalized form's invariants, and its equality with the reference implementation's.
pub fn check_normalized(text: &str) {
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

/// Every property of a whole failure text (of any length): its windows, the whole text against
/// its windows, the bound on what is read (`outside` is extra text put beyond both windows), the
/// existence of a fingerprint, and the normalized form when the text is short enough to read
/// whole. Returns the fingerprint.
pub fn check_whole(tool: &str, exit_code: Option<i64>, whole: &str, outside: &str) -> Option<u64> {
    let (h, t) = Failure::windows(whole);
    assert!(whole.starts_with(h) && whole.ends_with(t));
    if whole.len() <= 2 * WINDOW_BYTES {
        assert_eq!((h, t), (whole, ""));
    } else {
        assert!(h.len() <= WINDOW_BYTES && h.len() + 3 >= WINDOW_BYTES);
        assert!(t.len() <= WINDOW_BYTES && t.len() + 3 >= WINDOW_BYTES);
    }
    let fp = same_as_reference(tool, exit_code, whole, "");
    assert_eq!(
        fp,
        same_as_reference(tool, exit_code, h, t),
        "a whole text and its windows fingerprint alike"
    );
    if exit_code.is_none() && whole.len() <= 2 * WINDOW_BYTES {
        assert_eq!(fp.is_none(), normalize(whole).is_empty());
    }
    // Bytes beyond the windows are never read.
    if h.len() == WINDOW_BYTES && t.len() == WINDOW_BYTES {
        let longer_head = format!("{h}{outside}");
        let longer_tail = format!("{outside}{t}");
        assert_eq!(
            same_as_reference(tool, exit_code, h, t),
            same_as_reference(tool, exit_code, &longer_head, &longer_tail),
            "bytes beyond the windows changed a fingerprint"
        );
    }
    if whole.len() <= 2 * WINDOW_BYTES {
        check_normalized(whole);
    }
    fp
}

/// A shell failure fingerprinted from only the end of its output (`whole[cut..]`, `cut` moved to
/// a char boundary) is either undecided or the fingerprint of the whole output, the reference's
/// included; from the whole output it is always decided.
pub fn check_shell_end(tool: &str, exit_code: Option<i64>, whole: &str, cut: usize) {
    let mut cut = cut.min(whole.len());
    while !whole.is_char_boundary(cut) {
        cut += 1;
    }
    let full = same_as_reference(tool, exit_code, "", whole);
    if let Some(from_end) = fingerprint::shell_fingerprint_from_end(tool, exit_code, &whole[cut..])
    {
        assert_eq!(
            from_end.map(|f| f.value()),
            full,
            "the end of an output decided a different fingerprint"
        );
    }
    if whole.len() <= fingerprint::SURE_TAIL_BYTES && !whole.is_empty() {
        // The whole output is its own end: decided unless it normalizes to too little.
        let whole_end = fingerprint::shell_fingerprint_from_end(tool, exit_code, whole);
        if let Some(fp) = whole_end {
            assert_eq!(fp.map(|f| f.value()), full);
        }
    }
}
