//! The pure core of dsh-limit-break's durable fact memory: the tools `memory_save`,
//! `memory_recall` and `memory_stats`, and the people CLI (list, show, forget, export, import).
//!
//! # Bird's-eye view
//!
//! Inputs are text and numbers the driver hands over: the tool arguments (a JSON value), the
//! store file's bytes or text (`None` when it does not exist), its size, mtime and inode, the
//! time now in Unix milliseconds, `DSH_HOME` and `HOME`, and the lock file's content and age.
//! Outputs are values: the new store text to write, the JSON answer to return, or a lock
//! [`lock::Decision`]. The tool definitions the model sees are [`tools::definitions`].
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
//!   in an [`IndexCache`], see below) and [`Index::recall`]; or [`recall::recall_text`] in one
//!   step.
//! - `memory_stats`: [`stats::stats`].
//! - People CLI: [`cli::list`], [`cli::show`], [`cli::forget`], [`cli::export`], [`cli::import`],
//!   [`cli::recall_lines`].
//! - The same from the file's bytes, for a driver: [`driver::save`], [`driver::forget`],
//!   [`driver::import`], [`driver::list`], [`driver::show`], [`driver::export`],
//!   [`driver::stats`] (bytes that are not UTF-8 are `memory.corrupt`, [`store::text_of`]).
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
//! - [`cache`]: the recall index cache. [`driver`]: the entry points over file bytes.
//! - [`brief`]: the session-start brief (topics, the current project's and the newest facts).
//! - [`tools`]: the tool definitions (names, descriptions, schemas, timeouts). [`home`]: where
//!   the store lives (DSH's home rule).
//! - [`lock`]: the lock protocol's decisions. [`stats`]: `memory_stats`. [`time`]: ISO-8601.
//! - [`eval`]: hit@1 / hit@3 / MRR over the labelled set in `recall/`.
//!
//! # The save protocol (driver, step by step)
//!
//! Paths: `dir = $DSH_HOME/memory` ([`lock::STORE_DIR`]), `store = dir/facts.json`,
//! `lock = dir/.facts.lock` ([`lock::LOCK_FILE`]), `takeover = dir/.facts.lock.takeover`
//! ([`lock::TAKEOVER_FILE`], the take-over mutex). `token` is a fresh random string per save
//! (`crypto.randomUUID()`), `me = Me { token, pid: process.pid, host: os.hostname() }`.
//!
//! *Remove-checked* `file` (expecting `judged` text): `rename(file, dir/steal_name(token))`
//! (`ENOENT`: done); read the renamed file (`ENOENT`: done, a sweep removed it); if
//! [`lock::same_lock`]`(renamed, judged)` unlink it. Otherwise something else was moved by
//! mistake: put it back with `link(renamed, file)` (never `rename`, which could clobber a newer
//! file; `EEXIST` means another writer already created a new one) and unlink the renamed name.
//!
//! 1. `args = parse_save_args(&value)`; on `Err(f)` answer `f.to_json()`. When the first
//!    exclusive create of 2.1 fails with `ENOENT`, create `dir` (recursive) and try again, once.
//! 2. **Acquire.** `start = now`; `attempt = 0`. Loop:
//!    1. `open(lock, O_CREAT | O_EXCL | O_WRONLY, 0o644)` (Node flag `"wx"`). On success write
//!       `LockRecord { token, pid, host, created: now }.to_text()` and close, without `fsync`
//!       (only other processes of this machine read it, from the page cache; after a power loss
//!       every holder is dead and the lock's age decides): go to 3.
//!    2. On `EEXIST` (on Windows also `EPERM` when `lstat(lock)` shows it exists): read the
//!       lock's text and `mtime`; if it vanished (`ENOENT`) retry 2.1 at once.
//!       `age_ms = max(0, now − mtime)`. If [`lock::pid_to_probe`] gives a pid, probe it with
//!       `process.kill(pid, 0)` (`ESRCH` → `Dead`, else `Alive`), otherwise `Unknown`.
//!    3. `match lock::decide(&Observed { text, age_ms, holder }, &me, now − start, attempt,
//!       Math.random())`:
//!       - `Wait { ms }`: sleep `ms`, `attempt += 1`, continue.
//!       - `GiveUp(f)`: answer `f.to_json()` (`memory.locked`). Nothing was written.
//!       - `Steal(_)`: **take over, one writer at a time.** `open(takeover, "wx", 0o644)`.
//!         - On `EEXIST` (Windows: `EPERM` as in 2.2): read its text and `mtime` (gone: continue
//!           at once), probe its pid as in 2.2, and `match lock::decide_takeover(…)` with the
//!           same `now − start` and `attempt`: `Wait { ms }`: another writer is taking over;
//!           sleep `ms`, `attempt += 1`, continue. `GiveUp(f)`: answer `f.to_json()`.
//!           `Steal(_)`: the mutex is abandoned ([`lock::TAKEOVER_STALE_MS`], 5 s, old, or its
//!           holder dead): read it once more (text, `mtime`, probe); if
//!           [`lock::takeover_still_abandoned`]`(judged_text, &fresh, &me)`, remove-checked it;
//!           continue.
//!         - On success: write `LockRecord { token, … }.to_text()` into it and close (no
//!           `fsync`: after a crash its holder is dead anyway). Read `lock` again with its
//!           `mtime` and probe its pid (gone: skip). Only if
//!           [`lock::still_abandoned`]`(judged_text, &fresh, &me)` (the same lock, still
//!           abandoned) remove-checked it. Then release the mutex as the lock in step 7, and
//!           continue (retry 2.1 at once, competing with every other writer).
//! 3. **Read and apply.** Read `store` (`ENOENT` → `None`; another error → release and answer
//!    [`Failure::read_failed`]). `apply_save(text, &args, now)`; on `Err(f)` release and answer.
//!    A driver holding an [`IndexCache`] opens `store`, `stat`s the handle and reads the bytes
//!    only unless [`IndexCache::is_fresh`], then asks [`IndexCache::save`] (see "The recall
//!    cache"): the same text and answer without re-reading or re-parsing a store it holds.
//! 4. **Write.** Create `dir/temp_name(token)` with `"wx"`, write `saved.text`, `fsync`, `stat`
//!    the handle (the key the store will have after the rename), close; except that a driver
//!    holding an [`IndexCache`], not on Windows, keeps the handle open (see "Why a file this
//!    process holds is not read again").
//! 5. **Commit check.** Read `lock`; unless [`lock::owns`]`(text, token)` our lock was taken
//!    over (we paused past [`lock::STALE_MS`]; see below for the one other way): unlink the temp
//!    file and answer [`lock::lock_lost`]. (The remaining window is the few microseconds between
//!    this read and the rename.)
//! 6. **Commit.** `rename(temp, store)` (on Windows retry `EPERM`/`EACCES`/`EBUSY` with the same
//!    backoff for up to 1 s); then `fsync` the directory (open `dir` read-only and `fsync`;
//!    ignore the error on platforms that refuse); with a kept handle, `stat` it (the store's key
//!    now: the rename set its ctime). On failure unlink the temp file, release, and
//!    answer [`Failure::write_failed`]. Then **sweep**, still holding the lock, ignoring
//!    errors: for each name in `dir`, `stat` it and `match lock::sweep(name, now − mtime)`:
//!    `Unlink` (an aside or temp name left by a crash, at least 15 s old) → unlink;
//!    `RemoveMutex` (an abandoned take-over mutex) → read it (text and `mtime` from one handle),
//!    ask `sweep` again with that age, and if it still says so remove it as in 2.3's `EEXIST`
//!    branch (read again, `takeover_still_abandoned`, remove-checked); `Keep` → nothing.
//! 7. **Release** (always, in a `finally`): `rename(lock, dir/release_name(token))`; read it
//!    (gone: done); if `owns(text, token)` unlink it, else put it back with `link` as in
//!    remove-checked and unlink the renamed name. A missing lock (`ENOENT`) is fine.
//! 8. Answer `saved.answer()`. A driver holding an [`IndexCache`] calls
//!    [`IndexCache::committed`] with the key from step 6 (or 4), the time after step 6 and
//!    whether it keeps the handle; with no key when nothing was written (it then closes a kept
//!    handle).
//!
//! The numbers: wait at most [`lock::WAIT_MS`] (8 s); take over a lock at least
//! [`lock::STALE_MS`] (15 s) old, or at once when its holder is provably dead; remove a
//! take-over mutex at least [`lock::TAKEOVER_STALE_MS`] (5 s) old, or at once when its holder
//! is provably dead; sweep debris at least 15 s old; back off 20 ms doubling to 200 ms with
//! ±25 % jitter. Readers (`recall`, `stats`) take no lock: the rename in step 6 is atomic, so
//! they see the old or the new file, never half of one.
//!
//! # Why a take-over never displaces a live lock
//!
//! Assume (A1) a live writer holds `lock` for less than [`lock::STALE_MS`] and (A2) every
//! take-over releases `takeover` within [`lock::TAKEOVER_STALE_MS`] (milliseconds of work
//! against 5 s; a crash mid take-over breaks this, see below). Then the mutex is held by at most
//! one writer at a time: `O_EXCL` admits one, and by (A2) nobody finds it abandoned. Under it,
//! the holder reads `lock` and [`lock::still_abandoned`] confirms it is the judged lock and
//! abandoned: 15 s old (so by (A1) its holder is gone) or its holder's pid is dead. Which
//! writers could remove it before the holder's rename? Its own holder, gone; and a take-over,
//! which needs the mutex. So the rename moves exactly that lock, the check passes, and it is
//! unlinked: no writer's fresh lock is moved aside, and the put-back branch is only a guard.
//! Tokens are unique, so once removed no later lock has the judged text.
//!
//! Before the mutex, every writer that judged one stale lock (and found it unchanged on a
//! re-read) renamed whatever was at `lock` and put it back if it was not the judged one. With
//! three writers, the slower one could move the winner's fresh lock aside, a third writer's
//! `O_EXCL` could succeed in that gap, the put-back then failed with `EEXIST`, and the winner
//! failed its commit check (`memory.locked`).
//!
//! What is left: an abandoned *mutex* (a writer crashed, or paused for 5 s, mid take-over:
//! against (A2)) is removed by a re-read and remove-checked, without a mutex of its own. Two
//! writers removing the same abandoned mutex at the same instant can, in the worst interleaving,
//! let two take-overs overlap, and then the old failure above is possible, or a live writer's
//! mutex is left behind (the next save waits 5 s and removes it). Nothing is lost either way.
//! `tests/save_world.rs` replays it on a fake file system and clock: over 1,000 interleavings of
//! three writers chosen at random step by step after a crash mid take-over, 1 displaces a writer
//! and 13 leave a mutex; with two writers none does. A writer that violates (A1) fails its own
//! commit check (step 5) and saves nothing.
//!
//! # The recall cache
//!
//! [`IndexCache`] holds the [`Index`] across calls; its driver, with one file handle for the stat
//! and the read (so the key and the bytes describe the same file):
//!
//! 1. Open `store` for reading: `ENOENT` → [`IndexCache::load_missing`] (an empty store);
//!    another error → answer [`Failure::read_failed`].
//! 2. `stat` the handle. Unless [`IndexCache::is_fresh`]`(FileKey { mtimeMs, size, ino,
//!    ctimeMs })`,
//!    read the bytes and [`IndexCache::load`] them with the time taken just before the read; a failure
//!    (`memory.corrupt`: not UTF-8 or not a store) is the answer.
//! 3. Answer [`IndexCache::recall`].
//!
//! The rule: a key match is trusted only when the index was confirmed more than
//! [`cache::RACY_WINDOW_MS`] (2 s) after the file's mtime, because a same-size, same-inode
//! rewrite within one mtime tick does not change the key. Otherwise the bytes are read again
//! and compared with the cached text: the same content keeps the index (no parse, no indexing)
//! and confirms it at the new time; other content is parsed and indexed, reusing the analysis
//! of every fact it still holds unchanged ([`Index::rebuild`]).
//!
//! A save (step 3 of the save protocol) follows the same rule under the lock: the driver reads
//! the bytes only when the cache is not fresh, and [`IndexCache::save`] edits the cached index
//! and text in place. After the rename (step 6) the driver passes the new file's `stat`, taken
//! on the handle it wrote the file through, to [`IndexCache::committed`].
//!
//! # Why a file this process holds is not read again
//!
//! Within 2 s of the last write every save and recall would read the whole store again to
//! compare it (6.4 MB at 10,000 facts, most of the cost of a save). Instead the driver keeps the
//! handle it wrote the new store through open ([`save::Step::Create`]'s `hold`), `stat`s it after
//! the rename, and tells the cache so ([`IndexCache::committed`] with `held`). A file with that
//! key (mtime, size, inode and ctime) is then trusted at once, until the driver lets the handle
//! go (once [`IndexCache::holds`] is false: another file was loaded, or a save wrote nothing).
//! The argument:
//!
//! 1. While a handle is open its inode is not freed, so no other file of that file system has
//!    its number (inode numbers name the files that exist; an open file exists even unlinked).
//!    A `stat` of the store showing the held inode names that very file.
//! 2. Every writer that takes the lock replaces the store by renaming a new file over it: this
//!    protocol, and the original plugin (its README: a temp file, then a rename). So by 1 no
//!    such writer has written since: it would have left another inode. Without the hold this
//!    fails: once the file is replaced and closed, a later writer's temp file may get its inode
//!    number back, with the same size and mtime tick (`tests/save_world.rs` shows an update lost
//!    that way when the fake driver only claims to hold the file).
//! 3. A program that writes into the file in place (an editor that does not save by rename,
//!    `cp` over it; none of them takes the lock) changes the held inode's content. Each such
//!    write sets the file's ctime to its time, and nothing sets a ctime back (`utimes`, which
//!    can set the mtime back, sets the ctime to now). The held key's ctime was taken after the
//!    rename, so such a write shows as another ctime, unless it falls in the same timestamp tick
//!    as that `stat`. With multigrain timestamps (Linux 6.13 and later, on ext4, XFS, Btrfs and
//!    tmpfs) a change after a `stat` that read the ctime always gets a later one; on older
//!    kernels the tick is the kernel's (1 to 10 ms, right after the save); on FAT and exFAT,
//!    10 ms to 2 s.
//!
//! What is given up, then: a program that takes no lock, rewrites the store in place keeping its
//! exact size, within that one tick after a save of this process, on a kernel or file system
//! with coarse timestamps, goes unseen by this process until the store next changes (such a
//! program can as well lose its write to a save under way: it takes no lock). A file this
//! process does not hold (one it read, or any file within 2 s on Windows) keeps the 2 s rule.
//! Assumed as well: the store's folder stays on one file system, and inode numbers fit a
//! JavaScript number exactly (they do on ext4, XFS, Btrfs and APFS). Nothing is held on Windows:
//! a file held open there makes another writer's rename over it fail, and NTFS file ids need
//! 64 bits. `tests/save_world.rs` replays it with inode numbers reused and 2 s mtimes (with the
//! hold no interleaving of writers with caches loses an update; the in-place residual is shown);
//! the Node tests check that another writer's rename with the same size and mtime is read and
//! the replaced file let go, and that an in-place rewrite with its mtime set back is read.

pub mod args;
pub mod brief;
pub mod cache;
pub mod cli;
mod concepts;
pub mod driver;
mod edit;
pub mod eval;
mod failure;
pub mod home;
pub mod index;
pub mod lock;
pub mod recall;
pub mod render;
pub mod save;
pub mod stats;
pub mod store;
mod text;
pub mod time;
pub mod tools;

pub use args::{RecallArgs, SaveArgs, Scope, parse_recall_args, parse_save_args};
pub use cache::{FileKey, Found, IndexCache};
pub use edit::{Forgotten, ImportPolicy, Imported, Saved, SkipReason, apply_save, derive_topic};
pub use failure::{Code, Failure};
pub use index::{Hit, Index, Ranking};
pub use store::{Fact, Store};
pub use time::{UnixMillis, iso8601};

#[cfg(test)]
mod tests;
