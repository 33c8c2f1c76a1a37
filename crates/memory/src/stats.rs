//! `memory_stats`: where the store is (shown relative to `$DSH_HOME` or `~`), how many facts,
//! how many bytes, when it was last written, which tags and topics are in use.

use crate::failure::Failure;
use crate::store::Store;
use crate::time::{UnixMillis, iso8601};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Most tags (and topics) listed; the rest are counted in `more_tags` / `more_topics`.
pub const MAX_LISTED: usize = 100;
/// A store larger than this gets a `warning` (about 25 000 facts: its first recall takes
/// about a second on a slow machine and each save rewrites it whole).
pub const LARGE_STORE_BYTES: u64 = 16 * 1024 * 1024;

/// What the driver knows about the store file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatsInput<'a> {
    /// The store's absolute path.
    pub path: &'a str,
    /// The `DSH_HOME` environment variable, if set.
    pub dsh_home_env: Option<&'a str>,
    /// The user's home directory (`os.homedir()`).
    pub home: Option<&'a str>,
    /// The file's text; `None` if it does not exist.
    pub text: Option<&'a str>,
    /// The file's size in bytes (0 if it does not exist).
    pub bytes: u64,
    /// The file's mtime, Unix milliseconds.
    pub modified: Option<UnixMillis>,
    /// Age of the lock file in milliseconds, if one exists.
    pub lock_age_ms: Option<u64>,
}

/// `path` for display: `$DSH_HOME/…` when it lies under `DSH_HOME`, `~/…` when under the home
/// directory, otherwise as given (it is then not inside the user's home). Backslashes are shown as
/// `/`; Windows drive paths compare without case.
pub fn display_path(path: &str, dsh_home_env: Option<&str>, home: Option<&str>) -> String {
    let home = home.map(str::trim).filter(|h| !h.is_empty());
    if let Some(dsh) = dsh_home_env.map(str::trim).filter(|h| !h.is_empty()) {
        let expanded = match (dsh.strip_prefix('~'), home) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with(['/', '\\']) => {
                format!("{h}{rest}")
            }
            _ => dsh.to_owned(),
        };
        if let Some(rest) = under(path, &expanded) {
            return join("$DSH_HOME", &rest);
        }
    }
    if let Some(h) = home {
        if let Some(rest) = under(path, h) {
            return join("~", &rest);
        }
    }
    path.replace('\\', "/")
}

fn join(root: &str, rest: &[String]) -> String {
    if rest.is_empty() {
        root.to_owned()
    } else {
        format!("{root}/{}", rest.join("/"))
    }
}

fn components(p: &str) -> Vec<String> {
    p.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .map(str::to_owned)
        .collect()
}

/// The components of `path` below `root`, if `path` is `root` or inside it.
fn under(path: &str, root: &str) -> Option<Vec<String>> {
    let p = components(path);
    let r = components(root);
    if r.is_empty() || p.len() < r.len() {
        return None;
    }
    let windows = root.as_bytes().get(1) == Some(&b':');
    let eq = |a: &String, b: &String| {
        if windows {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    p.iter()
        .zip(&r)
        .all(|(a, b)| eq(a, b))
        .then(|| p[r.len()..].to_vec())
}

/// Answers `memory_stats`. A missing file is success with `exists: false`; a corrupt one is
/// `memory.corrupt` carrying `path` and `bytes` too.
pub fn stats(input: &StatsInput<'_>) -> Value {
    let path = display_path(input.path, input.dsh_home_env, input.home);
    let lock = input.lock_age_ms.map_or(
        Value::Null,
        |age| json!({ "held": true, "age_ms": age, "stale": age >= crate::lock::STALE_MS }),
    );
    let store = match input.text {
        None => {
            return json!({
                "ok": true, "path": path, "exists": false, "facts": 0, "bytes": 0,
                "schema_version": crate::store::SCHEMA_VERSION, "last_write": Value::Null,
                "newest_fact": Value::Null, "tags": [], "topics": [], "lock": lock,
            });
        }
        Some(text) => match Store::parse(text) {
            Ok(s) => s,
            Err(f) => return corrupt(&f, &path, input.bytes),
        },
    };
    let mut tags: BTreeMap<String, usize> = BTreeMap::new();
    let mut topics: BTreeMap<String, usize> = BTreeMap::new();
    for f in &store.facts {
        for t in &f.tags {
            *tags.entry(t.to_lowercase()).or_default() += 1;
        }
        if !f.topic.is_empty() {
            *topics.entry(f.topic.clone()).or_default() += 1;
        }
    }
    let (tag_list, more_tags) = ranked(tags, "tag");
    let (topic_list, more_topics) = ranked(topics, "topic");
    let newest = store.facts.iter().map(|f| f.timestamp.as_str()).max();
    let superseded = store
        .facts
        .iter()
        .filter(|f| f.superseded_by().is_some())
        .count();
    let mut answer = json!({
        "ok": true,
        "path": path,
        "exists": true,
        "facts": store.facts.len(),
        "bytes": input.bytes,
        "schema_version": store.schema_version.clone().unwrap_or(json!(crate::store::SCHEMA_VERSION)),
        "writable": store.check_writable().is_ok(),
        "last_write": input.modified.map(iso8601),
        "newest_fact": newest,
        "tags": tag_list,
        "more_tags": more_tags,
        "topics": topic_list,
        "more_topics": more_topics,
        "superseded": superseded,
        "lock": lock,
    });
    if input.bytes > LARGE_STORE_BYTES {
        answer["warning"] = json!(format!(
            "the store is {:.1} MiB, over {} MiB: every save rewrites the whole file and a \
             session's first recall reads and indexes all of it, so both get slow. Export it \
             (limit-break export), forget facts that no longer matter, or split it by DSH \
             home.",
            input.bytes as f64 / (1024.0 * 1024.0),
            LARGE_STORE_BYTES / (1024 * 1024)
        ));
    }
    answer
}

fn corrupt(f: &Failure, path: &str, bytes: u64) -> Value {
    let mut v = f.to_json();
    v["path"] = json!(path);
    v["bytes"] = json!(bytes);
    v
}

/// `[{ name: count }]` most used first, then by name; at most [`MAX_LISTED`], plus how many more.
fn ranked(counts: BTreeMap<String, usize>, key: &str) -> (Vec<Value>, usize) {
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let more = v.len().saturating_sub(MAX_LISTED);
    (
        v.into_iter()
            .take(MAX_LISTED)
            .map(|(k, n)| json!({ key: k, "facts": n }))
            .collect(),
        more,
    )
}
