//! Where a repository's autoresearch state lives: under `<git common dir>/<state_root>`, the
//! tracker, each run's worktree, its evaluator artifacts and its TSV export. One source for every
//! path the core names, and for the paths retention may remove; and the ref that keeps each
//! candidate commit.

/// The run's state directory: `<git common dir>/<state_root>`.
pub fn state_dir(git_common_dir: &str, state_root: &str) -> String {
    format!("{}/{state_root}", git_common_dir.trim_end_matches('/'))
}

/// The repository's tracker database: `<git common dir>/<state_root>/tracker.sqlite`.
pub fn tracker_path(git_common_dir: &str, state_root: &str) -> String {
    format!("{}/{TRACKER_FILE}", state_dir(git_common_dir, state_root))
}

/// The tracker's file name in the state directory.
pub const TRACKER_FILE: &str = "tracker.sqlite";

/// A run's worktree.
pub fn worktree_path(state_dir: &str, run_id: &str) -> String {
    format!("{state_dir}/worktrees/{run_id}")
}

/// The scratch worktree of a run's slot `slot` > 0 under `parallelism` (slot 0 works in the run's
/// own worktree).
pub fn slot_worktree_path(worktree: &str, slot: u32) -> String {
    format!("{worktree}-slot-{slot}")
}

/// The directory of a run's evaluator artifacts.
pub fn run_artifacts_dir(state_dir: &str, run_id: &str) -> String {
    format!("{state_dir}/artifacts/{run_id}")
}

/// The directory of one attempt's artifacts (`stdout.log`, `stderr.log`).
pub fn attempt_artifacts_dir(state_dir: &str, run_id: &str, attempt_id: &str) -> String {
    format!("{}/{attempt_id}", run_artifacts_dir(state_dir, run_id))
}

/// The file names an attempt's artifacts may have.
pub const ARTIFACT_FILES: [&str; 2] = ["stdout.log", "stderr.log"];

/// A run's TSV export.
pub fn tsv_path(state_dir: &str, run_id: &str) -> String {
    format!("{state_dir}/exports/{run_id}.tsv")
}

/// The ref namespace of a run's candidate commits.
pub fn run_refs(run_id: &str) -> String {
    format!("refs/autoresearch/{run_id}/")
}

/// The ref that keeps one candidate's commit: `refs/autoresearch/<run_id>/candidate-<ordinal>`.
/// Like the run branch it is never removed: every diff the tracker names stays in git.
pub fn candidate_ref(run_id: &str, ordinal: u32) -> String {
    format!("{}candidate-{ordinal}", run_refs(run_id))
}
