//! How a finished tool call ended, as the family's guards judge it: an error result, an exit
//! code, a kill by signal, a timeout or a cancellation ([`Outcome`]), the one rule that makes an
//! error or a non-zero exit code a failure ([`exit_failure`]), and the reader of the status
//! markers DSH's shell tools render as the last lines of a result's text ([`ShellStatus`]).
//!
//! Both guards count every [`Outcome::failed`] (an error, a non-zero exit code, a kill by a signal
//! or a timeout); a cancellation is pain-point-check's business only.
//!
//! It is pure: no WASM, no JavaScript, no DSH runtime, no I/O. What it knows of DSH is text and
//! codes that DSH writes down: the rendered markers (`@deepseek-ai/dsh-tool-bash`'s
//! `renderResult`) and the error codes of a cancelled call. It must not know any plugin's policy,
//! live DSH objects, or how a driver obtains the facts.

/// DSH error codes of a call the user or the harness cancelled: `ABORTED` replaces the outcome of
/// a started call, `ABORTED_BEFORE_DISPATCH` closes one whose body never ran.
pub const CANCEL_CODES: [&str; 2] = ["ABORTED", "ABORTED_BEFORE_DISPATCH"];

/// DSH's error code of a call naming a tool it cannot run (`ToolNotFoundError`, `dsh-tools`). In
/// Code Mode every call the model makes directly to a tool other than `run_code` ends so, before
/// any `tools/pre-execute` (the tool is only reachable from a program); natively, a call to a
/// name no tool has. The call never ran: neither guard counts it.
pub const UNKNOWN_TOOL_CODE: &str = "UNKNOWN_TOOL";

/// DSH's error code of a call its timeout policy stopped (`packages/guard/timeout-policy`).
pub const TIMEOUT_CODE: &str = "TOOL_TIMEOUT";

/// The failure rule both guards share: an error result (`ok == false`), or a successful result
/// that reported a non-zero exit code (DSH reports a non-zero exit as a success). Kills and
/// timeouts are not part of it; see [`Outcome::failed`].
pub fn exit_failure(ok: bool, exit_code: Option<i64>) -> bool {
    !ok || exit_code.is_some_and(|code| code != 0)
}

/// How a finished tool call ended, as the driver reads it from the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `false` for an error result (DSH `isError`), denials by any plugin included.
    pub ok: bool,
    /// The exit code a shell-style result reported (DSH `value.exitCode`), if any. DSH reports a
    /// non-zero exit as a success; it is a failure here.
    pub exit_code: Option<i64>,
    /// The process was killed by a signal.
    pub killed: bool,
    /// The call or its process timed out.
    pub timed_out: bool,
    /// The user or the harness cancelled the call (DSH error codes `ABORTED` and
    /// `ABORTED_BEFORE_DISPATCH`): not an experiment, ignored.
    pub cancelled: bool,
    /// DSH rejected the call as naming no tool it can run ([`UNKNOWN_TOOL_CODE`]): it never ran,
    /// so it is no experiment and no failure.
    pub unknown_tool: bool,
}

impl Outcome {
    /// A successful result with no exit code.
    pub fn success() -> Self {
        Self {
            ok: true,
            exit_code: None,
            killed: false,
            timed_out: false,
            cancelled: false,
            unknown_tool: false,
        }
    }

    /// An error result.
    pub fn error() -> Self {
        Self {
            ok: false,
            ..Self::success()
        }
    }

    /// A successful result of a process that exited with `code`.
    pub fn exited(code: i64) -> Self {
        Self {
            exit_code: Some(code),
            ..Self::success()
        }
    }

    /// A successful result of a process killed by a signal.
    pub fn killed() -> Self {
        Self {
            killed: true,
            ..Self::success()
        }
    }

    /// A result of a call that timed out.
    pub fn timed_out() -> Self {
        Self {
            timed_out: true,
            ..Self::success()
        }
    }

    /// A cancelled call.
    pub fn cancelled() -> Self {
        Self {
            ok: false,
            cancelled: true,
            ..Self::success()
        }
    }

    /// A call DSH rejected as naming no tool it can run ([`UNKNOWN_TOOL_CODE`]).
    pub fn unknown_tool() -> Self {
        Self {
            ok: false,
            unknown_tool: true,
            ..Self::success()
        }
    }

    /// Whether either guard counts the call at all: not when it was cancelled or named no tool
    /// DSH could run (it never ran).
    pub fn counts(&self) -> bool {
        !self.cancelled && !self.unknown_tool
    }

    /// The outcome of a recorded result: `ok` is `!isError`, `error_code` is DSH's error code
    /// (a [`CANCEL_CODES`] one makes it cancelled), `status` the markers read from its text.
    pub fn from_result(ok: bool, error_code: Option<&str>, status: &ShellStatus) -> Self {
        Self::from_facts(
            ok,
            error_code,
            status.exit_code,
            status.signal.is_some(),
            status.timeout_ms.is_some(),
        )
    }

    /// The outcome of a live result: `ok` is `!isError`, `error_code` its `error.info.code`, and
    /// the shell facts come from its value (`exitCode`, a `signal`, `timedOut`). A timeout is
    /// either the shell's own or the harness's timeout policy ([`TIMEOUT_CODE`]).
    pub fn from_facts(
        ok: bool,
        error_code: Option<&str>,
        exit_code: Option<i64>,
        killed: bool,
        timed_out: bool,
    ) -> Self {
        Self {
            ok,
            exit_code,
            killed,
            timed_out: timed_out || error_code == Some(TIMEOUT_CODE),
            cancelled: error_code.is_some_and(|code| CANCEL_CODES.contains(&code)),
            unknown_tool: rejected_as_unknown(ok, error_code),
        }
    }

    /// Whether the experiment failed: an error, a non-zero exit code, a kill or a timeout.
    pub fn failed(&self) -> bool {
        exit_failure(self.ok, self.exit_code) || self.killed || self.timed_out
    }
}

/// Whether a result is DSH's rejection of a call that names no tool it can run
/// ([`UNKNOWN_TOOL_CODE`]): the call never ran.
pub fn rejected_as_unknown(ok: bool, error_code: Option<&str>) -> bool {
    !ok && error_code == Some(UNKNOWN_TOOL_CODE)
}

/// The exit status DSH's shell tools render at the end of a result's text when the tool keeps
/// only the text (as a session log does). `@deepseek-ai/dsh-tool-bash` appends, each on its own
/// line and in this order: `[timed out after Nms]` when the run timed out, then
/// `[killed by signal: S]`, or `[exit code: N]` when the code is not 0. Only a text whose last
/// line is exactly one of these markers has a status; an exit code must be decimal digits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShellStatus {
    /// The `N` of a last line `[exit code: N]` (DSH renders none for 0).
    pub exit_code: Option<i64>,
    /// The `S` of a last line `[killed by signal: S]`; the text then has no exit code.
    pub signal: Option<String>,
    /// The `N` of `[timed out after Nms]`, the last line or the one before the kill or exit
    /// marker.
    pub timeout_ms: Option<u64>,
}

impl ShellStatus {
    /// Reads the status markers at the end of a result's text.
    pub fn parse(text: &str) -> Self {
        let mut lines = text.rsplit('\n');
        let last = lines.next().unwrap_or_default();
        let mut status = Self::default();
        if let Some(signal) = marker(last, "[killed by signal: ", "]").filter(|s| !s.is_empty()) {
            status.signal = Some(signal.to_owned());
        } else if let Some(code) = marker(last, "[exit code: ", "]").and_then(number) {
            status.exit_code = Some(code);
        } else {
            status.timeout_ms = timeout(last);
            return status;
        }
        status.timeout_ms = lines.next().and_then(timeout);
        status
    }
}

/// The middle of a line that is exactly `prefix` + middle + `suffix`.
fn marker<'a>(line: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    line.strip_prefix(prefix)?.strip_suffix(suffix)
}

/// A non-empty run of decimal digits.
fn number<T: std::str::FromStr>(digits: &str) -> Option<T> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn timeout(line: &str) -> Option<u64> {
    marker(line, "[timed out after ", "ms]").and_then(number)
}

#[cfg(test)]
mod tests;
