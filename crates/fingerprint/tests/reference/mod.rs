//! The fingerprint implementation as of commit 5e7e297 (before the single-pass scanner), kept
//! verbatim as the reference the optimized implementation must match byte for byte: the
//! differential property test (`tests/differential.rs`) and the `fingerprint` fuzz target compare
//! `normalize` and `fingerprint` of both on every input.
#![allow(dead_code, missing_docs, clippy::all)]
use std::fmt;

/// Bytes of failure text looked at from each end.
pub const WINDOW_BYTES: usize = 4096;

/// Normalized bytes hashed from each end of a windowed failure (see the crate docs).
pub const KEPT_BYTES: usize = 1024;

/// A head or tail at least this long is taken to be cut out of a longer text (the longest char
/// boundary at or below `WINDOW_BYTES` is at most 3 bytes lower).
const FULL_WINDOW_BYTES: usize = WINDOW_BYTES - 3;

/// Ends the tool name in the hash stream (never occurs in UTF-8).
const TOOL_END: u8 = 0xFF;

/// Separates the head part from the tail part in the hash stream (never occurs in UTF-8).
const HEAD_TAIL_MARKER: u8 = 0xFE;

/// A stable 64-bit fingerprint of a failure. Equal fingerprints mean equivalent failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// The hash value (stable across platforms, builds and versions of the same rules).
    pub const fn value(self) -> u64 {
        self.0
    }

    /// Rebuilds a fingerprint from a [`value`](Self::value), e.g. one that was stored.
    pub const fn from_value(value: u64) -> Self {
        Self(value)
    }
}

impl fmt::Display for Fingerprint {
    /// Sixteen lowercase hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// The bounded part of one failure that gets fingerprinted.
#[derive(Clone, Copy, Debug)]
pub struct Failure<'a> {
    /// Normalized tool name (already normalized by the caller; used as-is).
    pub tool: &'a str,
    /// Process exit code for shell-style failures; kept verbatim (1 and 137 differ).
    pub exit_code: Option<i64>,
    /// Start of the failure text (at most WINDOW_BYTES is read).
    pub head: &'a str,
    /// End of the failure text (at most WINDOW_BYTES is read; empty when the whole text fits in head).
    pub tail: &'a str,
}

impl<'a> Failure<'a> {
    /// Splits a whole text into windows: if `text.len() <= 2 * WINDOW_BYTES`, head = text and
    /// tail = `""`; otherwise head = the first `<= WINDOW_BYTES` bytes and tail = the last
    /// `<= WINDOW_BYTES` bytes, both cut on char boundaries (so each is at least
    /// `WINDOW_BYTES - 3` bytes long). Constant time.
    pub fn windows(text: &'a str) -> (&'a str, &'a str) {
        if text.len() <= 2 * WINDOW_BYTES {
            (text, "")
        } else {
            (clip_head(text), clip_tail(text))
        }
    }
}

/// Fingerprint of a failure, or `None` when there is nothing to compare (normalized head and
/// tail are empty AND `exit_code` is `None`).
///
/// Reads at most [`WINDOW_BYTES`] from each end of the text, even when `head` or `tail` is longer
/// (see the crate docs for exactly what is hashed). Does not allocate.
pub fn fingerprint(failure: &Failure<'_>) -> Option<Fingerprint> {
    let mut hash = Fnv1a::new();
    hash.bytes(failure.tool.as_bytes());
    hash.byte(TOOL_END);
    match failure.exit_code {
        None => hash.byte(0),
        Some(code) => {
            hash.byte(1);
            hash.bytes(&code.to_le_bytes());
        }
    }

    let (head, tail) = if failure.tail.is_empty() {
        Failure::windows(failure.head)
    } else {
        (failure.head, failure.tail)
    };
    let text_bytes = if tail.is_empty() {
        // The whole text (at most 2 * WINDOW_BYTES): no cut, hash all of it.
        let n = hash_range(head, &mut hash, 0, usize::MAX);
        hash.byte(HEAD_TAIL_MARKER);
        n
    } else {
        let head_part = if head.len() >= FULL_WINDOW_BYTES {
            drop_partial_last_token(clip_head(head))
        } else {
            clip_head(head)
        };
        let tail_part = if tail.len() >= FULL_WINDOW_BYTES {
            drop_partial_first_token(clip_tail(tail))
        } else {
            clip_tail(tail)
        };
        let from_head = hash_range(head_part, &mut hash, 0, KEPT_BYTES);
        hash.byte(HEAD_TAIL_MARKER);
        let tail_len = normalize_into(tail_part, &mut Counter(0));
        let from_tail = hash_range(
            tail_part,
            &mut hash,
            tail_len.saturating_sub(KEPT_BYTES),
            usize::MAX,
        );
        from_head + from_tail
    };

    if text_bytes == 0 && failure.exit_code.is_none() {
        None
    } else {
        Some(Fingerprint(hash.finish()))
    }
}

/// The normalized form of one text (for tests, debugging and docs); see the crate docs for the
/// rules. [`fingerprint`] hashes this very byte stream (or its ends), without allocating it.
///
/// Unlike [`fingerprint`] this reads the whole text (linear time); use [`Failure::windows`]
/// first for bounded cost.
///
/// ```
/// use dsh_fingerprint::normalize;
///
/// assert_eq!(
///     normalize("  Error at /tmp/build-77/src/App.py:12:5 (0x7ffe1234)\n"),
///     "error at <dir>/app.py:#:# (0x#)"
/// );
/// ```
pub fn normalize(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    normalize_into(text, &mut out);
    // The scanner only ever replaces or drops whole ASCII runs and copies every non-ASCII
    // character whole, so the output is UTF-8; the lossy path is never taken.
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Windows

/// The first `<= WINDOW_BYTES` bytes of `text`, cut on a char boundary.
fn clip_head(text: &str) -> &str {
    let mut end = text.len().min(WINDOW_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("")
}

/// The last `<= WINDOW_BYTES` bytes of `text`, cut on a char boundary.
fn clip_tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(WINDOW_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text.get(start..).unwrap_or("")
}

/// A head window without the token its end may have cut in two: up to its last ASCII
/// whitespace, if that lies in the second half (otherwise the window is kept whole).
fn drop_partial_last_token(window: &str) -> &str {
    match window.bytes().rposition(is_ascii_space) {
        Some(p) if p >= window.len() / 2 => window.get(..p).unwrap_or(window),
        _ => window,
    }
}

/// A tail window without the token its start may have cut in two: from after its first ASCII
/// whitespace, if that lies in the first half (otherwise the window is kept whole).
fn drop_partial_first_token(window: &str) -> &str {
    match window.bytes().position(is_ascii_space) {
        Some(p) if p < window.len() / 2 => window.get(p + 1..).unwrap_or(window),
        _ => window,
    }
}

// ---------------------------------------------------------------------------------------------
// Hashing

/// FNV-1a, 64 bits.
struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn new() -> Self {
        Self(Self::OFFSET_BASIS)
    }

    fn byte(&mut self, b: u8) {
        self.0 ^= u64::from(b);
        self.0 = self.0.wrapping_mul(Self::PRIME);
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Receives the normalized byte stream.
trait Sink {
    fn put(&mut self, byte: u8);
}

impl Sink for Vec<u8> {
    fn put(&mut self, byte: u8) {
        self.push(byte);
    }
}

/// Counts normalized bytes.
struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, _byte: u8) {
        self.0 += 1;
    }
}

/// Hashes the normalized bytes at positions `from..to`.
struct HashRange<'h> {
    hash: &'h mut Fnv1a,
    pos: usize,
    from: usize,
    to: usize,
    hashed: usize,
}

impl Sink for HashRange<'_> {
    fn put(&mut self, byte: u8) {
        if self.pos >= self.from && self.pos < self.to {
            self.hash.byte(byte);
            self.hashed += 1;
        }
        self.pos += 1;
    }
}

/// Hashes bytes `from..to` of `normalize(text)`; returns how many were hashed.
fn hash_range(text: &str, hash: &mut Fnv1a, from: usize, to: usize) -> usize {
    let mut sink = HashRange {
        hash,
        pos: 0,
        from,
        to,
        hashed: 0,
    };
    normalize_into(text, &mut sink);
    sink.hashed
}

// ---------------------------------------------------------------------------------------------
// The scanner

/// Writes tokens to a sink, one space between tokens, none at either end.
struct Out<'s, S: Sink> {
    sink: &'s mut S,
    written: usize,
    space_pending: bool,
}

impl<S: Sink> Out<'_, S> {
    fn bytes(&mut self, bytes: &[u8]) {
        if self.space_pending {
            self.space_pending = false;
            self.sink.put(b' ');
            self.written += 1;
        }
        for &b in bytes {
            self.sink.put(b);
        }
        self.written += bytes.len();
    }

    fn byte(&mut self, b: u8) {
        self.bytes(&[b]);
    }

    fn whitespace(&mut self) {
        self.space_pending = self.written > 0;
    }
}

/// Streams `normalize(text)` into `sink`; returns the number of bytes written.
fn normalize_into<S: Sink>(text: &str, sink: &mut S) -> usize {
    let mut out = Out {
        sink,
        written: 0,
        space_pending: false,
    };
    let bytes = text.as_bytes();
    let mut token_start = None;
    let mut i = 0;
    while i < bytes.len() {
        let (is_space, len) = whitespace_at(text, i);
        if is_space {
            if let Some(start) = token_start.take() {
                token(&bytes[start..i], &mut out);
            }
            out.whitespace();
        } else if token_start.is_none() {
            token_start = Some(i);
        }
        i += len;
    }
    if let Some(start) = token_start {
        token(&bytes[start..], &mut out);
    }
    out.written
}

fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whether the char at byte `i` (a char boundary) is whitespace, and its length in bytes.
fn whitespace_at(text: &str, i: usize) -> (bool, usize) {
    let b = text.as_bytes()[i];
    if b.is_ascii() {
        return (is_ascii_space(b), 1);
    }
    match text.get(i..).and_then(|rest| rest.chars().next()) {
        Some(c) => (c.is_whitespace(), c.len_utf8()),
        None => (false, 1),
    }
}

fn is_separator(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

/// Bytes that may make up a path (non-ASCII bytes included, whole characters at a time).
fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || !b.is_ascii()
        || matches!(
            b,
            b'_' | b'-' | b'.' | b'~' | b'@' | b'+' | b'%' | b'/' | b'\\'
        )
}

/// Normalizes one whitespace-free token: path-character runs by [`run`], other bytes verbatim.
fn token<S: Sink>(t: &[u8], out: &mut Out<'_, S>) {
    let mut j = 0;
    while j < t.len() {
        if !is_path_byte(t[j]) {
            out.byte(t[j]);
            j += 1;
            continue;
        }
        let start = j;
        let drive = t[j].is_ascii_alphabetic()
            && t.get(j + 1) == Some(&b':')
            && t.get(j + 2).is_some_and(|&b| is_separator(b));
        if drive {
            j += 2;
        }
        while j < t.len() && is_path_byte(t[j]) {
            j += 1;
        }
        run(&t[start..j], out);
    }
}

/// Normalizes one maximal run of path characters: a path keeps only its last segment.
fn run<S: Sink>(r: &[u8], out: &mut Out<'_, S>) {
    if !r.iter().any(|&b| is_separator(b)) {
        return words(r, out);
    }
    let mut end = r.len();
    while end > 0 && is_separator(r[end - 1]) {
        end -= 1;
    }
    if end == 0 {
        // Separators only (`/`, `\\`): not a path.
        return words(r, out);
    }
    let name_start = match r[..end].iter().rposition(|&b| is_separator(b)) {
        Some(p) => {
            out.bytes(b"<dir>/");
            p + 1
        }
        None => 0,
    };
    words(&r[name_start..end], out);
    if end < r.len() {
        out.byte(b'/');
    }
}

/// Rules 1 and 3–6 on a slice whose outside neighbours are not letters or digits.
fn words<S: Sink>(w: &[u8], out: &mut Out<'_, S>) {
    let mut k = 0;
    while k < w.len() {
        let c = w[k];
        let prev = k.checked_sub(1).map(|p| w[p]);
        if c == b'0' && !prev.is_some_and(|p| p.is_ascii_digit()) {
            if let Some(end) = hex_address_end(w, k) {
                out.bytes(b"0x#");
                k = end;
                continue;
            }
        }
        if c.is_ascii_hexdigit() && !prev.is_some_and(|p| p.is_ascii_alphanumeric()) {
            if let Some(end) = uuid_end(w, k) {
                out.bytes(b"<uuid>");
                k = end;
                continue;
            }
            if let Some(end) = hex_id_end(w, k) {
                out.bytes(b"<hex>");
                k = end;
                continue;
            }
        }
        if c.is_ascii_digit() {
            k += 1;
            while k < w.len() && w[k].is_ascii_digit() {
                k += 1;
            }
            out.byte(b'#');
            continue;
        }
        out.byte(c.to_ascii_lowercase());
        k += 1;
    }
}

fn is_hex_at(w: &[u8], i: usize) -> bool {
    w.get(i).is_some_and(u8::is_ascii_hexdigit)
}

fn is_alnum_at(w: &[u8], i: usize) -> bool {
    w.get(i).is_some_and(u8::is_ascii_alphanumeric)
}

/// End of `0x` + hex digits starting at `k` (where `w[k] == b'0'`).
fn hex_address_end(w: &[u8], k: usize) -> Option<usize> {
    if !matches!(w.get(k + 1), Some(b'x' | b'X')) || !is_hex_at(w, k + 2) {
        return None;
    }
    let mut end = k + 3;
    while is_hex_at(w, end) {
        end += 1;
    }
    Some(end)
}

/// End of an 8-4-4-4-12 UUID starting at `k`, not followed by a letter or digit.
fn uuid_end(w: &[u8], k: usize) -> Option<usize> {
    let mut p = k;
    for (i, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 {
            if w.get(p) != Some(&b'-') {
                return None;
            }
            p += 1;
        }
        for _ in 0..len {
            if !is_hex_at(w, p) {
                return None;
            }
            p += 1;
        }
    }
    (!is_alnum_at(w, p)).then_some(p)
}

/// End of a long hex identifier starting at `k` (rule 5).
fn hex_id_end(w: &[u8], k: usize) -> Option<usize> {
    let (mut digit, mut letter) = (false, false);
    let mut p = k;
    while let Some(&b) = w.get(p) {
        if b.is_ascii_digit() {
            digit = true;
        } else if b.is_ascii_hexdigit() {
            letter = true;
        } else {
            break;
        }
        p += 1;
    }
    (p - k >= 8 && digit && letter && !is_alnum_at(w, p)).then_some(p)
}
