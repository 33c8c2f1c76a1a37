//! Tool-name tokenization and token-boundary pattern matching, shared by the family's guards
//! (research-nudge classifies tools with it, pain-point-check matches its allowlist with it).
//!
//! It knows tool names only: nothing of WASM, JS, DSH, config files or any plugin's policy.
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
    let mut out = Vec::new();
    let chars: Vec<char> = name.chars().collect();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            flush(&mut out, &mut current);
            continue;
        }
        if c.is_ascii_uppercase() && !current.is_empty() {
            let prev = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let camel_edge = prev.is_ascii_lowercase() || prev.is_ascii_digit();
            let acronym_edge = prev.is_ascii_uppercase() && next_is_lower;
            if camel_edge || acronym_edge {
                flush(&mut out, &mut current);
            }
        }
        current.push(c.to_ascii_lowercase());
    }
    flush(&mut out, &mut current);
    out
}

fn flush(out: &mut Vec<String>, current: &mut String) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
}

/// The canonical spelling of a tool name: its tokens joined by `_` (`HTTPGet` → `http_get`).
pub fn normalize(name: &str) -> String {
    tokens(name).join("_")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        Pattern::new(pattern).unwrap().matches(&tokens(name))
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
}
