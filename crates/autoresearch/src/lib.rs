//! The sans-I/O core of dsh-autoresearch: a baseline-first, metric-driven keep/reject
//! optimization loop run in an isolated git worktree.
//!
//! It validates the run spec ([`spec`]), decides every step of the run state machine ([`Run`]),
//! and returns [`Effect`]s for a driver to perform; the driver feeds the results back as
//! [`Input`]s. It also owns the tracker's SQL ([`sql`]), each git command the driver spawns
//! ([`git`]), final-line metric parsing ([`metric`]),
//! canonical JSON and provenance hashing ([`jcs`], [`run::provenance`]), the mutable surface
//! ([`surface`], with its path-glob matcher [`glob`]) and the bounded result renderings
//! ([`render`], whose terminal escapes live in the leaf [`escape`]).
//!
//! **Architecture invariant:** it performs no I/O: no `std::fs`, `std::process`, SQLite, clock
//! or RNG. Time arrives as an argument, run ids from the driver, and every fact about the world
//! (git output, file hashes, process outcomes, stored rows) as an [`Input`]. It knows nothing of
//! WebAssembly, JavaScript or DSH. The driver contract's JSON encoding ([`wire`]) is written here, as
//! limit-break's save steps are in `limit-break-memory`, so the adapter passes JSON text through.
//!
//! **Architecture invariant:** every effect touches only the run's own worktree and run branch.
//! The caller's checkout and branches are never written; the run branch only ever fast-forwards
//! to an accepted candidate.

pub mod escape;
pub mod failure;
pub mod git;
pub mod git_config;
pub mod glob;
pub mod jcs;
pub mod layout;
pub mod list;
pub mod metric;
pub mod picture;
pub mod progress;
pub mod protocol;
pub mod render;
pub mod retention;
pub mod run;
pub mod spec;
pub mod sql;
pub mod state;
pub mod stats;
pub mod surface;
pub mod tool;
pub mod wire;

pub use protocol::{
    Anomaly, AnomalyKind, ArtifactFact, ConfigEntry, DriverError, Effect, EffectId, HashedFile,
    Input, ProcessIdentity, ProcessOutcome, Removed, RepoFacts, RetentionArtifact, RetentionRows,
    RetentionRun, StoredArtifact, StoredAttempt, StoredExperiment, StoredRows, StoredRun,
    WorktreeFacts,
};
pub use protocol::{RunResult, Status};
pub use retention::Retention;
pub use run::{
    Millis, Phase, Run, RunState, Settings, StartError, state_dir, tracker_path, transition_allowed,
};
pub use spec::{EnvValue, Limits, MAX_PARALLELISM, Request, RunPolicy, SpecError};

#[cfg(test)]
mod tests;

// The test fixture (shared with tests/) names the crate as its integration tests do.
#[cfg(test)]
extern crate self as autoresearch_core;
