//! Main-content extraction: the part of an HTML page a reader came for, without the site's
//! navigation, headers, footers, sidebars and banners.
//!
//! It works on structure and text density, never on a site's or generator's own names:
//! 1. The page becomes a tree of elements, each knowing how many characters of visible text it
//!    holds, how many of those are link text and how many paragraph text. Hidden elements
//!    ([`crate::html`] decides from the page's own attributes and inline styles, plus text in
//!    the colour of its inline background) count nowhere, unless one holds most of the page's
//!    text: then the page's script shows it, and it is kept.
//! 2. Chrome is marked: the elements HTML gives that meaning (`nav`, `aside`, `footer`, forms,
//!    dialogs, a small `noscript`, a `header` without the page's `h1`), the matching ARIA
//!    roles, hidden elements, and elements whose `class` or `id` words name chrome (a word
//!    starting with `nav`, `menu`, `sidebar`, `breadcrumb`, `footer`, `cookie`, …; see
//!    [`CHROME_WORDS`]); never an element holding most of the page's visible text outside links
//!    (unless it is a `nav`), nor, for a `banner` word or a `tablist` role, a block that is
//!    mostly paragraphs.
//! 3. The root is the declared main content (every `main`, `role="main"` and `article`, and the
//!    nearest common ancestor of several articles unless the page declares itself an article)
//!    with the most paragraph text, narrowed to the
//!    smallest holding nearly all of it, when it holds enough of the page's text outside chrome;
//!    otherwise the body. The body, or the declared root of a page that declares an article, is
//!    narrowed to the one child that holds nearly all of its text, or most of its paragraph text
//!    and a fair share of its text.
//! 4. The root is rendered as [`crate::html::to_text`] renders a page, chrome left out, and in
//!    prose, small blocks that are mostly links left out too; so are captions, and comments
//!    (containers whose words start with `comment`) below an article of at least 2,000
//!    characters of paragraphs or on a page that declares itself an article, while a thread with
//!    a short opening post keeps them all; on a page offering a product for sale, its reviews,
//!    ratings and other products ([`PRODUCT_EXTRA_WORDS`]).
//! 5. When that is unsure (a small share of the page's text, unless the page declares an
//!    article and a few paragraphs are kept), the answer is the page's visible text, and
//!    [`Extraction::page_text_because`] says why.
//! 6. The title, author and date the page declares go on top (the crate's `about` module).

use crate::about::About;
use crate::html::{Attrs, Event, Out, heading_level, tokenize, tokenize_declaring};
use std::ops::Range;

/// Element names that are chrome by their HTML meaning.
const CHROME_ELEMENTS: &[&str] = &[
    "nav",
    "aside",
    "footer",
    "form",
    "dialog",
    "button",
    "select",
    "menu",
    "noscript",
    "figcaption",
];

/// ARIA roles that are chrome (`banner` is handled like `header`).
const CHROME_ROLES: &[&str] = &[
    "navigation",
    "contentinfo",
    "complementary",
    "search",
    "menu",
    "menubar",
    "toolbar",
    "dialog",
    "alertdialog",
    "tablist",
];

/// A `class` or `id` word that starts with one of these names chrome.
const CHROME_WORDS: &[&str] = &[
    "nav",
    "menu",
    "sidebar",
    "breadcrumb",
    "footer",
    "cookie",
    "consent",
    "gdpr",
    "banner",
    "pagination",
    "pager",
    "social",
    "share",
    "advert",
    "sponsor",
    "newsletter",
    "subscribe",
    "toolbar",
    "topbar",
    "feedback",
    "related",
    "searchbox",
    "promo",
    "recommend",
    "popular",
    "trending",
    "copyright",
    "disclaimer",
    // A forum post's signature and its poster's panel (rank, post count, join date).
    "signature",
    "userinfo",
    "userstat",
    "usertitle",
    "userdetail",
    "userextra",
    "memberstat",
];

/// A `class` token or the `id` starting with one of these names chrome: a skip link
/// (`skip-link`, `skiplinks`, `skip-to-content`) or a widget (`widget`, `widget_recent_entries`).
/// Inside a token the word names a part of something else: Tailwind's
/// `decoration-skip-ink-none`, a review's `c-product-widget`, a page builder's
/// `elementor-widget-container`, which hold content.
const CHROME_TOKEN_STARTS: &[&str] = &["skip", "widget"];

/// Elements whose `class` and `id` words are read: containers. Other elements' names describe
/// what they hold (a `dt` with `id="Session.cookies"` documents cookies; it is no cookie banner).
const NAMED_CONTAINERS: &[&str] = &[
    "div", "section", "ul", "ol", "table", "span", "p", "li", "header", "center", "iframe",
];

/// A `class` or `id` word equal to one of these names chrome.
const CHROME_EXACT_WORDS: &[&str] = &[
    "ad",
    "ads",
    "search",
    "header",
    "masthead",
    "edit",
    "editsection",
    // Rows of buttons: a post's or a story's actions (share, print, like), a carousel's
    // controls.
    "actions",
    "controls",
    "buttons",
];

/// Elements that declare the page's main content.
fn declares_main(name: &str, attrs: &Attrs) -> bool {
    name == "main" || attrs.role == "main"
}

/// The declared main content is used when it holds at least this share of the page's text
/// outside chrome (so an empty or decorative `main` does not hide the page).
const DECLARED_MIN_SHARE: f64 = 0.4;

/// The body (or a declared article's root) is narrowed to a child while that child holds at
/// least this share of its text outside chrome.
const NARROW_MIN_SHARE: f64 = 0.97;

/// … or while that child holds at least this share of its paragraph text, when it holds…
const NARROW_PARAGRAPH_SHARE: f64 = 0.85;

/// … at least this many characters of paragraphs (a page of prose, whose other text is
/// teasers, menus and boilerplate)…
const NARROW_BY_PARAGRAPHS_MIN_CHARS: usize = 500;

/// … and the child holds at least this share of its text outside chrome (the lists, tables
/// and sections between the paragraphs are content too).
const NARROW_BY_PARAGRAPHS_MIN_SHARE: f64 = 0.3;

/// The declared main content is narrowed to the smallest declared element (or common ancestor
/// of articles) that holds at least this share of the paragraph text of the one with the most.
const DECLARED_NARROW_SHARE: f64 = 0.9;

/// An element holding more than this share of the page's visible text outside links is never
/// chrome, whatever its name or class words.
const CONTENT_SHARE_NEVER_CHROME: f64 = 0.5;

/// An element with at least this many characters of paragraphs…
const PROSE_BLOCK_MIN_CHARS: usize = 200;

/// … making at least this share of its text is a block of prose: a `banner` class word or a
/// `tablist` role does not make it chrome.
const PROSE_BLOCK_MIN_SHARE: f64 = 0.5;

/// A root with less than this share of link text is prose…
const PROSE_MAX_LINK_SHARE: f64 = 0.3;

/// … and in prose, a block (one of [`LINK_BLOCKS`]) with more than this share of link text…
const LINK_BLOCK_MIN_LINK_SHARE: f64 = 0.5;

/// … holding less than this share of the root's text is left out.
const LINK_BLOCK_MAX_SHARE: f64 = 0.25;

/// Comments (an element whose `class` or `id` word starts with `comment`) are left out when
/// the root holds at least this much paragraph text outside them: they follow an article. In a
/// thread, the comments are the content.
const ARTICLE_BESIDE_COMMENTS_MIN_CHARS: usize = 2000;

/// On a page that offers a product for sale, a block with a `class` or `id` word starting with
/// one of these is not the product's content.
const PRODUCT_EXTRA_WORDS: &[&str] = &[
    "review",
    "rating",
    "similar",
    "recent",
    "carousel",
    "upsell",
    "crosssell",
];

/// Blocks that can be a list of links.
const LINK_BLOCKS: &[&str] = &[
    "div", "section", "ul", "ol", "table", "p", "li", "nav", "aside",
];

/// A hidden element holding more than this share of the page's text outside links is shown by
/// the page's script: it is kept.
const SCRIPT_SHOWN_SHARE: f64 = 0.5;

/// The extraction is unsure, and the page's text is given instead, when what it keeps holds
/// less than this share of the page's visible text…
const UNSURE_BELOW_SHARE: f64 = 0.1;

/// … unless the page declares an article and what is kept holds at least this many characters
/// of paragraphs: a short story on a busy page…
const ARTICLE_MIN_PARAGRAPH_CHARS: usize = 200;

/// Void elements never have content or an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];

/// Elements whose start closes an open element of the same family (`<li>` ends the previous
/// `<li>`).
const SELF_ENDING: &[&[&str]] = &[
    &["li"],
    &["dt", "dd"],
    &["tr"],
    &["td", "th"],
    &["option"],
    &["p"],
];

struct Node {
    name: String,
    attrs: Attrs,
    parent: Option<usize>,
    children: Vec<usize>,
    /// Its events: the start tag up to (not including) the event after its end.
    events: Range<usize>,
    /// The background colour it is drawn on: its own inline one, or its nearest ancestor's.
    background: Option<u32>,
    /// Hidden from a person: by itself ([`Attrs::hidden`]) or by text in the colour of the
    /// background it is drawn on. Its text counts nowhere.
    hidden: bool,
    /// Non-whitespace characters of visible text inside it.
    chars: usize,
    /// Of those, the ones inside links.
    link_chars: usize,
    /// Of those, the ones inside paragraphs (`p`, `pre`, `blockquote`) and outside links.
    paragraph_chars: usize,
    /// Characters of visible text inside the comment containers ([`names_comments`]) below it,
    /// counted from the outermost, so one comment is never weighed against the others…
    comment_chars: usize,
    /// … and, of those, the paragraph characters.
    comment_paragraph_chars: usize,
    /// It holds an `h1` or `h2`.
    heading: bool,
    chrome: bool,
    /// It or an ancestor is chrome.
    in_chrome: bool,
    /// Characters outside links and outside chrome (0 for chrome).
    content: usize,
}

/// The main content of an HTML page, or the page's text when the extraction is unsure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extraction {
    /// The answer: the title (and the author and date the page declares) above the text.
    pub text: String,
    /// Why the whole page's text was given instead of its main content, when it was.
    pub page_text_because: Option<String>,
}

/// The main content of an HTML page as readable text (see [`extract`]).
#[must_use]
pub fn to_text(html: &str) -> String {
    extract(html).text
}

/// The text of every part of the page a person can see (`format: "page"`): the whole page as
/// [`crate::html::to_text`] renders it, without hidden elements.
#[must_use]
pub fn page_text(html: &str) -> String {
    let events = tokenize(html);
    let nodes = tree(&events);
    render(&events, 0..events.len(), &hidden_ranges(&nodes))
}

/// The main content of an HTML page: the text a reader came for, with the page's title, author
/// and date on top; or the page's visible text when the extraction is unsure (see the module
/// documentation).
#[must_use]
pub fn extract(html: &str) -> Extraction {
    let (events, declared) = tokenize_declaring(html);
    let nodes = tree(&events);
    let page = || render(&events, 0..events.len(), &hidden_ranges(&nodes));
    let about = About::of(&declared);
    let (text, page_text_because) = match choose_root(&nodes, about.is_article()) {
        None => (page(), None),
        Some(root) => {
            let kept = Kept::inside(&nodes, root, &about);
            let text = render(&events, nodes[root].events.clone(), &kept.dropped);
            match kept.unsure(page_chars(&nodes), about.is_article()) {
                Some(reason) => (page(), Some(reason)),
                None if text.is_empty() => (page(), None),
                None => (text, None),
            }
        }
    };
    Extraction {
        text: about.frame(text),
        page_text_because,
    }
}

fn render(events: &[Event], range: Range<usize>, dropped: &[Range<usize>]) -> String {
    let mut out = Out::default();
    out.replay(events, range, dropped);
    out.finish()
}

/// The element tree, with text counts and chrome marks.
fn tree(events: &[Event]) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut depth = Depth::default();
    for (index, event) in events.iter().enumerate() {
        match event {
            Event::Start {
                name,
                attrs,
                self_closing,
            } => {
                if let Some(family) = SELF_ENDING.iter().find(|f| f.contains(&name.as_str())) {
                    if let Some(&top) = open.last() {
                        if family.contains(&nodes[top].name.as_str()) {
                            close(&mut nodes, &mut open, top, index, &mut depth);
                        }
                    }
                }
                let id = nodes.len();
                let parent = open.last().copied();
                let background = attrs
                    .background
                    .or_else(|| parent.and_then(|p| nodes[p].background));
                let same_as_background = attrs.colour.is_some() && attrs.colour == background;
                nodes.push(Node {
                    name: name.clone(),
                    attrs: attrs.clone(),
                    parent,
                    children: Vec::new(),
                    events: index..index + 1,
                    hidden: attrs.hidden || same_as_background,
                    background,
                    chars: 0,
                    link_chars: 0,
                    paragraph_chars: 0,
                    comment_chars: 0,
                    comment_paragraph_chars: 0,
                    heading: false,
                    chrome: false,
                    in_chrome: false,
                    content: 0,
                });
                if let Some(parent) = parent {
                    nodes[parent].children.push(id);
                }
                if !self_closing && !VOID.contains(&name.as_str()) {
                    depth.enter(name);
                    open.push(id);
                }
            }
            Event::End(name) => {
                if let Some(position) = open.iter().rposition(|&n| nodes[n].name == *name) {
                    let node = open[position];
                    close(&mut nodes, &mut open, node, index + 1, &mut depth);
                }
            }
            Event::Text(text) => {
                // Counted on the innermost element here, summed up the tree below (linear in
                // the page, however deep it nests).
                let chars = text
                    .chars()
                    .filter(|&c| !c.is_whitespace() && !text::invisible(c))
                    .count();
                if let Some(&n) = open.last() {
                    nodes[n].chars += chars;
                    if depth.link > 0 {
                        nodes[n].link_chars += chars;
                    } else if depth.paragraph > 0 {
                        nodes[n].paragraph_chars += chars;
                    }
                }
            }
        }
    }
    while let Some(&top) = open.last() {
        close(&mut nodes, &mut open, top, events.len(), &mut depth);
    }
    // Nodes are numbered in document order, so a parent comes before its children: walking
    // backwards sees every child first, forwards every parent first. Hidden text is counted
    // once to find a script-rendered page (below), then not at all.
    let own: Vec<[usize; 3]> = nodes
        .iter()
        .map(|n| [n.chars, n.link_chars, n.paragraph_chars])
        .collect();
    sum_up(&mut nodes, &own, false);
    let everything = page_linkless(&nodes);
    for node in &mut nodes {
        // A page whose script shows what the HTML hides (streamed into a `hidden` element, or
        // faded in from `opacity: 0`) holds most of its text there: that is what a person sees.
        node.hidden &= linkless(node) as f64 <= SCRIPT_SHOWN_SHARE * everything as f64;
    }
    sum_up(&mut nodes, &own, true);
    for id in (0..nodes.len()).rev() {
        let node = &nodes[id];
        let (chars, paragraph_chars) = if names_comments(node) {
            (node.chars, node.paragraph_chars)
        } else {
            (node.comment_chars, node.comment_paragraph_chars)
        };
        if let (Some(parent), false) = (node.parent, node.hidden) {
            nodes[parent].comment_chars += chars;
            nodes[parent].comment_paragraph_chars += paragraph_chars;
        }
    }
    let page = page_linkless(&nodes);
    let mut chrome_chars = vec![0usize; nodes.len()];
    for id in (0..nodes.len()).rev() {
        nodes[id].chrome = is_chrome(&nodes[id], page);
        let node = &nodes[id];
        let linkless = linkless(node);
        let (content, removed) = if node.chrome {
            (0, linkless)
        } else {
            (linkless.saturating_sub(chrome_chars[id]), chrome_chars[id])
        };
        nodes[id].content = content;
        if let (Some(parent), false) = (nodes[id].parent, nodes[id].hidden) {
            chrome_chars[parent] += removed;
        }
    }
    for id in 0..nodes.len() {
        let parent_in_chrome = nodes[id].parent.is_some_and(|p| nodes[p].in_chrome);
        nodes[id].in_chrome = parent_in_chrome || nodes[id].chrome;
    }
    nodes
}

/// Sums each element's own text counts (`own`: characters, link characters, paragraph
/// characters) up the tree, leaving out hidden elements when `skip_hidden`.
fn sum_up(nodes: &mut [Node], own: &[[usize; 3]], skip_hidden: bool) {
    for (node, own) in nodes.iter_mut().zip(own) {
        [node.chars, node.link_chars, node.paragraph_chars] = *own;
        node.heading = false;
    }
    for id in (0..nodes.len()).rev() {
        let node = &nodes[id];
        let heading = node.heading || matches!(node.name.as_str(), "h1" | "h2");
        let counts = (node.chars, node.link_chars, node.paragraph_chars);
        if let (Some(parent), false) = (node.parent, skip_hidden && node.hidden) {
            let parent = &mut nodes[parent];
            parent.chars += counts.0;
            parent.link_chars += counts.1;
            parent.paragraph_chars += counts.2;
            parent.heading |= heading;
        }
    }
}

/// How many links and paragraphs are open where the tokenizer is.
#[derive(Default)]
struct Depth {
    link: usize,
    paragraph: usize,
}

impl Depth {
    fn enter(&mut self, name: &str) {
        match name {
            "a" => self.link += 1,
            "p" | "pre" | "blockquote" => self.paragraph += 1,
            _ => {}
        }
    }

    fn leave(&mut self, name: &str) {
        match name {
            "a" => self.link = self.link.saturating_sub(1),
            "p" | "pre" | "blockquote" => self.paragraph = self.paragraph.saturating_sub(1),
            _ => {}
        }
    }
}

fn linkless(node: &Node) -> usize {
    node.chars - node.link_chars.min(node.chars)
}

/// The body (or the document, without one).
fn body(nodes: &[Node]) -> Option<usize> {
    nodes
        .iter()
        .position(|n| n.name == "body")
        .or_else(|| nodes.iter().position(|n| n.name == "html"))
}

/// The page's visible text, chrome included.
fn page_chars(nodes: &[Node]) -> usize {
    match body(nodes) {
        Some(b) => nodes[b].chars,
        None => nodes
            .iter()
            .filter(|n| n.parent.is_none() && !n.hidden)
            .map(|n| n.chars)
            .sum(),
    }
}

/// The page's visible text outside links, chrome included.
fn page_linkless(nodes: &[Node]) -> usize {
    match body(nodes) {
        Some(b) => linkless(&nodes[b]),
        None => nodes
            .iter()
            .filter(|n| n.parent.is_none() && !n.hidden)
            .map(linkless)
            .sum(),
    }
}

/// The page's visible text outside links and chrome.
fn page_content(nodes: &[Node]) -> usize {
    match body(nodes) {
        Some(b) => nodes[b].content,
        None => nodes
            .iter()
            .filter(|n| n.parent.is_none() && !n.hidden)
            .map(|n| n.content)
            .sum(),
    }
}

/// The event ranges of the outermost hidden elements, in document order.
fn hidden_ranges(nodes: &[Node]) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for node in nodes.iter().filter(|n| n.hidden) {
        if ranges
            .last()
            .is_none_or(|last| node.events.start >= last.end)
        {
            ranges.push(node.events.clone());
        }
    }
    ranges
}

/// Closes `node` and everything opened inside it, at event index `end` (exclusive).
fn close(nodes: &mut [Node], open: &mut Vec<usize>, node: usize, end: usize, depth: &mut Depth) {
    while let Some(top) = open.pop() {
        nodes[top].events.end = end;
        depth.leave(&nodes[top].name);
        if top == node {
            break;
        }
    }
}

fn is_chrome(node: &Node, page_linkless: usize) -> bool {
    if node.hidden {
        return true;
    }
    if declares_main(&node.name, &node.attrs)
        || node.name == "article"
        || heading_level(&node.name).is_some()
    {
        return false;
    }
    // A `nav` element is navigation whatever it holds: a shop's mega-menu written without
    // links (items the script makes clickable) can hold most of the page's text outside links.
    if node.name == "nav" {
        return true;
    }
    // An element that holds most of the page's text outside links is the content, whatever
    // its name or its class words say (`non-ad-column`, `l-sidebar-fixed`, `has-section-nav`).
    if linkless(node) as f64 > CONTENT_SHARE_NEVER_CHROME * page_linkless as f64 {
        return false;
    }
    let named = NAMED_CONTAINERS.contains(&node.name.as_str());
    let header_like = node.name == "header" || node.attrs.role == "banner";
    if header_like || (named && words(&node.name, &node.attrs).any(|w| w.starts_with("header"))) {
        // A header that holds the page's title is the content's own header.
        return !node.heading;
    }
    // A banner or a tab list that is mostly paragraphs is a landing page's hero or an
    // accordion of answers, not a cookie notice or a row of tabs.
    let prose = node.paragraph_chars >= PROSE_BLOCK_MIN_CHARS
        && node.paragraph_chars as f64 >= PROSE_BLOCK_MIN_SHARE * node.chars as f64;
    CHROME_ELEMENTS.contains(&node.name.as_str())
        || CHROME_ROLES.contains(&node.attrs.role.as_str())
            && !(prose && node.attrs.role == "tablist")
        || named && token_starts_chrome(&node.attrs)
        || named
            && words(&node.name, &node.attrs).any(|word| {
                !(prose && word.starts_with("banner"))
                    && (CHROME_EXACT_WORDS.contains(&word.as_str())
                        || CHROME_WORDS.iter().any(|prefix| word.starts_with(prefix)))
            })
}

/// A `class` token or the `id` starting with one of [`CHROME_TOKEN_STARTS`].
fn token_starts_chrome(attrs: &Attrs) -> bool {
    attrs
        .class
        .split_whitespace()
        .chain([attrs.id.as_str()])
        .any(|token| {
            CHROME_TOKEN_STARTS.iter().any(|start| {
                token
                    .get(..start.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(start))
            })
        })
}

/// The lowercase words of `class` and `id`, split at anything not a letter or digit. A
/// section's `id` is left out: it is the anchor of its heading (`<section id="cookies">`).
fn words<'a>(name: &str, attrs: &'a Attrs) -> impl Iterator<Item = String> + 'a {
    let id = if name == "section" {
        ""
    } else {
        attrs.id.as_str()
    };
    attrs
        .class
        .split(|c: char| !c.is_alphanumeric())
        .chain(id.split(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// A block whose `class` or `id` words name comments (not a `span`: highlighted code marks
/// its comments so).
fn names_comments(node: &Node) -> bool {
    names_block(node, &["comment"])
}

/// A block whose `class` or `id` words name what a shop shows beside the product it sells:
/// reviews and ratings, and other products (similar, recently viewed, carousels, upsells,
/// cross-sells).
fn names_product_extras(node: &Node) -> bool {
    names_block(node, PRODUCT_EXTRA_WORDS)
}

/// A container whose `class` or `id` words name a byline or an author box (`byline`…, or the
/// whole word `author`, `authorbox`, `authorbio`).
fn names_byline(node: &Node) -> bool {
    NAMED_CONTAINERS.contains(&node.name.as_str())
        && words(&node.name, &node.attrs).any(|w| {
            w.starts_with("byline") || matches!(w.as_str(), "author" | "authorbox" | "authorbio")
        })
}

/// A block (`div`, `section`, a list or its item) with a `class` or `id` word starting with
/// one of `prefixes`.
fn names_block(node: &Node, prefixes: &[&str]) -> bool {
    matches!(node.name.as_str(), "div" | "section" | "ul" | "ol" | "li")
        && words(&node.name, &node.attrs).any(|w| prefixes.iter().any(|p| w.starts_with(p)))
}

/// An element that is one of several alike: a list's item or a comment, which the body is not
/// narrowed to for holding most of the paragraphs (a thread's longest reply is not the thread).
fn one_of_peers(node: &Node) -> bool {
    node.name == "li" || names_comments(node)
}

/// The element whose content is the page's main content, or `None` for a page without text
/// outside chrome.
fn choose_root(nodes: &[Node], article: bool) -> Option<usize> {
    let page = page_content(nodes);
    if page == 0 {
        return None;
    }
    let share = |id: usize| nodes[id].content as f64 / page as f64;
    match declared_root(nodes, article).filter(|&id| share(id) >= DECLARED_MIN_SHARE) {
        // A declared `main` can hold the story beside a feed of other stories: on a page that
        // declares an article, it is narrowed like the body.
        Some(declared) if article => Some(narrow(nodes, declared, article)),
        Some(declared) => Some(declared),
        None => Some(narrow(nodes, body(nodes)?, article)),
    }
}

/// `root` narrowed, while it can be, to the one child that holds nearly all of its text, or
/// most of its paragraph text and a fair share of its text. Below a declared article, the
/// comments are left out ([`Kept::inside`]): their paragraphs and text do not count, so the
/// root never narrows to them.
fn narrow(nodes: &[Node], mut root: usize, article: bool) -> usize {
    let paragraphs = |id: usize| {
        let node = &nodes[id];
        if article {
            node.paragraph_chars - node.comment_paragraph_chars
        } else {
            node.paragraph_chars
        }
    };
    loop {
        let total = nodes[root].content as f64;
        let root_paragraphs = paragraphs(root);
        let dominant = nodes[root].children.iter().copied().find(|&c| {
            let content = nodes[c].content as f64;
            !(article && names_comments(&nodes[c]))
                && (total > 0.0 && content >= NARROW_MIN_SHARE * total
                    || root_paragraphs >= NARROW_BY_PARAGRAPHS_MIN_CHARS
                        && !nodes[c].in_chrome
                        && !one_of_peers(&nodes[c])
                        && paragraphs(c) as f64 >= NARROW_PARAGRAPH_SHARE * root_paragraphs as f64
                        && content >= NARROW_BY_PARAGRAPHS_MIN_SHARE * total)
        });
        match dominant {
            Some(child) => root = child,
            None => return root,
        }
    }
}

/// The declared main content: of every `main`, `role="main"` and `article` (and the nearest
/// common ancestor of the articles, when there are several: a thread's posts, a list's
/// items), the one with the most paragraph text, narrowed to the smallest of them that still
/// holds nearly all of that paragraph text.
fn declared_root(nodes: &[Node], article: bool) -> Option<usize> {
    let visible = |id: &usize| !nodes[*id].in_chrome && !nodes[*id].hidden;
    let mut candidates: Vec<usize> = (0..nodes.len())
        .filter(|&id| {
            declares_main(&nodes[id].name, &nodes[id].attrs) || nodes[id].name == "article"
        })
        .filter(visible)
        .collect();
    let articles: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&id| nodes[id].name == "article")
        .collect();
    if let [first, rest @ ..] = articles.as_slice() {
        if !rest.is_empty() && !article {
            candidates.push(
                rest.iter()
                    .fold(*first, |a, &b| common_ancestor(nodes, a, b)),
            );
        }
    }
    let key = |id: &usize| (nodes[*id].paragraph_chars, nodes[*id].content);
    let best = *candidates.iter().max_by_key(|id| key(id))?;
    let enough = nodes[best].paragraph_chars as f64 * DECLARED_NARROW_SHARE;
    candidates
        .into_iter()
        .filter(|&id| nodes[id].paragraph_chars as f64 >= enough && nodes[id].content > 0)
        .min_by_key(|&id| nodes[id].content)
}

/// The nearest element that holds both `a` and `b`.
fn common_ancestor(nodes: &[Node], mut a: usize, mut b: usize) -> usize {
    // A parent's number is smaller than its children's: climb from the larger.
    while a != b {
        let larger = if a > b { &mut a } else { &mut b };
        match nodes[*larger].parent {
            Some(parent) => *larger = parent,
            None => return a.min(b),
        }
    }
    a
}

/// What the extraction keeps of its root: the chrome left out, and how much text is left.
struct Kept {
    /// The event ranges of chrome inside the root, in document order, outermost only.
    dropped: Vec<Range<usize>>,
    chars: usize,
    paragraph_chars: usize,
}

impl Kept {
    fn inside(nodes: &[Node], root: usize, about: &About) -> Self {
        let article = about.is_article();
        let mut kept = Kept {
            dropped: Vec::new(),
            chars: nodes[root].chars,
            paragraph_chars: nodes[root].paragraph_chars,
        };
        let mut stack = vec![root];
        let root_chars = nodes[root].chars;
        // In prose, a block that is mostly links is a list of other pages (related stories,
        // tags, share bars); in a list of links, it is an item.
        let prose = (nodes[root].link_chars as f64) < PROSE_MAX_LINK_SHARE * root_chars as f64;
        // Comments below an article are not the article; in a thread, they are the thread.
        let comment_chars = nodes[root].comment_chars;
        let outside_comments = nodes[root].paragraph_chars - nodes[root].comment_paragraph_chars;
        let article_beside_comments = comment_chars > 0
            && (outside_comments >= ARTICLE_BESIDE_COMMENTS_MIN_CHARS
                || article && outside_comments > 0);
        while let Some(id) = stack.pop() {
            let node = &nodes[id];
            // A form that holds most of the root's text wraps the content (whole-page forms).
            let wrapper = node.name == "form" && node.chars * 2 > root_chars;
            let links_in_prose = prose
                && LINK_BLOCKS.contains(&node.name.as_str())
                && node.link_chars as f64 > LINK_BLOCK_MIN_LINK_SHARE * node.chars as f64
                && (node.chars as f64) < LINK_BLOCK_MAX_SHARE * root_chars as f64;
            let comments = article_beside_comments && names_comments(node);
            // Set aside by what the page declares: a byline when the declared author goes on
            // top, a shop's reviews and other products beside the product it sells.
            let declared_aside = about.declares_author() && names_byline(node)
                || about.sells() && names_product_extras(node);
            if id != root
                && (node.chrome && !wrapper || links_in_prose || comments || declared_aside)
            {
                kept.dropped.push(node.events.clone());
                if !node.hidden {
                    kept.chars -= node.chars;
                    kept.paragraph_chars -= node.paragraph_chars;
                }
                continue;
            }
            stack.extend(node.children.iter().rev());
        }
        kept
    }

    /// Why the kept text is not to be trusted as the page's main content, if it is not: it
    /// holds too small a share of the page's visible text. (Kept text that is mostly links is
    /// trusted: it is a listing, and the page's text scored worse on such pages.)
    fn unsure(&self, page_chars: usize, article: bool) -> Option<String> {
        let share = self.chars as f64 / page_chars.max(1) as f64;
        let declared_article = article && self.paragraph_chars >= ARTICLE_MIN_PARAGRAPH_CHARS;
        (share < UNSURE_BELOW_SHARE && !declared_article).then(|| {
            format!(
                "the main content found held {:.0} % of the page's visible text",
                share * 100.0
            )
        })
    }
}
