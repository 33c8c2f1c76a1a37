//! DSH session logs as `research-nudge replay` input: what the plugin would have done in a
//! recorded session.
//!
//! The reading is `dsh-session-log`'s (the format, fork seeds, reopenings, crash-repaired
//! results, human prompts, status markers); this module maps its events to the policy and renders
//! the timeline or the JSON lines. One session = one agent (a subagent writes its own session
//! file):
//! - a tool result is one finished call at its `time`: an error result (a denial, an invalid
//!   call, a thrown error) is a failure with its text, and otherwise the shell status markers
//!   give the exit code, a kill by a signal or a timeout, each a failure as in the plugin (DSH
//!   keeps only the rendered text, not the tool's value). A `research_nudge_snooze` call arms the minutes its
//!   arguments ask for. Results DSH synthesizes when it repairs a crashed turn never reached the
//!   plugin and are not counted;
//! - a human prompt starts a new task; a notice this plugin injected when the session ran is
//!   shown as a live reminder, other injected context and assistant replies are ignored;
//! - a reopened session is a fresh agent from there.
//!
//! Times are the events' `time` (Unix epoch milliseconds); one that steps back counts as no time
//! passing, as the plugin's monotonic clock would.

use crate::research_nudge::call::{Ended, observe_call};
use crate::research_nudge::chart::{Chart, Mark, Point};
use crate::research_nudge::plugin::{PLUGIN_NAME, Plugin};
use ::session_log::{Entry, Header, LogEvent, ToolResult};
use policy::{AgentState, Hold, MINUTE, Millis, Observation, Signals, ToolClass, Triggers};
use serde_json::json;

pub use ::session_log::FORMAT_VERSION;

/// Characters of a user prompt the timeline quotes.
const PROMPT_EXCERPT: usize = 40;

/// How the timeline and the JSON lines name a result's outcome.
fn label(result: &ToolResult) -> String {
    if result.repaired {
        "interrupted".to_owned()
    } else if result.is_error {
        match &result.error_code {
            Some(code) => format!("error {code}"),
            None => "error".to_owned(),
        }
    } else if let Some(signal) = &result.status.signal {
        if result.status.timeout_ms.is_some() {
            format!("timeout {signal}")
        } else {
            format!("killed {signal}")
        }
    } else {
        match result.status.exit_code {
            Some(code) if code != 0 => format!("exit {code}"),
            _ if result.status.timeout_ms.is_some() => "timed out".to_owned(),
            _ => "ok".to_owned(),
        }
    }
}

/// The totals the timeline's summary reports.
#[derive(Default)]
struct Stats {
    calls: u32,
    failed: u32,
    prompts: u32,
    resumes: u32,
    interrupted: u32,
    live_reminders: u32,
    nudges: Vec<(u32, Triggers)>,
    held_by_snooze: u32,
    held_by_cooldown: u32,
    /// (debt, call number) and (calls since research, call number) at their highest.
    peak_debt: (u32, u32),
    peak_calls: (u32, u32),
}

/// One output row: a tool call, a human prompt, or a reopened session.
struct Row {
    line: usize,
    time: Millis,
    what: What,
    observation: Option<Observation>,
    /// Thresholds reached but held back, and by what.
    held: Option<(Triggers, Hold)>,
    signals: Signals,
    /// Milliseconds since research (or since the task started).
    quiet: Millis,
    reminder: Option<String>,
}

enum What {
    Tool {
        number: Option<u32>,
        name: String,
        class: ToolClass,
        result: Box<ToolResult>,
        refused_snooze: Option<String>,
    },
    UserPrompt {
        text: String,
    },
    Resume,
    /// A reminder the plugin really injected when the session ran.
    LiveReminder {
        summary: String,
    },
}

/// A replay over one DSH session log: one agent.
pub struct SessionLog {
    header: Header,
    json: bool,
    state: Option<AgentState>,
    /// Latest event time seen: the monotonic clock.
    clock: Millis,
    stats: Stats,
}

impl SessionLog {
    /// Starts a replay of the session the header opens.
    pub fn start(header: &Header, json: bool) -> Self {
        Self {
            clock: header.created_at,
            header: header.clone(),
            json,
            state: None,
            stats: Stats::default(),
        }
    }

    fn header(&self) -> &Header {
        &self.header
    }

    /// The timeline's heading (nothing for JSON lines).
    pub fn opening(&self, plugin: &Plugin) -> Option<String> {
        if self.json {
            return None;
        }
        let mut out = self.heading(plugin);
        out.push_str("\n\n");
        out.push_str(&columns(
            "call", "time", "tool", "class", "result", "debt", "calls", "mins", "event",
        ));
        Some(out)
    }

    /// The session's first line (`DSH session … (started …)`) and the lines after it (subagent,
    /// fork, thresholds).
    pub fn heading(&self, plugin: &Plugin) -> String {
        let h = self.header();
        let mut out = format!(
            "DSH session {} (started {} UTC",
            h.id,
            text::utc_seconds(h.created_at)
        );
        if let Some(cwd) = &h.cwd {
            out.push_str(&format!(", cwd {cwd}"));
        }
        out.push(')');
        if h.subagent || h.depth > 0 {
            out.push_str(&format!("\nsubagent session, delegation depth {}", h.depth));
            if let Some(parent) = &h.parent {
                out.push_str(&format!(", parent {parent}"));
            }
        }
        if h.seed_length > 0 {
            out.push_str(&format!(
                "\nforked{}: its first {} events are the parent's history and are not replayed",
                h.parent
                    .as_ref()
                    .map(|p| format!(" from {p}"))
                    .unwrap_or_default(),
                h.seed_length
            ));
        }
        let s = plugin.policy().settings();
        if plugin.enabled() {
            out.push_str(&format!(
                "\nthresholds: debt >= {}, calls >= {}, minutes >= {}; cooldown {} min; snooze at most {} min",
                s.debt_threshold,
                s.max_tool_calls_without_research,
                minutes(s.max_time_without_research),
                minutes(s.cooldown),
                plugin.row().max_agent_snooze_minutes,
            ));
        } else {
            out.push_str("\nthe plugin is disabled by this config: nothing is counted");
        }
        out
    }

    /// Feeds one event, read from `line`; returns the output for it, if any. With a `chart`, the
    /// row is drawn there instead and nothing is returned.
    pub fn feed(
        &mut self,
        plugin: &mut Plugin,
        line: usize,
        entry: Entry,
        chart: Option<&mut Chart>,
    ) -> Option<String> {
        let time = entry.time;
        let row = match entry.event {
            LogEvent::ToolResult(result) => Some(self.tool_result(plugin, line, time, result)),
            LogEvent::UserPrompt { text } => Some(self.user_prompt(plugin, line, time, text)),
            LogEvent::Injected {
                plugin: Some(by),
                summary,
                ..
            } if by == PLUGIN_NAME => {
                self.stats.live_reminders += 1;
                let what = What::LiveReminder {
                    summary: summary.unwrap_or_default(),
                };
                Some(self.row(plugin, line, time, what, None))
            }
            LogEvent::Reopened => self.resume(plugin, line, time),
            LogEvent::ToolCall(_) | LogEvent::Injected { .. } | LogEvent::AssistantText { .. } => {
                None
            }
        };
        match (row, chart) {
            (Some(row), Some(chart)) => {
                self.draw(plugin, &row, chart);
                None
            }
            (row, None) => row.map(|row| self.render(plugin, &row)),
            (None, Some(_)) => None,
        }
    }

    /// Adds a row to the chart (one agent: the session).
    fn draw(&self, plugin: &Plugin, row: &Row, chart: &mut Chart) {
        let agent = self.header().id.as_str();
        let time = elapsed(row.time.saturating_sub(self.header().created_at));
        let event = self.event(plugin, row);
        let s = &row.signals;
        let (mark, failed, what) = match &row.what {
            What::LiveReminder { summary } => {
                let label =
                    format!("{time} the plugin nudged here when the session ran ({summary})");
                chart.mark_live(agent, &label);
                return;
            }
            What::Tool { result, .. } if result.repaired => return,
            What::Tool {
                number,
                name,
                result,
                refused_snooze,
                ..
            } => {
                let e = ended(result);
                let failed = refused_snooze.is_some()
                    || outcome::Outcome {
                        ok: e.ok,
                        exit_code: e.exit_code,
                        killed: e.killed,
                        timed_out: e.timed_out,
                        cancelled: false,
                        unknown_tool: e.unknown_tool,
                    }
                    .failed()
                        && !matches!(row.observation, Some(Observation::Transparent));
                let what = format!(
                    "call {} {time}: {name}, {}",
                    number.map(|n| n.to_string()).unwrap_or_default(),
                    label(result)
                );
                (mark_of(row), failed, what)
            }
            What::UserPrompt { .. } => (
                Some(Mark::UserPrompt),
                false,
                format!("{time}: user prompt"),
            ),
            What::Resume => (
                Some(Mark::Resume),
                false,
                format!("{time}: session reopened"),
            ),
        };
        let mut label = format!(
            "{what}\ndebt {}/{}, calls {}, {} min since research",
            s.debt,
            plugin.policy().settings().debt_threshold,
            s.tool_calls_since_research,
            row.quiet / MINUTE
        );
        if !event.is_empty() {
            label.push('\n');
            label.push_str(&event);
        }
        chart.push(
            agent,
            Point {
                debt: s.debt,
                calls: s.tool_calls_since_research,
                quiet_ms: row.quiet,
                failed,
                mark,
                live: false,
                label,
            },
        );
    }

    /// The timeline's summary (nothing for JSON lines).
    pub fn finish(&self, plugin: &Plugin) -> Option<String> {
        if self.json {
            return None;
        }
        Some(self.summary(plugin))
    }

    /// The summary lines: totals, nudges, peaks.
    pub fn summary(&self, plugin: &Plugin) -> String {
        let st = &self.stats;
        let mut out = format!("\nsummary: {}", plural(st.calls, "tool call", "tool calls"));
        if st.failed > 0 {
            out.push_str(&format!(" ({} failed)", st.failed));
        }
        out.push_str(&format!(
            ", {}",
            plural(st.prompts, "user prompt", "user prompts")
        ));
        if st.resumes > 0 {
            out.push_str(&format!(
                ", reopened {}",
                plural(st.resumes, "time", "times")
            ));
        }
        if st.live_reminders > 0 {
            out.push_str(&format!(
                ", {} injected when it ran",
                plural(st.live_reminders, "reminder", "reminders")
            ));
        }
        if st.interrupted > 0 {
            out.push_str(&format!(
                ", {} closed by crash repair (not counted)",
                plural(st.interrupted, "call", "calls")
            ));
        }
        if !plugin.enabled() {
            out.push_str("\nnudges: none (the plugin is disabled by this config)");
            return out;
        }
        if st.nudges.is_empty() {
            out.push_str("\nnudges: none");
        } else {
            let at: Vec<String> = st
                .nudges
                .iter()
                .map(|(number, triggers)| format!("{number} ({})", triggers.names().join(", ")))
                .collect();
            out.push_str(&format!(
                "\nnudges: {} at call{} {}",
                st.nudges.len(),
                if at.len() == 1 { "" } else { "s" },
                at.join(", ")
            ));
        }
        if st.held_by_snooze + st.held_by_cooldown > 0 {
            out.push_str(&format!(
                "; held back {} by snooze, {} by cooldown",
                st.held_by_snooze, st.held_by_cooldown
            ));
        }
        let s = plugin.policy().settings();
        if st.calls > 0 {
            out.push_str(&format!(
                "\npeaks: debt {}/{} at call {}, calls since research {}/{} at call {}",
                st.peak_debt.0,
                s.debt_threshold,
                st.peak_debt.1,
                st.peak_calls.0,
                s.max_tool_calls_without_research,
                st.peak_calls.1
            ));
        }
        out
    }

    /// Advances the monotonic clock to an event's time.
    fn tick(&mut self, time: Millis) -> Millis {
        self.clock = self.clock.max(time);
        self.clock
    }

    fn tool_result(
        &mut self,
        plugin: &mut Plugin,
        line: usize,
        time: Millis,
        result: ToolResult,
    ) -> Row {
        // Only a call crash repair closed before it was recorded has none.
        let name = result
            .call
            .as_ref()
            .map_or_else(|| "?".to_owned(), |call| call.name.clone());
        let at = self.tick(time);
        let class = plugin.policy.classify(&name);
        if result.repaired {
            self.stats.interrupted += 1;
            return self.row(
                plugin,
                line,
                time,
                What::Tool {
                    number: None,
                    name,
                    class,
                    result: Box::new(result),
                    refused_snooze: None,
                },
                None,
            );
        }
        let state = self.state.get_or_insert_with(|| AgentState::new(at));
        let mut refused_snooze = None;
        let observation = if plugin.enabled() {
            let arguments = result
                .call
                .as_ref()
                .map_or("{}", |call| call.arguments_json.as_str());
            let arguments = if arguments.trim().is_empty() {
                "{}"
            } else {
                arguments
            };
            let (observation, refused) = observe_call(
                plugin,
                state,
                at,
                &name,
                ended(&result),
                &result.text,
                arguments,
            );
            refused_snooze = refused;
            Some(observation)
        } else {
            None
        };
        // The Code Mode transport and calls DSH rejected as unknown tools are no calls of the
        // debt's: unnumbered, as the plugin does not count them.
        let transparent = class == ToolClass::CodeMode || ended(&result).unknown_tool;
        let number = if transparent {
            None
        } else {
            self.stats.calls += 1;
            Some(self.stats.calls)
        };
        let e = ended(&result);
        let failed = !transparent
            && outcome::Outcome {
                ok: e.ok,
                exit_code: e.exit_code,
                killed: e.killed,
                timed_out: e.timed_out,
                cancelled: false,
                unknown_tool: false,
            }
            .failed();
        if failed || refused_snooze.is_some() {
            self.stats.failed += 1;
        }
        let row = self.row(
            plugin,
            line,
            time,
            What::Tool {
                number,
                name,
                class,
                result: Box::new(result),
                refused_snooze,
            },
            observation,
        );
        let Some(number) = number else {
            return row;
        };
        let st = &mut self.stats;
        match (row.observation, row.held) {
            (Some(Observation::Nudge(triggers)), _) => st.nudges.push((number, triggers)),
            (_, Some((_, Hold::Snooze))) => st.held_by_snooze += 1,
            (_, Some((_, Hold::Cooldown))) => st.held_by_cooldown += 1,
            _ => {}
        }
        if row.signals.debt > st.peak_debt.0 {
            st.peak_debt = (row.signals.debt, number);
        }
        if row.signals.tool_calls_since_research > st.peak_calls.0 {
            st.peak_calls = (row.signals.tool_calls_since_research, number);
        }
        row
    }

    fn user_prompt(&mut self, plugin: &mut Plugin, line: usize, time: Millis, text: String) -> Row {
        let at = self.tick(time);
        self.stats.prompts += 1;
        let state = self.state.get_or_insert_with(|| AgentState::new(at));
        let observation = plugin
            .enabled()
            .then(|| plugin.policy.user_prompt(state, at));
        self.row(plugin, line, time, What::UserPrompt { text }, observation)
    }

    fn resume(&mut self, plugin: &mut Plugin, line: usize, time: Millis) -> Option<Row> {
        // Nothing to reopen before the first live event (a fork's seed ends here too).
        self.state.take()?;
        self.tick(time);
        self.stats.resumes += 1;
        Some(self.row(plugin, line, time, What::Resume, None))
    }

    fn row(
        &self,
        plugin: &Plugin,
        line: usize,
        time: Millis,
        what: What,
        observation: Option<Observation>,
    ) -> Row {
        let policy = plugin.policy();
        let fresh = AgentState::new(self.clock);
        let state = self.state.as_ref().unwrap_or(&fresh);
        let held = match observation {
            Some(Observation::Counted) => {
                let reached = policy.triggers(state, self.clock);
                policy
                    .hold(state, self.clock)
                    .filter(|_| reached.any())
                    .map(|hold| (reached, hold))
            }
            _ => None,
        };
        let reminder =
            matches!(observation, Some(Observation::Nudge(_))).then(|| policy.reminder_text(state));
        Row {
            line,
            time,
            what,
            observation,
            held,
            signals: policy.signals(state),
            quiet: self.clock.saturating_sub(state.research_clock()),
            reminder,
        }
    }

    fn render(&self, plugin: &Plugin, row: &Row) -> String {
        if self.json {
            self.render_json(row)
        } else {
            self.render_text(plugin, row)
        }
    }

    fn render_json(&self, row: &Row) -> String {
        let s = &row.signals;
        let mut out = json!({
            "agent": self.header().id,
            "debt": s.debt,
            "tool_calls_since_research": s.tool_calls_since_research,
            "failures": s.failures,
            "repeated_failures": s.repeated_failures,
            "nudge": matches!(row.observation, Some(Observation::Nudge(_))),
        });
        if let Some(text) = &row.reminder {
            out["text"] = text.as_str().into();
        }
        match row.observation {
            Some(Observation::Snoozed { minutes, .. }) => out["snooze_minutes"] = minutes.into(),
            Some(Observation::SnoozeNotShortened) | None if !matches!(row.what, What::Resume) => {
                out["ignored"] = true.into();
            }
            _ => {}
        }
        match &row.what {
            What::Tool {
                number,
                name,
                class,
                result,
                refused_snooze,
            } => {
                out["event"] = "tool".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
                if let Some(number) = number {
                    out["call"] = (*number).into();
                }
                out["tool"] = name.as_str().into();
                out["class"] = class_name(*class).into();
                out["result"] = label(result).into();
                if let Some(code) = result.status.exit_code {
                    out["exit_code"] = code.into();
                }
                if let Some(signal) = &result.status.signal {
                    out["signal"] = signal.as_str().into();
                }
                if result.status.timeout_ms.is_some() {
                    out["timed_out"] = true.into();
                }
                if let Some(code) = &result.error_code {
                    out["error_code"] = code.as_str().into();
                }
                if let Some(message) = refused_snooze {
                    out["snooze_refused"] = message.as_str().into();
                }
                if let Some(parent) = result.call.as_ref().and_then(|c| c.parent.as_ref()) {
                    out["parent_call"] = parent.as_str().into();
                }
                if matches!(row.observation, Some(Observation::Transparent)) {
                    out["counted"] = false.into();
                }
            }
            What::UserPrompt { .. } => {
                out["event"] = "user_prompt".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
            }
            What::Resume => {
                out["event"] = "resume".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
            }
            What::LiveReminder { summary } => {
                out["event"] = "live_reminder".into();
                out["line"] = row.line.into();
                out["time"] = row.time.into();
                out["summary"] = summary.as_str().into();
            }
        }
        match (row.observation, row.held) {
            (Some(Observation::Nudge(triggers)), _) => out["trigger"] = triggers.names().into(),
            (_, Some((triggers, hold))) => {
                out["trigger"] = triggers.names().into();
                out["held_by"] = hold_name(hold).into();
            }
            _ => {}
        }
        out.to_string()
    }

    fn render_text(&self, plugin: &Plugin, row: &Row) -> String {
        let time = elapsed(row.time.saturating_sub(self.header().created_at));
        let s = &row.signals;
        let (debt, calls, mins) = (
            s.debt.to_string(),
            s.tool_calls_since_research.to_string(),
            (row.quiet / MINUTE).to_string(),
        );
        match &row.what {
            What::Resume => columns(
                "",
                &time,
                "(reopened)",
                "",
                "",
                "",
                "",
                "",
                "a fresh agent from here: its state starts afresh",
            ),
            What::LiveReminder { summary } => columns(
                "",
                &time,
                "(live reminder)",
                "",
                "",
                "",
                "",
                "",
                &if summary.is_empty() {
                    "the plugin nudged here when the session ran".to_owned()
                } else {
                    format!("the plugin nudged here when the session ran ({summary})")
                },
            ),
            What::Tool {
                name,
                class,
                result,
                ..
            } if result.repaired => columns(
                "",
                &time,
                name,
                class_name(*class),
                &label(result),
                "",
                "",
                "",
                "not counted: closed by crash repair, the plugin never saw it",
            ),
            What::Tool {
                number,
                name,
                class,
                result,
                refused_snooze,
            } => {
                let mut event = self.event(plugin, row);
                if let Some(message) = refused_snooze {
                    push(&mut event, &format!("snooze refused: {message}"));
                }
                columns(
                    &number.map(|n| n.to_string()).unwrap_or_default(),
                    &time,
                    name,
                    class_name(*class),
                    &label(result),
                    &debt,
                    &calls,
                    &mins,
                    &event,
                )
            }
            What::UserPrompt { text } => {
                let mut event = self.event(plugin, row);
                let quote = excerpt(text);
                if !quote.is_empty() {
                    event.push_str(&format!(": \"{quote}\""));
                }
                columns(
                    "",
                    &time,
                    "user prompt",
                    "",
                    "",
                    &debt,
                    &calls,
                    &mins,
                    &event,
                )
            }
        }
    }

    /// The timeline's event column: what the policy did with the row.
    fn event(&self, plugin: &Plugin, row: &Row) -> String {
        if !plugin.enabled() {
            return "ignored (plugin disabled)".to_owned();
        }
        if let Some((triggers, hold)) = row.held {
            return format!(
                "held by {} ({})",
                hold_name(hold),
                triggers.names().join(", ")
            );
        }
        match row.observation {
            Some(Observation::Nudge(triggers)) => {
                format!("NUDGE ({})", triggers.names().join(", "))
            }
            Some(Observation::ResearchReset) => "research: reset".to_owned(),
            Some(Observation::Snoozed { minutes, .. }) => format!("snoozed {minutes} min"),
            Some(Observation::SnoozeNotShortened) => {
                "snooze ignored: a longer one is active".to_owned()
            }
            Some(Observation::UserPromptReset) => "new task, reset".to_owned(),
            Some(Observation::Transparent) => match &row.what {
                What::Tool { class, .. } if *class == ToolClass::CodeMode => {
                    "not counted: Code Mode transport (its nested calls count)".to_owned()
                }
                _ => "not counted: DSH rejected it as an unknown tool".to_owned(),
            },
            Some(Observation::Counted) | None => String::new(),
        }
    }
}

/// A recorded result's facts, as the plugin would have read them from the live result: an error
/// result has no shell status (its text is the error), otherwise the markers give the exit code,
/// the signal and the timeout.
fn ended(result: &ToolResult) -> Ended {
    let shell = !result.is_error;
    Ended {
        ok: !result.is_error,
        exit_code: result.status.exit_code.filter(|_| shell),
        killed: shell && result.status.signal.is_some(),
        timed_out: shell && result.status.timeout_ms.is_some(),
        unknown_tool: result.outcome().unknown_tool,
    }
}

/// The chart's marker for a row: what the policy did, or what held a reminder back.
fn mark_of(row: &Row) -> Option<Mark> {
    if let Some((_, hold)) = row.held {
        return Some(match hold {
            Hold::Snooze => Mark::HeldBySnooze,
            Hold::Cooldown => Mark::HeldByCooldown,
        });
    }
    match row.observation {
        Some(Observation::Nudge(_)) => Some(Mark::Nudge),
        Some(Observation::ResearchReset) => Some(Mark::Research),
        Some(Observation::Snoozed { .. }) => Some(Mark::Snooze),
        Some(Observation::UserPromptReset) => Some(Mark::UserPrompt),
        _ => None,
    }
}

fn push(event: &mut String, text: &str) {
    if !event.is_empty() {
        event.push_str("; ");
    }
    event.push_str(text);
}

/// One timeline line in fixed columns (wider values push the rest right).
#[allow(clippy::too_many_arguments)]
fn columns(
    call: &str,
    time: &str,
    tool: &str,
    class: &str,
    result: &str,
    debt: &str,
    calls: &str,
    mins: &str,
    event: &str,
) -> String {
    format!(
        "{call:>5}  {time:<9}  {tool:<22}  {class:<9}  {result:<18}  {debt:>4}  {calls:>5}  {mins:>4}  {event}"
    )
    .trim_end()
    .to_owned()
}

fn class_name(class: ToolClass) -> &'static str {
    match class {
        ToolClass::Research => "research",
        ToolClass::Mutation => "mutation",
        ToolClass::Execution => "execution",
        ToolClass::Ordinary => "ordinary",
        ToolClass::CodeMode => "code-mode",
    }
}

fn hold_name(hold: Hold) -> &'static str {
    match hold {
        Hold::Snooze => "snooze",
        Hold::Cooldown => "cooldown",
    }
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Minutes for the heading: whole when exact, else to (truncated) hundredths.
fn minutes(ms: Millis) -> String {
    let (whole, hundredths) = (ms / MINUTE, ms % MINUTE * 100 / MINUTE);
    if hundredths == 0 && ms % MINUTE == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{hundredths:02}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    }
}

/// Time since the session started: `+m:ss`, or `+h:mm:ss` from the first hour on.
fn elapsed(ms: Millis) -> String {
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("+{h}:{m:02}:{s:02}")
    } else {
        format!("+{m}:{s:02}")
    }
}

/// The start of a prompt on one line.
fn excerpt(text: &str) -> String {
    text::clip(
        &text.split_whitespace().collect::<Vec<_>>().join(" "),
        PROMPT_EXCERPT,
    )
}

#[cfg(test)]
mod tests;
