//! Pass/fail thresholds (`-threshold 'p99<250ms'`), k6-style: each one is
//! checked against the final [`Metrics`] and printed as a verdict; the CLI
//! exits with [`EXIT_THRESHOLD_FAILED`] (k6's 99) when any fails.
//!
//! # Grammar
//!
//! ```text
//! threshold := [metric ":"] stat op value          (spaces allowed around op)
//! op        := "<" | "<=" | ">" | ">=" | "==" | "!="
//!
//! duration metrics (default: latency)
//!   metric  := "latency" | "http_req_duration"
//!            | "lag" | "volley_send_lag"                      (send lag)
//!            | "blocked"  | "http_req_blocked"
//!            | "dns"
//!            | "connecting" | "http_req_connecting"
//!            | "tls_handshaking" | "http_req_tls_handshaking"
//!            | "waiting" | "http_req_waiting"
//!            | "receiving" | "http_req_receiving"
//!   stat    := "min" | "max" | "mean" | "avg" | "med"
//!            | "p" N | "p(" N ")"                             (N in 0..=100, e.g. p99.9)
//!   value   := Go duration ("250ms", "1.5s", "1m") | bare number = milliseconds (k6)
//!
//! run-wide stats (no metric prefix)
//!   "success" | "errors"      value: "99.9%" or a ratio "0.999"
//!                             (errors = 1 - success, k6's http_req_failed rate)
//!   "rate" | "throughput"     value: requests per second, e.g. "900" or "900/s"
//!   "requests"                value: a count
//!
//! k6 spellings of the same
//!   "http_req_failed:rate"  = errors
//!   "http_reqs:count"       = requests
//!   "http_reqs:rate"        = rate
//! ```
//!
//! Examples: `p99<250ms`, `p(95)<=1s`, `mean<100ms`, `max<2s`,
//! `success>=99.9%`, `errors<1%`, `rate>900`, `throughput>=1000`,
//! `http_req_duration:p(95)<500`, `lag:p99<10ms`, `http_req_failed:rate<0.01`.
//!
//! A threshold fails when there are no requests at all.

use std::fmt;

use crate::k6::human_duration_ns;
use crate::metrics::{Distribution, Metrics, Phase};

/// Exit code when a threshold fails (k6's).
pub const EXIT_THRESHOLD_FAILED: i32 = 99;

/// A threshold that does not parse: names the spec and says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid threshold {spec:?}: {reason}")]
pub struct ThresholdError {
    /// The rejected text.
    pub spec: String,
    /// Why it was rejected.
    pub reason: String,
}

/// A series of durations a threshold can look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Series {
    /// Request latency.
    Latency,
    /// Send lag.
    Lag,
    /// One request phase.
    Phase(Phase),
}

/// A statistic over a duration series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Mean.
    Mean,
    /// Quantile in 0..=1.
    Quantile(f64),
}

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Subject {
    /// A statistic of a duration series, compared in nanoseconds.
    Duration(Series, Stat),
    /// Success ratio.
    Success,
    /// Failure ratio (1 − success).
    Errors,
    /// vegeta's rate, req/s.
    Rate,
    /// vegeta's throughput, successful req/s.
    Throughput,
    /// Request count.
    Requests,
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl Op {
    fn holds(self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}

/// A parsed threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    spec: String,
    subject: Subject,
    op: Op,
    /// Nanoseconds for durations, a ratio for success/errors, else as is.
    value: f64,
}

/// The outcome of one threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The threshold as the user wrote it.
    pub spec: String,
    /// The k6 metric it applies to (`http_req_duration`, …), empty if none.
    pub metric: &'static str,
    /// The measured value, formatted (`12.34ms`, `99.95%`, `912.30`).
    pub actual: String,
    /// Whether it held.
    pub ok: bool,
}

impl fmt::Display for Verdict {
    /// `✓ p99<250ms (actual 12.3ms)` or `✗ …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.ok { '✓' } else { '✗' };
        write!(f, "{mark} {} (actual {})", self.spec, self.actual)
    }
}

impl std::str::FromStr for Threshold {
    type Err = ThresholdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Threshold::parse(s)
    }
}

impl Threshold {
    /// Parses one threshold (see the module docs for the grammar).
    pub fn parse(spec: &str) -> Result<Threshold, ThresholdError> {
        let bad = |reason: &str| ThresholdError {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let text = spec.trim();
        let op_at = text
            .find(['<', '>', '=', '!'])
            .ok_or_else(|| bad("missing comparison (<, <=, >, >=, ==, !=)"))?;
        let (lhs, rest) = text.split_at(op_at);
        let (op, rhs) = [
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("===", Op::Eq),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<", Op::Lt),
            (">", Op::Gt),
        ]
        .iter()
        .find_map(|(tok, op)| rest.strip_prefix(tok).map(|r| (*op, r)))
        .ok_or_else(|| bad("unknown comparison; use <, <=, >, >=, ==, !="))?;
        let lhs = lhs.trim();
        let rhs = rhs.trim();
        if rhs.is_empty() {
            return Err(bad("missing value after the comparison"));
        }
        if rhs.contains(['<', '>', '=', '!']) {
            return Err(bad("more than one comparison"));
        }
        let (metric, stat) = match lhs.split_once(':') {
            Some((m, s)) => (Some(m.trim()), s.trim()),
            None => (None, lhs),
        };
        if stat.is_empty() {
            return Err(bad("missing statistic before the comparison"));
        }
        let subject = resolve(metric, stat).map_err(|r| bad(&r))?;
        let value = match subject {
            Subject::Duration(..) => parse_duration_value(rhs).map_err(|r| bad(&r))?,
            Subject::Success | Subject::Errors => parse_ratio(rhs).map_err(|r| bad(&r))?,
            Subject::Rate | Subject::Throughput => {
                parse_number(rhs.strip_suffix("/s").unwrap_or(rhs)).map_err(|r| bad(&r))?
            }
            Subject::Requests => parse_number(rhs).map_err(|r| bad(&r))?,
        };
        Ok(Threshold {
            spec: text.to_string(),
            subject,
            op,
            value,
        })
    }

    /// The threshold as written (trimmed).
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// What it measures.
    pub fn subject(&self) -> Subject {
        self.subject
    }

    /// Checks it against `m`.
    pub fn evaluate(&self, m: &Metrics) -> Verdict {
        let metric = k6_metric(self.subject);
        if m.requests() == 0 {
            return Verdict {
                spec: self.spec.clone(),
                metric,
                actual: "no requests".into(),
                ok: false,
            };
        }
        let (actual, shown) = match self.subject {
            Subject::Duration(series, stat) => {
                let d = series_of(m, series);
                let v = match stat {
                    Stat::Min => d.min(),
                    Stat::Max => d.max(),
                    Stat::Mean => d.mean(),
                    Stat::Quantile(q) => d.quantile(q),
                };
                (v as f64, human_duration_ns(v as f64))
            }
            Subject::Success => {
                let r = m.success_ratio();
                (r, percent(r))
            }
            Subject::Errors => {
                let r = 1.0 - m.success_ratio();
                (r, percent(r))
            }
            Subject::Rate => (m.rate(), format!("{:.2}/s", m.rate())),
            Subject::Throughput => (m.throughput(), format!("{:.2}/s", m.throughput())),
            Subject::Requests => (m.requests() as f64, m.requests().to_string()),
        };
        Verdict {
            spec: self.spec.clone(),
            metric,
            actual: shown,
            ok: self.op.holds(actual, self.value),
        }
    }
}

/// Parses every spec, failing on the first bad one.
pub fn parse_all<S: AsRef<str>>(specs: &[S]) -> Result<Vec<Threshold>, ThresholdError> {
    specs.iter().map(|s| Threshold::parse(s.as_ref())).collect()
}

/// Checks every threshold against `m`.
pub fn evaluate(thresholds: &[Threshold], m: &Metrics) -> Vec<Verdict> {
    thresholds.iter().map(|t| t.evaluate(m)).collect()
}

/// True when every verdict held.
pub fn all_ok(verdicts: &[Verdict]) -> bool {
    verdicts.iter().all(|v| v.ok)
}

fn series_of(m: &Metrics, s: Series) -> &Distribution {
    match s {
        Series::Latency => m.latency(),
        Series::Lag => m.lag(),
        Series::Phase(p) => m.phase(p),
    }
}

fn k6_metric(s: Subject) -> &'static str {
    match s {
        Subject::Duration(Series::Latency, _) => "http_req_duration",
        Subject::Duration(Series::Lag, _) => "volley_send_lag",
        Subject::Duration(Series::Phase(p), _) => match p {
            Phase::Blocked => "http_req_blocked",
            Phase::Dns => "",
            Phase::Connecting => "http_req_connecting",
            Phase::TlsHandshaking => "http_req_tls_handshaking",
            Phase::Waiting => "http_req_waiting",
            Phase::Receiving => "http_req_receiving",
        },
        Subject::Success | Subject::Errors => "http_req_failed",
        Subject::Rate | Subject::Requests => "http_reqs",
        Subject::Throughput => "",
    }
}

fn percent(ratio: f64) -> String {
    let s = format!("{:.3}", ratio * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

fn resolve(metric: Option<&str>, stat: &str) -> Result<Subject, String> {
    let series = match metric {
        None | Some("latency") | Some("http_req_duration") => Some(Series::Latency),
        Some("lag") | Some("volley_send_lag") => Some(Series::Lag),
        Some("blocked") | Some("http_req_blocked") => Some(Series::Phase(Phase::Blocked)),
        Some("dns") => Some(Series::Phase(Phase::Dns)),
        Some("connecting") | Some("http_req_connecting") => Some(Series::Phase(Phase::Connecting)),
        Some("tls_handshaking") | Some("http_req_tls_handshaking") => {
            Some(Series::Phase(Phase::TlsHandshaking))
        }
        Some("waiting") | Some("http_req_waiting") => Some(Series::Phase(Phase::Waiting)),
        Some("receiving") | Some("http_req_receiving") => Some(Series::Phase(Phase::Receiving)),
        Some("http_req_failed") => {
            return match stat {
                "rate" => Ok(Subject::Errors),
                _ => Err("http_req_failed takes the stat `rate`".into()),
            }
        }
        Some("http_reqs") => {
            return match stat {
                "count" => Ok(Subject::Requests),
                "rate" => Ok(Subject::Rate),
                _ => Err("http_reqs takes the stat `count` or `rate`".into()),
            }
        }
        Some(other) => return Err(format!("unknown metric {other:?}")),
    };
    if metric.is_none() {
        match stat {
            "success" => return Ok(Subject::Success),
            "errors" => return Ok(Subject::Errors),
            "rate" => return Ok(Subject::Rate),
            "throughput" => return Ok(Subject::Throughput),
            "requests" => return Ok(Subject::Requests),
            _ => {}
        }
    }
    let series = series.ok_or("no series")?;
    let stat = match stat {
        "min" => Stat::Min,
        "max" => Stat::Max,
        "mean" | "avg" => Stat::Mean,
        "med" => Stat::Quantile(0.5),
        s => {
            let n = s
                .strip_prefix("p(")
                .and_then(|r| r.strip_suffix(')'))
                .or_else(|| s.strip_prefix('p'))
                .ok_or_else(|| {
                    format!(
                        "unknown statistic {s:?}; use min, max, mean, med, pN, p(N), \
                         success, errors, rate, throughput or requests"
                    )
                })?;
            let p: f64 = n
                .trim()
                .parse()
                .map_err(|_| format!("bad percentile {s:?}"))?;
            if !(0.0..=100.0).contains(&p) {
                return Err(format!("percentile {s:?} is outside 0..100"));
            }
            Stat::Quantile(p / 100.0)
        }
    };
    Ok(Subject::Duration(series, stat))
}

fn parse_duration_value(s: &str) -> Result<f64, String> {
    if let Ok(ms) = s.parse::<f64>() {
        if ms.is_finite() && ms >= 0.0 {
            return Ok(ms * 1e6);
        }
        return Err(format!("bad duration {s:?}"));
    }
    match volley_pacer::parse_duration(s) {
        Ok(d) => Ok(d.as_nanos() as f64),
        _ => Err(format!(
            "bad duration {s:?}; use 250ms, 1.5s, 1m, or a number of milliseconds"
        )),
    }
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    let (num, scale) = match s.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (s, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad ratio {s:?}; use 99.9% or 0.999"))?;
    let r = v / scale;
    if !(0.0..=1.0).contains(&r) || !r.is_finite() {
        return Err(format!(
            "ratio {s:?} is outside 0..100% (write 99.9% or 0.999)"
        ));
    }
    Ok(r)
}

fn parse_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("bad number {s:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rec;
    use crate::Sink;
    use volley_results::ErrorKind;

    const MS: f64 = 1e6;

    #[test]
    fn parses_the_documented_examples() {
        let cases: &[(&str, Subject, Op, f64)] = &[
            (
                "p99<250ms",
                Subject::Duration(Series::Latency, Stat::Quantile(0.99)),
                Op::Lt,
                250.0 * MS,
            ),
            (
                "p(95)<=1s",
                Subject::Duration(Series::Latency, Stat::Quantile(0.95)),
                Op::Le,
                1000.0 * MS,
            ),
            (
                "mean<100ms",
                Subject::Duration(Series::Latency, Stat::Mean),
                Op::Lt,
                100.0 * MS,
            ),
            (
                "max<2s",
                Subject::Duration(Series::Latency, Stat::Max),
                Op::Lt,
                2000.0 * MS,
            ),
            ("success>=99.9%", Subject::Success, Op::Ge, 0.999),
            ("errors<1%", Subject::Errors, Op::Lt, 0.01),
            ("rate>900", Subject::Rate, Op::Gt, 900.0),
            ("throughput>=1000/s", Subject::Throughput, Op::Ge, 1000.0),
            (
                "http_req_duration:p(95)<500",
                Subject::Duration(Series::Latency, Stat::Quantile(0.95)),
                Op::Lt,
                500.0 * MS,
            ),
            ("http_req_failed:rate<0.01", Subject::Errors, Op::Lt, 0.01),
            ("http_reqs:count>=10", Subject::Requests, Op::Ge, 10.0),
            (
                "lag:p99.9 < 10ms",
                Subject::Duration(Series::Lag, Stat::Quantile(0.999)),
                Op::Lt,
                10.0 * MS,
            ),
            (
                "http_req_waiting:med==1ms",
                Subject::Duration(Series::Phase(Phase::Waiting), Stat::Quantile(0.5)),
                Op::Eq,
                MS,
            ),
        ];
        for (spec, subject, op, value) in cases {
            let t = Threshold::parse(spec).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(t.op, *op, "{spec}");
            match (t.subject, subject) {
                (
                    Subject::Duration(a, Stat::Quantile(x)),
                    Subject::Duration(b, Stat::Quantile(y)),
                ) => {
                    assert_eq!(a, *b, "{spec}");
                    assert!((x - y).abs() < 1e-12, "{spec}");
                }
                (a, b) => assert_eq!(a, *b, "{spec}"),
            }
            assert!((t.value - value).abs() < 1e-6, "{spec}: {}", t.value);
        }
    }

    #[test]
    fn bad_specs_name_the_spec_in_one_line() {
        for bad in [
            "",
            "p99",
            "p99<",
            "p99<<3ms",
            "p101<1s",
            "pxx<1s",
            "foo:p99<1s",
            "success>=150%",
            "success>=2",
            "p99<abc",
            "rate>-1",
            "http_req_failed:count<1",
            "<1s",
            "p99<1s<2s",
            "p99=>1s",
        ] {
            let e = Threshold::parse(bad).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(&format!("{:?}", bad.trim())), "{msg}");
            assert!(!msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn verdicts_print_mark_spec_and_actual() {
        let mut m = Metrics::new();
        for i in 0..100u64 {
            let mut r = rec(i as i64 * 1_000_000, (i + 1) * 100_000, 200);
            if i == 0 {
                r.code = 0;
                r.error_kind = ErrorKind::Timeout;
            }
            m.add(&r);
        }
        let ts = parse_all(&["p99<250ms", "success>=99.9%", "max<=10ms", "requests==100"]).unwrap();
        let v = evaluate(&ts, &m);
        let lines: Vec<String> = v.iter().map(|v| v.to_string()).collect();
        assert_eq!(
            lines,
            [
                "✓ p99<250ms (actual 9.9ms)",
                "✗ success>=99.9% (actual 99%)",
                "✓ max<=10ms (actual 10ms)",
                "✓ requests==100 (actual 100)",
            ]
        );
        assert!(!all_ok(&v));
        assert_eq!(v[1].metric, "http_req_failed");
    }

    #[test]
    fn no_requests_fail_every_threshold() {
        let t = Threshold::parse("errors<1%").unwrap();
        let v = t.evaluate(&Metrics::new());
        assert!(!v.ok);
        assert_eq!(v.to_string(), "✗ errors<1% (actual no requests)");
    }
}
