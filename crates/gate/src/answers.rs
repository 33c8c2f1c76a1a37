//! The answer detector: which of the three check answers one visible assistant reply gives.
//!
//! # Rules
//!
//! 1. **Visible text only.** The caller passes the reply's text blocks (joined by `\n`), never
//!    reasoning or tool-call arguments.
//! 2. **Quotes, code and comments do not count.** Lines inside a fenced code block
//!    (```` ``` ```` or `~~~`, closed by the same character at least as long; an unclosed fence
//!    runs to the end), lines of an indented code block (indented by four spaces or a tab, after
//!    a blank line or at the start, not continuing a list item), lines whose first non-blank
//!    character is `>` (also after list decoration: `- > …`), and lines holding or inside an HTML
//!    comment (`<!-- … -->`; an unclosed one runs to the end) are dropped. A marker right after a
//!    backtick (inline code) is not a marker either. Quoting the check block cannot lift the gate.
//! 3. **Markers.** A marker is a label, then optional spaces, then a separator: `=`, `＝`, `:` or
//!    `：`. Labels (English ones case-insensitive and whole-word; in them `_` also matches `-` or
//!    one space):
//!
//!    | answer | Chinese | English |
//!    |---|---|---|
//!    | blocker | `卡点` | `blocker` |
//!    | ruled out | `排除` | `ruled_out`, `excluded` |
//!    | best path | `性价比` | `best_path`, `cost_effective` |
//!    | hypothesis (stands in for ruled out) | `假设` | `hypothesis` |
//!
//!    `**` or `__` (or one `*`/`_`) may wrap the label, before or after the separator
//!    (`**卡点**=`, `**Blocker:**`). A marker is recognized at the start of a line, after list
//!    decoration (`- `, `* `, `+ `, `• `, `1. `, `1) `, `1、`, `# `), or after a space or one of
//!    `，。；;,、|（(:：` inside a line, so one line may carry all three answers.
//! 4. **Answers.** An answer runs from its separator to the next marker on the same line or the
//!    end of the line. A marker with nothing after it on its line takes the next line, if that
//!    line is visible, not blank and carries no marker. Trailing `，,；;|。`, surrounding
//!    whitespace, emphasis, backticks and quotation marks are trimmed.
//! 5. **Valid answers.** An answer does not count when it is:
//!    - empty;
//!    - a template slot wholly in `<…>`, `{…}` or `【…】`;
//!    - punctuation only (`…`, `...`, `???`, `——`), or only `x`s (`xxx`);
//!    - a placeholder or a bare negation (`TBD`, `TODO`, `n/a`, `none`, `unknown`, `待定`, `无`,
//!      `不知道`, …; compared after lowercasing and dropping everything but letters and digits);
//!    - the template's own words: a marker label or one of the three questions;
//!    - shorter than [`MIN_ANSWER_WEIGHT`] (a Han, kana or Hangul character weighs 2, any other
//!      letter or digit 1, so `DNS` and `缓存` count and `ok` does not);
//!    - the same (after folding) as an answer already accepted for another marker.
//! 6. **One reply, all three.** For each marker the first valid answer counts. A valid hypothesis
//!    (`假设=`/`hypothesis=`) answers "ruled out": a model that cannot name what the last negative
//!    result excluded writes a falsifiable hypothesis instead (the README's rule).

use crate::questions::{QUESTIONS_EN, QUESTIONS_ZH};
use std::fmt;

/// Minimum weight of a valid answer (see rule 5 in the module docs).
pub const MIN_ANSWER_WEIGHT: usize = 3;

/// One of the three answers the check asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Marker {
    /// Is this blocker still the most critical one? (`卡点=` / `blocker=`)
    Blocker,
    /// What did the last negative result rule out? (`排除=` / `ruled_out=`)
    RuledOut,
    /// Which path is the most cost-effective? (`性价比=` / `best_path=`)
    BestPath,
}

impl Marker {
    /// The three markers in question order.
    pub const ALL: [Marker; 3] = [Self::Blocker, Self::RuledOut, Self::BestPath];

    /// The Chinese label, as shown in texts (without the `=`).
    pub fn zh(self) -> &'static str {
        match self {
            Self::Blocker => "卡点",
            Self::RuledOut => "排除",
            Self::BestPath => "性价比",
        }
    }

    /// The English label, as shown in texts (without the `=`).
    pub fn en(self) -> &'static str {
        match self {
            Self::Blocker => "blocker",
            Self::RuledOut => "ruled_out",
            Self::BestPath => "best_path",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Self::Blocker => 1,
            Self::RuledOut => 2,
            Self::BestPath => 4,
        }
    }
}

/// A set of [`Marker`]s (three bits).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MarkerSet(u8);

impl MarkerSet {
    /// No marker.
    pub const EMPTY: MarkerSet = MarkerSet(0);
    /// All three markers.
    pub const ALL: MarkerSet = MarkerSet(7);

    /// Whether the set holds `marker`.
    pub fn contains(self, marker: Marker) -> bool {
        self.0 & marker.bit() != 0
    }

    /// The set with `marker` added.
    #[must_use]
    pub fn with(self, marker: Marker) -> Self {
        Self(self.0 | marker.bit())
    }

    /// The markers in `self` but not in `other`.
    #[must_use]
    pub fn without(self, other: MarkerSet) -> Self {
        Self(self.0 & !other.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// How many markers the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The markers, in question order.
    pub fn iter(self) -> impl Iterator<Item = Marker> {
        Marker::ALL.into_iter().filter(move |m| self.contains(*m))
    }
}

impl fmt::Debug for MarkerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<Marker> for MarkerSet {
    fn from_iter<I: IntoIterator<Item = Marker>>(iter: I) -> Self {
        iter.into_iter().fold(Self::EMPTY, Self::with)
    }
}

/// The markers one reply answers validly (a valid hypothesis answers [`Marker::RuledOut`]).
pub fn answered_markers(text: &str) -> MarkerSet {
    let lines = visible_lines(text);
    let found: Vec<Vec<Found>> = lines
        .iter()
        .map(|line| line.map_or_else(Vec::new, markers_in_line))
        .collect();
    let mut accepted: [Option<String>; 3] = [None, None, None];
    let mut hypothesis = false;
    for (index, markers) in found.iter().enumerate() {
        let Some(line) = lines[index] else { continue };
        for (k, marker) in markers.iter().enumerate() {
            let end = markers.get(k + 1).map_or(line.len(), |next| next.at);
            let mut answer = trim_answer(&line[marker.answer..end]);
            let last_on_line = k + 1 == markers.len();
            if answer.is_empty() && last_on_line {
                if let (Some(Some(next)), Some(next_markers)) =
                    (lines.get(index + 1), found.get(index + 1))
                {
                    if next_markers.is_empty() {
                        answer = trim_answer(&next[content_start(next)..]);
                    }
                }
            }
            let Some(folded) = valid_answer(answer) else {
                continue;
            };
            match marker.label {
                Label::Hypothesis => hypothesis = true,
                Label::Marker(m) => {
                    let slot = match m {
                        Marker::Blocker => 0,
                        Marker::RuledOut => 1,
                        Marker::BestPath => 2,
                    };
                    let duplicate = accepted.iter().flatten().any(|a| *a == folded);
                    if accepted[slot].is_none() && !duplicate {
                        accepted[slot] = Some(folded);
                    }
                }
            }
        }
    }
    let mut set: MarkerSet = Marker::ALL
        .iter()
        .zip(&accepted)
        .filter(|(_, a)| a.is_some())
        .map(|(m, _)| *m)
        .collect();
    if hypothesis {
        set = set.with(Marker::RuledOut);
    }
    set
}

/// The markers one reply still leaves unanswered.
pub fn missing_answers(text: &str) -> MarkerSet {
    MarkerSet::ALL.without(answered_markers(text))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Marker(Marker),
    Hypothesis,
}

const LABELS: [(&str, Label); 10] = [
    ("卡点", Label::Marker(Marker::Blocker)),
    ("blocker", Label::Marker(Marker::Blocker)),
    ("排除", Label::Marker(Marker::RuledOut)),
    ("ruled_out", Label::Marker(Marker::RuledOut)),
    ("excluded", Label::Marker(Marker::RuledOut)),
    ("性价比", Label::Marker(Marker::BestPath)),
    ("best_path", Label::Marker(Marker::BestPath)),
    ("cost_effective", Label::Marker(Marker::BestPath)),
    ("假设", Label::Hypothesis),
    ("hypothesis", Label::Hypothesis),
];

/// A marker found in a line: where it starts and where its answer starts (byte offsets).
#[derive(Clone, Copy, Debug)]
struct Found {
    at: usize,
    label: Label,
    answer: usize,
}

/// The lines of `text`, with `None` for lines inside fences, indented code blocks and HTML
/// comments, and for quote lines (a list item's quote included).
fn visible_lines(text: &str) -> Vec<Option<&str>> {
    let mut fence: Option<(char, usize)> = None;
    let mut in_comment = false;
    // Whether the last line was blank (the start counts as one), and whether the last non-blank
    // line was a list item (indented lines after it continue the item, they are not code).
    let mut after_blank = true;
    let mut after_list_item = false;
    let mut in_indented_code = false;
    text.split('\n')
        .map(|raw| {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            if in_comment {
                if line.contains("-->") {
                    in_comment = false;
                }
                return None;
            }
            let trimmed = line.trim_start();
            let run = |c: char| trimmed.chars().take_while(|&x| x == c).count();
            if let Some((c, len)) = fence {
                let n = run(c);
                if n >= len && trimmed[n * c.len_utf8()..].trim().is_empty() {
                    fence = None;
                }
                return None;
            }
            if trimmed.is_empty() {
                after_blank = true;
                return Some(line);
            }
            let indented = line.starts_with('\t') || line.starts_with("    ");
            in_indented_code = indented && (in_indented_code || (after_blank && !after_list_item));
            after_blank = false;
            if in_indented_code {
                return None;
            }
            after_list_item =
                content_start(line) > line.len() - trimmed.len() || (indented && after_list_item);
            for c in ['`', '~'] {
                let n = run(c);
                if n >= 3 {
                    fence = Some((c, n));
                    return None;
                }
            }
            if trimmed.starts_with('>') || line[content_start(line)..].starts_with('>') {
                return None;
            }
            if let Some(open) = line.find("<!--") {
                // A comment hides the rest of its line and every line up to its end.
                if !line[open..].contains("-->") {
                    in_comment = true;
                }
                return None;
            }
            Some(line)
        })
        .collect()
}

/// Byte offset where a line's content starts, after indentation and list or heading decoration.
fn content_start(line: &str) -> usize {
    let mut i = line.len() - line.trim_start().len();
    loop {
        let rest = &line[i..];
        let hashes = rest.chars().take_while(|&c| c == '#').count();
        if hashes > 0 {
            if let Some(after) = spaces_after(rest, hashes) {
                i += after;
                continue;
            }
        }
        if let Some(c) = rest.chars().next() {
            if matches!(c, '-' | '*' | '+' | '•' | '·') {
                if let Some(after) = spaces_after(rest, c.len_utf8()) {
                    i += after;
                    continue;
                }
            }
        }
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if (1..=3).contains(&digits) {
            let after_digits = &rest[digits..];
            match after_digits.chars().next() {
                Some(c @ ('.' | ')' | '．')) => {
                    if let Some(after) = spaces_after(rest, digits + c.len_utf8()) {
                        i += after;
                        continue;
                    }
                }
                Some(c @ '、') => {
                    let skip = digits + c.len_utf8();
                    i += skip + leading_spaces(&rest[skip..]);
                    continue;
                }
                _ => {}
            }
        }
        return i;
    }
}

/// If `s[at..]` starts with at least one space or tab, the offset after them.
fn spaces_after(s: &str, at: usize) -> Option<usize> {
    let n = leading_spaces(&s[at..]);
    (n > 0).then_some(at + n)
}

fn leading_spaces(s: &str) -> usize {
    s.len() - s.trim_start_matches([' ', '\t', '\u{3000}']).len()
}

/// Characters after which a marker may start inside a line.
fn opens_marker(c: char) -> bool {
    c.is_whitespace() || "，。；;,、|（(:：".contains(c)
}

fn markers_in_line(line: &str) -> Vec<Found> {
    let start = content_start(line);
    let mut found = Vec::new();
    let mut next_allowed = start;
    let mut prev: Option<char> = None;
    for (i, c) in line[start..].char_indices() {
        let at = start + i;
        let candidate = at == start || prev.is_some_and(opens_marker);
        prev = Some(c);
        if !candidate || at < next_allowed {
            continue;
        }
        if let Some((label, answer)) = parse_marker(line, at) {
            found.push(Found { at, label, answer });
            next_allowed = answer;
        }
    }
    found
}

/// Parses a marker at `at`: emphasis, label, emphasis, spaces, separator, emphasis.
fn parse_marker(line: &str, at: usize) -> Option<(Label, usize)> {
    let mut i = skip_emphasis(line, at);
    let (label, len) = match_label(&line[i..])?;
    i = skip_emphasis(line, i + len);
    i += leading_spaces(&line[i..]);
    let sep = line[i..].chars().next()?;
    if !matches!(sep, '=' | '＝' | ':' | '：') {
        return None;
    }
    Some((label, skip_emphasis(line, i + sep.len_utf8())))
}

/// Skips up to two `*` or `_` (markdown emphasis) at `at`.
fn skip_emphasis(line: &str, at: usize) -> usize {
    let n = line[at..]
        .bytes()
        .take(2)
        .take_while(|b| matches!(b, b'*' | b'_'))
        .count();
    at + n
}

/// The label `rest` starts with, and its length in bytes.
fn match_label(rest: &str) -> Option<(Label, usize)> {
    LABELS.iter().find_map(|&(label, kind)| {
        if !label.is_ascii() {
            return rest.starts_with(label).then_some((kind, label.len()));
        }
        let bytes = rest.as_bytes();
        if bytes.len() < label.len() {
            return None;
        }
        let same = label.bytes().zip(bytes).all(|(l, b)| match l {
            b'_' => matches!(b, b'_' | b'-' | b' '),
            _ => b.to_ascii_lowercase() == l,
        });
        // Whole words: no letter or digit next, and no `_` that continues the word (a `_` run
        // that is emphasis, as in `__blocker__=`, is fine).
        let after = &bytes[label.len()..];
        let word_char = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
        let underscores = after.iter().take_while(|&&b| b == b'_').count();
        let boundary = !word_char(after.first()) && !word_char(after.get(underscores));
        (same && boundary).then_some((kind, label.len()))
    })
}

/// An answer with trailing separators and surrounding decoration removed.
fn trim_answer(answer: &str) -> &str {
    const EDGES: &[char] = &[
        ' ', '\t', '\u{3000}', '*', '_', '`', '"', '\'', '“', '”', '‘', '’', '「', '」', '『',
        '』', '，', ',', '；', ';', '|', '。',
    ];
    answer.trim().trim_matches(EDGES)
}

/// Placeholders and bare negations, folded (lowercase letters and digits only).
const PLACEHOLDERS: &[&str] = &[
    "tbd",
    "tba",
    "todo",
    "fixme",
    "na",
    "none",
    "nothing",
    "unknown",
    "idk",
    "notsure",
    "dontknow",
    "nothingyet",
    "placeholder",
    "answer",
    "youranswer",
    "same",
    "sameasabove",
    "ditto",
    "etc",
    "无",
    "没有",
    "暂无",
    "尚无",
    "不知道",
    "不确定",
    "未知",
    "待定",
    "待补充",
    "待填",
    "略",
    "同上",
    "省略",
    "占位",
    "答案",
    "填写",
];

/// The folded answer if it is valid (rule 5), else `None`.
fn valid_answer(answer: &str) -> Option<String> {
    if answer.is_empty() {
        return None;
    }
    let enclosed = [('<', '>'), ('{', '}'), ('【', '】')]
        .iter()
        .any(|&(open, close)| answer.starts_with(open) && answer.ends_with(close));
    if enclosed {
        return None;
    }
    let folded = fold(answer);
    if folded.is_empty() || folded.chars().all(|c| c == 'x') {
        return None;
    }
    if PLACEHOLDERS.contains(&folded.as_str()) || is_template_text(&folded) {
        return None;
    }
    let weight: usize = folded.chars().map(|c| if is_cjk(c) { 2 } else { 1 }).sum();
    (weight >= MIN_ANSWER_WEIGHT).then_some(folded)
}

fn is_template_text(folded: &str) -> bool {
    let is = |template: &str| folding(template).eq(folded.chars());
    LABELS.iter().any(|(label, _)| is(label))
        || QUESTIONS_ZH.iter().chain(&QUESTIONS_EN).any(|q| is(q))
}

/// Lowercase letters and digits only.
fn fold(text: &str) -> String {
    folding(text).collect()
}

/// [`fold`]'s chars, one by one: a template is compared without folding it into a string.
fn folding(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
}

/// Han, kana or Hangul: dense scripts, so one character weighs as two Latin ones.
fn is_cjk(c: char) -> bool {
    is_han_or_kana(c) || matches!(c, '\u{AC00}'..='\u{D7AF}')
}

/// A Han ideograph or a kana character: the script test behind `language: auto`.
pub(crate) fn is_han_or_kana(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3134F}')
}

#[cfg(test)]
mod tests;
