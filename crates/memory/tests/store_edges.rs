//! Supersession, project scope and the store's edges, through the public API: each test is a
//! hostile input the store once got wrong.

use limit_break_memory::driver::{import, refuse_read_only, save};
use limit_break_memory::stats::{LARGE_STORE_BYTES, StatsInput, stats};
use limit_break_memory::{Index, Store, parse_recall_args, parse_save_args};
use serde_json::{Value, json};

const T0: u64 = 1_700_000_000_000;

fn saved(current: Option<&str>, args: Value, project: Option<&str>) -> String {
    save(&args, current.map(str::as_bytes), T0, project)
        .unwrap_or_else(|f| panic!("{f}"))
        .text
}

fn recall(text: &str, args: Value, project: Option<&str>) -> Value {
    let index = Index::build(Store::parse(text).unwrap_or_else(|f| panic!("{f}")));
    index.recall(
        &parse_recall_args(&args).unwrap_or_else(|f| panic!("{f}")),
        project,
    )
}

fn ids(answer: &Value) -> Vec<String> {
    answer["facts"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_superseded_fact_stays_in_the_file_and_leaves_recall() {
    let text = saved(
        None,
        json!({"id": "ci.ram", "statement": "CI runners have 4 GB of RAM"}),
        None,
    );
    let text = saved(
        Some(&text),
        json!({"id": "ci.ram.2026", "statement": "CI runners have 16 GB of RAM", "supersedes": ["ci.ram"]}),
        None,
    );
    let file: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(file["facts"][0]["superseded_by"], "ci.ram.2026");
    assert_eq!(
        file["facts"][0]["superseded_at"],
        "2023-11-14T22:13:20.000Z"
    );
    let found = recall(&text, json!({"query": "CI RAM"}), None);
    assert_eq!(ids(&found), ["ci.ram.2026"]);
    assert_eq!(found["hidden"]["superseded"], 1);
    expect_test::expect!["hidden: 1 superseded (include_superseded: true shows them)"]
        .assert_eq(found["note"].as_str().unwrap_or_default());
    let all = recall(
        &text,
        json!({"query": "CI RAM", "include_superseded": true}),
        None,
    );
    assert_eq!(ids(&all).len(), 2);
    // Saving the old id again revives it: the mark is part of the fact a save replaces.
    let text = saved(
        Some(&text),
        json!({"id": "ci.ram", "statement": "back"}),
        None,
    );
    assert_eq!(ids(&recall(&text, json!({}), None)).len(), 2);
}

#[test]
fn superseding_an_unknown_id_saves_nothing() {
    let text = saved(None, json!({"id": "a.one", "statement": "x"}), None);
    let refused = save(
        &json!({"id": "a.two", "statement": "y", "supersedes": ["a.on"]}),
        Some(text.as_bytes()),
        T0,
        None,
    )
    .err()
    .map(|f| f.to_json());
    expect_test::expect![[r#"{"ok":false,"code":"memory.not_found","message":"`supersedes` names no stored fact for \"a.on\"; nothing was saved. Recall the facts first to get their exact ids."}"#]]
    .assert_eq(&refused.unwrap_or_default().to_string());
    let own = parse_save_args(&json!({"id": "a.one", "statement": "y", "supersedes": "a.one"}));
    assert!(own.is_err(), "a fact cannot supersede itself");
}

#[test]
fn project_facts_show_only_in_their_project_and_rank_first_there() {
    let text = saved(
        None,
        json!({"id": "db.port", "statement": "the database port is 5432"}),
        None,
    );
    let text = saved(
        Some(&text),
        json!({"id": "db.port.here", "statement": "this repository's database port is 5433", "scope": "project"}),
        Some("/src/here"),
    );
    let file: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(
        (
            file["facts"][1]["scope"].clone(),
            file["facts"][1]["project"].clone()
        ),
        (json!("project"), json!("/src/here"))
    );
    // The global fact scores higher for this query, yet the project's fact comes first.
    let here = recall(
        &text,
        json!({"query": "database port 5432"}),
        Some("/src/here"),
    );
    assert_eq!(ids(&here), ["db.port.here", "db.port"]);
    let elsewhere = recall(&text, json!({"query": "database port"}), Some("/src/other"));
    assert_eq!(ids(&elsewhere), ["db.port"]);
    assert_eq!(elsewhere["hidden"]["other_projects"], 1);
    let asked = recall(
        &text,
        json!({"query": "database port", "all_projects": true}),
        None,
    );
    assert_eq!(ids(&asked).len(), 2);
    let outside = save(
        &json!({"id": "x.y", "statement": "z", "scope": "project"}),
        None,
        T0,
        None,
    );
    assert_eq!(
        outside.err().map(|f| f.code.as_str()),
        Some("memory.invalid")
    );
}

#[test]
fn listing_pages_newest_first_and_reaches_every_fact() {
    let mut text: Option<String> = None;
    for i in 0..130 {
        let args = json!({"id": format!("bulk.f{i:03}"), "statement": "s".repeat(600)});
        text = Some(
            save(&args, text.as_deref().map(str::as_bytes), T0 + i, None)
                .unwrap_or_else(|f| panic!("{f}"))
                .text,
        );
    }
    let text = text.unwrap_or_default();
    let mut seen: Vec<String> = Vec::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let page = recall(&text, json!({"offset": offset}), None);
        assert_eq!(page["total"], 130);
        seen.extend(ids(&page));
        pages += 1;
        match page["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert!(
        pages > 1,
        "130 facts of 600 characters do not fit one answer"
    );
    assert_eq!(
        seen.first().map(String::as_str),
        Some("bulk.f129"),
        "the newest first"
    );
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 130, "every fact once");
}

#[test]
fn tag_validation_stops_at_the_cap() {
    let tags: Vec<String> = (0..8_000).map(|i| format!("t{i}")).collect();
    let refused = parse_save_args(&json!({"id": "a.b", "statement": "x", "tags": tags}))
        .err()
        .map(|f| f.message)
        .unwrap_or_default();
    expect_test::expect![
        "`tags` must hold at most 32 distinct tags (got more: tags[32] is number 33)"
    ]
    .assert_eq(&refused);
    // Duplicates in any spelling count once.
    let same: Vec<String> = (0..8_000)
        .map(|i| {
            if i % 2 == 0 {
                "Net".into()
            } else {
                "net".into()
            }
        })
        .collect();
    assert_eq!(
        parse_save_args(&json!({"id": "a.b", "statement": "x", "tags": same})).map(|a| a.tags),
        Ok(vec!["Net".to_owned()])
    );
}

#[test]
fn duplicate_ids_are_all_overwritten() {
    let hand_edited = r#"{"schema_version": 1, "facts": [
        {"id": "d.x", "statement": "first copy", "mine": 1},
        {"id": "d.x", "statement": "second copy", "mine": 2}]}"#;
    let text = saved(
        Some(hand_edited),
        json!({"id": "d.x", "statement": "one truth"}),
        None,
    );
    let file: Value = serde_json::from_str(&text).unwrap_or_default();
    assert_eq!(file["facts"][0]["statement"], "one truth");
    assert_eq!(file["facts"][1]["statement"], "one truth");
    assert_eq!(
        (
            file["facts"][0]["mine"].clone(),
            file["facts"][1]["mine"].clone()
        ),
        (json!(1), json!(2))
    );
}

#[test]
fn an_empty_store_is_corrupt_and_never_overwritten() {
    for empty in ["", "  \n\t"] {
        let refused = save(
            &json!({"id": "a.b", "statement": "x"}),
            Some(empty.as_bytes()),
            T0,
            None,
        );
        assert_eq!(
            refused.err().map(|f| f.code.as_str()),
            Some("memory.corrupt"),
            "{empty:?}"
        );
    }
}

#[test]
fn import_applies_the_save_rules() {
    let incoming = json!({"schema_version": 1, "facts": [
        {"id": "ok.one", "statement": "fine"},
        {"id": "bad\u{7}id", "statement": "control character"},
        {"id": "no.statement", "statement": ""},
        {"id": "x".repeat(201), "statement": "too long an id"},
        {"id": "many.tags", "statement": "x", "tags": (0..40).map(|i| format!("t{i}")).collect::<Vec<_>>()},
    ]})
    .to_string();
    let reply = import(None, incoming.as_bytes(), "newer").unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(reply.answer["created"], json!(["ok.one"]));
    let rejected: Vec<String> = reply.answer["rejected"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    r["message"]
                        .as_str()
                        .unwrap_or_default()
                        .chars()
                        .take(60)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    expect_test::expect![[r#"
        [
            "`id` must not contain control characters (found U+0007 in \"b",
            "`statement` must not be blank (got \"\")",
            "`id` must be at most 200 characters (got 201: xxxxxxxxxxxxxx",
            "`tags` must hold at most 32 distinct tags (got more: tags[32",
        ]
    "#]]
    .assert_debug_eq(&rejected);
}

#[test]
fn a_read_only_store_is_refused() {
    assert_eq!(refuse_read_only(0o644), None);
    assert_eq!(refuse_read_only(0o200).map(|f| f.code.as_str()), None);
    let refused = refuse_read_only(0o444)
        .map(|f| f.to_json().to_string())
        .unwrap_or_default();
    expect_test::expect![[r#"{"ok":false,"code":"memory.read_only","message":"the memory store is read-only (mode 0444), so nothing was saved. Someone made it read-only on purpose; give it write permission again (chmod u+w) to save."}"#]]
    .assert_eq(&refused);
}

#[test]
fn a_large_store_gets_a_warning_in_stats() {
    let text = r#"{"schema_version": 1, "facts": []}"#;
    let input = |bytes| StatsInput {
        path: "/h/.dsh/memory/facts.json",
        dsh_home_env: None,
        home: Some("/h"),
        text: Some(text),
        bytes,
        modified: None,
        lock_age_ms: None,
    };
    assert!(stats(&input(LARGE_STORE_BYTES)).get("warning").is_none());
    expect_test::expect!["the store is 16.0 MiB, over 16 MiB: every save rewrites the whole file and a session's first recall reads and indexes all of it, so both get slow. Export it (limit-break export), forget facts that no longer matter, or split it by DSH home."]
        .assert_eq(stats(&input(LARGE_STORE_BYTES + 1))["warning"].as_str().unwrap_or_default());
}
