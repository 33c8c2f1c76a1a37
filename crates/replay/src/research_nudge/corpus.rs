//! research-nudge over a corpus ([`crate::corpus`]): each run through a fresh agent state, every
//! call observed as the plugin observes it, a user prompt resetting it.

use crate::corpus::{Call, Event, Guard, Replayed, Run};
use crate::research_nudge::call::{Ended, observe_call};
use crate::research_nudge::events::Nudge;
use policy::{AgentState, Observation, ToolClass};

impl Guard for Nudge {
    const DENIES: bool = false;

    fn replay(&mut self, run: &Run) -> Replayed {
        let plugin = &mut self.plugin;
        let mut out = Replayed::default();
        if !plugin.enabled() {
            return out;
        }
        let mut state = AgentState::new(0);
        let mut at = 0;
        let mut index = 0;
        for event in run.events() {
            match event {
                Event::UserPrompt(_) => {
                    let _ = plugin.policy.user_prompt(&mut state, at);
                }
                Event::Call(call) => {
                    at = at.max(call.at_ms);
                    let ended = Ended {
                        ok: call.outcome.ok,
                        exit_code: call.outcome.exit_code,
                        killed: call.outcome.killed,
                        timed_out: call.outcome.timed_out,
                        unknown_tool: call.outcome.unknown_tool,
                    };
                    let (observation, _) = observe_call(
                        plugin,
                        &mut state,
                        at,
                        &call.name,
                        ended,
                        &call.text,
                        &call.args_json,
                    );
                    if let Observation::Nudge(_) = observation {
                        out.fires.push(index);
                        out.injected_chars +=
                            plugin.policy.reminder_text(&state).chars().count() as u64;
                    }
                    index += 1;
                }
                Event::Step | Event::AssistantText(_) => {}
            }
        }
        out
    }

    fn is_research(&self, call: &Call) -> bool {
        self.plugin.policy.tool(&call.name).class == ToolClass::Research
    }
}

#[cfg(test)]
mod tests {
    use crate::corpus::tests::replay_fixture;
    use crate::research_nudge::CorpusReplay;

    #[test]
    fn the_fixture_corpus_report() {
        let mut replay = CorpusReplay::with_row(Default::default(), None);
        replay_fixture(&mut replay);
        expect_test::expect_file!["snapshots/corpus-report.md"].assert_eq(&replay.report(false));
    }
}
