//! The bounded JSON handoff a proposal round gets: never longer than `maxHandoffChars`. The
//! objective, constraints and globs always travel whole; the history is what shortens. A spec
//! whose fixed part alone cannot fit is refused before the run starts ([`handoff_problem`]).

use super::settings::Settings;
use crate::spec::{RunPolicy, SpecError};
use serde_json::{Value, json};

/// What a handoff says about where the run stands (all but the policy and the history).
pub(super) struct Standing<'a> {
    pub(super) run_id: &'a str,
    pub(super) experiment_id: &'a str,
    pub(super) ordinal: u32,
    pub(super) best: Option<(f64, &'a str)>,
    pub(super) baseline_metric: Option<f64>,
    pub(super) remaining: u32,
    /// Under `parallelism`: this candidate's slot and how many its generation has.
    pub(super) generation: Option<(u32, usize)>,
}

/// The handoff's JSON text.
pub(super) fn render(policy: &RunPolicy, at: &Standing<'_>, history: Vec<Value>) -> String {
    let mut handoff = json!({
        "task": "Edit only files matching mutable_globs to improve the metric, then report {hypothesis, summary}.",
        "run_id": at.run_id,
        "experiment_id": at.experiment_id,
        "ordinal": at.ordinal,
        "objective": policy.objective,
        "constraints": policy.constraints,
        "mutable_globs": policy.surface.globs(),
        "metric_name": policy.metric_name,
        "metric_direction": policy.direction.as_str(),
        "target": policy.target,
        "best": at.best.map(|(metric, commit)| json!({"metric": metric, "commit": commit})),
        "baseline_metric": at.baseline_metric,
        "remaining_experiments": at.remaining,
        "history": history,
    });
    if let Some((slot, candidates)) = at.generation {
        handoff["generation"] = json!({
            "slot": slot,
            "candidates": candidates,
            "note": "other proposers start from the same best at the same time: try an idea of your own; the best of the generation is kept",
        });
    }
    handoff.to_string()
}

/// A spec for one reader ([`crate::spec::parse_for`]) whose fresh run's handoff also fits
/// `maxHandoffChars` ([`handoff_problem`]).
pub fn parse_spec(
    text: &str,
    settings: &Settings,
    headless: bool,
) -> Result<crate::Request, Vec<SpecError>> {
    let request = crate::spec::parse_for(text, &settings.limits, headless)?;
    if let crate::Request::Fresh { policy, .. } = &request
        && let Some(problem) = handoff_problem(policy, settings)
    {
        return Err(vec![problem]);
    }
    Ok(request)
}

/// Why `policy` cannot run under `settings`: the handoff without any history, with the longest
/// ids, metrics and counts the run can reach, is longer than `max_handoff_chars`. The error names
/// the largest of `objective`, `constraints` and `mutable_globs`.
pub fn handoff_problem(policy: &RunPolicy, settings: &Settings) -> Option<SpecError> {
    // The longest a JSON number of f64 gets; run ids are UUIDs, commits 40 hex digits.
    const WIDEST_METRIC: f64 = -2.225_073_858_507_201_4e-308;
    let run_id = "00000000-0000-0000-0000-000000000000";
    let last = policy.max_experiments;
    let experiment_id = format!("{run_id}-candidate-{last}");
    let commit = "0".repeat(40);
    let at = Standing {
        run_id,
        experiment_id: &experiment_id,
        ordinal: last,
        best: Some((WIDEST_METRIC, &commit)),
        baseline_metric: Some(WIDEST_METRIC),
        remaining: last,
        generation: (policy.parallelism > 1)
            .then(|| (policy.parallelism - 1, policy.parallelism as usize)),
    };
    let chars = render(policy, &at, Vec::new()).chars().count();
    let max = settings.max_handoff_chars;
    if chars <= max {
        return None;
    }
    let parts = [
        ("objective", json!(policy.objective)),
        ("constraints", json!(policy.constraints)),
        ("mutable_globs", json!(policy.surface.globs())),
    ];
    let (field, value) = parts
        .iter()
        .max_by_key(|(_, v)| v.to_string().chars().count())
        .expect("three parts");
    Some(SpecError {
        field: (*field).to_owned(),
        rule: format!(
            "makes the proposal handoff {chars} characters before any history, and maxHandoffChars allows {max} (shorten objective, constraints or mutable_globs, or raise maxHandoffChars)"
        ),
        value: text::clip_within(&value.to_string(), 60),
        did_you_mean: None,
    })
}
