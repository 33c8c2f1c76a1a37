//! The bounded JSON handoff a proposal round gets.

use super::*;

impl Run {
    /// The proposer's handoff: objective, surface, metric, best, budget and recent history
    /// (hypotheses, outcomes, failure details), cut to fit [`MAX_HANDOFF_CHARS`].
    pub(super) fn handoff(&self, exp: usize) -> String {
        let p = self.p();
        let e = &self.experiments[exp];
        let mut window = HANDOFF_HISTORY;
        loop {
            let finished: Vec<&Experiment> = self
                .experiments
                .iter()
                .filter(|x| x.state.is_final())
                .collect();
            let history: Vec<Value> = finished[finished.len().saturating_sub(window)..]
                .iter()
                .map(|x| {
                    json!({
                        "ordinal": x.ordinal,
                        "state": x.state.as_str(),
                        "metric": x.metric,
                        "decision": x.decision,
                        "failure_code": x.failure_code,
                        "failure_message": x.failure_message.as_deref().map(|m| metric::clip(m, 300)),
                        "hypothesis": x.report.as_ref().map(|r| metric::clip(&r.hypothesis, 300)),
                        "changed_paths": x.changed_paths.iter().take(20).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let value = json!({
                "task": "Edit only files matching mutable_globs to improve the metric, then report {hypothesis, summary}.",
                "run_id": self.run_id,
                "experiment_id": e.id,
                "ordinal": e.ordinal,
                "objective": metric::clip(&p.objective, 4_000),
                "constraints": p.constraints,
                "mutable_globs": p.surface.globs(),
                "metric_name": p.metric_name,
                "metric_direction": p.direction.as_str(),
                "target": p.target,
                "best": self.best.as_ref().map(|b| json!({"metric": b.metric, "commit": b.commit})),
                "baseline_metric": self.baseline.as_ref().map(|b| b.metric),
                "remaining_experiments": p.max_experiments.saturating_sub(self.candidates_started()),
                "history": history,
            });
            let text = value.to_string();
            if text.chars().count() <= MAX_HANDOFF_CHARS || window == 0 {
                return text;
            }
            window /= 2;
        }
    }
}
