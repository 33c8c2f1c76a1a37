use super::*;
use crate::args::parse_save_args;
use crate::edit::apply_save;
use serde_json::json;

const NOW: f64 = 1_780_000_000_000.0;

fn key(mtime_ms: f64, size: f64, ino: f64) -> FileKey {
    FileKey {
        mtime_ms,
        size,
        ino,
    }
}

fn code(failure: Failure) -> Value {
    failure.to_json()["code"].clone()
}

#[test]
fn the_cache_is_keyed_by_stat_and_checked_by_content_when_racy() {
    let args = parse_save_args(&json!({"id": "db.port", "statement": "Postgres listens on 5433"}))
        .unwrap();
    let text = apply_save(None, &args, NOW as u64, None).unwrap().text;
    let mut memory = IndexCache::new();
    assert!(!memory.is_fresh(key(NOW, 100.0, 7.0)));
    assert_eq!(
        memory.load(text.as_bytes(), key(NOW - 10_000.0, 100.0, 7.0), NOW),
        Ok(())
    );
    assert_eq!(memory.facts(), 1);
    assert!(memory.is_fresh(key(NOW - 10_000.0, 100.0, 7.0)));
    assert!(
        !memory.is_fresh(key(NOW - 10_000.0, 101.0, 7.0)),
        "size changed"
    );
    assert!(
        !memory.is_fresh(key(NOW - 10_000.0, 100.0, 8.0)),
        "replaced by rename"
    );

    // Read within the racy window of its mtime: not trusted until checked again by content.
    assert_eq!(
        memory.load(text.as_bytes(), key(NOW - 500.0, 100.0, 7.0), NOW),
        Ok(())
    );
    assert!(!memory.is_fresh(key(NOW - 500.0, 100.0, 7.0)));
    // Same content at a later check: kept (no re-parse), and now trusted.
    assert_eq!(
        memory.load(text.as_bytes(), key(NOW - 500.0, 100.0, 7.0), NOW + 5_000.0),
        Ok(())
    );
    assert!(memory.is_fresh(key(NOW - 500.0, 100.0, 7.0)));

    let answer = memory.recall(&json!({"query": "postgres port"}), None);
    assert_eq!(answer["facts"][0]["id"], "db.port");
    let failure = memory.recall(&json!({"qeury": "x"}), None);
    assert_eq!(failure["code"], "memory.invalid");

    // A corrupt file drops the cache and answers the failure.
    let corrupt = memory
        .load(b"[1,", key(NOW, 3.0, 7.0), NOW + 9_000.0)
        .unwrap_err();
    assert_eq!(code(corrupt), "memory.corrupt");
    assert_eq!(memory.facts(), 0);
    let not_utf8 = memory
        .load(&[0xff], key(NOW, 1.0, 7.0), NOW + 9_000.0)
        .unwrap_err();
    assert_eq!(code(not_utf8), "memory.corrupt");

    memory.load_missing();
    assert_eq!(memory.recall(&Value::Null, None)["in_store"], 0);
    memory.invalidate();
    assert_eq!(memory.recall(&json!({}), None)["total"], 0);
}

#[test]
fn a_window_exactly_two_seconds_after_the_mtime_is_still_racy() {
    let mut memory = IndexCache::new();
    let at = key(NOW - RACY_WINDOW_MS, 2.0, 1.0);
    assert_eq!(memory.load(b"{}", at, NOW), Ok(()));
    assert!(!memory.is_fresh(at));
    assert_eq!(memory.load(b"{}", at, NOW + 1.0), Ok(()));
    assert!(memory.is_fresh(at));
}

#[test]
fn after_a_save_the_next_load_rebuilds_from_the_kept_index() {
    let save = |text: Option<&str>, id: &str, statement: &str| {
        let args = parse_save_args(&json!({ "id": id, "statement": statement })).unwrap();
        apply_save(text, &args, NOW as u64, None).unwrap().text
    };
    let first = save(None, "db.port", "Postgres listens on 5433");
    let mut memory = IndexCache::new();
    let old = key(NOW - 10_000.0, 100.0, 7.0);
    memory.load(first.as_bytes(), old, NOW).unwrap();
    memory.invalidate();
    assert!(!memory.is_fresh(old), "a saved store is read again");
    let second = save(Some(&first), "ci.cache", "The CI cache lives on the runner");
    memory
        .load(second.as_bytes(), key(NOW, 200.0, 8.0), NOW + 5_000.0)
        .unwrap();
    assert_eq!(memory.facts(), 2);
    assert_eq!(
        memory.recall(&json!({ "query": "runner cache" }), None)["facts"][0]["id"],
        "ci.cache"
    );
}
