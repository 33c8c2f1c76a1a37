//! Timestamps. The crate never reads a clock: the driver passes Unix milliseconds and the
//! crate renders them in the `Date.prototype.toISOString` form, e.g. `2026-11-02T08:15:30.250Z`
//! ([`iso8601`], the family's one date rendering).

pub use ::text::iso8601;

/// Milliseconds since the Unix epoch (UTC), as the driver's `Date.now()` gives them.
pub type UnixMillis = u64;
