//! One recorded tool call observed exactly as the plugin observes a live one (the snooze tool's
//! argument rules included), shared by both replay formats.

use crate::research_nudge::plugin::Plugin;
use policy::snooze;
use policy::{AgentState, Millis, Observation, SNOOZE_TOOL_NAME, ToolCall};

/// How a recorded call ended: its result's facts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ended {
    pub ok: bool,
    pub exit_code: Option<i64>,
    pub killed: bool,
    pub timed_out: bool,
    /// DSH rejected the call as naming no tool it can run (`UNKNOWN_TOOL`).
    pub unknown_tool: bool,
}

/// Observes one finished tool call as the plugin does, and returns the observation with the
/// message of a snooze call whose arguments the tool body would have refused.
///
/// `error` is the whole failure text (the error message, or a shell call's output); `args_json`
/// is read only for a successful snooze call.
pub(crate) fn observe_call(
    plugin: &mut Plugin,
    state: &mut AgentState,
    at: Millis,
    name: &str,
    ended: Ended,
    error: &str,
    args_json: &str,
) -> (Observation, Option<String>) {
    let Ended {
        ok,
        exit_code,
        killed,
        timed_out,
        unknown_tool,
    } = ended;
    // As in the plugin: the snooze tool's body validates its arguments; bad ones fail the call.
    let mut snooze_error = None;
    let mut snooze_minutes = None;
    if name == SNOOZE_TOOL_NAME && ok {
        match snooze::minutes_from_args(args_json, plugin.row.max_agent_snooze_minutes) {
            Ok(minutes) => snooze_minutes = Some(minutes),
            Err(message) => snooze_error = Some(message),
        }
    }
    let text = snooze_error.as_deref().unwrap_or(error);
    let (head, tail) = fingerprint::Failure::windows(text);
    let call = ToolCall {
        name,
        ok: ok && snooze_error.is_none(),
        exit_code,
        killed,
        timed_out,
        head,
        tail,
        unknown_tool,
        snooze_minutes,
    };
    (plugin.policy.observe(state, at, &call), snooze_error)
}
