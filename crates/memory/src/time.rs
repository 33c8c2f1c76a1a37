//! Timestamps. The crate never reads a clock: the driver passes Unix milliseconds and the
//! crate renders them in the `Date.prototype.toISOString` form, e.g. `2026-11-02T08:15:30.250Z`.

/// Milliseconds since the Unix epoch (UTC), as the driver's `Date.now()` gives them.
pub type UnixMillis = u64;

/// `unix_ms` as an ISO-8601 UTC timestamp with millisecond precision and a `Z` suffix.
///
/// Years past 9999 keep counting digits; JavaScript would switch to a `+0YYYYY` form there,
/// which no real clock reaches.
pub fn iso8601(unix_ms: UnixMillis) -> String {
    let ms = unix_ms % 1000;
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    let (y, mo, d) = civil_from_days(days);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// Howard Hinnant's `civil_from_days`, for days since 1970-01-01 (never negative here).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}
