//! Property tests of the fingerprint (the same properties the `fingerprint` fuzz target in
//! `fuzz/` asserts, here over proptest's generated texts so they run in `cargo test`):
//!
//! - nothing panics on any text, head or tail;
//! - a fingerprint is a pure function of its input (same value twice and for copies);
//! - fingerprinting a whole text equals fingerprinting its `Failure::windows`;
//! - bytes beyond `WINDOW_BYTES` from either end never change a fingerprint (bounded cost);
//! - a whole text with no exit code has a fingerprint exactly when it normalizes to something;
//! - the normalized form has single interior spaces only, no other whitespace, no ASCII
//!   capitals and no digit except the `0` of `0x#`.

use dsh_fingerprint::{Failure, WINDOW_BYTES, fingerprint, normalize};

use proptest::prelude::*;

/// Text with the shapes the normalizer cares about: words, numbers, hex, paths, whitespace of
/// every kind, non-ASCII characters.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z]{1,8}",
        "[0-9]{1,6}",
        "0x[0-9a-fA-F]{1,10}",
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "[0-9a-f]{6,16}",
        "(/[a-z0-9_.-]{1,6}){1,4}(:[0-9]{1,3})?",
        "[A-Z]:\\\\[a-z]{1,5}\\\\[a-z]{1,5}\\.js",
        "[ \t\r\n\u{a0}\u{2003}]{1,3}",
        "[.,:;()<>\\[\\]#@=!?'\"-]",
        "[éÜ✗中]",
        ".",
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|parts| parts.concat())
}

fn check_normalized(text: &str) -> Result<(), TestCaseError> {
    let n = normalize(text);
    prop_assert!(
        !n.starts_with(' ') && !n.ends_with(' ') && !n.contains("  "),
        "{:?}",
        n
    );
    prop_assert!(n.chars().all(|c| c == ' ' || !c.is_whitespace()), "{:?}", n);
    prop_assert!(!n.bytes().any(|b| b.is_ascii_uppercase()), "{:?}", n);
    let b = n.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            prop_assert!(
                c == b'0' && b[i + 1..].starts_with(b"x#"),
                "digit left in {:?}",
                n
            );
        }
    }
    Ok(())
}

fn fp(tool: &str, exit_code: Option<i64>, head: &str, tail: &str) -> Option<u64> {
    fingerprint(&Failure {
        tool,
        exit_code,
        head,
        tail,
    })
    .map(|f| f.value())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn short_texts(tool in "[a-z_]{0,10}", exit in proptest::option::of(any::<i64>()), text in text()) {
        let once = fp(&tool, exit, &text, "");
        prop_assert_eq!(once, fp(&tool, exit, &text, ""));
        prop_assert_eq!(once, fp(&tool.clone(), exit, &text.clone(), ""));
        if exit.is_none() && text.len() <= 2 * WINDOW_BYTES {
            prop_assert_eq!(once.is_none(), normalize(&text).is_empty());
        }
        check_normalized(&text)?;
    }

    #[test]
    fn long_texts_and_windows(
        exit in proptest::option::of(any::<i64>()),
        pattern in text(),
        times in 0..400usize,
        outside in text(),
    ) {
        let whole = pattern.repeat(times.min(3 * WINDOW_BYTES / pattern.len().max(1)));
        let (head, tail) = Failure::windows(&whole);
        prop_assert!(whole.starts_with(head) && whole.ends_with(tail));
        if whole.len() > 2 * WINDOW_BYTES {
            prop_assert!(head.len() <= WINDOW_BYTES && head.len() + 3 >= WINDOW_BYTES);
            prop_assert!(tail.len() <= WINDOW_BYTES && tail.len() + 3 >= WINDOW_BYTES);
        } else {
            prop_assert_eq!((head, tail), (whole.as_str(), ""));
        }
        // The whole text and its windows fingerprint alike.
        prop_assert_eq!(fp("bash", exit, &whole, ""), fp("bash", exit, head, tail));
        // Bytes beyond the windows are never read.
        if head.len() == WINDOW_BYTES && tail.len() == WINDOW_BYTES {
            prop_assert_eq!(
                fp("bash", exit, head, tail),
                fp("bash", exit, &format!("{head}{outside}"), &format!("{outside}{tail}"))
            );
        }
    }
}
