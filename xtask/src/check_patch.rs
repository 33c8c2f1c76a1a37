//! `cargo xtask check-patch FILE...`: checks DSH patch files (`cordis.patch.yml`) the way DSH
//! reads them and against `schema/cordis.patch.schema.json`, printing `FILE:LINE:COL: message`.
//!
//! The file is read by DSH's own js-yaml and schema ([`test_support::yaml`]), so what DSH refuses
//! at parse time fails here too, in js-yaml's words: YAML errors, unknown tags, duplicated keys;
//! then an empty file, a top level that is not a list, an entry that is not a mapping. The parsed
//! value (with `!!js` scalars as the `{"__jsExpr": …}` objects DSH builds) is validated with the
//! `jsonschema` crate, and each error is placed at the line of the value (or key) it is about.
//!
//! The fixtures in `xtask/fixtures/patch/` carry their expected diagnostics as trailing comments
//! (`# expect-check: <part of the message>`, `# expect-ls: …` for `cargo xtask editor-test`);
//! `good-*.yml` files expect none. [`ci`] checks them and the bundle's own `cordis.patch.yml`.

use crate::dsh;
use crate::schema;
use crate::util::{rel, root};
use anyhow::{Context, Result, bail};
use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use test_support::toolchain::Toolchain;
use test_support::yaml::{self, Read};

/// Fixture patch files, relative to the workspace root.
pub const FIXTURES: &str = "xtask/fixtures/patch";

/// Longest message printed, in characters (schema messages quote the offending value).
const MESSAGE_MAX_CHARS: usize = 240;

/// The validator for `schema/cordis.patch.schema.json` as committed.
pub fn validator() -> Result<Validator> {
    let path = root().join("schema").join(schema::PATCH_SCHEMA);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", rel(&path)))?;
    let schema: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", rel(&path)))?;
    jsonschema::draft7::new(&schema)
        .map_err(|e| anyhow::anyhow!("{} is not a valid draft-07 schema: {e}", rel(&path)))
}

/// A line and column, both 1-based (columns count characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub col: usize,
}

/// One problem in a patch file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// Where it is.
    pub pos: Pos,
    /// What is wrong, naming the rule.
    pub message: String,
}

impl Diagnostic {
    fn at((line, col): (usize, usize), message: impl Into<String>) -> Self {
        Diagnostic {
            pos: Pos { line, col },
            message: message.into(),
        }
    }
}

/// Every problem in a patch file's text, in file order.
pub fn check(text: &str, validator: &Validator, toolchain: &Toolchain) -> Result<Vec<Diagnostic>> {
    let (value, values, keys) = match yaml::read(toolchain, text)? {
        Read::Refused { error } => {
            return Ok(vec![Diagnostic::at(
                (error.line, error.col),
                format!(
                    "DSH's YAML reader (js-yaml) refuses the file: {} [DSH]",
                    error.reason
                ),
            )]);
        }
        Read::Parsed {
            document: false, ..
        } => {
            return Ok(vec![Diagnostic::at(
                (1, 1),
                "the file holds no YAML document (it is empty or only comments); DSH rejects it: a patch file must be a top-level YAML array of loader patch entries (write `[]` for none) [DSH]",
            )]);
        }
        Read::Parsed {
            value,
            values,
            keys,
            ..
        } => (value, values, keys),
    };
    Ok(diagnose(&value, &values, &keys, validator))
}

/// The file-level and schema problems of a parsed patch file.
fn diagnose(
    root: &Value,
    values: &HashMap<String, (usize, usize)>,
    keys: &HashMap<String, (usize, usize)>,
    validator: &Validator,
) -> Vec<Diagnostic> {
    let position = |pointer: &str| values.get(pointer).copied().unwrap_or((1, 1));
    let Value::Array(entries) = root else {
        return vec![Diagnostic::at(
            position(""),
            format!(
                "DSH rejects the file: a patch file must be a top-level YAML array of loader patch entries (got {}) [DSH]",
                kind_of(root)
            ),
        )];
    };

    let mut diagnostics = Vec::new();
    let mut not_entries = HashSet::new();
    for (index, entry) in entries.iter().enumerate() {
        if !entry.is_object() {
            let pointer = format!("/{index}");
            diagnostics.push(Diagnostic::at(
                position(&pointer),
                format!(
                    "DSH rejects the file: entry {} must be a mapping (a loader patch entry), got {} [DSH]",
                    index + 1,
                    kind_of(entry)
                ),
            ));
            not_entries.insert(pointer);
        }
    }
    for error in validator.iter_errors(root) {
        let pointer = error.instance_path().as_str().to_owned();
        if not_entries.contains(&pointer) {
            continue;
        }
        let keyword = error.kind().keyword().to_owned();
        let rule = format!(
            "[{keyword} at {}]",
            if pointer.is_empty() { "/" } else { &pointer }
        );
        if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() {
            for key in unexpected {
                let member = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                let pos = keys
                    .get(&member)
                    .copied()
                    .unwrap_or_else(|| position(&pointer));
                diagnostics.push(Diagnostic::at(
                    pos,
                    format!(
                        "{key:?} is not allowed here (additional properties are not allowed) {rule}"
                    ),
                ));
            }
            continue;
        }
        diagnostics.push(Diagnostic::at(
            position(&pointer),
            format!("{} {rule}", message(&error)),
        ));
    }
    diagnostics.sort();
    diagnostics.dedup();
    diagnostics
}

/// The schema's message, with a hint for a `!!js` value where DSH does not evaluate one.
fn message(error: &ValidationError<'_>) -> String {
    let text = text::clip(&error.to_string(), MESSAGE_MAX_CHARS);
    let is_js = error
        .instance()
        .as_object()
        .is_some_and(|object| object.len() == 1 && object.contains_key(config::JS_EXPR_KEY));
    if is_js && matches!(error.kind(), ValidationErrorKind::Type { .. }) {
        format!(
            "a !!js expression is not evaluated here (DSH evaluates them only inside `config` and in `disabled`): {text}"
        )
    } else {
        text
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// `cargo xtask check-patch [--dump] FILE...` or `cargo xtask check-patch --fixtures`.
pub fn run(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask check-patch [--dump] FILE... | --fixtures\n  FILE: a patch file in DSH's cordis.patch.yml format\n  --dump: print the value DSH parses from each file instead\n  --fixtures: check cordis.patch.yml and the fixtures in xtask/fixtures/patch (the ci step)";
    if args == ["--fixtures"] {
        return ci();
    }
    if let Some(files) = args.strip_prefix(&["--dump".to_owned()]) {
        if files.is_empty() {
            bail!(USAGE);
        }
        return dump(files);
    }
    if args.is_empty() || args.iter().any(|a| a.starts_with('-')) {
        bail!(USAGE);
    }
    let validator = validator()?;
    let toolchain = dsh::ensure()?;
    let mut failed = 0;
    let mut total = 0;
    for arg in args {
        let text = std::fs::read_to_string(arg).with_context(|| format!("reading {arg}"))?;
        let diagnostics = check(&text, &validator, &toolchain)?;
        if diagnostics.is_empty() {
            println!("{arg}: ok");
            continue;
        }
        failed += 1;
        total += diagnostics.len();
        for d in &diagnostics {
            println!("{arg}:{}:{}: {}", d.pos.line, d.pos.col, d.message);
        }
    }
    if failed > 0 {
        bail!(
            "{total} problem(s) in {failed} of {} patch file(s)",
            args.len()
        );
    }
    Ok(())
}

/// `--dump`: each file's parsed value as one line of JSON (`!!js` as `{"__jsExpr": …}`), or
/// js-yaml's refusal.
fn dump(files: &[String]) -> Result<()> {
    let toolchain = dsh::ensure()?;
    let mut failed = false;
    for file in files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
        match yaml::read(&toolchain, &text)? {
            Read::Parsed {
                document: true,
                value,
                ..
            } => println!("{file}: {value}"),
            Read::Parsed { .. } => println!("{file}: (no document)"),
            Read::Refused { error } => {
                failed = true;
                println!("{file}:{}:{}: {}", error.line, error.col, error.reason);
            }
        }
    }
    if failed {
        bail!("some files do not parse");
    }
    Ok(())
}

/// What a fixture's `# expect-<engine>: <text>` comments expect: (line, part of the message).
pub fn expectations(text: &str, engine: &str) -> Vec<(usize, String)> {
    let marker = format!("# expect-{engine}:");
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find(&marker) {
            let after = &rest[at + marker.len()..];
            let end = after.find("# expect-").unwrap_or(after.len());
            out.push((index + 1, after[..end].trim().to_owned()));
            rest = &after[end..];
        }
    }
    out
}

/// Compares diagnostics (line, message) with expectations: each expectation needs its own
/// diagnostic on that line whose message contains the text; nothing else may be reported.
/// Returns the mismatches, one per line of text.
pub fn mismatches(expected: &[(usize, String)], got: &[(usize, String)]) -> Vec<String> {
    let mut used = vec![false; got.len()];
    let mut out = Vec::new();
    for (line, part) in expected {
        let found = got
            .iter()
            .enumerate()
            .find(|(i, (l, message))| !used[*i] && l == line && message.contains(part.as_str()));
        match found {
            Some((i, _)) => used[i] = true,
            None => out.push(format!(
                "line {line}: expected a diagnostic containing {part:?}"
            )),
        }
    }
    for (i, (line, message)) in got.iter().enumerate() {
        if !used[i] {
            out.push(format!("line {line}: unexpected diagnostic: {message}"));
        }
    }
    out
}

/// The fixture files, sorted.
pub fn fixtures() -> Result<Vec<PathBuf>> {
    let files = crate::util::files_with_suffix(&root().join(FIXTURES), ".yml")?;
    if files.is_empty() {
        bail!("no fixtures in {FIXTURES}");
    }
    for file in &files {
        let name = file_name(file);
        if !name.starts_with("good-") && !name.starts_with("bad-") {
            bail!(
                "fixture {} must be named good-*.yml or bad-*.yml",
                rel(file)
            );
        }
    }
    Ok(files)
}

/// A path's file name, for messages.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Checks a fixture's expectations for one engine; `good-*` files must expect nothing and
/// `bad-*` files something.
pub fn expectations_of_fixture(
    path: &Path,
    text: &str,
    engine: &str,
) -> Result<Vec<(usize, String)>> {
    let expected = expectations(text, engine);
    let name = file_name(path);
    if name.starts_with("good-") && !expected.is_empty() {
        bail!("{}: a good-* fixture cannot expect diagnostics", rel(path));
    }
    if name.starts_with("bad-") && expectations(text, "check").is_empty() {
        bail!(
            "{}: a bad-* fixture must expect check-patch diagnostics",
            rel(path)
        );
    }
    Ok(expected)
}

/// The `check-patch` step of `cargo xtask ci`: the family's and every package's
/// `cordis.patch.yml` pass, every
/// `good-*` fixture passes, every `bad-*` fixture fails with exactly its expected diagnostics.
pub fn ci() -> Result<()> {
    let validator = validator()?;
    let toolchain = dsh::ensure()?;
    let mut files = schema::patch_files();
    files.extend(fixtures()?);
    let mut failures = Vec::new();
    for path in &files {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", rel(path)))?;
        let expected = expectations_of_fixture(path, &text, "check")?;
        let diagnostics = check(&text, &validator, &toolchain)?;
        let got: Vec<(usize, String)> = diagnostics
            .iter()
            .map(|d| (d.pos.line, d.message.clone()))
            .collect();
        let problems = mismatches(&expected, &got);
        println!(
            "check-patch: {}: {} diagnostic(s), {} expected{}",
            rel(path),
            got.len(),
            expected.len(),
            if problems.is_empty() {
                ""
            } else {
                " — MISMATCH"
            }
        );
        for d in &diagnostics {
            println!("  {}:{}: {}", d.pos.line, d.pos.col, d.message);
        }
        for problem in problems {
            failures.push(format!("{}: {problem}", rel(path)));
        }
    }
    if !failures.is_empty() {
        bail!(
            "check-patch fixtures do not match:\n  {}",
            failures.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_are_read_from_trailing_comments() {
        let text = "a: 1 # expect-check: minimum # expect-ls: below\nb: 2\n# expect-check: x # expect-check: y\n";
        assert_eq!(
            expectations(text, "check"),
            vec![(1, "minimum".into()), (3, "x".into()), (3, "y".into())]
        );
        assert_eq!(expectations(text, "ls"), vec![(1, "below".into())]);
        let got = vec![
            (1, "0 is less than the minimum".to_owned()),
            (2, "other".to_owned()),
        ];
        assert_eq!(
            mismatches(&expectations(text, "check"), &got),
            vec![
                "line 3: expected a diagnostic containing \"x\"",
                "line 3: expected a diagnostic containing \"y\"",
                "line 2: unexpected diagnostic: other",
            ]
        );
    }
}
