//! Native timings over synthetic stores of 10 000 and 100 000 facts: store parse, index build,
//! warm recall (index cached, as the driver caches it), and a save into a 10 000-fact store
//! (store text → new store text), once in a fresh heap and once while the process holds a built
//! index (the driver's situation; glibc's allocator makes that one slower natively), and a save
//! through the driver's cache (the store and index edited in place; the first one, which
//! serialises the whole store, left out). Prints medians and p95, and each median against its
//! target.
//!
//! `cargo run --release -p limit-break-memory --example scale`

use limit_break_memory::{
    FileKey, Found, Index, IndexCache, RecallArgs, SaveArgs, Store, apply_save, parse_save_args,
};
use serde_json::json;
use std::time::{Duration, Instant};

/// A small deterministic PRNG (xorshift64*), so every run measures the same stores.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const REAL: &[&str] = &[
    "network", "proxy", "build", "release", "cache", "timeout", "database", "server", "deploy",
    "render", "memory", "latency", "config", "token", "session", "backup", "schedule", "port",
    "mirror", "error", "retry", "window", "lock", "store", "parse", "index", "query", "report",
];
const ZH: &[&str] = &[
    "服务器",
    "数据库",
    "内存",
    "部署",
    "缓存",
    "超时",
    "端口",
    "日志",
];

fn vocabulary(rng: &mut Rng, n: usize) -> Vec<String> {
    let syll = [
        "ka", "to", "ri", "men", "sol", "var", "pex", "lo", "dra", "qui", "zen", "bor",
    ];
    let mut words: Vec<String> = REAL.iter().map(|s| (*s).to_owned()).collect();
    while words.len() < n {
        let k = 2 + rng.below(3);
        words.push((0..k).map(|_| syll[rng.below(syll.len())]).collect());
    }
    words
}

fn sentence(rng: &mut Rng, vocab: &[String], words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        // Zipf-ish: small indices are common.
        let r = rng.below(vocab.len());
        let idx = if rng.below(2) == 0 { r % 200 } else { r };
        s.push_str(&vocab[idx]);
        if rng.below(15) == 0 {
            s.push_str(ZH[rng.below(ZH.len())]);
        }
    }
    s
}

fn store_text(n: usize) -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
    let vocab = vocabulary(&mut rng, 20_000);
    let facts: Vec<_> = (0..n)
        .map(|i| {
            let id = format!(
                "{}.{}.{}{}",
                vocab[rng.below(30)],
                vocab[rng.below(2000)],
                vocab[rng.below(vocab.len())],
                i
            );
            json!({
                "id": id,
                "topic": id.split('.').next().unwrap_or_default(),
                "statement": sentence(&mut rng, &vocab, 14),
                "value": (rng.below(10_000)).to_string(),
                "unit": "ms",
                "details": sentence(&mut rng, &vocab, 24),
                "source": "synthetic",
                "timestamp": "2026-11-01T00:00:00.000Z",
                "tags": [vocab[rng.below(40)].clone(), vocab[rng.below(400)].clone()],
            })
        })
        .collect();
    let mut t = serde_json::to_string_pretty(&json!({ "schema_version": 1, "facts": facts }))
        .unwrap_or_default();
    t.push('\n');
    t
}

fn queries(n: usize) -> Vec<String> {
    let mut rng = Rng(42);
    let vocab = vocabulary(&mut Rng(0x9e37_79b9_7f4a_7c15 ^ 10_000), 20_000);
    (0..n)
        .map(|i| match i % 4 {
            0 => format!(
                "what is the {} {}",
                vocab[rng.below(200)],
                vocab[rng.below(vocab.len())]
            ),
            1 => format!(
                "{} {} {}",
                vocab[rng.below(30)],
                vocab[rng.below(2000)],
                vocab[rng.below(200)]
            ),
            2 => {
                let w = &vocab[rng.below(vocab.len())];
                w.chars().take(3).collect()
            }
            _ => format!("{} 的 {}", ZH[rng.below(ZH.len())], vocab[rng.below(2000)]),
        })
        .collect()
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(v[v.len() / 2]),
        ms(v[(v.len() * 95 / 100).min(v.len() - 1)]),
    )
}

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

fn report(what: &str, (median, p95): (f64, f64), target_ms: Option<f64>) {
    match target_ms {
        Some(t) => println!(
            "{what:<44} median {median:>9.3} ms  p95 {p95:>9.3} ms  target {t:>5} ms  ratio {:.3}",
            median / t
        ),
        None => println!("{what:<44} median {median:>9.3} ms  p95 {p95:>9.3} ms"),
    }
}

fn main() {
    let qs = queries(400);
    for (n, target) in [(10_000usize, 5.0), (100_000, 50.0)] {
        let text = store_text(n);
        println!("\n{n} facts, store {:.1} MB", text.len() as f64 / 1e6);
        let reps = if n > 50_000 { 3 } else { 7 };
        let parse: Vec<Duration> = (0..reps).map(|_| time(|| Store::parse(&text)).1).collect();
        report("parse store text", stats(parse), None);
        let parse_drop: Vec<Duration> = (0..reps)
            .map(|_| time(|| drop(Store::parse(&text))).1)
            .collect();
        report("parse store text, then free it", stats(parse_drop), None);
        let parsed = Store::parse(&text).unwrap_or_default();
        let write: Vec<Duration> = (0..reps).map(|_| time(|| parsed.to_text()).1).collect();
        report("write store text", stats(write), None);
        let save_args: SaveArgs = parse_save_args(&json!({
            "id": "bench.save.new",
            "statement": "A new fact saved into a 10k store",
            "tags": ["bench"],
        }))
        .unwrap_or_else(|f| panic!("{f}"));
        let save_times = || -> Vec<Duration> {
            (0..15)
                .map(|i| {
                    time(|| apply_save(Some(&text), &save_args, 1_700_000_000_000 + i, None)).1
                })
                .collect()
        };
        if n == 10_000 {
            let args: SaveArgs = parse_save_args(&json!({
                "id": "bench.save.new",
                "statement": "A new fact saved into a 10k store",
                "tags": ["bench"],
            }))
            .unwrap_or_else(|f| panic!("{f}"));
            let saves: Vec<Duration> = (0..15)
                .map(|i| time(|| apply_save(Some(&text), &args, 1_700_000_000_000 + i, None)).1)
                .collect();
            report(
                "save into 10k store (text -> new text)",
                stats(saves),
                Some(20.0),
            );
        }
        let mut builds = Vec::new();
        let mut index = None;
        for _ in 0..reps {
            let store = Store::parse(&text).unwrap_or_default();
            let (ix, d) = time(|| Index::build(store));
            builds.push(d);
            index = Some(ix);
        }
        report("Index::build (parsed store -> index)", stats(builds), None);
        let Some(index) = index else { return };
        let search: Vec<Duration> = qs
            .iter()
            .map(|q| time(|| index.search(q, &[], 5)).1)
            .collect();
        report("warm search, limit 5", stats(search), Some(target));
        let answers: Vec<Duration> = qs
            .iter()
            .map(|q| {
                let args = RecallArgs {
                    query: Some(q.clone()),
                    limit: Some(5),
                    limit_lowered_from: None,
                    tags: Vec::new(),
                    offset: 0,
                    include_superseded: false,
                    all_projects: false,
                };
                time(|| index.recall(&args, None)).1
            })
            .collect();
        report(
            "warm memory_recall answer (JSON, limit 5)",
            stats(answers),
            Some(target),
        );
        let list = RecallArgs {
            query: None,
            limit: None,
            limit_lowered_from: None,
            tags: Vec::new(),
            offset: 0,
            include_superseded: false,
            all_projects: false,
        };
        let listing: Vec<Duration> = (0..5)
            .map(|_| time(|| index.recall(&list, None)).1)
            .collect();
        report(
            "warm list-all answer (bounded to 48 kB)",
            stats(listing),
            None,
        );
        if n == 10_000 {
            report(
                "save into 10k store, heap holding the index",
                stats(save_times()),
                Some(20.0),
            );
            // The driver's cache: the store, its index and its text edited in place.
            let mut cache = IndexCache::new();
            let key = FileKey {
                mtime_ms: 0.0,
                size: text.len() as f64,
                ino: 1.0,
                ctime_ms: 0.0,
            };
            cache
                .load(text.as_bytes(), key, 1e7)
                .unwrap_or_else(|f| panic!("{f}"));
            let cached: Vec<Duration> = (0..16)
                .map(|i| {
                    cache.committed(Some(key), 1e7, false);
                    let args = json!({ "id": format!("bench.cached.{i}"), "statement": "A fact saved through the cache" });
                    time(|| cache.save(&args, Found::Unread(key), 1_700_000_000_000, None)).1
                })
                .skip(1)
                .collect();
            report(
                "save through the cache (after the first)",
                stats(cached),
                None,
            );
        }
    }
}
