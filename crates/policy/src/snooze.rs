//! The model-visible `research_nudge_snooze` tool: its definition and its argument rules.
//!
//! DSH hands raw JSON-Schema tools their arguments unvalidated, so the rules live here, and the
//! minutes computed here are the single value that both answers the call and arms the snooze.

use crate::{DEFAULT_SNOOZE_MINUTES, SNOOZE_TOOL_NAME, snooze_minutes};
use serde_json::{Map, Value, json};

const DESCRIPTION: &str = "Temporarily suppress Research Nudge reminders when local investigation is making useful progress. This does not erase accumulated research debt.";
const REASON_DESCRIPTION: &str = "Brief reason for snoozing, for the agent transcript only.";

/// The tool's name, description and JSON-Schema parameters.
pub fn tool_definition(max_minutes: u32) -> Value {
    json!({
        "name": SNOOZE_TOOL_NAME,
        "description": DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "minutes": {
                    "type": "number",
                    "description": format!(
                        "Minutes to snooze (default {}, capped at {max_minutes}).",
                        DEFAULT_SNOOZE_MINUTES.min(max_minutes)
                    ),
                },
                "reason": { "type": "string", "description": REASON_DESCRIPTION },
            },
            "additionalProperties": false,
        },
    })
}

/// Reads the call's arguments (JSON text) and returns the snooze length in minutes, or the error
/// the model sees as the tool result.
pub fn minutes_from_args(args_json: &str, max_minutes: u32) -> Result<u32, String> {
    let args: Value = serde_json::from_str(args_json)
        .map_err(|_| "arguments must be a JSON object".to_owned())?;
    let args = match &args {
        Value::Object(map) => map,
        Value::Null => &Map::new(),
        other => {
            return Err(format!(
                "arguments must be a JSON object (got {})",
                brief(other)
            ));
        }
    };
    if let Some(unknown) = args.keys().find(|k| *k != "minutes" && *k != "reason") {
        return Err(format!(
            "{unknown} is not an argument of {SNOOZE_TOOL_NAME} (expected minutes, reason)"
        ));
    }
    if let Some(reason) = args.get("reason").filter(|r| !r.is_string()) {
        return Err(format!("reason must be a string (got {})", brief(reason)));
    }
    let requested = match args.get("minutes") {
        None => None,
        Some(Value::Number(n)) => n.as_f64(),
        Some(other) => return Err(format!("minutes must be a number (got {})", brief(other))),
    };
    snooze_minutes(requested, max_minutes)
        .map_err(|bad| format!("minutes must be a finite number (got {})", bad.0))
}

fn brief(value: &Value) -> String {
    text::clip(&value.to_string(), 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_default_cap_and_clamp() {
        assert_eq!(minutes_from_args("{}", 60), Ok(30));
        assert_eq!(minutes_from_args("null", 60), Ok(30));
        assert_eq!(minutes_from_args("{}", 10), Ok(10));
        assert_eq!(minutes_from_args(r#"{"minutes": 999}"#, 60), Ok(60));
        assert_eq!(
            minutes_from_args(r#"{"minutes": 1.9, "reason": "local fix"}"#, 60),
            Ok(1)
        );
        assert_eq!(minutes_from_args(r#"{"minutes": -5}"#, 60), Ok(1));
        assert_eq!(minutes_from_args(r#"{"minutes": 0}"#, 60), Ok(1));
    }

    #[test]
    fn bad_arguments_fail_with_a_message_the_model_can_act_on() {
        let cases = [
            (
                r#"{"minutes": "abc"}"#,
                r#"minutes must be a number (got "abc")"#,
            ),
            (
                r#"{"minutes": null}"#,
                "minutes must be a number (got null)",
            ),
            (
                r#"{"minutes": true}"#,
                "minutes must be a number (got true)",
            ),
            (r#"{"reason": 5}"#, "reason must be a string (got 5)"),
            (
                r#"{"duration": 5}"#,
                "duration is not an argument of research_nudge_snooze (expected minutes, reason)",
            ),
            (
                r#""raw text""#,
                r#"arguments must be a JSON object (got "raw text")"#,
            ),
            ("[]", "arguments must be a JSON object (got [])"),
            ("42", "arguments must be a JSON object (got 42)"),
            ("{", "arguments must be a JSON object"),
        ];
        for (args, message) in cases {
            assert_eq!(
                minutes_from_args(args, 60),
                Err(message.to_owned()),
                "{args}"
            );
        }
    }

    #[test]
    fn definition_states_the_cap() {
        let def = tool_definition(20);
        assert_eq!(def["name"], SNOOZE_TOOL_NAME);
        assert_eq!(
            def["parameters"]["properties"]["minutes"]["description"],
            "Minutes to snooze (default 20, capped at 20)."
        );
        assert_eq!(def["parameters"]["additionalProperties"], false);
    }
}
