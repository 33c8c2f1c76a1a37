//! The headless runner's `list`: the repository's runs (rows as `crate::sql::LIST_RUNS` returns them, newest
//! first) as a table, TSV or JSON lines.

use crate::escape::{escape_controls, escape_inline};
use crate::run::RunState;
use serde_json::{Map, Value, json};

/// Renders `list`'s rows (from `listRuns`, newest first) as a table, TSV or JSON lines. Tracker
/// text (a tag, the original's rows too) is shown with controls, line breaks and bidi overrides
/// escaped, so a cell stays one cell; JSON lines escape controls as JSON does.
pub fn render(rows: &[Map<String, Value>], format: &str) -> Result<String, String> {
    let cell = |r: &Map<String, Value>, k: &str| -> String {
        match r.get(k) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => escape_inline(s),
            Some(Value::Number(n)) if k.ends_with("metric") => {
                n.as_f64().map(crate::jcs::number).unwrap_or_default()
            }
            Some(v) => v.to_string(),
        }
    };
    let original = |r: &Map<String, Value>| cell(r, "origin") == "original";
    let live = |r: &Map<String, Value>| match original(r) {
        true => cell(r, "lock_held") == "1",
        false => RunState::parse(&cell(r, "state")).is_some_and(|s| !s.is_terminal()),
    };
    let mut out = String::new();
    match format {
        "json" => {
            for r in rows {
                let mut r = r.clone();
                let lock =
                    matches!(r.get("lock_held"), Some(Value::Number(n)) if n.as_i64() == Some(1));
                r.insert("lock_held".into(), json!(lock));
                out.push_str(&escape_controls(&Value::Object(r).to_string()));
                out.push('\n');
            }
        }
        "tsv" => {
            let cols = [
                "run_id",
                "run_tag",
                "state",
                "metric_name",
                "metric_direction",
                "baseline_metric",
                "best_metric",
                "candidates",
                "lock_held",
                "branch",
                "created_at",
                "updated_at",
                "origin",
            ];
            out.push_str(&cols.join("\t"));
            out.push('\n');
            for r in rows {
                let line: Vec<String> = cols.iter().map(|c| cell(r, c)).collect();
                out.push_str(&line.join("\t"));
                out.push('\n');
            }
        }
        "table" => {
            if rows.is_empty() {
                return Ok("no autoresearch runs in this repository\n".into());
            }
            out.push_str(&format!(
                "{:<36}  {:<16}  {:<18}  {:>10}  {:>10}  {:>5}  {}\n",
                "run id", "tag", "state", "baseline", "best", "cands", "metric"
            ));
            for r in rows {
                let metric = match original(r) {
                    true => "the original dsh-autoresearch's run".to_owned(),
                    false => format!(
                        "{} ({})",
                        cell(r, "metric_name"),
                        cell(r, "metric_direction")
                    ),
                } + if live(r) { ", not finished" } else { "" };
                out.push_str(&format!(
                    "{:<36}  {:<16}  {:<18}  {:>10}  {:>10}  {:>5}  {}\n",
                    cell(r, "run_id"),
                    text::clip_within(&cell(r, "run_tag"), 16),
                    cell(r, "state"),
                    or_dash(cell(r, "baseline_metric")),
                    or_dash(cell(r, "best_metric")),
                    cell(r, "candidates"),
                    metric
                ));
            }
        }
        other => return Err(format!("unknown format {other:?} (use table, tsv or json)")),
    }
    Ok(out)
}

fn or_dash(s: String) -> String {
    if s.is_empty() { "-".into() } else { s }
}
