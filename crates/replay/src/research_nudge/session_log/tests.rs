use super::*;
use crate::research_nudge::events::Replay;
use ::session_log::{Reader, session_header as header};
use serde_json::Value;

const CREATED: Millis = 1_767_225_600_000;

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

fn other(seq: u64, kind: &str) -> String {
    json!({"type": kind, "seq": seq, "time": CREATED + seq * 1000, "data": {"turn": 1}}).to_string()
}

/// A finished call: its tool/call and tool/result lines.
fn tool(seq: u64, name: &str, text: &str) -> [String; 2] {
    let id = format!("c{seq}");
    [call(seq, &id, name, "{}"), result(seq + 1, &id, text)]
}

fn replay(
    config: &str,
    json: bool,
    lines: &[String],
) -> Result<(Vec<String>, Option<String>), String> {
    let mut replay = Replay::from_json(config).unwrap();
    replay.set_json(json);
    let mut out = Vec::new();
    for line in lines {
        if let Some(text) = replay.feed_line(line)? {
            out.push(text);
        }
    }
    Ok((out, replay.finish()))
}

/// A printed timeline: its lines and the closing summary, as the CLI writes them.
fn timeline(lines: &[String], summary: Option<String>) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(&summary.unwrap_or_default());
    text
}

fn rows(config: &str, lines: &[String]) -> Vec<Value> {
    replay(config, true, lines)
        .unwrap()
        .0
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn log(parts: &[&[String]]) -> Vec<String> {
    let mut lines = vec![header_line()];
    for part in parts {
        lines.extend(part.iter().cloned());
    }
    lines
}

/// The README's worked example, as DSH would log it.
fn worked_example() -> Vec<String> {
    log(&[
        &[prompt(0, "Fix the TypeError"), other(1, "assistant/chunk")],
        &tool(2, "read", "1: let x = 1"),
        &tool(4, "edit", "updated"),
        &tool(6, "bash", "[stderr]\nTypeError at line 123\n[exit code: 1]"),
        &tool(8, "edit", "updated"),
        &tool(
            10,
            "bash",
            "[stderr]\nTypeError at line 456\n[exit code: 1]",
        ),
        &[message(
            12,
            "[Research Nudge]\n\n…",
            json!({"kind": "plugin", "plugin": "research-nudge", "form": "notice", "summary": "research debt 21/20"}),
        )],
    ])
}

#[test]
fn the_replay_format_is_untouched_by_session_detection() {
    // A replay-format stream whose first line has a stray "type" still gets its own message.
    let mut replay = Replay::from_json("{}").unwrap();
    assert_eq!(
        replay
            .feed_line(r#"{"at_ms":0,"tool":"read","type":"x"}"#)
            .unwrap_err(),
        "line 1: unknown field \"type\""
    );
    // And a session header after a replay-format line is just a malformed event.
    let mut replay = Replay::from_json("{}").unwrap();
    replay.feed_line(r#"{"at_ms":0,"tool":"read"}"#).unwrap();
    expect_test::expect!["line 2: at_ms is required (integer milliseconds)"]
        .assert_eq(&replay.feed_line(&header_line()).unwrap_err());
}

#[test]
fn the_worked_example_matches_the_replay_format() {
    let out = rows("{}", &worked_example());
    let tools: Vec<&Value> = out.iter().filter(|r| r["event"] == "tool").collect();
    let debts: Vec<u64> = tools.iter().map(|r| r["debt"].as_u64().unwrap()).collect();
    assert_eq!(debts, [1, 3, 8, 10, 21]);
    let fifth = tools[4];
    assert_eq!(fifth["nudge"], true);
    assert_eq!(fifth["trigger"], json!(["debt"]));
    assert_eq!(fifth["exit_code"], 1);
    assert_eq!(fifth["result"], "exit 1");
    assert_eq!(fifth["repeated_failures"], 1);
    let (printed, summary) = replay("{}", true, &worked_example()).unwrap();
    assert_eq!(summary, None);
    expect_test::expect_file!["snapshots/worked-example.jsonl"]
        .assert_eq(&(printed.join("\n") + "\n"));
    // The part-1 keys come first, in the part-1 order.
    let keys: Vec<&str> = tools[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "agent",
            "debt",
            "tool_calls_since_research",
            "failures",
            "repeated_failures",
            "nudge",
            "event",
            "line",
            "time",
            "call",
            "tool",
            "class",
            "result"
        ]
    );
    assert_eq!(tools[0]["agent"], "s-1");
    assert_eq!(tools[0]["line"], 5);
    assert_eq!(tools[0]["time"], CREATED + 3000);
    assert_eq!(out[0]["event"], "user_prompt");
    let live = out.last().unwrap();
    assert_eq!(
        (live["event"].as_str(), live["ignored"].as_bool()),
        (Some("live_reminder"), Some(true))
    );
    assert_eq!(live["summary"], "research debt 21/20");
    // The same events in the replay format give the same states.
    let events = [
        r#"{"at_ms":3000,"tool":"read"}"#,
        r#"{"at_ms":5000,"tool":"edit"}"#,
        r#"{"at_ms":7000,"tool":"bash","exit_code":1,"error":"[stderr]\nTypeError at line 123\n[exit code: 1]"}"#,
        r#"{"at_ms":9000,"tool":"edit"}"#,
        r#"{"at_ms":11000,"tool":"bash","exit_code":1,"error":"[stderr]\nTypeError at line 456\n[exit code: 1]"}"#,
    ];
    let mut part1 = Replay::from_json("{}").unwrap();
    for (event, row) in events.iter().zip(&tools) {
        let out: Value = serde_json::from_str(&part1.feed_line(event).unwrap().unwrap()).unwrap();
        for key in [
            "debt",
            "tool_calls_since_research",
            "failures",
            "repeated_failures",
            "nudge",
        ] {
            assert_eq!(out[key], row[key], "{event} {key}");
        }
    }
}

/// The result a call `a` and one result line read to, as `dsh-session-log` reads it.
fn read_result(line: String) -> ToolResult {
    let mut reader = Reader::open(1, &header(&header_line()).unwrap()).unwrap();
    reader.read(2, &call(0, "a", "bash", "{}")).unwrap();
    match reader.read(3, &line).unwrap().map(|entry| entry.event) {
        Some(LogEvent::ToolResult(result)) => result,
        other => panic!("{other:?}"),
    }
}

#[test]
fn results_are_labelled_by_error_exit_code_and_signal() {
    let labelled = |line: String| label(&read_result(line));
    assert_eq!(labelled(result(1, "a", "all good")), "ok");
    assert_eq!(
        labelled(result(1, "a", "(no output)\n[exit code: 2]")),
        "exit 2"
    );
    assert_eq!(
        labelled(result(
            1,
            "a",
            "partial\n[timed out after 5ms]\n[killed by signal: SIGTERM]",
        )),
        "timeout SIGTERM"
    );
    assert_eq!(
        labelled(result(1, "a", "partial\n[killed by signal: SIGKILL]")),
        "killed SIGKILL"
    );
    assert_eq!(
        labelled(result(
            1,
            "a",
            "partial\n[timed out after 5ms]\n[exit code: 124]"
        )),
        "exit 124"
    );
    assert_eq!(
        labelled(result(1, "a", "done\n[timed out after 5ms]")),
        "timed out"
    );
    for text in ["[exit code: 1]\nmore", "[exit code: x]", "[exit code: -1]"] {
        assert_eq!(labelled(result(1, "a", text)), "ok", "{text:?}");
    }
    assert_eq!(
        labelled(result_with(
            1,
            "a",
            "Error: the user denied this\n[exit code: 1]",
            Some(true),
            None,
        )),
        "error"
    );
    assert_eq!(
        labelled(result_with(
            1,
            "a",
            "Error: bad",
            Some(true),
            Some("INVALID_ARGS")
        )),
        "error INVALID_ARGS"
    );
    assert_eq!(
        labelled(result_with(
            1,
            "a",
            "lost",
            Some(true),
            Some("TOOL_OUTCOME_UNKNOWN"),
        )),
        "interrupted"
    );
}

#[test]
fn a_kill_or_a_timeout_is_a_failure() {
    let out = rows(
        "{}",
        &log(&[
            &tool(
                0,
                "bash",
                "x\n[timed out after 5ms]\n[killed by signal: SIGTERM]",
            ),
            &tool(2, "bash", "y\n[timed out after 5ms]"),
            &tool(4, "bash", "z\n[killed by signal: SIGKILL]"),
            &tool(6, "bash", "z\n[killed by signal: SIGKILL]"),
        ]),
    );
    assert_eq!(
        (
            out[0]["result"].as_str(),
            out[0]["signal"].as_str(),
            out[0]["timed_out"].as_bool()
        ),
        (Some("timeout SIGTERM"), Some("SIGTERM"), Some(true))
    );
    assert!(out[0].get("exit_code").is_none());
    assert_eq!(
        (out[1]["result"].as_str(), out[1]["timed_out"].as_bool()),
        (Some("timed out"), Some(true))
    );
    assert_eq!(
        (out[2]["result"].as_str(), out[2].get("timed_out")),
        (Some("killed SIGKILL"), None)
    );
    let failures: Vec<_> = out.iter().map(|r| r["failures"].as_u64()).collect();
    assert_eq!(failures, [Some(1), Some(2), Some(3), Some(4)]);
    // bash +1, failure +4 each; the second identical kill repeats (+6).
    let debts: Vec<_> = out.iter().map(|r| r["debt"].as_u64()).collect();
    assert_eq!(debts, [Some(5), Some(10), Some(15), Some(26)]);
    assert_eq!(out[3]["repeated_failures"], 1);
    let (_, summary) = replay(
        "{}",
        false,
        &log(&[&tool(0, "bash", "x\n[timed out after 5ms]")]),
    )
    .unwrap();
    expect_test::expect![[r#"

        summary: 1 tool call (1 failed), 0 user prompts
        nudges: none
        peaks: debt 5/20 at call 1, calls since research 1/15 at call 1"#]]
    .assert_eq(&summary.unwrap());
}

#[test]
fn only_its_own_notices_are_live_reminders() {
    let out = rows(
        "{}",
        &log(&[&[
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
            message(3, "g", json!({"kind": "goal"})),
            message(4, "n", json!({"kind": "goal", "plugin": "research-nudge"})),
        ]]),
    );
    let events: Vec<(&str, u64)> = out
        .iter()
        .map(|r| (r["event"].as_str().unwrap(), r["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(events, [("user_prompt", 2), ("live_reminder", 4)]);
    assert_eq!(out[1]["summary"], "research debt 3/3");
}

#[test]
fn events_the_policy_does_not_need_are_skipped() {
    let lines = [
        other(0, "assistant/chunk"),
        // Assistant replies are skipped unread, even malformed ones.
        other(0, "assistant/message"),
        json!({"type": "assistant/message", "seq": 0, "time": 1, "data": {"message": {"content": [{"type": "text", "text": "hi"}]}}})
            .to_string(),
        other(0, "turn/start"),
        other(0, "turn/end"),
        other(0, "agent/inbox/spliced"),
        json!({"type": "text-chunks", "seq0": 3, "time0": 5, "data": {}}).to_string(),
        json!({"type": "some/future-event", "ignorable": true}).to_string(),
    ];
    let (out, summary) = replay("{}", true, &log(&[&lines])).unwrap();
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(summary, None);
}

#[test]
fn the_snooze_tool_arms_the_minutes_its_arguments_ask_for() {
    let snooze = |seq: u64, args: &str, text: &str, is_error: bool| {
        let id = format!("s{seq}");
        [
            call(seq, &id, SNOOZE, args),
            result_with(seq + 1, &id, text, Some(is_error), None),
        ]
    };
    const SNOOZE: &str = policy::SNOOZE_TOOL_NAME;
    let out = rows(
        r#"{"maxAgentSnoozeMinutes":20}"#,
        &log(&[
            &snooze(0, r#"{"minutes":45,"reason":"local"}"#, "snoozed", false),
            &snooze(2, "", "snoozed", false),
            &snooze(
                4,
                r#"{"minutes":"abc"}"#,
                "Error: minutes must be a number",
                true,
            ),
            &snooze(
                6,
                r#"{"minutes":"abc"}"#,
                "snoozed under another config",
                false,
            ),
        ]),
    );
    assert_eq!(out[0]["snooze_minutes"], 20);
    assert_eq!(out[0]["debt"], 0);
    // Empty arguments are `{}` (DSH parses them so): the default 30, capped at 20.
    assert_eq!(out[1]["snooze_minutes"], 20);
    // A failed snooze call is a failure.
    assert_eq!(
        (out[2]["debt"].as_u64(), out[2]["result"].as_str()),
        (Some(5), Some("error"))
    );
    // Arguments this config's tool would refuse fail the call, as the tool body would.
    assert_eq!(out[3]["failures"], 2);
    assert_eq!(
        out[3]["snooze_refused"],
        r#"minutes must be a number (got "abc")"#
    );
}

#[test]
fn held_thresholds_name_the_snooze_or_the_cooldown() {
    let config = r#"{"debtThreshold":2}"#;
    let out = rows(
        config,
        &log(&[
            &tool(0, "edit", "ok"),
            &tool(2, "edit", "ok"),
            &[
                call(4, "s", policy::SNOOZE_TOOL_NAME, r#"{"minutes":5}"#),
                result(5, "s", "snoozed"),
            ],
            &tool(6, "edit", "ok"),
        ]),
    );
    assert_eq!(out[0]["trigger"], json!(["debt"]));
    assert_eq!(out[0]["nudge"], true);
    assert_eq!(
        (out[1]["trigger"].clone(), out[1]["held_by"].as_str()),
        (json!(["debt"]), Some("cooldown"))
    );
    assert_eq!(out[3]["held_by"], "snooze");
    assert!(out[2].get("trigger").is_none());
}

#[test]
fn calls_and_minutes_triggers_are_named() {
    let out = rows(
        r#"{"maxToolCallsWithoutResearch":2,"debtThreshold":100}"#,
        &log(&[&tool(0, "read", "a"), &tool(2, "read", "b")]),
    );
    assert_eq!(out[1]["trigger"], json!(["calls"]));
    let late = json!({"type": "tool/result", "seq": 3, "time": CREATED + 16 * MINUTE,
        "data": {"message": {"content": [{"type": "tool-result", "toolCallId": "c2", "content": []}]}}})
    .to_string();
    let out = rows(
        "{}",
        &log(&[
            &[prompt(0, "go")],
            &tool(1, "read", "a")[..1],
            &[call(2, "c2", "read", "{}"), late],
        ]),
    );
    // The first call never finished; the second finished 16 minutes after the prompt.
    assert_eq!(out.len(), 2);
    assert_eq!(out[1]["trigger"], json!(["minutes"]));
}

#[test]
fn a_reopened_session_is_a_fresh_agent_and_repair_results_are_not_counted() {
    let end_seed = |seq: u64| {
        json!({"type": "session/end-seed", "seq": seq, "time": CREATED + seq * 1000, "data": {}})
            .to_string()
    };
    let out = rows(
        "{}",
        &log(&[
            &[end_seed(0)], // a fork's seed end before any live work: nothing to reopen
            &tool(1, "edit", "ok"),
            &[call(3, "c3", "bash", "{}")],
            &[result_with(
                4,
                "c3",
                "unknown",
                Some(true),
                Some("TOOL_OUTCOME_UNKNOWN"),
            )],
            &[result_with(
                5,
                "never-recorded",
                "not started",
                Some(true),
                Some("TOOL_NOT_STARTED"),
            )],
            &[end_seed(6)],
            &tool(7, "edit", "ok"),
        ]),
    );
    let events: Vec<&str> = out.iter().map(|r| r["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["tool", "tool", "tool", "resume", "tool"]);
    assert_eq!(out[0]["debt"], 2);
    assert_eq!(
        (out[1]["ignored"].as_bool(), out[1]["debt"].as_u64()),
        (Some(true), Some(2))
    );
    assert!(out[1].get("call").is_none());
    assert_eq!(out[1]["result"], "interrupted");
    assert_eq!(out[2]["tool"], "?");
    assert_eq!(out[3]["debt"], 0);
    assert_eq!(
        (out[4]["debt"].as_u64(), out[4]["call"].as_u64()),
        (Some(2), Some(2))
    );
}

#[test]
fn a_forks_inherited_events_are_skipped() {
    let mut lines = vec![
        json!({"type": "session", "version": 0, "id": "child", "createdAt": CREATED, "parentSession": "parent",
            "seedLength": 3, "origin": "subagent", "delegationDepth": 1})
        .to_string(),
    ];
    lines.extend(tool(0, "edit", "inherited"));
    lines.push(prompt(2, "inherited prompt"));
    lines.extend(tool(3, "read", "live"));
    let out = rows("{}", &lines);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0]["tool"].as_str(), out[0]["debt"].as_u64()),
        (Some("read"), Some(1))
    );
    let (text, summary) = replay("{}", false, &lines).unwrap();
    expect_test::expect![[r#"
        DSH session child (started 2026-01-01 00:00:00 UTC)
        subagent session, delegation depth 1, parent parent
        forked from parent: its first 3 events are the parent's history and are not replayed
        thresholds: debt >= 20, calls >= 15, minutes >= 15; cooldown 10 min; snooze at most 60 min

         call  time       tool                    class      result              debt  calls  mins  event
            1  +0:04      read                    ordinary   ok                     1      1     0

        summary: 1 tool call, 0 user prompts
        nudges: none
        peaks: debt 1/20 at call 1, calls since research 1/15 at call 1"#]].assert_eq(&timeline(&text, summary));
}

#[test]
fn a_disabled_plugin_ignores_everything() {
    let out = rows(r#"{"enabled":false}"#, &worked_example());
    assert!(
        out.iter()
            .all(|r| r["ignored"] == true && r["debt"] == 0 && r["nudge"] == false)
    );
    let (text, summary) = replay(r#"{"enabled":false}"#, false, &worked_example()).unwrap();
    expect_test::expect![[r#"
        DSH session s-1 (started 2026-01-01 00:00:00 UTC, cwd /w)
        the plugin is disabled by this config: nothing is counted

         call  time       tool                    class      result              debt  calls  mins  event
               +0:00      user prompt                                               0      0     0  ignored (plugin disabled): "Fix the TypeError"
            1  +0:03      read                    ordinary   ok                     0      0     0  ignored (plugin disabled)
            2  +0:05      edit                    mutation   ok                     0      0     0  ignored (plugin disabled)
            3  +0:07      bash                    execution  exit 1                 0      0     0  ignored (plugin disabled)
            4  +0:09      edit                    mutation   ok                     0      0     0  ignored (plugin disabled)
            5  +0:11      bash                    execution  exit 1                 0      0     0  ignored (plugin disabled)
               +0:12      (live reminder)                                                           the plugin nudged here when the session ran (research debt 21/20)

        summary: 5 tool calls (2 failed), 1 user prompt, 1 reminder injected when it ran
        nudges: none (the plugin is disabled by this config)"#]].assert_eq(&timeline(&text, summary));
}

#[test]
fn malformed_session_lines_name_the_line_and_the_field() {
    let cases = [
        "nope".to_owned(),
        "[1]".to_owned(),
        r#"{"seq":1}"#.to_owned(),
        header_line(),
        r#"{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"read"}}"#.to_owned(),
        r#"{"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"","arguments":"{}"}}"#.to_owned(),
        r#"{"type":"tool/call","seq":-1,"time":5,"data":{}}"#.to_owned(),
        r#"{"type":"tool/call","seq":1,"time":"noon","data":{}}"#.to_owned(),
        r#"{"type":"tool/result","seq":1,"time":5,"data":[]}"#.to_owned(),
        r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{}}}"#.to_owned(),
        r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"text"}]}}}"#.to_owned(),
        r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[],"isError":"yes"}]}}}"#.to_owned(),
        r#"{"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[]}]}}}"#.to_owned(),
        result(1, "zz", "orphan"),
        r#"{"type":"user/message","seq":1,"time":5,"data":{"source":{}}}"#.to_owned(),
    ];
    let mut errors = String::new();
    for line in cases {
        let error = replay("{}", true, &[header_line(), line.clone()]).unwrap_err();
        errors.push_str(&format!("{line}\n  {error}\n"));
    }
    expect_test::expect![[r#"
        nope
          line 2: not valid JSON (expected ident at line 1 column 2)
        [1]
          line 2: must be a JSON object (got [1])
        {"seq":1}
          line 2: type must be a string naming the session event (got nothing)
        {"type":"session","version":0,"id":"s-1","createdAt":1767225600000,"cwd":"/w","delegationDepth":0}
          line 2: a second session header (a session log has one, on its first line)
        {"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"read"}}
          line 2: tool/call: data.arguments must be a string (got nothing)
        {"type":"tool/call","seq":1,"time":5,"data":{"callId":"a","name":"","arguments":"{}"}}
          line 2: tool/call: data.name must not be empty
        {"type":"tool/call","seq":-1,"time":5,"data":{}}
          line 2: tool/call: seq must be a non-negative integer (got -1)
        {"type":"tool/call","seq":1,"time":"noon","data":{}}
          line 2: tool/call: time must be integer Unix epoch milliseconds (got "noon")
        {"type":"tool/result","seq":1,"time":5,"data":[]}
          line 2: tool/result: data must be an object (got [])
        {"type":"tool/result","seq":1,"time":5,"data":{"message":{}}}
          line 2: tool/result: data.message.content must be an array (got nothing)
        {"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"text"}]}}}
          line 2: tool/result: data.message.content[0] must be a tool-result block (got {"type":"text"})
        {"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[],"isError":"yes"}]}}}
          line 2: tool/result: data.message.content[0].isError must be true or false (got "yes")
        {"type":"tool/result","seq":1,"time":5,"data":{"message":{"content":[{"type":"tool-result","content":[]}]}}}
          line 2: tool/result: data.message.content[0].toolCallId must be a string (got nothing)
        {"type":"tool/result","seq":1,"time":1767225601000,"data":{"turn":1,"step":1,"message":{"id":"m1","role":"user","source":{"kind":"tool","callId":"zz"},"content":[{"type":"tool-result","toolCallId":"zz","content":[{"type":"text","text":"orphan"}],"isError":false}]}},"surfaceOp":"append"}
          line 2: tool/result: call "zz" has no earlier tool/call
        {"type":"user/message","seq":1,"time":5,"data":{"source":{}}}
          line 2: user/message: data.source.kind must be a string (got nothing)
    "#]].assert_eq(&errors);
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
    ];
    for (header, message) in cases {
        let error = replay("{}", false, &[header.to_string()]).err().unwrap();
        assert_eq!(error, message);
    }
}

#[test]
fn the_timeline_reads_as_documented() {
    let (lines, summary) = replay("{}", false, &worked_example()).unwrap();
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(&summary.unwrap());
    assert_eq!(
        text,
        "DSH session s-1 (started 2026-01-01 00:00:00 UTC, cwd /w)
thresholds: debt >= 20, calls >= 15, minutes >= 15; cooldown 10 min; snooze at most 60 min

 call  time       tool                    class      result              debt  calls  mins  event
       +0:00      user prompt                                               0      0     0  new task, reset: \"Fix the TypeError\"
    1  +0:03      read                    ordinary   ok                     1      1     0
    2  +0:05      edit                    mutation   ok                     3      2     0
    3  +0:07      bash                    execution  exit 1                 8      3     0
    4  +0:09      edit                    mutation   ok                    10      4     0
    5  +0:11      bash                    execution  exit 1                21      5     0  NUDGE (debt)
       +0:12      (live reminder)                                                           the plugin nudged here when the session ran (research debt 21/20)

summary: 5 tool calls (2 failed), 1 user prompt, 1 reminder injected when it ran
nudges: 1 at call 5 (debt)
peaks: debt 21/20 at call 5, calls since research 5/15 at call 5"
    );
}

#[test]
fn time_formats() {
    assert_eq!(text::utc_seconds(0), "1970-01-01 00:00:00");
    assert_eq!(text::utc_seconds(CREATED), "2026-01-01 00:00:00");
    assert_eq!(
        text::utc_seconds(951_782_400_000 + 86_399_000),
        "2000-02-29 23:59:59"
    );
    assert_eq!(elapsed(0), "+0:00");
    assert_eq!(elapsed(61_999), "+1:01");
    assert_eq!(elapsed(3_600_000 + 62_000), "+1:01:02");
    assert_eq!(minutes(15 * MINUTE), "15");
    assert_eq!(minutes(MINUTE / 2), "0.5");
    assert_eq!(minutes(MINUTE + 1), "1");
    assert_eq!(excerpt("  a\n b  "), "a b");
    assert_eq!(excerpt(&"x".repeat(50)), format!("{}…", "x".repeat(40)));
}

/// DSH 0.2's session format 4 (recorded from its source, `crates/session-log/fixtures/v4/`): the
/// direct call DSH rejected as an unknown tool and the program are not counted, the program's
/// calls are, and the reminder the plugin injected under its own `plugin:research-nudge` kind is
/// recognized.
#[test]
fn a_format_4_code_mode_log_is_replayed() {
    let log =
        include_str!("../../../../session-log/fixtures/v4/packages-core-tools-src-ptc.ts.jsonl");
    let lines: Vec<String> = log.lines().map(str::to_owned).collect();
    let (out, _) = replay("{}", true, &lines).unwrap();
    let rows: Vec<Value> = out
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let picked: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {} call={} counted={} debt={} parent={}",
                r["event"].as_str().unwrap_or(""),
                r["tool"].as_str().unwrap_or(""),
                r["call"],
                r["counted"],
                r["debt"],
                r["parent_call"]
            )
        })
        .collect();
    expect_test::expect![[r#"
        user_prompt  call=null counted=null debt=0 parent=null
        tool bash call=null counted=false debt=0 parent=null
        tool bash call=1 counted=null debt=5 parent="call-2"
        tool read call=2 counted=null debt=10 parent="call-2"
        tool run_code call=null counted=false debt=10 parent=null
        live_reminder  call=null counted=null debt=10 parent=null"#]]
    .assert_eq(&picked.join("\n"));
    let (text, summary) = replay("{}", false, &lines).unwrap();
    expect_test::expect_file!["snapshots/format-4-code-mode.txt"]
        .assert_eq(&timeline(&text, summary));
}
