//! Property tests of the memory core:
//!
//! - parsing never panics, whatever the text; a parsed store written and parsed again is the
//!   same store (unknown keys included);
//! - a save of a valid store keeps every other fact and holds its id exactly once afterwards;
//!   a save into a corrupt store always refuses;
//! - argument validation never panics, whatever the JSON;
//! - search never panics, returns at most `limit` hits, best first, the same on every call;
//!   every recall answer fits [`MAX_ANSWER_BYTES`];
//! - the lock never steals a young lock whose holder is not provably dead, never gives up
//!   before the deadline and never sleeps past it.

use limit_break_memory::lock::{self, Decision, Liveness, LockRecord, Me, Observed};
use limit_break_memory::recall::MAX_ANSWER_BYTES;
use limit_break_memory::render::Rendered;
use limit_break_memory::{
    Code, FileKey, Found, Index, IndexCache, Store, apply_save, parse_recall_args, parse_save_args,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,30}",
        "[a-zA-Z0-9._ \\-]{0,20}",
        "\\PC{0,20}",
        prop::sample::select(vec![
            "服务器 内存",
            "数据库端口",
            "raytracer",
            "db.port",
            "the",
            ""
        ])
        .prop_map(str::to_owned),
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn fact() -> impl Strategy<Value = Value> {
    (
        text(),
        text(),
        prop::collection::vec(text(), 0..3),
        prop::collection::btree_map("x[a-z]{0,5}", json_value(), 0..2),
    )
        .prop_map(|(id, statement, tags, extra)| {
            let mut m = Map::new();
            m.insert("id".into(), json!(id));
            m.insert("statement".into(), json!(statement));
            m.insert("tags".into(), json!(tags));
            m.extend(extra);
            Value::Object(m)
        })
}

fn store_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(fact(), 0..12),
        prop::collection::btree_map("y[a-z]{0,5}", json_value(), 0..2),
    )
        .prop_map(|(facts, extra)| {
            let mut m = Map::new();
            m.insert("schema_version".into(), json!(1));
            m.insert("facts".into(), Value::Array(facts));
            m.extend(extra);
            Value::Object(m).to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn parse_never_panics(s in "\\PC{0,200}") {
        let _ = Store::parse(&s);
    }

    #[test]
    fn parse_write_parse_is_identity(t in store_text()) {
        let store = Store::parse(&t).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let again = Store::parse(&store.to_text()).map_err(|f| TestCaseError::fail(f.to_string()))?;
        prop_assert_eq!(&store, &again);
        prop_assert_eq!(store.to_text(), again.to_text());
    }

    #[test]
    fn save_keeps_everything_else(t in store_text(), id in "[a-z.]{1,8}", statement in "[a-z ]{1,20}") {
        let before = Store::parse(&t).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let args = parse_save_args(&json!({ "id": id, "statement": statement }));
        let Ok(args) = args else { return Ok(()) }; // blank after trimming
        let saved = apply_save(Some(&t), &args, 0, None).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let after = Store::parse(&saved.text).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let had = before.position(&args.id).is_some();
        prop_assert_eq!(saved.created, !had);
        prop_assert_eq!(after.facts.len(), before.facts.len() + usize::from(!had));
        let first = after.position(&args.id);
        prop_assert!(first.is_some());
        prop_assert_eq!(&after.facts[first.unwrap_or(0)].statement, &args.statement);
        for (i, f) in before.facts.iter().enumerate() {
            if Some(i) != before.position(&args.id) {
                prop_assert_eq!(f, &after.facts[i]);
            }
        }
        prop_assert_eq!(&before.extra, &after.extra);
    }

    #[test]
    fn corrupt_stores_are_never_overwritten(t in "\\PC{1,60}") {
        prop_assume!(Store::parse(&t).is_err());
        let args = parse_save_args(&json!({ "id": "a", "statement": "b" }))
            .map_err(|f| TestCaseError::fail(f.to_string()))?;
        let r = apply_save(Some(&t), &args, 0, None);
        prop_assert_eq!(r.err().map(|f| f.code), Some(Code::Corrupt));
    }

    #[test]
    fn argument_validation_never_panics(v in json_value()) {
        let _ = parse_save_args(&v);
        let _ = parse_recall_args(&v);
    }

    #[test]
    fn search_is_bounded_sorted_and_deterministic(t in store_text(), q in text(), limit in 1usize..8) {
        let store = Store::parse(&t).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let index = Index::build(store);
        let a = index.search(&q, &[], limit);
        prop_assert!(a.hits.len() <= limit);
        prop_assert!(a.hits.len() <= a.total);
        prop_assert!(a.hits.windows(2).all(|w| w[0].score >= w[1].score));
        prop_assert!(a.hits.iter().all(|h| h.score > 0.0 && h.score.is_finite()));
        prop_assert_eq!(&a, &index.search(&q, &[], limit));
        let args = parse_recall_args(&json!({ "query": q, "limit": limit }))
            .map_err(|f| TestCaseError::fail(f.to_string()))?;
        let v = index.recall(&args, None);
        let size = serde_json::to_string_pretty(&v).map(|s| s.len()).unwrap_or(usize::MAX);
        prop_assert!(size <= MAX_ANSWER_BYTES);
    }

    /// The index rebuilt after saves (reusing unchanged facts' analysis) ranks every query
    /// exactly as a fresh build of the saved store: the same answer, byte for byte.
    #[test]
    fn a_rebuilt_index_ranks_exactly_as_a_full_build(
        t in store_text(),
        saves in prop::collection::vec(("[a-z.]{1,6}", text(), prop::collection::vec(text(), 0..3)), 1..5),
        queries in prop::collection::vec(text(), 1..4),
    ) {
        let store = Store::parse(&t).map_err(|f| TestCaseError::fail(f.to_string()))?;
        let mut index = Index::build(store);
        let mut current = t;
        for (id, statement, tags) in saves {
            let Ok(args) = parse_save_args(&json!({ "id": id, "statement": format!("s {statement}"), "tags": tags })) else { continue };
            current = apply_save(Some(&current), &args, 0, None).map_err(|f| TestCaseError::fail(f.to_string()))?.text;
            let saved = Store::parse(&current).map_err(|f| TestCaseError::fail(f.to_string()))?;
            index = index.rebuild(saved);
        }
        let full = Index::build(Store::parse(&current).map_err(|f| TestCaseError::fail(f.to_string()))?);
        for q in queries.iter().chain([&String::new()]) {
            let args = parse_recall_args(&json!({ "query": q, "limit": 50 }))
                .map_err(|f| TestCaseError::fail(f.to_string()))?;
            let a = serde_json::to_string(&index.recall(&args, None)).unwrap_or_default();
            let b = serde_json::to_string(&full.recall(&args, None)).unwrap_or_default();
            prop_assert_eq!(a, b);
        }
    }

    /// Saves through the cache (store, index and text edited in place) write byte for byte what
    /// saves of the file's text write, and the cached index ranks every query exactly as a fresh
    /// build of the saved store: the same answer, byte for byte.
    #[test]
    fn saves_through_the_cache_write_and_rank_as_saves_of_the_file(
        t in store_text(),
        saves in prop::collection::vec(("[a-z.]{1,6}", text(), prop::collection::vec(text(), 0..3), prop::collection::vec("[a-z.]{1,6}", 0..2)), 1..6),
        queries in prop::collection::vec(text(), 1..4),
    ) {
        let store = Store::parse(&t).map_err(|f| TestCaseError::fail(f.to_string()))?;
        prop_assert_eq!(Rendered::of(&store).text, store.to_text());
        let mut cache = IndexCache::new();
        let key = |n: usize| FileKey { mtime_ms: 0.0, size: n as f64, ino: 1.0, ctime_ms: 0.0 };
        let mut current = t;
        let mut n = 0;
        // Writes so far: the file's key (a refused save writes nothing).
        let mut written = 0;
        for (id, statement, tags, supersedes) in saves {
            let args = json!({ "id": id, "statement": format!("s {statement}"), "tags": tags, "supersedes": supersedes });
            let Ok(parsed) = parse_save_args(&args) else { continue };
            let found = if n == 0 {
                Found::Read { bytes: current.as_bytes(), key: key(n), at: 5_000.0 }
            } else {
                Found::Unread(key(written))
            };
            let plain = apply_save(Some(&current), &parsed, n as u64, None);
            let cached = cache.save(&args, found, n as u64, None);
            match (plain, cached) {
                (Ok(plain), Ok(answer)) => {
                    prop_assert_eq!(Some(plain.text.as_str()), cache.pending_text());
                    prop_assert_eq!(plain.answer(), answer);
                    current = plain.text;
                    written += 1;
                    cache.committed(Some(key(written)), 5_000.0, false);
                }
                (Err(a), Err(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert!(false, "{:?} against {:?}", a, b),
            }
            n += 1;
        }
        // Every save was refused by its arguments before the store was read: the cache never
        // loaded it, so there is nothing of it to rank.
        if n == 0 {
            return Ok(());
        }
        let full = Index::build(Store::parse(&current).map_err(|f| TestCaseError::fail(f.to_string()))?);
        for q in queries.iter().chain([&String::new()]) {
            let args = json!({ "query": q, "limit": 50 });
            let parsed = parse_recall_args(&args).map_err(|f| TestCaseError::fail(f.to_string()))?;
            let a = serde_json::to_string(&cache.recall(&args, None)).unwrap_or_default();
            let b = serde_json::to_string(&full.recall(&parsed, None)).unwrap_or_default();
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn lock_decisions_respect_the_protocol(
        age_ms in 0u64..40_000,
        waited_ms in 0u64..12_000,
        attempt in 0u32..40,
        jitter in 0.0f64..1.0,
        same_host in any::<bool>(),
        liveness in prop::sample::select(vec![Liveness::Alive, Liveness::Dead, Liveness::Unknown]),
        readable in any::<bool>(),
    ) {
        let me = Me { token: "me", pid: 1, host: "here" };
        let text = if readable {
            LockRecord { token: "other".into(), pid: 2, host: if same_host { "here" } else { "there" }.into(), created: 0 }.to_text()
        } else {
            String::from("{\"tok")
        };
        let d = lock::decide(&Observed { text: &text, age_ms, holder: liveness }, &me, waited_ms, attempt, jitter);
        let provably_dead = readable && same_host && liveness == Liveness::Dead;
        match d {
            Decision::Steal(_) => prop_assert!(age_ms >= lock::STALE_MS || provably_dead),
            Decision::GiveUp(f) => {
                prop_assert!(waited_ms >= lock::WAIT_MS);
                prop_assert_eq!(f.code, Code::Locked);
            }
            Decision::Wait { ms } => {
                prop_assert!(waited_ms < lock::WAIT_MS);
                prop_assert!((1..=lock::BACKOFF_MAX_MS * 5 / 4 + 1).contains(&ms));
                prop_assert!(waited_ms + ms <= lock::WAIT_MS);
            }
        }
    }
}
