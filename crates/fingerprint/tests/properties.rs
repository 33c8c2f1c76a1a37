//! Property tests of the fingerprint. The properties themselves are in `tests/checks/mod.rs`,
//! shared with the `fingerprint` fuzz target in `fuzz/` (which includes the same file); here
//! proptest generates the texts so they run in `cargo test`. See that module for the list.

extern crate dsh_fingerprint as fingerprint;

#[path = "checks/mod.rs"]
mod checks;

use fingerprint::WINDOW_BYTES;
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn short_texts(tool in "[a-z_]{0,10}", exit in proptest::option::of(any::<i64>()), text in text()) {
        checks::check_whole(&tool, exit, &text, "");
        checks::same_as_reference(&tool, exit, &text, "");
    }

    #[test]
    fn long_texts_and_windows(
        exit in proptest::option::of(any::<i64>()),
        pattern in text(),
        times in 0..400usize,
        outside in text(),
    ) {
        let whole = pattern.repeat(times.min(3 * WINDOW_BYTES / pattern.len().max(1)));
        checks::check_whole("bash", exit, &whole, &outside);
    }

    #[test]
    fn shell_failures_from_the_end_of_their_output(
        exit in proptest::option::of(prop_oneof![Just(1i64), any::<i64>()]),
        pattern in text(),
        times in 0..300usize,
        cut in 0..12_000usize,
    ) {
        let whole = pattern.repeat(times.min(3 * WINDOW_BYTES / pattern.len().max(1)));
        checks::check_shell_end("bash", exit, &whole, cut);
        // Near the end, where a decided answer is likely.
        checks::check_shell_end("bash", exit, &whole, whole.len().saturating_sub(cut % 2000));
    }
}
