//! What a page declares about itself, put above its text: the title, the author and the date
//! of publication, and, for a product, the description and facts its JSON-LD
//! (`schema.org/Product`) carries when the visible text does not.
//!
//! Read, in this order: JSON-LD (`headline`/`name`, `author`, `datePublished`), the Open Graph
//! and article `<meta>` (`og:title`, `author`, `article:author`, `article:published_time`,
//! `date`), then the `<title>`. Nothing is guessed from the body.

use crate::html::Declared;
use serde_json::Value;

/// The page's title, author and date, and a product's declared facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct About {
    title: String,
    author: String,
    date: String,
    /// A product's description, brand, price and identifiers, one per line.
    product: Vec<String>,
    /// The page declares itself an article (JSON-LD `Article`, `NewsArticle`, `BlogPosting`…
    /// or `og:type` `article`)…
    article: bool,
    /// … or a discussion (JSON-LD `DiscussionForumPosting`, `QAPage`, `SocialMediaPosting`).
    discussion: bool,
    /// The page offers a product for sale (JSON-LD `Product` with `offers`); a business that
    /// declares itself a `Product` only to show its rating stars declares no offer.
    sells: bool,
}

impl About {
    pub(crate) fn of(declared: &Declared) -> Self {
        let mut about = About::default();
        for block in &declared.json_ld {
            if let Ok(value) = serde_json::from_str::<Value>(block.trim()) {
                about.read_json_ld(&value, 0);
            }
        }
        let meta = |names: &[&str]| {
            names.iter().find_map(|name| {
                declared
                    .meta
                    .iter()
                    .find(|(n, content)| n == name && !content.starts_with("http"))
                    .map(|(_, content)| content.clone())
            })
        };
        about.article |=
            meta(&["og:type"]).is_some_and(|kind| kind.eq_ignore_ascii_case("article"));
        if about.title.is_empty() {
            about.title =
                meta(&["og:title", "twitter:title"]).unwrap_or_else(|| declared.title.clone());
        }
        if about.author.is_empty() {
            about.author =
                meta(&["author", "article:author", "byl", "dc.creator"]).unwrap_or_default();
        }
        if about.date.is_empty() {
            about.date = meta(&["article:published_time", "datepublished", "date", "dc.date"])
                .unwrap_or_default();
        }
        about.title = one_line(&about.title);
        about.author = one_line(&about.author);
        about.date = day(&one_line(&about.date));
        about
    }

    /// Reads the first declared title, author and date, and a product's facts, from a JSON-LD
    /// value (objects, lists and `@graph`s, a few levels deep).
    fn read_json_ld(&mut self, value: &Value, depth: usize) {
        if depth > 4 {
            return;
        }
        match value {
            Value::Array(items) => items.iter().for_each(|v| self.read_json_ld(v, depth + 1)),
            Value::Object(object) => {
                if let Some(graph) = object.get("@graph") {
                    self.read_json_ld(graph, depth + 1);
                }
                let kinds = types(object.get("@type"));
                let text = |key: &str| object.get(key).map(text_of).unwrap_or_default();
                self.discussion |= kinds.iter().any(|k| DISCUSSIONS.contains(&k.as_str()));
                if kinds
                    .iter()
                    .any(|k| k.ends_with("Article") || k == "BlogPosting" || k == "NewsArticle")
                {
                    self.article = true;
                    fill(&mut self.title, text("headline"));
                    fill(
                        &mut self.author,
                        object.get("author").map(name_of).unwrap_or_default(),
                    );
                    fill(&mut self.date, text("datePublished"));
                }
                let product = kinds.iter().any(|k| k == "Product");
                self.sells |= product && object.contains_key("offers");
                if product && self.product.is_empty() {
                    fill(&mut self.title, text("name"));
                    self.product = product_facts(object);
                }
            }
            _ => {}
        }
    }

    /// The page says it is an article and not a discussion: what follows its text as comments
    /// is not its content.
    pub(crate) fn is_article(&self) -> bool {
        self.article && !self.discussion
    }

    /// The page declares its author, who goes on top: its own byline is not needed.
    pub(crate) fn declares_author(&self) -> bool {
        !self.author.is_empty()
    }

    /// The page offers a product for sale: its reviews and the other products it shows are
    /// not the product's content.
    pub(crate) fn sells(&self) -> bool {
        self.sells
    }

    /// `text` with the title, author and date above it (the title only when the text does not
    /// already start with a heading), and a product's declared facts below it when the text is
    /// thin and does not already hold its description.
    pub(crate) fn frame(&self, text: String) -> String {
        let mut head = Vec::new();
        // A text that opens with its own heading keeps it on top, the byline under it.
        let body = match (text.starts_with('#'), text.split_once('\n')) {
            (true, Some((heading, body))) => {
                head.push(heading.to_string());
                body.trim_start_matches('\n')
            }
            (true, None) => {
                head.push(text.clone());
                ""
            }
            (false, _) => {
                if !self.title.is_empty() {
                    head.push(format!("# {}", self.title));
                }
                text.as_str()
            }
        };
        // The page's own byline near the top already names the author.
        let opening: String = text.chars().take(BYLINE_WITHIN_CHARS).collect();
        let named =
            !self.author.is_empty() && opening.to_lowercase().contains(&self.author.to_lowercase());
        let byline = match (self.author.is_empty() || named, self.date.is_empty()) {
            (false, false) => format!("By {} · {}", self.author, self.date),
            (false, true) => format!("By {}", self.author),
            (true, false) => format!("Published {}", self.date),
            (true, true) => String::new(),
        };
        if !byline.is_empty() {
            head.push(byline);
        }
        let mut out = head.join("\n");
        if !body.is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(body);
        }
        let described = self.product.first().is_some_and(|description| {
            let probe: String = description.chars().take(80).collect();
            squeeze(&text).contains(&squeeze(&probe))
        });
        let thin = text.chars().count() < THIN_TEXT_CHARS;
        if !self.product.is_empty() && !described && thin {
            out.push_str("\n\n## Product details declared by the page\n\n");
            out.push_str(&self.product.join("\n"));
        }
        out
    }
}

/// A product's declared facts go below a text shorter than this (a thin page): a page that
/// says more has said what a buyer needs.
const THIN_TEXT_CHARS: usize = 1000;

/// The author goes above the text unless the text names them within this many characters.
const BYLINE_WITHIN_CHARS: usize = 1000;

/// JSON-LD types of a page whose replies are its content.
const DISCUSSIONS: &[&str] = &["DiscussionForumPosting", "QAPage", "SocialMediaPosting"];

/// A product's description, then its brand, price, SKU and declared properties.
fn product_facts(object: &serde_json::Map<String, Value>) -> Vec<String> {
    let text = |key: &str| object.get(key).map(text_of).unwrap_or_default();
    let mut facts = vec![
        text("description")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    ];
    let brand = object.get("brand").map(name_of).unwrap_or_default();
    if !brand.is_empty() {
        facts.push(format!("Brand: {brand}"));
    }
    let offer = match object.get("offers") {
        Some(Value::Array(offers)) => offers.first(),
        other => other,
    };
    if let Some(Value::Object(offer)) = offer {
        let price = offer
            .get("price")
            .or_else(|| offer.get("lowPrice"))
            .map(text_of)
            .unwrap_or_default();
        let currency = offer.get("priceCurrency").map(text_of).unwrap_or_default();
        if !price.is_empty() {
            facts.push(one_line(&format!("Price: {price} {currency}")));
        }
    }
    for key in ["sku", "gtin13", "mpn", "color", "material"] {
        let value = text(key);
        if !value.is_empty() {
            facts.push(format!("{key}: {}", one_line(&value)));
        }
    }
    if let Some(Value::Array(properties)) = object.get("additionalProperty") {
        for property in properties.iter().take(40) {
            let name = property.get("name").map(text_of).unwrap_or_default();
            let value = property.get("value").map(text_of).unwrap_or_default();
            if !name.is_empty() && !value.is_empty() {
                facts.push(one_line(&format!("{name}: {value}")));
            }
        }
    }
    if facts[0].is_empty() && facts.len() == 1 {
        return Vec::new();
    }
    facts
}

fn types(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// A string or number as text (HTML in it read as text).
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => crate::html::to_text(s),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The `name` of a person, organisation or brand (or of the first of a list), or a plain string.
fn name_of(value: &Value) -> String {
    match value {
        Value::Array(items) => items.first().map(name_of).unwrap_or_default(),
        Value::Object(object) => object.get("name").map(text_of).unwrap_or_default(),
        other => text_of(other),
    }
}

fn fill(slot: &mut String, value: String) {
    if slot.is_empty() {
        *slot = value;
    }
}

/// One line, whitespace collapsed, invisible characters removed, at most 300 characters.
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    text::clip(&text::strip_invisible(&line), 300)
}

/// `2025-09-04T10:00:00+02:00` is `2025-09-04`; other dates as written.
fn day(date: &str) -> String {
    let bytes = date.as_bytes();
    let iso = bytes.len() > 10
        && bytes[..10].iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        });
    if iso {
        date[..10].to_owned()
    } else {
        date.to_owned()
    }
}

/// Lowercase letters and digits only, for "does the text already say this".
fn squeeze(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}
