use super::*;

fn run(config: &str, lines: &[&str]) -> Vec<Value> {
    let mut replay = Replay::from_json(config).unwrap();
    lines
        .iter()
        .filter_map(|line| replay.feed_line(line).unwrap())
        .map(|out| serde_json::from_str(&out).unwrap())
        .collect()
}

const FAIL: &str = r#"{"tool":"bash","args":{"command":"make test"},"result":{"exitCode":1}}"#;

#[test]
fn two_failures_arm_deny_and_an_answer_lifts() {
    let out = run(
        "null",
        &[
            FAIL,
            r#"{"tool":"bash","args":{"command":"make test2"},"result":{"exitCode":2}}"#,
            r#"{"step":true}"#,
            r#"{"tool":"edit","args":{"path":"a.rs"}}"#,
            r#"{"tool":"read","args":{"path":"a.rs"}}"#,
            r#"{"assistant":"blocker=the linker cannot find libfoo\nruled_out=a missing header file"}"#,
            r#"{"assistant":"blocker=the linker cannot find libfoo\nruled_out=a missing header, the include path is fine\nbest_path=print the library search path with -v"}"#,
            r#"{"tool":"bash","args":{"command":"make test2"},"result":{"exitCode":2}}"#,
        ],
    );
    assert_eq!(out[0]["failures"], 1);
    assert_eq!(out[1]["timeline"], json!(["armed (2 failed calls)"]));
    assert_eq!(out[1]["gate"], "pending");
    assert_eq!(out[2]["timeline"], json!(["check shown"]));
    assert!(out[2]["notice"].as_str().unwrap().contains("ruled_out="));
    assert_eq!(out[3]["decision"], "deny");
    assert!(out[3]["reason"].as_str().unwrap().contains("edit"));
    assert_eq!(out[3]["denials"], 1);
    assert_eq!(out[4]["decision"], "allow");
    assert_eq!(out[4]["counted"], "ignored", "nothing counts while pending");
    assert_eq!(out[5]["missing"], json!(["best_path"]));
    assert_eq!(out[5]["gate"], "pending");
    assert_eq!(out[6]["timeline"], json!(["lifted"]));
    assert_eq!(out[6]["gate"], "probation");
    // The exact call that armed the gate, nothing changed since: denied once more.
    assert_eq!(out[7]["decision"], "deny");
    assert_eq!(out[7]["timeline"], json!(["same-direction shot denied"]));
}

#[test]
fn agents_are_separate_and_a_user_prompt_resets() {
    let out = run(
        r#"{"failureThreshold": 1}"#,
        &[
            r#"{"agent":"a","tool":"bash","result":"error"}"#,
            r#"{"agent":"b","tool":"bash","result":"ok"}"#,
            r#"{"agent":"a","user":"try something else"}"#,
            r#"{"agent":"a","tool":"bash","result":"ok"}"#,
        ],
    );
    assert_eq!(out[0]["gate"], "pending");
    assert_eq!(out[1]["gate"], "idle");
    assert_eq!(out[1]["decision"], "allow");
    assert_eq!(out[2]["timeline"], json!(["reset by a user prompt"]));
    assert_eq!(out[3]["decision"], "allow");
}

#[test]
fn malformed_lines_name_the_field() {
    let mut replay = Replay::from_json("null").unwrap();
    let cases = [
        ("[1]", "line 1: not a JSON object (got [1])"),
        (
            r#"{"tol":"bash"}"#,
            "line 2: tol is not an event field; did you mean tool?",
        ),
        (r#"{"tool":7}"#, "line 3: tool must be a string (got 7)"),
        (
            r#"{"tool":"bash","result":{"exitCode":"1"}}"#,
            "line 4: result must be \"ok\", \"error\", \"cancelled\", {\"exitCode\": N}, {\"killed\": true} or {\"timedOut\": true} (got {\"exitCode\":\"1\"})",
        ),
        (r#"{"step":1}"#, "line 5: step must be true (got 1)"),
        (
            r#"{"agent":"a"}"#,
            "line 6: needs one of tool, user, assistant or step",
        ),
    ];
    for (line, expected) in cases {
        assert_eq!(replay.feed_line(line).unwrap_err(), expected);
    }
    assert_eq!(replay.feed_line("   ").unwrap(), None);
}

#[test]
fn a_bad_config_is_refused_with_the_row_prefix() {
    let error = Replay::from_json(r#"{"repeatThreshold": 0}"#)
        .err()
        .unwrap();
    assert_eq!(
        error,
        "pain-point-check: invalid config: repeatThreshold must be an integer >= 1 (got 0)"
    );
}
