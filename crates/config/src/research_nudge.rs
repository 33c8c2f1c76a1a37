//! The `research-nudge` row: its serde type, every default, its validation rules and schema, and
//! the conversion into the policy's [`Settings`].

use crate::toolkit::{Field, Issue, Rule, validate_fields};
use names::Pattern;
use policy::{MINUTE, Millis, ReminderStyle, SPECIFIC_REMINDER, Settings, Weights};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The row's id in a profile's `cordis.patch.yml`.
pub const ROW_ID: &str = "research-nudge";
/// The npm package the row mounts.
pub const PACKAGE_NAME: &str = "dsh-research-nudge";

/// Prefix of the one-line summary [`crate::describe`] builds from validation issues.
pub const MESSAGE_PREFIX: &str = "research-nudge: invalid config: ";

/// The built-in reminder body (`reminder`'s default).
pub const DEFAULT_REMINDER: &str = "[Research Nudge]

Pause and reflect before continuing:

1. What problem am I trying to solve right now? Restate it precisely.
2. What approach am I currently taking, and how many attempts has it taken without success?
3. Am I fully confident this approach will work? If I am guessing at an API, an error message, a library's behavior, or platform details I have not verified, I am not fully confident.
4. If I am not fully confident: external research is cheaper than more local trial-and-error. Search the official documentation, GitHub issues, existing libraries, or the exact error message before trying again.

Do not search merely to satisfy this reminder. If the task is self-contained and external research would not help, continue normally. If you are deliberately making progress from local evidence and do not want another reminder for a while, use the research_nudge_snooze tool.";

/// Smallest `debtThreshold` and `maxToolCallsWithoutResearch`.
pub const THRESHOLD_MIN: u32 = 1;
/// Largest `debtThreshold`, `maxToolCallsWithoutResearch` and debt weight.
pub const COUNT_MAX: u32 = 1_000_000;
/// Smallest debt weight (`ordinaryToolDebt`, `mutationDebt`, …).
pub const WEIGHT_MIN: u32 = 0;
/// Smallest `maxMinutesWithoutResearch` and `cooldownMinutes`.
pub const MINUTES_MIN: u32 = 0;
/// Largest `maxMinutesWithoutResearch` and `cooldownMinutes` (one year).
pub const MINUTES_MAX: u32 = 525_600;
/// Smallest `reminderBackoff` (1: a fixed cooldown, as the original plugin had).
pub const BACKOFF_MIN: u32 = 1;
/// Largest `reminderBackoff`.
pub const BACKOFF_MAX: u32 = 100;
/// Smallest `maxAgentSnoozeMinutes`.
pub const SNOOZE_MIN: u32 = 1;
/// Largest `maxAgentSnoozeMinutes` (one week).
pub const SNOOZE_MAX: u32 = 10_080;

/// JSON Schema `pattern` of a tool-name pattern: at least one ASCII letter or digit, the same rule
/// as [`Pattern::new`].
const TOOL_PATTERN_REGEX: &str = "[A-Za-z0-9]";
/// JSON Schema `pattern` of the reminder: at least one non-whitespace character.
const REMINDER_REGEX: &str = "\\S";

/// The config of the `research-nudge` Cordis row; DSH replaces it whole, so omitted keys default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
#[schemars(title = "research-nudge row config")]
pub struct RowConfig {
    /// Register the lifecycle listener and the snooze tool; `false` turns the plugin off.
    pub enabled: bool,
    /// Debt score that makes a reminder eligible.
    #[schemars(range(min = THRESHOLD_MIN, max = COUNT_MAX))]
    pub debt_threshold: u32,
    /// Call-count fallback threshold: counted tool calls without recognized research.
    #[schemars(range(min = THRESHOLD_MIN, max = COUNT_MAX))]
    pub max_tool_calls_without_research: u32,
    /// Elapsed-time fallback threshold: minutes without recognized research (fractions allowed).
    #[schemars(range(min = MINUTES_MIN, max = MINUTES_MAX))]
    pub max_minutes_without_research: f64,
    /// Minimum time between two reminders to one agent, in minutes (fractions allowed).
    #[schemars(range(min = MINUTES_MIN, max = MINUTES_MAX))]
    pub cooldown_minutes: f64,
    /// Factor applied to the cooldown after each further reminder that no research answered
    /// (1 keeps it fixed; fractions allowed): with 2, the reminders of a session that never
    /// researches come 10, 20, 40, … minutes apart instead of every 10.
    #[schemars(range(min = BACKOFF_MIN, max = BACKOFF_MAX))]
    pub reminder_backoff: f64,
    /// Debt weight for other local tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub ordinary_tool_debt: u32,
    /// Debt weight for write/edit/delete-style tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub mutation_debt: u32,
    /// Debt weight for shell/build/test-style tools.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub execution_debt: u32,
    /// Extra debt weight for a failed result.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub failure_debt: u32,
    /// Extra debt weight for a failure equivalent to a recent one.
    #[schemars(range(min = WEIGHT_MIN, max = COUNT_MAX))]
    pub repeated_failure_debt: u32,
    /// Upper bound for one agent-requested snooze of reminders, in minutes.
    #[schemars(range(min = SNOOZE_MIN, max = SNOOZE_MAX))]
    pub max_agent_snooze_minutes: u32,
    /// Tool-name patterns whose successful call is external research and resets the agent's state.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub research_tools: Vec<String>,
    /// Tool-name patterns classed as write/edit/delete-style mutations.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub mutation_tools: Vec<String>,
    /// Tool-name patterns classed as shell/build/test-style executions.
    #[schemars(inner(regex(pattern = TOOL_PATTERN_REGEX)))]
    pub execution_tools: Vec<String>,
    /// Model-visible reminder body; the current signals are appended after a blank line. Under
    /// `reminderStyle: specific` the built-in text stands for the specific reminder's shorter body.
    #[schemars(regex(pattern = REMINDER_REGEX))]
    pub reminder: String,
    /// `specific` (the repeated failure's search phrase and the agent's research tools follow the
    /// body) or `original` (the body and the signals line only, the original plugin's reminder).
    pub reminder_style: ReminderStyleKey,
    /// Log resets and queued reminders to stderr.
    pub debug: bool,
}

/// The `reminderStyle` key's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(inline)]
pub enum ReminderStyleKey {
    /// The body and the signals line only.
    Original,
    /// Also what to search for and with which tools.
    Specific,
}

const REMINDER_STYLES: [&str; 2] = ["original", "specific"];

impl Default for RowConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            debt_threshold: 20,
            max_tool_calls_without_research: 15,
            max_minutes_without_research: 15.0,
            cooldown_minutes: 10.0,
            reminder_backoff: 2.0,
            ordinary_tool_debt: 1,
            mutation_debt: 2,
            execution_debt: 1,
            failure_debt: 4,
            repeated_failure_debt: 6,
            max_agent_snooze_minutes: 60,
            research_tools: strings(&[
                "web_search",
                "websearch",
                "web_fetch",
                "webfetch",
                "search_web",
                "browser_search",
                "github_search",
                "search_github",
                "fetch_url",
                "http_get",
                "docs_search",
                "documentation_search",
            ]),
            mutation_tools: strings(&[
                "write",
                "edit",
                "replace",
                "patch",
                "create_file",
                "delete_file",
                "apply_patch",
                "delete",
                "remove",
                "rename",
                "move",
                "mkdir",
                "rmdir",
                "create_directory",
            ]),
            execution_tools: strings(&[
                "bash",
                "sh",
                "zsh",
                "shell",
                "terminal",
                "exec",
                "execute",
                "run_command",
                "run",
                "test",
                "tests",
                "pytest",
                "compile",
                "build",
                "make",
                "cargo",
                "npm",
                "pnpm",
                "yarn",
                "node",
                "python",
            ]),
            reminder: DEFAULT_REMINDER.to_owned(),
            reminder_style: ReminderStyleKey::Specific,
            debug: false,
        }
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|&s| s.to_owned()).collect()
}

impl RowConfig {
    /// The policy settings this config describes. Minutes become milliseconds (rounded to the
    /// nearest millisecond). Patterns are parsed; a config that passed [`validate`] has only valid
    /// ones, and an invalid one (possible only in a hand-built config) is skipped, never a panic.
    pub fn settings(&self) -> Settings {
        Settings {
            debt_threshold: self.debt_threshold,
            max_tool_calls_without_research: self.max_tool_calls_without_research,
            max_time_without_research: minutes_to_millis(self.max_minutes_without_research),
            cooldown: minutes_to_millis(self.cooldown_minutes),
            reminder_backoff: self.reminder_backoff,
            weights: Weights {
                ordinary: self.ordinary_tool_debt,
                mutation: self.mutation_debt,
                execution: self.execution_debt,
                failure: self.failure_debt,
                repeated_failure: self.repeated_failure_debt,
            },
            max_snooze_minutes: self.max_agent_snooze_minutes,
            research_tools: patterns(&self.research_tools),
            mutation_tools: patterns(&self.mutation_tools),
            execution_tools: patterns(&self.execution_tools),
            reminder: match self.reminder_style {
                ReminderStyleKey::Specific if self.reminder == DEFAULT_REMINDER => {
                    SPECIFIC_REMINDER.to_owned()
                }
                _ => self.reminder.clone(),
            },
            reminder_style: match self.reminder_style {
                ReminderStyleKey::Original => ReminderStyle::Original,
                ReminderStyleKey::Specific => ReminderStyle::Specific,
            },
        }
    }
}

/// Minutes to milliseconds, rounded; `as` saturates (and maps NaN to 0), so this cannot panic.
fn minutes_to_millis(minutes: f64) -> Millis {
    (minutes * MINUTE as f64).round() as Millis
}

fn patterns(sources: &[String]) -> Vec<Pattern> {
    sources
        .iter()
        .filter_map(|s| Pattern::new(s).ok())
        .collect()
}

/// Every key of [`RowConfig`] with its rule, in declaration order.
const FIELDS: [Field; 18] = [
    ("enabled", Rule::Flag),
    ("debtThreshold", COUNT),
    ("maxToolCallsWithoutResearch", COUNT),
    ("maxMinutesWithoutResearch", MINUTES),
    ("cooldownMinutes", MINUTES),
    ("reminderBackoff", BACKOFF),
    ("ordinaryToolDebt", WEIGHT),
    ("mutationDebt", WEIGHT),
    ("executionDebt", WEIGHT),
    ("failureDebt", WEIGHT),
    ("repeatedFailureDebt", WEIGHT),
    ("maxAgentSnoozeMinutes", SNOOZE),
    ("researchTools", TOOL_PATTERNS),
    ("mutationTools", TOOL_PATTERNS),
    ("executionTools", TOOL_PATTERNS),
    ("reminder", Rule::Text),
    ("reminderStyle", Rule::OneOf(&REMINDER_STYLES)),
    ("debug", Rule::Flag),
];

const COUNT: Rule = Rule::Integer {
    min: THRESHOLD_MIN,
    max: COUNT_MAX,
};
const WEIGHT: Rule = Rule::Integer {
    min: WEIGHT_MIN,
    max: COUNT_MAX,
};
const SNOOZE: Rule = Rule::Integer {
    min: SNOOZE_MIN,
    max: SNOOZE_MAX,
};
const BACKOFF: Rule = Rule::Number {
    min: BACKOFF_MIN,
    max: BACKOFF_MAX,
};
const MINUTES: Rule = Rule::Number {
    min: MINUTES_MIN,
    max: MINUTES_MAX,
};

/// Validates a `research-nudge` row config and builds it, or reports every problem found (see
/// [`validate_fields`] for `null`, the JS sentinels and the order of issues).
pub fn validate(value: &Value) -> Result<RowConfig, Vec<Issue>> {
    validate_fields(&FIELDS, value)
}

impl crate::Config for RowConfig {
    const MESSAGE_PREFIX: &'static str = MESSAGE_PREFIX;
    type Settings = Settings;
    fn validate(value: &Value) -> Result<(Self, Settings), Vec<Issue>> {
        let row = validate(value)?;
        let settings = row.settings();
        Ok((row, settings))
    }
}

/// The JSON Schema (draft-07) of the row config: types, bounds, defaults, descriptions,
/// `additionalProperties: false`.
pub fn json_schema() -> Value {
    crate::toolkit::schema_of::<RowConfig>()
}

const TOOL_PATTERNS: Rule = Rule::List {
    of: "tool-name patterns",
    check: token_pattern,
};

/// A tool-name pattern's rule: the same as [`Pattern::new`].
fn token_pattern(text: &str) -> Result<(), String> {
    Pattern::new(text).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
