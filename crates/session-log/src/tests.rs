use super::*;
use serde_json::json;

const CREATED: u64 = 1_767_225_600_000;

fn header_line() -> String {
    json!({"type": "session", "version": 0, "id": "s-1", "createdAt": CREATED, "cwd": "/w", "delegationDepth": 0})
        .to_string()
}

fn call(seq: u64, id: &str, name: &str, arguments: &str) -> String {
    json!({"type": "tool/call", "seq": seq, "time": CREATED + seq * 1000,
        "data": {"turn": 1, "step": 1, "callId": id, "name": name, "arguments": arguments}})
    .to_string()
}

fn result_with(
    seq: u64,
    id: &str,
    text: &str,
    is_error: Option<bool>,
    code: Option<&str>,
) -> String {
    let mut block = json!({"type": "tool-result", "toolCallId": id, "content": [{"type": "text", "text": text}]});
    if let Some(is_error) = is_error {
        block["isError"] = is_error.into();
    }
    let mut data = json!({"turn": 1, "step": 1, "message": {"id": format!("m{seq}"), "role": "user",
        "source": {"kind": "tool", "callId": id}, "content": [block]}});
    if let Some(code) = code {
        data["error"] = json!({"name": "E", "code": code});
    }
    json!({"type": "tool/result", "seq": seq, "time": CREATED + seq * 1000, "data": data, "surfaceOp": "append"})
        .to_string()
}

fn result(seq: u64, id: &str, text: &str) -> String {
    result_with(seq, id, text, Some(false), None)
}

fn message(seq: u64, text: &str, source: Value) -> String {
    json!({"type": "user/message", "seq": seq, "time": CREATED + seq * 1000,
        "data": {"id": format!("u{seq}"), "role": "user", "content": [{"type": "text", "text": text}], "source": source}})
    .to_string()
}

fn prompt(seq: u64, text: &str) -> String {
    message(seq, text, json!({"kind": "user"}))
}

fn reply(seq: u64, content: Value, interrupted: Option<bool>) -> String {
    let mut data = json!({"turn": 1, "step": 1, "message": {"id": format!("a{seq}"), "role": "assistant",
        "content": content, "source": {"kind": "model"}}});
    if let Some(interrupted) = interrupted {
        data["interrupted"] = interrupted.into();
    }
    json!({"type": "assistant/message", "seq": seq, "time": CREATED + seq * 1000, "data": data})
        .to_string()
}

fn end_seed(seq: u64) -> String {
    json!({"type": "session/end-seed", "seq": seq, "time": CREATED + seq * 1000, "data": {}})
        .to_string()
}

fn other(seq: u64, kind: &str) -> String {
    json!({"type": kind, "seq": seq, "time": CREATED + seq * 1000, "data": {"turn": 1}}).to_string()
}

fn reader() -> Reader {
    Reader::open(1, &session_header(&header_line()).unwrap()).unwrap()
}

/// Every event the lines surface after the default header, numbering lines from 2.
fn events(reader: &mut Reader, lines: &[String]) -> Vec<LogEvent> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| reader.read(i + 2, line).unwrap())
        .map(|entry| entry.event)
        .collect()
}

/// The result a call `a` and one result line read to.
fn read_result(line: String) -> ToolResult {
    let mut reader = reader();
    match &events(&mut reader, &[call(0, "a", "bash", "{}"), line])[..] {
        [LogEvent::ToolCall(_), LogEvent::ToolResult(result)] => result.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_a_session_header_starts_a_session_log() {
    assert!(session_header(&header_line()).is_some());
    for line in [
        r#"{"at_ms":0,"tool":"read"}"#,
        r#"{"type":"tool/call","seq":0}"#,
        r#"{"type":5}"#,
        "nope",
        "[]",
    ] {
        assert!(session_header(line).is_none(), "{line}");
    }
}

#[test]
fn the_header_is_read() {
    let value = json!({"type": "session", "version": 0, "id": "child", "createdAt": CREATED, "parentSession": "parent",
        "seedLength": 3, "origin": "subagent", "delegationDepth": 1, "cwd": null});
    assert_eq!(
        Header::parse(&value).unwrap(),
        Header {
            version: 0,
            id: "child".to_owned(),
            created_at: CREATED,
            cwd: None,
            parent: Some("parent".to_owned()),
            subagent: true,
            depth: 1,
            seed_length: 3,
        }
    );
    let float = json!({"type": "session", "version": 0, "id": "s", "createdAt": 5.0});
    assert_eq!(Header::parse(&float).unwrap().created_at, 5);
}

#[test]
fn malformed_headers_are_refused() {
    let cases = [
        (
            json!({"type": "session", "version": 1, "id": "s", "createdAt": 0}),
            "line 1: session log format version 1 is not supported (this replay reads version 0, the format of DSH 0.1, and 4, the format of DSH 0.2)",
        ),
        (
            json!({"type": "session", "id": "s", "createdAt": 0}),
            "line 1: session header: version must be a non-negative integer (got nothing)",
        ),
        (
            json!({"type": "session", "version": 0, "id": "", "createdAt": 0}),
            "line 1: session header: id must be a non-empty string (got \"\")",
        ),
        (
            json!({"type": "session", "version": 0, "id": "s", "createdAt": -5}),
            "line 1: session header: createdAt must be integer Unix epoch milliseconds (got -5)",
        ),
        (
            json!({"type": "session", "version": 0, "id": "s", "createdAt": 0, "seedLength": "3"}),
            "line 1: session header: seedLength must be a non-negative integer (got \"3\")",
        ),
        (
            json!({"type": "session", "version": 0, "id": "s", "createdAt": 0, "cwd": 7}),
            "line 1: session header: cwd must be a string (got 7)",
        ),
    ];
    for (header, message) in cases {
        assert_eq!(Reader::open(1, &header).unwrap_err().to_string(), message);
    }
    assert_eq!(
        Header::parse(&json!([1])).unwrap_err(),
        "must be a JSON object (got [1])"
    );
}

#[test]
fn tool_results_carry_errors_exit_codes_and_signals() {
    let ok = read_result(result(1, "a", "all good"));
    assert_eq!(
        (ok.is_error, &ok.status, ok.repaired),
        (false, &ShellStatus::default(), false)
    );
    assert_eq!(ok.outcome(), Outcome::success());
    assert_eq!(
        ok.call,
        Some(ToolCall {
            call_id: "a".to_owned(),
            name: "bash".to_owned(),
            arguments_json: "{}".to_owned(),
            parent: None,
            root: "a".to_owned(),
        })
    );
    let exit = read_result(result(1, "a", "(no output)\n[exit code: 2]"));
    assert_eq!(exit.status.exit_code, Some(2));
    assert_eq!(exit.text, "(no output)\n[exit code: 2]");
    assert_eq!(exit.outcome(), Outcome::exited(2));
    let killed = read_result(result(
        1,
        "a",
        "partial\n[timed out after 5ms]\n[killed by signal: SIGTERM]",
    ));
    assert_eq!(
        killed.status,
        ShellStatus {
            exit_code: None,
            signal: Some("SIGTERM".to_owned()),
            timeout_ms: Some(5),
        }
    );
    assert!(killed.outcome().killed && killed.outcome().timed_out);
    // isError: the text without DSH's "Error: " prefix; the markers are not read.
    let denied = read_result(result_with(
        1,
        "a",
        "Error: the user denied this\n[exit code: 1]",
        Some(true),
        None,
    ));
    assert_eq!(
        (denied.is_error, &denied.status),
        (true, &ShellStatus::default())
    );
    assert_eq!(denied.text, "the user denied this\n[exit code: 1]");
    assert_eq!(denied.outcome(), Outcome::error());
    let invalid = read_result(result_with(
        1,
        "a",
        "Error: bad",
        Some(true),
        Some("INVALID_ARGS"),
    ));
    assert_eq!(invalid.error_code.as_deref(), Some("INVALID_ARGS"));
    let blocked = read_result(result_with(1, "a", "blocked by policy", Some(true), None));
    assert_eq!(blocked.text, "blocked by policy");
    let aborted = read_result(result_with(
        1,
        "a",
        "Error: aborted",
        Some(true),
        Some("ABORTED"),
    ));
    assert_eq!(aborted.outcome(), Outcome::cancelled());
    // isError may be absent.
    assert!(!read_result(result_with(1, "a", "x", None, None)).is_error);
    let repaired = read_result(result_with(
        1,
        "a",
        "lost",
        Some(true),
        Some("TOOL_OUTCOME_UNKNOWN"),
    ));
    assert!(repaired.repaired);
    assert_eq!(repaired.call.unwrap().name, "bash");
    // Text blocks are joined; other blocks are skipped.
    let line = json!({"type": "tool/result", "seq": 1, "time": 5, "data": {"message": {"content": [{
        "type": "tool-result", "toolCallId": "a",
        "content": [{"type": "text", "text": "one"}, {"type": "image", "data": "…"}, {"type": "text", "text": "[exit code: 3]"}]}]}}})
    .to_string();
    let joined = read_result(line);
    assert_eq!(
        (joined.text.as_str(), joined.status.exit_code),
        ("one\n[exit code: 3]", Some(3))
    );
}

#[test]
fn results_pair_with_their_calls() {
    let mut reader = reader();
    let out = events(
        &mut reader,
        &[
            call(0, "x", "read", r#"{"path":"a"}"#),
            call(1, "y", "edit", ""),
            result(2, "y", "updated"),
            result(3, "x", "1: a"),
            result_with(
                4,
                "never-recorded",
                "not started",
                Some(true),
                Some("TOOL_NOT_STARTED"),
            ),
        ],
    );
    let results: Vec<(String, Option<String>, Option<String>)> = out
        .iter()
        .filter_map(|event| match event {
            LogEvent::ToolResult(r) => Some((
                r.call_id.clone(),
                r.call.as_ref().map(|c| c.name.clone()),
                r.call.as_ref().map(|c| c.arguments_json.clone()),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("y".to_owned(), Some("edit".to_owned()), Some(String::new())),
            (
                "x".to_owned(),
                Some("read".to_owned()),
                Some(r#"{"path":"a"}"#.to_owned())
            ),
            ("never-recorded".to_owned(), None, None),
        ]
    );
    // A call's result is taken once: a second one is an orphan.
    let error = reader.read(9, &result(5, "x", "again")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 9: tool/result: call \"x\" has no earlier tool/call"
    );
}

#[test]
fn user_messages_are_prompts_only_from_a_human() {
    let mut reader = reader();
    let out = events(
        &mut reader,
        &[
            prompt(0, "hi"),
            message(
                1,
                "ctx",
                json!({"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}),
            ),
            message(
                2,
                "r",
                json!({"kind": "plugin", "plugin": "research-nudge", "summary": "research debt 3/3"}),
            ),
            message(3, "g", json!({"kind": "goal", "plugin": 5})),
            json!({"type": "user/message", "seq": 4, "time": 9, "data": {"content": "plain", "source": {"kind": "user"}}})
                .to_string(),
            json!({"type": "user/message", "seq": 5, "time": 9, "data": {"source": {"kind": "user"}}})
                .to_string(),
            // A producer-owned kind (0.2, and this family's own messages), and a V4-migrated one.
            message(
                6,
                "n",
                json!({"kind": "research-nudge", "form": "notice", "summary": "research debt 3/3"}),
            ),
            message(7, "m", json!({"kind": "plugin:research-nudge", "plugin": "research-nudge"})),
        ],
    );
    assert_eq!(
        out,
        [
            LogEvent::UserPrompt {
                text: "hi".to_owned()
            },
            LogEvent::Injected {
                kind: "plugin".to_owned(),
                plugin: Some("@deepseek-ai/dsh-system-prompt".to_owned()),
                summary: None,
                text: "ctx".to_owned(),
            },
            LogEvent::Injected {
                kind: "plugin".to_owned(),
                plugin: Some("research-nudge".to_owned()),
                summary: Some("research debt 3/3".to_owned()),
                text: "r".to_owned(),
            },
            LogEvent::Injected {
                kind: "goal".to_owned(),
                plugin: Some("goal".to_owned()),
                summary: None,
                text: "g".to_owned(),
            },
            LogEvent::UserPrompt {
                text: "plain".to_owned()
            },
            LogEvent::UserPrompt {
                text: String::new()
            },
            LogEvent::Injected {
                kind: "research-nudge".to_owned(),
                plugin: Some("research-nudge".to_owned()),
                summary: Some("research debt 3/3".to_owned()),
                text: "n".to_owned(),
            },
            LogEvent::Injected {
                kind: "plugin".to_owned(),
                plugin: Some("research-nudge".to_owned()),
                summary: None,
                text: "m".to_owned(),
            },
        ]
    );
}

#[test]
fn assistant_replies_are_their_text_blocks() {
    let mut reader = reader();
    let out = events(
        &mut reader,
        &[
            reply(
                0,
                json!([
                    {"type": "reasoning", "text": "hidden"},
                    {"type": "text", "text": "卡点=x"},
                    {"type": "tool-call", "toolCallId": "c", "name": "read", "arguments": "{}"},
                    {"type": "text", "text": "排除=y"},
                ]),
                None,
            ),
            reply(1, json!([{"type": "text", "text": "cut"}]), Some(true)),
            reply(2, json!([]), Some(false)),
        ],
    );
    assert_eq!(
        out,
        [
            LogEvent::AssistantText {
                text: "卡点=x\n排除=y".to_owned(),
                interrupted: false
            },
            LogEvent::AssistantText {
                text: "cut".to_owned(),
                interrupted: true
            },
            LogEvent::AssistantText {
                text: String::new(),
                interrupted: false
            },
        ]
    );
    let malformed = other(3, "assistant/message");
    assert_eq!(
        reader.read(7, &malformed).unwrap_err().to_string(),
        "line 7: assistant/message: data.message must be an object (got nothing)"
    );
    // A consumer without a use for replies skips them unread, malformed or not.
    let mut quiet = self::reader().without_assistant_text();
    assert_eq!(quiet.read(2, &malformed).unwrap(), None);
    assert_eq!(
        quiet
            .read(3, &reply(4, json!([{"type": "text", "text": "x"}]), None))
            .unwrap(),
        None
    );
}

#[test]
fn events_no_guard_needs_are_skipped() {
    let mut reader = reader();
    for line in [
        other(0, "assistant/chunk"),
        other(0, "turn/start"),
        other(0, "turn/end"),
        other(0, "agent/inbox/spliced"),
        json!({"type": "text-chunks", "seq0": 3, "time0": 5, "data": {}}).to_string(),
        json!({"type": "some/future-event", "ignorable": true}).to_string(),
    ] {
        assert_eq!(reader.read(2, &line).unwrap(), None, "{line}");
    }
}

#[test]
fn entries_carry_seq_and_the_recorded_time() {
    let mut reader = reader();
    let stepped_back = json!({"type": "user/message", "seq": 1, "time": CREATED - 1,
        "data": {"content": [], "source": {"kind": "user"}}})
    .to_string();
    let first = reader.read(2, &prompt(0, "a")).unwrap().unwrap();
    let second = reader.read(3, &stepped_back).unwrap().unwrap();
    assert_eq!((first.seq, first.time), (0, CREATED));
    assert_eq!((second.seq, second.time), (1, CREATED - 1));
    let float = json!({"type": "session/end-seed", "seq": 2, "time": 7.0, "data": {}}).to_string();
    assert_eq!(reader.read(4, &float).unwrap().unwrap().time, 7);
}

#[test]
fn a_seed_end_after_surfaced_events_is_a_reopening() {
    let mut reader = reader();
    let out = events(
        &mut reader,
        &[
            end_seed(0), // a fork's seed end before any live work: nothing to reopen
            prompt(1, "go"),
            end_seed(2),
            end_seed(3), // nothing happened since the last reopening
            call(4, "c", "read", "{}"),
            end_seed(5),
        ],
    );
    assert_eq!(
        out,
        [
            LogEvent::UserPrompt {
                text: "go".to_owned()
            },
            LogEvent::Reopened,
            LogEvent::ToolCall(ToolCall {
                call_id: "c".to_owned(),
                name: "read".to_owned(),
                arguments_json: "{}".to_owned(),
                parent: None,
                root: "c".to_owned(),
            }),
            LogEvent::Reopened,
        ]
    );
}

#[test]
fn a_forks_inherited_events_are_skipped_but_checked() {
    let header = json!({"type": "session", "version": 0, "id": "child", "createdAt": CREATED, "parentSession": "parent",
        "seedLength": 4, "origin": "subagent", "delegationDepth": 1});
    let mut reader = Reader::open(1, &header).unwrap();
    assert_eq!(reader.header().seed_length, 4);
    let out = events(
        &mut reader,
        &[
            call(0, "c0", "edit", "{}"),
            result(1, "c0", "inherited"),
            prompt(2, "inherited prompt"),
            reply(3, json!([{"type": "text", "text": "inherited"}]), None),
            end_seed(4),
            call(5, "c5", "read", "{}"),
            result(6, "c5", "live"),
        ],
    );
    assert_eq!(out.len(), 2);
    assert!(matches!(&out[1], LogEvent::ToolResult(r) if r.text == "live"));
    // A result whose call was inherited is an orphan.
    let mut reader = Reader::open(1, &header).unwrap();
    events(&mut reader, &[call(0, "c0", "edit", "{}")]);
    assert!(reader.read(3, &result(4, "c0", "late")).is_err());
    // An inherited line is still checked.
    let mut reader = Reader::open(1, &header).unwrap();
    let bad = r#"{"type":"tool/call","seq":0,"time":5,"data":{"callId":"a","name":""}}"#;
    assert_eq!(
        reader.read(2, bad).unwrap_err().message,
        "tool/call: data.name must not be empty"
    );
}

#[test]
fn malformed_session_lines_name_the_line_and_the_field() {
    let cases = [
        ("nope".to_owned(), "line 2: not valid JSON"),
        ("[1]".to_owned(), "line 2: must be a JSON object (got [1])"),
        (r#"{"seq":1}"#.to_owned(), "line 2: type must be a string naming the session event (got nothing)"),
        (header_line(), "line 2: a second session header (a session log has one, on its first line)"),
        (
            r#"{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"read"}}"#.to_owned(),
            "line 2: tool/call: data.arguments must be a string (got nothing)",
        ),
        (
            r#"{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"","arguments":"{}"}}"#.to_owned(),
            "line 2: tool/call: data.name must not be empty",
        ),
        (
            r#"{"type":"tool/call","seq":-1,"time":5,"data":{}}"#.to_owned(),
            "line 2: tool/call: seq must be a non-negative integer (got -1)",
        ),
        (
            r#"{"type":"tool/call","seq":1,"time":"noon","data":{}}"#.to_owned(),
            "line 2: tool/call: time must be integer Unix epoch milliseconds (got \"noon\")",
        ),
        (
            r#"{"type":"tool/result","seq":1,"time":5,"data":[]}"#.to_owned(),
            "line 2: tool/result: data must be an object (got [])",
        ),
        (
            r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{}}}"#.to_owned(),
            "line 2: tool/result: data.message.content must be an array (got nothing)",
        ),
        (
            r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"text"}]}}}"#.to_owned(),
            "line 2: tool/result: data.message.content[0] must be a tool-result block (got {\"type\":\"text\"})",
        ),
        (
            r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[],"isError":"yes"}]}}}"#.to_owned(),
            "line 2: tool/result: data.message.content[0].isError must be true or false (got \"yes\")",
        ),
        (
            r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[]}]}}}"#.to_owned(),
            "line 2: tool/result: data.message.content[0].toolCallId must be a string (got nothing)",
        ),
        (
            result(1, "zz", "orphan"),
            "line 2: tool/result: call \"zz\" has no earlier tool/call",
        ),
        (
            r#"{"type":"user/message","seq":1,"time":5,"data":{"source":{}}}"#.to_owned(),
            "line 2: user/message: data.source.kind must be a string (got nothing)",
        ),
        (
            r#"{"type":"assistant/message","seq":1,"time":5,"data":{"message":{"content":{}}}}"#.to_owned(),
            "line 2: assistant/message: data.message.content must be an array (got {})",
        ),
    ];
    for (line, message) in cases {
        let error = reader().read(2, &line).unwrap_err().to_string();
        assert!(
            error.starts_with(message),
            "{line}\n  got: {error}\n  want: {message}"
        );
    }
}

/// Every event a log's lines surface.
fn read_all(text: &str) -> Result<Vec<LogEvent>, ReadError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (n, first) = lines.next().expect("a header line");
    let mut reader = Reader::open(n + 1, &session_header(first).expect("a session header"))?;
    let mut out = Vec::new();
    for (n, line) in lines {
        if let Some(entry) = reader.read(n + 1, line)? {
            out.push(entry.event);
        }
    }
    Ok(out)
}

fn results(events: &[LogEvent]) -> Vec<&ToolResult> {
    events
        .iter()
        .filter_map(|e| match e {
            LogEvent::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// DSH rc.8's Code Mode events, as a real rc.8 turn logged them (`dsh-tools`' `run_code`
/// bridge: `tool/code-dispatch-start` before the nested call's pre-execute, `tool/code-dispatch`
/// when it settled, then the program's own `tool/result`).
#[test]
fn code_mode_nested_calls_are_calls_of_their_own() {
    let start = json!({"type": "tool/code-dispatch-start", "seq": 2, "time": CREATED + 2000,
        "data": {"rootCallId": "call_1", "parentCallId": "call_1", "subCallId": "call_1:code:1",
            "name": "bash", "arguments": {"command": "sh build.sh", "description": "Build"}}});
    let settled = json!({"type": "tool/code-dispatch", "seq": 3, "time": CREATED + 3000,
        "data": {"rootCallId": "call_1", "parentCallId": "call_1", "subCallId": "call_1:code:1",
            "name": "bash", "arguments": {"command": "sh build.sh", "description": "Build"},
            "isError": false, "content": [{"type": "text", "text": "ld: cannot find -lfoo\n[exit code: 3]"}]}});
    let log = [
        header_line(),
        call(
            1,
            "call_1",
            "run_code",
            r#"{"code":"await tools.bash({command:'sh build.sh'})","description":"Build"}"#,
        ),
        start.to_string(),
        settled.to_string(),
        result_with(
            4,
            "call_1",
            "Error: code run failed (exception): x",
            Some(true),
            Some("CODE_RUN_FAILED"),
        ),
    ]
    .join("\n");
    let events = read_all(&log).unwrap();
    assert_eq!(events.len(), 4);
    let LogEvent::ToolCall(nested) = &events[1] else {
        panic!("{:?}", events[1]);
    };
    assert_eq!(nested.call_id, "call_1:code:1");
    assert_eq!(nested.parent.as_deref(), Some("call_1"));
    assert_eq!(nested.root, "call_1");
    assert_eq!(
        serde_json::from_str::<Value>(&nested.arguments_json).unwrap(),
        json!({"command": "sh build.sh", "description": "Build"})
    );
    let results = results(&events);
    assert_eq!(results[0].outcome(), Outcome::exited(3));
    assert_eq!(results[0].call.as_ref().unwrap().name, "bash");
    assert_eq!(results[1].call.as_ref().unwrap().name, "run_code");
    assert_eq!(results[1].call.as_ref().unwrap().parent, None);
    assert_eq!(results[1].error_code.as_deref(), Some("CODE_RUN_FAILED"));
    // A settled nested call with no start is an error naming the event.
    let orphan = [header_line(), settled.to_string()].join("\n");
    let err = read_all(&orphan).unwrap_err();
    assert_eq!(err.line, 2);
    assert!(err.message.contains("call_1:code:1"), "{}", err.message);
    // A start without arguments names the field.
    let mut bad = start.clone();
    bad["data"].as_object_mut().unwrap().remove("arguments");
    let err = read_all(&[header_line(), bad.to_string()].join("\n")).unwrap_err();
    assert_eq!(
        err.message,
        "tool/code-dispatch-start: data.arguments must be a JSON value (got nothing)"
    );
}

/// DSH 0.2's format 4, recorded from its source files (see `fixtures/v4/README.md`).
#[test]
fn format_4_logs_are_read() {
    let log = include_str!("../fixtures/v4/packages-core-tools-src-ptc.ts.jsonl");
    let events = read_all(log).unwrap();
    let calls: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter_map(|e| match e {
            LogEvent::ToolCall(c) => Some((c.name.as_str(), c.parent.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("bash", None),
            ("run_code", None),
            ("bash", Some("call-2")),
            ("read", Some("call-2"))
        ]
    );
    let results = results(&events);
    let outcomes: Vec<(&str, Outcome)> = results
        .iter()
        .map(|r| (r.call.as_ref().unwrap().name.as_str(), r.outcome()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("bash", Outcome::unknown_tool()),
            ("bash", Outcome::exited(3)),
            ("read", Outcome::error()),
            ("run_code", Outcome::error()),
        ]
    );
    assert_eq!(
        results[2].text,
        "ENOENT: no such file or directory, open 'missing.txt'"
    );
    assert_eq!(results[3].error_code.as_deref(), Some("CODE_RUN_FAILED"));
    // A producer-owned `plugin:NAME` kind is that plugin's injected context.
    assert!(events.contains(&LogEvent::Injected {
        kind: "plugin".to_owned(),
        plugin: Some("research-nudge".to_owned()),
        summary: Some("Research Nudge: debt 12/12".to_owned()),
        text: "[Research Nudge] reminder".to_owned(),
    }));
    assert!(events.contains(&LogEvent::UserPrompt {
        text: "Make the build pass.".to_owned()
    }));
}

#[test]
fn format_4_headers_are_checked() {
    let header = |extra: Value| {
        let mut h = json!({"type": "session", "version": 4, "id": "s", "createdAt": CREATED});
        for (k, v) in extra.as_object().unwrap() {
            h[k] = v.clone();
        }
        Header::parse(&h)
    };
    assert_eq!(header(json!({"isSeeded": false})).unwrap().version, 4);
    let seeded = header(json!({"isSeeded": true})).unwrap_err();
    assert!(
        seeded.contains("seeded (forked) format 4 log is not supported"),
        "{seeded}"
    );
    assert_eq!(
        header(json!({})).unwrap_err(),
        "session header: isSeeded must be true or false in format 4 (got nothing)"
    );
    let three = Header::parse(&json!({"type": "session", "version": 3, "id": "s", "createdAt": 1}))
        .unwrap_err();
    assert!(
        three.starts_with("session log format version 3 is not supported"),
        "{three}"
    );
}
