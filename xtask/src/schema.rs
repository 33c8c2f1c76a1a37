//! `cargo xtask schema [--check]`: the config JSON Schema, generated from the config crate.

use crate::util::{rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::PathBuf;

/// The committed schema file.
pub fn schema_path() -> PathBuf {
    root()
        .join("schema")
        .join("research-nudge.config.schema.json")
}

/// `cargo xtask schema [--check]`.
pub fn run(args: &[String]) -> Result<()> {
    let mut check = false;
    for arg in args {
        match arg.as_str() {
            "--check" => check = true,
            other => bail!("`cargo xtask schema` takes only `--check` (got `{other}`)"),
        }
    }
    let path = schema_path();
    let schema: Value = config::json_schema();
    let mut text = serde_json::to_string_pretty(&schema).context("serializing the schema")?;
    text.push('\n');
    let on_disk = std::fs::read_to_string(&path).ok();

    if check {
        return match on_disk {
            Some(current) if current == text => {
                println!("schema: {} is up to date", rel(&path));
                Ok(())
            }
            Some(_) => bail!(
                "{} is stale: it differs from research_nudge_config::json_schema(); run `cargo xtask schema` and commit the result",
                rel(&path)
            ),
            None => bail!(
                "{} is missing; run `cargo xtask schema` and commit the result",
                rel(&path)
            ),
        };
    }

    if on_disk.as_deref() == Some(text.as_str()) {
        println!("schema: {} is unchanged", rel(&path));
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", rel(dir)))?;
    }
    std::fs::write(&path, text).with_context(|| format!("writing {}", rel(&path)))?;
    println!("schema: wrote {}", rel(&path));
    Ok(())
}
