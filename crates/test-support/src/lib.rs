//! The family's real-dsh test plumbing, which `cargo xtask release-smoke`, `scenario` and `demo`
//! drive: a scripted SSE model on 127.0.0.1 ([`mock_model`]), a dsh home with every packed
//! package added ([`harness`], over a [`toolchain`] the caller installed), the data-driven turns
//! of `xtask/scenarios/*.json` ([`scenario`]), and DSH session logs as frames, events and scrubbed
//! fixtures ([`session_log`], whose events come from `crates/session-log`), YAML read with dsh's
//! own js-yaml ([`yaml`]), and the packages' conformance vectors run through their CLIs
//! ([`vectors`]).
//!
//! It installs nothing and packs nothing: the caller (xtask) hands in the toolchain and the
//! packed tarballs.

pub mod harness;
pub mod mock_model;
pub mod scenario;
pub mod session_log;
pub mod toolchain;
pub mod util;
pub mod vectors;
pub mod yaml;
pub mod yaml_ls;
