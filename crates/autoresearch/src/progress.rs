//! The run's human progress lines (`takeProgress`), derived from the effects a run hands out and
//! from its experiments' states as they change.

use crate::escape::escape_controls;
use crate::jcs;
use crate::{Effect, RunResult};

/// Human progress lines, derived from the experiments' states as they change.
#[derive(Default)]
pub struct Progress {
    lines: Vec<String>,
    seen: Vec<(String, String)>,
}

impl Progress {
    /// Notes what an effect starts; a `report` ends the run's lines.
    pub fn on_effect(&mut self, effect: &Effect, run_id: &str) {
        let short = |id: &str| {
            id.strip_prefix(run_id)
                .map(|s| s.trim_start_matches('-').to_owned())
                .unwrap_or_else(|| id.to_owned())
        };
        match effect {
            Effect::RunEvaluator {
                attempt_id,
                timeout_ms,
                ..
            } => self.lines.push(format!(
                "{}: evaluator started (timeout {} ms)",
                short(attempt_id),
                timeout_ms
            )),
            Effect::RunProposer { timeout_ms, .. } => self
                .lines
                .push(format!("proposer started (timeout {timeout_ms} ms)")),
            Effect::TerminateProcessGroup { attempt_id, .. } => self.lines.push(format!(
                "{}: making sure the interrupted evaluator's process group is gone",
                short(attempt_id)
            )),
            Effect::Report(result) => {
                self.observe(result);
                let blocker = result
                    .blocker
                    .as_ref()
                    .map(|b| format!(" ({}: {})", b.code, text::clip_within(&b.message, 200)))
                    .unwrap_or_default();
                self.lines.push(format!(
                    "run {} ended: {}{blocker}",
                    result.run_id,
                    result.status_text()
                ));
            }
            _ => {}
        }
    }

    /// Notes each experiment whose state changed since the last look.
    pub fn observe(&mut self, result: &RunResult) {
        let name = &result.metric_name;
        let best = result.best.as_ref().map(|b| jcs::number(b.metric));
        for e in &result.experiments {
            let known = self.seen.iter_mut().find(|(id, _)| *id == e.experiment_id);
            match known {
                Some((_, state)) if *state == e.state => continue,
                Some((_, state)) => *state = e.state.clone(),
                None => self.seen.push((e.experiment_id.clone(), e.state.clone())),
            }
            let who = if e.kind == "baseline" {
                "baseline".to_owned()
            } else {
                format!("candidate {}", e.ordinal)
            };
            let metric = e.metric.map(jcs::number).unwrap_or_default();
            let line = match (e.state.as_str(), e.kind) {
                ("proposing", _) => format!("{who}: proposing"),
                ("prepared", _) => format!("{who}: proposal validated, committing"),
                ("accepted", "baseline") => format!("{who}: {name} = {metric}"),
                ("accepted", _) => format!("{who}: accepted, {name} = {metric} (new best)"),
                ("rejected", _) => format!(
                    "{who}: rejected, {name} = {metric} (best stays {})",
                    best.clone().unwrap_or_default()
                ),
                ("superseded", _) => format!(
                    "{who}: superseded, {name} = {metric} (a better one of its generation was kept)"
                ),
                ("failed" | "policy-violation", _) => format!(
                    "{who}: {} ({}: {})",
                    e.state,
                    e.failure_code.as_deref().unwrap_or("-"),
                    text::clip_within(e.failure_message.as_deref().unwrap_or(""), 200)
                ),
                ("cancelled", _) => format!("{who}: cancelled"),
                _ => continue,
            };
            self.lines.push(line);
        }
    }

    /// The lines since the last call, joined by `\n` (control characters escaped), if any.
    pub fn take(&mut self) -> Option<String> {
        if self.lines.is_empty() {
            return None;
        }
        Some(escape_controls(&std::mem::take(&mut self.lines).join("\n")))
    }
}
