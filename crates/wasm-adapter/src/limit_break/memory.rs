//! The memory tools' binding: argument checks, the edits (save, forget, import) as bytes → text,
//! recall over `limit-break-memory`'s cached index, stats, the lock protocol's decisions and the
//! people CLI's output, each one call into the core with its answer as JSON text.
//!
//! The driver (`lib/memory.js`) follows the save protocol documented on `limit-break-memory`
//! step by step; every decision in it is one of the calls below. File contents cross as bytes
//! (`Uint8Array`), so a store that is not UTF-8 is refused by the core as corrupt instead of
//! being silently repaired by a lossy decode in JS and then written back.

use crate::millis;
use memory::driver::{self, Reply};
use memory::{Failure, FileKey, Found, IndexCache, parse_recall_args, parse_save_args};
use memory::{lock, save};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// The tool arguments (JSON text from the shim) as a value; text that is not JSON is `null`
/// for the rules to reject.
fn args_value(args_json: &str) -> Value {
    serde_json::from_str(args_json).unwrap_or(Value::Null)
}

/// Checks `memory_save` arguments before the driver takes the lock: the failure's JSON, or
/// `undefined` when they are valid.
#[wasm_bindgen(js_name = checkSaveArgs)]
pub fn check_save_args(args_json: &str) -> Option<String> {
    failure_json(parse_save_args(&args_value(args_json)))
}

/// Checks `memory_recall` arguments before the driver reads the store.
#[wasm_bindgen(js_name = checkRecallArgs)]
pub fn check_recall_args(args_json: &str) -> Option<String> {
    failure_json(parse_recall_args(&args_value(args_json)))
}

/// The failure's JSON, or `undefined` when there is none.
fn failure_json<T>(result: Result<T, Failure>) -> Option<String> {
    result.err().map(|f| f.to_json().to_string())
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

    /// The new store text (or the CLI's output) as UTF-8 bytes; `undefined` on failure.
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> Option<Vec<u8>> {
        self.text.as_ref().map(|text| text.as_bytes().to_vec())
    }

    /// Where the new store text lies in WebAssembly memory, `[pointer, length]` (`undefined` on
    /// failure), for writing it without a copy (see [`span`]).
    pub fn span(&self) -> Option<Vec<u32>> {
        self.text.as_deref().map(span)
    }

    /// The answer, as JSON text: `{ ok: true, … }` or `{ ok: false, code, message }`.
    #[wasm_bindgen(getter)]
    pub fn answer(&self) -> String {
        self.answer.clone()
    }
}

impl Edit {
    fn of(result: Result<Reply, Failure>) -> Edit {
        match result {
            Ok(reply) => Edit {
                text: Some(reply.text),
                answer: reply.answer.to_string(),
            },
            Err(failure) => Edit {
                text: None,
                answer: failure.to_json().to_string(),
            },
        }
    }
}

/// `[pointer, length]` of `text` in WebAssembly memory. The driver writes the store from
/// `new Uint8Array(wasmMemory().buffer, pointer, length)` instead of a 6.4 MB copy (two, with
/// the JavaScript side's); the rule that makes this safe: the view is made and used before any
/// other call into the core (one synchronous write), since a call may free the text or grow
/// the memory, which detaches the view.
fn span(text: &str) -> Vec<u32> {
    vec![text.as_ptr() as u32, text.len() as u32]
}

/// The WebAssembly memory (`WebAssembly.Memory`), whose `buffer` a [`span`] points into.
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// `memory_save` under the lock: the current store's bytes (`undefined`: no file), the time
/// and the repository root of the agent's working directory (`undefined`: none) → the new text
/// and the answer, or the refusal (invalid arguments, corrupt store, another schema version).
#[wasm_bindgen(js_name = applySave)]
pub fn save(
    args_json: &str,
    current: Option<Vec<u8>>,
    now_ms: f64,
    project: Option<String>,
) -> Edit {
    Edit::of(driver::save(
        &args_value(args_json),
        current.as_deref(),
        millis(now_ms),
        project.as_deref(),
    ))
}

/// People CLI `forget <id>` under the lock.
#[wasm_bindgen(js_name = forgetFact)]
pub fn forget(current: Option<Vec<u8>>, id: &str) -> Edit {
    Edit::of(driver::forget(current.as_deref(), id))
}

/// People CLI `import FILE [--policy newer|overwrite|keep]` under the lock.
#[wasm_bindgen(js_name = importFacts)]
pub fn import(current: Option<Vec<u8>>, incoming: &[u8], policy: &str) -> Edit {
    Edit::of(driver::import(current.as_deref(), incoming, policy))
}

/// People CLI `list`: the lines to print.
#[wasm_bindgen(js_name = listFacts)]
pub fn list(current: Option<Vec<u8>>) -> Edit {
    Edit::of(driver::list(current.as_deref()))
}

/// People CLI `show <id>`: the fact as indented JSON.
#[wasm_bindgen(js_name = showFact)]
pub fn show(current: Option<Vec<u8>>, id: &str) -> Edit {
    Edit::of(driver::show(current.as_deref(), id))
}

/// People CLI `recall QUERY`: the lines to print for a `memory_recall` success answer (JSON).
#[wasm_bindgen(js_name = recallLines)]
pub fn recall_lines(answer_json: &str) -> String {
    memory::cli::recall_lines(&serde_json::from_str(answer_json).unwrap_or_default())
}

/// People CLI `export`: the whole store in its canonical form.
#[wasm_bindgen(js_name = exportFacts)]
pub fn export(current: Option<Vec<u8>>) -> Edit {
    Edit::of(driver::export(current.as_deref()))
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
    driver::stats(
        path,
        env,
        os_home,
        bytes,
        millis(size),
        mtime_ms.map(millis),
        lock_age_ms.map(millis),
    )
    .to_string()
}

/// `memory_recall`'s index cache and `memory_save`'s cached store ([`IndexCache`], whose docs
/// give the driver's loops).
#[wasm_bindgen(js_name = LimitBreakMemory)]
#[derive(Default)]
pub struct Memory {
    cache: IndexCache,
}

#[wasm_bindgen(js_class = LimitBreakMemory)]
impl Memory {
    /// An empty cache.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Whether the cached index was built from the file with this `[mtimeMs, size, ino,
    /// ctimeMs]`, and was confirmed long enough after its mtime that a later write must have
    /// changed the key, or is the file this process holds ([`IndexCache::is_fresh`]).
    #[wasm_bindgen(js_name = isFresh)]
    pub fn is_fresh(&self, key: &[f64]) -> bool {
        self.cache.is_fresh(FileKey::of_stat(key))
    }

    /// Loads the store's bytes read at `now_ms` (the driver's clock, the one mtimes use): keeps
    /// the cached index when the content is the same, else parses and indexes it. Returns the
    /// failure's JSON (`memory.corrupt`) or `undefined`.
    pub fn load(&mut self, bytes: &[u8], key: &[f64], now_ms: f64) -> Option<String> {
        failure_json(self.cache.load(bytes, FileKey::of_stat(key), now_ms))
    }

    /// The store file does not exist: recall answers from an empty store.
    #[wasm_bindgen(js_name = loadMissing)]
    pub fn load_missing(&mut self) {
        self.cache.load_missing();
    }

    /// `memory_save` under the lock ([`IndexCache::save`]): `stat` is `[mtimeMs, size, ino,
    /// ctimeMs, readAt]` (`undefined`: no file), `bytes` unless [`Memory::is_fresh`] said not to
    /// read.
    /// The answer, as JSON text; when [`Memory::saved`], the text to write is at
    /// [`Memory::saved_span`] until [`Memory::committed`].
    pub fn save(
        &mut self,
        args_json: &str,
        stat: Option<Vec<f64>>,
        bytes: Option<Vec<u8>>,
        now_ms: f64,
        project: Option<String>,
    ) -> String {
        let found = Found::of(stat.as_deref(), bytes.as_deref());
        let args = args_value(args_json);
        self.cache
            .save(&args, found, millis(now_ms), project.as_deref())
            .unwrap_or_else(|f| f.to_json())
            .to_string()
    }

    /// Whether a save's text is waiting to be written ([`IndexCache::pending_text`]).
    #[wasm_bindgen(getter)]
    pub fn saved(&self) -> bool {
        self.cache.pending_text().is_some()
    }

    /// Where that text lies in WebAssembly memory, `[pointer, length]` (`undefined`: nothing
    /// to write), under the rule of [`span`].
    #[wasm_bindgen(js_name = savedSpan)]
    pub fn saved_span(&self) -> Option<Vec<u32>> {
        self.cache.pending_text().map(span)
    }

    /// How the save's write ended: its text is now the store file with this `[mtimeMs, size,
    /// ino, ctimeMs]` as of `now_ms`, or (`undefined`) it was not written; `held`: the driver keeps the
    /// file open until [`Memory::holds`] is false ([`IndexCache::committed`]).
    pub fn committed(&mut self, key: Option<Vec<f64>>, now_ms: f64, held: bool) {
        self.cache
            .committed(key.as_deref().map(FileKey::of_stat), now_ms, held);
    }

    /// Whether the cache relies on the driver holding the committed file open; once false, the
    /// driver closes it.
    #[wasm_bindgen(getter)]
    pub fn holds(&self) -> bool {
        self.cache.holds()
    }

    /// Answers `memory_recall` from the loaded index for an agent working in the repository
    /// `project` (`undefined`: none), as JSON text.
    pub fn recall(&self, args_json: &str, project: Option<String>) -> String {
        self.cache
            .recall(&args_value(args_json), project.as_deref())
            .to_string()
    }

    /// The session-start brief of the loaded store for `project`, at most `max_chars`
    /// characters; `""` when there is nothing to show.
    pub fn brief(&self, project: Option<String>, max_chars: u32) -> String {
        self.cache.brief(project.as_deref(), max_chars as usize)
    }

    /// Facts in the loaded index (tests, diagnostics).
    #[wasm_bindgen(getter)]
    pub fn facts(&self) -> usize {
        self.cache.facts()
    }
}
/// One read-modify-write of the store under its lock: `limit-break-memory`'s sans-I/O
/// [`save::Save`] made drivable from JavaScript. `lib/memory.js` loops: `poll()` gives the
/// outstanding step as JSON (the table on [`save`]), it performs exactly that step and answers
/// with `handle(stepId, inputJson, wall, mono)` (`Date.now()`, `performance.now()`) until the
/// step is `done`. A malformed input, an input for another step or one after the end throws.
#[wasm_bindgen(js_name = LimitBreakSave)]
pub struct StoreSave(save::Save);

#[wasm_bindgen(js_class = LimitBreakSave)]
impl StoreSave {
    /// A save in the store directory `dir` (`sep`: `path.sep`, `windows`: the platform) by the
    /// writer `token` (`crypto.randomUUID()`), `pid` and `host`; `seed` is random bits for the
    /// backoff's jitter.
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dir: String,
        sep: String,
        windows: bool,
        token: String,
        pid: u32,
        host: String,
        seed: f64,
        wall: f64,
        mono: f64,
    ) -> StoreSave {
        let place = save::Place { dir, sep, windows };
        let writer = save::Writer { token, pid, host };
        StoreSave(save::Save::new(
            place,
            writer,
            seed as u64,
            save::Now { wall, mono },
        ))
    }

    /// The outstanding step, as JSON.
    pub fn poll(&self) -> String {
        serde_json::to_string(self.0.poll()).unwrap_or_default()
    }

    /// Answers the outstanding step `step_id` with `input_json` at `wall` and `mono`.
    pub fn handle(
        &mut self,
        step_id: f64,
        input_json: &str,
        wall: f64,
        mono: f64,
    ) -> Result<(), JsError> {
        let input = serde_json::from_str(input_json)
            .map_err(|e| JsError::new(&format!("malformed input: {e}")))?;
        self.0
            .handle(
                save::StepId(step_id as u64),
                input,
                save::Now { wall, mono },
            )
            .map_err(|e| JsError::new(&e.to_string()))
    }
}

/// How many bytes from the end of a store file of `bytes` bytes the brief reads; `undefined`
/// when it reads the whole file ([`memory::brief::tail_read`]).
#[wasm_bindgen(js_name = memoryBriefTailRead)]
pub fn brief_tail_read(bytes: f64) -> Option<f64> {
    memory::brief::tail_read(bytes as u64).map(|n| n as f64)
}

/// The brief of a store file of `bytes` bytes from its last bytes `tail`
/// ([`memory::brief::of_tail`]).
#[wasm_bindgen(js_name = memoryBriefOfTail)]
pub fn brief_of_tail(tail: &[u8], bytes: f64, project: Option<String>, max_chars: u32) -> String {
    memory::brief::of_tail(tail, bytes as u64, project.as_deref(), max_chars as usize)
}

/// The store layout under the DSH home, as JSON: `{ "dir", "store", "lock", "takeover" }`
/// (names).
#[wasm_bindgen(js_name = memoryLayout)]
pub fn layout() -> String {
    lock::layout_json().to_string()
}

#[cfg(test)]
mod tests;
