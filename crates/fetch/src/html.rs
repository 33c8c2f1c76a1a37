//! A small HTML-to-text extractor: enough to read an article, not a browser.
//!
//! What it keeps:
//! - the text of the body, with runs of whitespace collapsed to one space;
//! - headings as Markdown-style lines (`# `, `## `, … by level);
//! - paragraphs, lists, tables, block quotes and other blocks as lines, with at most one blank
//!   line between blocks; list items start with `- `; table cells are joined with ` | `;
//! - link text (the target is dropped), and inline elements' text in place;
//! - `<pre>` content with its whitespace and line breaks as they are;
//! - character references: numeric (decimal and hex; the windows-1252 remap for 0x80–0x9F;
//!   invalid code points become U+FFFD) and about 90 common named ones (the rest stay as written).
//!
//! What it drops: `<head>` (ended by `</head>`, `<body>` or the first tag that cannot be in a
//! head), `<script>`, `<style>`, `<noscript>` in the head, `<template>`, `<svg>`, `<iframe>`,
//! `<noembed>`, `<noframes>`, `<object>`, comments, doctype and processing instructions, every
//! attribute (image `alt` text included), and a tag left open at the end of input. A
//! `<noscript>` in the body is read as markup: it is what a browser without scripts shows.
//!
//! It never fails and never panics: any byte sequence that is a `str` gives a `String`, in one
//! pass over the input.

/// Elements whose content is not markup and is dropped, up to the matching end tag.
const RAW_DROPPED: &[&str] = &[
    "script", "style", "noscript", "iframe", "noembed", "noframes", "xmp",
];

/// Elements whose content (markup included) is dropped, with nesting counted.
const CONTAINER_DROPPED: &[&str] = &["svg", "template", "object"];

/// Elements that may appear in `<head>`; any other start tag ends an unclosed head.
const HEAD_CONTENT: &[&str] = &[
    "title", "meta", "link", "style", "script", "noscript", "base", "template",
];

/// Blocks separated by a blank line.
const PARAGRAPH_BLOCKS: &[&str] = &[
    "p",
    "ul",
    "ol",
    "dl",
    "table",
    "blockquote",
    "figure",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "aside",
    "nav",
    "form",
    "address",
    "details",
    "fieldset",
    "hr",
    "body",
    "html",
];

/// Blocks that start a new line.
const LINE_BLOCKS: &[&str] = &[
    "br",
    "div",
    "dt",
    "dd",
    "tr",
    "caption",
    "figcaption",
    "summary",
    "option",
    "legend",
    "center",
    "li",
];

/// Converts a whole HTML document or fragment to readable text (every part of the page).
#[must_use]
pub fn to_text(html: &str) -> String {
    let events = tokenize(html);
    let mut out = Out::default();
    out.replay(&events, 0..events.len(), &[]);
    out.finish()
}

/// The attributes the extractor reads; every other attribute is dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Attrs {
    pub(crate) id: String,
    pub(crate) class: String,
    pub(crate) role: String,
    /// Hidden from a person by the element itself: `hidden`, `aria-hidden="true"`, or an
    /// inline style that hides it (see [`style_hides`]).
    pub(crate) hidden: bool,
    /// The inline style's text colour and background colour as RGB (see [`colour`]), so that
    /// text in the colour of the background it sits on can be dropped.
    pub(crate) colour: Option<u32>,
    pub(crate) background: Option<u32>,
    /// A `<meta>`'s `name`, `property` or `itemprop` (lowercase) and its `content`, when it has
    /// both.
    pub(crate) meta: Option<Box<(String, String)>>,
    /// A `<script type="application/ld+json">`.
    pub(crate) json_ld: bool,
}

/// What the page declares about itself outside its body text: the `<title>`, the `<meta>`
/// author, date and titles, and the JSON-LD (`<script type="application/ld+json">`) blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    pub(crate) title: String,
    /// `(name, content)` of each `<meta>` with both, names lowercase.
    pub(crate) meta: Vec<(String, String)>,
    pub(crate) json_ld: Vec<String>,
}

/// One piece of the document, after what is never text (head, scripts, comments) is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    Start {
        name: String,
        attrs: Attrs,
        self_closing: bool,
    },
    End(String),
    /// Decoded character data, whitespace as written.
    Text(String),
}

/// The document as events, in one pass over the input.
pub(crate) fn tokenize(html: &str) -> Vec<Event> {
    tokenize_declaring(html).0
}

/// The document as events, and what it declares about itself, in one pass over the input.
pub(crate) fn tokenize_declaring(html: &str) -> (Vec<Event>, Declared) {
    let mut events = Vec::new();
    let mut declared = Declared::default();
    let mut in_title = false;
    let bytes = html.as_bytes();
    let mut i = 0;
    let mut text_start = 0;
    let mut skip: Option<(&'static str, usize)> = None;
    let mut in_head = false;
    let push_text = |events: &mut Vec<Event>, text: &str| {
        if !text.is_empty() {
            events.push(Event::Text(decode_entities(text)));
        }
    };
    while i < bytes.len() {
        if bytes[i] != b'<' {
            i += 1;
            continue;
        }
        let (markup, end) = parse_markup(html, i);
        if matches!(markup, Markup::Text) {
            i += 1;
            continue;
        }
        if skip.is_none() && !in_head {
            push_text(&mut events, &html[text_start..i]);
        } else if in_title && declared.title.is_empty() {
            declared.title = decode_entities(html[text_start..i].trim());
        }
        i = end;
        text_start = end;
        match markup {
            Markup::Text | Markup::Ignored => {}
            Markup::End(name) => {
                if let Some((skipped, depth)) = &mut skip {
                    if name == *skipped {
                        *depth -= 1;
                        if *depth == 0 {
                            skip = None;
                        }
                    }
                    continue;
                }
                if name == "head" {
                    in_head = false;
                    continue;
                }
                if name == "title" {
                    in_title = false;
                }
                if !in_head {
                    events.push(Event::End(name));
                }
            }
            Markup::Start(name, attrs, self_closing) => {
                // A `noscript` in the body is what a browser without scripts shows, and this
                // reader runs none: its markup is read (a forum's posts can live only there).
                let shown_without_scripts = name == "noscript" && !in_head;
                if RAW_DROPPED.contains(&name.as_str()) && !shown_without_scripts {
                    i = skip_raw_text(html, end, &name);
                    if name == "script" && attrs.json_ld {
                        declared
                            .json_ld
                            .push(raw_text_content(&html[end..i]).to_owned());
                    }
                    text_start = i;
                    continue;
                }
                if let (true, Some(meta)) = (name == "meta", &attrs.meta) {
                    declared.meta.push((**meta).clone());
                }
                if name == "title" && skip.is_none() {
                    in_title = !self_closing;
                }
                if let Some((skipped, depth)) = &mut skip {
                    if name == *skipped && !self_closing {
                        *depth += 1;
                    }
                    continue;
                }
                if in_head {
                    if HEAD_CONTENT.contains(&name.as_str()) {
                        continue;
                    }
                    in_head = false;
                }
                if name == "head" && !self_closing {
                    in_head = true;
                    continue;
                }
                if let Some(&dropped) = CONTAINER_DROPPED.iter().find(|d| **d == name) {
                    if !self_closing {
                        skip = Some((dropped, 1));
                    }
                    continue;
                }
                events.push(Event::Start {
                    name,
                    attrs,
                    self_closing,
                });
            }
        }
    }
    if skip.is_none() && !in_head {
        push_text(&mut events, &html[text_start..]);
    }
    (events, declared)
}

/// A raw-text element's content without its end tag (`…</script>` gives `…`).
fn raw_text_content(with_end: &str) -> &str {
    with_end.rfind("</").map_or(with_end, |p| &with_end[..p])
}

enum Markup {
    /// A `<` that starts nothing: it is text.
    Text,
    /// A comment, doctype, processing instruction, or an unterminated tag at the end.
    Ignored,
    /// A start tag: lowercase name, the attributes read, self-closing.
    Start(String, Attrs, bool),
    /// An end tag: lowercase name.
    End(String),
}

/// Reads the markup starting at `bytes[at] == b'<'`; returns it and the index after it.
fn parse_markup(html: &str, at: usize) -> (Markup, usize) {
    let bytes = html.as_bytes();
    let rest = &bytes[at..];
    if rest.starts_with(b"<!--") {
        let end = find(bytes, at + 4, b"-->").map_or(bytes.len(), |p| p + 3);
        // `<!-->` and `<!--->` are empty comments.
        let end = if rest.starts_with(b"<!-->") {
            at + 5
        } else if rest.starts_with(b"<!--->") {
            at + 6
        } else {
            end
        };
        return (Markup::Ignored, end);
    }
    match rest.get(1) {
        Some(b'!' | b'?') => (Markup::Ignored, after_gt(bytes, at + 2)),
        Some(b'/') => match rest.get(2) {
            Some(c) if c.is_ascii_alphabetic() => {
                let (name, name_end) = tag_name(bytes, at + 2);
                let (end, _) = tag_end(bytes, name_end);
                if end > bytes.len() {
                    return (Markup::Ignored, bytes.len());
                }
                (Markup::End(name), end)
            }
            Some(b'>') => (Markup::Ignored, at + 3),
            Some(_) => (Markup::Ignored, after_gt(bytes, at + 2)),
            None => (Markup::Text, at + 1),
        },
        Some(c) if c.is_ascii_alphabetic() => {
            let (name, name_end) = tag_name(bytes, at + 1);
            let (end, self_closing) = tag_end(bytes, name_end);
            if end > bytes.len() {
                return (Markup::Ignored, bytes.len());
            }
            let attrs = attributes(&html[name_end..end - 1]);
            (Markup::Start(name, attrs, self_closing), end)
        }
        _ => (Markup::Text, at + 1),
    }
}

fn tag_name(bytes: &[u8], from: usize) -> (String, usize) {
    let end = bytes[from..]
        .iter()
        .position(|b| b.is_ascii_whitespace() || matches!(b, b'/' | b'>'))
        .map_or(bytes.len(), |p| from + p);
    let name = String::from_utf8_lossy(&bytes[from..end]).to_ascii_lowercase();
    (name, end)
}

/// The index after a tag's `>`, skipping quoted attribute values, and whether it ends `/>`.
/// Past the end of input means the tag is unterminated.
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut quote = None;
    let mut previous = 0u8;
    for (offset, &b) in bytes[from..].iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' if previous.is_ascii_whitespace() || previous == b'=' => {
                    quote = Some(b);
                }
                b'>' => return (from + offset + 1, previous == b'/'),
                _ => {}
            },
        }
        previous = b;
    }
    (bytes.len() + 1, false)
}

/// Reads `id`, `class`, `role` and the hidden markers from a start tag's attribute text.
fn attributes(text: &str) -> Attrs {
    let mut attrs = Attrs::default();
    let (mut meta_name, mut meta_content) = (String::new(), String::new());
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            if !meta_name.is_empty() && !meta_content.is_empty() {
                attrs.meta = Some(Box::new((meta_name, meta_content)));
            }
            return attrs;
        }
        let name_len = rest
            .find(|c: char| c.is_ascii_whitespace() || matches!(c, '=' | '/'))
            .unwrap_or(rest.len());
        let name = rest[..name_len].to_ascii_lowercase();
        rest = rest[name_len..].trim_start();
        let mut value = String::new();
        if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (raw, used) = match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let close = after[1..].find(q).map_or(after.len(), |p| p + 1);
                    (&after[1..close], (close + 1).min(after.len()))
                }
                _ => {
                    let end = after
                        .find(|c: char| c.is_ascii_whitespace())
                        .unwrap_or(after.len());
                    (&after[..end], end)
                }
            };
            value = decode_entities(raw);
            rest = &after[used..];
        }
        match name.as_str() {
            "id" => attrs.id = value,
            "class" => attrs.class = value,
            "role" => attrs.role = value.trim().to_ascii_lowercase(),
            "hidden" => attrs.hidden = true,
            "aria-hidden" => attrs.hidden |= value.trim().eq_ignore_ascii_case("true"),
            "style" => read_style(&value, &mut attrs),
            "name" | "property" | "itemprop" if meta_name.is_empty() => {
                meta_name = value.trim().to_ascii_lowercase();
            }
            "content" => meta_content = value.trim().to_owned(),
            "type" => attrs.json_ld = value.trim().eq_ignore_ascii_case("application/ld+json"),
            _ => {}
        }
    }
}

/// Reads an inline style: whether it hides the element, and its colours.
fn read_style(style: &str, attrs: &mut Attrs) {
    let style: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let declarations: Vec<(&str, &str)> = style
        .split(';')
        .filter_map(|d| d.split_once(':'))
        .map(|(property, value)| (property, value.trim_end_matches("!important")))
        .collect();
    attrs.hidden |= style_hides(&declarations);
    for &(property, value) in &declarations {
        match property {
            "color" => attrs.colour = colour(value),
            "background" | "background-color" => attrs.background = colour(value),
            _ => {}
        }
    }
}

/// Whether inline style declarations (`property`, `value`, lowercase without whitespace) hide
/// the element from a person: `display: none`, `visibility: hidden`, `opacity: 0`,
/// `font-size: 0`, a position or indent far off screen (`left: -9999px`), a `clip` or
/// `clip-path` to nothing, or a box of at most one pixel that hides its overflow.
pub(crate) fn style_hides(declarations: &[(&str, &str)]) -> bool {
    let mut tiny_box = false;
    let mut overflow_hidden = false;
    for &(property, value) in declarations {
        let hides = match property {
            "display" => value == "none",
            "visibility" => value == "hidden" || value == "collapse",
            "opacity" => length(value).is_some_and(|(n, _)| n <= 0.0),
            "font-size" => length(value).is_some_and(|(n, _)| n <= 0.0),
            "left" | "top" | "right" | "margin-left" | "margin-top" | "text-indent" => {
                length(value).is_some_and(|(n, unit)| off_screen(n, unit))
            }
            "clip" => {
                value.starts_with("rect(")
                    && value[5..]
                        .trim_end_matches(')')
                        .split(',')
                        .flat_map(|part| part.split("px"))
                        .filter(|part| !part.is_empty())
                        .all(|part| part.parse::<f64>().is_ok_and(|n| n <= 1.0))
            }
            "clip-path" => {
                matches!(
                    value,
                    "inset(50%)" | "inset(100%)" | "circle(0)" | "circle(0px)"
                )
            }
            "width" | "height" | "max-width" | "max-height" => {
                tiny_box |= length(value).is_some_and(|(n, _)| n <= 1.0);
                false
            }
            "overflow" => {
                overflow_hidden |= value == "hidden" || value == "clip";
                false
            }
            _ => false,
        };
        if hides {
            return true;
        }
    }
    tiny_box && overflow_hidden
}

/// A CSS number and its unit (`-9999px` is `(-9999.0, "px")`).
fn length(value: &str) -> Option<(f64, &str)> {
    let split = value
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.')))
        .unwrap_or(value.len());
    let number = value[..split].parse().ok()?;
    Some((number, &value[split..]))
}

/// A negative offset that puts the element outside any screen.
fn off_screen(number: f64, unit: &str) -> bool {
    match unit {
        "" | "px" | "pt" => number <= -999.0,
        _ => number <= -100.0,
    }
}

/// A colour value as RGB, for comparison: `#fff`, `#FFFFFF`, `white` and `rgb(255,255,255)`
/// are all `0xffffff`. `None` for a value that is no single opaque colour (`transparent`,
/// `inherit`, other names, images, gradients).
pub(crate) fn colour(value: &str) -> Option<u32> {
    match value {
        "white" => return Some(0xff_ffff),
        "black" => return Some(0),
        _ => {}
    }
    if let Some(hex) = value.strip_prefix('#') {
        let digits = match hex.len() {
            3 => hex.chars().flat_map(|c| [c, c]).collect(),
            6 => hex.to_owned(),
            _ => return None,
        };
        return u32::from_str_radix(&digits, 16).ok();
    }
    let inner = value.strip_prefix("rgb(")?.strip_suffix(')')?;
    let parts: Vec<u32> = inner
        .split(',')
        .map(|p| p.parse::<u8>().map(u32::from))
        .collect::<Result<_, _>>()
        .ok()?;
    match parts.as_slice() {
        [r, g, b] => Some(r << 16 | g << 8 | b),
        _ => None,
    }
}

fn after_gt(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'>')
        .map_or(bytes.len(), |p| from + p + 1)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// The index after the end tag `</name` (case-insensitive, followed by space, `/` or `>`) that
/// closes a raw-text element, or the end of input.
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let bytes = html.as_bytes();
    let mut i = from;
    while let Some(p) = find(bytes, i, b"</") {
        let name_end = p + 2 + name.len();
        let matches_name = bytes
            .get(p + 2..name_end)
            .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
        let terminated = matches!(bytes.get(name_end), Some(b) if b.is_ascii_whitespace() || matches!(b, b'/' | b'>'));
        if matches_name && terminated {
            return after_gt(bytes, name_end);
        }
        i = p + 2;
    }
    bytes.len()
}

/// The text being built, with pending separators applied lazily so that no block leaves
/// trailing spaces or more than one blank line.
#[derive(Default)]
pub(crate) struct Out {
    text: String,
    pending_break: u8,
    pending_space: bool,
    /// A table cell already started on the current row.
    cell_open: bool,
    /// A list item's `- ` was written and nothing after it yet: a block starting now stays on
    /// the item's line (`- ### Title`, not `-` and the title two lines below).
    item_open: bool,
}

impl Out {
    /// Renders the events in `range`, leaving out the (sorted, disjoint) ranges in `dropped`.
    pub(crate) fn replay(
        &mut self,
        events: &[Event],
        range: std::ops::Range<usize>,
        dropped: &[std::ops::Range<usize>],
    ) {
        let mut pre_depth = 0usize;
        let mut dropped = dropped.iter().peekable();
        let mut i = range.start;
        while i < range.end {
            while dropped.next_if(|d| d.end <= i).is_some() {}
            if let Some(d) = dropped.peek() {
                if d.start <= i {
                    i = d.end;
                    continue;
                }
            }
            match &events[i] {
                Event::Start { name, .. } => self.start_tag(name, &mut pre_depth),
                Event::End(name) => self.end_tag(name, &mut pre_depth),
                Event::Text(text) => self.text(text, pre_depth > 0),
            }
            i += 1;
        }
    }

    fn text(&mut self, text: &str, pre: bool) {
        for c in text.chars() {
            if text::invisible(c) {
                continue;
            }
            if pre {
                self.flush();
                self.text.push(c);
            } else if c.is_whitespace() {
                self.pending_space = true;
            } else {
                self.flush();
                self.text.push(c);
            }
        }
    }

    fn word(&mut self, word: &str) {
        self.flush();
        self.text.push_str(word);
    }

    fn separate(&mut self, lines: u8) {
        self.pending_break = self.pending_break.max(lines);
        self.pending_space = false;
    }

    fn flush(&mut self) {
        if std::mem::take(&mut self.item_open) {
            self.pending_break = 0;
            self.pending_space = false;
        }
        if self.text.is_empty() {
            self.pending_break = 0;
            self.pending_space = false;
            return;
        }
        if self.pending_break > 0 {
            let kept = self.text.trim_end_matches([' ', '\t']).len();
            self.text.truncate(kept);
            let have = self.text.len() - self.text.trim_end_matches('\n').len();
            for _ in have..usize::from(self.pending_break) {
                self.text.push('\n');
            }
        } else if self.pending_space && !self.text.ends_with([' ', '\n']) {
            self.text.push(' ');
        }
        self.pending_break = 0;
        self.pending_space = false;
    }

    fn start_tag(&mut self, name: &str, pre_depth: &mut usize) {
        if let Some(level) = heading_level(name) {
            self.separate(2);
            self.word(&format!("{} ", "#".repeat(level)));
            self.pending_space = false;
        } else if name == "li" {
            self.item_open = false;
            self.separate(1);
            self.word("- ");
            self.item_open = true;
        } else if name == "pre" {
            self.separate(2);
            *pre_depth += 1;
        } else if name == "tr" {
            self.separate(1);
            self.cell_open = false;
        } else if matches!(name, "td" | "th") {
            if self.cell_open {
                self.pending_space = false;
                self.word(" | ");
            }
            self.cell_open = true;
        } else if PARAGRAPH_BLOCKS.contains(&name) {
            self.separate(2);
        } else if LINE_BLOCKS.contains(&name) {
            self.separate(1);
        }
    }

    fn end_tag(&mut self, name: &str, pre_depth: &mut usize) {
        if heading_level(name).is_some() || PARAGRAPH_BLOCKS.contains(&name) {
            self.separate(2);
        } else if name == "pre" {
            *pre_depth = pre_depth.saturating_sub(1);
            self.separate(2);
        } else if LINE_BLOCKS.contains(&name) {
            self.separate(1);
        }
        if name == "tr" || name == "table" {
            self.cell_open = false;
        }
        if matches!(name, "li" | "ul" | "ol") {
            self.item_open = false;
        }
    }

    pub(crate) fn finish(mut self) -> String {
        let kept = self.text.trim_end().len();
        self.text.truncate(kept);
        self.text
    }
}

pub(crate) fn heading_level(name: &str) -> Option<usize> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(usize::from(d - b'0')),
        _ => None,
    }
}

/// Common named character references (the full HTML table has over 2,000; these cover prose).
const NAMED: &[(&str, &str)] = &[
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("quot", "\""),
    ("apos", "'"),
    ("nbsp", "\u{a0}"),
    ("shy", "\u{ad}"),
    ("copy", "©"),
    ("reg", "®"),
    ("trade", "™"),
    ("hellip", "…"),
    ("mdash", "—"),
    ("ndash", "–"),
    ("minus", "−"),
    ("lsquo", "‘"),
    ("rsquo", "’"),
    ("sbquo", "‚"),
    ("ldquo", "“"),
    ("rdquo", "”"),
    ("bdquo", "„"),
    ("laquo", "«"),
    ("raquo", "»"),
    ("lsaquo", "‹"),
    ("rsaquo", "›"),
    ("bull", "•"),
    ("middot", "·"),
    ("deg", "°"),
    ("plusmn", "±"),
    ("times", "×"),
    ("divide", "÷"),
    ("frac12", "½"),
    ("frac14", "¼"),
    ("frac34", "¾"),
    ("sup1", "¹"),
    ("sup2", "²"),
    ("sup3", "³"),
    ("micro", "µ"),
    ("para", "¶"),
    ("sect", "§"),
    ("dagger", "†"),
    ("Dagger", "‡"),
    ("prime", "′"),
    ("Prime", "″"),
    ("euro", "€"),
    ("pound", "£"),
    ("yen", "¥"),
    ("cent", "¢"),
    ("curren", "¤"),
    ("iexcl", "¡"),
    ("iquest", "¿"),
    ("ordf", "ª"),
    ("ordm", "º"),
    ("not", "¬"),
    ("macr", "¯"),
    ("acute", "´"),
    ("cedil", "¸"),
    ("uml", "¨"),
    ("larr", "←"),
    ("rarr", "→"),
    ("uarr", "↑"),
    ("darr", "↓"),
    ("harr", "↔"),
    ("rArr", "⇒"),
    ("lArr", "⇐"),
    ("hArr", "⇔"),
    ("le", "≤"),
    ("ge", "≥"),
    ("ne", "≠"),
    ("asymp", "≈"),
    ("equiv", "≡"),
    ("infin", "∞"),
    ("sum", "∑"),
    ("prod", "∏"),
    ("radic", "√"),
    ("part", "∂"),
    ("isin", "∈"),
    ("alpha", "α"),
    ("beta", "β"),
    ("gamma", "γ"),
    ("delta", "δ"),
    ("epsilon", "ε"),
    ("theta", "θ"),
    ("lambda", "λ"),
    ("mu", "μ"),
    ("pi", "π"),
    ("sigma", "σ"),
    ("tau", "τ"),
    ("phi", "φ"),
    ("omega", "ω"),
    ("Delta", "Δ"),
    ("Sigma", "Σ"),
    ("Omega", "Ω"),
    ("ensp", "\u{2002}"),
    ("emsp", "\u{2003}"),
    ("thinsp", "\u{2009}"),
    ("zwnj", "\u{200c}"),
    ("zwj", "\u{200d}"),
    ("lrm", "\u{200e}"),
    ("rlm", "\u{200f}"),
];

/// Named references recognised without the closing `;` (the legacy forms browsers accept).
const LEGACY: &[&str] = &["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"];

/// Decodes character references in text content.
#[must_use]
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        match reference(rest) {
            Some((decoded, used)) => {
                out.push_str(&decoded);
                rest = &rest[used..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The reference at the start of `text` (which starts with `&`): its text and length.
fn reference(text: &str) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'#') {
        let (radix, start) = match bytes.get(2) {
            Some(b'x' | b'X') => (16, 3),
            _ => (10, 2),
        };
        let digits = bytes[start..]
            .iter()
            .take_while(|b| {
                if radix == 16 {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
            .count();
        if digits == 0 {
            return None;
        }
        let value = text[start..start + digits]
            .chars()
            .try_fold(0u32, |acc, c| {
                Some(acc.saturating_mul(radix).saturating_add(c.to_digit(radix)?))
            })?;
        let mut used = start + digits;
        if bytes.get(used) == Some(&b';') {
            used += 1;
        }
        let c = match value {
            0x80..=0x9F => windows_1252(value as u8),
            0 | 0xD800..=0xDFFF => '\u{FFFD}',
            _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
        };
        return Some((c.to_string(), used));
    }
    let name_len = bytes[1..]
        .iter()
        .take(32)
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let name = &text[1..1 + name_len];
    if bytes.get(1 + name_len) == Some(&b';') {
        if let Some(&(_, decoded)) = NAMED.iter().find(|(n, _)| *n == name) {
            return Some((decoded.to_owned(), name_len + 2));
        }
    }
    // Legacy references also match as the longest prefix of the name (`&ampx` is `&x`).
    let legacy = LEGACY
        .iter()
        .filter(|legacy| name.starts_with(**legacy))
        .max_by_key(|legacy| legacy.len())?;
    let &(_, decoded) = NAMED.iter().find(|(n, _)| n == legacy)?;
    Some((decoded.to_owned(), legacy.len() + 1))
}

/// windows-1252, which WHATWG also uses for `iso-8859-1` and `us-ascii`: the body decoder's
/// single-byte charset, and here the remap of numeric references to 0x80–0x9F.
pub(crate) fn windows_1252(b: u8) -> char {
    const C1: [u16; 32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
        0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ];
    match b {
        0x80..=0x9F => char::from_u32(u32::from(C1[usize::from(b - 0x80)])).unwrap_or('\u{FFFD}'),
        _ => char::from(b),
    }
}
