//! pain-point-check over a corpus ([`crate::corpus`]): each run through a fresh gate. A call the
//! gate would deny counts as its denial (the recorded agent ran it anyway, so the calls after it
//! stay as recorded); the check block rides the next step.

use super::Check;
use crate::corpus::{Call, Event, Guard, Replayed, Run};
use gate::{
    AgentGate, Decision, FailureKeys, Observation, Outcome, Shot, canonical_args_hash_str,
    failure_keys,
};

impl Guard for Check {
    const DENIES: bool = true;

    fn replay(&mut self, run: &Run) -> Replayed {
        let s = &self.settings;
        let mut gate = AgentGate::new();
        let mut out = Replayed::default();
        let mut index = 0;
        for event in run.events() {
            match event {
                Event::Step => {
                    if let Some(notice) = gate.pre_step(s) {
                        out.injected_chars += notice.text.chars().count() as u64;
                    }
                }
                Event::UserPrompt(text) => {
                    gate.on_user_prompt(text);
                }
                Event::AssistantText(text) => {
                    let _ = gate.on_assistant_text(s, text);
                }
                Event::Call(call) => {
                    let args = canonical_args_hash_str(&call.args_json);
                    let (outcome, failure) = match gate.pre_execute(s, call.name.as_str(), args) {
                        Decision::Deny { reason, .. } => {
                            out.denials += 1;
                            out.injected_chars += reason.chars().count() as u64;
                            (Outcome::error(), FailureKeys::default())
                        }
                        Decision::Allow => {
                            let (head, tail) = fingerprint::Failure::windows(&call.text);
                            let failure = failure_keys(&call.name, &call.outcome, head, tail);
                            (call.outcome, failure)
                        }
                    };
                    let shot = Shot::from_json(call.name.as_str(), &call.args_json);
                    if let Observation::Armed(_) =
                        gate.on_result(s, call.name.as_str(), shot, outcome, failure)
                    {
                        out.fires.push(index);
                    }
                    index += 1;
                }
            }
        }
        out
    }

    fn is_research(&self, call: &Call) -> bool {
        self.research.tool(&call.name).class == policy::ToolClass::Research
    }
}

#[cfg(test)]
mod tests {
    use crate::corpus::tests::replay_fixture;
    use crate::pain_point_check::CorpusReplay;
    use gate::{Counting, Settings};

    fn report(settings: Settings, json: bool) -> String {
        let mut replay = CorpusReplay::with_settings(settings, None);
        replay_fixture(&mut replay);
        replay.report(json)
    }

    #[test]
    fn the_fixture_corpus_report() {
        expect_test::expect_file!["snapshots/corpus-report.md"]
            .assert_eq(&report(Settings::default(), false));
        expect_test::expect_file!["snapshots/corpus-report-any-failure.md"].assert_eq(&report(
            Settings::default().with_counting(Counting::AnyFailure),
            false,
        ));
        expect_test::expect_file!["snapshots/corpus-report-same-problem.md"].assert_eq(&report(
            Settings::default().with_counting(Counting::SameProblem),
            false,
        ));
        expect_test::expect_file!["snapshots/corpus-report.json"]
            .assert_eq(&report(Settings::default(), true));
    }
}
