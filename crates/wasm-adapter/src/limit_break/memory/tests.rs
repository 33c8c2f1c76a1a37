use super::*;
use serde_json::json;

const NOW: f64 = 1_780_000_000_000.0;

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

impl Edit {
    /// The answer as a value.
    fn answer_value(&self) -> Value {
        serde_json::from_str(&self.answer).unwrap_or(Value::Null)
    }

    /// The text, if any.
    fn text_ref(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

fn saved(args: Value, current: Option<&str>) -> Edit {
    save(
        &args.to_string(),
        current.map(|t| t.as_bytes().to_vec()),
        NOW,
        None,
    )
}

#[test]
fn edits_cross_as_text_and_answer() {
    let edit = saved(
        json!({"id": "net.sni", "statement": "SNI is filtered"}),
        None,
    );
    assert!(edit.ok());
    assert_eq!(edit.answer_value()["created"], true);
    assert_eq!(value(edit.text_ref().unwrap())["facts"][0]["id"], "net.sni");
    let text = edit.text_ref().unwrap();
    assert_eq!(
        edit.span(),
        Some(vec![text.as_ptr() as u32, text.len() as u32])
    );

    let invalid = saved(json!({"id": "x"}), None);
    assert!(!invalid.ok());
    assert_eq!(invalid.span(), None);
    assert_eq!(invalid.bytes(), None);
    assert_eq!(invalid.answer_value()["code"], "memory.invalid");
    let not_json = save("not json", None, NOW, None);
    assert_eq!(not_json.answer_value()["code"], "memory.invalid");

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

    let text = edit.text_ref().unwrap();
    let bytes = || Some(text.as_bytes().to_vec());
    assert_eq!(list(bytes()).answer_value(), json!({"ok": true}));
    assert!(show(bytes(), "net.sni").text_ref().unwrap().contains("SNI"));
    assert_eq!(export(bytes()).text_ref().unwrap(), text);
    assert_eq!(forget(bytes(), "net.sni").answer_value()["removed"], 1);
    assert_eq!(
        import(bytes(), text.as_bytes(), "keep").answer_value()["ok"],
        true
    );
}

#[test]
fn the_cache_crosses_stat_numbers_and_json() {
    let text = saved(
        json!({"id": "db.port", "statement": "Postgres listens on 5433"}),
        None,
    )
    .text
    .unwrap();
    let mut memory = Memory::new();
    assert!(!memory.is_fresh(&[NOW, 100.0, 7.0]));
    assert_eq!(
        memory.load(text.as_bytes(), &[NOW - 10_000.0, 100.0, 7.0], NOW),
        None
    );
    assert_eq!(memory.facts(), 1);
    assert!(memory.is_fresh(&[NOW - 10_000.0, 100.0, 7.0]));
    let answer = value(&memory.recall(r#"{"query": "postgres port"}"#, None));
    assert_eq!(answer["facts"][0]["id"], "db.port");
    assert_eq!(
        value(&memory.recall(r#"{"qeury": "x"}"#, None))["code"],
        "memory.invalid"
    );
    let corrupt = memory
        .load(b"[1,", &[NOW, 3.0, 7.0], NOW + 9_000.0)
        .unwrap();
    assert_eq!(value(&corrupt)["code"], "memory.corrupt");
    assert_eq!(memory.facts(), 0);
    memory.load_missing();
    assert_eq!(value(&memory.recall("{}", None))["in_store"], 0);
    assert_eq!(value(&memory.recall("not json", None))["total"], 0);
}

#[test]
fn a_save_crosses_as_steps_and_inputs_in_json() {
    let mut save = StoreSave::new(
        "/h/memory".into(),
        "/".into(),
        false,
        "tok-1".into(),
        10,
        "h".into(),
        7.0,
        NOW,
        0.0,
    );
    let mut answer = |input: Value| {
        let step = value(&save.poll());
        save.handle(step["id"].as_f64().unwrap(), &input.to_string(), NOW, 1.0)
            .unwrap();
        step
    };
    // The lock's create comes first; it finds no directory, which is made, then tried again.
    let create = answer(json!({"kind": "failed", "code": "ENOENT", "message": "no directory"}));
    assert_eq!(
        (
            create["kind"].as_str(),
            create["path"].as_str(),
            create["mode"].as_u64(),
            create["sync"].as_bool()
        ),
        (
            Some("create"),
            Some("/h/memory/.facts.lock"),
            Some(0o644),
            Some(false)
        )
    );
    assert!(
        create["data"]["text"]
            .as_str()
            .unwrap()
            .contains("\"token\":\"tok-1\"")
    );
    assert_eq!(
        answer(json!({"kind": "ok"})),
        json!({"kind": "makeDir", "id": 2, "path": "/h/memory"})
    );
    assert_eq!(answer(json!({"kind": "created"}))["id"], 3);
    assert_eq!(
        answer(json!({"kind": "failed", "code": "ENOENT", "message": "no store"}))["kind"],
        "readStore"
    );
    assert_eq!(
        answer(json!({"kind": "edited", "ok": false, "answer": "{\"ok\":false}"}))["kind"],
        "edit"
    );
    assert_eq!(
        answer(json!({"kind": "ok"})),
        json!({"kind": "rename", "id": 6, "from": "/h/memory/.facts.lock", "to": "/h/memory/.facts.lock.tok-1.released"})
    );
    assert_eq!(
        answer(json!({"kind": "text", "text": create["data"]["text"], "mtimeMs": NOW}))["kind"],
        "read"
    );
    assert_eq!(answer(json!({"kind": "ok"}))["kind"], "unlink");
    assert_eq!(
        value(&save.poll()),
        json!({"kind": "done", "answer": "{\"ok\":false}", "committed": null})
    );
    assert_eq!(
        value(&layout()),
        json!({"dir": "memory", "store": "facts.json", "lock": ".facts.lock", "takeover": ".facts.lock.takeover"})
    );
}

#[test]
fn a_cached_save_crosses_its_stat_and_bytes() {
    let mut memory = Memory::new();
    let args = r#"{"id": "db.port", "statement": "Postgres listens on 5433"}"#;
    let first = value(&memory.save(args, None, None, NOW, None));
    assert!(memory.saved());
    let span = memory.saved_span().unwrap();
    assert_eq!(span[1] as usize, memory.cache.pending_text().unwrap().len());
    assert_eq!(first["created"], true);
    let key = [NOW - 10_000.0, span[1] as f64, 7.0, NOW - 10_000.0];
    memory.committed(Some(key.to_vec()), NOW, true);
    assert!(memory.holds());
    assert!(!memory.saved());
    assert_eq!(memory.saved_span(), None, "nothing to write once committed");
    assert!(memory.is_fresh(&key));
    let second = value(&memory.save(args, Some(key.to_vec()), None, NOW, None));
    assert_eq!(second["updated"], true);
    memory.committed(None, NOW, false);
    assert!(!memory.holds());
    assert!(
        !memory.is_fresh(&key),
        "an unwritten save keys the cache to no file"
    );
    let unread = value(&memory.save(args, Some(vec![NOW, 1.0, 7.0, NOW, NOW]), None, NOW, None));
    assert_eq!(unread["code"], "memory.read_failed");
    assert!(!memory.saved());
    let read = memory.save(
        args,
        Some(vec![NOW, 1.0, 7.0, NOW, NOW]),
        Some(b"[1,".to_vec()),
        NOW,
        None,
    );
    assert_eq!(value(&read)["code"], "memory.corrupt");
}

#[test]
fn stats_cross_js_numbers() {
    let text = saved(json!({"id": "a.b", "statement": "first"}), None)
        .text
        .unwrap();
    let answer = value(&stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(text.as_bytes()),
        text.len() as f64,
        Some(NOW),
        Some(-5.0),
    ));
    assert_eq!(answer["path"], "~/.dsh/memory/facts.json");
    assert_eq!(answer["bytes"], text.len());
    assert_eq!(answer["lock"]["age_ms"], 0, "a negative age is 0");
    let broken = value(&stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(&[0xff]),
        f64::NAN,
        None,
        None,
    ));
    assert_eq!(broken["code"], "memory.corrupt");
    assert_eq!(broken["bytes"], 0);
}

#[test]
fn a_stat_key_crosses_the_wire_to_the_exact_double() {
    // Without serde_json's `float_roundtrip` this parses one unit off (as about one in nine such
    // times do), and a held store's key would never match its `stat` again.
    let input: save::Input = serde_json::from_str(
        r#"{"kind": "key", "key": [1796491283342.0015, 6400000, 10383991, 1796491283342.0059]}"#,
    )
    .unwrap();
    assert_eq!(
        input,
        save::Input::Key {
            key: [
                1_796_491_283_342.001_5,
                6_400_000.0,
                10_383_991.0,
                1_796_491_283_342.005_9
            ]
        }
    );
}
