//! UTC dates from Unix milliseconds, without a clock or a time-zone database. A leaf.

/// `unix_ms` as `Date.prototype.toISOString` writes it: `2026-11-02T08:15:30.250Z`.
///
/// Years past 9999 keep counting digits; JavaScript would switch to a `+0YYYYY` form there,
/// which no real clock reaches.
pub fn iso8601(unix_ms: u64) -> String {
    let (date, (h, m, s)) = split(unix_ms);
    let (y, mo, d) = date;
    let ms = unix_ms % 1000;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// `unix_ms` to the second, `2026-11-02 08:15:30` (UTC).
pub fn utc_seconds(unix_ms: u64) -> String {
    let ((y, mo, d), (h, m, s)) = split(unix_ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}:{s:02}")
}

fn split(unix_ms: u64) -> ((u64, u64, u64), (u64, u64, u64)) {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    (civil_from_days(days), (rem / 3600, rem / 60 % 60, rem % 60))
}

/// Howard Hinnant's `civil_from_days`: `(year, month, day)` of `days` since 1970-01-01.
pub fn civil_from_days(days: u64) -> (u64, u64, u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_javascripts() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
        assert_eq!(utc_seconds(1_700_000_000_999), "2023-11-14 22:13:20");
        assert_eq!(civil_from_days(59), (1970, 3, 1));
    }
}
