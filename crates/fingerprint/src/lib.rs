//! Normalizes failure text and fingerprints it so that "equivalent" failures compare equal.
//!
//! An agent stuck in a loop (run → fail → edit → run → same failure) produces failures that differ
//! only in noise: line numbers, addresses, temp directories, timestamps. [`normalize`] erases that
//! noise and [`fingerprint`] hashes the result together with the tool name and the exit code, so
//! `TypeError at line 123` and `TypeError at line 456` get the same [`Fingerprint`] while
//! `TypeError: x is undefined` and `ReferenceError: x is not defined` do not.
//!
//! The crate is pure: it knows nothing of WASM, JavaScript, DSH or the policy that uses it, does
//! no I/O and never panics on any input.
//!
//! # Normalization rules
//!
//! [`normalize`] makes one pass over the text (a hand-written scanner, no regular expressions).
//! The text is split into *tokens* at whitespace; every rule works inside one token, so the
//! normalized form of a text is the normalized forms of its tokens joined by single spaces.
//!
//! 1. **Case.** ASCII letters are lowercased; non-ASCII characters pass through unchanged
//!    (`TypeError` → `typeerror`, `Ünïcode` → `Ünïcode`).
//! 2. **Whitespace.** Every run of whitespace (spaces, tabs, CR, LF, and Unicode whitespace such
//!    as U+00A0) becomes one space; leading and trailing whitespace is dropped
//!    (`"  a\r\n\tb  "` → `a b`).
//! 3. **Hex addresses.** `0x`/`0X` followed by hex digits becomes `0x#`, unless the `0` continues
//!    a number (`0x7ffe1234` and `0xDEADBEEF` → `0x#`, `ptr0x1f` → `ptr0x#`). A lone `0x` is just
//!    a number and a letter (`#x`).
//! 4. **UUIDs.** 8-4-4-4-12 hex digits (any case) not glued to a letter or digit on either side
//!    become `<uuid>` (`req-123e4567-E89B-12d3-a456-426614174000` → `req-<uuid>`).
//! 5. **Long hex identifiers.** A run of at least 8 hex digits, not glued to a letter or digit on
//!    either side, that contains at least one decimal digit *and* at least one of `a`–`f` (git
//!    SHAs, content hashes, build ids) becomes `<hex>` (`9fceb02d0ae598e9` → `<hex>`). Pure digit
//!    runs are numbers (rule 6) and pure-letter words such as `deadbeef` or `facade` are kept.
//!    `_` and `-` separate: `cache_5d41402abc4b` → `cache_<hex>`.
//! 6. **Numbers.** Every remaining run of decimal digits becomes `#`, also when glued to letters
//!    or underscores: `line123` → `line#`, `file_1.py` → `file_#.py`, `v1.2.3` → `v#.#.#`,
//!    `2024-01-02T03:04:05Z` → `#-#-#t#:#:#z`, `exit code 137` → `exit code #`. (The exit code of
//!    a shell failure is carried verbatim in [`Failure::exit_code`], so 1 and 137 still differ.)
//! 7. **Paths.** Inside a token, a maximal run of path characters (ASCII letters and digits,
//!    non-ASCII characters and `_ - . ~ @ + % / \`, plus a leading drive letter `C:`) that
//!    contains `/` or `\` and at least one other character is a path. Its directories become
//!    `<dir>/` and only its last segment (the file name) is kept, normalized by rules 1 and 3–6;
//!    a trailing separator is kept as `/`. So `/home/a/proj/src/app.py:12:5` and
//!    `/tmp/build-77/src/app.py:99:1` are both `<dir>/app.py:#:#`, `C:\Users\a\x.js` and
//!    `./lib/x.js` are both `<dir>/x.js`, but `/srv/a.txt` and `/srv/b.txt` stay different.
//!    Runs of separators alone (`/`, `//`, `\\`) are kept as they are. A separator-free run is
//!    not a path (`a.ts` stays `a.ts`, while `./a.ts` is `<dir>/a.ts`). Anything with a slash
//!    counts, so `and/or` becomes `<dir>/or` and `3/4` becomes `<dir>/#`.
//!
//!    **URLs** are treated like paths, with no special case: `:` is not a path character, so the
//!    scheme and the colon are kept and the host and directories collapse
//!    (`https://example.com/a/b/c.js?x=1` → `https:<dir>/c.js?x=#`;
//!    `https://example.com/` → `https:<dir>/example.com/`).
//! 8. **Everything else** (punctuation, control characters, words) is kept as it is, so
//!    different messages stay different.
//!
//! # Fingerprints and bounded cost
//!
//! [`fingerprint`] feeds a hand-written FNV-1a 64 hash byte by byte: the tool name, a separator
//! byte, the exit code (a tag byte for `None`, or a different tag and the 8 little-endian bytes
//! for `Some`), then normalized failure text, with the marker byte `0xFE` (which never occurs in
//! UTF-8, so never in normalized text) between the part from the head and the part from the
//! tail. Nothing is allocated, and at most [`WINDOW_BYTES`] from each end of the failure text is
//! read, whatever the caller passes, so a 10 MiB failure costs the same as an 8 KiB one.
//!
//! Which normalized bytes are hashed:
//!
//! * **Whole text.** When `tail` is empty and `head` is at most `2 * WINDOW_BYTES` bytes (the
//!   first case of [`Failure::windows`]), the whole of `normalize(head)` is hashed, then the
//!   marker.
//! * **Windows.** Otherwise (a `tail` is given, or `head` is longer and is split by
//!   [`Failure::windows`]) the head is clipped to its first and the tail to its last
//!   [`WINDOW_BYTES`] bytes (on char boundaries), and the hash covers the first
//!   [`KEPT_BYTES`] normalized bytes of the head, the marker, and the last [`KEPT_BYTES`]
//!   normalized bytes of the tail.
//!
//! How it is read: the head forwards, stopping at the first token boundary past
//! [`KEPT_BYTES`] normalized bytes; the tail backwards, token by token, into a buffer filled from
//! its end until [`KEPT_BYTES`] normalized bytes are known (normalization works inside
//! whitespace-free tokens, so each token normalizes alike on its own). Tokens are found eight
//! bytes at a time. So a long failure costs about `2 * KEPT_BYTES` bytes of scanning, whatever the
//! window size. The code before these optimizations is kept verbatim in `tests/reference`; the
//! differential property tests and the `fingerprint` fuzz target check that both give the same
//! value for every input.
//!
//! Why not simply hash the whole normalized windows: a window is cut at a fixed *raw* byte
//! offset, and equivalent failures do not have equal raw lengths (`line 99` vs `line 100`), so the
//! cut would fall at different places and leave different partial tokens and different amounts
//! of text in the window. Therefore the kept length is measured in *normalized* bytes, which
//! equivalent texts share. In addition, a window that is presumably cut out of a longer text (one
//! at least `WINDOW_BYTES - 3` bytes long) first loses the token its cut edge may have split (up
//! to the nearest ASCII whitespace, if that lies in the half of the window next to the cut), which
//! keeps windows that yield fewer than [`KEPT_BYTES`] normalized bytes stable too, unless the
//! shift moves a whole token across the cut. As a result,
//! when both windows yield at least [`KEPT_BYTES`] normalized bytes (true unless a window is
//! mostly whitespace, digits or long paths), a windowed fingerprint hashes exactly the first and
//! the last [`KEPT_BYTES`] bytes of `normalize(whole text)`, so texts with equal normalized forms
//! get equal fingerprints however long they are. A tail-only failure (empty `head`) is thus
//! fingerprinted by the last [`KEPT_BYTES`] bytes of its normalized text, whether it was passed
//! whole or as a window.
//!
//! ```
//! use dsh_fingerprint::{fingerprint, normalize, Failure};
//!
//! assert_eq!(normalize("TypeError at line 123"), "typeerror at line #");
//! let fp = |text, exit_code| {
//!     let (head, tail) = Failure::windows(text);
//!     fingerprint(&Failure { tool: "bash", exit_code, head, tail })
//! };
//! assert_eq!(fp("TypeError at line 123", None), fp("TypeError at line 456", None));
//! assert_ne!(fp("boom", Some(1)), fp("boom", Some(137)));
//! assert_eq!(fp(" \n ", None), None);
//! ```

use std::fmt;
use text::Fnv1a;

mod detail;
pub use detail::{DETAIL_BYTES, detail};

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
        let n = normalize_into(head, &mut HashAll(&mut hash));
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
        let from_head = hash_first(head_part, &mut hash, KEPT_BYTES);
        hash.byte(HEAD_TAIL_MARKER);
        let from_tail = hash_last(tail_part, &mut hash, KEPT_BYTES);
        from_head + from_tail
    };

    if text_bytes == 0 && failure.exit_code.is_none() {
        None
    } else {
        Some(Fingerprint(hash.value()))
    }
}

/// Bytes at the end of any shell failure's text that its fingerprint surely reads as they are:
/// the tail window keeps at least its last `WINDOW_BYTES - 3 - (WINDOW_BYTES - 3) / 2` bytes when
/// it drops a token cut in two (see the crate docs), and all of a shorter text.
pub const SURE_TAIL_BYTES: usize = 2040;

/// The fingerprint of a shell failure, `Failure { tool, exit_code, head: "", tail: output }`,
/// from only the end of `output`: `end` is its last bytes (cut on a char boundary, as a caller
/// that slices a string gets them). `Some(fingerprint)` when those bytes decide it, which is the
/// same value as from the whole output; `None` when they might not (too few tokens, or a needed
/// token may start before `end`): then pass the whole output (or its tail window) to
/// [`fingerprint`]. Lets a caller cross only the end of a long output into WebAssembly first.
pub fn shell_fingerprint_from_end(
    tool: &str,
    exit_code: Option<i64>,
    end: &str,
) -> Option<Option<Fingerprint>> {
    let mut hash = Fnv1a::new();
    hash.bytes(tool.as_bytes());
    hash.byte(TOOL_END);
    match exit_code {
        None => hash.byte(0),
        Some(code) => {
            hash.byte(1);
            hash.bytes(&code.to_le_bytes());
        }
    }
    // The head part of a shell failure is empty: the marker follows at once.
    hash.byte(HEAD_TAIL_MARKER);
    let from_tail = last_kept(clip_tail(end), &mut hash, KEPT_BYTES, true)?;
    Some(if from_tail == 0 && exit_code.is_none() {
        None
    } else {
        Some(Fingerprint(hash.value()))
    })
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
    text::head_bytes(text, WINDOW_BYTES)
}

/// The last `<= WINDOW_BYTES` bytes of `text`, cut on a char boundary.
fn clip_tail(text: &str) -> &str {
    text::tail_bytes(text, WINDOW_BYTES)
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

/// `b` with an ASCII capital lowercased (one table look-up).
#[inline(always)]
fn lower(b: u8) -> u8 {
    LOWER[b as usize]
}

const LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    t
};

/// Receives the normalized byte stream.
trait Sink {
    fn put(&mut self, byte: u8);

    /// Receives several bytes at once.
    #[inline(always)]
    fn put_slice(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.put(b);
        }
    }

    /// Receives `bytes` with ASCII letters lowercased.
    #[inline(always)]
    fn put_lowered(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.put(lower(b));
        }
    }

    /// Whether further bytes would be ignored, so the scanner may stop (checked between tokens).
    fn full(&self) -> bool {
        false
    }
}

impl Sink for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, byte: u8) {
        self.push(byte);
    }

    #[inline(always)]
    fn put_slice(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Hashes every normalized byte.
struct HashAll<'h>(&'h mut Fnv1a);

impl Sink for HashAll<'_> {
    #[inline(always)]
    fn put(&mut self, byte: u8) {
        self.0.byte(byte);
    }

    #[inline(always)]
    fn put_slice(&mut self, bytes: &[u8]) {
        self.0.bytes(bytes);
    }

    #[inline(always)]
    fn put_lowered(&mut self, bytes: &[u8]) {
        self.0.bytes_mapped(bytes, lower);
    }
}

/// Hashes the first `limit` normalized bytes.
struct HashFirst<'h> {
    hash: &'h mut Fnv1a,
    /// Normalized bytes received so far (hashed while below `limit`).
    pos: usize,
    limit: usize,
}

impl Sink for HashFirst<'_> {
    #[inline(always)]
    fn put(&mut self, byte: u8) {
        if self.pos < self.limit {
            self.hash.byte(byte);
        }
        self.pos += 1;
    }

    #[inline(always)]
    fn put_slice(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.pos);
        self.hash.bytes(bytes.get(..room).unwrap_or(bytes));
        self.pos += bytes.len();
    }

    #[inline(always)]
    fn put_lowered(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.pos);
        self.hash
            .bytes_mapped(bytes.get(..room).unwrap_or(bytes), lower);
        self.pos += bytes.len();
    }

    #[inline(always)]
    fn full(&self) -> bool {
        self.pos >= self.limit
    }
}

/// Hashes the first `limit` bytes of `normalize(text)`; returns how many were hashed. Stops
/// scanning at the first token boundary at or past `limit`.
fn hash_first(text: &str, hash: &mut Fnv1a, limit: usize) -> usize {
    let mut sink = HashFirst {
        hash,
        pos: 0,
        limit,
    };
    normalize_into(text, &mut sink);
    sink.pos.min(limit)
}

/// Hashes the last [`KEPT_BYTES`] (`keep`, at most that) bytes of `normalize(text)`, oldest
/// first; returns how many were hashed.
///
/// The text is read once, from its end, token by token: normalization works inside
/// whitespace-free tokens and joins them with single spaces, so each token is normalized on its
/// own and put in front of the ones after it, in a buffer filled from its end, until `keep` bytes
/// are known. A long tail thus costs about `keep` bytes of scanning, not the whole window, and the
/// hash then runs over one contiguous buffer.
fn hash_last(text: &str, hash: &mut Fnv1a, keep: usize) -> usize {
    // Only a partial text can fall short: a whole one always gives a count.
    last_kept(text, hash, keep, false).unwrap_or_default()
}

/// [`hash_last`], for a `text` that is either whole (`partial == false`) or only the end of a
/// longer text (`partial`): then it hashes nothing and returns `None` when the tokens it needs
/// might reach back before `text` (it ran out of text before `keep` normalized bytes, or the
/// last token it needs starts at the very beginning of `text`, so may be cut) or reach further
/// back than [`SURE_TAIL_BYTES`] from the end.
fn last_kept(text: &str, hash: &mut Fnv1a, keep: usize, partial: bool) -> Option<usize> {
    let keep = keep.min(KEPT_BYTES);
    let bytes = text.as_bytes();
    let mut kept = [0u8; KEPT_BYTES];
    // The kept bytes are `kept[pos..keep]`.
    let mut pos = keep;
    let mut end = bytes.len();
    let mut any = false;
    // One scratch for every token (zeroed once: in WebAssembly each fill is a call).
    let mut small = Small::new();
    while pos > 0 {
        // Skip the whitespace before `end`, then find the start of the token that ends there.
        let mut i = end;
        while i > 0 {
            if class(bytes[i - 1]) & SPACE != 0 {
                // ASCII whitespace, most of it: no char to decode.
                i -= 1;
                continue;
            }
            let (space, start) = space_before(text, i);
            if !space {
                break;
            }
            i = start;
        }
        if i == 0 {
            if partial {
                return None;
            }
            break;
        }
        let token_end = i;
        let mut flags = 0u8;
        while i > 0 {
            // Eight bytes at a time, as in `normalize_into`, backwards: the token's bytes are
            // those after the last byte that can end it.
            if let Some(x) = i.checked_sub(8).and_then(|at| load(bytes, at)) {
                let stop = stop_mask(x);
                let last = 63u32.saturating_sub(stop.leading_zeros());
                let after = if stop == 0 {
                    u64::MAX
                } else if last == 63 {
                    0
                } else {
                    !((1u64 << (last + 1)) - 1)
                };
                if maybe_not_plain_mask(x) & after != 0 {
                    flags |= MAYBE;
                }
                if stop == 0 {
                    i -= 8;
                    continue;
                }
                i -= (63 - last as usize) / 8;
            }
            let c = class(bytes[i - 1]);
            if c & (SPACE | NON_ASCII) != 0 {
                if c & SPACE != 0 {
                    break;
                }
                let (space, start) = space_before(text, i);
                if space {
                    break;
                }
                i = start;
                continue;
            }
            flags |= c;
            i -= 1;
        }
        let t = &bytes[i..token_end];
        if partial && (i == 0 || bytes.len() - i > SURE_TAIL_BYTES) {
            return None;
        }
        end = i;
        let plain_token = if flags & MAYBE != 0 {
            is_plain(t)
        } else {
            plain(t, flags)
        };
        if any {
            pos -= 1;
            kept[pos] = b' ';
            if pos == 0 {
                break;
            }
        }
        any = true;
        if plain_token {
            let n = t.len().min(pos);
            for (dst, &b) in kept[pos - n..pos].iter_mut().zip(&t[t.len() - n..]) {
                *dst = lower(b);
            }
            pos -= n;
        } else if is_numeric(t) {
            // Backwards: a digit run is one `#`, written at its last digit.
            let mut after_digit = false;
            for &b in t.iter().rev() {
                let digit = class(b) & DIGIT != 0;
                if !(digit && after_digit) {
                    pos -= 1;
                    kept[pos] = if digit { b'#' } else { b };
                    if pos == 0 {
                        break;
                    }
                }
                after_digit = digit;
            }
        } else {
            small.len = 0;
            token(t, &mut Out::new(&mut small));
            if small.len <= small.buf.len() {
                let n = small.len.min(pos);
                kept[pos - n..pos].copy_from_slice(&small.buf[small.len - n..small.len]);
                pos -= n;
            } else {
                // A token longer than the scratch (a long path or number run, rare): place its
                // last bytes straight into the buffer in a second pass.
                let n = small.len.min(pos);
                let mut place = Place {
                    out: &mut kept[pos - n..pos],
                    skip: small.len - n,
                    at: 0,
                };
                token(t, &mut Out::new(&mut place));
                pos -= n;
            }
        }
    }
    hash.bytes(&kept[pos..keep]);
    Some(keep - pos)
}

/// A token's normalized bytes in a small scratch buffer; `len` counts them all, also those that
/// did not fit.
struct Small {
    buf: [u8; 128],
    len: usize,
}

impl Small {
    fn new() -> Self {
        Self {
            buf: [0; 128],
            len: 0,
        }
    }
}

impl Sink for Small {
    #[inline(always)]
    fn put(&mut self, byte: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = byte;
        }
        self.len += 1;
    }
}

/// Writes the normalized bytes after the first `skip` into `out`, in order.
struct Place<'o> {
    out: &'o mut [u8],
    skip: usize,
    at: usize,
}

impl Sink for Place<'_> {
    #[inline(always)]
    fn put(&mut self, byte: u8) {
        if self.skip > 0 {
            self.skip -= 1;
        } else if let Some(slot) = self.out.get_mut(self.at) {
            *slot = byte;
            self.at += 1;
        }
    }
}

/// Whether the char that ends at byte `end` (a char boundary above 0) is whitespace, and where
/// that char starts.
#[inline(always)]
fn space_before(text: &str, end: usize) -> (bool, usize) {
    let bytes = text.as_bytes();
    let b = bytes[end - 1];
    if b.is_ascii() {
        return (class(b) & SPACE != 0, end - 1);
    }
    let mut start = end - 1;
    while start > 0 && bytes[start] & 0xC0 == 0x80 {
        start -= 1;
    }
    let space = text
        .get(start..end)
        .and_then(|c| c.chars().next())
        .is_some_and(char::is_whitespace);
    (space, start)
}

// ---------------------------------------------------------------------------------------------
// The scanner

/// Writes tokens to a sink, one space between tokens, none at either end.
struct Out<'s, S: Sink> {
    sink: &'s mut S,
    written: usize,
    space_pending: bool,
}

impl<'s, S: Sink> Out<'s, S> {
    fn new(sink: &'s mut S) -> Self {
        Self {
            sink,
            written: 0,
            space_pending: false,
        }
    }

    #[inline(always)]
    fn space(&mut self) {
        if self.space_pending {
            self.space_pending = false;
            self.sink.put(b' ');
            self.written += 1;
        }
    }

    #[inline(always)]
    fn bytes(&mut self, bytes: &[u8]) {
        self.space();
        self.sink.put_slice(bytes);
        self.written += bytes.len();
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.space();
        self.sink.put(b);
        self.written += 1;
    }

    /// Writes a whole token lowercased (ASCII letters only; see [`is_plain`]).
    #[inline(always)]
    fn lowercased(&mut self, bytes: &[u8]) {
        self.space();
        self.sink.put_lowered(bytes);
        self.written += bytes.len();
    }

    /// Writes a whole [numeric](is_numeric) token: each digit run as one `#`.
    #[inline(always)]
    fn numeric(&mut self, bytes: &[u8]) {
        let mut after_digit = false;
        for &b in bytes {
            let digit = class(b) & DIGIT != 0;
            if !(digit && after_digit) {
                self.byte(if digit { b'#' } else { b });
            }
            after_digit = digit;
        }
    }

    #[inline(always)]
    fn whitespace(&mut self) {
        self.space_pending = self.written > 0;
    }
}

/// Byte classes, one table lookup per byte instead of a chain of comparisons.
const SPACE: u8 = 1;
const PATH: u8 = 2;
const ALPHA: u8 = 4;
const DIGIT: u8 = 8;
const SEPARATOR: u8 = 16;
const NON_ASCII: u8 = 32;
const DASH: u8 = 64;

const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut class = 0;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            class |= SPACE;
        }
        if c.is_ascii_alphanumeric()
            || !c.is_ascii()
            || matches!(
                c,
                b'_' | b'-' | b'.' | b'~' | b'@' | b'+' | b'%' | b'/' | b'\\'
            )
        {
            class |= PATH;
        }
        if c.is_ascii_alphabetic() {
            class |= ALPHA;
        }
        if c.is_ascii_digit() {
            class |= DIGIT;
        }
        if c == b'/' || c == b'\\' {
            class |= SEPARATOR;
        }
        if !c.is_ascii() {
            class |= NON_ASCII;
        }
        if c == b'-' {
            class |= DASH;
        }
        t[b] = class;
        b += 1;
    }
    t
};

#[inline(always)]
fn class(b: u8) -> u8 {
    CLASSES[b as usize]
}

/// Streams `normalize(text)` into `sink`; returns the number of bytes written. Stops early (at a
/// token boundary) once the sink is [full](Sink::full).
///
/// One pass finds each token's end and, on the way, whether it is [plain](is_plain): the byte
/// classes it contains and its `-` count.
fn normalize_into<S: Sink>(text: &str, sink: &mut S) -> usize {
    let mut out = Out::new(sink);
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        // Whitespace before the next token.
        let b = bytes[i];
        let c = class(b);
        if c & SPACE != 0 {
            out.whitespace();
            i += 1;
            continue;
        }
        if c & NON_ASCII != 0 {
            let (space, len) = non_ascii_whitespace_at(text, i);
            if space {
                out.whitespace();
                i += len;
                continue;
            }
        }
        // A token: up to the next whitespace.
        let start = i;
        let mut flags = 0u8;
        while i < n {
            // Eight bytes at a time while none of them can end the token (ASCII whitespace and
            // other control bytes are below 0x21, non-ASCII bytes at or above 0x80); only a
            // byte that can make the token not plain (`-` to `9`, `\\`) needs its class.
            if let Some(x) = load(bytes, i) {
                let stop = stop_mask(x);
                let before = if stop == 0 {
                    u64::MAX
                } else {
                    (1u64 << (stop.trailing_zeros() - 7)) - 1
                };
                if maybe_not_plain_mask(x) & before != 0 {
                    flags |= MAYBE;
                }
                if stop == 0 {
                    i += 8;
                    continue;
                }
                i += (stop.trailing_zeros() as usize - 7) / 8;
            }
            let c = class(bytes[i]);
            if c & (SPACE | NON_ASCII) != 0 {
                if c & SPACE != 0 {
                    break;
                }
                let (space, len) = non_ascii_whitespace_at(text, i);
                if space {
                    break;
                }
                i += len;
                continue;
            }
            flags |= c;
            i += 1;
        }
        let t = &bytes[start..i];
        let plain = if flags & MAYBE != 0 {
            is_plain(t)
        } else {
            plain(t, flags)
        };
        if plain {
            out.lowercased(t);
        } else if is_numeric(t) {
            out.numeric(t);
        } else {
            token(t, &mut out);
        }
        if out.sink.full() {
            return out.written;
        }
    }
    out.written
}

const LOW_BITS: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Not a byte class: set while scanning when an 8-byte chunk held a byte that may make the token
/// not plain, so [`is_plain`] decides.
const MAYBE: u8 = 128;

/// The eight bytes at `at`, little-endian (the first byte is the lowest).
#[inline(always)]
fn load(bytes: &[u8], at: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The high bit of every byte of `x` whose low seven bits are at least `c` (no carry crosses a
/// byte: each byte's low bits plus `0x80 - c` stay below 0x100).
#[inline(always)]
fn at_least(x: u64, c: u8) -> u64 {
    (x & !HIGH_BITS).wrapping_add(LOW_BITS * u64::from(0x80 - c)) & HIGH_BITS
}

/// The high bit of every byte of `x` that can end a token: below 0x21 (ASCII whitespace and
/// other control bytes) or at or above 0x80 (non-ASCII). Exact for every byte.
#[inline(always)]
fn stop_mask(x: u64) -> u64 {
    (!at_least(x, 0x21) | x) & HIGH_BITS
}

/// The high bit of every ASCII byte of `x` from `-` to `9` (`-`, `.`, `/`, digits) or `\\`: the
/// bytes that can make a token not plain, and `.`. Exact for every ASCII byte.
#[inline(always)]
fn maybe_not_plain_mask(x: u64) -> u64 {
    (at_least(x, b'-') & !at_least(x, b'9' + 1)) | (at_least(x, b'\\') & !at_least(x, b'\\' + 1))
}

fn is_ascii_space(b: u8) -> bool {
    class(b) & SPACE != 0
}

/// Whether the non-ASCII char at byte `i` (a char boundary) is whitespace, and its length.
/// Unicode whitespace beyond ASCII is U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F and U+3000, whose UTF-8 lead bytes are C2, E1, E2 and E3: any other lead byte
/// only needs its length.
#[inline(always)]
fn non_ascii_whitespace_at(text: &str, i: usize) -> (bool, usize) {
    let bytes = text.as_bytes();
    match bytes[i] {
        // U+2000–U+205F are E2 80 xx and E2 81 xx; any other E2 char (✗ is E2 9C 97) is not.
        0xE2 if bytes.get(i + 1).is_some_and(|&b| b & 0xFE != 0x80) => (false, 3),
        0xC2 | 0xE1..=0xE3 => decoded_whitespace_at(text, i),
        0xC0..=0xDF => (false, 2),
        0xE0..=0xEF => (false, 3),
        _ => (false, 4),
    }
}

#[inline(never)]
fn decoded_whitespace_at(text: &str, i: usize) -> (bool, usize) {
    match text.get(i..).and_then(|rest| rest.chars().next()) {
        Some(c) => (c.is_whitespace(), c.len_utf8()),
        None => (false, 1),
    }
}

#[inline(always)]
fn is_separator(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

/// Bytes that may make up a path (non-ASCII bytes included, whole characters at a time).
#[inline(always)]
fn is_path_byte(b: u8) -> bool {
    class(b) & PATH != 0
}

/// [`is_plain`] for a token whose byte classes, or-ed together, are `flags`: only a token with a
/// `-` needs its dashes counted.
#[inline(always)]
fn plain(t: &[u8], flags: u8) -> bool {
    flags & (DIGIT | SEPARATOR) == 0
        && (flags & DASH == 0 || t.iter().filter(|&&b| b == b'-').count() < 4)
}

/// Whether a token normalizes to itself with ASCII letters lowercased: it has no decimal digit
/// (rules 3, 5 and 6 need one), no `/` or `\\` (rule 7 needs one) and fewer than four `-` (a
/// UUID, rule 4, has four), so only rule 1 can apply. Most words of a failure text are plain.
#[inline(always)]
fn is_plain(t: &[u8]) -> bool {
    let mut dashes = 0;
    for &b in t {
        if class(b) & (DIGIT | SEPARATOR) != 0 {
            return false;
        }
        dashes += usize::from(b == b'-');
    }
    dashes < 4
}

/// Whether a token that is not [plain](is_plain) only needs rule 6: it has no ASCII letter (rules
/// 3 and 5 need one, a drive letter too), no `/` or `\\` (rule 7) and fewer than four `-` (a
/// UUID of digits, rule 4, has four). Numbers, times and counters of test output are.
#[inline(always)]
fn is_numeric(t: &[u8]) -> bool {
    let mut dashes = 0;
    for &b in t {
        if class(b) & (ALPHA | SEPARATOR) != 0 {
            return false;
        }
        dashes += usize::from(b == b'-');
    }
    dashes < 4
}

/// Normalizes one whitespace-free token that is not [plain](is_plain) (a plain one is only
/// lowercased): path-character runs by [`run`], other bytes verbatim.
fn token<S: Sink>(t: &[u8], out: &mut Out<'_, S>) {
    let mut j = 0;
    while j < t.len() {
        if !is_path_byte(t[j]) {
            out.byte(t[j]);
            j += 1;
            continue;
        }
        let start = j;
        let drive = class(t[j]) & ALPHA != 0
            && t.get(j + 1) == Some(&b':')
            && t.get(j + 2).is_some_and(|&b| is_separator(b));
        if drive {
            j += 2;
        }
        let mut flags = if drive { SEPARATOR } else { 0 };
        while let Some(&b) = t.get(j) {
            let c = class(b);
            if c & PATH == 0 {
                break;
            }
            flags |= c;
            j += 1;
        }
        run(&t[start..j], flags & SEPARATOR != 0, out);
    }
}

/// Normalizes one maximal run of path characters (`separator`: whether it contains `/` or `\\`):
/// a path keeps only its last segment.
fn run<S: Sink>(r: &[u8], separator: bool, out: &mut Out<'_, S>) {
    if !separator {
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
        let prev = if k > 0 { class(w[k - 1]) } else { 0 };
        if c == b'0' && prev & DIGIT == 0 {
            if let Some(end) = hex_address_end(w, k) {
                out.bytes(b"0x#");
                k = end;
                continue;
            }
        }
        // A UUID and a long hex identifier both start with at least 8 hex digits: most words
        // (and numbers) are shorter, and skip both look-ups.
        if c.is_ascii_hexdigit()
            && prev & (ALPHA | DIGIT) == 0
            && w.get(k..k + 8)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        {
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
        let cls = class(c);
        if cls & DIGIT != 0 {
            k += 1;
            while k < w.len() && class(w[k]) & DIGIT != 0 {
                k += 1;
            }
            out.byte(b'#');
            continue;
        }
        if cls & ALPHA != 0 {
            // A word: a letter right after a letter starts no rule (rules 3-5 need a `0` or a
            // word start, rule 6 a digit), so the rest of the word is only lowercased.
            let start = k;
            k += 1;
            while k < w.len() && class(w[k]) & ALPHA != 0 {
                k += 1;
            }
            out.lowercased(&w[start..k]);
        } else {
            out.byte(c.to_ascii_lowercase());
            k += 1;
        }
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

#[cfg(test)]
mod tests;
