//! The textual form of rates and shapes: the `-rate`, `-shape` and `-users`
//! flags.
//!
//! One grammar serves rates and user counts (see the crate documentation
//! for the full grammar with examples). Parsing never panics; a bad spec
//! gives a one-line [`ParseError`] naming the offending part. Every shape
//! prints back (`Display`) in the same grammar, and what it prints parses
//! to the same shape.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::duration::{format_duration, parse_duration};
use crate::shape::Shape;

/// A rate, duration or shape spec that does not parse. One line, naming the
/// bad part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    message: String,
}

impl ParseError {
    pub(crate) fn new(message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
        }
    }

    /// The message, without any prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Parses a `-rate` value, in vegeta's syntax, to hits per second.
///
/// `N` (per second), `N/s`, `N/1s`, `N/1m`, `N/500ms`, any Go duration
/// after the slash, and a bare unit (`ns`, `us`, `µs`, `ms`, `s`, `m`,
/// `h`) meaning one of it. `N` may have a fraction (`0.5/s`), which vegeta
/// does not accept. `0` (with any unit) returns `0.0` and `infinity`
/// returns `f64::INFINITY`: both mean "as fast as possible", see
/// [`RatePacer::new`](crate::RatePacer::new).
///
/// ```
/// use volley_pacer::parse_rate;
/// assert_eq!(parse_rate("5000").unwrap(), 5000.0);
/// assert_eq!(parse_rate("100/1m").unwrap(), 100.0 / 60.0);
/// assert_eq!(parse_rate("1/500ms").unwrap(), 2.0);
/// assert!(parse_rate("fast").is_err());
/// ```
pub fn parse_rate(input: &str) -> Result<f64, ParseError> {
    rate(input).map_err(|why| ParseError::new(format!("bad rate {input:?}: {why}")))
}

/// [`parse_rate`], returning only the reason on failure.
fn rate(input: &str) -> Result<f64, String> {
    let s = input.trim();
    if s == "infinity" {
        return Ok(f64::INFINITY);
    }
    let (freq, per) = match s.split_once('/') {
        Some((freq, per)) => (freq.trim(), per.trim()),
        None => (s, "1s"),
    };
    let freq = parse_number(freq).map_err(|why| format!("{why} (want N/duration, e.g. 50/1s)"))?;
    let per = match per {
        "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h" => parse_duration(&format!("1{per}")),
        other => parse_duration(other),
    }
    .map_err(|e| e.to_string())?;
    if freq == 0.0 {
        return Ok(0.0);
    }
    if per.is_zero() {
        return Err("the time unit must be longer than zero".into());
    }
    // Per second: the number itself, so that any printed f64 parses back
    // exactly. Otherwise in nanoseconds, so that "1/ns" is exactly 1e9.
    let rate = if per == Duration::from_secs(1) {
        freq
    } else {
        freq * 1e9 / per.as_nanos() as f64
    };
    if !rate.is_finite() {
        return Err("too large".into());
    }
    Ok(rate)
}

/// A plain decimal number: digits with at most one dot, no sign, exponent,
/// `inf` or `nan`.
fn parse_number(s: &str) -> Result<f64, String> {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    let dots = s.bytes().filter(|&b| b == b'.').count();
    if s.is_empty() {
        return Err("missing number".into());
    }
    if digits == 0 || dots > 1 || digits + dots != s.len() {
        return Err(format!("{s:?} is not a number"));
    }
    s.parse::<f64>()
        .map_err(|_| format!("{s:?} is not a number"))
}

impl Shape {
    /// Parses a shape spec (see the crate documentation for the grammar).
    ///
    /// `attack` is the attack duration, used as the ramp length of a
    /// `linear:FROM..TO` spec that gives none; `None` or zero (run until
    /// interrupted) makes such a spec an error. The shape is validated.
    ///
    /// ```
    /// use std::time::Duration;
    /// use volley_pacer::Shape;
    /// let s = Shape::parse("linear:100..5000", Some(Duration::from_secs(60))).unwrap();
    /// assert_eq!(s.to_string(), "linear:100..5000:1m0s");
    /// ```
    pub fn parse(input: &str, attack: Option<Duration>) -> Result<Shape, ParseError> {
        let spec = input.trim();
        let bad = |why: String| ParseError::new(format!("bad shape {input:?}: {why}"));
        let (kind, body) = match spec.split_once(':') {
            Some((kind, body)) => (kind.trim(), body.trim()),
            None => ("constant", spec),
        };
        let shape = match kind {
            "constant" => Shape::Constant(level(body).map_err(bad)?),
            "linear" => {
                let (from, rest) = body
                    .split_once("..")
                    .ok_or_else(|| bad("want linear:FROM..TO[:OVER]".into()))?;
                let (to, over) = match rest.split_once(':') {
                    Some((to, over)) => (to, Some(over)),
                    None => (rest, None),
                };
                let over = match over {
                    Some(over) => duration("ramp length", over).map_err(bad)?,
                    None => attack.filter(|d| !d.is_zero()).ok_or_else(|| {
                        bad("the ramp needs a length: linear:FROM..TO:OVER, or a non-zero -duration".into())
                    })?,
                };
                Shape::Linear {
                    from: level(from).map_err(bad)?,
                    to: level(to).map_err(bad)?,
                    over,
                }
            }
            "sine" => {
                let parts: Vec<&str> = body.split(',').collect();
                if !(3..=4).contains(&parts.len()) {
                    return Err(bad("want sine:MEAN,AMPLITUDE,PERIOD[,PHASE]".into()));
                }
                let phase = match parts.get(3) {
                    Some(p) => phase(p).map_err(bad)?,
                    None => 0.0,
                };
                Shape::Sine {
                    mean: level(parts[0]).map_err(bad)?,
                    amplitude: level(parts[1]).map_err(bad)?,
                    period: duration("period", parts[2]).map_err(bad)?,
                    phase,
                }
            }
            "steps" => {
                let mut steps = Vec::new();
                for (i, item) in body.split(',').enumerate() {
                    let (l, d) = item.split_once('x').ok_or_else(|| {
                        bad(format!(
                            "step {} {:?}: want LEVELxDURATION, e.g. 1000x60s",
                            i + 1,
                            item.trim()
                        ))
                    })?;
                    steps.push((
                        level(l).map_err(bad)?,
                        duration("step length", d).map_err(bad)?,
                    ));
                }
                Shape::Steps(steps)
            }
            "stages" => {
                let mut start = 0.0;
                let mut stages = Vec::new();
                for (i, item) in body.split(',').enumerate() {
                    match item.split_once(':') {
                        Some((d, l)) => stages.push((
                            duration("stage length", d).map_err(bad)?,
                            level(l).map_err(bad)?,
                        )),
                        None if i == 0 => start = level(item).map_err(bad)?,
                        None => {
                            return Err(bad(format!(
                                "stage {:?}: want DURATION:TARGET, e.g. 30s:100",
                                item.trim()
                            )))
                        }
                    }
                }
                Shape::Stages { start, stages }
            }
            other => {
                return Err(bad(format!(
                    "unknown shape {other:?} (want constant, linear, sine, steps or stages)"
                )))
            }
        };
        shape.validate().map_err(|e| bad(e.0))?;
        Ok(shape)
    }
}

/// [`Shape::parse`] as a free function, for flag parsers:
/// `parse_shape("linear:100..5000", Some(attack_duration))`.
pub fn parse_shape(input: &str, attack: Option<Duration>) -> Result<Shape, ParseError> {
    Shape::parse(input, attack)
}

impl FromStr for Shape {
    type Err = ParseError;

    /// [`Shape::parse`] without an attack duration.
    fn from_str(s: &str) -> Result<Shape, ParseError> {
        Shape::parse(s, None)
    }
}

fn level(s: &str) -> Result<f64, String> {
    rate(s).map_err(|why| format!("level {:?}: {why}", s.trim()))
}

fn duration(what: &str, s: &str) -> Result<Duration, String> {
    parse_duration(s.trim()).map_err(|e| format!("{what}: {e}"))
}

fn phase(s: &str) -> Result<f64, String> {
    match s.trim() {
        "meanup" => Ok(0.0),
        "peak" => Ok(0.25),
        "meandown" => Ok(0.5),
        "trough" => Ok(0.75),
        other => parse_number(other).map_err(|why| {
            format!(
                "phase: {why} (want a fraction of the period, or meanup, peak, meandown, trough)"
            )
        }),
    }
}

/// Prints a level so that it parses back to exactly the same `f64`:
/// `5000`, `1/1m` (for 1/60), `1/1h`, or the shortest decimal.
pub fn format_level(level: f64) -> String {
    if level.is_infinite() && level > 0.0 {
        return "infinity".to_string();
    }
    for (secs, unit) in [(1.0, ""), (60.0, "/1m"), (3600.0, "/1h")] {
        let n = (level * secs).round();
        if n.abs() < 1e15 {
            let text = format!("{n}{unit}");
            if rate(&text) == Ok(level) {
                return text;
            }
        }
    }
    format!("{level}")
}

impl fmt::Display for Shape {
    /// The spec in the grammar [`Shape::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Constant(level) => write!(f, "{}", format_level(*level)),
            Shape::Linear { from, to, over } => write!(
                f,
                "linear:{}..{}:{}",
                format_level(*from),
                format_level(*to),
                format_duration(*over)
            ),
            Shape::Sine {
                mean,
                amplitude,
                period,
                phase,
            } => {
                write!(
                    f,
                    "sine:{},{},{}",
                    format_level(*mean),
                    format_level(*amplitude),
                    format_duration(*period)
                )?;
                if *phase != 0.0 {
                    write!(f, ",{phase}")?;
                }
                Ok(())
            }
            Shape::Steps(steps) => {
                f.write_str("steps:")?;
                for (i, (level, len)) in steps.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    write!(f, "{sep}{}x{}", format_level(*level), format_duration(*len))?;
                }
                Ok(())
            }
            Shape::Stages { start, stages } => {
                f.write_str("stages:")?;
                let mut sep = "";
                if *start != 0.0 {
                    write!(f, "{}", format_level(*start))?;
                    sep = ",";
                }
                for (len, level) in stages {
                    write!(f, "{sep}{}:{}", format_duration(*len), format_level(*level))?;
                    sep = ",";
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn rates() {
        let cases: &[(&str, f64)] = &[
            ("5000", 5000.0),
            ("5000/s", 5000.0),
            ("5000/1s", 5000.0),
            ("50/1s", 50.0),
            ("100/1m", 100.0 / 60.0),
            ("100/m", 100.0 / 60.0),
            ("1/500ms", 2.0),
            ("1/1h", 1.0 / 3600.0),
            ("3/h", 3.0 / 3600.0),
            ("1/us", 1e6),
            ("1/µs", 1e6),
            ("1/ns", 1e9),
            ("10/1m30s", 10.0 / 90.0),
            ("0.5", 0.5),
            ("0.5/s", 0.5),
            ("0", 0.0),
            ("0/s", 0.0),
            ("0/0s", 0.0),
            ("000", 0.0),
            ("infinity", f64::INFINITY),
            (" 7 ", 7.0),
        ];
        for (input, want) in cases {
            assert_eq!(parse_rate(input).ok(), Some(*want), "{input:?}");
        }
    }

    #[test]
    fn bad_rates() {
        let cases: &[(&str, &str)] = &[
            ("", "missing number"),
            ("/s", "missing number"),
            ("fast", "\"fast\" is not a number"),
            ("-5", "\"-5\" is not a number"),
            ("1e3", "not a number"),
            ("inf", "not a number"),
            ("NaN", "not a number"),
            ("1.2.3", "not a number"),
            ("5/", "invalid duration"),
            ("5/x", "invalid duration"),
            ("5/10", "missing unit"),
            ("5/1y", "unknown unit"),
            ("5/0s", "longer than zero"),
            ("5/-1s", "negative duration"),
            ("5/s/s", "invalid duration \"s/s\""),
            ("Infinity", "not a number"),
        ];
        for (input, want) in cases {
            let err = parse_rate(input).expect_err(input).to_string();
            assert!(err.contains(want), "{input:?}: {err}");
            assert!(err.starts_with(&format!("bad rate {input:?}")), "{err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn shapes() {
        let minute = Some(secs(60));
        let cases: Vec<(&str, Shape)> = vec![
            ("1000", Shape::Constant(1000.0)),
            ("1000/s", Shape::Constant(1000.0)),
            ("constant:50/1s", Shape::Constant(50.0)),
            ("0", Shape::Constant(0.0)),
            ("infinity", Shape::Constant(f64::INFINITY)),
            (
                "linear:100..5000",
                Shape::Linear {
                    from: 100.0,
                    to: 5000.0,
                    over: secs(60),
                },
            ),
            (
                "linear:100..5000:30s",
                Shape::Linear {
                    from: 100.0,
                    to: 5000.0,
                    over: secs(30),
                },
            ),
            (
                "linear: 6/1m .. 1/1ms : 1m30s",
                Shape::Linear {
                    from: 0.1,
                    to: 1000.0,
                    over: secs(90),
                },
            ),
            (
                "sine:1000,500,1m",
                Shape::Sine {
                    mean: 1000.0,
                    amplitude: 500.0,
                    period: secs(60),
                    phase: 0.0,
                },
            ),
            (
                "sine:1000,500,1m,trough",
                Shape::Sine {
                    mean: 1000.0,
                    amplitude: 500.0,
                    period: secs(60),
                    phase: 0.75,
                },
            ),
            (
                "sine:10,0,1s,0.125",
                Shape::Sine {
                    mean: 10.0,
                    amplitude: 0.0,
                    period: secs(1),
                    phase: 0.125,
                },
            ),
            (
                "steps:1000x60s,2000x60s",
                Shape::Steps(vec![(1000.0, secs(60)), (2000.0, secs(60))]),
            ),
            (
                "steps: 1/1s x 1m , 0x1s",
                Shape::Steps(vec![(1.0, secs(60)), (0.0, secs(1))]),
            ),
            (
                "stages:30s:100,60s:1000,30s:0",
                Shape::Stages {
                    start: 0.0,
                    stages: vec![(secs(30), 100.0), (secs(60), 1000.0), (secs(30), 0.0)],
                },
            ),
            (
                "stages:50,0s:10,1m:100/1s",
                Shape::Stages {
                    start: 50.0,
                    stages: vec![(Duration::ZERO, 10.0), (secs(60), 100.0)],
                },
            ),
        ];
        for (input, want) in cases {
            assert_eq!(Shape::parse(input, minute), Ok(want), "{input:?}");
        }
    }

    #[test]
    fn bad_shapes() {
        let cases: &[(&str, &str)] = &[
            ("", "missing number"),
            ("ramp:1..2", "unknown shape \"ramp\""),
            ("linear:100", "want linear:FROM..TO[:OVER]"),
            ("linear:100..200", "needs a length"),
            ("linear:100..200:0s", "positive duration"),
            ("linear:x..200:1s", "level \"x\""),
            ("linear:1..200:1x", "ramp length: unknown unit"),
            ("linear:1..infinity:1s", "not a finite level"),
            ("sine:1,2", "want sine:MEAN"),
            ("sine:1,2,1s,0,5", "want sine:MEAN"),
            ("sine:1,2,1s", "larger than the mean"),
            ("sine:0,0,1s", "mean must be positive"),
            ("sine:2,1,0s", "period"),
            ("sine:2,1,1s,up", "phase"),
            ("sine:2,1,1s,1.5", "phase 1.5"),
            ("steps:", "step 1 \"\""),
            ("steps:100", "step 1 \"100\": want LEVELx"),
            ("steps:100x1s,200", "step 2"),
            ("steps:100x0s", "zero duration"),
            ("steps:-1x1s", "level \"-1\""),
            ("steps:ax1s", "level \"a\""),
            ("steps:1x1", "step length: missing unit"),
            ("stages:", "missing number"),
            ("stages:10", "no stages"),
            ("stages:10s:1,20", "stage \"20\""),
            ("stages:10s:1,20s:x", "level \"x\""),
            ("stages:1q:1", "stage length: unknown unit"),
            ("99999999999999999999", "too large"),
        ];
        for (input, want) in cases {
            let err = Shape::parse(input, None).expect_err(input).to_string();
            assert!(err.contains(want), "{input:?}: {err}");
            assert!(err.starts_with(&format!("bad shape {input:?}")), "{err}");
            assert!(!err.contains('\n'));
        }
    }

    #[test]
    fn display() {
        let cases: &[(&str, &str)] = &[
            ("1000/s", "1000"),
            ("50/1s", "50"),
            ("1/500ms", "2"),
            ("100/1m", "100/1m"),
            ("1/1h", "1/1h"),
            ("1/7s", "0.14285714285714285"),
            ("0", "0"),
            ("infinity", "infinity"),
            ("linear:100..5000:60s", "linear:100..5000:1m0s"),
            ("sine:1000,500,1m", "sine:1000,500,1m0s"),
            ("sine:1000,500,1m,peak", "sine:1000,500,1m0s,0.25"),
            ("steps:1000x60s,2000x1.5s", "steps:1000x1m0s,2000x1.5s"),
            (
                "stages:30s:100,60s:1000,30s:0",
                "stages:30s:100,1m0s:1000,30s:0",
            ),
            ("stages:5,30s:100", "stages:5,30s:100"),
        ];
        for (input, want) in cases {
            let shape = Shape::parse(input, None).unwrap();
            assert_eq!(shape.to_string(), *want, "{input:?}");
            assert_eq!(want.parse::<Shape>(), Ok(shape), "{want:?} parses back");
        }
    }

    /// Deterministic xorshift, so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn level(&mut self) -> f64 {
            match self.below(4) {
                0 => self.below(100_000) as f64,
                1 => self.below(1000) as f64 / 60.0,
                2 => self.below(1000) as f64 / 3600.0,
                _ => (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 1e6,
            }
        }
        fn duration(&mut self) -> Duration {
            Duration::from_nanos(1 + (self.next() >> (20 + self.below(40))))
        }
    }

    #[test]
    fn display_round_trips() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..5_000 {
            let shape = match rng.below(5) {
                0 => Shape::Constant(rng.level()),
                1 => Shape::Linear {
                    from: rng.level(),
                    to: rng.level(),
                    over: rng.duration(),
                },
                2 => {
                    let mean = rng.level() + 1.0;
                    Shape::Sine {
                        mean,
                        amplitude: (mean * rng.below(101) as f64 / 100.0).min(mean),
                        period: rng.duration(),
                        phase: rng.below(100) as f64 / 100.0,
                    }
                }
                3 => Shape::Steps(
                    (0..1 + rng.below(5))
                        .map(|_| (rng.level(), rng.duration()))
                        .collect(),
                ),
                _ => Shape::Stages {
                    start: if rng.below(2) == 0 { 0.0 } else { rng.level() },
                    stages: (0..1 + rng.below(5))
                        .map(|_| (rng.duration(), rng.level()))
                        .collect(),
                },
            };
            let text = shape.to_string();
            assert_eq!(text.parse::<Shape>(), Ok(shape), "{text}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        let alphabet: Vec<char> =
            "0123456789./:,x.. smhuµnlinearsinestepsstagesconstantinfinity-+e"
                .chars()
                .collect();
        let seeds = [
            "linear:100..5000:60s",
            "sine:1000,500,1m,peak",
            "steps:1000x60s,2000x60s",
            "stages:5,30s:100,60s:1000,30s:0",
            "50/1s",
        ];
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for i in 0..20_000 {
            let mut s: Vec<char> = seeds[i % seeds.len()].chars().collect();
            for _ in 0..1 + rng.below(4) {
                let c = alphabet[rng.below(alphabet.len() as u64) as usize];
                let at = rng.below(s.len() as u64 + 1) as usize;
                match rng.below(3) {
                    0 => s.insert(at, c),
                    1 if at < s.len() => {
                        s.remove(at);
                    }
                    _ if at < s.len() => s[at] = c,
                    _ => {}
                }
            }
            let s: String = s.into_iter().collect();
            if let Ok(shape) = Shape::parse(&s, Some(secs(1))) {
                // Whatever parses is valid, prints back, and paces.
                assert_eq!(shape.to_string().parse::<Shape>(), Ok(shape.clone()), "{s}");
                let _ = crate::RatePacer::new(shape).map(|p| {
                    use crate::Pacer;
                    p.due(rng.next() % 1_000_000)
                });
            }
            let _ = parse_rate(&s);
            let _ = parse_duration(&s);
        }
    }
}
