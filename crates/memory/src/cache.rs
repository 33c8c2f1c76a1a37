//! The recall cache: `memory_recall`'s [`Index`], kept across calls for as long as the store file
//! provably has not changed.
//!
//! A cached index is keyed by the store file's `(mtimeMs, size, ino)` as the driver's `stat`
//! reports them ([`FileKey`]), and is trusted on a key match ([`IndexCache::is_fresh`]) only when
//! it was last confirmed more than [`RACY_WINDOW_MS`] after the file's mtime: a write within the
//! same mtime tick (coarse file systems round to up to 2 s) that keeps the size and the inode
//! would otherwise go unseen, as git treats "racily clean" entries. Otherwise the driver reads
//! the bytes and [`IndexCache::load`]s them: when their [`content_key`] is the cached one the
//! index is kept (no parse, no indexing) and confirmed at the time of the read; else the text is
//! parsed and indexed, and a store that is not UTF-8 or does not parse drops the cache and is the
//! answer (`memory.corrupt`). A missing file is an empty store ([`IndexCache::load_missing`]).
//! After its own save the driver calls [`IndexCache::invalidate`]: the next recall reads the file
//! again, and the changed store is indexed by [`Index::rebuild`], which tokenises only the facts
//! the save added or changed.

use crate::args::parse_recall_args;
use crate::failure::Failure;
use crate::index::Index;
use crate::store::{Store, text_of};
use serde_json::Value;

/// How close to a file's mtime a read may be and still miss a later write in the same mtime tick
/// (2 s covers the coarsest common file systems). An index read within this window of the
/// file's mtime is checked again by content before it is trusted.
pub const RACY_WINDOW_MS: f64 = 2_000.0;

/// A 64-bit FNV-1a hash of the store text, for keying the index cache by content.
pub fn content_key(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// What identifies the version of the store file an index was built from: its `stat` fields as
/// the driver reports them (Node's `mtimeMs`, `size` and `ino`, JavaScript numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FileKey {
    /// Modification time, Unix milliseconds (fractional where the file system has them).
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: f64,
    /// Inode number (a rename onto the path changes it).
    pub ino: f64,
}

struct Cached {
    /// The file it was built from; `None` when built for a missing file, or after this process
    /// saved (so the next recall reads the file again).
    key: Option<FileKey>,
    /// Built for a missing file.
    missing: bool,
    /// [`content_key`] of the text the index was built from.
    content: u64,
    /// When the driver last confirmed the file matched (its clock, Unix milliseconds).
    checked_at: f64,
    index: Index,
}

/// `memory_recall`'s index, cached across calls (see the module docs for the rule).
///
/// The driver's loop: `stat(store)`; `ENOENT` → [`IndexCache::load_missing`]; else unless
/// [`IndexCache::is_fresh`] read the bytes and [`IndexCache::load`] them (a failure is the
/// answer); then [`IndexCache::recall`]. After its own save it calls [`IndexCache::invalidate`].
#[derive(Default)]
pub struct IndexCache {
    cache: Option<Cached>,
}

impl IndexCache {
    /// An empty cache.
    pub fn new() -> IndexCache {
        IndexCache::default()
    }

    /// Whether the cached index was built from the file with this key, and was confirmed more
    /// than [`RACY_WINDOW_MS`] after its mtime, so that a later write must have changed the key.
    pub fn is_fresh(&self, key: FileKey) -> bool {
        self.cache
            .as_ref()
            .is_some_and(|c| c.key == Some(key) && c.checked_at - key.mtime_ms > RACY_WINDOW_MS)
    }

    /// Loads the store's bytes, read with this `key` at `now_ms` (the driver's clock, the one
    /// mtimes use): keeps the cached index when the content is the same, else parses and indexes
    /// it. A store that is not UTF-8 or does not parse drops the cache and is the failure
    /// (`memory.corrupt`).
    pub fn load(&mut self, bytes: &[u8], key: FileKey, now_ms: f64) -> Result<(), Failure> {
        let text = match text_of(bytes) {
            Ok(text) => text,
            Err(f) => {
                self.cache = None;
                return Err(f);
            }
        };
        let content = content_key(text);
        if let Some(cached) = self.cache.as_mut().filter(|c| c.content == content) {
            cached.key = Some(key);
            cached.checked_at = now_ms;
            return Ok(());
        }
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
                    content,
                    checked_at: now_ms,
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
        if self.cache.as_ref().is_some_and(|c| c.missing) {
            return;
        }
        self.cache = Some(Cached {
            key: None,
            missing: true,
            content: content_key(""),
            checked_at: 0.0,
            index: Index::build(Store::empty()),
        });
    }

    /// Forgets which file the index was built from (after this process wrote the store), so
    /// the next recall reads the file; the index itself is kept for that load to rebuild from.
    pub fn invalidate(&mut self) {
        if let Some(cached) = self.cache.as_mut() {
            cached.key = None;
            cached.missing = false;
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

#[cfg(test)]
mod tests;
