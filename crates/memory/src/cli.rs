//! Pure helpers for the people CLI the driver exposes (`list`, `show`, `forget`, `export`,
//! `import`). Each takes the store text (`None`: no file) and returns what to print or write.
//! `recall` is answered by `memory_recall` itself ([`crate::index::Index::recall`]: the same
//! ranking and filters); [`recall_lines`] only lays its answer out for a person.

use crate::failure::{Code, Failure};
use crate::store::Store;
use serde_json::Value;

pub use crate::edit::{ImportPolicy, Imported, SkipReason, forget, import};

fn read(text: Option<&str>) -> Result<Store, Failure> {
    text.map_or_else(|| Ok(Store::empty()), Store::parse)
}

/// One line per fact, `id  timestamp  statement` (statement cut at 80 characters), in file order,
/// then a count line.
pub fn list(text: Option<&str>) -> Result<String, Failure> {
    let store = read(text)?;
    let width = store
        .facts
        .iter()
        .map(|f| f.id.chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    let mut out = String::new();
    for f in &store.facts {
        let ts = if f.timestamp.is_empty() {
            "-"
        } else {
            f.timestamp.as_str()
        };
        let mut marks = String::new();
        if let Some(by) = f.superseded_by() {
            marks.push_str(&format!("  [superseded by {by}]"));
        }
        if let Some(project) = f.project() {
            marks.push_str(&format!("  [project {project}]"));
        }
        out.push_str(&format!(
            "{:<width$}  {:<24}  {}{marks}\n",
            f.id,
            ts,
            ::text::clip(&f.statement.replace('\n', " "), 80)
        ));
    }
    let superseded = store
        .facts
        .iter()
        .filter(|f| f.superseded_by().is_some())
        .count();
    out.push_str(&format!("{} facts", store.facts.len()));
    if superseded > 0 {
        out.push_str(&format!(" ({superseded} superseded)"));
    }
    out.push('\n');
    Ok(out)
}

/// The fact `id` as indented JSON (all its fields), or `memory.not_found`.
pub fn show(text: Option<&str>, id: &str) -> Result<String, Failure> {
    let store = read(text)?;
    let id = id.trim();
    let fact = store.facts.iter().find(|f| f.id == id).ok_or_else(|| {
        Failure::new(
            Code::NotFound,
            format!("no fact has the id {}", Value::from(id)),
        )
    })?;
    let mut s = serde_json::to_string_pretty(&Value::Object(fact.to_json())).unwrap_or_default();
    s.push('\n');
    Ok(s)
}

/// The whole store in its canonical form (as a save would write it); validates it on the way.
pub fn export(text: Option<&str>) -> Result<String, Failure> {
    Ok(read(text)?.to_text())
}

/// A `memory_recall` success answer for a person: one line per fact (`score  id  statement`,
/// the score blank when listing, the statement on one line cut at 100 characters), then how many
/// of how many matched and the answer's note, if any.
pub fn recall_lines(answer: &Value) -> String {
    let facts = answer["facts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let width = facts
        .iter()
        .map(|f| f["id"].as_str().unwrap_or_default().chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    let mut out = String::new();
    for f in facts {
        let score = f["score"]
            .as_f64()
            .map_or(String::new(), |s| format!("{s:.3}"));
        let statement = f["statement"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        out.push_str(&format!(
            "{score:>7}  {:<width$}  {}\n",
            f["id"].as_str().unwrap_or_default(),
            ::text::clip(&statement, 100)
        ));
    }
    let offset = answer["offset"].as_u64().unwrap_or(0);
    let total = answer["total"].as_u64().unwrap_or(0);
    out.push_str(&format!("{} of {total} matching", facts.len()));
    if offset > 0 {
        out.push_str(&format!(" (from {offset})"));
    }
    out.push('\n');
    if let Some(note) = answer["note"].as_str() {
        out.push_str(note);
        out.push('\n');
    }
    out
}
