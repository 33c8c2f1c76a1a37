//! The replay engine behind `research-nudge replay`: one JSON line in, output lines out, through
//! exactly the policy the plugin runs.
//!
//! The first non-blank line decides the format of the whole input. A DSH session log (its first
//! line is the `{"type":"session",…}` header) goes to [`crate::research_nudge::session_log`]; anything else is the
//! replay event format, one JSON state line out per event line:
//!
//! Input line: `at_ms` (integer ms, non-decreasing per agent), `agent` (default `"default"`), then
//! either a tool event (`tool`, `ok` = true, `error`, `error_code`, `exit_code`, `signal`,
//! `timed_out`, `args`) or `"user_prompt": true`. `error_code` is DSH's error code of a failed
//! call (`error.info.code`): `"UNKNOWN_TOOL"` (a call DSH rejected, Code Mode's direct calls
//! included) is not counted, as in the plugin.

use crate::research_nudge::call::{Ended, observe_call};
use crate::research_nudge::chart::{Chart, Mark, Point, Thresholds};
use crate::research_nudge::plugin::Plugin;
use crate::research_nudge::session_log::SessionLog;
use crate::{Agents, Engine, Format};
use config::research_nudge::RowConfig;
use policy::{AgentState, Hold, MINUTE, Millis, Observation, SNOOZE_TOOL_NAME};
use serde_json::{Map, Value, json};
use session_log::Header;

const TOOL_FIELDS: [&str; 8] = [
    "tool",
    "ok",
    "error",
    "error_code",
    "exit_code",
    "signal",
    "timed_out",
    "args",
];
const COMMON_FIELDS: [&str; 2] = ["at_ms", "agent"];

/// A replay through research-nudge's policy, over one input stream.
pub type Replay = crate::Replay<Nudge>;

/// research-nudge's [`Engine`]: the plugin under one config and the output options.
pub struct Nudge {
    pub(crate) plugin: Plugin,
    json: bool,
    /// With `--html`: the rows are drawn here and [`Replay::finish`] returns the page.
    chart: Option<Chart>,
    /// Tool events of the replay event format, for the page's summary.
    events: usize,
}

/// One agent of the replay event format.
pub struct Tracked {
    state: AgentState,
    last_at: Millis,
}

enum Event<'a> {
    Tool {
        name: &'a str,
        ok: bool,
        error: &'a str,
        exit_code: Option<i64>,
        killed: bool,
        timed_out: bool,
        unknown_tool: bool,
        args: Option<&'a Value>,
    },
    UserPrompt,
}

/// A corpus replay through research-nudge's policy ([`crate::corpus`]).
pub type CorpusReplay = crate::corpus::CorpusReplay<Nudge>;

impl Nudge {
    fn new(row: RowConfig) -> Self {
        Nudge {
            plugin: Plugin::new(row),
            json: false,
            chart: None,
            events: 0,
        }
    }
}

impl CorpusReplay {
    /// A corpus replay of `half` (every run when `None`) under a validated row config.
    pub fn with_row(row: RowConfig, half: Option<crate::corpus::Half>) -> Self {
        Self::new(Nudge::new(row), half)
    }
}

impl Replay {
    /// A replay under a validated row config.
    pub fn new(row: RowConfig) -> Self {
        Self::with_engine(Nudge::new(row))
    }

    /// Test-only: a replay under a row config given as JSON text, as the adapter reads it.
    #[cfg(test)]
    pub(crate) fn from_json(config_json: &str) -> Result<Self, String> {
        use config::research_nudge as row;
        let value: Value = serde_json::from_str(config_json).map_err(|e| e.to_string())?;
        let row = row::validate(&value)
            .map_err(|issues| config::describe(row::MESSAGE_PREFIX, &issues))?;
        Ok(Self::new(row))
    }

    /// Whether a session log is printed as JSON lines instead of the timeline. The replay event
    /// format always prints JSON lines.
    pub fn set_json(&mut self, json: bool) {
        self.engine_mut().json = json;
    }

    /// Whether the replay is drawn (`--html`): every line is read and nothing is printed until
    /// [`Replay::finish`], which returns one self-contained HTML page.
    pub fn set_html(&mut self, html: bool) {
        self.engine_mut().chart = html.then(Chart::new);
    }
}

impl Engine for Nudge {
    type Agent = Tracked;
    type Session = SessionLog;

    // The policy has no use for assistant replies: they are skipped unread.
    const ASSISTANT_TEXT: bool = false;

    fn invalid_json(error: &serde_json::Error) -> String {
        format!("not valid JSON ({error})")
    }

    fn not_an_object(value: &Value) -> String {
        format!("must be a JSON object (got {value})")
    }

    fn open(&mut self, header: &Header) -> (SessionLog, Option<String>) {
        let log = SessionLog::start(header, self.json);
        let opening = log.opening(&self.plugin);
        (log, opening)
    }

    fn entry(
        &mut self,
        log: &mut SessionLog,
        line: usize,
        entry: session_log::Entry,
    ) -> Option<String> {
        log.feed(&mut self.plugin, line, entry, self.chart.as_mut())
    }

    fn event(
        &mut self,
        agents: &mut Agents<Tracked>,
        _line: usize,
        fields: &Map<String, Value>,
    ) -> Result<Option<String>, String> {
        self.apply(agents, fields)
            .map(|out| out.filter(|_| self.chart.is_none()))
    }

    fn finish(&self, format: Format<'_, SessionLog>) -> Option<String> {
        if let Some(chart) = &self.chart {
            return Some(self.page(chart, &format));
        }
        match format {
            Format::Session(log) => log.finish(&self.plugin),
            Format::Empty | Format::Events => None,
        }
    }
}

impl Nudge {
    fn page(&self, chart: &Chart, format: &Format<'_, SessionLog>) -> String {
        let s = self.plugin.policy().settings();
        let t = Thresholds {
            debt: s.debt_threshold,
            calls: s.max_tool_calls_without_research,
            time_ms: s.max_time_without_research,
        };
        let (title, subtitle, notes) = match format {
            Format::Session(log) => {
                let heading = log.heading(&self.plugin);
                let (title, rest) = heading.split_once('\n').unwrap_or((&heading, ""));
                (
                    title.to_owned(),
                    rest.replace('\n', "; "),
                    log.summary(&self.plugin),
                )
            }
            Format::Empty | Format::Events => (
                format!(
                    "research-nudge replay: {} tool event{}",
                    self.events,
                    if self.events == 1 { "" } else { "s" }
                ),
                if self.plugin.enabled() {
                    format!(
                        "thresholds: debt >= {}, calls >= {}, minutes >= {}; cooldown {} min, backoff x{}",
                        s.debt_threshold,
                        s.max_tool_calls_without_research,
                        s.max_time_without_research as f64 / MINUTE as f64,
                        s.cooldown as f64 / MINUTE as f64,
                        s.reminder_backoff
                    )
                } else {
                    "the plugin is disabled by this config: nothing is counted".to_owned()
                },
                String::new(),
            ),
        };
        chart.html(&title, &subtitle, &notes, t)
    }

    fn apply(
        &mut self,
        agents: &mut Agents<Tracked>,
        fields: &Map<String, Value>,
    ) -> Result<Option<String>, String> {
        let at = at_ms(fields)?;
        let agent = Agents::<Tracked>::name(fields)
            .map_err(|other| format!("agent must be a string (got {other})"))?;
        let event = event(fields)?;
        let tracked = agents.get(agent, || Tracked {
            state: AgentState::new(at),
            last_at: at,
        });
        if at < tracked.last_at {
            return Err(format!(
                "at_ms goes backwards for agent {} (got {at} after {})",
                Value::from(agent),
                tracked.last_at
            ));
        }
        tracked.last_at = at;
        let observation = if self.plugin.enabled() {
            Some(observe(&mut self.plugin, &mut tracked.state, at, &event))
        } else {
            None
        };
        let policy = self.plugin.policy();
        let signals = policy.signals(&tracked.state);
        if let Some(chart) = self.chart.as_mut() {
            let state = &tracked.state;
            let held = match observation {
                Some(Observation::Counted) if policy.triggers(state, at).any() => {
                    policy.hold(state, at)
                }
                _ => None,
            };
            let (what, failed) = match event {
                Event::Tool {
                    name,
                    ok,
                    exit_code,
                    killed,
                    timed_out,
                    unknown_tool,
                    ..
                } => {
                    self.events += 1;
                    let failed = outcome::Outcome {
                        ok,
                        exit_code,
                        killed,
                        timed_out,
                        cancelled: false,
                        unknown_tool,
                    }
                    .failed()
                        && !unknown_tool;
                    (
                        format!("{name}{}", if failed { " (failed)" } else { "" }),
                        failed,
                    )
                }
                Event::UserPrompt => ("user prompt".to_owned(), false),
            };
            let mark = match (held, observation) {
                (Some(Hold::Snooze), _) => Some(Mark::HeldBySnooze),
                (Some(Hold::Cooldown), _) => Some(Mark::HeldByCooldown),
                (None, Some(Observation::Nudge(_))) => Some(Mark::Nudge),
                (None, Some(Observation::ResearchReset)) => Some(Mark::Research),
                (None, Some(Observation::Snoozed { .. })) => Some(Mark::Snooze),
                (None, Some(Observation::UserPromptReset)) => Some(Mark::UserPrompt),
                _ => None,
            };
            let quiet = at.saturating_sub(state.research_clock());
            chart.push(
                agent,
                Point {
                    debt: signals.debt,
                    calls: signals.tool_calls_since_research,
                    quiet_ms: quiet,
                    failed,
                    mark,
                    live: false,
                    label: format!(
                        "at {at} ms: {what}\ndebt {}/{}, calls {}, {} min since research{}",
                        signals.debt,
                        signals.threshold,
                        signals.tool_calls_since_research,
                        quiet / MINUTE,
                        match mark {
                            Some(Mark::Nudge) => "\nreminder fired",
                            Some(Mark::HeldByCooldown) => "\nheld by cooldown",
                            Some(Mark::HeldBySnooze) => "\nheld by snooze",
                            Some(Mark::Research) => "\nresearch: reset",
                            Some(Mark::Snooze) => "\nsnoozed",
                            _ => "",
                        }
                    ),
                },
            );
            return Ok(None);
        }
        let mut out = json!({
            "agent": agent,
            "debt": signals.debt,
            "tool_calls_since_research": signals.tool_calls_since_research,
            "failures": signals.failures,
            "repeated_failures": signals.repeated_failures,
            "nudge": matches!(observation, Some(Observation::Nudge(_))),
        });
        match observation {
            Some(Observation::Nudge(_)) => {
                out["text"] = policy.reminder_text(&tracked.state).into();
            }
            Some(Observation::Snoozed { minutes, .. }) => out["snooze_minutes"] = minutes.into(),
            Some(Observation::SnoozeNotShortened) | None => out["ignored"] = true.into(),
            _ => {}
        }
        Ok(Some(out.to_string()))
    }
}

fn observe(
    plugin: &mut Plugin,
    state: &mut AgentState,
    at: Millis,
    event: &Event<'_>,
) -> Observation {
    let Event::Tool {
        name,
        ok,
        error,
        exit_code,
        killed,
        timed_out,
        unknown_tool,
        args,
    } = *event
    else {
        return plugin.policy.user_prompt(state, at);
    };
    let args = (name == SNOOZE_TOOL_NAME && ok)
        .then(|| args.map_or_else(|| "{}".to_owned(), Value::to_string));
    observe_call(
        plugin,
        state,
        at,
        name,
        Ended {
            ok,
            exit_code,
            killed,
            timed_out,
            unknown_tool,
        },
        error,
        args.as_deref().unwrap_or("{}"),
    )
    .0
}

fn at_ms(fields: &Map<String, Value>) -> Result<Millis, String> {
    match fields.get("at_ms") {
        None => Err("at_ms is required (integer milliseconds)".to_owned()),
        Some(value) => value
            .as_u64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .ok_or_else(|| format!("at_ms must be a non-negative integer (got {value})")),
    }
}

fn event(fields: &Map<String, Value>) -> Result<Event<'_>, String> {
    if let Some(unknown) = fields.keys().find(|k| {
        !COMMON_FIELDS.contains(&k.as_str())
            && !TOOL_FIELDS.contains(&k.as_str())
            && *k != "user_prompt"
    }) {
        return Err(format!("unknown field {}", Value::from(unknown.as_str())));
    }
    if let Some(prompt) = fields.get("user_prompt") {
        if prompt != &Value::Bool(true) {
            return Err(format!("user_prompt must be true (got {prompt})"));
        }
        if let Some(field) = TOOL_FIELDS.iter().find(|f| fields.contains_key(**f)) {
            return Err(format!(
                "{field} belongs to a tool event, not to a user_prompt line"
            ));
        }
        return Ok(Event::UserPrompt);
    }
    let name = match fields.get("tool") {
        None => return Err("needs either \"tool\" or \"user_prompt\": true".to_owned()),
        Some(Value::String(name)) if !name.is_empty() => name,
        Some(other) => return Err(format!("tool must be a non-empty string (got {other})")),
    };
    let ok = match fields.get("ok") {
        None => true,
        Some(Value::Bool(ok)) => *ok,
        Some(other) => return Err(format!("ok must be true or false (got {other})")),
    };
    let error = match fields.get("error") {
        None => "",
        Some(Value::String(text)) => text,
        Some(other) => return Err(format!("error must be a string (got {other})")),
    };
    let exit_code = match fields.get("exit_code") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_i64()
                .ok_or_else(|| format!("exit_code must be an integer (got {value})"))?,
        ),
    };
    let killed = match fields.get("signal") {
        None | Some(Value::Null) => false,
        Some(Value::String(signal)) if !signal.is_empty() => true,
        Some(other) => {
            return Err(format!(
                "signal must be a non-empty string such as \"SIGKILL\" (got {other})"
            ));
        }
    };
    let timed_out = match fields.get("timed_out") {
        None => false,
        Some(Value::Bool(timed_out)) => *timed_out,
        Some(other) => return Err(format!("timed_out must be true or false (got {other})")),
    };
    let unknown_tool = match fields.get("error_code") {
        None | Some(Value::Null) => false,
        Some(Value::String(code)) if !ok => {
            outcome::Outcome::from_facts(false, Some(code), None, false, false).unknown_tool
        }
        Some(Value::String(_)) => {
            return Err("error_code belongs to a failed call (ok false)".to_owned());
        }
        Some(other) => return Err(format!("error_code must be a string (got {other})")),
    };
    let args = match fields.get("args") {
        None => None,
        Some(value @ Value::Object(_)) => Some(value),
        Some(other) => return Err(format!("args must be an object (got {other})")),
    };
    Ok(Event::Tool {
        name,
        ok,
        error,
        exit_code,
        killed,
        timed_out,
        unknown_tool,
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(config: &str, lines: &[&str]) -> Vec<Value> {
        let mut replay = Replay::from_json(config).unwrap();
        lines
            .iter()
            .filter_map(|line| replay.feed_line(line).unwrap())
            .map(|out| serde_json::from_str(&out).unwrap())
            .collect()
    }

    /// The raw output lines, as the CLI prints them.
    fn printed(config: &str, lines: &[&str]) -> String {
        let mut replay = Replay::from_json(config).unwrap();
        let mut out = String::new();
        for line in lines {
            if let Some(text) = replay.feed_line(line).unwrap() {
                out.push_str(&text);
                out.push('\n');
            }
        }
        out
    }

    #[test]
    fn readme_worked_example() {
        let input = [
            r#"{"at_ms":0,"tool":"read"}"#,
            r#"{"at_ms":1000,"tool":"edit"}"#,
            r#"{"at_ms":2000,"tool":"bash","ok":false,"error":"TypeError at line 123"}"#,
            "",
            r#"{"at_ms":3000,"tool":"edit"}"#,
            r#"{"at_ms":4000,"tool":"bash","ok":false,"error":"TypeError at line 456"}"#,
        ];
        let out = run("{}", &input);
        let debts: Vec<_> = out.iter().map(|o| o["debt"].as_u64().unwrap()).collect();
        assert_eq!(debts, [1, 3, 8, 10, 21]);
        assert_eq!(out[4]["nudge"], true);
        assert!(
            out[..4]
                .iter()
                .all(|o| o["nudge"] == false && o.get("text").is_none())
        );
        expect_test::expect_file!["snapshots/replay-readme-worked-example.jsonl"]
            .assert_eq(&printed("{}", &input));
    }

    #[test]
    fn output_keys_come_in_the_documented_order() {
        let out = Replay::from_json("{}")
            .unwrap()
            .feed_line(r#"{"at_ms":0,"tool":"read"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            r#"{"agent":"default","debt":1,"tool_calls_since_research":1,"failures":0,"repeated_failures":0,"nudge":false}"#
        );
    }

    #[test]
    fn snooze_lines_report_minutes_or_fail_like_the_tool() {
        let out = run(
            r#"{"maxAgentSnoozeMinutes":20}"#,
            &[
                r#"{"at_ms":0,"tool":"research_nudge_snooze","args":{"minutes":45}}"#,
                r#"{"at_ms":0,"tool":"research_nudge_snooze","args":{"minutes":5}}"#,
                r#"{"at_ms":0,"tool":"research_nudge_snooze","args":{"minutes":"abc"}}"#,
            ],
        );
        assert_eq!(out[0]["snooze_minutes"], 20);
        assert_eq!(out[0]["debt"], 0);
        assert_eq!(out[1]["ignored"], true);
        assert!(out[1].get("snooze_minutes").is_none());
        assert_eq!(
            (out[2]["debt"].as_u64(), out[2]["failures"].as_u64()),
            (Some(5), Some(1))
        );
    }

    #[test]
    fn kills_and_timeouts_are_failures() {
        let out = run(
            "{}",
            &[
                r#"{"at_ms":0,"tool":"bash","signal":"SIGKILL","error":"make: building"}"#,
                r#"{"at_ms":1,"tool":"bash","timed_out":true,"error":"running 12 tests"}"#,
                r#"{"at_ms":2,"tool":"bash","signal":null,"timed_out":false,"exit_code":0}"#,
            ],
        );
        let failures: Vec<_> = out.iter().map(|o| o["failures"].as_u64()).collect();
        assert_eq!(failures, [Some(1), Some(2), Some(2)]);
        assert_eq!(out[1]["debt"], 10);
    }

    #[test]
    fn agents_are_separate_and_user_prompts_reset() {
        let out = run(
            "{}",
            &[
                r#"{"at_ms":0,"agent":"a","tool":"edit"}"#,
                r#"{"at_ms":0,"agent":"b","tool":"read"}"#,
                r#"{"at_ms":5,"agent":"a","user_prompt":true}"#,
            ],
        );
        assert_eq!(
            (out[0]["agent"].as_str(), out[0]["debt"].as_u64()),
            (Some("a"), Some(2))
        );
        assert_eq!(
            (out[1]["agent"].as_str(), out[1]["debt"].as_u64()),
            (Some("b"), Some(1))
        );
        assert_eq!(out[2]["debt"], 0);
        assert!(out[2].get("ignored").is_none());
    }

    #[test]
    fn a_disabled_plugin_ignores_everything() {
        let out = run(r#"{"enabled":false}"#, &[r#"{"at_ms":0,"tool":"edit"}"#]);
        assert_eq!(out[0]["ignored"], true);
        assert_eq!(out[0]["debt"], 0);
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_field() {
        let cases = [
            "nope",
            "[]",
            r#"{"tool":"read"}"#,
            r#"{"at_ms":-1,"tool":"read"}"#,
            r#"{"at_ms":1.5,"tool":"read"}"#,
            r#"{"at_ms":5,"tool":"read"}"#,
            r#"{"at_ms":10,"agent":7,"tool":"read"}"#,
            r#"{"at_ms":10}"#,
            r#"{"at_ms":10,"tool":""}"#,
            r#"{"at_ms":10,"tool":"a","ok":"no"}"#,
            r#"{"at_ms":10,"tool":"a","error":5}"#,
            r#"{"at_ms":10,"tool":"a","exit_code":1.5}"#,
            r#"{"at_ms":10,"tool":"a","signal":9}"#,
            r#"{"at_ms":10,"tool":"a","timed_out":"yes"}"#,
            r#"{"at_ms":10,"tool":"a","args":[]}"#,
            r#"{"at_ms":10,"tool":"a","exitcode":1}"#,
            r#"{"at_ms":10,"user_prompt":false}"#,
            r#"{"at_ms":10,"user_prompt":true,"tool":"a"}"#,
        ];
        let mut errors = String::new();
        for line in cases {
            let mut replay = Replay::from_json("{}").unwrap();
            replay.feed_line(r#"{"at_ms":10,"tool":"read"}"#).unwrap();
            let error = replay.feed_line(line).unwrap_err();
            errors.push_str(&format!("{line}\n  {error}\n"));
        }
        expect_test::expect![[r#"
            nope
              line 2: not valid JSON (expected ident at line 1 column 2)
            []
              line 2: must be a JSON object (got [])
            {"tool":"read"}
              line 2: at_ms is required (integer milliseconds)
            {"at_ms":-1,"tool":"read"}
              line 2: at_ms must be a non-negative integer (got -1)
            {"at_ms":1.5,"tool":"read"}
              line 2: at_ms must be a non-negative integer (got 1.5)
            {"at_ms":5,"tool":"read"}
              line 2: at_ms goes backwards for agent "default" (got 5 after 10)
            {"at_ms":10,"agent":7,"tool":"read"}
              line 2: agent must be a string (got 7)
            {"at_ms":10}
              line 2: needs either "tool" or "user_prompt": true
            {"at_ms":10,"tool":""}
              line 2: tool must be a non-empty string (got "")
            {"at_ms":10,"tool":"a","ok":"no"}
              line 2: ok must be true or false (got "no")
            {"at_ms":10,"tool":"a","error":5}
              line 2: error must be a string (got 5)
            {"at_ms":10,"tool":"a","exit_code":1.5}
              line 2: exit_code must be an integer (got 1.5)
            {"at_ms":10,"tool":"a","signal":9}
              line 2: signal must be a non-empty string such as "SIGKILL" (got 9)
            {"at_ms":10,"tool":"a","timed_out":"yes"}
              line 2: timed_out must be true or false (got "yes")
            {"at_ms":10,"tool":"a","args":[]}
              line 2: args must be an object (got [])
            {"at_ms":10,"tool":"a","exitcode":1}
              line 2: unknown field "exitcode"
            {"at_ms":10,"user_prompt":false}
              line 2: user_prompt must be true (got false)
            {"at_ms":10,"user_prompt":true,"tool":"a"}
              line 2: tool belongs to a tool event, not to a user_prompt line
        "#]]
        .assert_eq(&errors);
    }
}
