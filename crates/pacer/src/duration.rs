//! Go-syntax durations (`1m30s`, `250ms`, `1.5s`, `100µs`, `2h`, `0`).
//!
//! volley accepts vegeta's flags verbatim, and vegeta parses every duration
//! with Go's `time.ParseDuration`, so this module reproduces that grammar:
//! one or more `NUMBER UNIT` components (`ns`, `us`, `µs`, `μs`, `ms`, `s`,
//! `m`, `h`), decimals allowed, a bare `0` allowed, a bare number otherwise
//! rejected ("missing unit"). Negative durations are valid Go but have no
//! meaning for volley, so they are rejected. [`format_duration`] prints the
//! way Go's `Duration.String` does (`1m30s`, `2h0m0s`, `1.5µs`), so
//! reports and specs read like vegeta's.

use std::time::Duration;

use crate::ParseError;

/// Go's limit: a duration is an `int64` of nanoseconds.
const MAX_NANOS: u128 = i64::MAX as u128;

/// Parses a duration in Go's `time.ParseDuration` syntax.
///
/// ```
/// use std::time::Duration;
/// use volley_pacer::parse_duration;
/// assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
/// assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
/// assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
/// assert!(parse_duration("10").is_err()); // missing unit, as in Go
/// ```
pub fn parse_duration(input: &str) -> Result<Duration, ParseError> {
    let err = |what: &str| ParseError::new(format!("{what} in duration {input:?}"));
    let mut s = input;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(ParseError::new(format!("invalid duration {input:?}")));
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        // Integer part.
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let (int_digits, rest) = s.split_at(int_len);
        s = rest;
        // Fractional part.
        let mut frac_digits = "";
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let (f, rest) = rest.split_at(frac_len);
            frac_digits = f;
            s = rest;
        }
        if int_digits.is_empty() && frac_digits.is_empty() {
            // "s", ".s" and the like: a unit with no number.
            return Err(ParseError::new(format!("invalid duration {input:?}")));
        }
        // Unit: everything up to the next digit or dot.
        let unit_len = s
            .char_indices()
            .find(|&(_, c)| c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        if unit.is_empty() {
            return Err(err("missing unit"));
        }
        let unit_nanos: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            other => {
                return Err(ParseError::new(format!(
                    "unknown unit {other:?} in duration {input:?}"
                )))
            }
        };
        let mut int: u128 = 0;
        for b in int_digits.bytes() {
            int = int * 10 + u128::from(b - b'0');
            if int > MAX_NANOS {
                return Err(err("overflow"));
            }
        }
        let mut value = int * unit_nanos;
        // Like Go, keep only as many fractional digits as can matter.
        let mut frac: u128 = 0;
        let mut scale: u128 = 1;
        for b in frac_digits.bytes().take(19) {
            frac = frac * 10 + u128::from(b - b'0');
            scale *= 10;
        }
        value += frac * unit_nanos / scale;
        total += value;
        if total > MAX_NANOS {
            return Err(err("overflow"));
        }
    }
    if negative && total > 0 {
        return Err(ParseError::new(format!("negative duration {input:?}")));
    }
    // `total <= i64::MAX` was checked above.
    Ok(Duration::from_nanos(total as u64))
}

/// Formats a duration the way Go's `time.Duration.String` does:
/// `0s`, `100ns`, `1.5µs`, `250ms`, `1.5s`, `1m30s`, `2h0m0s`.
///
/// Durations longer than Go's `int64` nanoseconds are printed in full anyway.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", frac(nanos, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", frac(nanos, 6));
    }
    let secs_part = frac(nanos % 60_000_000_000, 9);
    let total_secs = nanos / 1_000_000_000;
    if total_secs < 60 {
        return format!("{secs_part}s");
    }
    let mins = total_secs / 60;
    if mins < 60 {
        return format!("{mins}m{secs_part}s");
    }
    format!("{}h{}m{secs_part}s", mins / 60, mins % 60)
}

/// `value / 10^digits` printed with the fraction's trailing zeros removed.
fn frac(value: u128, digits: u32) -> String {
    let scale = 10u128.pow(digits);
    let int = value / scale;
    let rest = value % scale;
    if rest == 0 {
        return int.to_string();
    }
    let mut f = format!("{rest:0width$}", width = digits as usize);
    while f.ends_with('0') {
        f.pop();
    }
    format!("{int}.{f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(n: u64) -> Duration {
        Duration::from_nanos(n)
    }

    #[test]
    fn parses_go_syntax() {
        let cases: &[(&str, Duration)] = &[
            ("0", Duration::ZERO),
            ("+0", Duration::ZERO),
            ("-0", Duration::ZERO),
            ("0s", Duration::ZERO),
            ("1ns", ns(1)),
            ("1us", ns(1_000)),
            ("100us", ns(100_000)),
            ("100µs", ns(100_000)),
            ("100μs", ns(100_000)),
            ("250ms", Duration::from_millis(250)),
            ("1s", Duration::from_secs(1)),
            ("1.5s", Duration::from_millis(1500)),
            (".5s", Duration::from_millis(500)),
            ("1.s", Duration::from_secs(1)),
            ("1m30s", Duration::from_secs(90)),
            ("1h30m", Duration::from_secs(5400)),
            ("2h", Duration::from_secs(7200)),
            ("1h2m3s4ms5us6ns", ns(3_723_004_005_006)),
            ("1s1s", Duration::from_secs(2)),
            ("+5s", Duration::from_secs(5)),
            ("0.000000001s", ns(1)),
            ("0.0000000009s", ns(0)),
            ("1.0000000001s", ns(1_000_000_000)),
            ("2562047h47m16.854775807s", ns(i64::MAX as u64)),
            ("9223372036854775807ns", ns(i64::MAX as u64)),
        ];
        for (input, want) in cases {
            assert_eq!(parse_duration(input).ok(), Some(*want), "input {input:?}");
        }
    }

    #[test]
    fn rejects_like_go() {
        let cases: &[(&str, &str)] = &[
            ("", "invalid duration"),
            ("10", "missing unit"),
            ("1.5", "missing unit"),
            ("1s5", "missing unit"),
            ("s", "invalid duration"),
            (".s", "invalid duration"),
            ("-", "invalid duration"),
            ("1x", "unknown unit \"x\""),
            ("1 s", "unknown unit \" s\""),
            ("1S", "unknown unit \"S\""),
            ("1sec", "unknown unit \"sec\""),
            ("-1s", "negative duration"),
            ("9223372036854775808ns", "overflow"),
            ("2562048h", "overflow"),
            ("99999999999999999999999999999999999999999h", "overflow"),
        ];
        for (input, want) in cases {
            let err = parse_duration(input).expect_err(input).to_string();
            assert!(
                err.contains(want),
                "input {input:?}: got {err:?}, want {want:?}"
            );
            assert!(
                err.contains(&format!("{input:?}")),
                "error names the input: {err}"
            );
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn formats_like_go() {
        let cases: &[(Duration, &str)] = &[
            (Duration::ZERO, "0s"),
            (ns(1), "1ns"),
            (ns(999), "999ns"),
            (ns(1_000), "1µs"),
            (ns(1_500), "1.5µs"),
            (ns(100_000), "100µs"),
            (Duration::from_millis(250), "250ms"),
            (ns(1_234_567), "1.234567ms"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(7200), "2h0m0s"),
            (ns(3_723_004_005_006), "1h2m3.004005006s"),
        ];
        for (d, want) in cases {
            assert_eq!(format_duration(*d), *want);
        }
    }

    #[test]
    fn format_then_parse_round_trips() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = ns((x % (i64::MAX as u64)) >> (x % 60));
            assert_eq!(parse_duration(&format_duration(d)).ok(), Some(d), "{d:?}");
        }
    }
}
