//! Runtime settings and the tool-name patterns of the investigation allowlist.
//!
//! The row config is validated once, by the config crate's rules (the bounds below, the pattern
//! rule of [`ToolPattern::new`], no repeat inside one list); [`Settings`] is built from the
//! validated values with `with_*` methods that cannot fail, so nothing is checked twice.

/// Smallest allowed `failureThreshold` / `repeatThreshold`.
pub const THRESHOLD_MIN: u32 = 1;
/// Largest allowed `failureThreshold` / `repeatThreshold` (catches unit mistakes such as `2000`).
pub const THRESHOLD_MAX: u32 = 100;
/// Smallest allowed `maxDenials`: the escape valve can be tightened, never switched off.
pub const MAX_DENIALS_MIN: u32 = 1;
/// Largest allowed `maxDenials`.
pub const MAX_DENIALS_MAX: u32 = 1000;

/// Default `failureThreshold` (documented).
pub const DEFAULT_FAILURE_THRESHOLD: u32 = 2;
/// Default `repeatThreshold` (documented).
pub const DEFAULT_REPEAT_THRESHOLD: u32 = 2;
/// Default `maxDenials`: refusals in one pending episode before the gate opens by itself.
pub const DEFAULT_MAX_DENIALS: u32 = 8;

/// The eight names the original README documents as the investigation set.
pub const DOCUMENTED_ALLOWLIST: [&str; 8] = [
    "read",
    "read_image",
    "glob",
    "grep",
    "web_search",
    "ask_user_question",
    "skill",
    "todo_write",
];

/// The default allowlist, DSH's own tools first (the check block and the denials list those and
/// leave out [`OTHER_HARNESS_INVESTIGATION`]):
/// - the documented eight;
/// - DSH tools an agent needs to investigate or to report while the gate is pending: `job_output`
///   and `job_list` (a background job's output, `dsh-tool-jobs`), `report` (a subagent's only
///   channel back to its parent), `web_fetch`, `lsp` (definitions, references, hover), and
///   `session_trace`, `session_event_search`, `get_goal` and `list_agents`, which read the
///   session, its goal and its agents;
/// - the family's own read-only tools ([`names::FAMILY_READ_ONLY_TOOLS`]: limit-break's
///   `memory_recall`, `memory_stats` and `resilient_fetch`);
/// - the read-only tools of other harnesses, so their runs replay without a mapping
///   ([`OTHER_HARNESS_INVESTIGATION`]).
pub const DEFAULT_ALLOWLIST: [&str; 43] = concat(DSH_INVESTIGATION, OTHER_HARNESS_INVESTIGATION);

/// DSH's tools in the default allowlist (see [`DEFAULT_ALLOWLIST`]).
const DSH_INVESTIGATION: [&str; 20] = [
    "read",
    "read_image",
    "glob",
    "grep",
    "web_search",
    "ask_user_question",
    "skill",
    "todo_write",
    "job_output",
    "job_list",
    "report",
    "memory_recall",
    "memory_stats",
    "resilient_fetch",
    "web_fetch",
    "lsp",
    "session_trace",
    "session_event_search",
    "get_goal",
    "list_agents",
];

const fn concat<const A: usize, const B: usize, const C: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; C] {
    assert!(A + B == C);
    let mut out = [""; C];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < C {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// Read-only tools of other harnesses in the default allowlist: SWE-agent's viewer and search
/// tools (`open`, `goto`, `scroll_up`, `scroll_down`, `search_dir`, `search_file`, `find_file`),
/// Claude Code's `LS` and `NotebookRead`, the file and search tools of Cursor, Cline and the MCP
/// filesystem server (`read_file`, `list_dir`, `list_files`, `list_directory`, `view_file`,
/// `codebase_search`, `grep_search`, `file_search`, `search_files`, `directory_tree`,
/// `get_file_info`), and any MCP tool whose own name starts with `read_`, `list_` or `get_`.
/// Their editors and shells need no entry: they are experiments like DSH's.
pub const OTHER_HARNESS_INVESTIGATION: [&str; 23] = [
    "open",
    "goto",
    "scroll_up",
    "scroll_down",
    "search_dir",
    "search_file",
    "find_file",
    "ls",
    "notebook_read",
    "read_file",
    "list_dir",
    "list_files",
    "list_directory",
    "view_file",
    "codebase_search",
    "grep_search",
    "file_search",
    "search_files",
    "directory_tree",
    "get_file_info",
    "mcp__*__read_*",
    "mcp__*__list_*",
    "mcp__*__get_*",
];

/// Which language the model-facing texts use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LanguageChoice {
    /// Chinese when the agent's last user prompt contains a Han or kana character, else English.
    #[default]
    Auto,
    /// Always Chinese.
    Zh,
    /// Always English.
    En,
}

impl LanguageChoice {
    /// All choices, in the order of their config spelling.
    pub const ALL: [LanguageChoice; 3] = [Self::Auto, Self::Zh, Self::En];

    /// The config spelling: `auto`, `zh` or `en`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Zh => "zh",
            Self::En => "en",
        }
    }

    /// The choice a config spelling names (exact, lowercase), if any.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|choice| choice.key() == key)
    }
}

/// How failures and repeats are counted (`counting`; see the crate docs, "Counting").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Counting {
    /// `no-progress`: as `same-problem`, but a shell run whose failure changed (another error,
    /// another line, another test summary) is progress and does not count.
    #[default]
    NoProgress,
    /// `same-problem`: failures count per target and a success on it resolves them; repeats need
    /// the same outcome, two-call cycles count, waiting never counts (the counting of 0.3).
    SameProblem,
    /// `any-failure`: every failure since the last reset counts, and identical consecutive calls
    /// whatever they returned (the counting before 0.3).
    AnyFailure,
}

impl Counting {
    /// All choices, in the order of their config spelling.
    pub const ALL: [Counting; 3] = [Self::NoProgress, Self::SameProblem, Self::AnyFailure];

    /// The config spelling.
    pub fn key(self) -> &'static str {
        match self {
            Self::NoProgress => "no-progress",
            Self::SameProblem => "same-problem",
            Self::AnyFailure => "any-failure",
        }
    }

    /// The choice a config spelling names, if any.
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|choice| choice.key() == key)
    }

    /// Whether failures count per problem (`no-progress`, `same-problem`) rather than all since
    /// the last reset (`any-failure`).
    pub fn per_problem(self) -> bool {
        self != Self::AnyFailure
    }
}

/// A tool-name pattern of the allowlists: an exact name, or a name with `*` wildcards, matched
/// against the whole name (see [`names::AnchoredPattern`]).
pub type ToolPattern = names::AnchoredPattern;

/// The gate's settings: the documented defaults (`Default`), changed by the `with_*` methods;
/// read through getters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    enabled: bool,
    failure_threshold: u32,
    repeat_threshold: u32,
    max_denials: u32,
    language: LanguageChoice,
    counting: Counting,
    /// `allowlist`, then the `extraAllowlist` entries it does not already hold.
    allowlist: Vec<ToolPattern>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            enabled: true,
            failure_threshold: DEFAULT_FAILURE_THRESHOLD,
            repeat_threshold: DEFAULT_REPEAT_THRESHOLD,
            max_denials: DEFAULT_MAX_DENIALS,
            language: LanguageChoice::Auto,
            counting: Counting::NoProgress,
            allowlist: DEFAULT_ALLOWLIST
                .iter()
                .filter_map(|s| ToolPattern::new(s).ok())
                .collect(),
        }
    }
}

impl Settings {
    /// Turns the gate on or off (`enabled`).
    pub fn with_enabled(self, enabled: bool) -> Self {
        Self { enabled, ..self }
    }

    /// Sets `failureThreshold`.
    pub fn with_failure_threshold(self, failure_threshold: u32) -> Self {
        Self {
            failure_threshold,
            ..self
        }
    }

    /// Sets `repeatThreshold`.
    pub fn with_repeat_threshold(self, repeat_threshold: u32) -> Self {
        Self {
            repeat_threshold,
            ..self
        }
    }

    /// Sets `maxDenials`.
    pub fn with_max_denials(self, max_denials: u32) -> Self {
        Self {
            max_denials,
            ..self
        }
    }

    /// Sets `language`.
    pub fn with_language(self, language: LanguageChoice) -> Self {
        Self { language, ..self }
    }

    /// Sets `counting`.
    pub fn with_counting(self, counting: Counting) -> Self {
        Self { counting, ..self }
    }

    /// Replaces the allowlist (`allowlist`). An empty one is allowed: while pending, every tool is
    /// refused and only the answer (or a user message, or the escape valve) opens the gate.
    pub fn with_allowlist(self, allowlist: Vec<ToolPattern>) -> Self {
        Self { allowlist, ..self }
    }

    /// Adds `extraAllowlist` to the allowlist, skipping the patterns it already holds (up to case
    /// and separators), so the defaults need not be retyped.
    pub fn with_extra_allowlist(mut self, extra: impl IntoIterator<Item = ToolPattern>) -> Self {
        for pattern in extra {
            if !self.allowlist.iter().any(|p| p.same_as(&pattern)) {
                self.allowlist.push(pattern);
            }
        }
        self
    }

    /// Whether the gate is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Failed experiments that arm the gate (inclusive); a valid row keeps it in
    /// `THRESHOLD_MIN..=THRESHOLD_MAX`.
    pub fn failure_threshold(&self) -> u32 {
        self.failure_threshold
    }

    /// Consecutive identical calls that arm the gate (inclusive); a valid row keeps it in
    /// `THRESHOLD_MIN..=THRESHOLD_MAX`. `1` arms on every counted call ("strict mode").
    pub fn repeat_threshold(&self) -> u32 {
        self.repeat_threshold
    }

    /// Refusals in one pending episode after which the gate opens by itself; a valid row keeps
    /// it in `MAX_DENIALS_MIN..=MAX_DENIALS_MAX`.
    pub fn max_denials(&self) -> u32 {
        self.max_denials
    }

    /// The language choice for model-facing texts.
    pub fn language(&self) -> LanguageChoice {
        self.language
    }

    /// How failures and repeats are counted.
    pub fn counting(&self) -> Counting {
        self.counting
    }

    /// The merged allowlist: `allowlist`, then the new `extraAllowlist` entries.
    pub fn allowlist(&self) -> &[ToolPattern] {
        &self.allowlist
    }

    /// Whether a tool may run while the gate is pending (and is transparent to counting).
    pub fn is_allowlisted(&self, name: &str) -> bool {
        names::with_normalized(name, |canonical| {
            self.allowlist
                .iter()
                .any(|p| p.matches_canonical(canonical))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(sources: &[&str]) -> Vec<ToolPattern> {
        sources
            .iter()
            .map(|s| ToolPattern::new(s).unwrap())
            .collect()
    }

    #[test]
    fn defaults_match_the_documented_values() {
        let s = Settings::default();
        assert!(s.enabled());
        assert_eq!(s.failure_threshold(), 2);
        assert_eq!(s.repeat_threshold(), 2);
        assert_eq!(s.max_denials(), 8);
        assert_eq!(s.language(), LanguageChoice::Auto);
        let sources: Vec<&str> = s.allowlist().iter().map(ToolPattern::source).collect();
        assert_eq!(sources, DEFAULT_ALLOWLIST);
        assert_eq!(&DEFAULT_ALLOWLIST[..8], DOCUMENTED_ALLOWLIST);
        for name in DEFAULT_ALLOWLIST.iter().filter(|name| !name.contains('*')) {
            assert!(s.is_allowlisted(name), "{name}");
        }
        for name in [
            "mcp__filesystem__read_text_file",
            "mcp__github__get_issue",
            "ReadFile",
        ] {
            assert!(s.is_allowlisted(name), "{name}");
        }
        for name in [
            "mcp__filesystem__write_file",
            "mcp__x__search_replace",
            "str_replace_editor",
        ] {
            assert!(!s.is_allowlisted(name), "{name}");
        }
        for name in [
            "bash", "pwsh", "edit", "write", "run_code", "job_kill", "subagent",
        ] {
            assert!(!s.is_allowlisted(name), "{name}");
        }
    }

    #[test]
    fn the_with_methods_set_their_field() {
        let s = Settings::default()
            .with_enabled(false)
            .with_failure_threshold(3)
            .with_repeat_threshold(1)
            .with_max_denials(20)
            .with_language(LanguageChoice::Zh)
            .with_counting(Counting::AnyFailure);
        assert!(!s.enabled());
        assert_eq!(
            (s.failure_threshold(), s.repeat_threshold(), s.max_denials()),
            (3, 1, 20)
        );
        assert_eq!(s.language(), LanguageChoice::Zh);
        assert_eq!(s.counting(), Counting::AnyFailure);
        assert_eq!(s.allowlist(), Settings::default().allowlist());
    }

    #[test]
    fn extra_allowlist_merges_without_retyping_defaults() {
        let s =
            Settings::default().with_extra_allowlist(patterns(&["mcp__docs__*", "Read", "bash"]));
        assert_eq!(s.allowlist().len(), DEFAULT_ALLOWLIST.len() + 2);
        assert!(s.is_allowlisted("read"));
        assert!(s.is_allowlisted("mcp__docs__search"));
        assert!(s.is_allowlisted("bash"));
        // A replaced allowlist drops the defaults; an empty one allows nothing.
        let empty = Settings::default().with_allowlist(Vec::new());
        assert!(!empty.is_allowlisted("read"));
    }

    #[test]
    fn language_keys_round_trip() {
        for choice in LanguageChoice::ALL {
            assert_eq!(LanguageChoice::from_key(choice.key()), Some(choice));
        }
        assert_eq!(LanguageChoice::from_key("ZH"), None);
        assert_eq!(LanguageChoice::from_key("fr"), None);
    }
}
