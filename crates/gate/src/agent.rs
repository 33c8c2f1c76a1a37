//! The per-agent state machine: [`AgentGate`], the rules of the crate docs applied to one
//! agent's facts.

use crate::answers::{MarkerSet, is_han_or_kana, missing_answers};
use crate::args::{ArgsHash, CallKey};
use crate::counting::Counts;
use crate::experiment::{Deferred, Shot};
use crate::settings::{LanguageChoice, OTHER_HARNESS_INVESTIGATION, Settings, ToolPattern};
use crate::text;
use crate::tool::ToolFacts;
use crate::{
    ASK_USER_TOOL, CODE_MODE_TOOL, CODE_ROOTS, Decision, DenyKind, FailureKeys, IgnoreReason,
    Input, Language, LiftOutcome, Notice, NoticeKind, Observation, Reaction, Site, Status, Trigger,
};
use outcome::Outcome;
use std::cell::LazyCell;

/// A failed call's result waiting for its text ([`AgentGate::on_result_or_need_text`]): what
/// [`AgentGate::on_failure_text`] counts it with. Constant-size; no argument or output text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeedText {
    site: Site,
    shot: Shot,
    outcome: Outcome,
}

impl NeedText {
    /// How the failed call ended.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }
}

/// A pending episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    trigger: Trigger,
    /// The experiment whose result armed the gate.
    arming: CallKey,
    check_shown: bool,
    denials: u32,
    /// Unanswered markers as of the last reply (all three before any reply).
    missing: MarkerSet,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Phase {
    #[default]
    Idle,
    Pending(Pending),
    /// After a lift. `refused` once the arming call was denied.
    Probation {
        arming: CallKey,
        refused: bool,
    },
}

/// The gate state of one agent. Small and `Copy`: its size never depends on the events seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentGate {
    counts: Counts,
    phase: Phase,
    /// The last user prompt contained a Han or kana character (`language: auto`).
    prompt_in_cjk: bool,
    /// Root keys of the Code Mode programs with a failed nested call whose own result has not
    /// come yet (0: a free slot), oldest overwritten first.
    failed_programs: [u64; CODE_ROOTS],
    next_program: usize,
}

impl AgentGate {
    /// A fresh agent: nothing counted, gate idle, English under `language: auto`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where the gate stands.
    pub fn status(&self) -> Status {
        match self.phase {
            Phase::Idle => Status::Idle,
            Phase::Pending(_) => Status::Pending,
            Phase::Probation { .. } => Status::Probation,
        }
    }

    /// Whether the gate is pending (the driver may skip reply parsing otherwise).
    pub fn is_pending(&self) -> bool {
        matches!(self.phase, Phase::Pending(_))
    }

    /// Whether [`pre_execute`](Self::pre_execute) can deny now: an idle gate allows every call
    /// without reading it, so a driver may skip the call (and its arguments' encoding) then.
    pub fn may_deny(&self) -> bool {
        !matches!(self.phase, Phase::Idle)
    }

    /// Failed experiments counted toward `failureThreshold` now (see "Counting" in the crate
    /// docs).
    pub fn failures(&self) -> u32 {
        self.counts.now.failures
    }

    /// Repeats counted toward `repeatThreshold` now (0 after a reset; see "Counting" in the
    /// crate docs).
    pub fn run_length(&self) -> u32 {
        self.counts.now.repeats
    }

    /// Refusals in the current pending episode (0 when not pending).
    pub fn denials(&self) -> u32 {
        match self.phase {
            Phase::Pending(p) => p.denials,
            _ => 0,
        }
    }

    /// The markers still unanswered, when pending.
    pub fn missing(&self) -> Option<MarkerSet> {
        match self.phase {
            Phase::Pending(p) => Some(p.missing),
            _ => None,
        }
    }

    /// The language of this agent's texts under `settings`.
    pub fn language(&self, settings: &Settings) -> Language {
        match settings.language() {
            LanguageChoice::Zh => Language::Zh,
            LanguageChoice::En => Language::En,
            LanguageChoice::Auto if self.prompt_in_cjk => Language::Zh,
            LanguageChoice::Auto => Language::En,
        }
    }

    /// Decides whether a call may run. Call it for every call about to run, Code Mode
    /// sub-dispatches included.
    pub fn pre_execute<T: ToolFacts + ?Sized>(
        &mut self,
        settings: &Settings,
        tool: &T,
        args: ArgsHash,
    ) -> Decision {
        if !settings.enabled() {
            return Decision::Allow;
        }
        let name = tool.name();
        let lang = self.language(settings);
        match &mut self.phase {
            Phase::Idle => Decision::Allow,
            Phase::Pending(pending) => {
                if name == CODE_MODE_TOOL || tool.is_allowlisted(settings) {
                    return Decision::Allow;
                }
                pending.denials = pending.denials.saturating_add(1);
                Decision::Deny {
                    kind: DenyKind::Pending,
                    reason: text::pending_denial(
                        lang,
                        name,
                        pending.missing,
                        &shown_tools(settings),
                    ),
                }
            }
            Phase::Probation { arming, refused } => {
                if CallKey::new(name, args) != *arming {
                    Decision::Allow
                } else if !*refused {
                    *refused = true;
                    Decision::Deny {
                        kind: DenyKind::SameShot,
                        reason: text::same_shot_denial(lang, name),
                    }
                } else {
                    // The model insists after its one denial: let it run.
                    self.phase = Phase::Idle;
                    Decision::Allow
                }
            }
        }
    }

    /// Whether a result of `tool` can change any gate under `settings`: not for an allowlisted
    /// tool other than the ask-user tool and the Code Mode transport (a program's own failure may
    /// count), whose results [`on_result`](Self::on_result) ignores or passes in every phase. A
    /// driver need not report those results at all, except a Code Mode program's nested calls
    /// ([`Site::nested`]): a failed one keeps its program's failure from counting twice.
    pub fn reads_results_of<T: ToolFacts + ?Sized>(settings: &Settings, tool: &T) -> bool {
        let name = tool.name();
        settings.enabled()
            && (name == ASK_USER_TOOL || name == CODE_MODE_TOOL || !tool.is_allowlisted(settings))
    }

    /// Records a finished native call: [`on_result_at`](Self::on_result_at) at
    /// [`Site::DIRECT`].
    pub fn on_result<T: ToolFacts + ?Sized>(
        &mut self,
        settings: &Settings,
        tool: &T,
        shot: impl Deferred<Shot>,
        outcome: Outcome,
        failure: impl Deferred<FailureKeys>,
    ) -> Observation {
        self.on_result_at(settings, tool, Site::DIRECT, shot, outcome, failure)
    }

    /// Records a finished call (see "Counting" and "Code Mode" in the crate docs). Call it for
    /// every call that went through [`pre_execute`](Self::pre_execute), denied ones included,
    /// and for every result of a call DSH rejected before it (`UNKNOWN_TOOL`). `site` says where
    /// the call sits in Code Mode. `failure` is the fingerprint of a failed call's text
    /// ([`crate::failure_keys`]). Either may be given as a closure ([`Deferred`]), called
    /// only when the result is counted (the shot also when the result may be this gate's own
    /// denial).
    pub fn on_result_at<T: ToolFacts + ?Sized>(
        &mut self,
        settings: &Settings,
        tool: &T,
        site: Site,
        shot: impl Deferred<Shot>,
        outcome: Outcome,
        failure: impl Deferred<FailureKeys>,
    ) -> Observation {
        if !settings.enabled() {
            return Observation::Ignored(IgnoreReason::Disabled);
        }
        let name = tool.name();
        // A program's own result comes after all of its nested ones.
        let program = !site.nested && names::is_code_mode_tool(name);
        let nested_failed = if site.nested {
            if outcome.failed() {
                self.remember_failed_program(site.root);
            }
            false
        } else {
            program && self.take_failed_program(site.root)
        };
        // Made only for a result that gets past the early outs below (most do not need it).
        let shot = LazyCell::new(|| shot.get());
        if let Phase::Probation {
            arming,
            refused: true,
        } = self.phase
        {
            if outcome.failed() && shot.call == arming {
                return Observation::Ignored(IgnoreReason::OwnDenial);
            }
        }
        if outcome.cancelled {
            return Observation::Ignored(IgnoreReason::Cancelled);
        }
        if outcome.unknown_tool {
            return Observation::Ignored(IgnoreReason::UnknownTool);
        }
        if name == ASK_USER_TOOL && !outcome.failed() {
            self.reset();
            return Observation::HumanAnswered;
        }
        if self.is_pending() {
            return Observation::Ignored(IgnoreReason::WhilePending);
        }
        // A program counts only when it failed on its own (no nested call of it failed).
        let own_program_failure = program && outcome.failed() && !nested_failed;
        if (program && !own_program_failure) || (!program && tool.is_allowlisted(settings)) {
            return Observation::Transparent;
        }
        let counting = settings.counting();
        if shot.waits && counting.per_problem() {
            return Observation::Waited;
        }
        let failed = outcome.failed();
        let key = shot.call;
        let counted = self
            .counts
            .count(counting, key, *shot, &outcome, failure.get());
        if let Phase::Probation { arming, .. } = self.phase {
            if key != arming && !failed {
                self.phase = Phase::Idle;
            }
        }
        let repeated = counted.repeats >= settings.repeat_threshold();
        let trigger = Trigger {
            counting,
            failures: (counted.failures >= settings.failure_threshold())
                .then_some(counted.failures),
            repeats: repeated.then_some(counted.repeats),
            cycle: repeated && counted.cycle,
        };
        if trigger.failures.is_none() && trigger.repeats.is_none() {
            return Observation::Counted;
        }
        self.phase = Phase::Pending(Pending {
            trigger,
            arming: key,
            check_shown: false,
            denials: 0,
            missing: MarkerSet::ALL,
        });
        Observation::Armed(trigger)
    }

    /// A driver's first step for a finished call whose text costs to pass (across a WebAssembly
    /// boundary): [`on_result_at`](Self::on_result_at) without the text. A success is counted
    /// at once; a failure is not counted yet and answers [`NeedText`], which
    /// [`on_failure_text`](Self::on_failure_text) counts once the driver has the failure's text
    /// windows. A failure's shot is made at once, so the driver's argument text need not outlive
    /// this call.
    pub fn on_result_or_need_text<T: ToolFacts + ?Sized>(
        &mut self,
        settings: &Settings,
        tool: &T,
        site: Site,
        shot: impl Deferred<Shot>,
        outcome: Outcome,
    ) -> Result<Observation, NeedText> {
        if outcome.failed() {
            return Err(NeedText {
                site,
                shot: shot.get(),
                outcome,
            });
        }
        Ok(self.on_result_at(settings, tool, site, shot, outcome, FailureKeys::default()))
    }

    /// Counts the failure [`on_result_or_need_text`](Self::on_result_or_need_text) answered
    /// `waiting` for, of the same `tool`, with its text's keys ([`crate::failure_keys`]).
    pub fn on_failure_text<T: ToolFacts + ?Sized>(
        &mut self,
        settings: &Settings,
        tool: &T,
        waiting: NeedText,
        failure: impl Deferred<FailureKeys>,
    ) -> Observation {
        let NeedText {
            site,
            shot,
            outcome,
        } = waiting;
        self.on_result_at(settings, tool, site, shot, outcome, failure)
    }

    /// A step is about to start: returns the check block once per arming, or the escape notice
    /// when the valve opens the gate (see "Escape valve" in the crate docs). Call
    /// [`on_user_prompt`](Self::on_user_prompt) first when the step starts with a user prompt.
    pub fn pre_step(&mut self, settings: &Settings) -> Option<Notice> {
        if !settings.enabled() {
            return None;
        }
        let lang = self.language(settings);
        let Phase::Pending(pending) = &mut self.phase else {
            return None;
        };
        if !pending.check_shown {
            pending.check_shown = true;
            return Some(Notice {
                kind: NoticeKind::Check,
                text: text::check_block(lang, pending.trigger, &shown_tools(settings)),
                summary: text::check_summary(lang, pending.trigger),
            });
        }
        if pending.denials < settings.max_denials() {
            return None;
        }
        let denials = pending.denials;
        self.counts = Counts::default();
        self.phase = Phase::Idle;
        Some(Notice {
            kind: NoticeKind::Escape { denials },
            text: text::escape_notice(lang, denials),
            summary: text::escape_summary(lang, denials),
        })
    }

    /// A user prompt: the agent starts afresh (a new problem). `text` only sets the language
    /// under `language: auto`. Returns whether a pending gate or a same-direction guard was
    /// cleared.
    pub fn on_user_prompt(&mut self, text: &str) -> bool {
        let cleared = self.phase != Phase::Idle;
        self.reset();
        self.prompt_in_cjk = text.chars().any(is_han_or_kana);
        cleared
    }

    /// A visible assistant reply (text blocks only). While pending, all three valid answers lift
    /// the gate; anything less keeps it and records what is missing for the next denial.
    pub fn on_assistant_text(&mut self, settings: &Settings, text: &str) -> LiftOutcome {
        if !settings.enabled() {
            return LiftOutcome::NotPending;
        }
        let Phase::Pending(pending) = &mut self.phase else {
            return LiftOutcome::NotPending;
        };
        let missing = missing_answers(text);
        if !missing.is_empty() {
            pending.missing = missing;
            return LiftOutcome::Partial { missing };
        }
        let arming = pending.arming;
        self.counts = Counts::default();
        self.phase = Phase::Probation {
            arming,
            refused: false,
        };
        LiftOutcome::Lifted
    }

    /// Feeds one [`Input`] to the method it stands for.
    pub fn handle(&mut self, settings: &Settings, input: Input<'_>) -> Reaction {
        match input {
            Input::ToolCall { name, args } => {
                Reaction::Decision(self.pre_execute(settings, name, args))
            }
            Input::ToolResult {
                name,
                shot,
                outcome,
                failure,
                site,
            } => Reaction::Observation(
                self.on_result_at(settings, name, site, shot, outcome, failure),
            ),
            Input::UserPrompt { text } => Reaction::UserPrompt {
                cleared: self.on_user_prompt(text),
            },
            Input::AssistantText { text } => Reaction::Lift(self.on_assistant_text(settings, text)),
            Input::Step => Reaction::Notice(self.pre_step(settings)),
        }
    }

    /// Counters and gate back to fresh; the language hint and the programs under way stay.
    fn reset(&mut self) {
        *self = Self {
            prompt_in_cjk: self.prompt_in_cjk,
            failed_programs: self.failed_programs,
            next_program: self.next_program,
            ..Self::default()
        };
    }

    /// Remembers that a nested call of the program `root` failed (0, an unknown root, is kept
    /// as 1, as [`Site::root_key`] never gives it).
    fn remember_failed_program(&mut self, root: u64) {
        let root = root.max(1);
        if self.failed_programs.contains(&root) {
            return;
        }
        self.failed_programs[self.next_program] = root;
        self.next_program = (self.next_program + 1) % CODE_ROOTS;
    }

    /// Whether a nested call of the program `root` failed, forgetting it (its result has come).
    fn take_failed_program(&mut self, root: u64) -> bool {
        let root = root.max(1);
        match self.failed_programs.iter().position(|&r| r == root) {
            Some(slot) => {
                self.failed_programs[slot] = 0;
                true
            }
            None => false,
        }
    }
}

/// The allowlist as the model reads it: without the read-only names of other harnesses, which a
/// DSH agent rarely has, so the list names the tools it can use.
fn shown_tools(settings: &Settings) -> Vec<&str> {
    settings
        .allowlist()
        .iter()
        .map(ToolPattern::source)
        .filter(|source| !OTHER_HARNESS_INVESTIGATION.contains(source))
        .collect()
}
