//! What is durable: the run state as the machine last wrote it and as the tracker has it, whether
//! the run row exists, the repository lock, and statements carried into the next transaction.

use crate::protocol::Statement;
use crate::state::RunState;

pub(super) struct Durability {
    /// The run state as last written (ahead of `durable` while a write is outstanding).
    pub(super) state: RunState,
    /// The run state the tracker has.
    pub(super) durable: RunState,
    /// The run row exists.
    pub(super) run_persisted: bool,
    pub(super) lock_held: bool,
    pub(super) tracker_open: bool,
    /// Statements the terminal transaction carries (an evaluation recorded as the run blocks).
    pub(super) carry: Vec<Statement>,
}

impl Default for Durability {
    fn default() -> Durability {
        Durability {
            state: RunState::Initializing,
            durable: RunState::Initializing,
            run_persisted: false,
            lock_held: false,
            tracker_open: false,
            carry: Vec::new(),
        }
    }
}

impl Durability {
    /// A stored run: its row exists, in `state`, holding the lock or not.
    pub(super) fn load(&mut self, state: RunState, lock_held: bool) {
        self.state = state;
        self.durable = state;
        self.run_persisted = true;
        self.lock_held = lock_held;
    }
}
