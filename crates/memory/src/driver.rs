//! The entry points a driver calls with what it found: the store file's bytes (not yet text:
//! bytes that are not UTF-8 are `memory.corrupt`, never decoded lossily and written back), its
//! stat numbers and the time.
//!
//! Each edit and each people-CLI read answers a [`Reply`] (the text to write or print, and the
//! answer) or the [`Failure`] whose [`Failure::to_json`] is the answer; then nothing is written.

use crate::args::parse_save_args;
use crate::cli;
use crate::edit::{ImportPolicy, apply_save};
use crate::failure::{Code, Failure};
use crate::stats::{StatsInput, display_path};
use crate::store::text_of;
use crate::time::UnixMillis;
use serde_json::{Value, json};

/// What an edit writes (or a CLI read prints), and the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// The new store text, or the CLI's output.
    pub text: String,
    /// `{ ok: true, … }`.
    pub answer: Value,
}

fn current_text(current: Option<&[u8]>) -> Result<Option<&str>, Failure> {
    current.map(text_of).transpose()
}

/// `memory_save` under the lock: the tool arguments, the current store's bytes (`None`: no
/// file), the time and the repository root of the agent's working directory (`None`: none)
/// → the new text and the answer, or the refusal (invalid arguments, corrupt store, another
/// schema version).
pub fn save(
    args: &Value,
    current: Option<&[u8]>,
    now: UnixMillis,
    project: Option<&str>,
) -> Result<Reply, Failure> {
    let args = parse_save_args(args)?;
    let saved = apply_save(current_text(current)?, &args, now, project)?;
    let answer = saved.answer();
    Ok(Reply {
        text: saved.text,
        answer,
    })
}

/// Whether a write may replace the store file whose permission bits are `mode` (`stat`'s
/// `mode & 0o777`): a file nobody may write (`0444`, `chmod a-w`) was made read-only on purpose,
/// so a save refuses it instead of renaming a new file over it. `None`: writable.
pub fn refuse_read_only(mode: u32) -> Option<Failure> {
    (mode & 0o222 == 0).then(|| {
        Failure::new(
            Code::ReadOnly,
            format!(
                "the memory store is read-only (mode {:04o}), so nothing was saved. Someone made \
                 it read-only on purpose; give it write permission again (chmod u+w) to save.",
                mode & 0o7777
            ),
        )
    })
}

/// People CLI `forget <id>` under the lock.
pub fn forget(current: Option<&[u8]>, id: &str) -> Result<Reply, Failure> {
    let gone = cli::forget(current_text(current)?, id)?;
    let answer = gone.answer(id);
    Ok(Reply {
        text: gone.text,
        answer,
    })
}

/// People CLI `import FILE [--policy newer|overwrite|keep]` under the lock: `incoming` is the
/// file's bytes, `policy` the option's value.
pub fn import(current: Option<&[u8]>, incoming: &[u8], policy: &str) -> Result<Reply, Failure> {
    let policy = ImportPolicy::parse(policy)?;
    let incoming = text_of(incoming)
        .map_err(|_| Failure::new(Code::Invalid, "the file to import is not UTF-8 text"))?;
    let imported = cli::import(current_text(current)?, incoming, policy)?;
    let answer = imported.answer();
    Ok(Reply {
        text: imported.text,
        answer,
    })
}

/// People CLI `list`: the lines to print.
pub fn list(current: Option<&[u8]>) -> Result<Reply, Failure> {
    cli_read(current, cli::list)
}

/// People CLI `show <id>`: the fact as indented JSON.
pub fn show(current: Option<&[u8]>, id: &str) -> Result<Reply, Failure> {
    cli_read(current, |text| cli::show(text, id))
}

/// People CLI `export`: the whole store in its canonical form.
pub fn export(current: Option<&[u8]>) -> Result<Reply, Failure> {
    cli_read(current, cli::export)
}

fn cli_read(
    current: Option<&[u8]>,
    read: impl FnOnce(Option<&str>) -> Result<String, Failure>,
) -> Result<Reply, Failure> {
    let text = current_text(current).and_then(read)?;
    Ok(Reply {
        text,
        answer: json!({ "ok": true }),
    })
}

/// `memory_stats` from the driver's findings: the store's absolute path, `DSH_HOME` (only when
/// the home came from it) and the OS home (for the displayed path), the file's bytes (`None`: no
/// file), its size, its mtime and the lock file's age (`None`: no lock). A store that is not
/// UTF-8 answers `memory.corrupt` with the displayed path and the size.
pub fn stats(
    path: &str,
    dsh_home_env: Option<&str>,
    home: Option<&str>,
    bytes: Option<&[u8]>,
    size: u64,
    modified: Option<UnixMillis>,
    lock_age_ms: Option<u64>,
) -> Value {
    let text = match bytes.map(text_of).transpose() {
        Ok(text) => text,
        Err(failure) => {
            let mut v = failure.to_json();
            v["path"] = json!(display_path(path, dsh_home_env, home));
            v["bytes"] = json!(size);
            return v;
        }
    };
    crate::stats::stats(&StatsInput {
        path,
        dsh_home_env,
        home,
        text,
        bytes: size,
        modified,
        lock_age_ms,
    })
}

#[cfg(test)]
mod tests;
