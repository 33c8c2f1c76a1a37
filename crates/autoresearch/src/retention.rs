//! Retention: what the cleanup at each run's start and end removes, decided from the tracker's
//! rows ([`plan`]), and the marks each removal leaves on the rows it keeps.
//!
//! Only an ended run whose lock is released is touched (a held lock is a live run, or a run
//! whose processes are not yet proven gone). Per run:
//! - its artifact files once the run ended `artifact_retention_days` ago, and those of its
//!   failed attempts at once without `retain_failed_artifacts`;
//! - its TSV export once the run ended `tsv_retention_days` ago;
//! - its worktree without `retain_worktrees`, or after `target-reached`/`budget-limited` with
//!   `cleanup_worktrees_on_success` (its branch and refs stay).
//!
//! A path is removed only when it is the one [`crate::layout`] gives that run, so a tampered row
//! can never point a removal outside the state directory. Files are removed before their rows
//! are marked: a crash in between leaves unmarked rows whose files are gone, and the next cleanup
//! removes (nothing) and marks them.

use crate::layout;
use crate::protocol::{Removed, RetentionArtifact, RetentionRows, Statement, Status};
use crate::spec::is_run_id;
use crate::sql;
use crate::state::RunState;

/// One day in milliseconds.
const DAY_MS: u64 = 86_400_000;

/// The row's retention keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Days an ended run's artifacts are kept.
    pub artifact_retention_days: u32,
    /// Keep the artifacts of failed attempts (false: removed as soon as their experiment ends).
    pub retain_failed_artifacts: bool,
    /// Keep an ended run's worktree.
    pub retain_worktrees: bool,
    /// Remove the worktree after `target-reached`/`budget-limited` even when keeping others.
    pub cleanup_worktrees_on_success: bool,
    /// Days an ended run's TSV export is kept.
    pub tsv_retention_days: u32,
}

/// One removal and the marks its success writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Artifact files and possibly the TSV export of one run.
    Files {
        /// The run.
        run_id: String,
        /// Absolute file paths.
        files: Vec<String>,
        /// Directories to remove when empty, deepest first.
        dirs: Vec<String>,
        /// The artifacts whose files these are.
        artifact_ids: Vec<String>,
        /// Whether the TSV export is among the files.
        tsv: bool,
    },
    /// One run's worktree.
    Worktree {
        /// The run.
        run_id: String,
        /// Absolute worktree path.
        path: String,
    },
}

impl Removal {
    /// The run it removes from.
    pub fn run_id(&self) -> &str {
        match self {
            Removal::Files { run_id, .. } | Removal::Worktree { run_id, .. } => run_id,
        }
    }

    /// The statements that mark its rows once it succeeded.
    pub fn marks(&self, now: u64) -> Vec<Statement> {
        match self {
            Removal::Files {
                run_id,
                artifact_ids,
                tsv,
                ..
            } => {
                let mut sts: Vec<Statement> = artifact_ids
                    .iter()
                    .map(|id| {
                        sql::MarkArtifactRemoved {
                            now: now.into(),
                            artifact_id: id.clone().into(),
                        }
                        .into()
                    })
                    .collect();
                if *tsv {
                    sts.push(
                        sql::MarkTsvRemoved {
                            now: now.into(),
                            run_id: run_id.clone().into(),
                        }
                        .into(),
                    );
                }
                sts
            }
            Removal::Worktree { run_id, .. } => vec![
                sql::MarkWorktreeRemoved {
                    now: now.into(),
                    run_id: run_id.clone().into(),
                }
                .into(),
            ],
        }
    }

    /// Records its success in what a run's result says was removed.
    pub fn record(&self, removed: &mut Removed) {
        match self {
            Removal::Files {
                artifact_ids, tsv, ..
            } => {
                removed.artifacts.extend(artifact_ids.iter().cloned());
                removed.tsv |= *tsv;
            }
            Removal::Worktree { .. } => removed.worktree = true,
        }
    }

    /// What it removes, for a warning when it fails.
    pub fn what(&self) -> String {
        match self {
            Removal::Files {
                run_id,
                artifact_ids,
                tsv,
                ..
            } => {
                let mut parts = Vec::new();
                if !artifact_ids.is_empty() {
                    parts.push(format!("{} artifact file(s)", artifact_ids.len()));
                }
                if *tsv {
                    parts.push("the TSV export".to_owned());
                }
                format!("{} of run {run_id}", parts.join(" and "))
            }
            Removal::Worktree { run_id, .. } => format!("the worktree of run {run_id}"),
        }
    }
}

/// Whether `ended_at` lies `days` or more before `now`.
fn expired(ended_at: i64, days: u32, now: u64) -> bool {
    let ended = u64::try_from(ended_at).unwrap_or(0);
    ended.saturating_add(u64::from(days) * DAY_MS) <= now
}

/// The removals due in `state_dir`'s tracker at `now`, run by run in the rows' order.
pub fn plan(
    rows: &RetentionRows,
    retention: &Retention,
    state_dir: &str,
    now: u64,
) -> Vec<Removal> {
    let mut out = Vec::new();
    for run in &rows.runs {
        let Some(status) = RunState::parse(&run.state).and_then(RunState::status) else {
            continue;
        };
        let Some(ended_at) = run.terminal_at else {
            continue;
        };
        if run.lock_held || !is_run_id(&run.run_id) {
            continue;
        }
        let artifacts_expired = expired(ended_at, retention.artifact_retention_days, now);
        let due: Vec<&RetentionArtifact> = rows
            .artifacts
            .iter()
            .filter(|a| a.run_id == run.run_id)
            .filter(|a| {
                artifacts_expired
                    || (!retention.retain_failed_artifacts && a.attempt_failure_code.is_some())
            })
            .collect();
        let tsv =
            run.tsv_removed_at.is_none() && expired(ended_at, retention.tsv_retention_days, now);
        out.extend(files_removal(state_dir, &run.run_id, &due, tsv));
        let success = matches!(status, Status::TargetReached | Status::BudgetLimited);
        let worktree_due =
            !retention.retain_worktrees || (retention.cleanup_worktrees_on_success && success);
        let path = layout::worktree_path(state_dir, &run.run_id);
        if worktree_due && run.worktree_removed_at.is_none() && run.worktree == path {
            out.push(Removal::Worktree {
                run_id: run.run_id.clone(),
                path,
            });
        }
    }
    out
}

/// The removal of `artifacts` (all of run `run_id`) and, with `tsv`, of its TSV export; `None`
/// when there is nothing to remove. An artifact whose location is not its attempt's own file in
/// `state_dir` is left alone.
pub fn files_removal(
    state_dir: &str,
    run_id: &str,
    artifacts: &[&RetentionArtifact],
    tsv: bool,
) -> Option<Removal> {
    let mut files = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    let mut artifact_ids = Vec::new();
    for a in artifacts {
        let dir = layout::attempt_artifacts_dir(state_dir, run_id, &a.attempt_id);
        let own = layout::ARTIFACT_FILES
            .iter()
            .any(|name| a.location == format!("{dir}/{name}"));
        if a.run_id != run_id
            || !own
            || a.attempt_id.contains(['/', '\0'])
            || a.attempt_id.starts_with('.')
        {
            continue;
        }
        files.push(a.location.clone());
        artifact_ids.push(a.artifact_id.clone());
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    if !artifact_ids.is_empty() {
        dirs.push(layout::run_artifacts_dir(state_dir, run_id));
    }
    if tsv {
        files.push(layout::tsv_path(state_dir, run_id));
    }
    if files.is_empty() {
        return None;
    }
    Some(Removal::Files {
        run_id: run_id.to_owned(),
        files,
        dirs,
        artifact_ids,
        tsv,
    })
}

#[cfg(test)]
mod tests;
