//! The family's shared text helpers, each written once: HTML escaping ([`escape_html`]),
//! clipping to a number of characters or bytes ([`clip`], [`clip_within`], [`head_bytes`],
//! [`tail_bytes`]), the FNV-1a 64 hash ([`Fnv1a`]), UTC dates from Unix milliseconds
//! ([`iso8601`], [`utc_seconds`]), and the characters a person cannot see that can still carry
//! text to a model ([`invisible`], [`strip_invisible`]).
//!
//! Every output here is pinned somewhere (snapshots, vectors, FNV-keyed ids and fingerprints,
//! stored timestamps): a change to one of them is a change of format, not a refactoring.

mod clip;
mod date;
mod escape;
mod fnv;
mod invisible;

pub use clip::{clip, clip_within, head_bytes, tail_bytes};
pub use date::{civil_from_days, iso8601, utc_seconds};
pub use escape::escape_html;
pub use fnv::Fnv1a;
pub use invisible::{invisible, strip_invisible};
