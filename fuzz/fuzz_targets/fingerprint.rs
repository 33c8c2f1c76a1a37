//! Arbitrary failure texts → `fingerprint::normalize`, `Failure::windows` and `fingerprint`.
//!
//! A short fuzzed pattern can be repeated into a text of up to 3 × `WINDOW_BYTES`, so texts longer than the
//! two windows (2 × `WINDOW_BYTES`) are exercised without raising libFuzzer's `-max_len`.
//!
//! The properties are `crates/fingerprint/tests/checks/mod.rs`, shared with the crate's proptests
//! (`crates/fingerprint/tests/properties.rs`, `differential.rs`): one source, asserted here on
//! every input (a violation is a crash), the reference implementation included.
#![no_main]

use arbitrary::Arbitrary;
use fingerprint::WINDOW_BYTES;
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/fingerprint/tests/checks/mod.rs"]
mod checks;

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

fn check(input: &Input<'_>) {
    let Input {
        tool,
        exit_code,
        head,
        tail,
        repeat,
        outside,
    } = *input;
    // Arbitrary head/tail pairs (not cut from one text), and a shell failure's tail alone.
    checks::same_as_reference(tool, exit_code, head, tail);
    checks::same_as_reference(tool, exit_code, "", tail);
    checks::check_normalized(head);
    // A whole text, possibly long: one input in 32 is repeated into a text up to 3 windows
    // long, enough to cut both windows out of the middle of a repeated pattern, rare enough to
    // keep executions fast.
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
    checks::check_whole(tool, exit_code, &whole, outside);
    checks::check_shell_end(tool, exit_code, &whole, usize::from(repeat));
}

fuzz_target!(|input: Input<'_>| check(&input));
