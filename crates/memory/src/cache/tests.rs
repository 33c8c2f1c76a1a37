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
        ctime_ms: mtime_ms,
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
fn after_another_writer_saved_the_next_load_rebuilds_from_the_kept_index() {
    let save = |text: Option<&str>, id: &str, statement: &str| {
        let args = parse_save_args(&json!({ "id": id, "statement": statement })).unwrap();
        apply_save(text, &args, NOW as u64, None).unwrap().text
    };
    let first = save(None, "db.port", "Postgres listens on 5433");
    let mut memory = IndexCache::new();
    let old = key(NOW - 10_000.0, 100.0, 7.0);
    memory.load(first.as_bytes(), old, NOW).unwrap();
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

fn save_args(id: &str, statement: &str) -> Value {
    json!({ "id": id, "statement": statement })
}

#[test]
fn a_save_through_the_cache_writes_what_a_save_of_the_file_writes() {
    let mut memory = IndexCache::new();
    let mut file: Option<String> = None;
    let saves = [
        json!({ "id": "db.port", "statement": "Postgres listens on 5433", "tags": ["db"] }),
        save_args("ci.cache", "The CI cache lives on the runner"),
        json!({ "id": "db.port2", "statement": "Postgres moved to 5434", "supersedes": ["db.port"] }),
        save_args("ci.cache", "The CI cache moved to S3"),
    ];
    for (i, args) in saves.iter().enumerate() {
        let now = NOW as u64 + i as u64;
        let found = match (&file, i) {
            (None, _) => Found::Missing,
            // The first save over an existing file reads it; the later ones trust the key.
            (Some(text), 1) => Found::Read {
                bytes: text.as_bytes(),
                key: key(NOW - 10_000.0, 1.0, 1.0),
                at: NOW,
            },
            (Some(_), _) => Found::Unread(key(NOW - 10_000.0, i as f64, 1.0)),
        };
        let answer = memory.save(args, found, now, None).unwrap();
        let plain =
            apply_save(file.as_deref(), &parse_save_args(args).unwrap(), now, None).unwrap();
        assert_eq!(memory.pending_text(), Some(plain.text.as_str()), "save {i}");
        assert_eq!(answer, plain.answer(), "save {i}");
        assert!(!memory.is_fresh(key(NOW - 10_000.0, 1.0, 1.0)));
        memory.committed(
            Some(key(NOW - 10_000.0, 1.0 + i as f64, 1.0)),
            NOW + 5_000.0,
            false,
        );
        file = Some(plain.text);
    }
    let answer = memory.recall(&json!({ "query": "postgres" }), None);
    assert_eq!(answer["facts"][0]["id"], "db.port2");
    assert_eq!(answer["total"], 1, "the superseded fact is hidden");
}

#[test]
fn a_failed_save_leaves_the_cache_to_the_file() {
    let mut memory = IndexCache::new();
    memory
        .save(
            &save_args("a.one", "first fact"),
            Found::Missing,
            NOW as u64,
            None,
        )
        .unwrap();
    let first = memory.pending_text().unwrap().to_owned();
    // The first save's write failed: nothing was committed, so the cache is keyed to no file and
    // the missing file is read as it is.
    let at = key(NOW - 10_000.0, first.len() as f64, 3.0);
    assert!(!memory.is_fresh(at));
    let refused = memory.save(
        &save_args("b.two", "second"),
        Found::Unread(at),
        NOW as u64,
        None,
    );
    assert_eq!(code(refused.unwrap_err()), "memory.read_failed");
    let second = memory
        .save(
            &save_args("b.two", "second"),
            Found::Missing,
            NOW as u64,
            None,
        )
        .unwrap();
    assert_eq!(
        second["facts"], 1,
        "the unwritten first fact is not in the store"
    );
    // A refusal keeps what was found.
    let unknown = json!({ "id": "c", "statement": "s", "supersedes": ["nope"] });
    let found = Found::Read {
        bytes: first.as_bytes(),
        key: at,
        at: NOW,
    };
    assert_eq!(
        code(memory.save(&unknown, found, NOW as u64, None).unwrap_err()),
        "memory.not_found"
    );
    assert_eq!(memory.facts(), 1);
    assert_eq!(
        memory.recall(&json!({ "query": "first" }), None)["facts"][0]["id"],
        "a.one"
    );
}

#[test]
fn a_load_during_a_pending_save_keeps_the_text_being_written() {
    let mut memory = IndexCache::new();
    memory
        .save(
            &save_args("a.one", "first fact"),
            Found::Missing,
            NOW as u64,
            None,
        )
        .unwrap();
    let written = memory.pending_text().unwrap().to_owned();
    // A recall between the save and its write reads the file as it still is (no file): the
    // cache keeps the save, whose text the driver has yet to write.
    memory.load_missing();
    let old = apply_save(
        None,
        &parse_save_args(&save_args("z.old", "old")).unwrap(),
        1,
        None,
    )
    .unwrap()
    .text;
    assert_eq!(memory.load(old.as_bytes(), key(NOW, 1.0, 1.0), NOW), Ok(()));
    assert_eq!(memory.pending_text(), Some(written.as_str()));
    assert_eq!(memory.facts(), 1);
    let at = key(NOW - 10_000.0, written.len() as f64, 2.0);
    memory.committed(Some(at), NOW, false);
    assert_eq!(memory.pending_text(), None);
    assert!(memory.is_fresh(at));
    // A second report changes nothing; a load after it is a load again.
    memory.committed(Some(key(NOW, 5.0, 5.0)), NOW, false);
    assert!(memory.is_fresh(at));
    assert_eq!(memory.load(old.as_bytes(), key(NOW, 1.0, 1.0), NOW), Ok(()));
    assert_eq!(
        memory.recall(&json!({ "query": "old" }), None)["facts"][0]["id"],
        "z.old"
    );
}

#[test]
fn a_held_file_is_trusted_within_the_racy_window_and_only_while_held() {
    let mut memory = IndexCache::new();
    let save = |memory: &mut IndexCache, id: &str| {
        memory
            .save(&save_args(id, "a fact"), Found::Missing, NOW as u64, None)
            .unwrap();
        memory.pending_text().unwrap().len() as f64
    };
    // Written a millisecond ago: without the handle, only the bytes can tell.
    let size = save(&mut memory, "a.one");
    let written = key(NOW - 1.0, size, 7.0);
    memory.committed(Some(written), NOW, false);
    assert!(!memory.is_fresh(written));
    assert!(!memory.holds());
    // Held: a file with its key is the very file.
    memory.load_missing();
    let size = save(&mut memory, "a.one");
    let written = key(NOW - 1.0, size, 8.0);
    memory.committed(Some(written), NOW, true);
    assert!(memory.holds());
    assert!(memory.is_fresh(written));
    assert!(
        !memory.is_fresh(key(NOW - 1.0, size, 9.0)),
        "another writer's rename: another inode"
    );
    assert!(
        !memory.is_fresh(key(NOW, size, 8.0)),
        "written in place since: another mtime"
    );
    assert!(
        !memory.is_fresh(FileKey {
            ctime_ms: NOW,
            ..written
        }),
        "written in place and its mtime set back: another ctime"
    );
    // The same bytes read under another key: kept, but no longer the held file.
    let text = memory.pending_text().map(str::to_owned);
    assert_eq!(text, None);
    let bytes = Rendered::of(memory.cache.as_ref().unwrap().index.store()).text;
    let moved = key(NOW - 1.0, size, 9.0);
    assert_eq!(memory.load(bytes.as_bytes(), moved, NOW), Ok(()));
    assert!(!memory.holds());
    assert!(!memory.is_fresh(written));
    assert!(!memory.is_fresh(moved), "read within the racy window");
    let old = key(NOW - 10_000.0, size, 9.0);
    assert_eq!(memory.load(bytes.as_bytes(), old, NOW), Ok(()));
    assert!(
        memory.is_fresh(FileKey {
            ctime_ms: NOW,
            ..old
        }),
        "a file not held is known by mtime, size and inode"
    );
    // A save drops the hold until its own commit.
    memory.committed(Some(written), NOW, true);
    assert!(!memory.holds(), "no save is pending: nothing changes");
}
