//! The pain-point gate of dsh-pain-point-check: a per-agent state machine, the answer detector,
//! and every model-facing text.
//!
//! An agent stuck in "solution state" keeps firing shots at the same problem. This crate counts,
//! per agent, the **failed experiments on one problem** and the **repeated calls**; when either
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
//! state is a small `Copy` value: counters, [`PROBLEM_SLOTS`] target keys and a few 64-bit call
//! keys, no argument text, no growing collections.
//!
//! # Driving it
//!
//! One [`AgentGate`] per agent (DSH: per `agent.id`), dropped on `agent/disposed`; one shared
//! [`Settings`], built from the row config the config crate validated (its bounds, pattern rule
//! and repeat check are the only ones) by `with_*` methods that cannot fail and check nothing
//! again. The driver makes no decisions of its own:
//!
//! | DSH hook | call |
//! |---|---|
//! | `agent/pre-step` | if the claimed messages hold a user prompt, [`AgentGate::on_user_prompt`] with its text first; then [`AgentGate::pre_step`], and append the returned [`Notice`] (if any) as a plugin notice |
//! | `session/event`, `assistant/message` (not interrupted) | [`AgentGate::on_assistant_text`] with the reply's `text` blocks joined by `\n` (never reasoning) |
//! | `tools/pre-execute` or `ctx.tools.guard` | [`AgentGate::pre_execute`] for **every** call, Code Mode sub-dispatches (`exec.parent` set) included, by their own names; deny with the returned reason (while [`AgentGate::may_deny`] is false every call is allowed, so the driver may skip it) |
//! | `tools/result` | [`AgentGate::on_result`] for every call that went through `pre_execute` (or skipped it), the denied ones included; the shot and the fingerprint may be closures ([`Deferred`]), called only when the result is counted. A driver that pays to pass text calls [`AgentGate::on_result_or_need_text`] without it, and, when that answers [`NeedText`] (a failure), [`AgentGate::on_failure_text`] with the failure's text |
//!
//! A replay engine can feed the same facts as [`Input`]s through [`AgentGate::handle`] and read a
//! timeline of arm, check, deny, lift and escape from [`Reaction::timeline_entry`].
//!
//! # Counting
//!
//! A tool result is, in this order:
//! 1. ignored when the gate is off, when the call was cancelled (user abort), when DSH rejected it
//!    as naming no tool it can run (`UNKNOWN_TOOL`: it never ran; in Code Mode every call the
//!    model makes directly to a tool other than `run_code` ends so), or when it is the result of
//!    this gate's own same-direction denial;
//! 2. a **human answer** when it is a successful [`ASK_USER_TOOL`] call: the agent is reset as by
//!    a user prompt;
//! 3. ignored while the gate is pending: every way out of a pending gate zeroes the counters, so
//!    nothing counted there could matter, and the gate's own denials never count;
//! 4. **transparent** when the tool is allowlisted (investigation) or is [`CODE_MODE_TOOL`] (see
//!    "Code Mode" for the one program result that counts): it neither counts nor breaks a run of
//!    identical calls;
//! 5. **waiting** ([`Observation::Waited`]) when the call only lets time pass (`sleep`,
//!    `job_output` waiting; see [`Shot`]): it neither counts nor breaks a run;
//! 6. otherwise an **experiment**, counted by the settings' [`Counting`]:
//!    - `same-problem` (the default): a failure equivalent to an earlier unresolved one (the same
//!      target, [`Shot`]: a shell command's program and file or test, another tool's file; or
//!      the same fingerprint, [`failure_keys`]) is a **failed retry** and counts toward
//!      `failureThreshold`; the first failure only finds the problem, and a success on the
//!      target resolves it. A call that repeats the previous experiment, or the one
//!      before it in an `A B A B` cycle, with the same outcome (exit code and failure
//!      fingerprint) counts toward `repeatThreshold`.
//!    - `any-failure` (the counting before 0.3): every failure since the last reset counts, and
//!      a call with the same name and canonical arguments ([`canonical_args_hash`]) as the
//!      previous experiment extends the run of identical calls whatever it returned.
//!
//! The gate arms when either count reaches its threshold. A user prompt resets everything; so
//! does a lift, except that the lift starts the same-direction guard.
//!
//! # Code Mode
//!
//! [`CODE_MODE_TOOL`] (`run_code`) is a transport: DSH runs every tool a Code Mode program calls
//! through the same pre-execute hook and `tools/result`, with `exec.parent` set and call ids
//! `<outer>:code:<n>` (`<outer>:ptc:<n>` on DSH 0.2), so each nested call is judged and counted by
//! its own name. `run_code` itself is therefore allowed while pending (in Code Mode it is the
//! model's only tool, and denying it would deny `read` too), and its result is transparent: its
//! nested calls are the experiments, and a program that throws because a nested call failed (a
//! denial surfaces in the program as a `ToolCallError`) would count that failure twice.
//!
//! One program result counts: a program that failed while **none** of its nested calls failed
//! (a syntax error, an exception of its own, its time budget) is an experiment of its own, a
//! failed `run_code` call with its error text, like any tool's failure. This is the original
//! plugin's rule (count the outer result only if it failed and no nested call of the same root
//! failed). Which calls are nested, and of which root, is the driver's [`Site`]: DSH's
//! `rootCallId` is the model's `run_code` call for every call its program makes. The gate keeps
//! the roots of the last [`CODE_ROOTS`] programs with a failed nested call (any failure: an error,
//! a denial, a non-zero exit, a kill, a timeout, counted or not).
//!
//! Calls the model makes directly to any other tool are rejected by DSH as `UNKNOWN_TOOL` before
//! pre-execute (the gate never sees them coming), and their results are ignored (rule 1).

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

mod agent;
mod answers;
mod args;
mod counting;
mod experiment;
mod json;
mod questions;
mod settings;
mod text;
mod tool;

pub use agent::{AgentGate, NeedText};
pub use answers::{MIN_ANSWER_WEIGHT, Marker, MarkerSet, answered_markers, missing_answers};
pub use args::{ArgsHash, canonical_args_hash, canonical_args_hash_str};
pub use counting::PROBLEM_SLOTS;
pub use experiment::{Deferred, Shot};
/// A failure's fingerprint: shared with research-nudge in `dsh-fingerprint`.
pub use fingerprint::Fingerprint;
/// DSH's Code Mode transport (`run_code`): shared with research-nudge in `dsh-names`.
pub use names::CODE_MODE_TOOL;
/// How a finished tool call ended: shared with research-nudge in `dsh-outcome`.
pub use outcome::Outcome;
pub use questions::{QUESTIONS_EN, QUESTIONS_ZH};
pub use settings::{
    Counting, DEFAULT_ALLOWLIST, DEFAULT_FAILURE_THRESHOLD, DEFAULT_MAX_DENIALS,
    DEFAULT_REPEAT_THRESHOLD, DOCUMENTED_ALLOWLIST, LanguageChoice, MAX_DENIALS_MAX,
    MAX_DENIALS_MIN, OTHER_HARNESS_INVESTIGATION, Settings, THRESHOLD_MAX, THRESHOLD_MIN,
    ToolPattern,
};
pub use text::{FORMAT_EN, FORMAT_ZH, NAME_LIMIT, PLUGIN_TAG, SHOWN_TOOLS_LIMIT};
pub use tool::{Tool, ToolFacts};

/// What the gate keeps of a failed call's text ([`failure_keys`]): whether it is the same problem
/// as an earlier failure, and whether anything changed since.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FailureKeys {
    /// The fingerprint (numbers, paths and noise erased): the same problem.
    pub print: Option<Fingerprint>,
    /// The detail ([`fingerprint::detail`]: numbers and file names kept): another error, line or
    /// test summary is another detail.
    pub detail: Option<u64>,
}

/// The keys of a failed call's text (an error message, or a shell call's output): its head and
/// tail windows ([`fingerprint::Failure::windows`]; `tail` empty when `head` is all of it). The
/// fingerprint hashes them with the tool name and exit code; the detail reads the end. Both are
/// `None` for a success and for a text without substance: nothing but a shell status line
/// (`[exit code: 1]`, or a trajectory corpus's `exit code 1 (no output)`), which any two failing
/// commands share.
pub fn failure_keys(name: &str, outcome: &Outcome, head: &str, tail: &str) -> FailureKeys {
    if !outcome.failed() || !has_substance(head, tail) {
        return FailureKeys::default();
    }
    FailureKeys {
        print: fingerprint::fingerprint(&fingerprint::Failure {
            tool: name,
            exit_code: outcome.exit_code,
            head,
            tail,
        }),
        detail: Some(fingerprint::detail(if tail.is_empty() {
            head
        } else {
            tail
        })),
    }
}

fn has_substance(head: &str, tail: &str) -> bool {
    let text = if tail.is_empty() { head } else { tail };
    let status_only = |line: &str| {
        let line = line.trim();
        line.is_empty()
            || (line.starts_with('[') && line.ends_with(']'))
            || (line.starts_with("exit code ") && line.ends_with("(no output)"))
    };
    !text.lines().all(status_only)
}

/// How many Code Mode programs with a failed nested call the gate remembers (by root): more than
/// DSH ever runs at once for one agent.
pub const CODE_ROOTS: usize = 4;

/// Where a finished call sits in DSH's Code Mode: the key of its root (DSH's `rootCallId`: the
/// model's own call it descends from) and whether a program made it (`exec.parent` set). A
/// native call, or a driver that knows no roots, is [`Site::DIRECT`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Site {
    /// [`Site::root_key`] of the root call id; 0 when unknown.
    pub root: u64,
    /// A Code Mode program made the call.
    pub nested: bool,
}

impl Site {
    /// A call the model made, with no root known.
    pub const DIRECT: Site = Site {
        root: 0,
        nested: false,
    };

    /// A call the model made itself (a `run_code` call included): its root is its own call id.
    pub fn direct(root_call_id: &str) -> Self {
        Self {
            root: Self::root_key(root_call_id),
            nested: false,
        }
    }

    /// A call a Code Mode program made, under the root call id DSH gave it.
    pub fn nested(root_call_id: &str) -> Self {
        Self {
            root: Self::root_key(root_call_id),
            nested: true,
        }
    }

    /// The site of a reported call: `root` its root call id where the driver knows one (in Code
    /// Mode), `nested` whether a program made it.
    pub fn of(root: Option<&str>, nested: bool) -> Self {
        match root {
            None => Self::DIRECT,
            Some(root) if nested => Self::nested(root),
            Some(root) => Self::direct(root),
        }
    }

    /// The key of a root call id: FNV-1a (the arguments hash's), never 0 (0 is "unknown").
    pub fn root_key(call_id: &str) -> u64 {
        let mut h = args::Fnv::new();
        h.bytes(call_id.as_bytes());
        h.value().max(1)
    }
}

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
    /// How the counts were counted, which decides what they mean.
    pub counting: Counting,
    /// The failures counted toward `failure_threshold`, when it was reached.
    pub failures: Option<u32>,
    /// The repeats counted toward `repeat_threshold`, when it was reached.
    pub repeats: Option<u32>,
    /// The repeats were of a two-call cycle (`A B A B`), not of one call.
    pub cycle: bool,
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
    /// DSH rejected the call as naming no tool it can run (`UNKNOWN_TOOL`): it never ran.
    UnknownTool,
    /// The gate is pending: nothing counts until it opens (every way out resets the counters).
    WhilePending,
}

/// What one tool result did to the agent's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// Not counted.
    Ignored(IgnoreReason),
    /// An investigation call (allowlisted) or the Code Mode transport (a program that succeeded,
    /// or failed on a failed nested call): neither counts nor breaks a run.
    Transparent,
    /// A call that only waits (`sleep`, `job_output` waiting): neither counts nor breaks a run.
    Waited,
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
        /// What it tried.
        shot: Shot,
        /// How it ended.
        outcome: Outcome,
        /// Its failure text's keys ([`failure_keys`]), when it failed.
        failure: FailureKeys,
        /// Where it sits in Code Mode ([`Site::DIRECT`] natively).
        site: Site,
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

#[cfg(test)]
mod tests;
