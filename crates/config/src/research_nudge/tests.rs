use super::*;
use crate::{Issue, PathSegment, describe};
use names::EmptyPattern;

fn closest_key(key: &str) -> Option<&'static str> {
    crate::did_you_mean(key, FIELDS.iter().map(|&(name, _)| name))
}
use serde_json::json;

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.to_owned())
}

fn valid(value: Value) -> RowConfig {
    match validate(&value) {
        Ok(config) => config,
        Err(issues) => panic!(
            "{value} should be valid, got {}",
            describe(MESSAGE_PREFIX, &issues)
        ),
    }
}

fn issues(value: Value) -> Vec<Issue> {
    match validate(&value) {
        Ok(config) => panic!("{value} should be invalid, got {config:?}"),
        Err(issues) => issues,
    }
}

// ---------------------------------------------------------------------------------------------
// Defaults

#[test]
fn empty_and_null_configs_are_the_defaults() {
    assert_eq!(valid(json!({})), RowConfig::default());
    assert_eq!(valid(Value::Null), RowConfig::default());
    assert_eq!(valid(json!({"\u{0}js": "undefined"})), RowConfig::default());
}

#[test]
fn defaults_match_the_documented_table() {
    let d = RowConfig::default();
    assert!(d.enabled);
    assert_eq!(d.debt_threshold, 20);
    assert_eq!(d.max_tool_calls_without_research, 15);
    assert_eq!(d.max_minutes_without_research, 15.0);
    assert_eq!(d.cooldown_minutes, 10.0);
    assert_eq!(d.reminder_backoff, 2.0);
    assert_eq!(d.ordinary_tool_debt, 1);
    assert_eq!(d.mutation_debt, 2);
    assert_eq!(d.execution_debt, 1);
    assert_eq!(d.failure_debt, 4);
    assert_eq!(d.repeated_failure_debt, 6);
    assert_eq!(d.max_agent_snooze_minutes, 60);
    assert_eq!(
        d.research_tools,
        [
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
        ]
    );
    assert_eq!(
        d.mutation_tools,
        [
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
        ]
    );
    assert_eq!(
        d.execution_tools,
        [
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
        ]
    );
    assert_eq!(d.reminder, DEFAULT_REMINDER);
    assert!(!d.debug);
}

#[test]
fn default_reminder_is_the_exact_text() {
    let paragraphs: Vec<&str> = DEFAULT_REMINDER.split("\n\n").collect();
    assert_eq!(paragraphs.len(), 4);
    assert_eq!(paragraphs[0], "[Research Nudge]");
    assert_eq!(paragraphs[1], "Pause and reflect before continuing:");
    assert!(paragraphs[2].starts_with("1. What problem am I trying to solve right now?"));
    assert_eq!(paragraphs[2].lines().count(), 4);
    assert!(paragraphs[2].ends_with("before trying again."));
    assert!(paragraphs[3].ends_with("use the research_nudge_snooze tool."));
    assert!(!DEFAULT_REMINDER.ends_with('\n'));
    assert!(!DEFAULT_REMINDER.contains("\n\n\n"));
    assert!(!DEFAULT_REMINDER.contains('\r'));
}

#[test]
fn settings_convert_units_and_parse_patterns() {
    let s = RowConfig::default().settings();
    assert_eq!(s.debt_threshold, 20);
    assert_eq!(s.max_tool_calls_without_research, 15);
    assert_eq!(s.max_time_without_research, 900_000);
    assert_eq!(s.cooldown, 600_000);
    assert_eq!(
        s.weights,
        Weights {
            ordinary: 1,
            mutation: 2,
            execution: 1,
            failure: 4,
            repeated_failure: 6,
        }
    );
    assert_eq!(s.max_snooze_minutes, 60);
    assert_eq!(s.research_tools.len(), 12);
    assert_eq!(s.research_tools[0].source(), "web_search");
    assert_eq!(s.mutation_tools.len(), 14);
    assert_eq!(s.execution_tools.len(), 21);
    assert_eq!(s.execution_tools[20].source(), "python");
    // The default style is specific, whose built-in body is the shorter one; `original` brings
    // the original's body back, and a custom body is kept under either style.
    assert_eq!(s.reminder, SPECIFIC_REMINDER);
    assert_eq!(s.reminder_style, ReminderStyle::Specific);
    let original = valid(json!({"reminderStyle": "original"})).settings();
    assert_eq!(original.reminder, DEFAULT_REMINDER);
    assert_eq!(original.reminder_style, ReminderStyle::Original);
    let custom = valid(json!({"reminder": "Look it up."})).settings();
    assert_eq!(custom.reminder, "Look it up.");
    assert_eq!(custom.reminder_style, ReminderStyle::Specific);

    let s = valid(json!({
        "maxMinutesWithoutResearch": 0.5,
        "cooldownMinutes": 0.0000125,
        "researchTools": ["WebSearch"],
        "maxAgentSnoozeMinutes": 7,
        "failureDebt": 0,
    }))
    .settings();
    assert_eq!(s.max_time_without_research, 30_000);
    assert_eq!(s.cooldown, 1, "0.75 ms rounds to the nearest ms");
    assert_eq!(s.research_tools.len(), 1);
    assert!(s.research_tools[0].matches(&names::tokens("mcp__x__web_search")));
    assert_eq!(s.max_snooze_minutes, 7);
    assert_eq!(s.weights.failure, 0);
}

#[test]
fn settings_skip_invalid_patterns_of_a_hand_built_config() {
    let config = RowConfig {
        research_tools: vec!["-".into(), "fetch".into(), String::new()],
        max_minutes_without_research: f64::NAN,
        cooldown_minutes: -3.0,
        ..RowConfig::default()
    };
    let s = config.settings();
    assert_eq!(s.research_tools.len(), 1);
    assert_eq!(s.research_tools[0].source(), "fetch");
    assert_eq!(s.max_time_without_research, 0);
    assert_eq!(s.cooldown, 0);
}

// ---------------------------------------------------------------------------------------------
// Whole-row replacement and valid values

#[test]
fn one_key_keeps_every_other_default() {
    let config = valid(json!({"debtThreshold": 5}));
    assert_eq!(
        config,
        RowConfig {
            debt_threshold: 5,
            ..RowConfig::default()
        }
    );
}

#[test]
fn lists_replace_the_defaults_without_merging() {
    let config = valid(json!({"researchTools": ["x"]}));
    assert_eq!(config.research_tools, ["x"]);
    assert_eq!(config.mutation_tools, RowConfig::default().mutation_tools);
    let config = valid(json!({"executionTools": [], "mutationTools": ["my_edit"]}));
    assert!(config.execution_tools.is_empty());
    assert_eq!(config.mutation_tools, ["my_edit"]);
}

#[test]
fn every_key_can_be_set() {
    let input = json!({
        "enabled": false,
        "debtThreshold": 1,
        "maxToolCallsWithoutResearch": 1_000_000,
        "maxMinutesWithoutResearch": 0,
        "cooldownMinutes": 525_600,
        "reminderBackoff": 1.5,
        "ordinaryToolDebt": 0,
        "mutationDebt": 0,
        "executionDebt": 1_000_000,
        "failureDebt": 0,
        "repeatedFailureDebt": 0,
        "maxAgentSnoozeMinutes": 10_080,
        "researchTools": [],
        "mutationTools": [],
        "executionTools": [],
        "reminder": "Look it up.",
        "reminderStyle": "original",
        "debug": true,
    });
    let config = valid(input.clone());
    assert_eq!(
        config,
        RowConfig {
            enabled: false,
            debt_threshold: 1,
            max_tool_calls_without_research: 1_000_000,
            max_minutes_without_research: 0.0,
            cooldown_minutes: 525_600.0,
            reminder_backoff: 1.5,
            ordinary_tool_debt: 0,
            mutation_debt: 0,
            execution_debt: 1_000_000,
            failure_debt: 0,
            repeated_failure_debt: 0,
            max_agent_snooze_minutes: 10_080,
            research_tools: vec![],
            mutation_tools: vec![],
            execution_tools: vec![],
            reminder: "Look it up.".into(),
            reminder_style: ReminderStyleKey::Original,
            debug: true,
        }
    );
    // The serialized form round-trips to the same keys and values.
    assert_eq!(valid(serde_json::to_value(&config).unwrap()), config);
}

#[test]
fn edge_values_are_accepted() {
    assert_eq!(valid(json!({"debtThreshold": 1})).debt_threshold, 1);
    assert_eq!(
        valid(json!({"debtThreshold": 1_000_000})).debt_threshold,
        1_000_000
    );
    assert_eq!(valid(json!({"debtThreshold": 1e3})).debt_threshold, 1000);
    assert_eq!(valid(json!({"debtThreshold": 20.0})).debt_threshold, 20);
    assert_eq!(
        valid(json!({"maxAgentSnoozeMinutes": 1})).max_agent_snooze_minutes,
        1
    );
    assert_eq!(
        valid(json!({"repeatedFailureDebt": 0})).repeated_failure_debt,
        0
    );
    assert_eq!(
        valid(json!({"ordinaryToolDebt": -0.0})).ordinary_tool_debt,
        0
    );
    assert_eq!(valid(json!({"cooldownMinutes": 0})).cooldown_minutes, 0.0);
    assert_eq!(
        valid(json!({"cooldownMinutes": 2.25})).cooldown_minutes,
        2.25
    );
    assert_eq!(
        valid(json!({"maxMinutesWithoutResearch": 525_600.0})).max_minutes_without_research,
        525_600.0
    );
    assert_eq!(
        valid(json!({"researchTools": []})).research_tools,
        Vec::<String>::new()
    );
    assert_eq!(
        valid(json!({"researchTools": ["a", "Web-Search", " x "]})).research_tools,
        ["a", "Web-Search", " x "]
    );
    assert_eq!(valid(json!({"reminder": " ! "})).reminder, " ! ");
}

// ---------------------------------------------------------------------------------------------
// Invalid configs: exact messages and paths

/// (input, expected path, expected message) for configs with exactly one issue.
#[rustfmt::skip]
fn bad_configs() -> Vec<(Value, Vec<PathSegment>, &'static str)> {
    let long = "a".repeat(100);
    vec![
        // integer fields
        (json!({"debtThreshold": 0}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got 0)"),
        (json!({"debtThreshold": -5}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got -5)"),
        (json!({"debtThreshold": 2.5}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got 2.5)"),
        (json!({"debtThreshold": "20"}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got \"20\")"),
        (json!({"debtThreshold": null}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got null)"),
        (json!({"debtThreshold": true}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got true)"),
        (json!({"debtThreshold": 2_000_000}), vec![key("debtThreshold")], "debtThreshold must be an integer <= 1000000 (got 2000000)"),
        (json!({"debtThreshold": 1e20}), vec![key("debtThreshold")], "debtThreshold must be an integer <= 1000000 (got 1e+20)"),
        (json!({"debtThreshold": u64::MAX}), vec![key("debtThreshold")], "debtThreshold must be an integer <= 1000000 (got 18446744073709551615)"),
        (json!({"maxToolCallsWithoutResearch": 0}), vec![key("maxToolCallsWithoutResearch")], "maxToolCallsWithoutResearch must be an integer >= 1 (got 0)"),
        (json!({"ordinaryToolDebt": -1}), vec![key("ordinaryToolDebt")], "ordinaryToolDebt must be an integer >= 0 (got -1)"),
        (json!({"mutationDebt": 0.5}), vec![key("mutationDebt")], "mutationDebt must be an integer >= 0 (got 0.5)"),
        (json!({"executionDebt": 1_000_001}), vec![key("executionDebt")], "executionDebt must be an integer <= 1000000 (got 1000001)"),
        (json!({"failureDebt": [4]}), vec![key("failureDebt")], "failureDebt must be an integer >= 0 (got [4])"),
        (json!({"repeatedFailureDebt": {"n": 6}}), vec![key("repeatedFailureDebt")], "repeatedFailureDebt must be an integer >= 0 (got {\"n\":6})"),
        (json!({"maxAgentSnoozeMinutes": 0}), vec![key("maxAgentSnoozeMinutes")], "maxAgentSnoozeMinutes must be an integer >= 1 (got 0)"),
        (json!({"maxAgentSnoozeMinutes": 10_081}), vec![key("maxAgentSnoozeMinutes")], "maxAgentSnoozeMinutes must be an integer <= 10080 (got 10081)"),
        // number fields
        (json!({"cooldownMinutes": -1}), vec![key("cooldownMinutes")], "cooldownMinutes must be a number >= 0 (got -1)"),
        (json!({"reminderBackoff": 0.5}), vec![key("reminderBackoff")], "reminderBackoff must be a number >= 1 (got 0.5)"),
        (json!({"reminderBackoff": 101}), vec![key("reminderBackoff")], "reminderBackoff must be a number <= 100 (got 101)"),
        (json!({"cooldownMinutes": -0.5}), vec![key("cooldownMinutes")], "cooldownMinutes must be a number >= 0 (got -0.5)"),
        (json!({"cooldownMinutes": 1_000_000}), vec![key("cooldownMinutes")], "cooldownMinutes must be a number <= 525600 (got 1000000)"),
        (json!({"maxMinutesWithoutResearch": 525_600.5}), vec![key("maxMinutesWithoutResearch")], "maxMinutesWithoutResearch must be a number <= 525600 (got 525600.5)"),
        (json!({"maxMinutesWithoutResearch": "15"}), vec![key("maxMinutesWithoutResearch")], "maxMinutesWithoutResearch must be a number >= 0 (got \"15\")"),
        (json!({"maxMinutesWithoutResearch": null}), vec![key("maxMinutesWithoutResearch")], "maxMinutesWithoutResearch must be a number >= 0 (got null)"),
        // booleans
        (json!({"enabled": "yes"}), vec![key("enabled")], "enabled must be true or false (got \"yes\")"),
        (json!({"enabled": 1}), vec![key("enabled")], "enabled must be true or false (got 1)"),
        (json!({"debug": "false"}), vec![key("debug")], "debug must be true or false (got \"false\")"),
        (json!({"debug": null}), vec![key("debug")], "debug must be true or false (got null)"),
        // lists
        (json!({"researchTools": "web_search"}), vec![key("researchTools")], "researchTools must be a list of tool-name patterns (got \"web_search\")"),
        (json!({"researchTools": 5}), vec![key("researchTools")], "researchTools must be a list of tool-name patterns (got 5)"),
        (json!({"mutationTools": null}), vec![key("mutationTools")], "mutationTools must be a list of tool-name patterns (got null)"),
        (json!({"executionTools": {"bash": true}}), vec![key("executionTools")], "executionTools must be a list of tool-name patterns (got {\"bash\":true})"),
        (json!({"researchTools": ["a", "b", 5]}), vec![key("researchTools"), PathSegment::Index(2)], "researchTools[2] must be a string (got 5)"),
        (json!({"mutationTools": [{"name": "edit"}]}), vec![key("mutationTools"), PathSegment::Index(0)], "mutationTools[0] must be a string (got {\"name\":\"edit\"})"),
        (json!({"executionTools": [null]}), vec![key("executionTools"), PathSegment::Index(0)], "executionTools[0] must be a string (got null)"),
        (json!({"researchTools": [""]}), vec![key("researchTools"), PathSegment::Index(0)], "researchTools[0] must contain at least one letter or digit (got \"\")"),
        (json!({"researchTools": ["-"]}), vec![key("researchTools"), PathSegment::Index(0)], "researchTools[0] must contain at least one letter or digit (got \"-\")"),
        (json!({"executionTools": ["bash", "__"]}), vec![key("executionTools"), PathSegment::Index(1)], "executionTools[1] must contain at least one letter or digit (got \"__\")"),
        // reminder
        (json!({"reminder": ""}), vec![key("reminder")], "reminder must be a string with some text (got \"\")"),
        (json!({"reminder": "   "}), vec![key("reminder")], "reminder must be a string with some text (got \"   \")"),
        (json!({"reminder": "\n\t"}), vec![key("reminder")], "reminder must be a string with some text (got \"\\n\\t\")"),
        (json!({"reminder": 5}), vec![key("reminder")], "reminder must be a string with some text (got 5)"),
        (json!({"reminder": null}), vec![key("reminder")], "reminder must be a string with some text (got null)"),
        // unknown keys
        (json!({"debtTreshold": 25}), vec![key("debtTreshold")], "debtTreshold is not a config key; did you mean debtThreshold? (got 25)"),
        (json!({"debt_threshold": 25}), vec![key("debt_threshold")], "debt_threshold is not a config key; did you mean debtThreshold? (got 25)"),
        (json!({"DebtThreshold": 25}), vec![key("DebtThreshold")], "DebtThreshold is not a config key; did you mean debtThreshold? (got 25)"),
        (json!({"research-tools": ["x"]}), vec![key("research-tools")], "research-tools is not a config key; did you mean researchTools? (got [\"x\"])"),
        (json!({"maxToolCallWithoutResearh": 3}), vec![key("maxToolCallWithoutResearh")], "maxToolCallWithoutResearh is not a config key; did you mean maxToolCallsWithoutResearch? (got 3)"),
        (json!({"enable": false}), vec![key("enable")], "enable is not a config key; did you mean enabled? (got false)"),
        (json!({"cooldown": 5}), vec![key("cooldown")], "cooldown is not a config key (got 5)"),
        (json!({"colour": "red"}), vec![key("colour")], "colour is not a config key (got \"red\")"),
        (json!({"": 1}), vec![key("")], " is not a config key (got 1)"),
        // root not an object
        (json!([1, 2]), vec![], "config must be an object (got [1,2])"),
        (json!("debtThreshold: 20"), vec![], "config must be an object (got \"debtThreshold: 20\")"),
        (json!(42), vec![], "config must be an object (got 42)"),
        (json!(false), vec![], "config must be an object (got false)"),
        (json!({"\u{0}js": "function"}), vec![], "config must be an object (got function)"),
        // JS-only values
        (json!({"debtThreshold": {"\u{0}js": "NaN"}}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got NaN)"),
        (json!({"cooldownMinutes": {"\u{0}js": "Infinity"}}), vec![key("cooldownMinutes")], "cooldownMinutes must be a number >= 0 (got Infinity)"),
        (json!({"maxMinutesWithoutResearch": {"\u{0}js": "-Infinity"}}), vec![key("maxMinutesWithoutResearch")], "maxMinutesWithoutResearch must be a number >= 0 (got -Infinity)"),
        (json!({"enabled": {"\u{0}js": "undefined"}}), vec![key("enabled")], "enabled must be true or false (got undefined)"),
        (json!({"reminder": {"\u{0}js": "function"}}), vec![key("reminder")], "reminder must be a string with some text (got function)"),
        (json!({"failureDebt": {"\u{0}js": "bigint 12"}}), vec![key("failureDebt")], "failureDebt must be an integer >= 0 (got bigint 12)"),
        (json!({"researchTools": ["web", {"\u{0}js": "undefined"}]}), vec![key("researchTools"), PathSegment::Index(1)], "researchTools[1] must be a string (got undefined)"),
        (json!({"mutationTools": {"\u{0}js": "NaN"}}), vec![key("mutationTools")], "mutationTools must be a list of tool-name patterns (got NaN)"),
        (json!({"debtThreshold": [{"\u{0}js": "NaN"}, 1]}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got [NaN,1])"),
        // a sentinel-like object with more keys is an ordinary object
        (json!({"debtThreshold": {"\u{0}js": "NaN", "x": 1}}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got {\"\\u0000js\":\"NaN\",\"x\":1})"),
        // long values are cut after 60 characters
        (json!({"colour": long}), vec![key("colour")], "colour is not a config key (got \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…)"),
        (json!({"researchTools": "é".repeat(70)}), vec![key("researchTools")], "researchTools must be a list of tool-name patterns (got \"ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé…)"),
        (json!({"debtThreshold": (0..40).collect::<Vec<u32>>()}), vec![key("debtThreshold")], "debtThreshold must be an integer >= 1 (got [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,…)"),
    ]
}

#[test]
fn bad_configs_get_exact_messages_and_paths() {
    let cases = bad_configs();
    assert!(cases.len() >= 30, "{}", cases.len());
    for (input, path, message) in cases {
        let found = issues(input.clone());
        assert_eq!(
            found,
            vec![Issue {
                path,
                message: message.to_owned()
            }],
            "input: {input}"
        );
        assert_eq!(found[0].to_string(), message);
    }
}

#[test]
fn long_values_are_cut_to_sixty_characters_plus_ellipsis() {
    let found = issues(json!({"reminder": ["x".repeat(10_000)]}));
    let got = found[0]
        .message
        .strip_prefix("reminder must be a string with some text (got ")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap();
    assert_eq!(got.chars().count(), 61);
    assert!(got.starts_with("[\"xxx"));
    assert!(got.ends_with("x…"));

    // Exactly 60 characters are shown whole; 61 are cut.
    let found = issues(json!({"reminder": ["y".repeat(56)]}));
    assert_eq!(
        found[0].message,
        format!(
            "reminder must be a string with some text (got [\"{}\"])",
            "y".repeat(56)
        )
    );
    let found = issues(json!({"reminder": ["y".repeat(58)]}));
    assert_eq!(
        found[0].message,
        format!(
            "reminder must be a string with some text (got [\"{}…)",
            "y".repeat(58)
        )
    );
    let found = issues(json!({"colour": "y".repeat(58)}));
    assert_eq!(
        found[0].message,
        format!("colour is not a config key (got \"{}\")", "y".repeat(58))
    );
}

#[test]
fn every_issue_is_reported_in_key_order() {
    // Input order survives because the workspace builds serde_json with `preserve_order`.
    let found = issues(json!({
        "enabled": "yes",
        "researchTools": ["ok", 5, "-"],
        "debtTreshold": 25,
        "maxAgentSnoozeMinutes": 15,
        "zzz": null,
        "debtThreshold": 0,
        "cooldownMinutes": -1,
    }));
    let messages: Vec<&str> = found.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "enabled must be true or false (got \"yes\")",
            "researchTools[1] must be a string (got 5)",
            "researchTools[2] must contain at least one letter or digit (got \"-\")",
            "debtTreshold is not a config key; did you mean debtThreshold? (got 25)",
            "zzz is not a config key (got null)",
            "debtThreshold must be an integer >= 1 (got 0)",
            "cooldownMinutes must be a number >= 0 (got -1)",
        ]
    );
    assert_eq!(found[1].path, [key("researchTools"), PathSegment::Index(1)]);
    assert_eq!(found[4].path, [key("zzz")]);
    assert_eq!(
        describe(MESSAGE_PREFIX, &found),
        "research-nudge: invalid config: enabled must be true or false (got \"yes\"); \
         researchTools[1] must be a string (got 5); \
         researchTools[2] must contain at least one letter or digit (got \"-\"); \
         debtTreshold is not a config key; did you mean debtThreshold? (got 25); \
         zzz is not a config key (got null); \
         debtThreshold must be an integer >= 1 (got 0); \
         cooldownMinutes must be a number >= 0 (got -1)"
    );
}

#[test]
fn describe_prefixes_a_single_issue() {
    let found = issues(json!({"debtThreshold": 0}));
    assert_eq!(
        describe(MESSAGE_PREFIX, &found),
        "research-nudge: invalid config: debtThreshold must be an integer >= 1 (got 0)"
    );
    assert!(describe(MESSAGE_PREFIX, &found).starts_with(MESSAGE_PREFIX));
}

#[test]
fn bad_pattern_message_comes_from_the_policy() {
    let found = issues(json!({"researchTools": ["--"]}));
    assert_eq!(
        found[0].message,
        format!("researchTools[0] {} (got \"--\")", EmptyPattern)
    );
}

#[test]
fn paths_serialize_as_plain_strings_and_numbers() {
    let found = issues(json!({"researchTools": [1]}));
    assert_eq!(
        serde_json::to_value(&found[0]).unwrap(),
        json!({"path": ["researchTools", 0], "message": "researchTools[0] must be a string (got 1)"})
    );
    let found = issues(json!(7));
    assert_eq!(
        serde_json::to_value(&found[0]).unwrap(),
        json!({"message": "config must be an object (got 7)"}),
        "a root issue has no path"
    );
}

#[test]
fn suggestions_pick_the_closest_key() {
    assert_eq!(closest_key("mutationdebt"), Some("mutationDebt"));
    assert_eq!(closest_key("MUTATION_DEBT"), Some("mutationDebt"));
    assert_eq!(closest_key("reminders"), Some("reminder"));
    assert_eq!(closest_key("debugg"), Some("debug"));
    assert_eq!(closest_key("researchTool"), Some("researchTools"));
    assert_eq!(closest_key("executionTols"), Some("executionTools"));
    assert_eq!(closest_key("executionDebts"), Some("executionDebt"));
    assert_eq!(
        closest_key("maxAgentSnoozeMins"),
        Some("maxAgentSnoozeMinutes")
    );
    assert_eq!(
        closest_key("dbg"),
        Some("debug"),
        "distance 2 on a short key"
    );
    assert_eq!(closest_key("dg"), None, "distance 3 on a short key");
    assert_eq!(
        closest_key("maxCallsWithoutResearch"),
        Some("maxToolCallsWithoutResearch"),
        "distance 4 is within a quarter of a long key"
    );
    assert_eq!(closest_key("maxWithoutResearch"), None);
    assert_eq!(closest_key("cooldown"), None);
    assert_eq!(closest_key("threshold"), None);
    assert_eq!(closest_key(&"q".repeat(100_000)), None);
}

// ---------------------------------------------------------------------------------------------
// The field table, serde and the schema agree

#[test]
fn field_table_lists_exactly_the_serialized_keys_in_order() {
    let serialized = serde_json::to_value(RowConfig::default()).unwrap();
    let serialized_keys: Vec<&str> = serialized
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let table_keys: Vec<&str> = FIELDS.iter().map(|(k, _)| *k).collect();
    assert_eq!(table_keys, serialized_keys);
}

#[test]
fn schema_is_draft07_with_defaults_bounds_and_descriptions() {
    let schema = json_schema();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(schema["title"], "research-nudge row config");
    assert!(
        schema["description"]
            .as_str()
            .is_some_and(|d| !d.contains('\n'))
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema.get("required").is_none_or(|r| r == &json!([])));

    let defaults = serde_json::to_value(RowConfig::default()).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.len(), 18);
    for (name, default) in defaults.as_object().unwrap() {
        let property = &properties[name];
        assert_eq!(&property["default"], default, "{name}");
        assert!(
            property["description"]
                .as_str()
                .is_some_and(|d| d.len() > 10),
            "{name} has no description"
        );
    }
    for (name, rule) in FIELDS {
        let property = &properties[name];
        match rule {
            Rule::Flag => assert_eq!(property["type"], "boolean", "{name}"),
            Rule::Integer { min, max } => {
                assert_eq!(property["type"], "integer", "{name}");
                assert_eq!(property["minimum"], min, "{name}");
                assert_eq!(property["maximum"], max, "{name}");
            }
            Rule::Number { min, max } => {
                assert_eq!(property["type"], "number", "{name}");
                assert_eq!(property["minimum"], min, "{name}");
                assert_eq!(property["maximum"], max, "{name}");
            }
            Rule::List { .. } => {
                assert_eq!(property["type"], "array", "{name}");
                assert_eq!(property["items"]["type"], "string", "{name}");
                assert_eq!(property["items"]["pattern"], TOOL_PATTERN_REGEX, "{name}");
            }
            Rule::Text => {
                assert_eq!(property["type"], "string", "{name}");
                assert_eq!(property["pattern"], REMINDER_REGEX, "{name}");
            }
            Rule::OneOf(choices) => {
                let consts: Vec<&Value> = property["oneOf"]
                    .as_array()
                    .map(|alternatives| alternatives.iter().map(|a| &a["const"]).collect())
                    .unwrap_or_default();
                assert_eq!(json!(consts), json!(choices), "{name}");
            }
            Rule::Str { .. } => assert_eq!(property["type"], "string", "{name}"),
        }
    }
    assert_eq!(properties["debtThreshold"]["minimum"], 1);
    assert_eq!(properties["debtThreshold"]["maximum"], 1_000_000);
    assert_eq!(properties["cooldownMinutes"]["maximum"], 525_600);
    assert_eq!(properties["reminderBackoff"]["minimum"], 1);
    assert_eq!(properties["reminderBackoff"]["maximum"], 100);
    assert_eq!(properties["reminderBackoff"]["default"], 2.0);
    assert_eq!(properties["maxAgentSnoozeMinutes"]["maximum"], 10_080);
    assert_eq!(properties["ordinaryToolDebt"]["minimum"], 0);
}

/// The default execution patterns hold `run`, which `run_code` matches by tokens: the Code Mode
/// transport is classed before them, so a program is no execution under the defaults.
#[test]
fn run_code_is_no_execution_under_the_defaults() {
    let mut policy = policy::Policy::new(RowConfig::default().settings());
    assert_eq!(policy.classify("run_code"), policy::ToolClass::CodeMode);
    assert_eq!(policy.classify("run_tests"), policy::ToolClass::Execution);
}
