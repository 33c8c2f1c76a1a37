//! The pure core of dsh-limit-break's durable fact memory: the tools `memory_save`,
//! `memory_recall` and `memory_stats`, and the people CLI (list, show, forget, export, import).
//!
//! # Bird's-eye view
//!
//! Inputs are text and numbers the driver hands over: the tool arguments (a JSON value), the
//! store file's text (`None` when it does not exist), its size and mtime, the time now in Unix
//! milliseconds, `DSH_HOME` and `HOME`, and the lock file's content and age. Outputs are values:
//! the new store text to write, the JSON answer to return, or a lock [`lock::Decision`].
//!
//! **Architecture invariant:** this crate performs no I/O. No `std::fs`, no clock, no randomness,
//! no threads, no environment; it knows nothing of WASM, JavaScript or DSH. It builds for
//! `wasm32-unknown-unknown`, and the same functions serve a native driver or a test.
//!
//! **Architecture invariant:** a corrupt store is never overwritten. Every write path parses the
//! current text first and refuses with `memory.corrupt` (or `memory.unsupported_version`).
//!
//! **API boundary:** the tool answers ([`Failure::to_json`], [`Saved::answer`],
//! [`Index::recall`], [`stats::stats`]) are the JSON the model sees; the store format is the
//! user's (see [`store`]); the lock protocol below is the contract with every other writer.
//!
//! # Entry points
//!
//! - `memory_save`: [`parse_save_args`] then, under the lock, [`apply_save`] → [`Saved`] (the
//!   text to write and the answer).
//! - `memory_recall`: [`parse_recall_args`], then [`Index::build`] from [`Store::parse`] (cached
//!   by the driver, see below) and [`Index::recall`]; or [`recall::recall_text`] in one step.
//! - `memory_stats`: [`stats::stats`].
//! - People CLI: [`cli::list`], [`cli::show`], [`cli::forget`], [`cli::export`], [`cli::import`].
//! - Every failure: [`Failure`] → `{ ok: false, code, message }` via [`Failure::to_json`].
//!
//! # Code map
//!
//! - [`store`]: the file format; lenient reading, faithful writing (unknown keys kept).
//! - [`args`]: argument validation with field/rule/value messages and did-you-mean.
//! - `edit`: save, forget, import as text → text.
//! - `text`, `concepts`: tokenizing (Unicode, CJK bigrams, Snowball English stemming, id
//!   splitting) and the concept table.
//! - [`index`]: BM25F ranking with prefix fallback, phrase and id bonuses.
//! - [`recall`]: recall answers bounded to [`recall::MAX_ANSWER_BYTES`].
//! - [`lock`]: the lock protocol's decisions. [`stats`]: `memory_stats`. [`time`]: ISO-8601.
//! - [`eval`]: hit@1 / hit@3 / MRR over the labelled set in `recall/`.
//!
//! # The save protocol (driver, step by step)
//!
//! Paths: `dir = $DSH_HOME/memory` ([`lock::STORE_DIR`]), `store = dir/facts.json`,
//! `lock = dir/.facts.lock` ([`lock::LOCK_FILE`]). `token` is a fresh random string per save
//! (`crypto.randomUUID()`), `me = Me { token, pid: process.pid, host: os.hostname() }`.
//!
//! 1. `args = parse_save_args(&value)`; on `Err(f)` answer `f.to_json()`. Create `dir`
//!    (recursive) if missing.
//! 2. **Acquire.** `start = now`; `attempt = 0`. Loop:
//!    1. `open(lock, O_CREAT | O_EXCL | O_WRONLY, 0o644)` (Node flag `"wx"`). On success write
//!       `LockRecord { token, pid, host, created: now }.to_text()`, `fsync`, close: go to 3.
//!    2. On `EEXIST` (on Windows also `EPERM` when `lstat(lock)` shows it exists): read the
//!       lock's text and `mtime`; if it vanished (`ENOENT`) retry 2.1 at once.
//!       `age_ms = max(0, now − mtime)`. If [`lock::pid_to_probe`] gives a pid, probe it with
//!       `process.kill(pid, 0)` (`ESRCH` → `Dead`, else `Alive`), otherwise `Unknown`.
//!    3. `match lock::decide(&Observed { text, age_ms, holder }, &me, now − start, attempt,
//!       Math.random())`:
//!       - `Wait { ms }`: sleep `ms`, `attempt += 1`, continue.
//!       - `GiveUp(f)`: answer `f.to_json()` (`memory.locked`). Nothing was written.
//!       - `Steal(_)`: first read `lock` once more; if it is gone (`ENOENT`) or no longer
//!         [`lock::same_lock`] as the judged `text`, another writer already took it over:
//!         continue without touching it (several writers judging one stale lock at the same
//!         moment would otherwise move the winner's fresh lock aside, and that winner would fail
//!         its commit check). Then `rename(lock, dir/steal_name(token))`; on `ENOENT` continue. Read the
//!         renamed file: if [`lock::same_lock`]`(renamed, text)` unlink it and continue (retry
//!         2.1 at once). Otherwise a fresh lock was moved by mistake: put it back with
//!         `link(renamed, lock)` (never `rename`, which could clobber a newer lock; `EEXIST`
//!         means a third writer already holds a lock, and the displaced owner will fail its
//!         commit check in step 5), unlink the renamed name, continue.
//! 3. **Read and apply.** Read `store` (`ENOENT` → `None`; another error → release and answer
//!    [`Failure::read_failed`]). `apply_save(text, &args, now)`; on `Err(f)` release and answer.
//! 4. **Write.** Create `dir/temp_name(token)` with `"wx"`, write `saved.text`, `fsync`, close.
//! 5. **Commit check.** Read `lock`; unless [`lock::owns`]`(text, token)` our lock was taken
//!    over (we paused past [`lock::STALE_MS`], or a concurrent take-over of a stale lock moved
//!    ours aside): unlink the temp file and answer
//!    [`lock::lock_lost`]. (The remaining window is the few microseconds between this read and
//!    the rename.)
//! 6. **Commit.** `rename(temp, store)` (on Windows retry `EPERM`/`EACCES`/`EBUSY` with the same
//!    backoff for up to 1 s); then `fsync` the directory (open `dir` read-only and `fsync`;
//!    ignore the error on platforms that refuse). On failure unlink the temp file, release, and
//!    answer [`Failure::write_failed`].
//! 7. **Release** (always, in a `finally`): `rename(lock, dir/release_name(token))`; read it; if
//!    `owns(text, token)` unlink it, else put it back with `link` as in 2.3 and unlink the
//!    renamed name. A missing lock (`ENOENT`) is fine.
//! 8. Answer `saved.answer()`. Drop (or rebuild from `saved.text`) the cached index.
//!
//! The numbers: wait at most [`lock::WAIT_MS`] (8 s); take over a lock at least
//! [`lock::STALE_MS`] (15 s) old, or at once when its holder is provably dead; back off 20 ms
//! doubling to 200 ms with ±25 % jitter. Readers (`recall`, `stats`) take no lock: the rename in
//! step 6 is atomic, so they see the old or the new file, never half of one.
//!
//! # The recall cache
//!
//! `stat(store)`: `ENOENT` → answer from an empty index. Otherwise key the cached [`Index`] by
//! `(mtimeMs, size, ino)`; on a miss read the text, `Store::parse` (a `memory.corrupt` failure is
//! the answer) and `Index::build`. A driver that wants to be safe against same-size rewrites
//! within one mtime tick may key by [`content_key`] of the text instead (a read, but no parse and
//! no indexing). After its own save the driver replaces the cached index.

pub mod args;
pub mod cli;
mod concepts;
mod edit;
pub mod eval;
mod failure;
pub mod index;
pub mod lock;
pub mod recall;
pub mod stats;
pub mod store;
mod text;
pub mod time;

pub use args::{RecallArgs, SaveArgs, parse_recall_args, parse_save_args};
pub use edit::{Forgotten, ImportPolicy, Imported, Saved, SkipReason, apply_save, derive_topic};
pub use failure::{Code, Failure};
pub use index::{Hit, Index, Ranking};
pub use store::{Fact, Store};
pub use time::{UnixMillis, iso8601};

/// A 64-bit FNV-1a hash of the store text, for keying the driver's index cache by content.
pub fn content_key(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests;
