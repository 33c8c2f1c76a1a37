//! From response bytes to the returned text: content-type triage, charset decoding, HTML to
//! text, and the character cap.
//!
//! - Text-like types (`text/*`, JSON, XML, JavaScript, YAML, `+json`, `+xml`) are decoded;
//!   `image/`, `audio/`, `video/` and `font/` are refused as unsupported; anything else (including
//!   no type) is sniffed, and a NUL byte in the first KiB means binary.
//! - Charsets: UTF-8 (the default), and `iso-8859-1`/`latin1`/`us-ascii`/`windows-1252`, which
//!   the WHATWG Encoding standard all decodes as windows-1252. Any other label is decoded as UTF-8
//!   and a note says so. Invalid UTF-8 is replaced with U+FFFD and a note says so; a multi-byte
//!   character cut by the byte cap is dropped, not replaced. A leading BOM is dropped.
//! - The invisible characters ([`text::invisible`]: Unicode tags, bidi controls, zero-width
//!   characters) are removed from every text, HTML or not, before the cap.
//! - The character cap counts UTF-16 code units (what JavaScript's `length` counts) and cuts on a
//!   character boundary, after HTML is turned into text, so the budget goes to content.

use crate::html;
use crate::input::Format;
use crate::main_content;

/// The returned text and what happened on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// The text, at most `max_chars` UTF-16 code units.
    pub text: String,
    /// Either cap applied (bytes not all read, or text cut).
    pub truncated: bool,
    /// Body bytes read (at most the byte cap).
    pub bytes: usize,
    /// Things the caller should know (lossy decoding, an unsupported charset, which cap cut).
    pub notes: Vec<String>,
    /// The length of the whole text (before `start_index` and the cap), in UTF-16 code units.
    pub total_chars: usize,
    /// Where `text` starts in the whole text (the requested `start_index`, moved back to a
    /// character boundary, at most `total_chars`).
    pub start_index: usize,
    /// Where the next part starts, when the cap left text after this part.
    pub next_index: Option<usize>,
}

/// A body that is not text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    /// The content type as served, or `None`.
    pub content_type: Option<String>,
    /// Body bytes read.
    pub bytes: usize,
}

/// Turns a response body into the returned text.
///
/// `complete` is false when the reader stopped at the byte cap (or the body is longer than
/// `max_bytes`, which is cut here). The returned part starts `start_index` UTF-16 code units
/// into the whole text, so a long page is read in parts.
pub fn render(
    body: &[u8],
    complete: bool,
    content_type: Option<&str>,
    format: Format,
    start_index: usize,
    max_bytes: usize,
    max_chars: usize,
) -> Result<Rendered, Unsupported> {
    let mut notes = Vec::new();
    let byte_cut = !complete || body.len() > max_bytes;
    let body = &body[..body.len().min(max_bytes)];
    if byte_cut {
        notes.push(format!(
            "the body was cut at {} bytes (the read cap is {max_bytes})",
            body.len()
        ));
    }
    let media = content_type.map(media_type).unwrap_or_default();
    let kind = classify(&media, body);
    if kind == Kind::Binary {
        return Err(Unsupported {
            content_type: content_type.map(str::to_owned),
            bytes: body.len(),
        });
    }
    let decoded = decode(body, byte_cut, content_type.and_then(charset), &mut notes);
    let text = match (kind, format) {
        (Kind::Html, Format::Text) => {
            let extraction = main_content::extract(&decoded);
            if let Some(because) = extraction.page_text_because {
                notes.push(format!(
                    "this is the whole page's text, not its main content: {because}"
                ));
            }
            extraction.text
        }
        (Kind::Html, Format::Page) => main_content::page_text(&decoded),
        _ => text::strip_invisible(&decoded).into_owned(),
    };
    let total_chars = text.encode_utf16().count();
    let (start_byte, start_index) = utf16_offset(&text, start_index);
    if start_index > 0 && start_index >= total_chars {
        notes.push(format!(
            "start_index is at or past the end of the text ({total_chars} characters); the part is empty"
        ));
    }
    let (cut, char_cut) = truncate_utf16(&text[start_byte..], max_chars);
    let next_index = char_cut.then(|| start_index + cut.encode_utf16().count());
    if let Some(next) = next_index {
        notes.push(format!(
            "the text was cut at {max_chars} characters (UTF-16 code units) of {total_chars}; read on with start_index {next}"
        ));
    }
    Ok(Rendered {
        text: cut.to_owned(),
        truncated: byte_cut || char_cut,
        bytes: body.len(),
        notes,
        total_chars,
        start_index,
        next_index,
    })
}

/// The byte index and UTF-16 offset of the character boundary at or before `units` UTF-16
/// code units into `text` (the end of `text` when it is shorter).
fn utf16_offset(text: &str, units: usize) -> (usize, usize) {
    let mut seen = 0;
    for (index, c) in text.char_indices() {
        if seen + c.len_utf16() > units {
            return (index, seen);
        }
        seen += c.len_utf16();
    }
    (text.len(), seen)
}

/// The longest prefix of `text` that is at most `max` UTF-16 code units, cut on a character
/// boundary, and whether anything was cut.
#[must_use]
pub fn truncate_utf16(text: &str, max: usize) -> (&str, bool) {
    let mut units = 0;
    for (index, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            return (&text[..index], true);
        }
    }
    (text, false)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

/// `type/subtype` lowercased, parameters dropped.
fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter, lowercased and unquoted.
fn charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
    })
}

fn classify(media: &str, body: &[u8]) -> Kind {
    match media {
        "text/html" | "application/xhtml+xml" => return Kind::Html,
        "" => {
            return if looks_binary(body) {
                Kind::Binary
            } else if looks_html(body) {
                Kind::Html
            } else {
                Kind::Text
            };
        }
        _ => {}
    }
    let (major, sub) = media.split_once('/').unwrap_or((media, ""));
    let text_like = major == "text"
        || sub.ends_with("+json")
        || sub.ends_with("+xml")
        || (major == "application"
            && matches!(
                sub,
                "json"
                    | "xml"
                    | "javascript"
                    | "ecmascript"
                    | "x-javascript"
                    | "yaml"
                    | "x-yaml"
                    | "toml"
                    | "csv"
                    | "sql"
                    | "graphql"
                    | "x-sh"
                    | "x-www-form-urlencoded"
            ));
    if text_like {
        Kind::Text
    } else if matches!(major, "image" | "audio" | "video" | "font") || looks_binary(body) {
        Kind::Binary
    } else {
        Kind::Text
    }
}

fn looks_binary(body: &[u8]) -> bool {
    body.iter().take(1024).any(|&b| b == 0)
}

fn looks_html(body: &[u8]) -> bool {
    let head: Vec<u8> = body
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take(15)
        .map(u8::to_ascii_lowercase)
        .collect();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html")
}

fn decode(body: &[u8], byte_cut: bool, charset: Option<String>, notes: &mut Vec<String>) -> String {
    match charset.as_deref() {
        None | Some("utf-8" | "utf8" | "unicode-1-1-utf-8") => {}
        Some(
            "iso-8859-1" | "iso8859-1" | "latin1" | "l1" | "us-ascii" | "ascii" | "windows-1252"
            | "cp1252" | "x-cp1252",
        ) => return body.iter().map(|&b| html::windows_1252(b)).collect(),
        Some(other) => notes.push(format!(
            "charset {} is not supported; the body was decoded as UTF-8",
            text::clip(other, 40)
        )),
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let body = if byte_cut {
        &body[..body.len() - incomplete_tail(body)]
    } else {
        body
    };
    match std::str::from_utf8(body) {
        Ok(text) => text.to_owned(),
        Err(_) => {
            notes.push(
                "the body was not valid UTF-8; invalid bytes were replaced with U+FFFD".to_owned(),
            );
            String::from_utf8_lossy(body).into_owned()
        }
    }
}

/// The length of an incomplete UTF-8 sequence at the end of `body` (0 to 3 bytes).
fn incomplete_tail(body: &[u8]) -> usize {
    for back in 1..=3.min(body.len()) {
        let b = body[body.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if need > back { back } else { 0 };
    }
    0
}
