//! Go's formatting rules, reimplemented so volley's reports read exactly like
//! vegeta's: `time.Duration.String()`, vegeta's
//! `round` (to the next more precise unit), and `time.Time` in RFC 3339 with
//! nanoseconds (how Go's JSON encoder writes timestamps).
//!
//! Durations are signed nanoseconds (`i64`), as Go's `time.Duration`.

const NS: i64 = 1;
const US: i64 = 1_000;
const MS: i64 = 1_000_000;
const SEC: i64 = 1_000_000_000;
const MIN: i64 = 60 * SEC;
const HOUR: i64 = 60 * MIN;

/// Formats like Go's `time.Duration.String()`: `0s`, `1.5µs`, `204.699ms`,
/// `1m0.00152225s`, `1h2m3s`.
pub fn duration_string(d: i64) -> String {
    // Go prints a negative duration as "-" and its magnitude.
    let magnitude =
        volley_pacer::format_duration(std::time::Duration::from_nanos(d.unsigned_abs()));
    if d < 0 {
        format!("-{magnitude}")
    } else {
        magnitude
    }
}

/// Go's `Duration.Round(m)`: halves round away from zero, saturating.
pub fn round_to(d: i64, m: i64) -> i64 {
    if m <= 0 {
        return d;
    }
    let mut r = d % m;
    let less_than_half = |x: i64, y: i64| (x as u64).wrapping_add(x as u64) < y as u64;
    if d < 0 {
        r = -r;
        if less_than_half(r, m) {
            return d + r;
        }
        return d.checked_sub(m - r).unwrap_or(i64::MIN);
    }
    if less_than_half(r, m) {
        return d - r;
    }
    d.checked_add(m - r).unwrap_or(i64::MAX)
}

/// vegeta's `round`: rounds a duration to the unit below its own magnitude
/// (≥ 1h → minutes, ≥ 1m → seconds, ≥ 1s → ms, ≥ 1ms → µs), so reports
/// show a handful of significant digits.
pub fn vegeta_round(d: i64) -> i64 {
    const UNITS: [i64; 6] = [HOUR, MIN, SEC, MS, US, NS];
    for (i, unit) in UNITS.iter().enumerate() {
        if d >= *unit && i < UNITS.len() - 1 {
            return round_to(d, UNITS[i + 1]);
        }
    }
    d
}

/// A vegeta-rounded duration, printed the Go way (what `vegeta report`
/// prints for every duration).
pub fn vegeta_duration(ns: u64) -> String {
    duration_string(vegeta_round(clamp_i64(ns)))
}

pub(crate) fn clamp_i64(ns: u64) -> i64 {
    i64::try_from(ns).unwrap_or(i64::MAX)
}

/// A Unix-nanosecond timestamp as Go's JSON encoder writes a UTC
/// `time.Time`: RFC 3339 with up to nine fraction digits, trailing zeros
/// dropped (`2020-02-03T10:41:00.123Z`).
pub fn rfc3339_nano(unix_ns: i64) -> String {
    let secs = unix_ns.div_euclid(SEC);
    let nanos = unix_ns.rem_euclid(SEC) as u64;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if nanos != 0 {
        let digits = format!("{nanos:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// Go's zero `time.Time` in JSON, used when there are no results.
pub const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Go's `Duration.Seconds()`: whole seconds plus the fraction, computed
/// separately so large values convert the way Go converts them.
pub fn seconds(ns: u64) -> f64 {
    (ns / SEC as u64) as f64 + (ns % SEC as u64) as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_string_matches_go() {
        let cases: &[(i64, &str)] = &[
            (0, "0s"),
            (1, "1ns"),
            (999, "999ns"),
            (1_000, "1µs"),
            (1_500, "1.5µs"),
            (854_022, "854.022µs"),
            (1_000_000, "1ms"),
            (204_699_000, "204.699ms"),
            (1_696_458, "1.696458ms"),
            (1_000_000_000, "1s"),
            (1_004_000_000, "1.004s"),
            (59_999_825_792, "59.999825792s"),
            (60_000_000_000, "1m0s"),
            (60_001_522_250, "1m0.00152225s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_000_000_000, "1h2m3s"),
            (-1_500, "-1.5µs"),
            (i64::MAX, "2562047h47m16.854775807s"),
            (i64::MIN, "-2562047h47m16.854775808s"),
        ];
        for (d, want) in cases {
            assert_eq!(duration_string(*d), *want, "{d}");
        }
    }

    #[test]
    fn vegeta_round_matches_go() {
        let cases: &[(i64, &str)] = &[
            (60_001_522_250, "1m0s"),
            (60_501_522_250, "1m1s"),
            (59_997_400_000, "59.997s"),
            (59_997_500_000, "59.998s"),
            (204_396_499, "204.396ms"),
            (204_396_500, "204.397ms"),
            (854_022, "854.022µs"),
            (3_723_400_000_000, "1h2m0s"),
            (999, "999ns"),
            (0, "0s"),
        ];
        for (d, want) in cases {
            assert_eq!(duration_string(vegeta_round(*d)), *want, "{d}");
        }
    }

    #[test]
    fn timestamps_format_like_go_json() {
        assert_eq!(rfc3339_nano(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339_nano(1_580_726_568_364_000_000),
            "2020-02-03T10:42:48.364Z"
        );
        assert_eq!(rfc3339_nano(1), "1970-01-01T00:00:00.000000001Z");
        assert_eq!(rfc3339_nano(-1), "1969-12-31T23:59:59.999999999Z");
        assert_eq!(rfc3339_nano(951_782_400 * SEC), "2000-02-29T00:00:00Z");
    }
}
