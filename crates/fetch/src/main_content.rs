//! Main-content extraction: the part of an HTML page a reader came for, without the site's
//! navigation, headers, footers, sidebars and banners.
//!
//! It works on structure and text density, never on a site's or generator's own names:
//! 1. The page becomes a tree of elements, each knowing how many characters of text it holds
//!    and how many of those are link text.
//! 2. Chrome is marked: the elements HTML gives that meaning (`nav`, `aside`, `footer`, forms,
//!    dialogs, a `header` without the page's `h1`), the matching ARIA roles, hidden elements, and
//!    elements whose `class` or `id` words name chrome (a word starting with `nav`, `menu`,
//!    `sidebar`, `breadcrumb`, `footer`, `cookie`, …; see [`CHROME_WORDS`]).
//! 3. The root is the page's declared main content when it has one (`main`, `role="main"`, a
//!    lone `article`) holding most of the page's text; otherwise the body, narrowed to the one
//!    child that holds nearly all of its non-chrome text, as long as one does.
//! 4. The root is rendered as [`crate::html::to_text`] renders a page, chrome left out.
//!
//! A page with no element left after that (or no text in its root) gives the whole page's text,
//! so extraction never returns less than nothing where the page had something.

use crate::html::{Attrs, Event, Out, heading_level, tokenize};
use std::ops::Range;

/// Element names that are chrome by their HTML meaning.
const CHROME_ELEMENTS: &[&str] = &[
    "nav", "aside", "footer", "form", "dialog", "button", "select", "menu",
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
    "skip",
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
    "edit",
    "feedback",
    "related",
    "searchbox",
];

/// Elements whose `class` and `id` words are read: containers. Other elements' names describe
/// what they hold (a `dt` with `id="Session.cookies"` documents cookies; it is no cookie banner).
const NAMED_CONTAINERS: &[&str] = &[
    "div", "section", "ul", "ol", "table", "span", "p", "li", "header", "center", "iframe",
];

/// A `class` or `id` word equal to one of these names chrome.
const CHROME_EXACT_WORDS: &[&str] = &["ad", "ads", "search", "header", "masthead"];

/// Elements that declare the page's main content.
fn declares_main(name: &str, attrs: &Attrs) -> bool {
    name == "main" || attrs.role == "main"
}

/// The declared main content is used when it holds at least this share of the page's text
/// outside chrome (so an empty or decorative `main` does not hide the page).
const DECLARED_MIN_SHARE: f64 = 0.4;

/// The body is narrowed to a child while that child holds at least this share of its text
/// outside chrome.
const NARROW_MIN_SHARE: f64 = 0.97;

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
    /// Non-whitespace characters of text inside it.
    chars: usize,
    /// Of those, the ones inside links.
    link_chars: usize,
    /// It holds an `h1` or `h2`.
    heading: bool,
    chrome: bool,
    /// It or an ancestor is chrome.
    in_chrome: bool,
    /// Characters outside links and outside chrome (0 for chrome).
    content: usize,
}

/// The main content of an HTML page as readable text.
#[must_use]
pub fn to_text(html: &str) -> String {
    let events = tokenize(html);
    let nodes = tree(&events);
    let root = choose_root(&nodes);
    let Some(root) = root else {
        return render(&events, 0..events.len(), &[]);
    };
    let dropped = chrome_inside(&nodes, root);
    let text = render(&events, nodes[root].events.clone(), &dropped);
    if text.is_empty() {
        render(&events, 0..events.len(), &[])
    } else {
        text
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
    let mut link_depth = 0usize;
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
                            close(&mut nodes, &mut open, top, index, &mut link_depth);
                        }
                    }
                }
                let id = nodes.len();
                nodes.push(Node {
                    name: name.clone(),
                    attrs: attrs.clone(),
                    parent: open.last().copied(),
                    children: Vec::new(),
                    events: index..index + 1,
                    chars: 0,
                    link_chars: 0,
                    heading: false,
                    chrome: false,
                    in_chrome: false,
                    content: 0,
                });
                if let Some(&parent) = open.last() {
                    nodes[parent].children.push(id);
                }
                if !self_closing && !VOID.contains(&name.as_str()) {
                    if name == "a" {
                        link_depth += 1;
                    }
                    open.push(id);
                }
            }
            Event::End(name) => {
                if let Some(position) = open.iter().rposition(|&n| nodes[n].name == *name) {
                    let node = open[position];
                    close(&mut nodes, &mut open, node, index + 1, &mut link_depth);
                }
            }
            Event::Text(text) => {
                // Counted on the innermost element here, summed up the tree below (linear in
                // the page, however deep it nests).
                let chars = text.chars().filter(|c| !c.is_whitespace()).count();
                if let Some(&n) = open.last() {
                    nodes[n].chars += chars;
                    if link_depth > 0 {
                        nodes[n].link_chars += chars;
                    }
                }
            }
        }
    }
    while let Some(&top) = open.last() {
        close(&mut nodes, &mut open, top, events.len(), &mut link_depth);
    }
    // Nodes are numbered in document order, so a parent comes before its children: walking
    // backwards sees every child first, forwards every parent first.
    let mut chrome_chars = vec![0usize; nodes.len()];
    for id in (0..nodes.len()).rev() {
        nodes[id].chrome = is_chrome(&nodes[id]);
        let node = &nodes[id];
        let linkless = node.chars - node.link_chars.min(node.chars);
        let (content, removed) = if node.chrome {
            (0, linkless)
        } else {
            (linkless.saturating_sub(chrome_chars[id]), chrome_chars[id])
        };
        let parent = node.parent;
        let heading = node.heading || matches!(node.name.as_str(), "h1" | "h2");
        let (chars, link_chars) = (node.chars, node.link_chars);
        nodes[id].content = content;
        if let Some(parent) = parent {
            nodes[parent].chars += chars;
            nodes[parent].link_chars += link_chars;
            chrome_chars[parent] += removed;
            nodes[parent].heading |= heading;
        }
    }
    for id in 0..nodes.len() {
        let parent_in_chrome = nodes[id].parent.is_some_and(|p| nodes[p].in_chrome);
        nodes[id].in_chrome = parent_in_chrome || nodes[id].chrome;
    }
    nodes
}

/// Closes `node` and everything opened inside it, at event index `end` (exclusive).
fn close(
    nodes: &mut [Node],
    open: &mut Vec<usize>,
    node: usize,
    end: usize,
    link_depth: &mut usize,
) {
    while let Some(top) = open.pop() {
        nodes[top].events.end = end;
        if nodes[top].name == "a" {
            *link_depth = link_depth.saturating_sub(1);
        }
        if top == node {
            break;
        }
    }
}

fn is_chrome(node: &Node) -> bool {
    if node.attrs.hidden {
        return true;
    }
    if declares_main(&node.name, &node.attrs)
        || node.name == "article"
        || heading_level(&node.name).is_some()
    {
        return false;
    }
    let named = NAMED_CONTAINERS.contains(&node.name.as_str());
    let header_like = node.name == "header" || node.attrs.role == "banner";
    if header_like || (named && words(&node.name, &node.attrs).any(|w| w.starts_with("header"))) {
        // A header that holds the page's title is the content's own header.
        return !node.heading;
    }
    CHROME_ELEMENTS.contains(&node.name.as_str())
        || CHROME_ROLES.contains(&node.attrs.role.as_str())
        || named
            && words(&node.name, &node.attrs).any(|word| {
                CHROME_EXACT_WORDS.contains(&word.as_str())
                    || CHROME_WORDS.iter().any(|prefix| word.starts_with(prefix))
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

fn node_content(nodes: &[Node], id: usize) -> usize {
    nodes[id].content
}

/// The element whose content is the page's main content, or `None` for a page without one.
fn choose_root(nodes: &[Node]) -> Option<usize> {
    let body = nodes
        .iter()
        .position(|n| n.name == "body")
        .or_else(|| nodes.iter().position(|n| n.name == "html"));
    let page_chars: usize = match body {
        Some(b) => node_content(nodes, b),
        None => nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.parent.is_none())
            .map(|(id, _)| node_content(nodes, id))
            .sum(),
    };
    if page_chars == 0 {
        return None;
    }
    let declared = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| declares_main(&n.name, &n.attrs) && !n.in_chrome)
        .map(|(id, _)| (id, node_content(nodes, id)))
        .max_by_key(|&(_, chars)| chars);
    let articles: Vec<usize> = (0..nodes.len())
        .filter(|&id| nodes[id].name == "article" && !nodes[id].in_chrome)
        .collect();
    let lone_article = match articles.as_slice() {
        [one] => Some((*one, node_content(nodes, *one))),
        _ => None,
    };
    let share = |chars: usize| chars as f64 / page_chars as f64;
    if let Some((id, _)) = declared
        .into_iter()
        .chain(lone_article)
        .find(|&(_, chars)| share(chars) >= DECLARED_MIN_SHARE)
    {
        return Some(id);
    }
    let mut root = body?;
    loop {
        let total = node_content(nodes, root);
        let dominant = nodes[root].children.iter().copied().find(|&c| {
            total > 0 && node_content(nodes, c) as f64 / total as f64 >= NARROW_MIN_SHARE
        });
        match dominant {
            Some(child) => root = child,
            None => return Some(root),
        }
    }
}

/// The event ranges of chrome elements inside `root`, in document order, outermost only.
fn chrome_inside(nodes: &[Node], root: usize) -> Vec<Range<usize>> {
    let mut dropped = Vec::new();
    let mut stack = vec![root];
    let root_chars = nodes[root].chars;
    while let Some(id) = stack.pop() {
        // A form that holds most of the root's text wraps the content (whole-page forms).
        let wrapper = nodes[id].name == "form" && nodes[id].chars * 2 > root_chars;
        if id != root && nodes[id].chrome && !wrapper {
            dropped.push(nodes[id].events.clone());
            continue;
        }
        stack.extend(nodes[id].children.iter().rev());
    }
    dropped
}
