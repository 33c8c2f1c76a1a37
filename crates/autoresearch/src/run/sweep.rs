//! The retention cleanup inside a run: the sweep of the repository's ended runs at the start and
//! the end ([`crate::retention::plan`] decides), and the removal of this run's failed attempts'
//! artifacts once their experiment ended. Each removal is one effect; the marks of those that
//! succeeded are written together afterwards.

use super::Run;
use super::bus::{Await, Then};
use super::sweeping::Sweep;
use crate::layout;
use crate::protocol::{Effect, RetentionRows};
use crate::retention::{self, Removal};

impl Run {
    /// The state directory, as the tracker's path names it.
    pub(super) fn state_dir(&self) -> &str {
        self.place
            .tracker
            .strip_suffix(layout::TRACKER_FILE)
            .map_or(self.place.tracker.as_str(), |dir| dir.trim_end_matches('/'))
    }

    pub(super) fn sweep(&mut self, at: Sweep) {
        self.emit(|id| Effect::LoadRetention { id }, Await::Retention(at));
    }

    pub(super) fn on_retention(&mut self, at: Sweep, rows: &RetentionRows) {
        let plan = retention::plan(rows, &self.settings.retention, self.state_dir(), self.now);
        self.sweeping.queue.extend(plan);
        self.next_removal(at);
    }

    /// Performs the next removal, or writes the marks once none is left.
    pub(super) fn next_removal(&mut self, at: Sweep) {
        let Some(step) = self.sweeping.queue.front().cloned() else {
            let statements = std::mem::take(&mut self.sweeping.marks);
            if statements.is_empty() {
                return self.swept(at);
            }
            return self.emit(|id| Effect::Persist { id, statements }, Await::Marks(at));
        };
        match step {
            Removal::Files { files, dirs, .. } => self.emit(
                |id| Effect::RemoveFiles { id, files, dirs },
                Await::Removal(at),
            ),
            Removal::Worktree { path, .. } => {
                self.emit(|id| Effect::RemoveWorktree { id, path }, Await::Removal(at))
            }
        }
    }

    /// A removal's answer: its marks are kept for the write, a failure becomes a warning (the
    /// next cleanup tries again).
    pub(super) fn on_removal(&mut self, at: Sweep, error: Option<String>) {
        let Some(step) = self.sweeping.queue.pop_front() else {
            return self.swept(at);
        };
        match error {
            None => {
                self.sweeping.marks.extend(step.marks(self.now));
                if step.run_id() == self.place.run_id {
                    step.record(&mut self.sweeping.removed);
                }
            }
            Some(e) => self
                .ending
                .warnings
                .push(format!("retention could not remove {}: {e}", step.what())),
        }
        self.next_removal(at);
    }

    /// The cleanup is over: go on where it began.
    pub(super) fn swept(&mut self, at: Sweep) {
        match at {
            Sweep::Start => self.after_open(),
            Sweep::FailedAttempts => self.advance(Then::Ready),
            Sweep::End => self.report(),
        }
    }
}
