//! Pure helpers for the people CLI the driver exposes (`list`, `show`, `forget`, `export`,
//! `import`). Each takes the store text (`None`: no file) and returns what to print or write.

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
