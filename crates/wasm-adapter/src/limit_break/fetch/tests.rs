use super::*;
use std::collections::BTreeMap;

fn plugin(config: &str) -> Plugin {
    Plugin::from_json(config).unwrap()
}

fn step(fetch: &Fetch) -> Value {
    serde_json::from_str(&fetch.poll()).unwrap()
}

fn answer(fetch: &mut Fetch, input: Value, bytes: &[u8], now: f64) {
    let id = step(fetch)["id"].as_f64().unwrap();
    fetch
        .handle(id, &input.to_string(), Some(bytes.to_vec()), now)
        .unwrap();
}

#[test]
fn a_refused_input_or_url_is_done_before_any_step() {
    let p = plugin("{}");
    let invalid = Fetch::new(&p, r#"{"uri": "https://example.org/"}"#, true, 0.0);
    let done = step(&invalid);
    assert_eq!(done["kind"], "done");
    assert_eq!(done["outcome"]["code"], "fetch.invalid_input");
    assert_eq!(done["outcome"]["field"], "uri");
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8080/",
    ] {
        let fetch = Fetch::new(&p, &json!({ "url": url }).to_string(), true, 0.0);
        let done = step(&fetch);
        assert_eq!(done["kind"], "done", "{url}");
        assert_eq!(done["outcome"]["code"], "fetch.blocked", "{url}");
        assert_eq!(done["outcome"]["report"]["rungs"], json!([]), "{url}");
    }
    let file = Fetch::new(&p, r#"{"url": "file:///etc/passwd"}"#, true, 0.0);
    assert_eq!(step(&file)["outcome"]["code"], "fetch.invalid_input");
    let open = plugin(r#"{"allowPrivateNetwork": true}"#);
    let metadata = Fetch::new(&open, r#"{"url": "http://169.254.169.254/"}"#, true, 0.0);
    assert_eq!(
        step(&metadata)["outcome"]["code"],
        "fetch.blocked",
        "metadata stays closed"
    );
}

#[test]
fn a_reset_climbs_to_curl_over_ipv6_pinned_to_the_vetted_address() {
    let p = plugin(r#"{"allowPrivateNetwork": true}"#);
    let mut fetch = Fetch::new(&p, r#"{"url": "http://localhost:8080/flaky"}"#, true, 0.0);
    let resolve = step(&fetch);
    assert_eq!(resolve["kind"], "resolve");
    assert_eq!(resolve["host"], "localhost");
    answer(
        &mut fetch,
        json!({"kind": "resolved", "addresses": ["127.0.0.1", "::1"]}),
        &[],
        1.0,
    );
    let http = step(&fetch);
    assert_eq!(http["kind"], "http");
    assert_eq!(http["rung"], "fetch");
    assert_eq!(http["path"], "/flaky");
    assert_eq!(http["tls"], false);
    assert_eq!(
        http["addresses"],
        json!([{"address": "127.0.0.1", "family": 4}, {"address": "::1", "family": 6}])
    );
    assert!(
        http["headers"]["User-Agent"]
            .as_str()
            .unwrap()
            .starts_with("dsh-limit-break/")
    );
    answer(
        &mut fetch,
        json!({"kind": "failed", "code": "ECONNRESET", "message": "socket hang up"}),
        &[],
        5.0,
    );
    let curl = step(&fetch);
    assert_eq!(curl["kind"], "curl");
    assert_eq!(curl["rung"], "curl-ipv6");
    let argv: Vec<&str> = curl["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv[..2], ["curl", "-q"]);
    assert!(argv.contains(&"--ipv6"));
    assert!(
        argv.windows(2)
            .any(|w| w == ["--resolve", "localhost:8080:[::1]"])
    );
    assert_eq!(
        argv[argv.len() - 2..],
        ["--url", "http://localhost:8080/flaky"]
    );
    answer(
        &mut fetch,
        json!({"kind": "curl", "exitCode": 0, "complete": true, "stderr": ""}),
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello from v6",
        9.0,
    );
    let done = step(&fetch);
    assert_eq!(done["kind"], "done");
    let outcome = &done["outcome"];
    assert_eq!(outcome["ok"], true);
    assert_eq!(outcome["text"], "hello from v6");
    assert_eq!(outcome["report"]["answered"], "curl-ipv6");
    assert_eq!(outcome["report"]["rungs"][0]["outcome"], "failed");
    assert_eq!(outcome["report"]["rungs"][0]["ms"], 5, "DNS included");
    assert_eq!(fetch.outcome().unwrap(), *outcome);
    let text = render(&outcome.to_string(), "5eed");
    assert_eq!(text, fetch::reply::render(outcome, "5eed"));
    assert!(
        text.ends_with("\n<page-text 5eed>\nhello from v6\n</page-text 5eed>"),
        "{text}"
    );
}

#[test]
fn an_abort_ends_the_fetch_and_a_failure_renders_as_json() {
    let p = plugin(r#"{"allowPrivateNetwork": true}"#);
    let mut fetch = Fetch::new(&p, r#"{"url": "http://127.0.0.1:8080/slow"}"#, false, 0.0);
    assert_eq!(
        step(&fetch)["kind"],
        "http",
        "an IP literal needs no lookup"
    );
    fetch.abort(50.0);
    let done = step(&fetch);
    assert_eq!(done["outcome"]["code"], "fetch.aborted");
    assert_eq!(done["outcome"]["report"]["curl"], "missing");
    fetch.abort(60.0);
    assert!(render(&done["outcome"].to_string(), "5eed").starts_with("{\n  \"ok\": false"));
}

#[test]
fn render_passes_text_that_is_not_json_through() {
    assert_eq!(render("not json", "5eed"), "not json");
}

#[test]
fn driver_inputs_are_read_strictly() {
    assert_eq!(
        input_of(
            r#"{"kind": "resolved", "addresses": ["::1", "10.0.0.1"]}"#,
            vec![]
        ),
        Ok(Input::Resolved(vec![
            "::1".parse().unwrap(),
            "10.0.0.1".parse().unwrap()
        ]))
    );
    assert_eq!(
        input_of(
            r#"{"kind": "curl", "exitCode": null, "complete": false, "stderr": "x"}"#,
            vec![1]
        ),
        Ok(Input::CurlExited(CurlExit {
            exit_code: None,
            stdout: vec![1],
            stdout_complete: false,
            stderr: "x".into()
        }))
    );
    assert_eq!(
        input_of(r#"{"kind": "timedOut"}"#, vec![]),
        Ok(Input::TimedOut)
    );
    for bad in [
        "{",
        r#"{"kind": "resolved", "addresses": ["localhost"]}"#,
        r#"{"kind": "response", "status": 70000, "complete": true}"#,
        r#"{"kind": "response", "status": 200}"#,
        r#"{"kind": "teleported"}"#,
        "{}",
    ] {
        assert!(input_of(bad, vec![]).is_err(), "{bad}");
    }
}

/// One answer of every kind, with every field the binding reads ([`input_of`]), and again
/// where a field may be null.
fn answer_examples() -> Vec<Value> {
    vec![
        json!({ "kind": "resolved", "addresses": ["93.184.216.34"] }),
        json!({ "kind": "response", "status": 200, "contentType": "text/html", "location": "/next", "complete": true }),
        json!({ "kind": "curl", "exitCode": 0, "complete": true, "stderr": "" }),
        json!({ "kind": "curl", "exitCode": null, "complete": false, "stderr": "" }),
        json!({ "kind": "failed", "code": "ECONNRESET", "message": "socket hang up" }),
        json!({ "kind": "timedOut" }),
    ]
}

/// Headers are keyed by name; a `done` step's outcome is the tool's value, which
/// `limit-break-fetch`'s own tests pin.
const RULES: wire_shape::Rules = wire_shape::Rules {
    maps: &["http.headers"],
    open: &[],
    any: &["done.outcome"],
};

/// The module docs' hand-written shapes, `{ kind: "…", … }`, each kind's field names (the
/// steps' and the inputs' apart).
fn documented() -> [BTreeMap<String, Vec<String>>; 2] {
    let docs: String = include_str!("../fetch.rs")
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let (steps, inputs) = docs.split_once("Inputs, as JSON").unwrap();
    [steps, inputs].map(|part| {
        part.match_indices("{ kind: \"")
            .map(|(at, open)| {
                let fields = wire_shape::braced_fields(&part[at..]);
                let kind = part[at + open.len()..]
                    .split('"')
                    .next()
                    .unwrap()
                    .to_owned();
                (kind, fields.into_iter().filter(|f| f != "kind").collect())
            })
            .collect()
    })
}

#[test]
fn the_wire_file_is_generated_from_the_binding_and_the_table() {
    // The answers: each example parses, as the kind it names.
    for example in answer_examples() {
        let input = input_of(&example.to_string(), Vec::new()).unwrap();
        assert_eq!(input.kind(), example["kind"]);
    }
    let answers = wire_shape::describe(answer_examples(), "kind", RULES);
    // The steps: the real ladder driven through every kind (resolve, then failures until curl,
    // then time-outs until done), every step shown kept.
    let p = plugin("{}");
    let mut fetch = Fetch::new(&p, r#"{"url": "http://example.org/"}"#, true, 0.0);
    let mut shown = Vec::new();
    let mut takes: BTreeMap<String, &[&str]> = BTreeMap::new();
    for now in 1..100 {
        let step = step(&fetch);
        let State::Running(ladder) = &fetch.state else {
            panic!("the URL is valid")
        };
        let kind = step["kind"].as_str().unwrap().to_owned();
        takes.insert(kind, ladder.poll().answers());
        let input = match step["kind"].as_str().unwrap() {
            "done" => None,
            "resolve" => Some(json!({ "kind": "resolved", "addresses": ["93.184.216.34"] })),
            "http" => Some(json!({ "kind": "failed", "code": "ECONNRESET", "message": "reset" })),
            _ => Some(json!({ "kind": "timedOut" })),
        };
        shown.push(step);
        let Some(input) = input else { break };
        answer(&mut fetch, input, b"", now as f64);
    }
    let steps = wire_shape::describe(shown, "kind", RULES);
    let mut kinds: Vec<&str> = steps.keys().map(String::as_str).collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        ["curl", "done", "http", "resolve"],
        "the drive showed every step kind"
    );
    for kind in takes.values().flat_map(|t| t.iter()) {
        assert!(answers.contains_key(*kind), "{kind} has an example");
    }
    // The module docs' shapes name the same fields.
    let names = |described: &Map<String, Value>| -> BTreeMap<String, Vec<String>> {
        described
            .iter()
            .map(|(kind, fields)| {
                (
                    kind.clone(),
                    fields.as_object().unwrap().keys().cloned().collect(),
                )
            })
            .collect()
    };
    assert_eq!(documented(), [names(&steps), names(&answers)]);
    let steps = steps.into_iter().map(|(kind, fields)| {
        let answers = json!(takes[&kind]);
        (kind, fields, answers)
    });
    expect_test::expect_file!["../../../../../packages/limit-break/wire/fetch.json"].assert_eq(
        &wire_shape::wire_file(
            "limit-break-fetch ladder::Ladder (through the binding's JSON)",
            "crates/wasm-adapter/src/limit_break/fetch/tests.rs",
            "steps",
            steps,
            answers,
        ),
    );
}
