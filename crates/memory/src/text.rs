//! Text analysis shared by indexing and querying: Unicode tokenizing, identifier splitting,
//! stopwords, Snowball (Porter2) English stemming, CJK bigrams and unigrams, concept tokens.
//!
//! - Text is split into runs of letters and digits; every other character (space, punctuation,
//!   `.`, `_`, `-`, `/`) separates words, so dotted and snake_case ids fall apart into segments.
//!   Full-width ASCII (`ＡＢＣ１２３`) is folded to ASCII first.
//! - A word run is split again at camelCase boundaries (`rayTracer` → `ray`, `tracer`;
//!   `HTTPServer` → `http`, `server`); the joined form is kept too, at a lower weight.
//! - Words are lowercased; English stopwords (including question words and query filler) are
//!   dropped; one-letter words are dropped unless they are digits; purely alphabetic words are
//!   stemmed with Snowball English; words with digits (`ipv6`, `5433`) are kept as they are.
//! - A run of CJK characters (Han, kana, Hangul) gives every character (a unigram, low weight)
//!   and every pair of neighbours (a bigram), the usual way to search Chinese without a
//!   dictionary. Single-character function words and two-character question words are dropped.
//! - Each English stem and each Chinese substring found in [`crate::concepts`] adds its concept
//!   token (`~port`), at a lower weight.

use crate::concepts::CONCEPTS;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// A map hashed with FNV-1a ([`::text::Fnv1a`]), small and fast for short token strings (no
/// `HashMap` DoS concern here: the index is built from the user's own store).
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<::text::Fnv1a>>;

/// Weight of a plain word or CJK bigram.
pub(crate) const WORD_WEIGHT: f32 = 1.0;
/// Weight of a camelCase word's joined form.
pub(crate) const JOINED_WEIGHT: f32 = 0.7;
/// Weight of a CJK unigram.
pub(crate) const UNIGRAM_WEIGHT: f32 = 0.3;
/// Weight of a concept token.
pub(crate) const CONCEPT_WEIGHT: f32 = 0.4;

/// Longest word kept, in characters; longer runs (hashes, base64) are cut.
const MAX_WORD_CHARS: usize = 64;

/// What produced a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A stemmed word (or a word with digits).
    Word,
    /// The joined form of a camelCase word.
    Joined,
    /// One CJK character.
    Unigram,
    /// Two neighbouring CJK characters.
    Bigram,
    /// A concept token from the table.
    Concept,
}

impl Kind {
    pub(crate) fn weight(self) -> f32 {
        match self {
            Kind::Word | Kind::Bigram => WORD_WEIGHT,
            Kind::Joined => JOINED_WEIGHT,
            Kind::Unigram => UNIGRAM_WEIGHT,
            Kind::Concept => CONCEPT_WEIGHT,
        }
    }

    /// Whether the token takes part in phrase matching (the ordered sequence of content tokens).
    pub(crate) fn in_phrase(self) -> bool {
        matches!(self, Kind::Word | Kind::Bigram)
    }
}

/// One token of analysed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// The normalised text (`~name` for a concept).
    pub text: String,
    /// What produced it.
    pub kind: Kind,
}

/// The English stopword list: the usual function words (after the Snowball English list), plus
/// question words and query filler, because recall queries are questions. `no` and `not` are kept.
const EN_STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "know",
    "let",
    "me",
    "more",
    "most",
    "much",
    "many",
    "my",
    "myself",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "please",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "s",
    "t",
    "ll",
    "re",
    "ve",
    "d",
    "m",
    "don",
    "doesn",
    "didn",
    "isn",
    "aren",
    "wasn",
    "weren",
    "won",
    "can't",
    "cannot",
    "also",
    "via",
    "per",
    "use",
    "used",
    "using",
];

/// Chinese single-character function words (particles, pronouns, the copula) dropped as unigrams,
/// and as bigrams when they are one of the pair's characters only for the particles.
const ZH_STOP_CHARS: &[char] = &[
    '的', '了', '吗', '呢', '吧', '啊', '呀', '嘛', '是', '在', '和', '与', '或', '也', '都', '就',
    '很', '我', '你', '他', '她', '它', '这', '那', '哪', '把', '被', '给', '有', '么', '个', '些',
    '吗', '多', '少', '怎', '什', '几', '要', '会', '能', '用', '请', '问', '还',
];
/// Particles that make any bigram containing them meaningless.
const ZH_PARTICLES: &[char] = &['的', '了', '吗', '呢', '吧', '啊', '呀', '嘛'];
/// Chinese two-character question words and filler, dropped as bigrams.
const ZH_STOP_BIGRAMS: &[&str] = &[
    "什么", "怎么", "怎样", "多少", "哪个", "哪些", "哪里", "为什", "如何", "是否", "可以", "一个",
    "一下", "我们", "你们", "他们", "这个", "那个", "这些", "那些", "请问", "告诉", "知道", "是不",
    "不是", "有没", "没有", "么办", "么样",
];

/// Stems already computed during one index build (lowercase word → stem): stemming is the
/// costliest step and a store repeats its words.
#[derive(Default)]
pub(crate) struct Memo(FastMap<String, String>);

/// The analyser: a stemmer and the concept table, built once per index.
pub(crate) struct Analyzer {
    stemmer: Stemmer,
    /// English stem → concept tokens.
    en_concepts: FastMap<String, Vec<String>>,
    /// Chinese surface → concept tokens.
    zh_concepts: FastMap<String, Vec<String>>,
    /// Longest Chinese surface, in characters.
    zh_max: usize,
    /// [`EN_STOPWORDS`] as a set.
    stopwords: HashSet<&'static str, BuildHasherDefault<::text::Fnv1a>>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer").finish_non_exhaustive()
    }
}

impl Analyzer {
    /// An analyser; `with_concepts: false` leaves the concept table out (the keyword-only
    /// baseline the recall bench compares against).
    pub(crate) fn new(with_concepts: bool) -> Analyzer {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut en_concepts: FastMap<String, Vec<String>> = FastMap::default();
        let mut zh_concepts: FastMap<String, Vec<String>> = FastMap::default();
        let mut zh_max = 0;
        let table = if with_concepts { CONCEPTS } else { &[] };
        for (name, en, zh) in table {
            let token = format!("~{name}");
            for w in *en {
                let stem = stemmer.stem(w).into_owned();
                let list = en_concepts.entry(stem).or_default();
                if !list.contains(&token) {
                    list.push(token.clone());
                }
            }
            for w in *zh {
                zh_max = zh_max.max(w.chars().count());
                let list = zh_concepts.entry((*w).to_owned()).or_default();
                if !list.contains(&token) {
                    list.push(token.clone());
                }
            }
        }
        let stopwords = EN_STOPWORDS.iter().copied().collect();
        Analyzer {
            stemmer,
            en_concepts,
            zh_concepts,
            zh_max,
            stopwords,
        }
    }

    /// Appends the tokens of `text` to `out`, in text order (concept tokens right after the word
    /// or run that produced them).
    pub(crate) fn analyze(&self, text: &str, out: &mut Vec<Token>) {
        self.analyze_memo(text, out, &mut Memo::default());
    }

    /// [`Analyzer::analyze`], reusing and filling `memo`.
    pub(crate) fn analyze_memo(&self, text: &str, out: &mut Vec<Token>, memo: &mut Memo) {
        let chars: Vec<char> = text.chars().map(fold_width).collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if is_cjk(c) {
                let start = i;
                while i < chars.len() && is_cjk(chars[i]) {
                    i += 1;
                }
                self.cjk_run(&chars[start..i], out);
            } else if c.is_alphanumeric() {
                let start = i;
                // Apostrophes inside a word ("don't") stay in it, so the stopword list sees it.
                while i < chars.len()
                    && !is_cjk(chars[i])
                    && (chars[i].is_alphanumeric()
                        || (chars[i] == '\''
                            && i + 1 < chars.len()
                            && chars[i + 1].is_alphabetic()))
                {
                    i += 1;
                }
                self.word_run(&chars[start..i], out, memo);
            } else {
                i += 1;
            }
        }
    }

    fn word_run(&self, run: &[char], out: &mut Vec<Token>, memo: &mut Memo) {
        let whole: String = run.iter().flat_map(|c| c.to_lowercase()).collect();
        let parts = camel_parts(run);
        if parts.len() <= 1 {
            for piece in whole.split('\'') {
                self.word(piece, Kind::Word, out, memo);
            }
            return;
        }
        for part in &parts {
            let lower: String = part.iter().flat_map(|c| c.to_lowercase()).collect();
            self.word(&lower, Kind::Word, out, memo);
        }
        self.word(&whole.replace('\'', ""), Kind::Joined, out, memo);
    }

    fn word(&self, lower: &str, kind: Kind, out: &mut Vec<Token>, memo: &mut Memo) {
        if lower.is_empty() || self.stopwords.contains(lower) {
            return;
        }
        let mut chars = lower.chars();
        let first = chars.next();
        if chars.next().is_none() && !first.is_some_and(|c| c.is_ascii_digit()) {
            return;
        }
        let lower = match lower.char_indices().nth(MAX_WORD_CHARS) {
            Some((at, _)) => &lower[..at],
            None => lower,
        };
        let text = if !lower.chars().all(char::is_alphabetic) {
            lower.to_owned()
        } else if let Some(stem) = memo.0.get(lower) {
            stem.clone()
        } else {
            let stem = self.stemmer.stem(lower).into_owned();
            memo.0.insert(lower.to_owned(), stem.clone());
            stem
        };
        if let Some(concepts) = self.en_concepts.get(&text) {
            out.push(Token {
                text: text.clone(),
                kind,
            });
            for c in concepts {
                out.push(Token {
                    text: c.clone(),
                    kind: Kind::Concept,
                });
            }
        } else {
            out.push(Token { text, kind });
        }
    }

    fn cjk_run(&self, run: &[char], out: &mut Vec<Token>) {
        for (k, &c) in run.iter().enumerate() {
            if k + 1 < run.len() {
                let d = run[k + 1];
                if !ZH_PARTICLES.contains(&c) && !ZH_PARTICLES.contains(&d) {
                    let pair: String = [c, d].iter().collect();
                    if !ZH_STOP_BIGRAMS.contains(&pair.as_str()) {
                        out.push(Token {
                            text: pair,
                            kind: Kind::Bigram,
                        });
                    }
                }
            }
            if !ZH_STOP_CHARS.contains(&c) {
                out.push(Token {
                    text: c.to_string(),
                    kind: Kind::Unigram,
                });
            }
        }
        // Concepts: every table surface found as a substring, each concept once per run.
        let mut found: Vec<&String> = Vec::new();
        let mut buf = String::new();
        for start in 0..run.len() {
            for len in 1..=self.zh_max.min(run.len() - start) {
                buf.clear();
                buf.extend(&run[start..start + len]);
                if let Some(concepts) = self.zh_concepts.get(&buf) {
                    for c in concepts {
                        if !found.contains(&c) {
                            found.push(c);
                        }
                    }
                }
            }
        }
        for c in found {
            out.push(Token {
                text: c.clone(),
                kind: Kind::Concept,
            });
        }
    }
}

/// Full-width ASCII forms (U+FF01..U+FF5E) and the ideographic space as their ASCII characters.
fn fold_width(c: char) -> char {
    match c {
        '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

/// Han ideographs (with extensions and compatibility forms), kana and Hangul syllables.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30ff      // Hiragana, Katakana
        | 0x3400..=0x4dbf    // CJK Extension A
        | 0x4e00..=0x9fff    // CJK Unified Ideographs
        | 0xac00..=0xd7af    // Hangul syllables
        | 0xf900..=0xfaff    // CJK Compatibility Ideographs
        | 0x20000..=0x2ebef  // Extensions B–F
        | 0x30000..=0x3134f) // Extension G
}

/// Splits a word run at camelCase boundaries: lower→Upper, and before the last capital of an
/// acronym that is followed by lowercase (`HTTPServer` → `HTTP`, `Server`). Digits do not split.
fn camel_parts(run: &[char]) -> Vec<&[char]> {
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..run.len() {
        let (p, c) = (run[i - 1], run[i]);
        let boundary = (p.is_lowercase() && c.is_uppercase())
            || (p.is_uppercase()
                && c.is_uppercase()
                && run.get(i + 1).is_some_and(|n| n.is_lowercase()));
        if boundary {
            parts.push(&run[start..i]);
            start = i;
        }
    }
    parts.push(&run[start..]);
    parts
}
