//! `dsh-autoresearch show --html OUT.html RUN_ID`: one run drawn as a self-contained page.
//!
//! One panel: the metric per experiment (x: the experiment's ordinal, the baseline at 0), each
//! marked by what became of it (baseline, kept, rejected, superseded, failed), with its spread
//! as an error bar and every attempt's value as a dot; the best-so-far line; the baseline's band
//! (its spread: the run's noise floor) and the target. Below it, the experiments as a table.
//!
//! Inline SVG and CSS only: no script, no font or image to fetch, no network. The colors are
//! fixed ([`COLORS`]) so a screenshot can be checked pixel by pixel.

use crate::protocol::{ExperimentRow, RunResult};
use std::fmt::Write as _;
use text::escape_html;

/// The fixed colors of the page (CSS hex). `cargo xtask chart-test` looks for them in a
/// screenshot.
pub const COLORS: [(&str, &str); 7] = [
    ("baseline", "#2563eb"),
    ("band", "#bfdbfe"),
    ("kept", "#16a34a"),
    ("rejected", "#94a3b8"),
    ("superseded", "#f59e0b"),
    ("failed", "#dc2626"),
    ("target", "#7c3aed"),
];

fn color(name: &str) -> &'static str {
    COLORS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("#000000", |(_, c)| c)
}

/// What became of an experiment, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// The baseline (ordinal 0).
    Baseline,
    /// Kept: the run branch moved to it.
    Kept,
    /// Measured and not kept.
    Rejected,
    /// Improved on the best, but a better one of its generation was kept.
    Superseded,
    /// No metric: the round failed.
    Failed,
    /// Not decided yet (a live run).
    Pending,
}

impl Fate {
    fn of(e: &ExperimentRow) -> Self {
        match (e.kind, e.decision.as_deref()) {
            ("baseline", _) => Fate::Baseline,
            _ if e.superseded_by.is_some() => Fate::Superseded,
            (_, Some("accept")) => Fate::Kept,
            (_, Some("reject")) => Fate::Rejected,
            (_, Some(_)) => Fate::Failed,
            (_, None) => Fate::Pending,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Fate::Baseline => "baseline",
            Fate::Kept => "kept",
            Fate::Rejected => "rejected",
            Fate::Superseded => "superseded",
            Fate::Failed => "failed",
            Fate::Pending => "pending",
        }
    }

    fn color(self) -> &'static str {
        match self {
            Fate::Pending => color("rejected"),
            other => color(other.name()),
        }
    }
}

/// One experiment as drawn: its summary value, its spread and its attempts' values.
#[derive(Clone, Debug, PartialEq)]
struct Sample<'a> {
    row: &'a ExperimentRow,
    fate: Fate,
    /// The value the decision used (the mean of the attempts).
    value: Option<f64>,
    /// The attempts' standard deviation (0 for one attempt).
    spread: f64,
    /// Each attempt's value.
    values: Vec<f64>,
}

impl<'a> Sample<'a> {
    fn of(row: &'a ExperimentRow) -> Self {
        Sample {
            row,
            fate: Fate::of(row),
            value: row.metric,
            spread: row.stddev().unwrap_or(0.0),
            values: row.reported_samples().to_vec(),
        }
    }
}

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 460.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 20.0;
/// Below the plot: the x labels, then the strip where failed experiments are marked.
const BOTTOM: f64 = 70.0;

/// Maps metric values and ordinals to the panel's pixels.
struct Scale {
    low: f64,
    high: f64,
    last: f64,
}

impl Scale {
    fn x(&self, ordinal: u32) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * f64::from(ordinal) / self.last.max(1.0)
    }

    fn y(&self, value: f64) -> f64 {
        let span = (self.high - self.low).max(f64::MIN_POSITIVE);
        TOP + (HEIGHT - TOP - BOTTOM) * (self.high - value) / span
    }
}

/// A number as the axis and table print it: up to 6 significant digits, no trailing zeros.
fn number(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = (6 - 1 - value.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{value:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Five round tick values spanning `low..=high`.
fn ticks(low: f64, high: f64) -> Vec<f64> {
    let span = high - low;
    if span <= 0.0 || !span.is_finite() {
        return vec![low];
    }
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let mut tick = (low / step).ceil() * step;
    let mut out = Vec::new();
    while tick <= high + step * 1e-9 {
        out.push(tick);
        tick += step;
    }
    out
}

impl RunResult {
    /// The run as one self-contained HTML page (see the module docs).
    pub fn to_html(&self) -> String {
        let samples: Vec<Sample> = self.experiments.iter().map(Sample::of).collect();
        let baseline = samples.iter().find(|s| s.fate == Fate::Baseline);
        let mut page = String::new();
        let title = format!("autoresearch run {}", self.run_id);
        let _ = write!(
            page,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{}</title>\n<style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
            escape_html(&title),
            escape_html(&title)
        );
        let _ = writeln!(
            page,
            "<p class=\"facts\">{}</p>",
            escape_html(&self.facts(baseline))
        );
        if let Some((baseline, best, divergences)) = self.holdout_summary() {
            let lines = crate::render::holdout_lines(baseline, best, &divergences);
            for line in lines {
                let _ = writeln!(page, "<p class=\"facts\">{}</p>", escape_html(&line));
            }
        }
        page.push_str(&self.panel(&samples, baseline));
        page.push_str(&legend());
        page.push_str(&table(&samples));
        page.push_str("</body></html>\n");
        page
    }

    fn facts(&self, baseline: Option<&Sample>) -> String {
        let better = if self.direction == "minimize" {
            "lower is better"
        } else {
            "higher is better"
        };
        let mut facts = vec![
            format!("status {}", self.status_text()),
            format!("metric {} ({better})", self.metric_name),
        ];
        if let Some(b) = baseline.and_then(|b| b.value.map(|v| (v, b.spread))) {
            facts.push(format!("baseline {} ± {}", number(b.0), number(b.1)));
        }
        if let Some(best) = &self.best {
            facts.push(format!(
                "best {} ({})",
                number(best.metric),
                best.experiment_id
            ));
        }
        if let Some(target) = self.target {
            facts.push(format!("target {}", number(target)));
        }
        let c = &self.counts;
        let superseded = match c.superseded {
            0 => String::new(),
            n => format!(", {n} superseded"),
        };
        facts.push(format!(
            "{} candidates: {} kept, {} rejected{superseded}, {} failed, {} policy violations",
            c.experiments_started, c.accepted, c.rejected, c.failed, c.policy_violations
        ));
        facts.join(" · ")
    }

    fn panel(&self, samples: &[Sample], baseline: Option<&Sample>) -> String {
        let mut values: Vec<f64> = samples
            .iter()
            .flat_map(|s| {
                let v = s.value.unwrap_or(f64::NAN);
                [v - s.spread, v + s.spread]
                    .into_iter()
                    .chain(s.values.iter().copied())
            })
            .filter(|v| v.is_finite())
            .collect();
        values.extend(self.target);
        let (mut low, mut high) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
                (l.min(*v), h.max(*v))
            });
        if !low.is_finite() {
            (low, high) = (0.0, 1.0);
        }
        let pad = if high > low {
            (high - low) * 0.08
        } else {
            low.abs().max(1.0) * 0.1
        };
        let scale = Scale {
            low: low - pad,
            high: high + pad,
            last: f64::from(samples.iter().map(|s| s.row.ordinal).max().unwrap_or(0)),
        };
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
             viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"metric per experiment\">"
        );
        let plot_bottom = HEIGHT - BOTTOM;
        for tick in ticks(scale.low, scale.high) {
            let y = scale.y(tick);
            let _ = writeln!(
                svg,
                "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"tick\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                WIDTH - RIGHT,
                LEFT - 8.0,
                y + 4.0,
                number(tick)
            );
        }
        if let Some(b) = baseline {
            if let Some(v) = b.value {
                let (top, bottom) = (scale.y(v + b.spread), scale.y(v - b.spread));
                let _ = writeln!(
                    svg,
                    "<rect x=\"{LEFT}\" y=\"{top:.1}\" width=\"{}\" height=\"{:.1}\" fill=\"{}\">\
                     <title>baseline {} ± {} (noise floor)</title></rect>",
                    WIDTH - LEFT - RIGHT,
                    (bottom - top).max(3.0),
                    color("band"),
                    number(v),
                    number(b.spread)
                );
            }
        }
        if let Some(target) = self.target {
            let y = scale.y(target);
            let _ = writeln!(
                svg,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{}\" \
                 stroke-width=\"3\" stroke-dasharray=\"10 6\"><title>target {}</title></line>",
                WIDTH - RIGHT,
                color("target"),
                number(target)
            );
        }
        svg.push_str(&self.best_line(samples, &scale));
        for s in samples {
            let x = scale.x(s.row.ordinal);
            let fill = s.fate.color();
            let tip = escape_html(&tooltip(s));
            match s.value {
                Some(v) => {
                    if s.spread > 0.0 {
                        let _ = writeln!(
                            svg,
                            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" \
                             stroke=\"{fill}\" stroke-width=\"3\"/>",
                            scale.y(v + s.spread),
                            scale.y(v - s.spread)
                        );
                    }
                    for attempt in s.values.iter().filter(|_| s.values.len() > 1) {
                        let _ = writeln!(
                            svg,
                            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{fill}\" \
                             opacity=\"0.6\"/>",
                            x + 9.0,
                            scale.y(*attempt)
                        );
                    }
                    let _ = writeln!(
                        svg,
                        "<circle cx=\"{x:.1}\" cy=\"{:.1}\" r=\"7\" fill=\"{fill}\">\
                         <title>{tip}</title></circle>",
                        scale.y(v)
                    );
                }
                None => {
                    let y = plot_bottom + 48.0;
                    let _ = writeln!(
                        svg,
                        "<path d=\"M{:.1} {:.1}l12 12m0 -12l-12 12\" stroke=\"{fill}\" \
                         stroke-width=\"4\"><title>{tip}</title></path>",
                        x - 6.0,
                        y - 6.0
                    );
                }
            }
            let _ = writeln!(
                svg,
                "<text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                plot_bottom + 20.0,
                s.row.ordinal
            );
        }
        let _ = writeln!(
            svg,
            "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{plot_bottom}\"/>\
             <line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{plot_bottom}\" y2=\"{plot_bottom}\"/>\
             <text class=\"label\" x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" \
             text-anchor=\"middle\">{}</text>\
             <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">experiment \
             (0 = baseline; failed ones marked below)</text>",
            WIDTH - RIGHT,
            (TOP + plot_bottom) / 2.0,
            (TOP + plot_bottom) / 2.0,
            escape_html(&self.metric_name),
            (LEFT + WIDTH - RIGHT) / 2.0,
            plot_bottom + 34.0
        );
        svg.push_str("</svg>\n");
        svg
    }

    /// The best value kept so far, as a step line from the baseline to the last experiment.
    fn best_line(&self, samples: &[Sample], scale: &Scale) -> String {
        let minimize = self.direction == "minimize";
        let mut best: Option<f64> = None;
        let mut points = Vec::new();
        for s in samples {
            let x = scale.x(s.row.ordinal);
            if let (Fate::Baseline | Fate::Kept, Some(v)) = (s.fate, s.value) {
                if let Some(previous) = best {
                    points.push((x, previous));
                }
                best = Some(match best {
                    Some(b) if (minimize && b <= v) || (!minimize && b >= v) => b,
                    _ => v,
                });
            }
            if let Some(b) = best {
                points.push((x, b));
            }
        }
        if points.len() < 2 {
            return String::new();
        }
        let path: Vec<String> = points
            .iter()
            .map(|(x, v)| format!("{x:.1},{:.1}", scale.y(*v)))
            .collect();
        format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\">\
             <title>best so far</title></polyline>\n",
            path.join(" "),
            color("kept")
        )
    }
}

fn tooltip(s: &Sample) -> String {
    let mut tip = format!(
        "{} {}: {}",
        s.row.experiment_id,
        s.row.ordinal,
        s.fate.name()
    );
    if let Some(v) = s.value {
        let _ = write!(tip, ", {}", number(v));
        if s.values.len() > 1 {
            let _ = write!(tip, " ± {} (n = {})", number(s.spread), s.values.len());
        }
    }
    if let Some(code) = &s.row.failure_code {
        let _ = write!(tip, ", {code}");
    }
    if let Some(h) = &s.row.hypothesis {
        let _ = write!(tip, "\n{h}");
    }
    tip
}

fn legend() -> String {
    let mut out = String::from("<p class=\"legend\">");
    for fate in [
        Fate::Baseline,
        Fate::Kept,
        Fate::Rejected,
        Fate::Superseded,
        Fate::Failed,
    ] {
        let _ = write!(
            out,
            "<span><i style=\"background:{}\"></i>{}</span>",
            fate.color(),
            fate.name()
        );
    }
    let _ = writeln!(
        out,
        "<span><i style=\"background:{}\"></i>baseline spread</span>\
         <span><i style=\"background:{}\"></i>target</span></p>",
        color("band"),
        color("target")
    );
    out
}

fn table(samples: &[Sample]) -> String {
    // The holdout column only for a run with a holdout.
    let holdout = samples.iter().any(|s| s.row.holdout.is_some());
    let mut out = format!(
        "<table><thead><tr><th>#</th><th>experiment</th><th>fate</th><th>metric</th>\
         <th>spread</th><th>n</th>{}<th>hypothesis or failure</th></tr></thead><tbody>\n",
        if holdout { "<th>holdout</th>" } else { "" }
    );
    for s in samples {
        let note = s
            .row
            .failure_code
            .as_deref()
            .or(s.row.hypothesis.as_deref())
            .unwrap_or("");
        let note = match s.row.selection_metric() {
            Some(m) => format!(
                "confirmed on fresh samples (screened at {}) {note}",
                number(m)
            ),
            None => note.to_owned(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td></tr>",
            s.row.ordinal,
            escape_html(&s.row.experiment_id),
            s.fate.name(),
            s.value.map(number).unwrap_or_default(),
            if s.values.len() > 1 {
                number(s.spread)
            } else {
                String::new()
            },
            s.values.len(),
            match (holdout, s.row.holdout) {
                (false, _) => String::new(),
                (true, h) => format!("<td>{}</td>", h.map(number).unwrap_or_default()),
            },
            escape_html(&note)
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#0f172a;\
background:#fff}h1{font-size:18px;margin:0 0 4px}.facts{margin:0 0 12px;color:#334155}\
.grid{stroke:#e2e8f0;stroke-width:1}.axis{stroke:#334155;stroke-width:1.5}\
.tick{font-size:12px;fill:#475569}.label{font-size:13px;fill:#0f172a}\
.legend span{margin-right:16px;white-space:nowrap}.legend i{display:inline-block;width:12px;\
height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}\
table{border-collapse:collapse;margin-top:12px}td,th{border-bottom:1px solid #e2e8f0;\
padding:3px 10px;text-align:left;font-size:13px}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_span_the_range() {
        assert_eq!(
            ticks(0.0, 1.0),
            [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(ticks(12.0, 13.0).len(), 6);
        assert_eq!(ticks(5.0, 5.0), [5.0]);
    }

    #[test]
    fn numbers_keep_six_significant_digits() {
        let shown: Vec<String> = [0.0, 1.0, 0.123456789, 1234.5678, 1e-7, -2.5]
            .into_iter()
            .map(number)
            .collect();
        assert_eq!(
            shown,
            ["0", "1", "0.123457", "1234.57", "0.0000001", "-2.5"]
        );
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape_html("<a href=\"x\">&\u{1b}"),
            "&lt;a href=&quot;x&quot;&gt;&amp; "
        );
    }
}
