//! Validated runtime settings and the tool-name patterns of the investigation allowlist.
//!
//! [`SettingsInput`] is what a row config says, field by field; [`Settings::new`] checks it once
//! and reports every problem as a typed [`SettingsError`] (the config crate turns them into
//! field/rule/value messages). A [`Settings`] value is always valid, so the gate never re-checks.

use std::fmt;

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

/// A settings field, named by its config key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `failureThreshold`.
    FailureThreshold,
    /// `repeatThreshold`.
    RepeatThreshold,
    /// `maxDenials`.
    MaxDenials,
    /// `allowlist`.
    Allowlist,
    /// `extraAllowlist`.
    ExtraAllowlist,
}

impl Field {
    /// The row-config key of this field.
    pub fn key(self) -> &'static str {
        match self {
            Self::FailureThreshold => "failureThreshold",
            Self::RepeatThreshold => "repeatThreshold",
            Self::MaxDenials => "maxDenials",
            Self::Allowlist => "allowlist",
            Self::ExtraAllowlist => "extraAllowlist",
        }
    }
}

/// Why a tool-name pattern is rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternProblem {
    /// No ASCII letter or digit: the pattern is empty, separators only, or wildcards only. A bare
    /// `*` would allow every tool and so switch the gate off; `enabled: false` says that plainly.
    NoLetterOrDigit,
    /// A character that cannot occur in a tool name: whitespace, a control character or a
    /// non-ASCII character.
    InvalidCharacter(char),
    /// The same pattern (up to case and separators) appears earlier in the same list.
    Duplicate {
        /// Index of the earlier entry.
        first_index: usize,
    },
}

impl fmt::Display for PatternProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoLetterOrDigit => f.write_str(
                "must contain at least one letter or digit (a bare `*` would allow every tool; \
                 use enabled: false to turn the gate off)",
            ),
            Self::InvalidCharacter(c) => names::AnchoredPatternError::InvalidCharacter(*c).fmt(f),
            Self::Duplicate { first_index } => {
                write!(f, "repeats entry [{first_index}] of the same list")
            }
        }
    }
}

impl From<names::AnchoredPatternError> for PatternProblem {
    fn from(error: names::AnchoredPatternError) -> Self {
        match error {
            names::AnchoredPatternError::NoLetterOrDigit => Self::NoLetterOrDigit,
            names::AnchoredPatternError::InvalidCharacter(c) => Self::InvalidCharacter(c),
        }
    }
}

/// One problem in a [`SettingsInput`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingsError {
    /// An integer field outside its bounds.
    OutOfRange {
        /// The field.
        field: Field,
        /// The value given.
        value: u32,
        /// Smallest allowed value.
        min: u32,
        /// Largest allowed value.
        max: u32,
    },
    /// A list entry that is not a valid tool-name pattern.
    InvalidPattern {
        /// `Allowlist` or `ExtraAllowlist`.
        field: Field,
        /// Index in that list.
        index: usize,
        /// The entry as given.
        pattern: String,
        /// What is wrong with it.
        problem: PatternProblem,
    },
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange {
                field,
                value,
                min,
                max,
            } => write!(
                f,
                "{} must be an integer from {min} to {max} (got {value})",
                field.key()
            ),
            Self::InvalidPattern {
                field,
                index,
                pattern,
                problem,
            } => write!(f, "{}[{index}] {problem} (got {pattern:?})", field.key()),
        }
    }
}

impl std::error::Error for SettingsError {}

/// A tool-name pattern of the allowlists: an exact name, or a name with `*` wildcards, matched
/// against the whole name (see [`names::AnchoredPattern`]).
pub type ToolPattern = names::AnchoredPattern;

/// What a row config says, before validation. `Default` is the documented defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsInput {
    /// `enabled`: `false` turns the gate off (every call allowed, nothing counted).
    pub enabled: bool,
    /// `failureThreshold`: failed experiments that arm the gate (inclusive).
    pub failure_threshold: u32,
    /// `repeatThreshold`: consecutive identical calls that arm the gate (inclusive).
    pub repeat_threshold: u32,
    /// `allowlist`: tools still callable while the gate is pending; replaces the defaults.
    pub allowlist: Vec<String>,
    /// `extraAllowlist`: added to `allowlist`, so the defaults need not be retyped.
    pub extra_allowlist: Vec<String>,
    /// `language`: the language of the check block, denials and notices.
    pub language: LanguageChoice,
    /// `maxDenials`: refusals in one pending episode after which the gate opens by itself.
    pub max_denials: u32,
    /// `counting`: how failures and repeats are counted.
    pub counting: Counting,
}

impl Default for SettingsInput {
    fn default() -> Self {
        Self {
            enabled: true,
            failure_threshold: DEFAULT_FAILURE_THRESHOLD,
            repeat_threshold: DEFAULT_REPEAT_THRESHOLD,
            allowlist: DEFAULT_ALLOWLIST.iter().map(|&s| s.to_owned()).collect(),
            extra_allowlist: Vec::new(),
            language: LanguageChoice::Auto,
            max_denials: DEFAULT_MAX_DENIALS,
            counting: Counting::NoProgress,
        }
    }
}

/// Validated settings. Built by [`Settings::new`] (or `Default`); read through getters.
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
    /// Validates an input, reporting every problem in field order (thresholds, `maxDenials`,
    /// `allowlist`, `extraAllowlist`; list entries in index order).
    ///
    /// An empty `allowlist` is valid: while pending, every tool is refused and only the answer
    /// (or a user message, or the escape valve) opens the gate. An `extraAllowlist` entry that is
    /// already in `allowlist` is merged silently; a repeat inside one list is an error.
    pub fn new(input: &SettingsInput) -> Result<Self, Vec<SettingsError>> {
        let mut errors = Vec::new();
        let bounded = [
            (
                Field::FailureThreshold,
                input.failure_threshold,
                THRESHOLD_MIN,
                THRESHOLD_MAX,
            ),
            (
                Field::RepeatThreshold,
                input.repeat_threshold,
                THRESHOLD_MIN,
                THRESHOLD_MAX,
            ),
            (
                Field::MaxDenials,
                input.max_denials,
                MAX_DENIALS_MIN,
                MAX_DENIALS_MAX,
            ),
        ];
        for (field, value, min, max) in bounded {
            if !(min..=max).contains(&value) {
                errors.push(SettingsError::OutOfRange {
                    field,
                    value,
                    min,
                    max,
                });
            }
        }
        let mut allowlist = parse_list(Field::Allowlist, &input.allowlist, &mut errors);
        for pattern in parse_list(Field::ExtraAllowlist, &input.extra_allowlist, &mut errors) {
            if !allowlist.iter().any(|p| p.same_as(&pattern)) {
                allowlist.push(pattern);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            enabled: input.enabled,
            failure_threshold: input.failure_threshold,
            repeat_threshold: input.repeat_threshold,
            max_denials: input.max_denials,
            language: input.language,
            counting: input.counting,
            allowlist,
        })
    }

    /// Whether the gate is on.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Failed experiments that arm the gate (inclusive), in `THRESHOLD_MIN..=THRESHOLD_MAX`.
    pub fn failure_threshold(&self) -> u32 {
        self.failure_threshold
    }

    /// Consecutive identical calls that arm the gate (inclusive), in
    /// `THRESHOLD_MIN..=THRESHOLD_MAX`. `1` arms on every counted call ("strict mode").
    pub fn repeat_threshold(&self) -> u32 {
        self.repeat_threshold
    }

    /// Refusals in one pending episode after which the gate opens by itself, in
    /// `MAX_DENIALS_MIN..=MAX_DENIALS_MAX`.
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

fn parse_list(
    field: Field,
    sources: &[String],
    errors: &mut Vec<SettingsError>,
) -> Vec<ToolPattern> {
    let mut parsed: Vec<(usize, ToolPattern)> = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        let problem = match ToolPattern::new(source) {
            Ok(pattern) => match parsed.iter().find(|(_, p)| p.same_as(&pattern)) {
                Some(&(first_index, _)) => PatternProblem::Duplicate { first_index },
                None => {
                    parsed.push((index, pattern));
                    continue;
                }
            },
            Err(problem) => problem.into(),
        };
        errors.push(SettingsError::InvalidPattern {
            field,
            index,
            pattern: source.clone(),
            problem,
        });
    }
    parsed.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> SettingsInput {
        SettingsInput::default()
    }

    #[test]
    fn defaults_match_the_documented_values() {
        let s = Settings::default();
        assert_eq!(Settings::new(&input()).unwrap(), s);
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
    fn reports_every_problem_with_field_index_and_value() {
        let bad = SettingsInput {
            failure_threshold: 0,
            repeat_threshold: 101,
            max_denials: 0,
            allowlist: vec!["read".into(), "*".into(), "Read".into()],
            extra_allowlist: vec!["mcp x".into()],
            ..input()
        };
        let errors = Settings::new(&bad).unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "failureThreshold must be an integer from 1 to 100 (got 0)",
                "repeatThreshold must be an integer from 1 to 100 (got 101)",
                "maxDenials must be an integer from 1 to 1000 (got 0)",
                "allowlist[1] must contain at least one letter or digit (a bare `*` would allow \
                 every tool; use enabled: false to turn the gate off) (got \"*\")",
                "allowlist[2] repeats entry [0] of the same list (got \"Read\")",
                "extraAllowlist[0] must be a tool name or a `*` pattern of ASCII letters, digits \
                 and separators (found ' ') (got \"mcp x\")",
            ]
        );
        assert_eq!(
            errors[0],
            SettingsError::OutOfRange {
                field: Field::FailureThreshold,
                value: 0,
                min: 1,
                max: 100
            }
        );
    }

    #[test]
    fn bounds_are_inclusive() {
        for (f, r, d) in [(1, 1, 1), (100, 100, 1000)] {
            let s = Settings::new(&SettingsInput {
                failure_threshold: f,
                repeat_threshold: r,
                max_denials: d,
                ..input()
            })
            .unwrap();
            assert_eq!(
                (s.failure_threshold(), s.repeat_threshold(), s.max_denials()),
                (f, r, d)
            );
        }
    }

    #[test]
    fn extra_allowlist_merges_without_retyping_defaults() {
        let s = Settings::new(&SettingsInput {
            extra_allowlist: vec!["mcp__docs__*".into(), "read".into(), "bash".into()],
            ..input()
        })
        .unwrap();
        assert_eq!(s.allowlist().len(), DEFAULT_ALLOWLIST.len() + 2);
        assert!(s.is_allowlisted("read"));
        assert!(s.is_allowlisted("mcp__docs__search"));
        assert!(s.is_allowlisted("bash"));
        // A replaced allowlist drops the defaults; an empty one allows nothing.
        let empty = Settings::new(&SettingsInput {
            allowlist: Vec::new(),
            ..input()
        })
        .unwrap();
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
