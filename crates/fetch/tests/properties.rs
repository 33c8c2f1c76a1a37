//! Property tests of the fetch core:
//!
//! - nothing panics on arbitrary URL strings, HTML, bodies or curl output;
//! - an IPv4 address inside a refused range is refused however its URL spells it (decimal,
//!   hex, octal, short forms, percent-encoding, trailing dot, userinfo, IPv4-mapped,
//!   IPv4-compatible, NAT64 and 6to4 IPv6), and metadata stays refused with
//!   `allow_private_network`;
//! - whatever a driver answers, the ladder only ever pins addresses the guard allows, and
//!   finishes within a bounded number of steps;
//! - truncation never exceeds the cap and never splits a character;
//! - the main content of a page a person can read something on is never empty, whatever its
//!   structure and class words.

use limit_break_fetch::{
    self as fetch, CurlExit, HttpResponse, Input, Ladder, Settings, Step, ToolInput,
    TransportError, UrlProblem, check_url, guard,
};
use proptest::prelude::*;
use serde_json::json;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Refused IPv4 ranges (network, prefix length, metadata).
const REFUSED_V4: &[(u32, u8, bool)] = &[
    (0x7F00_0000, 8, false),  // loopback
    (0x0A00_0000, 8, false),  // 10/8
    (0xAC10_0000, 12, false), // 172.16/12
    (0xC0A8_0000, 16, false), // 192.168/16
    (0x6440_0000, 10, false), // CGNAT
    (0xA9FE_0000, 16, false), // link-local
    (0x0000_0000, 8, false),  // this network
    (0xE000_0000, 4, false),  // multicast
    (0xF000_0000, 4, false),  // reserved + broadcast
    (0xC000_0200, 24, false), // documentation
    (0xC612_0000, 15, false), // benchmarking
    (0xA9FE_A900, 24, true),  // metadata
    (0x6464_64C8, 32, true),  // Alibaba metadata
];

fn refused_v4() -> impl Strategy<Value = (Ipv4Addr, bool)> {
    (0..REFUSED_V4.len(), any::<u32>()).prop_map(|(i, bits)| {
        let (net, len, metadata) = REFUSED_V4[i];
        let host_mask = if len == 32 { 0 } else { u32::MAX >> len };
        (Ipv4Addr::from(net | (bits & host_mask)), metadata)
    })
}

/// One IPv4 part in decimal, octal or hex (mixed case).
fn part(value: u32, style: u8) -> String {
    match style % 4 {
        0 => value.to_string(),
        1 => format!("0{value:o}"),
        2 => format!("0x{value:x}"),
        _ => format!("0X{value:X}"),
    }
}

/// Spells an IPv4 address as a URL host in one of many forms WHATWG parsers accept.
fn spell(addr: Ipv4Addr, form: u8, styles: [u8; 4]) -> String {
    let [a, b, c, d] = addr.octets().map(u32::from);
    let n = u32::from(addr);
    let hex = |x: u32| format!("{x:x}");
    match form % 14 {
        0 => format!("{a}.{b}.{c}.{d}"),
        1 => n.to_string(),
        2 => format!("0x{n:x}"),
        3 => format!("0{n:o}"),
        4 => format!(
            "{}.{}.{}.{}",
            part(a, styles[0]),
            part(b, styles[1]),
            part(c, styles[2]),
            part(d, styles[3])
        ),
        5 => format!(
            "{}.{}.{}",
            part(a, styles[0]),
            part(b, styles[1]),
            part((c << 8) | d, styles[2])
        ),
        6 => format!(
            "{}.{}",
            part(a, styles[0]),
            part(n & 0x00FF_FFFF, styles[1])
        ),
        7 => format!("{a}.{b}.{c}.{d}.").to_owned(),
        8 => format!("{a}.{b}.{c}.{d}")
            .bytes()
            .map(|byte| format!("%{byte:02X}"))
            .collect(),
        9 => format!("[::ffff:{a}.{b}.{c}.{d}]"),
        10 => format!("[::FFFF:{}:{}]", hex(n >> 16), hex(n & 0xFFFF)),
        11 => format!("[64:ff9b::{}:{}]", hex(n >> 16), hex(n & 0xFFFF)),
        12 => format!("[2002:{}:{}::1]", hex(n >> 16), hex(n & 0xFFFF)),
        _ => format!("[0:0:0:0:0:ffff:{a}.{b}.{c}.{d}]"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_panic_on_arbitrary_url_strings(url in any::<String>(), allow in any::<bool>()) {
        if let Ok(input) = ToolInput::parse(&json!({ "url": url })) {
            let _ = check_url(&input.url, allow);
            let _ = fetch::sibling::sibling_url(&input.url);
            let settings = Settings { allow_private_network: allow, ..Settings::default() };
            let ladder = Ladder::new(input, settings, true, 0);
            let _ = ladder.poll();
        }
    }

    #[test]
    fn no_panic_on_url_like_strings(
        url in "(https?|HTTP|file|gopher)://([a-z0-9@:.%\\[\\]_-]{0,30})(/[ -~]{0,20})?",
    ) {
        if let Ok(input) = ToolInput::parse(&json!({ "url": url })) {
            let _ = check_url(&input.url, false);
            let _ = fetch::sibling::sibling_url(&input.url);
        }
    }

    #[test]
    fn refused_v4_is_refused_in_every_spelling(
        (addr, metadata) in refused_v4(),
        form in any::<u8>(),
        styles in any::<[u8; 4]>(),
        userinfo in any::<bool>(),
        port in proptest::option::of(1024u16..65535),
    ) {
        let host = spell(addr, form, styles);
        let url = format!(
            "http://{}{host}{}/x",
            if userinfo { "user@" } else { "" },
            port.map(|p| format!(":{p}")).unwrap_or_default()
        );
        let input = ToolInput::parse(&json!({ "url": url }));
        prop_assert!(input.is_ok(), "{url} did not parse: {input:?}");
        let input = input.unwrap();
        let refused = matches!(check_url(&input.url, false), Err(UrlProblem::Blocked(_)));
        prop_assert!(refused, "{url} ({addr}) was not refused");
        if metadata {
            let refused = matches!(check_url(&input.url, true), Err(UrlProblem::Blocked(_)));
            prop_assert!(refused, "{url} ({addr}) is metadata and must stay refused");
        }
    }

    #[test]
    fn refused_v4_is_refused_as_a_resolved_address_in_v6_forms(
        (addr, metadata) in refused_v4(),
        form in 0u8..5,
    ) {
        let n = u128::from(u32::from(addr));
        let v6 = match form {
            0 => IpAddr::V4(addr),
            1 => IpAddr::V6(addr.to_ipv6_mapped()),
            2 => IpAddr::V6(Ipv6Addr::from((0x0064_ff9b_u128 << 96) | n)),
            3 => IpAddr::V6(Ipv6Addr::from((0x2002_u128 << 112) | (n << 80) | 1)),
            _ => IpAddr::V6(Ipv6Addr::from((0xffff_u128 << 32 << 16) | n)),
        };
        prop_assert!(guard::judge_resolved("h.example", &[v6], false).is_err(), "{v6}");
        if metadata {
            prop_assert!(guard::judge_resolved("h.example", &[v6], true).is_err(), "{v6}");
        }
    }

    #[test]
    fn the_ladder_only_pins_allowed_addresses_and_always_ends(
        answers in proptest::collection::vec((any::<u8>(), any::<u32>(), any::<u16>(), any::<bool>()), 1..40),
        curl in any::<bool>(),
        wiki in any::<bool>(),
    ) {
        let url = if wiki { "https://en.wikipedia.org/wiki/X" } else { "http://example.com/" };
        let input = ToolInput::parse(&json!({ "url": url })).unwrap();
        let mut ladder = Ladder::new(input, Settings::default(), curl, 0);
        let mut now = 0u64;
        let mut steps = 0;
        for (kind, bits, status, flag) in answers {
            now += u64::from(bits % 5_000);
            let step = ladder.poll().clone();
            let id = match &step {
                Step::Done(_) => break,
                Step::Resolve(s) => s.id,
                Step::Http(s) => {
                    for &addr in &s.addresses {
                        prop_assert!(guard::judge_ip(addr, false).is_ok(), "pinned {addr}");
                    }
                    s.id
                }
                Step::Curl(s) => {
                    if let Some(i) = s.argv.iter().position(|a| a == "--resolve") {
                        let pin = &s.argv[i + 1];
                        let addr = pin.splitn(3, ':').nth(2).unwrap().trim_matches(['[', ']']);
                        let addr: IpAddr = addr.parse().unwrap();
                        prop_assert!(guard::judge_ip(addr, false).is_ok(), "pinned {addr}");
                    }
                    prop_assert_eq!(s.argv[1].as_str(), "-q");
                    s.id
                }
            };
            steps += 1;
            let v4 = IpAddr::V4(Ipv4Addr::from(bits));
            let v6 = IpAddr::V6(Ipv6Addr::from(u128::from(bits) << 64 | 0x2000 << 112));
            let answer = match (&step, kind % 6) {
                (Step::Resolve(_), 0..=2) => Input::Resolved(vec![v4, v6]),
                (Step::Resolve(_), 3) => Input::Resolved(vec![]),
                (Step::Http(_), 0..=2) => Input::Response(HttpResponse {
                    status,
                    content_type: flag.then(|| "text/html".to_owned()),
                    location: (status % 3 == 0).then(|| format!("http://{v4}/r")),
                    body: bits.to_le_bytes().to_vec(),
                    complete: flag,
                }),
                (Step::Curl(_), 0..=2) => Input::CurlExited(CurlExit {
                    exit_code: flag.then_some(i32::from(status % 100)),
                    stdout: format!("HTTP/1.1 {status} X\r\nLocation: //{v4}/\r\n\r\nbody").into_bytes(),
                    stdout_complete: flag,
                    stderr: "e".to_owned(),
                }),
                (_, 4) => Input::TimedOut,
                _ => Input::Failed(TransportError { code: "ECONNRESET".to_owned(), message: String::new() }),
            };
            let _ = ladder.handle(id, answer, now);
        }
        // Each rung takes at most 1 resolve + (max_redirects + 1) hops, each hop maybe a resolve.
        prop_assert!(steps <= 4 * (1 + 2 * 6));
        if let Step::Done(outcome) = ladder.poll() {
            let json = outcome.to_json();
            prop_assert!(json["ok"].is_boolean());
            prop_assert!(json["report"]["rungs"].as_array().unwrap().len() <= 4);
        }
    }

    #[test]
    fn html_to_text_never_panics(html in any::<String>()) {
        let _ = fetch::html::to_text(&html);
        let _ = fetch::main_content::to_text(&html);
    }

    #[test]
    fn html_like_input_never_panics(html in "(<[a-zA-Z/!?-]{0,8}[ a-z=\"'>]{0,6}|&#?[a-zA-Z0-9]{0,6};?|[a-z ]{0,5}){0,40}") {
        let _ = fetch::html::to_text(&html);
        let _ = fetch::main_content::to_text(&html);
    }

    /// Main-content text is never longer than the whole page's text, and a page of content
    /// elements only (no chrome) keeps every word.
    #[test]
    fn main_content_is_a_part_of_the_page(
        words in proptest::collection::vec("[a-z]{1,8}", 1..40),
        tags in proptest::collection::vec(prop_oneof![Just("p"), Just("div"), Just("li"), Just("h2"), Just("pre")], 1..40),
    ) {
        let body: String = words
            .iter()
            .zip(tags.iter().cycle())
            .map(|(word, tag)| format!("<{tag}>{word}</{tag}>"))
            .collect();
        let page = format!("<html><body>{body}</body></html>");
        let whole = fetch::html::to_text(&page);
        let main = fetch::main_content::to_text(&page);
        prop_assert_eq!(main, whole);
    }

    /// A page with readable text never extracts to nothing, whatever chrome, links and hidden
    /// elements wrap it.
    #[test]
    fn extraction_is_never_empty_when_the_page_has_readable_text(
        words in proptest::collection::vec("[a-z]{1,8}", 1..30),
        wrappers in proptest::collection::vec(prop_oneof![
            Just(("<nav>", "</nav>")),
            Just(("<div class='sidebar ad'>", "</div>")),
            Just(("<footer>", "</footer>")),
            Just(("<a href='/x'>", "</a>")),
            Just(("<main>", "</main>")),
            Just(("<article>", "</article>")),
            Just(("<div hidden>", "</div>")),
            Just(("<p>", "</p>")),
            Just(("<li>", "</li>")),
        ], 1..30),
    ) {
        let body: String = words
            .iter()
            .zip(wrappers.iter().cycle())
            .map(|(word, (open, close))| format!("{open}{word}{close}"))
            .collect();
        let page = format!("<html><body>{body}</body></html>");
        let readable = !fetch::main_content::page_text(&page).is_empty();
        let text = fetch::main_content::to_text(&page);
        prop_assert!(!readable || !text.is_empty(), "{page}");
    }

    #[test]
    fn rendering_and_curl_parsing_never_panic(
        body in proptest::collection::vec(any::<u8>(), 0..512),
        complete in any::<bool>(),
        max_bytes in 0usize..600,
        max_chars in 0usize..600,
        html in any::<bool>(),
    ) {
        let content_type = html.then_some("text/html; charset=utf-8");
        if let Ok(rendered) = fetch::body::render(
            &body, complete, content_type, fetch::Format::Text, 0, max_bytes, max_chars,
        ) {
            prop_assert!(rendered.bytes <= max_bytes);
            prop_assert!(rendered.text.encode_utf16().count() <= max_chars);
        }
        let _ = fetch::curl::parse_printed(&body);
    }

    /// Reading part after part with each answer's next index gives the whole text once.
    #[test]
    fn parts_read_with_next_index_make_the_whole_text(text in any::<String>(), max in 2usize..40) {
        let whole = fetch::body::render(text.as_bytes(), true, Some("text/plain"), fetch::Format::Text, 0, usize::MAX, usize::MAX).unwrap().text;
        let mut joined = String::new();
        let mut start = 0;
        loop {
            let part = fetch::body::render(text.as_bytes(), true, Some("text/plain"), fetch::Format::Text, start, usize::MAX, max).unwrap();
            prop_assert_eq!(part.start_index, start);
            joined.push_str(&part.text);
            match part.next_index {
                Some(next) => { prop_assert!(next > start); start = next; }
                None => break,
            }
        }
        prop_assert_eq!(joined, whole);
    }

    #[test]
    fn truncation_respects_the_cap_and_char_boundaries(text in any::<String>(), max in 0usize..64) {
        let (cut, truncated) = fetch::body::truncate_utf16(&text, max);
        prop_assert!(text.starts_with(cut));
        prop_assert!(cut.encode_utf16().count() <= max);
        prop_assert_eq!(truncated, cut.len() < text.len());
        if truncated {
            let next = text[cut.len()..].chars().next().unwrap();
            prop_assert!(cut.encode_utf16().count() + next.len_utf16() > max);
        }
    }

    /// Pages built from the parts extraction judges (landmarks, chrome class words, hidden
    /// elements, links, scripts, comments): when the page's visible text has a word, so does the
    /// extraction.
    #[test]
    fn a_page_with_readable_text_is_never_extracted_empty(body in page_body(), title in proptest::option::of("[a-z]{1,8}")) {
        let html = format!(
            "<html><head>{}</head><body>{body}</body></html>",
            title.map_or(String::new(), |t| format!("<title>{t}</title>"))
        );
        let readable = |text: &str| text.chars().any(char::is_alphanumeric);
        if readable(&fetch::main_content::page_text(&html)) {
            let extracted = fetch::main_content::extract(&html).text;
            prop_assert!(readable(&extracted), "{html}");
        }
    }
}

/// A page body: nested elements whose tags, class words and visibility are the ones the
/// extractor weighs, around short runs of words.
fn page_body() -> impl Strategy<Value = String> {
    let text = prop::collection::vec(
        prop::sample::select(vec![
            "the",
            "proxy",
            "drops",
            "TLS",
            "Advertisement",
            "menu",
            "reply",
            "42",
            "",
        ]),
        0..12,
    )
    .prop_map(|words| words.join(" "));
    text.prop_recursive(5, 64, 5, |inner| {
        (
            prop::sample::select(vec![
                "div", "section", "article", "main", "nav", "aside", "header", "footer", "p",
                "span", "a", "ul", "li", "h2", "script", "style", "noscript", "form", "pre",
                "table",
            ]),
            prop::sample::select(vec![
                "",
                "ad",
                "nav",
                "sidebar",
                "comment",
                "content",
                "post",
                "menu",
                "related",
                "Page-ad-margins",
            ]),
            prop::sample::select(vec![
                "",
                " hidden",
                " aria-hidden=\"true\"",
                " style=\"display:none\"",
                " style=\"left:-9999px;position:absolute\"",
                " role=\"main\"",
            ]),
            prop::collection::vec(inner, 0..5),
        )
            .prop_map(|(tag, class, attr, children)| {
                let href = if tag == "a" { " href=\"/x\"" } else { "" };
                format!(
                    "<{tag} class=\"{class}\"{attr}{href}>{}</{tag}>",
                    children.concat()
                )
            })
    })
}
