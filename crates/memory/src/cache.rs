//! The recall cache: `memory_recall`'s [`Index`] and the store text it was built from, kept
//! across calls for as long as the store file provably has not changed, and edited in place by
//! this process's saves.
//!
//! A cached index is keyed by the store file's `(mtimeMs, size, ino, ctimeMs)` as the driver's
//! `stat` reports them ([`FileKey`]). A file this process wrote and holds open is trusted on a
//! key match at once (the crate docs, "Why a file this process holds is not read again"); any
//! other on a match of mtime, size and inode ([`IndexCache::is_fresh`]) only when
//! it was last confirmed more than [`RACY_WINDOW_MS`] after the file's mtime: a write within the
//! same mtime tick (coarse file systems round to up to 2 s) that keeps the size and the inode
//! would otherwise go unseen, as git treats "racily clean" entries. Otherwise the driver reads
//! the bytes and [`IndexCache::load`]s them: when they are the cached text the index is kept (no
//! parse, no indexing) and confirmed at the time of the read; else the text is parsed and
//! indexed, reusing the analysis of the facts it still holds unchanged ([`Index::rebuild`]), and
//! a store that is not UTF-8 or does not parse drops the cache and is the answer
//! (`memory.corrupt`). A missing file is an empty store ([`IndexCache::load_missing`]).
//!
//! A save under the lock goes through the same rule ([`IndexCache::save`]): when the file is
//! provably the cached text nothing is read; the save's edits are applied to the cached index in
//! place ([`Index::update`]) and to the cached text (only the edited facts are serialised again,
//! [`Rendered::edit`]), byte for byte what a save of the file's text writes
//! ([`crate::apply_save`]). Once the new file is renamed into place the driver re-keys the cache
//! with its `stat` ([`IndexCache::committed`]), so the next recall reads nothing once the racy
//! window has passed, and compares the bytes (no parse) before that. A save whose write failed
//! leaves the cache keyed to no file: the next load sees the file differ from the cached text and
//! reads it again.

use crate::args::{parse_recall_args, parse_save_args};
use crate::edit::{check_scope, plan_save};
use crate::failure::Failure;
use crate::index::Index;
use crate::render::Rendered;
use crate::store::{Store, text_of};
use crate::time::UnixMillis;
use serde_json::Value;

/// How close to a file's mtime a read may be and still miss a later write in the same mtime tick
/// (2 s covers the coarsest common file systems). An index read within this window of the
/// file's mtime is checked again by content before it is trusted.
pub const RACY_WINDOW_MS: f64 = 2_000.0;

/// What identifies the version of the store file an index was built from: its `stat` fields as
/// the driver reports them (Node's `mtimeMs`, `size`, `ino` and `ctimeMs`, JavaScript numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileKey {
    /// Modification time, Unix milliseconds (fractional where the file system has them).
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: f64,
    /// Inode number (a rename onto the path changes it).
    pub ino: f64,
    /// Status change time, Unix milliseconds: any write, `utimes` or rename of the file sets it
    /// to the time it happened, and nothing sets it back. Compared only for a file this process
    /// holds (see [`IndexCache::committed`]), whose key was taken after its rename.
    pub ctime_ms: f64,
}

impl FileKey {
    /// The key of `[mtimeMs, size, ino, ctimeMs, ..]` as the driver passes a `stat` (a missing
    /// number is NaN, which matches no key).
    pub fn of_stat(stat: &[f64]) -> FileKey {
        let at = |i: usize| stat.get(i).copied().unwrap_or(f64::NAN);
        FileKey {
            mtime_ms: at(0),
            size: at(1),
            ino: at(2),
            ctime_ms: at(3),
        }
    }

    /// Whether `other` is this version of the file: the same mtime, size and inode, and for a
    /// held file (`held`) the same ctime too.
    fn matches(&self, other: FileKey, held: bool) -> bool {
        self.mtime_ms == other.mtime_ms
            && self.size == other.size
            && self.ino == other.ino
            && (!held || self.ctime_ms == other.ctime_ms)
    }
}

struct Cached {
    /// The file it was built from; `None` when built for a missing file, or after this process
    /// saved (so the next recall reads the file again).
    key: Option<FileKey>,
    /// Built for a missing file.
    missing: bool,
    /// The text the index's store was read from or written as (`""` for a missing file).
    text: Text,
    /// When the driver last confirmed the file matched (its clock, Unix milliseconds).
    checked_at: f64,
    /// The driver holds the file with `key` open: this process wrote it, and its inode cannot
    /// be reused while it is open (see [`IndexCache::committed`]).
    held: bool,
    index: Index,
}

/// The cached store text: as read from the file, or as this cache rendered it for a save (then
/// the next save rewrites only the facts it edits).
enum Text {
    Read(String),
    Rendered(Rendered),
}

impl Text {
    fn as_str(&self) -> &str {
        match self {
            Text::Read(text) => text,
            Text::Rendered(rendered) => &rendered.text,
        }
    }
}

/// What the driver found of the store file under the lock, for [`IndexCache::save`].
pub enum Found<'a> {
    /// No file.
    Missing,
    /// Not read: [`IndexCache::is_fresh`] said the cache holds this file.
    Unread(FileKey),
    /// Its bytes, read with this key, the read started at `at` (the driver's clock).
    Read {
        /// The file's bytes.
        bytes: &'a [u8],
        /// Its key, from the handle that read them.
        key: FileKey,
        /// When the read started.
        at: f64,
    },
}

impl<'a> Found<'a> {
    /// From the driver's findings: `None` for no file, else `[mtimeMs, size, ino, ctimeMs,
    /// read_at]` (its `stat` and when the read started), with its `bytes` unless it trusted the
    /// key.
    pub fn of(stat: Option<&[f64]>, bytes: Option<&'a [u8]>) -> Found<'a> {
        match (stat, bytes) {
            (None, _) => Found::Missing,
            (Some(stat), None) => Found::Unread(FileKey::of_stat(stat)),
            (Some(stat), Some(bytes)) => Found::Read {
                bytes,
                key: FileKey::of_stat(stat),
                at: stat.get(4).copied().unwrap_or(f64::NAN),
            },
        }
    }
}

/// `memory_recall`'s index, cached across calls (see the module docs for the rule).
///
/// The driver's loop: `stat(store)`; `ENOENT` → [`IndexCache::load_missing`]; else unless
/// [`IndexCache::is_fresh`] read the bytes and [`IndexCache::load`] them (a failure is the
/// answer); then [`IndexCache::recall`]. A save goes through [`IndexCache::save`] and, once
/// its file is in place, [`IndexCache::committed`].
#[derive(Default)]
pub struct IndexCache {
    cache: Option<Cached>,
    /// A save was applied and its driver has not yet said how its write ended
    /// ([`IndexCache::committed`]): the cached text is the one to write, so a load leaves it.
    pending: bool,
}

impl IndexCache {
    /// An empty cache.
    pub fn new() -> IndexCache {
        IndexCache::default()
    }

    /// Whether the cached index was built from the file with this key, and either was
    /// confirmed more than [`RACY_WINDOW_MS`] after its mtime, so that a later write must have
    /// changed the key, or is the file this process wrote and holds open, so that a file with
    /// its key is that very file (see [`IndexCache::committed`]).
    pub fn is_fresh(&self, key: FileKey) -> bool {
        self.cache.as_ref().is_some_and(|c| {
            c.key.is_some_and(|k| k.matches(key, c.held))
                && (c.held || c.checked_at - key.mtime_ms > RACY_WINDOW_MS)
        })
    }

    /// Whether the cache relies on the driver holding the committed file open. Once it does not
    /// (another file was loaded, a save was not written), the driver closes the handle.
    pub fn holds(&self) -> bool {
        self.cache.as_ref().is_some_and(|c| c.held)
    }

    /// Loads the store's bytes, read with this `key` at `now_ms` (the driver's clock, the one
    /// mtimes use): keeps the cached index when the content is the same, else parses and indexes
    /// it. A store that is not UTF-8 or does not parse drops the cache and is the failure
    /// (`memory.corrupt`).
    ///
    /// While a save is pending (between [`IndexCache::save`] and [`IndexCache::committed`]) a
    /// load keeps the saved store: the driver writes its text from the cache, and a recall in
    /// those milliseconds answers from the store being written.
    pub fn load(&mut self, bytes: &[u8], key: FileKey, now_ms: f64) -> Result<(), Failure> {
        if self.pending {
            return Ok(());
        }
        // The cached text is UTF-8 already: the same bytes need no check.
        if let Some(cached) = self
            .cache
            .as_mut()
            .filter(|c| !c.missing && same_bytes(c.text.as_str().as_bytes(), bytes))
        {
            cached.held &= cached.key.is_some_and(|k| k.matches(key, true));
            cached.key = Some(key);
            cached.checked_at = now_ms;
            return Ok(());
        }
        let text = match text_of(bytes) {
            Ok(text) => text,
            Err(f) => {
                self.cache = None;
                return Err(f);
            }
        };
        match Store::parse(text) {
            Ok(store) => {
                // A changed store reuses the analysis of the facts a save left as they were.
                let index = match self.cache.take() {
                    Some(cached) => cached.index.rebuild(store),
                    None => Index::build(store),
                };
                self.cache = Some(Cached {
                    key: Some(key),
                    missing: false,
                    text: Text::Read(text.to_owned()),
                    checked_at: now_ms,
                    held: false,
                    index,
                });
                Ok(())
            }
            Err(f) => {
                self.cache = None;
                Err(f)
            }
        }
    }

    /// The store file does not exist: recall answers from an empty store.
    pub fn load_missing(&mut self) {
        if self.pending || self.cache.as_ref().is_some_and(|c| c.missing) {
            return;
        }
        self.cache = Some(Cached {
            key: None,
            missing: true,
            text: Text::Read(String::new()),
            checked_at: 0.0,
            held: false,
            index: Index::build(Store::empty()),
        });
    }

    /// `memory_save` under the lock: the tool arguments, what the driver `found` of the store
    /// file, the time and the repository root of the agent's working directory (`None`: none)
    /// → the answer, the new text being [`IndexCache::pending_text`]; or the refusal (invalid arguments,
    /// corrupt store, another schema version, `supersedes` naming no fact; then the cache holds
    /// what was found). The cache takes the edits at once, keyed to no file until
    /// [`IndexCache::committed`]. The text is not copied out: the driver writes it from the
    /// cache.
    pub fn save(
        &mut self,
        args: &Value,
        found: Found<'_>,
        now: UnixMillis,
        project: Option<&str>,
    ) -> Result<Value, Failure> {
        let args = parse_save_args(args)?;
        check_scope(&args, project)?;
        if self.pending {
            // The last save's driver never said how its write ended: the cache may hold text
            // that is not the file's.
            self.committed(None, 0.0, false);
        }
        match found {
            Found::Missing => self.load_missing(),
            Found::Read { bytes, key, at } => self.load(bytes, key, at)?,
            Found::Unread(key) if self.is_fresh(key) => {}
            Found::Unread(_) => {
                return Err(Failure::read_failed(
                    "the store was not read, and the cache does not hold it",
                ));
            }
        }
        let Some(cached) = self.cache.as_mut() else {
            return Err(Failure::read_failed("the store was not loaded"));
        };
        let mut plan = plan_save(cached.index.store(), &args, now, project)?;
        let changed: Vec<usize> = plan.edits.iter().map(|(i, _)| *i).collect();
        cached.index.update(std::mem::take(&mut plan.edits));
        match &mut cached.text {
            Text::Rendered(rendered) => rendered.edit(cached.index.store(), &changed),
            Text::Read(_) => cached.text = Text::Rendered(Rendered::of(cached.index.store())),
        }
        cached.key = None;
        cached.held = false;
        cached.missing = false;
        self.pending = true;
        Ok(plan.saved(&args, String::new()).answer())
    }

    /// The text of the save not yet [`IndexCache::committed`]: the text to write (`None`: no
    /// save is pending).
    pub fn pending_text(&self) -> Option<&str> {
        self.cache
            .as_ref()
            .filter(|_| self.pending)
            .map(|c| c.text.as_str())
    }

    /// How the pending save's write ended: its text is now the store file with this `key` (the
    /// new file's `stat`), written by `at_ms` (the driver's clock); or, for `None`, it was not
    /// written (the cache stays keyed to no file, so the next load reads the file again).
    /// Nothing when no save is pending.
    ///
    /// `held`: the driver keeps the new file open (the handle it wrote it through) until
    /// [`IndexCache::holds`] says otherwise. Then a file with this key is trusted to be this
    /// text even within [`RACY_WINDOW_MS`] of its mtime; the crate docs ("The recall cache")
    /// give the argument and what it assumes.
    pub fn committed(&mut self, key: Option<FileKey>, at_ms: f64, held: bool) {
        if !std::mem::take(&mut self.pending) {
            return;
        }
        if let (Some(cached), Some(key)) = (self.cache.as_mut(), key) {
            cached.key = Some(key);
            cached.checked_at = at_ms;
            cached.held = held;
        }
    }

    /// `memory_recall`'s answer for the tool arguments `args` from the loaded index (an empty
    /// store when nothing is loaded), for an agent working in `project` (a repository root), or
    /// the arguments' failure.
    pub fn recall(&self, args: &Value, project: Option<&str>) -> Value {
        let args = match parse_recall_args(args) {
            Ok(args) => args,
            Err(f) => return f.to_json(),
        };
        match &self.cache {
            Some(cached) => cached.index.recall(&args, project),
            None => Index::build(Store::empty()).recall(&args, project),
        }
    }

    /// The session-start brief of the loaded store for `project`, at most `max_chars`
    /// characters; `""` when there is nothing to show (see [`crate::brief`]).
    pub fn brief(&self, project: Option<&str>, max_chars: usize) -> String {
        self.cache.as_ref().map_or_else(String::new, |c| {
            crate::brief::brief(c.index.store(), project, max_chars)
        })
    }

    /// Facts in the loaded index (tests, diagnostics).
    pub fn facts(&self) -> usize {
        self.cache
            .as_ref()
            .map_or(0, |c| c.index.store().facts.len())
    }
}

/// `a == b`, eight bytes at a time: WebAssembly has no `memcmp`, and the byte loop it gets
/// instead takes milliseconds over a store of megabytes.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    const BLOCK: usize = 32;
    let word =
        |chunk: &[u8], i: usize| u64::from_ne_bytes(chunk[i..i + 8].try_into().unwrap_or_default());
    // Four words a block, their differences or-ed: one branch per 32 bytes.
    let differ = |x: &[u8], y: &[u8]| {
        (0..BLOCK)
            .step_by(8)
            .fold(0, |acc, i| acc | (word(x, i) ^ word(y, i)))
    };
    a.len() == b.len()
        && a.chunks_exact(BLOCK)
            .zip(b.chunks_exact(BLOCK))
            .all(|(x, y)| differ(x, y) == 0)
        && a.chunks_exact(BLOCK).remainder() == b.chunks_exact(BLOCK).remainder()
}

#[cfg(test)]
mod tests;
