//! The JSON report: vegeta's object with vegeta's field names and meanings
//! (durations in integer nanoseconds, timestamps in RFC 3339, `success` as
//! a ratio), plus everything volley adds under the single key `volley`.
//! One object, one line, as vegeta's encoder writes it.
//!
//! The shape is locked by `schema/report.schema.json` (checked in tests):
//! scripts may rely on every key listed there.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::breakdown::{Breakdown, BreakdownBy};
use crate::gofmt::{rfc3339_nano, ZERO_TIME};
use crate::histogram::Histogram;
use crate::metrics::{Distribution, Metrics, Phase};
use crate::threshold::Verdict;
use volley_results::ErrorKind;

/// The JSON Schema of this report.
pub const SCHEMA: &str = include_str!("../schema/report.schema.json");

/// Optional parts of the JSON report.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExtras<'a> {
    /// vegeta's `buckets` (with `-buckets`): bucket lower bound (ns) → count.
    pub buckets: Option<&'a Histogram>,
    /// Breakdowns, written as `volley.by_target` / `volley.by_attack`.
    pub breakdowns: &'a [&'a Breakdown],
    /// Threshold verdicts, written as `volley.thresholds`.
    pub verdicts: &'a [Verdict],
    /// Diagnosis lines, written as `volley.diagnosis`.
    pub diagnosis: &'a [String],
}

/// A float as Go's JSON encoder writes it: integral values without `.0`.
struct GoFloat(f64);

impl Serialize for GoFloat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = if self.0.is_finite() { self.0 } else { 0.0 };
        if v.fract() == 0.0 && v.abs() < 1e15 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

/// A map written in the given order.
struct Ordered<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Ordered<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct VegetaLatencies {
    total: u128,
    mean: u64,
    #[serde(rename = "50th")]
    p50: u64,
    #[serde(rename = "90th")]
    p90: u64,
    #[serde(rename = "95th")]
    p95: u64,
    #[serde(rename = "99th")]
    p99: u64,
    max: u64,
    min: u64,
}

#[derive(Serialize)]
struct ByteMetrics {
    total: u64,
    mean: GoFloat,
}

#[derive(Serialize)]
struct Report<'a> {
    latencies: VegetaLatencies,
    #[serde(skip_serializing_if = "Option::is_none")]
    buckets: Option<Ordered<String, u64>>,
    bytes_in: ByteMetrics,
    bytes_out: ByteMetrics,
    earliest: String,
    latest: String,
    end: String,
    duration: u64,
    wait: u64,
    requests: u64,
    rate: GoFloat,
    throughput: GoFloat,
    success: GoFloat,
    status_codes: BTreeMap<String, u64>,
    errors: Vec<&'a str>,
    volley: Volley<'a>,
}

/// A distribution in nanoseconds.
#[derive(Serialize)]
struct Dist {
    count: u64,
    min: u64,
    mean: u64,
    p50: u64,
    p90: u64,
    p95: u64,
    p99: u64,
    p999: u64,
    max: u64,
}

impl Dist {
    fn of(d: &Distribution) -> Self {
        Dist {
            count: d.count(),
            min: d.min(),
            mean: d.mean(),
            p50: d.quantile(0.5),
            p90: d.quantile(0.9),
            p95: d.quantile(0.95),
            p99: d.quantile(0.99),
            p999: d.quantile(0.999),
            max: d.max(),
        }
    }
}

#[derive(Serialize)]
struct ErrorCount<'a> {
    error: &'a str,
    kind: &'static str,
    count: u64,
}

#[derive(Serialize)]
struct Entry<'a> {
    key: &'a str,
    requests: u64,
    successes: u64,
    rate: GoFloat,
    throughput: GoFloat,
    success: GoFloat,
    latencies: Dist,
    status_codes: BTreeMap<String, u64>,
}

#[derive(Serialize)]
struct VerdictJson<'a> {
    spec: &'a str,
    actual: &'a str,
    ok: bool,
}

#[derive(Serialize)]
struct Volley<'a> {
    successes: u64,
    latencies: Dist,
    success_latencies: Dist,
    lag: Dist,
    phases: Ordered<&'static str, Dist>,
    error_kinds: Ordered<&'static str, u64>,
    error_counts: Vec<ErrorCount<'a>>,
    errors_untracked: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    by_target: Option<Vec<Entry<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by_attack: Option<Vec<Entry<'a>>>,
    thresholds: Vec<VerdictJson<'a>>,
    diagnosis: Vec<&'a str>,
}

fn status_codes(m: &Metrics) -> BTreeMap<String, u64> {
    m.status_codes()
        .iter()
        .map(|(c, n)| (c.to_string(), *n))
        .collect()
}

fn entries(b: &Breakdown) -> Vec<Entry<'_>> {
    b.entries()
        .map(|(key, m)| Entry {
            key,
            requests: m.requests(),
            successes: m.successes(),
            rate: GoFloat(m.rate()),
            throughput: GoFloat(m.throughput()),
            success: GoFloat(m.success_ratio()),
            latencies: Dist::of(m.latency()),
            status_codes: status_codes(m),
        })
        .collect()
}

/// Builds the report as a JSON value (for callers that embed it).
pub fn to_value(m: &Metrics, extras: &JsonExtras<'_>) -> serde_json::Value {
    serde_json::to_value(build(m, extras)).unwrap_or(serde_json::Value::Null)
}

fn build<'a>(m: &'a Metrics, extras: &JsonExtras<'a>) -> Report<'a> {
    let l = m.latency();
    let time = |t: Option<i64>| t.map_or_else(|| ZERO_TIME.to_string(), rfc3339_nano);
    let find = |by: BreakdownBy| {
        extras
            .breakdowns
            .iter()
            .find(|b| b.by() == by)
            .map(|b| entries(b))
    };
    Report {
        latencies: VegetaLatencies {
            total: l.sum(),
            mean: l.mean(),
            p50: l.quantile(0.5),
            p90: l.quantile(0.9),
            p95: l.quantile(0.95),
            p99: l.quantile(0.99),
            max: l.max(),
            min: l.min(),
        },
        buckets: extras.buckets.map(|h| {
            Ordered(
                h.bounds()
                    .iter()
                    .zip(h.counts())
                    .map(|(b, c)| (b.to_string(), *c))
                    .collect(),
            )
        }),
        bytes_in: ByteMetrics {
            total: m.bytes_in(),
            mean: GoFloat(m.bytes_in_mean()),
        },
        bytes_out: ByteMetrics {
            total: m.bytes_out(),
            mean: GoFloat(m.bytes_out_mean()),
        },
        earliest: time(m.earliest()),
        latest: time(m.latest()),
        end: time(m.end()),
        duration: m.duration(),
        wait: m.wait(),
        requests: m.requests(),
        rate: GoFloat(m.rate()),
        throughput: GoFloat(m.throughput()),
        success: GoFloat(m.success_ratio()),
        status_codes: status_codes(m),
        errors: m.errors().iter().map(|e| &*e.text).collect(),
        volley: Volley {
            successes: m.successes(),
            latencies: Dist::of(l),
            success_latencies: Dist::of(m.success_latency()),
            lag: Dist::of(m.lag()),
            phases: Ordered(
                Phase::ALL
                    .iter()
                    .map(|p| (p.name(), Dist::of(m.phase(*p))))
                    .collect(),
            ),
            error_kinds: Ordered(
                ErrorKind::ALL
                    .iter()
                    .filter(|k| **k != ErrorKind::None && m.error_kind_count(**k) > 0)
                    .map(|k| (k.name(), m.error_kind_count(*k)))
                    .collect(),
            ),
            error_counts: m
                .errors()
                .iter()
                .map(|e| ErrorCount {
                    error: &e.text,
                    kind: e.kind.name(),
                    count: e.count,
                })
                .collect(),
            errors_untracked: m.errors_untracked(),
            by_target: find(BreakdownBy::Target),
            by_attack: find(BreakdownBy::Attack),
            thresholds: extras
                .verdicts
                .iter()
                .map(|v| VerdictJson {
                    spec: &v.spec,
                    actual: &v.actual,
                    ok: v.ok,
                })
                .collect(),
            diagnosis: extras.diagnosis.iter().map(String::as_str).collect(),
        },
    }
}

/// Writes the report as one line of JSON, escaped as Go's encoder escapes
/// (`<`, `>`, `&`, U+2028, U+2029 as `\u` sequences).
pub fn report(m: &Metrics, extras: &JsonExtras<'_>, w: &mut impl Write) -> io::Result<()> {
    let text = serde_json::to_string(&build(m, extras)).map_err(io::Error::other)?;
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\n');
    w.write_all(out.as_bytes())
}
