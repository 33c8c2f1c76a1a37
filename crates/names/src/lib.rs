//! Tool-name tokenization and token-boundary pattern matching, shared by the family's guards
//! (research-nudge classifies tools with it, pain-point-check matches its allowlist with it).
//!
//! It also suggests the nearest known name for a misspelt one ([`did_you_mean`]), which every
//! row config and tool-argument validator of the family uses.
//!
//! It knows names only: nothing of WASM, JS, DSH, config files or any plugin's policy.
//!
//! Names are split into lowercase ASCII-alphanumeric tokens: at every character that is not an ASCII
//! letter or digit, between a lowercase letter or digit and the uppercase letter after it
//! (`WebSearch` → `web`, `search`), and before the last capital of an acronym that runs into a
//! capitalized word (`HTTPGet` → `http`, `get`). So `WebSearch`, `web_search` and `web-search` are
//! the same name, and `GitHubSearch`, `github_search` and `githubSearch` all match `github_search`.
//!
//! A [`Pattern`] matches a name when some contiguous run of the name's tokens, joined, spells the
//! pattern's tokens joined. The run's edges must be token edges, the boundaries inside it need not
//! line up: `fetch_url` matches `FetchURL` and `mcp__x__fetch_url` but not `prefetch_url_cache`, and
//! `search` does not match `research_nudge_snooze`.

use std::fmt;

/// Splits a tool name into lowercase tokens (see the module docs for the rules).
pub fn tokens(name: &str) -> Vec<String> {
    let canonical = normalize(name);
    if canonical.is_empty() {
        return Vec::new();
    }
    canonical.split('_').map(str::to_owned).collect()
}

/// The canonical spelling of a tool name: its tokens joined by `_` (`HTTPGet` → `http_get`).
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(2 * name.len());
    spell(name, |b| out.push(char::from(b)));
    out
}

/// Calls `f` with the canonical spelling of `name` ([`normalize`]), spelt on the stack when the
/// name is short (tool names are), so a guard can match a name per call without allocating.
pub fn with_normalized<T>(name: &str, f: impl FnOnce(&str) -> T) -> T {
    const STACK: usize = 128;
    if 2 * name.len() > STACK {
        return f(&normalize(name));
    }
    let mut buf = [0u8; STACK];
    let mut len = 0;
    spell(name, |b| {
        buf[len] = b;
        len += 1;
    });
    // Only ASCII letters, digits and `_` are spelt.
    f(std::str::from_utf8(&buf[..len]).unwrap_or_default())
}

/// Spells the tokens of `name` joined by `_`, byte by byte: at most two bytes per byte of the
/// name (one `_` before each token but the first). Reads bytes, not chars: a byte of a non-ASCII
/// char is neither an ASCII letter nor a digit, as the char is not.
fn spell(name: &str, mut put: impl FnMut(u8)) {
    let bytes = name.as_bytes();
    // Whether the token being spelt has a byte yet, and whether any token was spelt.
    let mut in_token = false;
    let mut spelt = false;
    for (i, &c) in bytes.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            in_token = false;
            continue;
        }
        if c.is_ascii_uppercase() && in_token {
            let prev = bytes[i - 1];
            let next_is_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let camel_edge = prev.is_ascii_lowercase() || prev.is_ascii_digit();
            let acronym_edge = prev.is_ascii_uppercase() && next_is_lower;
            if camel_edge || acronym_edge {
                in_token = false;
            }
        }
        if !in_token && spelt {
            put(b'_');
        }
        put(c.to_ascii_lowercase());
        in_token = true;
        spelt = true;
    }
}

/// A tool-name pattern from config, matched at token boundaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    joined: String,
}

/// A pattern that can never match anything useful.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmptyPattern;

impl fmt::Display for EmptyPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("must contain at least one letter or digit")
    }
}

impl Pattern {
    /// Parses a pattern; empty and separator-only patterns are rejected because they would either
    /// match nothing or, in the original plugin, everything.
    pub fn new(source: &str) -> Result<Self, EmptyPattern> {
        let joined: String = tokens(source).concat();
        if joined.is_empty() {
            return Err(EmptyPattern);
        }
        Ok(Self {
            source: source.to_owned(),
            joined,
        })
    }

    /// The pattern as the user wrote it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether a tokenized name contains this pattern at token boundaries.
    pub fn matches(&self, name_tokens: &[String]) -> bool {
        let wanted = self.joined.as_str();
        (0..name_tokens.len()).any(|start| {
            let mut rest = wanted;
            for token in &name_tokens[start..] {
                match rest.strip_prefix(token.as_str()) {
                    Some("") => return true,
                    Some(remaining) => rest = remaining,
                    None => return false,
                }
            }
            false
        })
    }
}

/// Whether any of the patterns matches the tokenized name.
pub fn any_matches(patterns: &[Pattern], name_tokens: &[String]) -> bool {
    patterns.iter().any(|p| p.matches(name_tokens))
}

/// Why an [`AnchoredPattern`] is rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchoredPatternError {
    /// No ASCII letter or digit: empty, separators only, or wildcards only.
    NoLetterOrDigit,
    /// A character that cannot occur in a tool name: whitespace, a control character or a
    /// non-ASCII character.
    InvalidCharacter(char),
}

impl fmt::Display for AnchoredPatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoLetterOrDigit => f.write_str("must contain at least one letter or digit"),
            Self::InvalidCharacter(c) => write!(
                f,
                "must be a tool name or a `*` pattern of ASCII letters, digits and separators \
                 (found {c:?})"
            ),
        }
    }
}

/// A whole-name pattern: an exact name, or a name with `*` wildcards, matched against the whole
/// name (anchored at both ends). pain-point-check's allowlists use it.
///
/// Names and the literal parts of patterns are compared in their canonical spelling
/// ([`names::normalize`]: lowercase tokens joined by `_`), so case and separator variants
/// of one name are the same name (`WebSearch`, `web-search` and `web_search`). A separator at the
/// edge of a literal part is kept as `_`, so `mcp__docs__*` matches `mcp__docs__search` but not
/// `mcp__docsearch`. `*` stands for any run of characters, including none. There is no substring
/// match: `read` does not allow `read_secrets` or `thread`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchoredPattern {
    source: String,
    /// Canonical literal parts between the `*`s; one part means an exact name.
    parts: Vec<String>,
}

impl AnchoredPattern {
    /// Parses a pattern.
    pub fn new(source: &str) -> Result<Self, AnchoredPatternError> {
        if let Some(c) = source
            .chars()
            .find(|c| !c.is_ascii() || c.is_ascii_whitespace() || c.is_ascii_control())
        {
            return Err(AnchoredPatternError::InvalidCharacter(c));
        }
        if !source.chars().any(|c| c.is_ascii_alphanumeric()) {
            return Err(AnchoredPatternError::NoLetterOrDigit);
        }
        let raw: Vec<&str> = source.split('*').collect();
        let parts = if raw.len() == 1 {
            vec![normalize(source)]
        } else {
            raw.iter().map(|part| canonical_part(part)).collect()
        };
        Ok(Self {
            source: source.to_owned(),
            parts,
        })
    }

    /// The pattern as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether two patterns are the same up to case and separators (`web_search`, `WebSearch`).
    pub fn same_as(&self, other: &Self) -> bool {
        self.parts == other.parts
    }

    /// Whether the pattern matches a tool name.
    pub fn matches(&self, name: &str) -> bool {
        self.matches_canonical(&normalize(name))
    }

    /// Whether the pattern matches a name already in canonical spelling.
    pub fn matches_canonical(&self, name: &str) -> bool {
        let (first, rest) = match self.parts.split_first() {
            Some(split) => split,
            None => return false,
        };
        let Some((last, middle)) = rest.split_last() else {
            return name == first;
        };
        let Some(mut remaining) = name.strip_prefix(first.as_str()) else {
            return false;
        };
        for part in middle {
            match remaining.find(part.as_str()) {
                Some(at) => remaining = &remaining[at + part.len()..],
                None => return false,
            }
        }
        remaining.ends_with(last.as_str())
    }
}

/// The canonical spelling of a literal part next to a `*`: its tokens joined by `_`, with a `_`
/// kept for a separator at either edge.
fn canonical_part(part: &str) -> String {
    if part.is_empty() {
        return String::new();
    }
    let core = normalize(part);
    if core.is_empty() {
        return "_".to_owned();
    }
    let edge = |c: Option<char>| c.is_some_and(|c| !c.is_ascii_alphanumeric());
    let lead = if edge(part.chars().next()) { "_" } else { "" };
    let trail = if edge(part.chars().last()) { "_" } else { "" };
    format!("{lead}{core}{trail}")
}

/// The known name closest to `key`: the same name up to case, `_` and `-`, or within a
/// Levenshtein distance of 2 (a quarter of the known name's length for long names) of such a
/// folded spelling. Row configs and tool arguments of every plugin use it for their "did you
/// mean" hints.
pub fn did_you_mean<'a>(key: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let folded = fold(key);
    known
        .into_iter()
        .filter_map(|known| {
            let known_folded = fold(known);
            let limit = (known_folded.len() / 4).max(2);
            let distance = levenshtein(&folded, &known_folded, limit)?;
            Some((distance, known))
        })
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, known)| known)
}

/// Lowercases and drops `_` and `-`, as chars.
fn fold(key: &str) -> Vec<char> {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The edit distance of `a` and `b` if it is at most `limit`.
fn levenshtein(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

/// DSH's Code Mode transport (`run_code`; DSH 0.2 calls the mode `ptc` and keeps the name): the
/// model's only tool in Code Mode, whose program calls the other tools (each through the same
/// hooks, as a call of its own). DSH reserves the exact name, so it is matched exactly, not by
/// tokens: the guards treat it as transparent, its nested calls being what count.
pub const CODE_MODE_TOOL: &str = "run_code";

/// Whether `name` is DSH's Code Mode transport ([`CODE_MODE_TOOL`], exactly).
pub fn is_code_mode_tool(name: &str) -> bool {
    name == CODE_MODE_TOOL
}

/// The family's own tools that only read (limit-break's `memory_recall`, `memory_stats` and
/// `resilient_fetch`): investigation, like `read` or `web_search`, for the guards' defaults.
pub const FAMILY_READ_ONLY_TOOLS: [&str; 3] = ["memory_recall", "memory_stats", "resilient_fetch"];

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Pattern::new(pattern).unwrap().matches(&tokens(name))
    }

    #[test]
    fn code_mode_tool_is_matched_exactly() {
        assert!(is_code_mode_tool("run_code"));
        // Not by tokens: a tool that only spells the same tokens is another tool.
        assert!(!is_code_mode_tool("RunCode"));
        assert!(!is_code_mode_tool("run-code"));
        assert!(!is_code_mode_tool("mcp__x__run_code"));
    }

    #[test]
    fn normalizes_case_and_separator_variants_to_one_name() {
        for name in [
            "WebSearch",
            "web_search",
            "web-search",
            "Web Search",
            "-web-search-",
            "WEB_SEARCH",
        ] {
            assert_eq!(normalize(name), "web_search", "{name}");
        }
    }

    #[test]
    fn splits_acronyms_consistently() {
        assert_eq!(normalize("HTTPGet"), "http_get");
        assert_eq!(normalize("HttpGet"), "http_get");
        assert_eq!(normalize("fetchURL"), "fetch_url");
        assert_eq!(normalize("getHTTPResponseCode"), "get_http_response_code");
        assert_eq!(normalize("GitHubSearch"), "git_hub_search");
        assert_eq!(
            normalize("mcp__brave__brave_web_search"),
            "mcp_brave_brave_web_search"
        );
        assert_eq!(
            normalize("research_nudge_snooze_v2"),
            "research_nudge_snooze_v2"
        );
        assert_eq!(normalize("s3Upload"), "s3_upload");
        assert_eq!(normalize("-"), "");
        assert_eq!(normalize("ÜberTool"), "ber_tool");
    }

    #[test]
    fn the_stack_spelling_and_the_tokens_agree_with_normalize() {
        let long = format!("{}Tool", "a".repeat(100));
        for name in [
            "",
            "-",
            "HTTPGet",
            "getHTTPResponseCode",
            "ÜberTool",
            "a__b",
            "x中Y",
            &long,
        ] {
            assert_eq!(
                with_normalized(name, str::to_owned),
                normalize(name),
                "{name}"
            );
            assert_eq!(tokens(name).join("_"), normalize(name), "{name}");
        }
        assert!(tokens("-").is_empty());
        assert_eq!(tokens("x中Y"), ["x", "y"]);
    }

    #[test]
    fn matches_at_token_boundaries_only() {
        assert!(matches("web_search", "mcp__brave__brave_web_search"));
        assert!(matches("web_search", "WebSearch"));
        assert!(matches("websearch", "web_search"));
        assert!(matches("web_search", "websearch"));
        assert!(matches("github_search", "GitHubSearch"));
        assert!(matches("http_get", "HTTPGet"));
        assert!(matches("fetch_url", "FetchURL"));
        assert!(!matches("fetch_url", "prefetch_url_cache"));
        assert!(!matches("search", "research_nudge_snooze"));
        assert!(!matches("edit", "get_credits"));
        assert!(!matches("test", "get_latest_version"));
        assert!(!matches("patch", "dispatch_job"));
        assert!(!matches("build", "ContextBuilder"));
        assert!(!matches("web_search", "web"));
        assert!(!matches("web_search", "search_web"));
    }

    #[test]
    fn rejects_empty_and_separator_only_patterns() {
        for bad in ["", "-", "_", "  ", "--__--", "é"] {
            assert_eq!(Pattern::new(bad), Err(EmptyPattern), "{bad:?}");
        }
        assert_eq!(Pattern::new("Web-Search").unwrap().source(), "Web-Search");
    }

    fn anchored(source: &str) -> AnchoredPattern {
        AnchoredPattern::new(source).expect("valid pattern")
    }

    #[test]
    fn exact_patterns_match_whole_names_in_canonical_spelling() {
        assert!(anchored("web_search").matches("WebSearch"));
        assert!(anchored("web_search").matches("web-search"));
        assert!(anchored("WebSearch").matches("web_search"));
        assert!(!anchored("read").matches("read_secrets"));
        assert!(!anchored("read").matches("thread"));
        assert!(!anchored("read").matches("mcp__fs__read"));
        assert!(!anchored("report").matches("report_and_deploy"));
    }

    #[test]
    fn wildcards_are_anchored_and_keep_edge_separators() {
        let docs = anchored("mcp__docs__*");
        assert!(docs.matches("mcp__docs__search"));
        assert!(docs.matches("mcp__docs__fetch_page"));
        assert!(!docs.matches("mcp__docsearch"));
        assert!(!docs.matches("mcp__github__search"));
        assert!(!docs.matches("x_mcp__docs__search"));
        let suffix = anchored("*_search");
        assert!(suffix.matches("web_search"));
        assert!(suffix.matches("mcp__brave__brave_web_search"));
        assert!(!suffix.matches("research"));
        assert!(!suffix.matches("search_web"));
        let middle = anchored("mcp__*__read*");
        assert!(middle.matches("mcp__fs__read_file"));
        assert!(middle.matches("mcp__fs__read"));
        assert!(!middle.matches("mcp__fs__write_file"));
        assert!(anchored("get*").matches("get_goal"));
        assert!(!anchored("get*").matches("forget"));
        // `*` may stand for nothing.
        assert!(anchored("job_*list").matches("job_list"));
    }

    #[test]
    fn rejects_patterns_that_cannot_name_a_tool() {
        for bad in ["", "*", "**", "__", "*_*", "-"] {
            assert_eq!(
                AnchoredPattern::new(bad),
                Err(AnchoredPatternError::NoLetterOrDigit),
                "{bad:?}"
            );
        }
        assert_eq!(
            AnchoredPattern::new("web search"),
            Err(AnchoredPatternError::InvalidCharacter(' '))
        );
        assert_eq!(
            AnchoredPattern::new("lecture_é"),
            Err(AnchoredPatternError::InvalidCharacter('é'))
        );
    }
}
