//! Rung 4's rewrite: a sibling host of the same service whose certificate still verifies.
//!
//! One entry today, Wikipedia → the Wikimedia Core REST API:
//! `https://<lang>.wikipedia.org/wiki/<Title>` (also `<lang>.m.wikipedia.org`, and
//! `/w/index.php?title=<Title>`) becomes
//! `https://api.wikimedia.org/core/v1/wikipedia/<lang>/page/<Title>`.
//!
//! - The host must be exactly `<lang>.wikipedia.org` or `<lang>.m.wikipedia.org` (a trailing dot
//!   and case are ignored), `<lang>` being letters, digits and hyphens, not `www`, `m` or another
//!   service name. Other wikis (Wiktionary, Fandom, any host with a `/wiki/` path) get no sibling.
//! - The title is percent-decoded once (invalid UTF-8 gives no sibling), spaces become
//!   underscores, and it is encoded again as one path segment, so `/` becomes `%2F`, `%` becomes
//!   `%25` and non-ASCII is UTF-8 percent-encoded. Query and fragment are dropped.
//! - `Special:` and `Media:` pages, an empty title, and `index.php` requests for anything but
//!   viewing the current revision (`action` other than `view`, `oldid`, `diff`, `curid`) get none.
//!
//! The sibling answers with a JSON page object holding the page's wikitext (`source`), not the
//! article's HTML; the report says so.

use url::Url;

/// The sibling service's base URL; the language and the encoded title follow.
pub const WIKIMEDIA_PAGE_API: &str = "https://api.wikimedia.org/core/v1/wikipedia/";

/// Host labels that are Wikimedia services rather than languages.
const NOT_LANGUAGES: &[&str] = &["www", "m", "api", "upload", "mobile", "meta", "commons"];

/// What a sibling response is, for the report.
pub const SIBLING_NOTE: &str = "answered by the sibling host api.wikimedia.org: a JSON page object \
                                with the page's wikitext in `source`, not the article's HTML";

/// The sibling URL for `url`, if the rewrite table has one.
#[must_use]
pub fn sibling_url(url: &Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let Some(url::Host::Domain(host)) = url.host() else {
        return None;
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let lang = wikipedia_language(&host)?;
    let raw_title = if let Some(rest) = url.path().strip_prefix("/wiki/") {
        percent_decode(rest)?
    } else if url.path() == "/w/index.php" {
        let mut title = None;
        for (key, value) in url.query_pairs() {
            match key.as_ref() {
                "title" => title = Some(value.into_owned()),
                "action" if value != "view" => return None,
                "oldid" | "diff" | "curid" => return None,
                _ => {}
            }
        }
        title?
    } else {
        return None;
    };
    let title = raw_title.replace(' ', "_");
    let title = title.trim_matches('_');
    if title.is_empty() {
        return None;
    }
    let namespace = title.split_once(':').map(|(ns, _)| ns.to_ascii_lowercase());
    if matches!(namespace.as_deref(), Some("special" | "media")) {
        return None;
    }
    Url::parse(&format!(
        "{WIKIMEDIA_PAGE_API}{lang}/page/{}",
        encode_segment(title)
    ))
    .ok()
}

/// `<lang>` of `<lang>.wikipedia.org` or `<lang>.m.wikipedia.org`.
fn wikipedia_language(host: &str) -> Option<&str> {
    let rest = host.strip_suffix(".wikipedia.org")?;
    let lang = rest.strip_suffix(".m").unwrap_or(rest);
    let valid = !lang.is_empty()
        && lang.len() <= 24
        && lang
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && lang.as_bytes()[0].is_ascii_lowercase()
        && !NOT_LANGUAGES.contains(&lang);
    valid.then_some(lang)
}

/// Decodes `%XX` escapes once; `None` if the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Encodes `text` as one path segment: keeps ASCII letters, digits and `-._~!$'()*,:@`,
/// percent-encodes every other byte.
#[must_use]
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$'()*,:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
