//! The pain-point gate of dsh-pain-point-check: a per-agent state machine, the answer detector,
//! and every model-facing text.
//!
//! An agent stuck in "solution state" keeps firing shots at the same problem. This crate counts,
//! per agent, the **failed experiments** and the **consecutive identical calls**; when either
//! reaches its threshold (both inclusive) the gate **arms**. The next step then carries the check
//! block once (three questions, the falsifiable-hypothesis rule, the answer format), and every
//! non-investigative call is **denied** with a self-contained reason until one visible assistant
//! reply answers all three questions (`卡点=` `排除=` `性价比=`, or `blocker=` `ruled_out=`
//! `best_path=`; see [`answered_markers`]). The answer **lifts** the gate and zeroes the counters;
//! repeating the exact call that armed it, with nothing changed since, is denied once more. A
//! model that never answers is let out by the **escape valve** after [`Settings::max_denials`]
//! refusals.
//!
//! It is pure and sans-I/O, in the manner of quinn-proto and h11: facts go in through methods of
//! [`AgentGate`], decisions and texts come out as values. It knows nothing of WASM, JavaScript,
//! DSH objects, config files or clocks (no rule depends on time), and it never panics. Per-agent
//! state is a small `Copy` value: counters and two 64-bit call keys, no argument text, no growing
//! collections.
//!
//! # Driving it
//!
//! One [`AgentGate`] per agent (DSH: per `agent.id`), dropped on `agent/disposed`; one shared
//! [`Settings`]. The driver makes no decisions of its own:
//!
//! | DSH hook | call |
//! |---|---|
//! | `agent/pre-step` | if the claimed messages hold a user prompt, [`AgentGate::on_user_prompt`] with its text first; then [`AgentGate::pre_step`], and append the returned [`Notice`] (if any) as a plugin notice |
//! | `session/event`, `assistant/message` (not interrupted) | [`AgentGate::on_assistant_text`] with the reply's `text` blocks joined by `\n` (never reasoning) |
//! | `tools/pre-execute` or `ctx.tools.guard` | [`AgentGate::pre_execute`] for **every** call, Code Mode sub-dispatches (`exec.parent` set) included, by their own names; deny with the returned reason |
//! | `tools/result` | [`AgentGate::on_result`] for every call that went through `pre_execute`, the denied ones included |
//!
//! A replay engine can feed the same facts as [`Input`]s through [`AgentGate::handle`] and read a
//! timeline of arm, check, deny, lift and escape from [`Reaction::timeline_entry`].
//!
//! # Counting
//!
//! A tool result is, in this order:
//! 1. ignored when the gate is off, when the call was cancelled (user abort), or when it is the
//!    result of this gate's own same-direction denial;
//! 2. a **human answer** when it is a successful [`ASK_USER_TOOL`] call: the agent is reset as by
//!    a user prompt;
//! 3. ignored while the gate is pending: every way out of a pending gate zeroes the counters, so
//!    nothing counted there could matter, and the gate's own denials never count;
//! 4. **transparent** when the tool is allowlisted (investigation) or is [`CODE_MODE_TOOL`]: it
//!    neither counts nor breaks a run of identical calls;
//! 5. otherwise an **experiment**. It extends the run when its name and canonical arguments
//!    ([`canonical_args_hash`]) equal the previous experiment's, else starts a new run of 1; it
//!    is a failure when [`Outcome::failed`] (an error result, a non-zero exit code, a kill by
//!    signal, a timeout). Failures accumulate until a reset.
//!
//! The gate arms when `failures >= failure_threshold` or `run >= repeat_threshold`. A user
//! prompt resets everything; so does a lift, except that the lift starts the same-direction guard.
//!
//! # Code Mode
//!
//! [`CODE_MODE_TOOL`] (`run_code`) is a transport: DSH runs every tool a Code Mode program calls
//! through the same pre-execute hook, with `exec.parent` set, so each sub-call is judged by its own
//! name. `run_code` itself is therefore allowed while pending (in Code Mode it is the model's only
//! tool, and denying it would deny `read` too) and its own result is transparent (its sub-calls
//! are the experiments; counting both would count one failure twice).
//!
//! # Same-direction guard and "nothing changed"
//!
//! After a lift the gate remembers the call that armed it (the experiment whose result reached the
//! threshold). Calling exactly that again (same name, same canonical arguments) while **nothing has
//! changed** is denied once. Something has changed as soon as a different non-investigative call
//! succeeds; investigation calls and failed calls change nothing. The guard also ends when the
//! model repeats the call after its one denial, on a user prompt, and when the gate arms again.
//!
//! # Escape valve
//!
//! Refusals are counted per pending episode. At the first pre-step after the check block was
//! shown and the count reached [`Settings::max_denials`], the gate opens without an answer: the
//! counters reset, no same-direction guard starts, and that step carries a one-line
//! [`NoticeKind::Escape`] notice. The check block is always shown once before an escape.

mod answers;
mod args;
mod settings;
mod text;

pub use answers::{MIN_ANSWER_WEIGHT, Marker, MarkerSet, answered_markers, missing_answers};
pub use args::{ArgsHash, canonical_args_hash, canonical_args_hash_str};
/// How a finished tool call ended: shared with research-nudge in `dsh-outcome`.
pub use outcome::Outcome;
pub use settings::{
    DEFAULT_ALLOWLIST, DEFAULT_FAILURE_THRESHOLD, DEFAULT_MAX_DENIALS, DEFAULT_REPEAT_THRESHOLD,
    DOCUMENTED_ALLOWLIST, Field, LanguageChoice, MAX_DENIALS_MAX, MAX_DENIALS_MIN, PatternProblem,
    Settings, SettingsError, SettingsInput, THRESHOLD_MAX, THRESHOLD_MIN, ToolPattern,
};
pub use text::{
    FORMAT_EN, FORMAT_ZH, NAME_LIMIT, PLUGIN_TAG, QUESTIONS_EN, QUESTIONS_ZH, SHOWN_TOOLS_LIMIT,
};

use args::CallKey;

/// DSH's Code Mode tool: a transport whose sub-calls are judged by their own names.
pub const CODE_MODE_TOOL: &str = "run_code";

/// DSH's tool for asking the human; its successful result is a human answer and resets the agent.
pub const ASK_USER_TOOL: &str = "ask_user_question";

/// The language of one text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// Chinese.
    Zh,
    /// English.
    En,
}

/// Which thresholds armed the gate, with the counts at arming (`None` for one not reached).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// Failed experiments, when `failure_threshold` was reached.
    pub failures: Option<u32>,
    /// Consecutive identical calls, when `repeat_threshold` was reached.
    pub repeats: Option<u32>,
}

/// Why a call was denied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenyKind {
    /// The gate is pending and the tool is not allowlisted.
    Pending,
    /// After a lift: the exact call that armed the gate, with nothing changed since (once).
    SameShot,
}

/// The verdict on a call about to run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub enum Decision {
    /// Let the call run.
    Allow,
    /// Refuse it; the model reads `reason` as the call's error result.
    Deny {
        /// Why.
        kind: DenyKind,
        /// The model-facing reason, self-contained.
        reason: String,
    },
}

/// Why a tool result did not count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IgnoreReason {
    /// The gate is off.
    Disabled,
    /// The call was cancelled.
    Cancelled,
    /// The result of this gate's own same-direction denial.
    OwnDenial,
    /// The gate is pending: nothing counts until it opens (every way out resets the counters).
    WhilePending,
}

/// What one tool result did to the agent's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// Not counted.
    Ignored(IgnoreReason),
    /// An investigation call (allowlisted) or the Code Mode transport: neither counts nor breaks
    /// a run.
    Transparent,
    /// Counted as an experiment; the gate did not arm.
    Counted,
    /// Counted, and the gate armed.
    Armed(Trigger),
    /// A successful [`ASK_USER_TOOL`] call: the human answered, the agent was reset.
    HumanAnswered,
}

/// What a notice is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// The check block, once per arming.
    Check,
    /// The escape valve opened the gate after this many refusals.
    Escape {
        /// Refusals in the episode.
        denials: u32,
    },
}

/// A message for the next step (DSH: a user-role plugin notice appended by `agent/pre-step`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use]
pub struct Notice {
    /// What it is.
    pub kind: NoticeKind,
    /// The model-facing text.
    pub text: String,
    /// One line for the notice row in a UI (at most 120 characters).
    pub summary: String,
}

/// What a visible assistant reply did to the gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiftOutcome {
    /// All three answers were valid: the gate opened and the counters are zero.
    Lifted,
    /// The gate stays pending; these answers are missing or invalid (they are named in the next
    /// denial).
    Partial {
        /// The markers still unanswered.
        missing: MarkerSet,
    },
    /// The gate was not pending (or is off); nothing changed.
    NotPending,
}

/// Where an agent's gate stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Counting; calls run.
    Idle,
    /// Armed: non-investigative calls are denied until the answer.
    Pending,
    /// Lifted; the exact arming call is denied once if nothing changed.
    Probation,
}

/// Why an agent was reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetCause {
    /// A user prompt.
    UserPrompt,
    /// A successful [`ASK_USER_TOOL`] result.
    HumanAnswer,
}

/// One fact for [`AgentGate::handle`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// A call is about to run ([`AgentGate::pre_execute`]).
    ToolCall {
        /// Tool name exactly as called.
        name: &'a str,
        /// Its canonical arguments.
        args: ArgsHash,
    },
    /// A call finished ([`AgentGate::on_result`]).
    ToolResult {
        /// Tool name exactly as called.
        name: &'a str,
        /// Its canonical arguments.
        args: ArgsHash,
        /// How it ended.
        outcome: Outcome,
    },
    /// A user prompt ([`AgentGate::on_user_prompt`]).
    UserPrompt {
        /// Its text (for `language: auto`).
        text: &'a str,
    },
    /// A visible assistant reply ([`AgentGate::on_assistant_text`]).
    AssistantText {
        /// Its text blocks joined by `\n`.
        text: &'a str,
    },
    /// A step is about to start ([`AgentGate::pre_step`]).
    Step,
}

/// The answer to one [`Input`]: the return value of the method it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// For [`Input::ToolCall`].
    Decision(Decision),
    /// For [`Input::ToolResult`].
    Observation(Observation),
    /// For [`Input::UserPrompt`]: whether a pending gate or a same-direction guard was cleared.
    UserPrompt {
        /// A pending gate or a same-direction guard was cleared.
        cleared: bool,
    },
    /// For [`Input::AssistantText`].
    Lift(LiftOutcome),
    /// For [`Input::Step`].
    Notice(Option<Notice>),
}

/// One gate event worth a line in a replay timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineEntry {
    /// The gate armed.
    Armed(Trigger),
    /// The check block was shown.
    CheckShown,
    /// A call was denied while pending.
    Denied,
    /// The arming call was denied once after the lift.
    SameShotDenied,
    /// A reply answered only part of the check.
    Partial(MarkerSet),
    /// The answer lifted the gate.
    Lifted,
    /// The escape valve opened the gate.
    Escaped {
        /// Refusals in the episode.
        denials: u32,
    },
    /// The agent was reset while a gate was pending or guarding.
    Reset(ResetCause),
}

impl Reaction {
    /// The timeline entry this reaction stands for, if any.
    pub fn timeline_entry(&self) -> Option<TimelineEntry> {
        match self {
            Reaction::Decision(Decision::Allow) => None,
            Reaction::Decision(Decision::Deny { kind, .. }) => Some(match kind {
                DenyKind::Pending => TimelineEntry::Denied,
                DenyKind::SameShot => TimelineEntry::SameShotDenied,
            }),
            Reaction::Observation(Observation::Armed(trigger)) => {
                Some(TimelineEntry::Armed(*trigger))
            }
            Reaction::Observation(Observation::HumanAnswered) => {
                Some(TimelineEntry::Reset(ResetCause::HumanAnswer))
            }
            Reaction::Observation(_) => None,
            Reaction::UserPrompt { cleared: true } => {
                Some(TimelineEntry::Reset(ResetCause::UserPrompt))
            }
            Reaction::UserPrompt { cleared: false } => None,
            Reaction::Lift(LiftOutcome::Lifted) => Some(TimelineEntry::Lifted),
            // A reply that answers nothing (a tool-only step) is no partial answer.
            Reaction::Lift(LiftOutcome::Partial { missing })
                if missing.len() < Marker::ALL.len() =>
            {
                Some(TimelineEntry::Partial(*missing))
            }
            Reaction::Lift(LiftOutcome::Partial { .. }) => None,
            Reaction::Lift(LiftOutcome::NotPending) => None,
            Reaction::Notice(Some(notice)) => Some(match notice.kind {
                NoticeKind::Check => TimelineEntry::CheckShown,
                NoticeKind::Escape { denials } => TimelineEntry::Escaped { denials },
            }),
            Reaction::Notice(None) => None,
        }
    }
}

/// A run of identical experiments: the call's key and how many in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    key: CallKey,
    len: u32,
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
    failures: u32,
    run: Option<Run>,
    phase: Phase,
    /// The last user prompt contained a Han or kana character (`language: auto`).
    prompt_in_cjk: bool,
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

    /// Failed experiments since the last reset.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Length of the current run of identical experiments (0 after a reset).
    pub fn run_length(&self) -> u32 {
        self.run.map_or(0, |run| run.len)
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
    pub fn pre_execute(&mut self, settings: &Settings, name: &str, args: ArgsHash) -> Decision {
        if !settings.enabled() {
            return Decision::Allow;
        }
        let lang = self.language(settings);
        match &mut self.phase {
            Phase::Idle => Decision::Allow,
            Phase::Pending(pending) => {
                if name == CODE_MODE_TOOL || settings.is_allowlisted(name) {
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

    /// Records a finished call (see "Counting" in the crate docs). Call it for every call that
    /// went through [`pre_execute`](Self::pre_execute), denied ones included.
    pub fn on_result(
        &mut self,
        settings: &Settings,
        name: &str,
        args: ArgsHash,
        outcome: Outcome,
    ) -> Observation {
        if !settings.enabled() {
            return Observation::Ignored(IgnoreReason::Disabled);
        }
        let key = CallKey::new(name, args);
        if let Phase::Probation {
            arming,
            refused: true,
        } = self.phase
        {
            if key == arming && outcome.failed() {
                return Observation::Ignored(IgnoreReason::OwnDenial);
            }
        }
        if outcome.cancelled {
            return Observation::Ignored(IgnoreReason::Cancelled);
        }
        if name == ASK_USER_TOOL && !outcome.failed() {
            self.reset();
            return Observation::HumanAnswered;
        }
        if self.is_pending() {
            return Observation::Ignored(IgnoreReason::WhilePending);
        }
        if name == CODE_MODE_TOOL || settings.is_allowlisted(name) {
            return Observation::Transparent;
        }
        let failed = outcome.failed();
        let run = match self.run {
            Some(run) if run.key == key => Run {
                key,
                len: run.len.saturating_add(1),
            },
            _ => Run { key, len: 1 },
        };
        self.run = Some(run);
        if failed {
            self.failures = self.failures.saturating_add(1);
        }
        if let Phase::Probation { arming, .. } = self.phase {
            if key != arming && !failed {
                self.phase = Phase::Idle;
            }
        }
        let trigger = Trigger {
            failures: (self.failures >= settings.failure_threshold()).then_some(self.failures),
            repeats: (run.len >= settings.repeat_threshold()).then_some(run.len),
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
        self.failures = 0;
        self.run = None;
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
        self.prompt_in_cjk = text.chars().any(answers::is_han_or_kana);
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
        self.failures = 0;
        self.run = None;
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
                args,
                outcome,
            } => Reaction::Observation(self.on_result(settings, name, args, outcome)),
            Input::UserPrompt { text } => Reaction::UserPrompt {
                cleared: self.on_user_prompt(text),
            },
            Input::AssistantText { text } => Reaction::Lift(self.on_assistant_text(settings, text)),
            Input::Step => Reaction::Notice(self.pre_step(settings)),
        }
    }

    /// Counters and gate back to fresh; the language hint stays.
    fn reset(&mut self) {
        *self = Self {
            prompt_in_cjk: self.prompt_in_cjk,
            ..Self::default()
        };
    }
}

fn shown_tools(settings: &Settings) -> Vec<&str> {
    settings
        .allowlist()
        .iter()
        .map(ToolPattern::source)
        .collect()
}

#[cfg(test)]
mod tests;
