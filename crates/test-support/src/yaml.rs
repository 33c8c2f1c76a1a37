//! YAML read as DSH reads it: the js-yaml and the schema (`entryListSchema`: js-yaml's
//! `JSON_SCHEMA` plus `!!js` as `{"__jsExpr": …}`) of the dsh installed in `.cache/dsh`, run by
//! `yaml.mjs`, with the position of every value and key. What DSH refuses at parse time is what
//! this refuses, in js-yaml's words.

use crate::toolchain::Toolchain;
use crate::util::root;
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};

const SCRIPT: &str = include_str!("yaml.mjs");

/// A line and a column, both from 1 (columns count characters).
pub type LineCol = (usize, usize);

/// What js-yaml made of a text.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Read {
    /// js-yaml's first error: DSH stops at it too.
    Refused {
        /// Where and why.
        error: Refusal,
    },
    /// A value (`document` is false for an empty or comments-only text).
    Parsed {
        /// Whether the text holds a document at all.
        document: bool,
        /// The document (`null` without one).
        value: Value,
        /// Where the value at each JSON Pointer starts.
        values: HashMap<String, LineCol>,
        /// Where the key of the member at each JSON Pointer starts.
        keys: HashMap<String, LineCol>,
    },
}

/// js-yaml's error.
#[derive(Debug, Deserialize)]
pub struct Refusal {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
    /// js-yaml's reason.
    pub reason: String,
}

/// Reads `text` with dsh's js-yaml (dsh must be installed: `Toolchain` and `.cache/dsh/app`).
pub fn read(toolchain: &Toolchain, text: &str) -> Result<Read> {
    let app = root().join(".cache/dsh/app/package.json");
    let mut child = Command::new(toolchain.node())
        .args(["--input-type=module", "-e", SCRIPT])
        .arg(&app)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting node to read YAML")?;
    child
        .stdin
        .take()
        .context("node's stdin")?
        .write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "reading YAML with dsh's js-yaml failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("yaml.mjs's reply")
}

/// The value of a YAML text DSH accepts; an error with js-yaml's reason otherwise.
pub fn value(toolchain: &Toolchain, text: &str) -> Result<Value> {
    match read(toolchain, text)? {
        Read::Parsed { value, .. } => Ok(value),
        Read::Refused { error } => bail!(
            "js-yaml refuses the YAML at {}:{}: {}",
            error.line,
            error.col,
            error.reason
        ),
    }
}
