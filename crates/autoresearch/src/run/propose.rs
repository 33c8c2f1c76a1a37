//! A proposal: the proposer's report, the candidate's changes checked against the mutable
//! surface and the evaluator's inputs, and the repository's git config checked for programs git
//! would run.

use super::bus::{Await, Then};
use super::handoff::{Standing, render};
use super::ledger::ExpState;
use super::ledger::Experiment;
use super::{HANDOFF_HISTORY, Run, STDERR_EXCERPT_CHARS, anomaly_evidence};
use crate::failure::Failure;
use crate::protocol::{Effect, InputPath, ProposalReport, WorktreeFacts};
use crate::state::RunState;
use crate::surface::{self, CandidateCheck};
use crate::{git_config, metric, sql};
use serde_json::{Value, json};

impl Run {
    pub(super) fn on_proposal(
        &mut self,
        exp: usize,
        result: Result<ProposalReport, (Failure, String)>,
        quiescent: bool,
    ) {
        if !quiescent {
            return self.block(
                Failure::NotQuiescent,
                "the proposer's process group may still be running",
                vec![],
                false,
            );
        }
        if self.ending.cancel.is_some() {
            return self.do_cancel();
        }
        let result = result.and_then(|report| {
            match metric::report_too_long(&report, self.settings.max_handoff_chars) {
                Some(problem) => Err((Failure::ProposerReport, problem)),
                None => Ok(report),
            }
        });
        match result {
            Ok(report) => {
                self.ledger.experiments[exp].report = Some(report);
                let worktree = self.worktree_of(exp);
                self.emit(
                    |id| Effect::ListChanges { id, worktree },
                    Await::Changes { exp },
                );
            }
            Err((code, message)) => self.fail_round(exp, ExpState::Failed, code, message, vec![]),
        }
    }

    /// Refuses (before anything durable) or blocks when the repository's git config defines a
    /// program git could run for us; true when it did.
    pub(super) fn config_unsafe(&mut self, entries: &[crate::ConfigEntry], durable: bool) -> bool {
        let found = git_config::unsafe_entries(entries, &self.p().allowlists.git_config);
        if found.is_empty() {
            return false;
        }
        let message = "the repository's git config defines programs git would run for the run \
                       (name each key in exceptional_allowlists.gitConfig to allow it)";
        if durable {
            self.block(Failure::GitConfigUnsafe, message, found, true);
        } else {
            self.refuse(Failure::GitConfigUnsafe, message, found);
        }
        true
    }

    pub(super) fn on_changes(&mut self, exp: usize, porcelain: &str, worktree: WorktreeFacts) {
        if self.config_unsafe(&worktree.git_config, true) {
            return;
        }
        if !worktree.anomalies.is_empty() {
            self.ledger.experiments[exp].changed_paths =
                worktree.anomalies.iter().map(|a| a.path.clone()).collect();
            return self.fail_round(
                exp,
                ExpState::PolicyViolation,
                Failure::PolicyViolation,
                text::clip_within(
                    &format!(
                        "{} path(s) git status cannot show are not allowed ({}); the worktree \
                         was restored",
                        worktree.anomalies.len(),
                        anomaly_evidence(&worktree.anomalies).join("; ")
                    ),
                    STDERR_EXCERPT_CHARS,
                ),
                anomaly_evidence(&worktree.anomalies),
            );
        }
        let changes = match surface::parse_status_z(porcelain) {
            Ok(c) => c,
            Err(e) => {
                return self.block(
                    Failure::GitOutput,
                    "git status output could not be parsed",
                    vec![e],
                    true,
                );
            }
        };
        let p = self.p();
        let protected: Vec<InputPath> = self.ledger.inputs.clone();
        match surface::check_candidate(&changes, &p.surface, &protected, &p.allowlists) {
            CandidateCheck::Empty => self.fail_round(
                exp,
                ExpState::Failed,
                Failure::CandidateEmpty,
                "the proposal changed no tracked or untracked path".into(),
                vec![],
            ),
            CandidateCheck::Violation(v) => {
                let evidence: Vec<String> = v
                    .iter()
                    .map(|v| format!("{}: {}", v.reason, v.path))
                    .collect();
                self.ledger.experiments[exp].changed_paths = changes.changed.clone();
                self.fail_round(
                    exp,
                    ExpState::PolicyViolation,
                    Failure::PolicyViolation,
                    format!("{} changed path(s) are not allowed", v.len()),
                    evidence,
                )
            }
            CandidateCheck::Valid(paths) => {
                let e = &mut self.ledger.experiments[exp];
                e.changed_paths = paths;
                e.state = ExpState::Prepared;
                let report = e.report.clone().unwrap_or(ProposalReport {
                    hypothesis: String::new(),
                    summary: String::new(),
                });
                let mut sts = vec![
                    sql::SetExperimentProposal {
                        hypothesis: report.hypothesis.into(),
                        summary: report.summary.into(),
                        changed_paths_json: json!(e.changed_paths).to_string().into(),
                        now: self.now.into(),
                        experiment_id: e.id.clone().into(),
                    }
                    .into(),
                ];
                let cas = match self.step_state(RunState::CandidatePrepared) {
                    Some(st) => {
                        sts.push(st);
                        vec![1]
                    }
                    None => vec![],
                };
                self.write(sts, cas, Then::Commit { exp });
            }
        }
    }

    /// The proposer's handoff: objective, surface, metric, best, budget and recent history
    /// (hypotheses, outcomes, failure details), the history halved until the whole fits
    /// `max_handoff_chars`; `None` when even no history does not fit (a run resumed under a
    /// smaller limit than it started with).
    pub(super) fn handoff(&self, exp: usize) -> Option<String> {
        let p = self.p();
        let e = &self.ledger.experiments[exp];
        let at = Standing {
            run_id: &self.place.run_id,
            experiment_id: &e.id,
            ordinal: e.ordinal,
            best: self
                .ledger
                .best
                .as_ref()
                .map(|b| (b.metric, b.commit.as_str())),
            baseline_metric: self.ledger.baseline.as_ref().map(|b| b.metric),
            remaining: p.max_experiments.saturating_sub(self.candidates_started()),
            generation: self
                .parallel()
                .then_some((e.slot, self.generation.members.len())),
        };
        let finished: Vec<&Experiment> = self
            .ledger
            .experiments
            .iter()
            .filter(|x| x.state.is_final())
            .collect();
        let mut window = HANDOFF_HISTORY;
        loop {
            let history: Vec<Value> = finished[finished.len().saturating_sub(window)..]
                .iter()
                .map(|x| {
                    json!({
                        "ordinal": x.ordinal,
                        "state": if x.superseded_by.is_some() { "superseded" } else { x.state.as_str() },
                        "metric": x.metric,
                        "decision": x.decision,
                        "failure_code": x.failure_code,
                        "failure_message": x.failure_message.as_deref().map(|m| text::clip_within(m, 300)),
                        "hypothesis": x.report.as_ref().map(|r| text::clip_within(&r.hypothesis, 300)),
                        "changed_paths": x.changed_paths.iter().take(20).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let text = render(p, &at, history);
            if text.chars().count() <= self.settings.max_handoff_chars {
                return Some(text);
            }
            if window == 0 {
                return None;
            }
            window /= 2;
        }
    }
}
