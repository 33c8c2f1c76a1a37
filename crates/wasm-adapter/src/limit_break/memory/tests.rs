use super::*;

const NOW: f64 = 1_780_000_000_000.0;

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn saved(args: Value, current: Option<&str>) -> Edit {
    save(
        &args.to_string(),
        current.map(|t| t.as_bytes().to_vec()),
        NOW,
    )
}

#[test]
fn a_save_writes_the_store_and_answers() {
    let edit = saved(
        json!({"id": "net.sni", "statement": "SNI is filtered"}),
        None,
    );
    assert!(edit.ok());
    let answer = edit.answer_value();
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["created"], true);
    assert_eq!(answer["facts"], 1);
    let store = value(edit.text_ref().unwrap());
    assert_eq!(store["schema_version"], 1);
    assert_eq!(store["facts"][0]["topic"], "net");
    assert_eq!(store["facts"][0]["timestamp"], answer["timestamp"]);

    let again = saved(
        json!({"id": "net.sni", "statement": "SNI is filtered on port 443"}),
        edit.text_ref(),
    );
    assert_eq!(again.answer_value()["updated"], true);
    assert_eq!(again.answer_value()["facts"], 1);
}

#[test]
fn refusals_carry_codes_and_write_nothing() {
    let invalid = saved(json!({"id": "x"}), None);
    assert!(!invalid.ok());
    assert_eq!(invalid.text(), None);
    assert_eq!(invalid.answer_value()["code"], "memory.invalid");

    let corrupt = saved(json!({"id": "x", "statement": "y"}), Some("{not json"));
    assert_eq!(corrupt.answer_value()["code"], "memory.corrupt");
    assert!(!corrupt.ok());

    let not_utf8 = save(
        &json!({"id": "x", "statement": "y"}).to_string(),
        Some(vec![b'{', 0xff, b'}']),
        NOW,
    );
    assert_eq!(not_utf8.answer_value()["code"], "memory.corrupt");
    expect_test::expect![[r#"{"ok":false,"code":"memory.corrupt","message":"the memory store is not UTF-8 text (invalid byte at offset 1). The file was left exactly as it is; fix it by hand (or move it aside) and saves will work again."}"#]].assert_eq(&not_utf8.answer());

    let future = saved(
        json!({"id": "x", "statement": "y"}),
        Some(r#"{"schema_version": 2, "facts": []}"#),
    );
    assert_eq!(future.answer_value()["code"], "memory.unsupported_version");

    assert_eq!(
        value(&check_save_args("{}").unwrap())["code"],
        "memory.invalid"
    );
    assert_eq!(
        value(&check_save_args("not json").unwrap())["code"],
        "memory.invalid"
    );
    assert_eq!(check_save_args(r#"{"id":"a","statement":"b"}"#), None);
    assert_eq!(check_recall_args("null"), None);
    assert_eq!(
        value(&check_recall_args(r#"{"limit": 0}"#).unwrap())["code"],
        "memory.invalid"
    );
}

#[test]
fn the_cache_is_keyed_by_stat_and_checked_by_content_when_racy() {
    let store = saved(
        json!({"id": "db.port", "statement": "Postgres listens on 5433"}),
        None,
    );
    let text = store.text().unwrap();
    let mut memory = Memory::new();
    assert!(!memory.is_fresh(NOW, 100.0, 7.0));
    assert_eq!(
        memory.load(text.as_bytes(), NOW - 10_000.0, 100.0, 7.0, NOW),
        None
    );
    assert_eq!(memory.facts(), 1);
    assert!(memory.is_fresh(NOW - 10_000.0, 100.0, 7.0));
    assert!(!memory.is_fresh(NOW - 10_000.0, 101.0, 7.0), "size changed");
    assert!(
        !memory.is_fresh(NOW - 10_000.0, 100.0, 8.0),
        "replaced by rename"
    );

    // Read within the racy window of its mtime: not trusted until checked again by content.
    assert_eq!(
        memory.load(text.as_bytes(), NOW - 500.0, 100.0, 7.0, NOW),
        None
    );
    assert!(!memory.is_fresh(NOW - 500.0, 100.0, 7.0));
    // Same content at a later check: kept (no re-parse), and now trusted.
    assert_eq!(
        memory.load(text.as_bytes(), NOW - 500.0, 100.0, 7.0, NOW + 5_000.0),
        None
    );
    assert!(memory.is_fresh(NOW - 500.0, 100.0, 7.0));

    let answer = value(&memory.recall(r#"{"query": "postgres port"}"#));
    assert_eq!(answer["facts"][0]["id"], "db.port");
    let failure = value(&memory.recall(r#"{"qeury": "x"}"#));
    assert_eq!(failure["code"], "memory.invalid");

    // A corrupt file drops the cache and answers the failure.
    let corrupt = memory.load(b"[1,", NOW, 3.0, 7.0, NOW + 9_000.0).unwrap();
    assert_eq!(value(&corrupt)["code"], "memory.corrupt");
    assert_eq!(memory.facts(), 0);

    memory.load_missing();
    assert_eq!(value(&memory.recall("{}"))["in_store"], 0);
    memory.invalidate();
    assert_eq!(value(&memory.recall("{}"))["total"], 0);
}

#[test]
fn lock_decisions_cross_as_json() {
    let me = StoreLock::new("tok-1".into(), 10, "h".into());
    let mine = me.record_text(NOW);
    assert!(me.owns(&mine));
    let other = StoreLock::new("tok-2".into(), 11, "h".into());
    let theirs = other.record_text(NOW);
    assert!(!me.owns(&theirs));
    assert_eq!(me.pid_to_probe(&theirs), Some(11));
    assert_eq!(me.pid_to_probe(&mine), None, "never probes itself");

    let wait = value(&me.decide(&theirs, 100.0, "alive", 0.0, 0, 0.5));
    assert_eq!(wait["kind"], "wait");
    assert_eq!(wait["ms"], 20);
    let dead = value(&me.decide(&theirs, 100.0, "dead", 0.0, 0, 0.5));
    assert_eq!(dead, json!({"kind": "steal", "reason": "holder_dead"}));
    let stale = value(&me.decide(&theirs, 15_000.0, "unknown", 0.0, 0, 0.5));
    assert_eq!(stale, json!({"kind": "steal", "reason": "stale"}));
    let give_up = value(&me.decide(&theirs, 9_000.0, "alive", 8_000.0, 30, 0.5));
    assert_eq!(give_up["kind"], "give_up");
    assert_eq!(give_up["answer"]["code"], "memory.locked");
    assert_eq!(value(&me.lock_lost())["code"], "memory.locked");

    assert!(StoreLock::same_lock(&theirs, &theirs));
    assert!(!StoreLock::same_lock(&mine, &theirs));
    assert_eq!(me.steal_name(), ".facts.lock.tok-1.stolen");
    assert_eq!(me.release_name(), ".facts.lock.tok-1.released");
    assert_eq!(me.temp_name(), ".facts.json.tok-1.tmp");
    assert_eq!(
        value(&layout()),
        json!({"dir": "memory", "store": "facts.json", "lock": ".facts.lock", "takeover": ".facts.lock.takeover"})
    );

    // The take-over mutex: waited on while fresh, removed once 5 s old or its holder is dead.
    let busy = value(&me.decide_takeover(&theirs, 100.0, "alive", 0.0, 0, 0.5));
    assert_eq!(busy, json!({"kind": "wait", "ms": 20}));
    let abandoned = value(&me.decide_takeover(&theirs, 5_000.0, "alive", 0.0, 0, 0.5));
    assert_eq!(abandoned, json!({"kind": "steal", "reason": "stale"}));
    let gone = value(&me.decide_takeover(&theirs, 100.0, "dead", 0.0, 0, 0.5));
    assert_eq!(gone, json!({"kind": "steal", "reason": "holder_dead"}));
    let give_up = value(&me.decide_takeover(&theirs, 100.0, "alive", 8_000.0, 30, 0.5));
    assert_eq!(give_up["answer"]["code"], "memory.locked");
    // Under the mutex: only the judged lock, still abandoned, is removed.
    assert!(me.still_abandoned(&theirs, &theirs, 15_000.0, "unknown"));
    assert!(!me.still_abandoned(&theirs, &theirs, 100.0, "alive"));
    assert!(!me.still_abandoned(&theirs, &mine, 15_000.0, "unknown"));
    assert!(me.takeover_still_abandoned(&theirs, &theirs, 5_000.0, "unknown"));
    assert!(!me.takeover_still_abandoned(&theirs, &theirs, 100.0, "alive"));
    assert!(!me.takeover_still_abandoned(&theirs, &mine, 5_000.0, "unknown"));
    assert_eq!(
        StoreLock::sweep(".facts.json.tok-1.tmp", 15_000.0),
        "unlink"
    );
    assert_eq!(StoreLock::sweep(".facts.json.tok-1.tmp", 14_999.0), "keep");
    assert_eq!(
        StoreLock::sweep(".facts.lock.takeover", 15_000.0),
        "remove_mutex"
    );
    assert_eq!(StoreLock::sweep("facts.json", 1e12), "keep");
}

#[test]
fn people_cli_reads_and_edits() {
    let one = saved(json!({"id": "a.b", "statement": "first"}), None);
    let two = saved(json!({"id": "c.d", "statement": "second"}), one.text_ref());
    let text = two.text().unwrap();
    let bytes = || Some(text.as_bytes().to_vec());
    expect_test::expect![[r#"
        a.b  2026-05-28T20:26:40.000Z  first
        c.d  2026-05-28T20:26:40.000Z  second
        2 facts
    "#]]
    .assert_eq(&list(bytes()).text().unwrap());
    expect_test::expect![[r#"
        {
          "id": "c.d",
          "topic": "c",
          "statement": "second",
          "value": "",
          "unit": "",
          "details": "",
          "source": "",
          "timestamp": "2026-05-28T20:26:40.000Z",
          "tags": []
        }
    "#]]
    .assert_eq(&show(bytes(), "c.d").text().unwrap());
    assert_eq!(
        show(bytes(), "zz").answer_value()["code"],
        "memory.not_found"
    );
    assert_eq!(export(bytes()).text().unwrap(), text);

    let gone = forget(bytes(), " a.b ");
    assert_eq!(
        gone.answer_value(),
        json!({"ok": true, "id": "a.b", "removed": 1, "facts": 1})
    );
    let merged = import(
        gone.text().map(String::into_bytes),
        text.as_bytes(),
        "newer",
    );
    assert_eq!(merged.answer_value()["created"], json!(["a.b"]));
    assert_eq!(
        import(bytes(), b"x", "sometimes").answer_value()["message"],
        "--policy must be newer, overwrite or keep (got \"sometimes\")"
    );
    assert_eq!(
        import(bytes(), &[0xfe], "keep").answer_value()["code"],
        "memory.invalid"
    );
    expect_test::expect![[r#"
        0 facts
    "#]]
    .assert_eq(&list(None).text().unwrap());
}

#[test]
fn stats_show_the_path_symbolically() {
    let one = saved(
        json!({"id": "a.b", "statement": "first", "tags": ["X"]}),
        None,
    );
    let text = one.text().unwrap();
    let answer = value(&stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(text.as_bytes()),
        text.len() as f64,
        Some(NOW),
        None,
    ));
    assert_eq!(answer["path"], "~/.dsh/memory/facts.json");
    assert_eq!(answer["facts"], 1);
    assert_eq!(answer["bytes"], text.len());
    let missing = value(&stats(
        "/srv/dsh/memory/facts.json",
        Some("/srv/dsh"),
        Some("/home/u"),
        None,
        0.0,
        None,
        Some(1200.0),
    ));
    assert_eq!(missing["path"], "$DSH_HOME/memory/facts.json");
    assert_eq!(missing["exists"], false);
    assert_eq!(missing["lock"]["age_ms"], 1200);
    let broken = value(&stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(&[0xff]),
        1.0,
        Some(NOW),
        None,
    ));
    assert_eq!(broken["code"], "memory.corrupt");
    assert_eq!(broken["path"], "~/.dsh/memory/facts.json");
    assert_eq!(broken["bytes"], 1);
}
