//! What a guard's shim and its binding share to keep crossings cheap: tool names resolved once
//! and passed by id ([`ToolTable`]), and a buffer the shim encodes text straight into
//! ([`TextBuffer`]): a call's arguments, a failure's text.

use std::borrow::Cow;
use wasm_bindgen::prelude::wasm_bindgen;

/// Bytes of failure text the fingerprint reads from each end; the shim slices at least this many
/// UTF-16 units from each end so a huge error never crosses the boundary whole.
#[wasm_bindgen(js_name = failureWindow)]
pub fn failure_window() -> usize {
    fingerprint::WINDOW_BYTES
}

/// Tool names kept before a [`ToolTable`] starts afresh; tool names are a small, stable set in
/// practice, so only a host inventing names without end reaches it.
pub const TOOL_LIMIT: usize = 1024;

/// Tool names a shim resolves once, each kept as the binding's `T`, by the id
/// [`ToolTable::intern`] hands out. The shim keeps a name → id map; past [`TOOL_LIMIT`] the table
/// starts afresh and the shim, told by its `forgetTools`, clears its map too.
pub struct ToolTable<T> {
    items: Vec<T>,
}

impl<T> Default for ToolTable<T> {
    fn default() -> Self {
        Self { items: Vec::new() }
    }
}

impl<T> ToolTable<T> {
    /// Keeps `item` and answers its id.
    pub fn intern(&mut self, item: T) -> u32 {
        if self.items.len() >= TOOL_LIMIT {
            self.items.clear();
        }
        self.items.push(item);
        u32::try_from(self.items.len() - 1).unwrap_or(u32::MAX)
    }

    /// What `id` stands for; `None` for an id never handed out (only a shim bug passes one).
    pub fn get(&self, id: u32) -> Option<&T> {
        usize::try_from(id).ok().and_then(|i| self.items.get(i))
    }

    /// Drops every item: earlier ids stand for nothing until handed out again.
    pub fn clear(&mut self) {
        self.items.clear();
    }
}

/// Where the shim writes text (UTF-8, with `TextEncoder.encodeInto`) and passes only its length:
/// no allocation or copy per call.
#[derive(Default)]
pub struct TextBuffer(Vec<u8>);

impl TextBuffer {
    /// The address of at least `bytes` bytes, valid until the next call (the module's memory
    /// may still grow; the shim makes its view again when it does).
    pub fn at_least(&mut self, bytes: usize) -> *mut u8 {
        if self.0.len() < bytes {
            self.0.resize(bytes, 0);
        }
        self.0.as_mut_ptr()
    }

    /// The text in the first `len` bytes. Bytes that are not UTF-8 (only a shim bug could write
    /// them) read as U+FFFD.
    pub fn text(&self, len: usize) -> Cow<'_, str> {
        utf8(self.0.get(..len).unwrap_or_default())
    }

    /// The head in the first `head_len` bytes and the tail in the `tail_len` after them, read as
    /// [`TextBuffer::text`] reads.
    pub fn windows(&self, head_len: usize, tail_len: usize) -> (Cow<'_, str>, Cow<'_, str>) {
        let tail = self
            .0
            .get(head_len..head_len.saturating_add(tail_len))
            .unwrap_or_default();
        (self.text(head_len), utf8(tail))
    }
}

/// `bytes` as text: checked by the standard library's validator (a third of
/// `from_utf8_lossy`'s time on the failing-bash bench's text), repaired only when invalid.
fn utf8(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}
