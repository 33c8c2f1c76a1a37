//! The optimized scanner against the reference implementation (`tests/reference`, the code before
//! the optimization, verbatim): `normalize` and `fingerprint` must agree byte for byte on every
//! generated input, short texts, whole texts up to three windows and windowed head/tail pairs.

mod reference;

use dsh_fingerprint::{Failure, WINDOW_BYTES, fingerprint, normalize};
use proptest::prelude::*;

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z]{1,8}",
        "[0-9]{1,6}",
        "0[xX][0-9a-fA-F]{0,10}",
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}[a-z0-9]?",
        "[0-9a-f]{6,16}",
        "(/[a-z0-9_.-]{1,6}){1,4}/?(:[0-9]{1,3})?",
        "[a-zA-Z]:[\\\\/][a-z]{1,5}\\\\[a-z]{0,5}\\.js",
        "[ \t\r\n\u{a0}\u{2003}\u{b}\u{c}]{1,3}",
        "[.,:;()<>\\[\\]#@=!?'\"_~+%\\\\/-]{1,3}",
        "[éÜ✗中\u{1F600}]",
        ".",
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..max).prop_map(|parts| parts.concat())
}

fn both(tool: &str, exit_code: Option<i64>, head: &str, tail: &str) -> (Option<u64>, Option<u64>) {
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
    (new, old)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn normalize_matches_the_reference(t in text(60)) {
        prop_assert_eq!(normalize(&t), reference::normalize(&t));
        let (new, old) = both("bash", None, &t, "");
        prop_assert_eq!(new, old);
    }

    #[test]
    fn long_texts_match_the_reference(
        pattern in text(30),
        times in 1..600usize,
        exit in proptest::option::of(prop_oneof![Just(1i64), any::<i64>()]),
    ) {
        let whole = pattern.repeat(times.min(3 * WINDOW_BYTES / pattern.len().max(1)).max(1));
        let (new, old) = both("bash", exit, &whole, "");
        prop_assert_eq!(new, old);
        let (head, tail) = Failure::windows(&whole);
        let (new, old) = both("bash", exit, head, tail);
        prop_assert_eq!(new, old);
    }

    #[test]
    fn head_and_tail_pairs_match_the_reference(head in text(40), tail in text(40), n in 0..200usize) {
        let head = head.repeat(n.min(2 * WINDOW_BYTES / head.len().max(1)));
        let tail = tail.repeat(n.min(2 * WINDOW_BYTES / tail.len().max(1)));
        let (new, old) = both("tool", None, &head, &tail);
        prop_assert_eq!(new, old);
    }
}
