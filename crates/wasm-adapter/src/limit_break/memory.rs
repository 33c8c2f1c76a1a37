//! The memory tools' surface: argument checks, the edits (save, forget, import) as text → text,
//! recall over a cached index, stats, the lock protocol's decisions and the people CLI's output.
//!
//! The driver (`lib/memory.js`) follows the save protocol documented on `limit-break-memory`
//! step by step; every decision in it is one of the calls below. File contents cross as bytes
//! (`Uint8Array`), so a store that is not UTF-8 is refused here as corrupt instead of being
//! silently repaired by a lossy decode in JS and then written back.

use memory::lock::{self, Decision, Liveness, LockRecord, Me, Observed, StealReason, Sweep};
use memory::stats::StatsInput;
use memory::{
    Code, Failure, ImportPolicy, Index, Store, apply_save, cli, content_key, parse_recall_args,
    parse_save_args,
};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;

/// How close to a file's mtime a read may be and still miss a later write in the same mtime tick
/// (2 s covers the coarsest common file systems). An index read within this window of the
/// file's mtime is checked again by content before it is trusted, as git treats "racily clean"
/// entries.
pub const RACY_WINDOW_MS: f64 = 2_000.0;

/// The store text of `bytes`, or `memory.corrupt` when they are not UTF-8.
fn utf8(bytes: &[u8]) -> Result<&str, Failure> {
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(
            Code::Corrupt,
            format!(
                "the memory store is not UTF-8 text (invalid byte at offset {}). The file was \
                 left exactly as it is; fix it by hand (or move it aside) and saves will work \
                 again.",
                e.valid_up_to()
            ),
        )
    })
}

/// The tool arguments (JSON text from the shim) as a value; text that is not JSON is `null`
/// for the rules to reject.
fn args_value(args_json: &str) -> Value {
    serde_json::from_str(args_json).unwrap_or(Value::Null)
}

/// Checks `memory_save` arguments before the driver takes the lock: the failure's JSON, or
/// `undefined` when they are valid.
#[wasm_bindgen(js_name = checkSaveArgs)]
pub fn check_save_args(args_json: &str) -> Option<String> {
    parse_save_args(&args_value(args_json))
        .err()
        .map(|f| f.to_json().to_string())
}

/// Checks `memory_recall` arguments before the driver reads the store.
#[wasm_bindgen(js_name = checkRecallArgs)]
pub fn check_recall_args(args_json: &str) -> Option<String> {
    parse_recall_args(&args_value(args_json))
        .err()
        .map(|f| f.to_json().to_string())
}

/// `memory.read_failed` for an I/O error while reading the store, as JSON.
#[wasm_bindgen(js_name = memoryReadFailed)]
pub fn read_failed(detail: &str) -> String {
    Failure::read_failed(detail).to_json().to_string()
}

/// `memory.write_failed` for an I/O error while writing the store, as JSON.
#[wasm_bindgen(js_name = memoryWriteFailed)]
pub fn write_failed(detail: &str) -> String {
    Failure::write_failed(detail).to_json().to_string()
}

/// The result of an edit or a CLI read: the text to write (or print) when it succeeded, and the
/// answer as JSON either way.
#[wasm_bindgen(js_name = LimitBreakEdit)]
pub struct Edit {
    text: Option<String>,
    answer: String,
}

#[wasm_bindgen(js_class = LimitBreakEdit)]
impl Edit {
    /// Whether there is text to write (or print).
    #[wasm_bindgen(getter)]
    pub fn ok(&self) -> bool {
        self.text.is_some()
    }

    /// The new store text (or the CLI's output); `undefined` on failure.
    #[wasm_bindgen(getter)]
    pub fn text(&self) -> Option<String> {
        self.text.clone()
    }

    /// The answer, as JSON text: `{ ok: true, … }` or `{ ok: false, code, message }`.
    #[wasm_bindgen(getter)]
    pub fn answer(&self) -> String {
        self.answer.clone()
    }
}

impl Edit {
    fn done(text: String, answer: Value) -> Edit {
        Edit {
            text: Some(text),
            answer: answer.to_string(),
        }
    }

    fn failed(failure: &Failure) -> Edit {
        Edit {
            text: None,
            answer: failure.to_json().to_string(),
        }
    }

    /// The answer as a value (tests).
    pub fn answer_value(&self) -> Value {
        serde_json::from_str(&self.answer).unwrap_or(Value::Null)
    }

    /// The text, if any (tests).
    pub fn text_ref(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

fn current_text(current: Option<&[u8]>) -> Result<Option<&str>, Failure> {
    current.map(utf8).transpose()
}

/// `memory_save` under the lock: the current store's bytes (`undefined`: no file) and the time
/// → the new text and the answer, or the refusal (invalid arguments, corrupt store, another
/// schema version).
#[wasm_bindgen(js_name = applySave)]
pub fn save(args_json: &str, current: Option<Vec<u8>>, now_ms: f64) -> Edit {
    let run = || -> Result<Edit, Failure> {
        let args = parse_save_args(&args_value(args_json))?;
        let saved = apply_save(current_text(current.as_deref())?, &args, unix_ms(now_ms))?;
        let answer = saved.answer();
        Ok(Edit::done(saved.text, answer))
    };
    run().unwrap_or_else(|f| Edit::failed(&f))
}

/// People CLI `forget <id>` under the lock.
#[wasm_bindgen(js_name = forgetFact)]
pub fn forget(current: Option<Vec<u8>>, id: &str) -> Edit {
    let run = || -> Result<Edit, Failure> {
        let gone = cli::forget(current_text(current.as_deref())?, id)?;
        let answer = json!({
            "ok": true, "id": id.trim(), "removed": gone.removed, "facts": gone.count,
        });
        Ok(Edit::done(gone.text, answer))
    };
    run().unwrap_or_else(|f| Edit::failed(&f))
}

/// People CLI `import FILE [--policy newer|overwrite|keep]` under the lock.
#[wasm_bindgen(js_name = importFacts)]
pub fn import(current: Option<Vec<u8>>, incoming: &[u8], policy: &str) -> Edit {
    let run = || -> Result<Edit, Failure> {
        let policy = match policy {
            "newer" => ImportPolicy::NewerWins,
            "overwrite" => ImportPolicy::Overwrite,
            "keep" => ImportPolicy::KeepExisting,
            other => {
                return Err(Failure::new(
                    Code::Invalid,
                    format!(
                        "--policy must be newer, overwrite or keep (got {})",
                        Value::from(other)
                    ),
                ));
            }
        };
        let incoming = utf8(incoming)
            .map_err(|_| Failure::new(Code::Invalid, "the file to import is not UTF-8 text"))?;
        let imported = cli::import(current_text(current.as_deref())?, incoming, policy)?;
        let answer = imported.answer();
        Ok(Edit::done(imported.text, answer))
    };
    run().unwrap_or_else(|f| Edit::failed(&f))
}

/// People CLI `list`: the lines to print.
#[wasm_bindgen(js_name = listFacts)]
pub fn list(current: Option<Vec<u8>>) -> Edit {
    cli_read(current, cli::list)
}

/// People CLI `show <id>`: the fact as indented JSON.
#[wasm_bindgen(js_name = showFact)]
pub fn show(current: Option<Vec<u8>>, id: &str) -> Edit {
    cli_read(current, |text| cli::show(text, id))
}

/// People CLI `export`: the whole store in its canonical form.
#[wasm_bindgen(js_name = exportFacts)]
pub fn export(current: Option<Vec<u8>>) -> Edit {
    cli_read(current, cli::export)
}

fn cli_read(
    current: Option<Vec<u8>>,
    read: impl FnOnce(Option<&str>) -> Result<String, Failure>,
) -> Edit {
    match current_text(current.as_deref()).and_then(read) {
        Ok(out) => Edit::done(out, json!({ "ok": true })),
        Err(f) => Edit::failed(&f),
    }
}

/// `memory_stats`, from the driver's findings (what `Plugin::memory_stats` answers).
pub fn stats(
    path: &str,
    env: Option<&str>,
    os_home: Option<&str>,
    bytes: Option<&[u8]>,
    size: f64,
    mtime_ms: Option<f64>,
    lock_age_ms: Option<f64>,
) -> String {
    let text = match bytes.map(utf8).transpose() {
        Ok(text) => text,
        Err(failure) => {
            let mut v = failure.to_json();
            v["path"] = json!(memory::stats::display_path(path, env, os_home));
            v["bytes"] = json!(unix_ms(size));
            return v.to_string();
        }
    };
    memory::stats::stats(&StatsInput {
        path,
        dsh_home_env: env,
        home: os_home,
        text,
        bytes: unix_ms(size),
        modified: mtime_ms.map(unix_ms),
        lock_age_ms: lock_age_ms.map(unix_ms),
    })
    .to_string()
}

/// A non-negative, finite JS number as whole milliseconds (or bytes); anything else is 0.
fn unix_ms(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// What identifies the version of the store file an index was built from.
#[derive(Clone, Copy, Debug, PartialEq)]
struct FileKey {
    mtime_ms: f64,
    size: f64,
    ino: f64,
}

struct Cached {
    /// `None`: built for a missing file.
    key: Option<FileKey>,
    /// [`content_key`] of the text the index was built from.
    content: u64,
    /// When the driver last confirmed the file matched (its clock, Unix milliseconds).
    checked_at: f64,
    index: Index,
}

/// `memory_recall`'s index, cached across calls and keyed by the store file's mtime, size and
/// inode, with the content as the tie-breaker a same-size rewrite within one mtime tick needs.
///
/// The driver's loop: `stat(store)`; `ENOENT` → [`Memory::load_missing`]; else unless
/// [`Memory::is_fresh`] read the bytes and [`Memory::load`] (a failure is the answer); then
/// [`Memory::recall`]. After its own save it calls [`Memory::invalidate`].
#[wasm_bindgen(js_name = LimitBreakMemory)]
#[derive(Default)]
pub struct Memory {
    cache: Option<Cached>,
}

#[wasm_bindgen(js_class = LimitBreakMemory)]
impl Memory {
    /// An empty cache.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Whether the cached index was built from the file with this mtime, size and inode, and
    /// was confirmed long enough after its mtime that a later write must have changed the key.
    #[wasm_bindgen(js_name = isFresh)]
    pub fn is_fresh(&self, mtime_ms: f64, size: f64, ino: f64) -> bool {
        let key = FileKey {
            mtime_ms,
            size,
            ino,
        };
        self.cache
            .as_ref()
            .is_some_and(|c| c.key == Some(key) && c.checked_at - mtime_ms > RACY_WINDOW_MS)
    }

    /// Loads the store's bytes read at `now_ms` (the driver's clock, the one mtimes use): keeps
    /// the cached index when the content is the same, else parses and indexes it. Returns the
    /// failure's JSON (`memory.corrupt`) or `undefined`.
    pub fn load(
        &mut self,
        bytes: &[u8],
        mtime_ms: f64,
        size: f64,
        ino: f64,
        now_ms: f64,
    ) -> Option<String> {
        let key = Some(FileKey {
            mtime_ms,
            size,
            ino,
        });
        let text = match utf8(bytes) {
            Ok(text) => text,
            Err(f) => {
                self.cache = None;
                return Some(f.to_json().to_string());
            }
        };
        let content = content_key(text);
        if let Some(cached) = self.cache.as_mut().filter(|c| c.content == content) {
            cached.key = key;
            cached.checked_at = now_ms;
            return None;
        }
        match Store::parse(text) {
            Ok(store) => {
                self.cache = Some(Cached {
                    key,
                    content,
                    checked_at: now_ms,
                    index: Index::build(store),
                });
                None
            }
            Err(f) => {
                self.cache = None;
                Some(f.to_json().to_string())
            }
        }
    }

    /// The store file does not exist: recall answers from an empty store.
    #[wasm_bindgen(js_name = loadMissing)]
    pub fn load_missing(&mut self) {
        if self.cache.as_ref().is_some_and(|c| c.key.is_none()) {
            return;
        }
        self.cache = Some(Cached {
            key: None,
            content: content_key(""),
            checked_at: 0.0,
            index: Index::build(Store::empty()),
        });
    }

    /// Drops the cached index (after this process wrote the store).
    pub fn invalidate(&mut self) {
        self.cache = None;
    }

    /// Answers `memory_recall` from the loaded index, as JSON text.
    pub fn recall(&self, args_json: &str) -> String {
        let args = match parse_recall_args(&args_value(args_json)) {
            Ok(args) => args,
            Err(f) => return f.to_json().to_string(),
        };
        match &self.cache {
            Some(cached) => cached.index.recall(&args).to_string(),
            None => Index::build(Store::empty()).recall(&args).to_string(),
        }
    }

    /// Facts in the loaded index (tests, diagnostics).
    #[wasm_bindgen(getter)]
    pub fn facts(&self) -> usize {
        self.cache
            .as_ref()
            .map_or(0, |c| c.index.store().facts.len())
    }
}

/// One writer's side of the store lock: its owner token, pid and host, and the protocol's
/// decisions for it (see "The save protocol" on `limit-break-memory`).
#[wasm_bindgen(js_name = LimitBreakLock)]
pub struct StoreLock {
    token: String,
    pid: u32,
    host: String,
}

#[wasm_bindgen(js_class = LimitBreakLock)]
impl StoreLock {
    /// A writer with a fresh random `token` (`crypto.randomUUID()`), `process.pid` and
    /// `os.hostname()`.
    #[wasm_bindgen(constructor)]
    pub fn new(token: String, pid: u32, host: String) -> StoreLock {
        StoreLock { token, pid, host }
    }

    fn me(&self) -> Me<'_> {
        Me {
            token: &self.token,
            pid: self.pid,
            host: &self.host,
        }
    }

    /// What to write into a freshly created lock file at `now_ms`.
    #[wasm_bindgen(js_name = recordText)]
    pub fn record_text(&self, now_ms: f64) -> String {
        LockRecord {
            token: self.token.clone(),
            pid: self.pid,
            host: self.host.clone(),
            created: unix_ms(now_ms),
        }
        .to_text()
    }

    /// The pid to probe with `process.kill(pid, 0)` before [`StoreLock::decide`], if any.
    #[wasm_bindgen(js_name = pidToProbe)]
    pub fn pid_to_probe(&self, lock_text: &str) -> Option<u32> {
        lock::pid_to_probe(lock_text, &self.me())
    }

    /// What to do about an existing lock, as JSON: `{"kind":"wait","ms"}`,
    /// `{"kind":"steal","reason":"stale"|"holder_dead"}` or `{"kind":"give_up","answer":{…}}`.
    /// `holder` is `alive`, `dead` or `unknown` (not probed); `waited_ms` is the time since the
    /// first attempt on a monotonic clock; `jitter` is `Math.random()`.
    pub fn decide(
        &self,
        lock_text: &str,
        age_ms: f64,
        holder: &str,
        waited_ms: f64,
        attempt: u32,
        jitter: f64,
    ) -> String {
        let observed = observed(lock_text, age_ms, holder);
        decision_json(lock::decide(
            &observed,
            &self.me(),
            unix_ms(waited_ms),
            attempt,
            jitter,
        ))
    }

    /// What to do about an existing take-over mutex (its text, age and holder as for
    /// [`StoreLock::decide`]), as the same JSON: `wait`, `steal` (it is abandoned: remove it the
    /// checked way) or `give_up`.
    #[wasm_bindgen(js_name = decideTakeover)]
    pub fn decide_takeover(
        &self,
        mutex_text: &str,
        age_ms: f64,
        holder: &str,
        waited_ms: f64,
        attempt: u32,
        jitter: f64,
    ) -> String {
        let observed = observed(mutex_text, age_ms, holder);
        decision_json(lock::decide_takeover(
            &observed,
            &self.me(),
            unix_ms(waited_ms),
            attempt,
            jitter,
        ))
    }

    /// Under the take-over mutex: whether the lock read just now (text, age, holder) is still the
    /// one judged abandoned (`judged_text`) and still abandoned, so it may be removed.
    #[wasm_bindgen(js_name = stillAbandoned)]
    pub fn still_abandoned(
        &self,
        judged_text: &str,
        lock_text: &str,
        age_ms: f64,
        holder: &str,
    ) -> bool {
        lock::still_abandoned(
            judged_text,
            &observed(lock_text, age_ms, holder),
            &self.me(),
        )
    }

    /// Before removing an abandoned take-over mutex: whether the mutex read again just now
    /// (text, age, holder) is still the one judged abandoned and still abandoned.
    #[wasm_bindgen(js_name = takeoverStillAbandoned)]
    pub fn takeover_still_abandoned(
        &self,
        judged_text: &str,
        mutex_text: &str,
        age_ms: f64,
        holder: &str,
    ) -> bool {
        lock::takeover_still_abandoned(
            judged_text,
            &observed(mutex_text, age_ms, holder),
            &self.me(),
        )
    }

    /// What the post-commit sweep does with the directory entry `name` whose mtime is `age_ms`
    /// old: `"keep"`, `"unlink"` or `"remove_mutex"`.
    pub fn sweep(name: &str, age_ms: f64) -> String {
        match lock::sweep(name, unix_ms(age_ms)) {
            Sweep::Keep => "keep",
            Sweep::Unlink => "unlink",
            Sweep::RemoveMutex => "remove_mutex",
        }
        .to_owned()
    }

    /// Whether the lock text just read is this writer's.
    pub fn owns(&self, lock_text: &str) -> bool {
        lock::owns(lock_text, &self.token)
    }

    /// Whether a lock renamed aside during a take-over is the one that was judged.
    #[wasm_bindgen(js_name = sameLock)]
    pub fn same_lock(renamed_text: &str, judged_text: &str) -> bool {
        lock::same_lock(renamed_text, judged_text)
    }

    /// The file name a take-over renames the lock to.
    #[wasm_bindgen(getter, js_name = stealName)]
    pub fn steal_name(&self) -> String {
        lock::steal_name(&self.token)
    }

    /// The file name a release renames the lock to.
    #[wasm_bindgen(getter, js_name = releaseName)]
    pub fn release_name(&self) -> String {
        lock::release_name(&self.token)
    }

    /// The temp file a write goes through.
    #[wasm_bindgen(getter, js_name = tempName)]
    pub fn temp_name(&self) -> String {
        lock::temp_name(&self.token)
    }

    /// The answer when this writer's lock was taken over before it committed, as JSON.
    #[wasm_bindgen(js_name = lockLost)]
    pub fn lock_lost(&self) -> String {
        lock::lock_lost().to_json().to_string()
    }
}

/// A lock or take-over mutex as the driver observed it; `holder` is `alive`, `dead` or anything
/// else for unknown.
fn observed<'a>(text: &'a str, age_ms: f64, holder: &str) -> Observed<'a> {
    Observed {
        text,
        age_ms: unix_ms(age_ms),
        holder: match holder {
            "alive" => Liveness::Alive,
            "dead" => Liveness::Dead,
            _ => Liveness::Unknown,
        },
    }
}

/// A lock decision as the JSON the driver switches on.
fn decision_json(decision: Decision) -> String {
    match decision {
        Decision::Wait { ms } => json!({ "kind": "wait", "ms": ms }),
        Decision::Steal(reason) => json!({
            "kind": "steal",
            "reason": match reason {
                StealReason::Stale => "stale",
                StealReason::HolderDead => "holder_dead",
            },
        }),
        Decision::GiveUp(f) => json!({ "kind": "give_up", "answer": f.to_json() }),
    }
    .to_string()
}

/// The store layout under the DSH home, as JSON: `{ "dir", "store", "lock", "takeover" }`
/// (names).
#[wasm_bindgen(js_name = memoryLayout)]
pub fn layout() -> String {
    json!({
        "dir": lock::STORE_DIR,
        "store": lock::STORE_FILE,
        "lock": lock::LOCK_FILE,
        "takeover": lock::TAKEOVER_FILE,
    })
    .to_string()
}

#[cfg(test)]
mod tests;
