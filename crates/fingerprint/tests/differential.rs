//! The optimized scanner against the reference implementation (`tests/reference`, the code before
//! the optimization, verbatim): `normalize` and `fingerprint` must agree byte for byte on every
//! generated input, short texts, whole texts up to three windows and windowed head/tail pairs.
//! The comparison is `tests/checks/mod.rs`'s, shared with the `fingerprint` fuzz target.

extern crate dsh_fingerprint as fingerprint;

#[path = "checks/mod.rs"]
mod checks;

use fingerprint::{Failure, WINDOW_BYTES};
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn normalize_matches_the_reference(t in text(60)) {
        checks::check_normalized(&t);
        checks::same_as_reference("bash", None, &t, "");
    }

    #[test]
    fn long_texts_match_the_reference(
        pattern in text(30),
        times in 1..600usize,
        exit in proptest::option::of(prop_oneof![Just(1i64), any::<i64>()]),
    ) {
        let whole = pattern.repeat(times.min(3 * WINDOW_BYTES / pattern.len().max(1)).max(1));
        checks::same_as_reference("bash", exit, &whole, "");
        let (head, tail) = Failure::windows(&whole);
        checks::same_as_reference("bash", exit, head, tail);
        // A shell failure: only the tail, as the policy passes it.
        checks::same_as_reference("bash", exit, "", tail);
    }

    #[test]
    fn head_and_tail_pairs_match_the_reference(head in text(40), tail in text(40), n in 0..200usize) {
        let head = head.repeat(n.min(2 * WINDOW_BYTES / head.len().max(1)));
        let tail = tail.repeat(n.min(2 * WINDOW_BYTES / tail.len().max(1)));
        checks::same_as_reference("tool", None, &head, &tail);
        checks::same_as_reference("tool", Some(1), "", &tail);
    }
}
