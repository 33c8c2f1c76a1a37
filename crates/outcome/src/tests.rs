use super::*;
use proptest::prelude::*;

#[test]
fn errors_non_zero_exits_kills_and_timeouts_fail() {
    for outcome in [
        Outcome::exited(1),
        Outcome::exited(-1),
        Outcome::killed(),
        Outcome::timed_out(),
        Outcome::error(),
        Outcome::cancelled(),
    ] {
        assert!(outcome.failed(), "{outcome:?}");
    }
    assert!(!Outcome::exited(0).failed());
    assert!(!Outcome::success().failed());
}

#[test]
fn the_exit_rule_ignores_kills_and_timeouts() {
    assert!(exit_failure(false, None));
    assert!(exit_failure(true, Some(2)));
    assert!(exit_failure(false, Some(0)));
    assert!(!exit_failure(true, Some(0)));
    assert!(!exit_failure(true, None));
    for outcome in [Outcome::killed(), Outcome::timed_out()] {
        assert!(!exit_failure(outcome.ok, outcome.exit_code), "{outcome:?}");
    }
}

#[test]
fn a_recorded_result_maps_to_its_outcome() {
    let none = ShellStatus::default();
    assert_eq!(Outcome::from_result(true, None, &none), Outcome::success());
    assert_eq!(Outcome::from_result(false, None, &none), Outcome::error());
    assert_eq!(
        Outcome::from_result(false, Some("INVALID_ARGS"), &none),
        Outcome::error()
    );
    for code in CANCEL_CODES {
        assert_eq!(
            Outcome::from_result(false, Some(code), &none),
            Outcome::cancelled()
        );
    }
    let unknown = Outcome::from_result(false, Some(UNKNOWN_TOOL_CODE), &none);
    assert_eq!(unknown, Outcome::unknown_tool());
    assert!(!unknown.counts() && !Outcome::cancelled().counts());
    assert!(Outcome::error().counts() && Outcome::exited(1).counts());
    // Only an error result carries DSH's code.
    assert!(!Outcome::from_facts(true, Some(UNKNOWN_TOOL_CODE), None, false, false).unknown_tool);
    let status = ShellStatus::parse("x\n[exit code: 3]");
    assert_eq!(
        Outcome::from_result(true, None, &status),
        Outcome::exited(3)
    );
    let status = ShellStatus::parse("x\n[timed out after 5ms]\n[killed by signal: SIGTERM]");
    let outcome = Outcome::from_result(true, None, &status);
    assert!(outcome.killed && outcome.timed_out && outcome.exit_code.is_none());
}

#[test]
fn the_last_lines_carry_the_status() {
    let parse = ShellStatus::parse;
    assert_eq!(parse("all good"), ShellStatus::default());
    assert_eq!(parse("(no output)\n[exit code: 2]").exit_code, Some(2));
    assert_eq!(parse("[exit code: 127]").exit_code, Some(127));
    assert_eq!(
        parse("partial\n[timed out after 5ms]\n[killed by signal: SIGTERM]"),
        ShellStatus {
            exit_code: None,
            signal: Some("SIGTERM".to_owned()),
            timeout_ms: Some(5),
        }
    );
    assert_eq!(
        parse("partial\n[timed out after 120000ms]\n[exit code: 124]"),
        ShellStatus {
            exit_code: Some(124),
            signal: None,
            timeout_ms: Some(120_000),
        }
    );
    assert_eq!(
        parse("done\n[timed out after 10ms]"),
        ShellStatus {
            timeout_ms: Some(10),
            ..ShellStatus::default()
        }
    );
    // A timeout marker counts only as the last line or just before the last marker.
    assert_eq!(
        parse("[timed out after 10ms]\nmore"),
        ShellStatus::default()
    );
    assert_eq!(
        parse("[timed out after 10ms]\nmore\n[exit code: 1]").timeout_ms,
        None
    );
    // Only a last line that is exactly a marker counts.
    for text in [
        "[exit code: 1]\nmore",
        "echo '[exit code: 1]' ",
        "[exit code: 1]\n",
        "[exit code: x]",
        "[exit code: -1]",
        "[exit code: ]",
        "[exit code: 99999999999999999999]",
        "[killed by signal: ]",
        "[timed out after ms]",
        "[timed out after 5s]",
        "",
    ] {
        assert_eq!(parse(text), ShellStatus::default(), "{text:?}");
    }
}

/// The text `@deepseek-ai/dsh-tool-bash`'s `renderResult` builds from a body and a run's status.
fn render(body: &str, timeout_ms: Option<u64>, signal: Option<&str>, exit_code: u32) -> String {
    let mut markers = Vec::new();
    if let Some(ms) = timeout_ms {
        markers.push(format!("[timed out after {ms}ms]"));
    }
    if let Some(signal) = signal {
        markers.push(format!("[killed by signal: {signal}]"));
    } else if exit_code != 0 {
        markers.push(format!("[exit code: {exit_code}]"));
    }
    let body = if body.is_empty() { "(no output)" } else { body };
    if markers.is_empty() {
        return body.to_owned();
    }
    let mut text = body.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text + &markers.join("\n")
}

proptest! {
    #[test]
    fn rendered_markers_read_back(
        body in "[a-z \n]{0,40}",
        timeout_ms in proptest::option::of(any::<u64>()),
        signal in proptest::option::of("SIG[A-Z]{2,6}"),
        exit_code in any::<u32>(),
    ) {
        let text = render(&body, timeout_ms, signal.as_deref(), exit_code);
        let status = ShellStatus::parse(&text);
        prop_assert_eq!(status.timeout_ms, timeout_ms);
        prop_assert_eq!(status.signal.as_deref(), signal.as_deref());
        let code = (signal.is_none() && exit_code != 0).then_some(i64::from(exit_code));
        prop_assert_eq!(status.exit_code, code);
    }

    #[test]
    fn any_text_parses_without_panicking(text in any::<String>()) {
        let status = ShellStatus::parse(&text);
        prop_assert!(status.exit_code.is_none_or(|code| code >= 0));
        prop_assert!(!(status.exit_code.is_some() && status.signal.is_some()));
    }
}
