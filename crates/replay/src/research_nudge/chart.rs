//! `research-nudge replay --html OUT.html`: the replay drawn as one self-contained HTML page.
//!
//! Per agent, three panels share one axis of replayed rows (tool calls, user prompts, reopened
//! sessions, in order): the research debt with the `debtThreshold` line, the calls since research
//! with `maxToolCallsWithoutResearch`, and the minutes since research with
//! `maxMinutesWithoutResearch`. Markers show where a reminder fired, where the cooldown or the
//! snooze held a reached threshold back, where research reset the debt, where a person started a
//! new task, where a snooze was armed, which calls failed, and (for a DSH session log) where the
//! plugin really nudged when the session ran. Every marker has a tooltip.
//!
//! The page is inline SVG and CSS: no script, no font or image to fetch, no network. The colors
//! are fixed ([`COLORS`]), so a screenshot can be checked pixel by pixel.
//!
//! The page stays small whatever the input: at most [`MAX_POINTS`] points per agent (past that,
//! neighbouring rows are merged two by two, so one point stands for 2, 4, … rows: the later row's
//! values, the first marker of the span, failed when any row failed) and at most [`MAX_AGENTS`]
//! agents; the page says what was merged or left out.

use std::fmt::Write;
use text::escape_html;

/// What happened at one row, drawn as a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A reminder fired.
    Nudge,
    /// A threshold was reached, but the cooldown held the reminder back.
    HeldByCooldown,
    /// A threshold was reached, but the agent's snooze held the reminder back.
    HeldBySnooze,
    /// A successful research call reset the debt.
    Research,
    /// A snooze was armed.
    Snooze,
    /// A person's prompt started a new task.
    UserPrompt,
    /// The session was reopened: a fresh agent.
    Resume,
}

/// One replayed row.
#[derive(Clone, Debug)]
pub struct Point {
    /// Research debt after the row.
    pub debt: u32,
    /// Calls since research after the row.
    pub calls: u32,
    /// Milliseconds since research (or since the task started).
    pub quiet_ms: u64,
    /// Whether the row is a failed tool call.
    pub failed: bool,
    /// What happened, if anything worth a marker.
    pub mark: Option<Mark>,
    /// The plugin really nudged here when the session ran (a DSH session log's own record).
    pub live: bool,
    /// The tooltip: call number, tool, result, event.
    pub label: String,
}

/// The fixed colors of the page (CSS hex). `cargo xtask chart-test` looks for them in a
/// screenshot.
pub const COLORS: [(&str, &str); 10] = [
    ("debt", "#1d4ed8"),
    ("threshold", "#7f1d1d"),
    ("nudge", "#ef4444"),
    ("cooldown", "#f59e0b"),
    ("snooze", "#8b5cf6"),
    ("research", "#16a34a"),
    ("prompt", "#64748b"),
    ("calls", "#0891b2"),
    ("minutes", "#a16207"),
    ("failure", "#db2777"),
];

fn color(name: &str) -> &'static str {
    COLORS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("#000000", |(_, c)| c)
}

/// The thresholds drawn as lines.
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    /// `debtThreshold`.
    pub debt: u32,
    /// `maxToolCallsWithoutResearch`.
    pub calls: u32,
    /// `maxMinutesWithoutResearch`, in milliseconds.
    pub time_ms: u64,
}

/// Points drawn per agent at most.
pub const MAX_POINTS: usize = 4_000;
/// Agents drawn at most (the first ones seen).
pub const MAX_AGENTS: usize = 16;

/// One agent's points: each stands for `stride` rows (the last for `filled` so far).
struct Series {
    points: Vec<Point>,
    stride: u64,
    filled: u64,
    rows: u64,
}

impl Series {
    fn push(&mut self, point: Point) {
        self.rows += 1;
        if self.filled < self.stride {
            if let Some(last) = self.points.last_mut() {
                merge(last, point);
                self.filled += 1;
                return;
            }
        }
        if self.points.len() == MAX_POINTS {
            self.compact();
        }
        self.points.push(point);
        self.filled = 1;
    }

    /// Merges neighbouring points two by two: each then stands for twice the rows.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.points);
        let mut pairs = old.into_iter();
        while let Some(mut first) = pairs.next() {
            if let Some(second) = pairs.next() {
                merge(&mut first, second);
            }
            self.points.push(first);
        }
        self.stride *= 2;
        self.filled = self.stride;
    }
}

/// `later` folded into `span`: the later values, the first marker, failed when either failed.
fn merge(span: &mut Point, later: Point) {
    let mark = span.mark.or(later.mark);
    let label = if span.mark.is_some() || (span.live && !later.live) {
        std::mem::take(&mut span.label)
    } else {
        later.label
    };
    *span = Point {
        mark,
        failed: span.failed || later.failed,
        live: span.live || later.live,
        label,
        ..later
    };
}

/// The replay's rows, per agent, in input order.
#[derive(Default)]
pub struct Chart {
    agents: Vec<(String, Series)>,
    /// Rows of agents past [`MAX_AGENTS`], not drawn.
    rows_left_out: u64,
}

impl Chart {
    /// An empty chart.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a row of `agent`.
    pub fn push(&mut self, agent: &str, point: Point) {
        let full = self.agents.len() == MAX_AGENTS;
        match self.agents.iter_mut().find(|(name, _)| name == agent) {
            Some((_, series)) => series.push(point),
            None if full => self.rows_left_out += 1,
            None => self.agents.push((
                agent.to_owned(),
                Series {
                    points: vec![point],
                    stride: 1,
                    filled: 1,
                    rows: 1,
                },
            )),
        }
    }

    /// Marks the last row of `agent` as where the plugin really nudged when the session ran (the
    /// log records that reminder right after the call's result).
    pub fn mark_live(&mut self, agent: &str, label: &str) -> bool {
        let Some((_, series)) = self.agents.iter_mut().find(|(name, _)| name == agent) else {
            return false;
        };
        let Some(last) = series.points.last_mut() else {
            return false;
        };
        last.live = true;
        last.label.push('\n');
        last.label.push_str(label);
        true
    }

    /// The whole page: `title`, a `subtitle` line (thresholds), optional `notes` (a summary, as
    /// preformatted text), the legend and one drawing per agent.
    pub fn html(&self, title: &str, subtitle: &str, notes: &str, t: Thresholds) -> String {
        let mut out = String::with_capacity(64 * 1024);
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        let _ = writeln!(out, "<title>{}</title>", escape_html(title));
        out.push_str(
            "<style>\nbody{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#111827;background:#ffffff}\nh1{font-size:18px;margin:0 0 4px}\nh2{font-size:15px;margin:20px 0 4px}\np.sub{margin:0 0 8px;color:#374151}\npre{background:#f3f4f6;padding:8px 12px;margin:8px 0;white-space:pre-wrap}\n.legend span{display:inline-block;margin-right:16px}\n.legend svg{vertical-align:middle;margin-right:4px}\nsvg text{font:11px system-ui,sans-serif;fill:#374151}\n</style>\n</head>\n<body>\n",
        );
        let _ = writeln!(out, "<h1>{}</h1>", escape_html(title));
        let _ = writeln!(out, "<p class=\"sub\">{}</p>", escape_html(subtitle));
        if !notes.is_empty() {
            let _ = writeln!(out, "<pre>{}</pre>", escape_html(notes.trim_matches('\n')));
        }
        legend(&mut out);
        if self.agents.is_empty() {
            out.push_str("<p>No rows to draw.</p>\n");
        }
        if self.rows_left_out > 0 {
            let _ = writeln!(
                out,
                "<p class=\"sub\">Only the first {MAX_AGENTS} agents are drawn; {} rows of later agents are left out.</p>",
                self.rows_left_out
            );
        }
        for (name, series) in &self.agents {
            if self.agents.len() > 1 {
                let _ = writeln!(out, "<h2>agent {}</h2>", escape_html(name));
            }
            if series.stride > 1 {
                let _ = writeln!(
                    out,
                    "<p class=\"sub\">{} rows drawn as {} points: each point stands for up to {} rows (the later values, the first marker, failed when any failed).</p>",
                    series.rows,
                    series.points.len(),
                    series.stride
                );
            }
            agent_svg(&mut out, &series.points, t);
        }
        out.push_str("</body>\n</html>\n");
        out
    }
}

fn legend(out: &mut String) {
    out.push_str("<div class=\"legend\">");
    let items: [(&str, &str); 10] = [
        ("debt", "research debt"),
        ("threshold", "thresholds"),
        (
            "nudge",
            "reminder fired (outlined: fired when the session ran)",
        ),
        ("cooldown", "held by cooldown"),
        ("snooze", "held by snooze"),
        ("research", "research reset"),
        ("prompt", "user prompt / reopened"),
        ("calls", "calls since research"),
        ("minutes", "minutes since research"),
        ("failure", "failed call"),
    ];
    for (key, text) in items {
        let _ = write!(
            out,
            "<span><svg width=\"14\" height=\"14\"><rect x=\"1\" y=\"1\" width=\"12\" height=\"12\" fill=\"{}\"/></svg>{}</span>",
            color(key),
            text
        );
    }
    out.push_str("</div>\n");
}

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const DEBT_H: f64 = 240.0;
const SMALL_H: f64 = 100.0;
const GAP: f64 = 28.0;
const TOP: f64 = 14.0;

/// One panel's vertical placement and scale.
struct Panel {
    top: f64,
    height: f64,
    max: f64,
}

impl Panel {
    fn y(&self, v: f64) -> f64 {
        self.top + self.height - (v / self.max).clamp(0.0, 1.0) * self.height
    }
}

fn nice_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let step = 10f64.powf(v.log10().floor());
    let n = (v / step).ceil();
    let n = if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * step
}

fn agent_svg(out: &mut String, points: &[Point], t: Thresholds) {
    let n = points.len().max(1);
    let plot_w = WIDTH - LEFT - RIGHT;
    let x = |i: usize| LEFT + (i as f64 + 0.5) * plot_w / n as f64;
    let x_end = |i: usize| LEFT + (i as f64 + 1.0) * plot_w / n as f64;
    let minutes = |p: &Point| p.quiet_ms as f64 / 60_000.0;
    let t_minutes = t.time_ms as f64 / 60_000.0;
    let max_debt = points.iter().map(|p| p.debt).max().unwrap_or(0);
    let max_calls = points.iter().map(|p| p.calls).max().unwrap_or(0);
    let max_minutes = points.iter().map(minutes).fold(0.0, f64::max);
    let debt = Panel {
        top: TOP,
        height: DEBT_H,
        max: nice_max(f64::from(max_debt.max(t.debt)) * 1.1),
    };
    let calls = Panel {
        top: TOP + DEBT_H + GAP,
        height: SMALL_H,
        max: nice_max(f64::from(max_calls.max(t.calls)) * 1.1),
    };
    let mins = Panel {
        top: calls.top + SMALL_H + GAP,
        height: SMALL_H,
        max: nice_max(max_minutes.max(t_minutes) * 1.1),
    };
    let height = mins.top + SMALL_H + 34.0;
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\">"
    );
    // Frames, axes and labels.
    for (panel, name, max_label) in [
        (&debt, "debt", debt.max),
        (&calls, "calls", calls.max),
        (&mins, "minutes", mins.max),
    ] {
        let _ = writeln!(
            out,
            "<rect x=\"{LEFT}\" y=\"{}\" width=\"{plot_w}\" height=\"{}\" fill=\"#f9fafb\" stroke=\"#d1d5db\"/>",
            panel.top, panel.height
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text><text x=\"4\" y=\"{}\">{name}</text>",
            LEFT - 4.0,
            panel.top + 10.0,
            fmt_num(max_label),
            LEFT - 4.0,
            panel.top + panel.height,
            panel.top + panel.height / 2.0
        );
    }
    // Vertical marker lines behind everything, across all three panels.
    let bottom = mins.top + SMALL_H;
    for (i, p) in points.iter().enumerate() {
        let (key, dash) = match p.mark {
            Some(Mark::Nudge) => ("nudge", ""),
            Some(Mark::Research) => ("research", " stroke-dasharray=\"4 3\""),
            Some(Mark::UserPrompt | Mark::Resume) => ("prompt", " stroke-dasharray=\"2 3\""),
            _ => continue,
        };
        let _ = writeln!(
            out,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{TOP}\" y2=\"{bottom}\" stroke=\"{1}\" stroke-width=\"1.5\"{dash} opacity=\"0.7\"/>",
            x(i),
            color(key)
        );
    }
    // Threshold lines.
    for (panel, value, label) in [
        (
            &debt,
            f64::from(t.debt),
            format!("debtThreshold {}", t.debt),
        ),
        (
            &calls,
            f64::from(t.calls),
            format!("maxToolCallsWithoutResearch {}", t.calls),
        ),
        (
            &mins,
            t_minutes,
            format!("maxMinutesWithoutResearch {}", fmt_num(t_minutes)),
        ),
    ] {
        let y = panel.y(value);
        let _ = writeln!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"8 4\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            color("threshold"),
            WIDTH - RIGHT - 4.0,
            y - 4.0,
            escape_html(&label)
        );
    }
    // The three step lines.
    for (panel, key, value) in [
        (
            &debt,
            "debt",
            &(|p: &Point| f64::from(p.debt)) as &dyn Fn(&Point) -> f64,
        ),
        (&calls, "calls", &|p: &Point| f64::from(p.calls)),
        (&mins, "minutes", &minutes),
    ] {
        let mut path = String::new();
        for (i, p) in points.iter().enumerate() {
            let y = panel.y(value(p));
            let _ = write!(
                path,
                "{}{:.1},{:.1} {:.1},{:.1}",
                if i == 0 { "" } else { " " },
                if i == 0 { LEFT } else { x(i) },
                y,
                x_end(i),
                y
            );
        }
        let width = if key == "debt" { 3 } else { 2 };
        let _ = writeln!(
            out,
            "<polyline points=\"{path}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"/>",
            color(key)
        );
    }
    // Failure ticks under the debt line, then the markers on it.
    for (i, p) in points.iter().enumerate() {
        if p.failed {
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"4\" height=\"8\" fill=\"{}\"><title>{}</title></rect>",
                x(i) - 2.0,
                debt.top + debt.height - 8.0,
                color("failure"),
                escape_html(&p.label)
            );
        }
    }
    for (i, p) in points.iter().enumerate() {
        if p.live {
            let (cx, cy) = (x(i), debt.y(f64::from(p.debt)));
            let _ = writeln!(
                out,
                "<g><title>{}</title><polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/></g>",
                escape_html(&p.label),
                cx,
                cy - 34.0,
                cx - 8.0,
                cy - 20.0,
                cx + 8.0,
                cy - 20.0,
                color("nudge")
            );
        }
        let Some(mark) = p.mark else { continue };
        let (cx, cy) = (x(i), debt.y(f64::from(p.debt)));
        let title = escape_html(&p.label);
        let shape = match mark {
            Mark::Nudge => format!(
                "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{}\" stroke=\"#ffffff\"/>",
                cx,
                cy - 16.0,
                cx - 9.0,
                cy - 2.0,
                cx + 9.0,
                cy - 2.0,
                color("nudge")
            ),
            Mark::HeldByCooldown => format!(
                "<polygon points=\"{cx:.1},{:.1} {:.1},{cy:.1} {cx:.1},{:.1} {:.1},{cy:.1}\" fill=\"{}\" stroke=\"#ffffff\"/>",
                cy - 8.0,
                cx + 8.0,
                cy + 8.0,
                cx - 8.0,
                color("cooldown")
            ),
            Mark::HeldBySnooze => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"14\" height=\"14\" fill=\"{}\" stroke=\"#ffffff\"/>",
                cx - 7.0,
                cy - 7.0,
                color("snooze")
            ),
            Mark::Snooze => format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>",
                cx - 6.0,
                cy - 6.0,
                color("snooze")
            ),
            Mark::Research => format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"8\" fill=\"{}\" stroke=\"#ffffff\"/>",
                color("research")
            ),
            Mark::UserPrompt | Mark::Resume => format!(
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{}\"/>",
                color("prompt")
            ),
        };
        let _ = writeln!(out, "<g><title>{title}</title>{shape}</g>");
    }
    // The x axis: row numbers at a readable spacing.
    let step = (n / 20).max(1);
    for i in (0..points.len()).step_by(step) {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(i),
            bottom + 14.0,
            i + 1
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">replayed rows (tool calls, prompts) in order; hover a marker for details</text>",
        LEFT + plot_w / 2.0,
        bottom + 30.0
    );
    out.push_str("</svg>\n");
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u32, mark: Option<Mark>) -> Point {
        Point {
            debt: n,
            calls: n,
            quiet_ms: 0,
            failed: n % 7 == 0,
            mark,
            live: false,
            label: format!("call {n}"),
        }
    }

    #[test]
    fn a_long_replay_is_drawn_in_bounded_points_and_agents_and_says_so() {
        let mut chart = Chart::new();
        let rows = 3 * MAX_POINTS as u32 + 5;
        for n in 0..rows {
            chart.push("a", row(n, (n == 12_001).then_some(Mark::Nudge)));
        }
        for agent in 0..MAX_AGENTS + 3 {
            chart.push(&format!("x{agent}"), row(1, None));
        }
        let series = &chart.agents[0].1;
        assert!(series.points.len() <= MAX_POINTS);
        assert_eq!(series.stride, 4);
        assert_eq!(series.rows, u64::from(rows));
        assert_eq!(
            series.points.last().unwrap().debt,
            rows - 1,
            "the later values"
        );
        assert_eq!(
            series
                .points
                .iter()
                .filter(|p| p.mark == Some(Mark::Nudge))
                .count(),
            1,
            "the marker is kept"
        );
        assert_eq!(chart.agents.len(), MAX_AGENTS);
        let t = Thresholds {
            debt: 1,
            calls: 1,
            time_ms: 1,
        };
        let page = chart.html("t", "s", "", t);
        assert!(
            page.contains(&format!("{rows} rows drawn as")),
            "the page says so"
        );
        assert!(
            page.contains(
                "Only the first 16 agents are drawn; 4 rows of later agents are left out."
            )
        );
    }

    fn point(debt: u32, mark: Option<Mark>) -> Point {
        Point {
            debt,
            calls: debt,
            quiet_ms: u64::from(debt) * 60_000,
            failed: debt % 2 == 1,
            mark,
            live: false,
            label: format!("<call> {debt}"),
        }
    }

    #[test]
    fn the_page_is_self_contained_and_draws_every_marker() {
        let mut chart = Chart::new();
        for (debt, mark) in [
            (1, None),
            (21, Some(Mark::Nudge)),
            (25, Some(Mark::HeldByCooldown)),
            (26, Some(Mark::HeldBySnooze)),
            (0, Some(Mark::Research)),
            (0, Some(Mark::UserPrompt)),
        ] {
            chart.push("a", point(debt, mark));
        }
        assert!(chart.mark_live("a", "live"));
        let t = Thresholds {
            debt: 20,
            calls: 15,
            time_ms: 15 * 60_000,
        };
        let html = chart.html("T <1>", "thresholds", "summary", t);
        expect_test::expect_file!["snapshots/chart-every-marker.html"].assert_eq(&html);
        // The screenshot test looks for every fixed color.
        for (_, c) in COLORS {
            assert!(html.contains(c), "{c}");
        }
        // No script, no external resource.
        for banned in ["<script", "http://", "https://", "src=", "@import", "url("] {
            let hits: Vec<_> = html.match_indices(banned).collect();
            // The SVG namespace is an identifier, not a fetch.
            assert!(
                hits.iter()
                    .all(|(i, _)| html[*i..].starts_with("http://www.w3.org/2000/svg")),
                "{banned}"
            );
        }
    }

    #[test]
    fn an_empty_replay_says_so() {
        let t = Thresholds {
            debt: 20,
            calls: 15,
            time_ms: 0,
        };
        expect_test::expect_file!["snapshots/chart-empty.html"]
            .assert_eq(&Chart::new().html("x", "y", "", t));
    }
}
