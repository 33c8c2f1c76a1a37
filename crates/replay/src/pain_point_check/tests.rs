use super::*;

/// A replay under a row config given as JSON text, as the adapter reads it.
fn from_json(config_json: &str) -> Result<Replay, String> {
    use config::pain_point_check as row;
    let describe = |issues: Vec<config::Issue>| config::describe(row::MESSAGE_PREFIX, &issues);
    let value: Value = serde_json::from_str(config_json).map_err(|e| e.to_string())?;
    let row = row::validate(&value).map_err(describe)?;
    Ok(Replay::new(row.settings()))
}

fn run(config: &str, lines: &[&str]) -> Vec<Value> {
    let mut replay = from_json(config).unwrap();
    lines
        .iter()
        .filter_map(|line| replay.feed_line(line).unwrap())
        .map(|out| serde_json::from_str(&out).unwrap())
        .collect()
}

/// The raw output lines, as the CLI prints them.
fn printed(config: &str, lines: &[&str]) -> String {
    let mut replay = from_json(config).unwrap();
    let mut out = String::new();
    for line in lines {
        if let Some(text) = replay.feed_line(line).unwrap() {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out
}

const FAIL: &str = r#"{"tool":"bash","args":{"command":"make test"},"result":{"exitCode":1}}"#;

#[test]
fn two_failed_retries_arm_deny_and_an_answer_lifts() {
    let input = [
        FAIL,
        r#"{"tool":"bash","args":{"command":"make test -k"},"result":{"exitCode":2},"output":"ld: cannot find -lfoo"}"#,
        r#"{"tool":"bash","args":{"command":"make test2"},"result":{"exitCode":2}}"#,
        r#"{"tool":"bash","args":{"command":"cd src && make test"},"result":{"exitCode":2},"output":"ld: cannot find -lfoo"}"#,
        r#"{"step":true}"#,
        r#"{"tool":"edit","args":{"path":"a.rs"}}"#,
        r#"{"tool":"read","args":{"path":"a.rs"}}"#,
        r#"{"assistant":"blocker=the linker cannot find libfoo\nruled_out=a missing header file"}"#,
        r#"{"assistant":"blocker=the linker cannot find libfoo\nruled_out=a missing header, the include path is fine\nbest_path=print the library search path with -v"}"#,
        r#"{"tool":"bash","args":{"command":"cd src && make test"},"result":{"exitCode":2},"output":"ld: cannot find -lfoo"}"#,
    ];
    let out = run("null", &input);
    assert_eq!(out[0]["failures"], 0, "the first failure finds the problem");
    assert_eq!(out[1]["failures"], 1);
    assert_eq!(out[2]["failures"], 1, "another target");
    let out = &out[2..];
    assert_eq!(
        out[1]["timeline"],
        json!(["armed (3 failed attempts at the same problem)"])
    );
    assert_eq!(out[1]["gate"], "pending");
    assert_eq!(out[2]["timeline"], json!(["check shown"]));
    assert_eq!(out[3]["decision"], "deny");
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
    expect_test::expect_file!["snapshots/two-failed-retries-arm-deny-and-lift.jsonl"]
        .assert_eq(&printed("null", &input));
}

#[test]
fn agents_are_separate_and_a_user_prompt_resets() {
    let out = run(
        r#"{"failureThreshold": 1, "counting": "any-failure"}"#,
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
    let mut replay = from_json("null").unwrap();
    let cases = [
        ("[1]", "line 1: not a JSON object (got [1])"),
        (
            r#"{"tol":"bash"}"#,
            "line 2: tol is not an event field; did you mean tool?",
        ),
        (r#"{"tool":7}"#, "line 3: tool must be a string (got 7)"),
        (
            r#"{"tool":"bash","result":{"exitCode":"1"}}"#,
            "line 4: result must be \"ok\", \"error\", \"cancelled\", \"unknown-tool\", {\"exitCode\": N}, {\"killed\": true} or {\"timedOut\": true} (got {\"exitCode\":\"1\"})",
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

/// A DSH session log: two identical failed `make` calls, a reply that answers the check, and a
/// third call.
fn session_log() -> Vec<String> {
    const CREATED: u64 = 1_767_225_600_000;
    let at = |seq: u64| CREATED + seq * 1000;
    let call = |seq: u64, id: &str| {
        json!({"type": "tool/call", "seq": seq, "time": at(seq),
            "data": {"turn": 1, "step": 1, "callId": id, "name": "bash", "arguments": r#"{"command":"make"}"#}})
        .to_string()
    };
    let result = |seq: u64, id: &str, text: &str| {
        json!({"type": "tool/result", "seq": seq, "time": at(seq), "surfaceOp": "append",
            "data": {"turn": 1, "step": 1, "message": {"id": format!("m{seq}"), "role": "user",
                "source": {"kind": "tool", "callId": id},
                "content": [{"type": "tool-result", "toolCallId": id, "isError": false,
                    "content": [{"type": "text", "text": text}]}]}}})
        .to_string()
    };
    let reply = |seq: u64, text: &str| {
        json!({"type": "assistant/message", "seq": seq, "time": at(seq),
            "data": {"turn": 1, "step": 1, "message": {"id": format!("a{seq}"), "role": "assistant",
                "content": [{"type": "text", "text": text}], "source": {"kind": "model"}}}})
        .to_string()
    };
    vec![
        json!({"type": "session", "version": 0, "id": "s-1", "createdAt": CREATED, "cwd": "/w", "delegationDepth": 0})
            .to_string(),
        json!({"type": "user/message", "seq": 0, "time": at(0),
            "data": {"id": "u0", "role": "user", "content": [{"type": "text", "text": "fix the build"}], "source": {"kind": "user"}}})
            .to_string(),
        call(1, "c1"),
        result(2, "c1", "error: libfoo not found\n[exit code: 2]"),
        call(3, "c3"),
        result(4, "c3", "error: libfoo not found\n[exit code: 2]"),
        reply(5, "Checking the linker."),
        reply(
            6,
            "blocker=the linker cannot find libfoo\nruled_out=a missing header\nbest_path=print the library search path",
        ),
        call(7, "c7"),
        result(8, "c7", "ok"),
    ]
}

fn replay_session(json: bool) -> String {
    let mut replay = from_json("null").unwrap();
    replay.set_json(json);
    let mut out = String::new();
    for line in session_log() {
        if let Some(text) = replay.feed_line(&line).unwrap() {
            out.push_str(&text);
            out.push('\n');
        }
    }
    out.push_str(&replay.finish().unwrap_or_default());
    out
}

#[test]
fn a_session_log_prints_a_timeline() {
    expect_test::expect_file!["snapshots/session-timeline.txt"].assert_eq(&replay_session(false));
    // The `--json` lines are not pinned yet: they lack `agent` and put `line` last, unlike the
    // event format's `{"line", "agent", "event", …}` that the module documentation promises.
    let json = replay_session(true);
    assert_eq!(json.lines().count(), 8);
}

/// DSH 0.2's session format 4 (recorded from its source, `crates/session-log/fixtures/v4/`): the
/// direct `bash` DSH rejected is not judged nor counted, the program's calls are judged by their
/// own names, and the program that threw on its failed nested `read` adds nothing.
#[test]
fn a_format_4_code_mode_log_is_replayed() {
    let log = include_str!("../../../session-log/fixtures/v4/packages-core-tools-src-ptc.ts.jsonl");
    let mut replay = from_json(r#"{"counting":"any-failure"}"#).unwrap();
    replay.set_json(true);
    let mut rows = Vec::new();
    for line in log.lines() {
        if let Some(text) = replay.feed_line(line).unwrap() {
            for row in text.lines() {
                let v: Value = serde_json::from_str(row).unwrap();
                if v["event"] == "tool" {
                    rows.push(format!(
                        "{} {} {} parent={}",
                        v["tool"].as_str().unwrap(),
                        v["decision"].as_str().unwrap(),
                        v["counted"].as_str().unwrap(),
                        v["parent_call"]
                    ));
                }
            }
        }
    }
    expect_test::expect![[r#"
        bash allow ignored parent=null
        bash allow experiment parent="call-2"
        read allow investigation parent="call-2"
        run_code allow investigation parent=null"#]]
    .assert_eq(&rows.join("\n"));
}
