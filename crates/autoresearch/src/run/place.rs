//! Where the run lives: its id, the repository and its facts, the tracker, the run's worktree and
//! branch, and the commit it started from.

use crate::protocol::{RepoFacts, StoredRun};

pub(super) struct Place {
    pub(super) run_id: String,
    /// The repository the spec named (discovery starts there).
    pub(super) repository: Option<String>,
    /// What discovery found.
    pub(super) facts: Option<RepoFacts>,
    pub(super) repository_id: String,
    pub(super) tracker: String,
    pub(super) worktree: String,
    pub(super) branch: String,
    pub(super) start_commit: String,
    /// The run's worktree exists.
    pub(super) worktree_ready: bool,
}

impl Place {
    pub(super) fn new(run_id: &str, repository: Option<String>) -> Place {
        Place {
            run_id: run_id.to_owned(),
            repository,
            facts: None,
            repository_id: String::new(),
            tracker: String::new(),
            worktree: String::new(),
            branch: String::new(),
            start_commit: String::new(),
            worktree_ready: false,
        }
    }

    /// The worktree, branch and start commit a stored run recorded.
    pub(super) fn load(&mut self, r: &StoredRun) {
        self.branch = r.branch.clone();
        self.worktree = r.worktree.clone();
        self.start_commit = r.start_commit.clone();
    }
}
