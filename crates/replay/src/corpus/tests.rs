use super::*;

/// The fixture corpus (`fixtures/corpus`): four real runs with their labels.
pub(crate) const FIXTURE: [(&str, &str); 4] = [
    (
        "liveswe-gpt5mini/django__django-11119",
        include_str!("../../fixtures/corpus/events/liveswe-gpt5mini/django__django-11119.jsonl"),
    ),
    (
        "liveswe-gpt5mini/sympy__sympy-13877",
        include_str!("../../fixtures/corpus/events/liveswe-gpt5mini/sympy__sympy-13877.jsonl"),
    ),
    (
        "mini-gemini3pro/astropy__astropy-13033",
        include_str!("../../fixtures/corpus/events/mini-gemini3pro/astropy__astropy-13033.jsonl"),
    ),
    (
        "mini-gemini3pro/django__django-11066",
        include_str!("../../fixtures/corpus/events/mini-gemini3pro/django__django-11066.jsonl"),
    ),
];

pub(crate) const FIXTURE_LABELS: &str = include_str!("../../fixtures/corpus/labels.json");

/// The fixture corpus through `replay`, as the CLI feeds it.
pub(crate) fn replay_fixture<G: Guard>(replay: &mut CorpusReplay<G>) {
    replay.set_labels(FIXTURE_LABELS).unwrap();
    for (id, text) in FIXTURE {
        if !replay.wants(id) {
            continue;
        }
        replay.start(id);
        for line in text.lines() {
            replay.feed_line(line).unwrap();
        }
        replay.end();
    }
}

/// Fires at every failed call; denies nothing.
struct EveryFailure;

impl Guard for EveryFailure {
    const DENIES: bool = true;

    fn replay(&mut self, run: &Run) -> Replayed {
        let fires: Vec<usize> = run
            .calls()
            .enumerate()
            .filter(|(_, call)| call.outcome.failed())
            .map(|(i, _)| i)
            .collect();
        Replayed {
            denials: fires.len() as u32,
            injected_chars: 10 * fires.len() as u64,
            fires,
        }
    }

    fn is_research(&self, call: &Call) -> bool {
        call.name == "web_search"
    }
}

fn run(lines: &[&str]) -> Run {
    let mut run = Run::new();
    for line in lines {
        run.feed_line(line).unwrap();
    }
    run
}

#[test]
fn event_lines_become_steps_and_calls() {
    let run = run(&[
        r#"{"at_ms":0,"tool":"bash","exit_code":1,"error":"boom","args":{"command":"make"}}"#,
        "",
        r#"{"at_ms":5,"tool":"bash","error":"Command timed out"}"#,
        r#"{"at_ms":6,"user_prompt":true}"#,
        r#"{"at_ms":7,"tool":"read","ok":false}"#,
        r#"{"at_ms":8,"tool":"bash","exit_code":0}"#,
    ]);
    let outcomes: Vec<(bool, Option<i64>)> = run
        .calls()
        .map(|c| (c.outcome.failed(), c.outcome.exit_code))
        .collect();
    assert_eq!(
        outcomes,
        [
            (true, Some(1)),
            (true, None),
            (true, None),
            (false, Some(0))
        ]
    );
    assert_eq!(run.events().len(), 9);
    assert_eq!(run.events()[0], Event::Step);
    assert_eq!(
        run.calls().next().unwrap().args_json,
        r#"{"command":"make"}"#
    );
}

#[test]
fn malformed_lines_name_the_line_and_the_field() {
    let mut errors = String::new();
    for line in [
        "nope",
        "[]",
        r#"{"tool":"bash","exitcode":1}"#,
        r#"{"tool":7}"#,
        r#"{"tool":"bash","args":"ls"}"#,
        r#"{"tool":"bash","exit_code":"1"}"#,
        r#"{"tool":"bash","error":3}"#,
        r#"{"at_ms":-1,"tool":"bash"}"#,
        r#"{"user_prompt":false}"#,
        r#"{}"#,
    ] {
        let mut run = Run::new();
        errors.push_str(&format!("{}\n", run.feed_line(line).unwrap_err()));
    }
    expect_test::expect![[r#"
        line 1: not valid JSON (expected ident at line 1 column 2)
        line 1: must be a JSON object (got [])
        line 1: unknown field "exitcode"
        line 1: tool must be a non-empty string (got 7)
        line 1: args must be an object (got "ls")
        line 1: exit_code must be an integer (got "1")
        line 1: error must be a string (got 3)
        line 1: at_ms must be a non-negative integer (got -1)
        line 1: user_prompt must be true (got false)
        line 1: needs either "tool" or "user_prompt": true
    "#]]
    .assert_eq(&errors);
}

#[test]
fn labels_take_strings_labels_and_resolved_flags() {
    let labels = Labels::parse(
        r#"{"a/1": "stuck", "a/2": {"label": "fine"}, "b/1": {"resolved": true, "n": 3}, "b/2": {"resolved": false}}"#,
    )
    .unwrap();
    let of: Vec<&str> = ["a/1", "a/2", "b/1", "b/2", "c/1"]
        .iter()
        .map(|id| labels.of(id))
        .collect();
    assert_eq!(of, ["stuck", "fine", "resolved", "unresolved", UNLABELLED]);
    assert_eq!(
        Labels::parse("[1]").unwrap_err(),
        "the labels file must be a JSON object of run id -> label (got an array)"
    );
    assert_eq!(
        Labels::parse(r#"{"x": {"resolved": "yes"}}"#).unwrap_err(),
        r#"labels: "x" needs a string "label" or a boolean "resolved""#
    );
    assert_eq!(
        Labels::parse(r#"{"x": 1}"#).unwrap_err(),
        r#"labels: "x" must be a label string or an object (got a number)"#
    );
}

#[test]
fn the_halves_are_fixed_and_split_the_fixture() {
    let halves: Vec<&str> = FIXTURE.iter().map(|(id, _)| Half::of(id).key()).collect();
    assert_eq!(halves, ["report", "tune", "tune", "tune"]);
    assert_eq!(Half::from_key("tune"), Ok(Half::Tune));
    assert_eq!(
        Half::from_key("all"),
        Err(r#"--half must be "tune" or "report" (got "all")"#.to_owned())
    );
}

#[test]
fn follow_ups_take_the_first_that_applies() {
    let call = |name: &str, code: i64, text: &str| Call {
        at_ms: 0,
        name: name.to_owned(),
        args_json: "{}".to_owned(),
        outcome: Outcome::exited(code),
        text: text.to_owned(),
    };
    let fail = call("bash", 1, "AssertionError at line 3");
    let same = call("bash", 1, "AssertionError at line 9");
    let ok = call("bash", 0, "");
    let research = call("web_search", 0, "");
    let follow = |calls: &[&Call]| follow_up(calls, 0, |c| c.name == "web_search");
    assert_eq!(follow(&[&fail, &ok, &research, &same]), FollowUp::Research);
    assert_eq!(follow(&[&fail, &ok, &same]), FollowUp::SameFailure);
    assert_eq!(follow(&[&fail, &ok, &ok]), FollowUp::EndOfRun);
    assert_eq!(
        follow(&[&fail, &ok, &ok, &ok, &ok, &ok, &same]),
        FollowUp::ChangedApproach
    );
}

#[test]
fn the_report_sums_runs_per_source_and_label() {
    let mut replay = CorpusReplay::new(EveryFailure, None);
    replay_fixture(&mut replay);
    expect_test::expect![[r#"
        | source | label | runs | fired in | fires/run | first fire: call (of run) | denials/run | chars/run | after a fire: research / same failure / changed / ended |
        |---|---|--:|--:|--:|--:|--:|--:|---|
        | liveswe-gpt5mini | resolved | 1 | 0 % (0) | 0.00 | - | 0.0 | 0 | - / - / - / - |
        | liveswe-gpt5mini | unresolved | 1 | 100 % (1) | 1.00 | 5 (50 %) | 1.0 | 10 | 0 % / 0 % / 100 % / 0 % |
        | mini-gemini3pro | resolved | 1 | 100 % (1) | 4.00 | 4 (24 %) | 4.0 | 40 | 0 % / 0 % / 75 % / 25 % |
        | mini-gemini3pro | unresolved | 1 | 100 % (1) | 6.00 | 3 (10 %) | 6.0 | 60 | 0 % / 17 % / 67 % / 17 % |

        4 runs"#]].assert_eq(&replay.report(false));
    let mut tune = CorpusReplay::new(EveryFailure, Some(Half::Tune));
    replay_fixture(&mut tune);
    let json: Value = serde_json::from_str(&tune.report(true)).unwrap();
    assert_eq!(
        (json["half"].as_str(), json["runs"].as_u64()),
        (Some("tune"), Some(3))
    );
}
