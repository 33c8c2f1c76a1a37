use super::*;

const NOW: UnixMillis = 1_780_000_000_000;

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn saved(args: Value, current: Option<&str>) -> Result<Reply, Failure> {
    save(&args, current.map(str::as_bytes), NOW, None)
}

fn code(result: Result<Reply, Failure>) -> Value {
    result.unwrap_err().to_json()["code"].clone()
}

#[test]
fn a_save_writes_the_store_and_answers() {
    let edit = saved(
        json!({"id": "net.sni", "statement": "SNI is filtered"}),
        None,
    )
    .unwrap();
    let answer = &edit.answer;
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["created"], true);
    assert_eq!(answer["facts"], 1);
    let store = value(&edit.text);
    assert_eq!(store["schema_version"], 1);
    assert_eq!(store["facts"][0]["topic"], "net");
    assert_eq!(store["facts"][0]["timestamp"], answer["timestamp"]);

    let again = saved(
        json!({"id": "net.sni", "statement": "SNI is filtered on port 443"}),
        Some(&edit.text),
    )
    .unwrap();
    assert_eq!(again.answer["updated"], true);
    assert_eq!(again.answer["facts"], 1);
}

#[test]
fn refusals_carry_codes() {
    assert_eq!(code(saved(json!({"id": "x"}), None)), "memory.invalid");
    assert_eq!(
        code(saved(
            json!({"id": "x", "statement": "y"}),
            Some("{not json")
        )),
        "memory.corrupt"
    );
    let not_utf8 = save(
        &json!({"id": "x", "statement": "y"}),
        Some(&[b'{', 0xff, b'}']),
        NOW,
        None,
    )
    .unwrap_err();
    expect_test::expect![[r#"{"ok":false,"code":"memory.corrupt","message":"the memory store is not UTF-8 text (invalid byte at offset 1). The file was left exactly as it is; fix it by hand (or move it aside) and saves will work again."}"#]].assert_eq(&not_utf8.to_json().to_string());
    assert_eq!(
        code(saved(
            json!({"id": "x", "statement": "y"}),
            Some(r#"{"schema_version": 2, "facts": []}"#),
        )),
        "memory.unsupported_version"
    );
}

#[test]
fn people_cli_reads_and_edits() {
    let one = saved(json!({"id": "a.b", "statement": "first"}), None).unwrap();
    let two = saved(json!({"id": "c.d", "statement": "second"}), Some(&one.text)).unwrap();
    let text = two.text;
    let bytes = || Some(text.as_bytes());
    let listed = list(bytes()).unwrap();
    assert_eq!(listed.answer, json!({"ok": true}));
    expect_test::expect![[r#"
        a.b  2026-05-28T20:26:40.000Z  first
        c.d  2026-05-28T20:26:40.000Z  second
        2 facts
    "#]]
    .assert_eq(&listed.text);
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
    .assert_eq(&show(bytes(), "c.d").unwrap().text);
    assert_eq!(code(show(bytes(), "zz")), "memory.not_found");
    assert_eq!(export(bytes()).unwrap().text, text);

    let gone = forget(bytes(), " a.b ").unwrap();
    assert_eq!(
        gone.answer,
        json!({"ok": true, "id": "a.b", "removed": 1, "facts": 1})
    );
    let merged = import(Some(gone.text.as_bytes()), text.as_bytes(), "newer").unwrap();
    assert_eq!(merged.answer["created"], json!(["a.b"]));
    assert_eq!(
        import(bytes(), b"x", "sometimes").unwrap_err().to_json()["message"],
        "--policy must be newer, overwrite or keep (got \"sometimes\")"
    );
    assert_eq!(code(import(bytes(), &[0xfe], "keep")), "memory.invalid");
    expect_test::expect![[r#"
        0 facts
    "#]]
    .assert_eq(&list(None).unwrap().text);
}

#[test]
fn stats_show_the_path_symbolically() {
    let one = saved(
        json!({"id": "a.b", "statement": "first", "tags": ["X"]}),
        None,
    )
    .unwrap();
    let text = one.text;
    let answer = stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(text.as_bytes()),
        text.len() as u64,
        Some(NOW),
        None,
    );
    assert_eq!(answer["path"], "~/.dsh/memory/facts.json");
    assert_eq!(answer["facts"], 1);
    assert_eq!(answer["bytes"], text.len());
    let missing = stats(
        "/srv/dsh/memory/facts.json",
        Some("/srv/dsh"),
        Some("/home/u"),
        None,
        0,
        None,
        Some(1200),
    );
    assert_eq!(missing["path"], "$DSH_HOME/memory/facts.json");
    assert_eq!(missing["exists"], false);
    assert_eq!(missing["lock"]["age_ms"], 1200);
    let broken = stats(
        "/home/u/.dsh/memory/facts.json",
        None,
        Some("/home/u"),
        Some(&[0xff]),
        1,
        Some(NOW),
        None,
    );
    assert_eq!(broken["code"], "memory.corrupt");
    assert_eq!(broken["path"], "~/.dsh/memory/facts.json");
    assert_eq!(broken["bytes"], 1);
}
