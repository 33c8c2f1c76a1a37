//! The one error shape every tool answers with: `{ ok: false, code, message }`.

use serde_json::{Value, json};

/// Why a tool call failed. Each code is a stable, dotted string the model and the driver may match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// The store lock could not be taken within the lock module's `WAIT_MS`, or was taken over
    /// while this writer held it. Nothing was written; the call may be retried.
    Locked,
    /// The store file exists but is not a store this crate can read. It is never overwritten.
    Corrupt,
    /// The arguments break a rule (type, required field, unknown key).
    Invalid,
    /// An argument is longer than its cap.
    TooLarge,
    /// The store declares a `schema_version` other than 1: it can be read, never rewritten.
    UnsupportedVersion,
    /// No fact has the requested id (people CLI `show` / `forget`).
    NotFound,
    /// The driver could not read the store (an I/O error other than "missing").
    ReadFailed,
    /// The driver could not write the store.
    WriteFailed,
    /// The store file is read-only (no write permission bit): a save is refused, never forced.
    ReadOnly,
}

impl Code {
    /// The wire form, e.g. `memory.locked`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Locked => "memory.locked",
            Code::Corrupt => "memory.corrupt",
            Code::Invalid => "memory.invalid",
            Code::TooLarge => "memory.too_large",
            Code::UnsupportedVersion => "memory.unsupported_version",
            Code::NotFound => "memory.not_found",
            Code::ReadFailed => "memory.read_failed",
            Code::WriteFailed => "memory.write_failed",
            Code::ReadOnly => "memory.read_only",
        }
    }
}

/// A failed call: a code and a message for the model, naming the field, the rule and the value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What kind of failure.
    pub code: Code,
    /// One or two sentences for the model, saying what is wrong and what to do.
    pub message: String,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    /// `memory.read_failed` for an I/O error the driver hit while reading the store
    /// (`detail` is the error's own text, e.g. `EACCES: permission denied`).
    pub fn read_failed(detail: &str) -> Failure {
        Failure::new(
            Code::ReadFailed,
            format!("could not read the memory store: {detail}. Nothing was changed."),
        )
    }

    /// `memory.write_failed` for an I/O error the driver hit while writing the store; the old
    /// store is still in place because writes go through a temp file and a rename.
    pub fn write_failed(detail: &str) -> Failure {
        Failure::new(
            Code::WriteFailed,
            format!(
                "could not write the memory store: {detail}. The previous store is unchanged; \
                 the fact was not saved."
            ),
        )
    }

    /// The tool answer: `{ "ok": false, "code": …, "message": … }`.
    pub fn to_json(&self) -> Value {
        json!({ "ok": false, "code": self.code.as_str(), "message": self.message })
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Failure {}

/// A short JSON rendering of a value for an error message (at most about 60 characters).
pub(crate) fn show(value: &Value) -> String {
    let text = value.to_string();
    ::text::clip(&text, 60)
}
