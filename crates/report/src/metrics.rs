//! Sinks and the in-memory aggregate every report reads.
//!
//! A [`Sink`] takes records one at a time (`add`) and is told when the
//! stream ends (`finish`). [`Metrics`] is the main sink: counts, exact
//! min/max/mean, HDR histograms (3 significant digits, memory bounded by the
//! range of values seen, not their number) for latency, each k6 phase and
//! the send lag; bytes, status codes, the error set and errors per
//! [`ErrorKind`]. Derived values (rate, throughput, duration, percentiles)
//! are computed on demand, so a report can be printed from the same
//! `Metrics` any number of times while records keep arriving (`-every`).
//!
//! Order does not matter: records from several files, interleaved in any
//! way, give the same figures.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use hdrhistogram::Histogram;
use volley_results::{ErrorKind, Record};

use crate::gofmt;

/// Something that consumes result records.
pub trait Sink {
    /// Takes one record.
    fn add(&mut self, r: &Record);
    /// Marks the end of the stream; later `add` calls are still accepted.
    fn finish(&mut self) {}
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn add(&mut self, r: &Record) {
        (**self).add(r)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn add(&mut self, r: &Record) {
        (**self).add(r)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
}

impl<S: Sink> Sink for Vec<S> {
    fn add(&mut self, r: &Record) {
        for s in self.iter_mut() {
            s.add(r);
        }
    }
    fn finish(&mut self) {
        for s in self.iter_mut() {
            s.finish();
        }
    }
}

/// Largest value a histogram records (about 146 years in nanoseconds);
/// larger values are clamped (min/max/mean stay exact).
const MAX_TRACKED: u64 = 1 << 62;

/// A distribution of nanosecond values: exact count, sum, min, max, and an
/// HDR histogram for percentiles exact to 3 significant digits.
#[derive(Debug, Clone)]
pub struct Distribution {
    hist: Histogram<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            // Auto-resizing from a tiny range: memory follows the largest
            // value seen (1 ns .. 1 h is about 300 KiB), never the count.
            hist: Histogram::new(3).expect("3 significant digits is a valid precision"),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Distribution {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let clamped = v.min(MAX_TRACKED);
        if self.hist.record(clamped).is_err() {
            self.hist.saturating_record(clamped);
        }
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &Distribution) {
        if other.count == 0 {
            return;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        // Cannot fail: this histogram resizes itself to fit.
        let _ = self.hist.add(&other.hist);
    }

    /// Number of values.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact sum.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Exact minimum, 0 when empty.
    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// Exact maximum, 0 when empty.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Exact mean (truncated to the nanosecond), 0 when empty.
    pub fn mean(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            u64::try_from(self.sum / u128::from(self.count)).unwrap_or(u64::MAX)
        }
    }

    /// Mean as a float, for k6-style figures.
    pub fn mean_f64(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The value at quantile `q` (0..=1), exact to 3 significant digits and
    /// never outside [min, max]; `q <= 0` is the min, `q >= 1` the max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q.is_nan() || q <= 0.0 {
            return self.min;
        }
        if q >= 1.0 {
            return self.max;
        }
        self.hist
            .value_at_quantile(q)
            .clamp(self.min, self.max.min(MAX_TRACKED).max(self.min))
    }
}

/// A request phase, named as k6 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Waiting for a connection or worker, DNS included (`http_req_blocked`).
    Blocked,
    /// DNS resolution alone.
    Dns,
    /// TCP connect (`http_req_connecting`).
    Connecting,
    /// TLS handshake (`http_req_tls_handshaking`).
    TlsHandshaking,
    /// Time to first byte (`http_req_waiting`).
    Waiting,
    /// Body read (`http_req_receiving`).
    Receiving,
}

impl Phase {
    /// Every phase, in request order.
    pub const ALL: [Phase; 6] = [
        Phase::Blocked,
        Phase::Dns,
        Phase::Connecting,
        Phase::TlsHandshaking,
        Phase::Waiting,
        Phase::Receiving,
    ];

    /// Stable short name (JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            Phase::Blocked => "blocked",
            Phase::Dns => "dns",
            Phase::Connecting => "connecting",
            Phase::TlsHandshaking => "tls_handshaking",
            Phase::Waiting => "waiting",
            Phase::Receiving => "receiving",
        }
    }

    fn of(self, r: &Record) -> u64 {
        let p = &r.phases;
        match self {
            Phase::Blocked => p.blocked,
            Phase::Dns => p.dns,
            Phase::Connecting => p.connecting,
            Phase::TlsHandshaking => p.tls_handshaking,
            Phase::Waiting => p.waiting,
            Phase::Receiving => p.receiving,
        }
    }
}

/// Which status codes count as success. Default: 200..=399, vegeta's rule.
/// A record with a transport error never succeeds; a record whose only
/// "error" is its status (`ErrorKind::Status`) succeeds when its code is in
/// the set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuccessCodes {
    ranges: Vec<(u16, u16)>,
}

impl Default for SuccessCodes {
    fn default() -> Self {
        SuccessCodes {
            ranges: vec![(200, 399)],
        }
    }
}

/// A success-code list that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid success codes {spec:?}: expected codes or ranges like 200-399,404")]
pub struct SuccessCodesError {
    /// The rejected text.
    pub spec: String,
}

impl SuccessCodes {
    /// Parses `200-399,404`.
    pub fn parse(spec: &str) -> Result<Self, SuccessCodesError> {
        let err = || SuccessCodesError {
            spec: spec.to_string(),
        };
        let mut ranges = Vec::new();
        for part in spec.split(',').map(str::trim) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let lo: u16 = lo.parse().map_err(|_| err())?;
            let hi: u16 = hi.parse().map_err(|_| err())?;
            if lo > hi {
                return Err(err());
            }
            ranges.push((lo, hi));
        }
        Ok(SuccessCodes { ranges })
    }

    /// Whether the record counts as a success.
    #[inline]
    pub fn is_success(&self, r: &Record) -> bool {
        matches!(r.error_kind, ErrorKind::None | ErrorKind::Status)
            && self
                .ranges
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&r.code))
    }
}

/// Most distinct error texts kept; later new texts are only counted (an
/// error text embedding a port number could otherwise grow without bound).
pub const MAX_ERROR_TEXTS: usize = 10_000;

/// The aggregate of a set of records. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    success_codes: SuccessCodes,
    requests: u64,
    successes: u64,
    latency: Distribution,
    success_latency: Distribution,
    lag: Distribution,
    phases: [Distribution; 6],
    bytes_in: u64,
    bytes_out: u64,
    status: BTreeMap<u16, u64>,
    errors: Vec<ErrorEntry>,
    error_index: HashMap<Arc<str>, usize>,
    errors_untracked: u64,
    kinds: [u64; ErrorKind::ALL.len()],
    earliest: Option<i64>,
    latest: Option<i64>,
    end: Option<i64>,
}

/// One distinct error text, its first kind and how often it occurred.
#[derive(Debug, Clone)]
pub struct ErrorEntry {
    /// The text, as recorded.
    pub text: Arc<str>,
    /// The kind of its first occurrence.
    pub kind: ErrorKind,
    /// Occurrences.
    pub count: u64,
}

impl Sink for Metrics {
    fn add(&mut self, r: &Record) {
        self.add_record(r);
    }
}

impl Metrics {
    /// Empty metrics with vegeta's success rule.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empty metrics with a custom success rule.
    pub fn with_success_codes(codes: SuccessCodes) -> Self {
        Metrics {
            success_codes: codes,
            ..Self::default()
        }
    }

    /// Adds one record (also available as [`Sink::add`]). No allocation in
    /// steady state: only a new status code or a new error text allocates.
    #[inline]
    pub fn add_record(&mut self, r: &Record) {
        self.requests += 1;
        self.latency.record(r.latency);
        self.lag.record(r.lag);
        for (dist, phase) in self.phases.iter_mut().zip(Phase::ALL) {
            dist.record(phase.of(r));
        }
        self.bytes_in = self.bytes_in.saturating_add(r.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(r.bytes_out);
        *self.status.entry(r.code).or_insert(0) += 1;
        if self.success_codes.is_success(r) {
            self.successes += 1;
            self.success_latency.record(r.latency);
        }
        self.kinds[r.error_kind as usize] += 1;
        if !r.error.is_empty() {
            self.add_error(&r.error, r.error_kind, 1);
        }
        let end = r.end();
        self.earliest = Some(self.earliest.map_or(r.timestamp, |e| e.min(r.timestamp)));
        self.latest = Some(self.latest.map_or(r.timestamp, |l| l.max(r.timestamp)));
        self.end = Some(self.end.map_or(end, |e| e.max(end)));
    }

    fn add_error(&mut self, text: &Arc<str>, kind: ErrorKind, count: u64) {
        if let Some(&i) = self.error_index.get(&**text) {
            self.errors[i].count += count;
        } else if self.errors.len() < MAX_ERROR_TEXTS {
            self.error_index.insert(text.clone(), self.errors.len());
            self.errors.push(ErrorEntry {
                text: text.clone(),
                kind,
                count,
            });
        } else {
            self.errors_untracked += count;
        }
    }

    /// Adds everything in `other` (e.g. per-worker or per-file metrics).
    pub fn merge(&mut self, other: &Metrics) {
        self.requests += other.requests;
        self.successes += other.successes;
        self.latency.merge(&other.latency);
        self.success_latency.merge(&other.success_latency);
        self.lag.merge(&other.lag);
        for (a, b) in self.phases.iter_mut().zip(&other.phases) {
            a.merge(b);
        }
        self.bytes_in = self.bytes_in.saturating_add(other.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(other.bytes_out);
        for (code, n) in &other.status {
            *self.status.entry(*code).or_insert(0) += n;
        }
        for e in &other.errors {
            self.add_error(&e.text, e.kind, e.count);
        }
        self.errors_untracked += other.errors_untracked;
        for (a, b) in self.kinds.iter_mut().zip(other.kinds) {
            *a += b;
        }
        let pick = |a: Option<i64>, b: Option<i64>, f: fn(i64, i64) -> i64| match (a, b) {
            (Some(x), Some(y)) => Some(f(x, y)),
            (x, None) => x,
            (None, y) => y,
        };
        self.earliest = pick(self.earliest, other.earliest, i64::min);
        self.latest = pick(self.latest, other.latest, i64::max);
        self.end = pick(self.end, other.end, i64::max);
    }

    /// Total requests.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Successful requests.
    pub fn successes(&self) -> u64 {
        self.successes
    }

    /// Successes / requests (0 when empty).
    pub fn success_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.successes as f64 / self.requests as f64
        }
    }

    /// Latency (intended send → last byte).
    pub fn latency(&self) -> &Distribution {
        &self.latency
    }

    /// Latency of successful requests only (k6's `expected_response:true`).
    pub fn success_latency(&self) -> &Distribution {
        &self.success_latency
    }

    /// Send lag (intended → actual send).
    pub fn lag(&self) -> &Distribution {
        &self.lag
    }

    /// One phase's distribution.
    pub fn phase(&self, p: Phase) -> &Distribution {
        &self.phases[p as usize]
    }

    /// Total response bytes.
    pub fn bytes_in(&self) -> u64 {
        self.bytes_in
    }

    /// Total request bytes.
    pub fn bytes_out(&self) -> u64 {
        self.bytes_out
    }

    /// Mean bytes in per request (0 when empty).
    pub fn bytes_in_mean(&self) -> f64 {
        per_request(self.bytes_in, self.requests)
    }

    /// Mean bytes out per request (0 when empty).
    pub fn bytes_out_mean(&self) -> f64 {
        per_request(self.bytes_out, self.requests)
    }

    /// Status code → count, by code.
    pub fn status_codes(&self) -> &BTreeMap<u16, u64> {
        &self.status
    }

    /// Distinct error texts in first-seen order (vegeta's Error Set).
    pub fn errors(&self) -> &[ErrorEntry] {
        &self.errors
    }

    /// Errors whose text was not kept (beyond [`MAX_ERROR_TEXTS`]).
    pub fn errors_untracked(&self) -> u64 {
        self.errors_untracked
    }

    /// Requests of one error kind (`ErrorKind::None`: without error).
    pub fn error_kind_count(&self, kind: ErrorKind) -> u64 {
        self.kinds[kind as usize]
    }

    /// Earliest intended send time (Unix ns).
    pub fn earliest(&self) -> Option<i64> {
        self.earliest
    }

    /// Latest intended send time (Unix ns).
    pub fn latest(&self) -> Option<i64> {
        self.latest
    }

    /// Latest completion time, timestamp + latency (Unix ns).
    pub fn end(&self) -> Option<i64> {
        self.end
    }

    /// Attack duration: latest − earliest send time, ns.
    pub fn duration(&self) -> u64 {
        match (self.earliest, self.latest) {
            (Some(e), Some(l)) => (i128::from(l) - i128::from(e)).clamp(0, i64::MAX as i128) as u64,
            _ => 0,
        }
    }

    /// Wait: latest completion − latest send time, ns.
    pub fn wait(&self) -> u64 {
        match (self.latest, self.end) {
            (Some(l), Some(e)) => (i128::from(e) - i128::from(l)).clamp(0, i64::MAX as i128) as u64,
            _ => 0,
        }
    }

    /// Total duration, attack + wait, ns.
    pub fn total_duration(&self) -> u64 {
        self.duration().saturating_add(self.wait())
    }

    /// vegeta's rate: requests / attack seconds (requests when the attack
    /// lasted no time).
    pub fn rate(&self) -> f64 {
        let secs = gofmt::seconds(self.duration());
        if secs > 0.0 {
            self.requests as f64 / secs
        } else {
            self.requests as f64
        }
    }

    /// vegeta's throughput: successes / (attack + wait) seconds (successes
    /// when the attack lasted no time).
    pub fn throughput(&self) -> f64 {
        if gofmt::seconds(self.duration()) > 0.0 {
            self.successes as f64 / gofmt::seconds(self.total_duration())
        } else {
            self.successes as f64
        }
    }
}

fn per_request(total: u64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        total as f64 / requests as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rec;

    #[test]
    fn empty_metrics_are_all_zero() {
        let m = Metrics::new();
        assert_eq!(m.requests(), 0);
        assert_eq!(m.rate(), 0.0);
        assert_eq!(m.throughput(), 0.0);
        assert_eq!(m.latency().quantile(0.99), 0);
        assert_eq!(m.latency().mean(), 0);
        assert_eq!(m.bytes_in_mean(), 0.0);
        assert_eq!(m.duration(), 0);
    }

    #[test]
    fn vegeta_rate_throughput_and_durations() {
        let mut m = Metrics::new();
        // 5 requests 1s apart; the last takes 2s; one fails.
        for i in 0..5 {
            let mut r = rec(i * 1_000_000_000, 100_000_000, 200);
            if i == 4 {
                r.latency = 2_000_000_000;
            }
            if i == 2 {
                r.code = 0;
                r.error_kind = ErrorKind::Timeout;
                r.error = "timeout".into();
            }
            m.add(&r);
        }
        assert_eq!(m.duration(), 4_000_000_000);
        assert_eq!(m.wait(), 2_000_000_000);
        assert_eq!(m.rate(), 5.0 / 4.0);
        assert_eq!(m.throughput(), 4.0 / 6.0);
        assert_eq!(m.success_ratio(), 0.8);
        assert_eq!(m.latency().min(), 100_000_000);
        assert_eq!(m.latency().max(), 2_000_000_000);
        assert_eq!(m.latency().mean(), 480_000_000);
        assert_eq!(m.error_kind_count(ErrorKind::Timeout), 1);
        assert_eq!(m.status_codes().get(&0), Some(&1));
    }

    #[test]
    fn single_request_rate_is_the_count() {
        let mut m = Metrics::new();
        m.add(&rec(5, 10, 200));
        assert_eq!(m.rate(), 1.0);
        assert_eq!(m.throughput(), 1.0);
    }

    #[test]
    fn order_and_merging_do_not_change_the_figures() {
        let records: Vec<Record> = (0..1000)
            .map(|i| rec((i * 7919 % 1000) * 1_000_000, 1_000 + i as u64 * 37, 200))
            .collect();
        let mut all = Metrics::new();
        let (mut a, mut b) = (Metrics::new(), Metrics::new());
        for (i, r) in records.iter().enumerate() {
            all.add(r);
            if i % 3 == 0 {
                a.add(r)
            } else {
                b.add(r)
            }
        }
        a.merge(&b);
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(a.latency().quantile(q), all.latency().quantile(q));
        }
        assert_eq!(a.duration(), all.duration());
        assert_eq!(a.wait(), all.wait());
        assert_eq!(a.requests(), 1000);
        assert_eq!(a.latency().sum(), all.latency().sum());
    }

    #[test]
    fn percentiles_are_within_three_significant_digits() {
        let mut m = Metrics::new();
        for v in 1..=100_000u64 {
            m.add(&rec(0, v * 1_000, 200));
        }
        let p99 = m.latency().quantile(0.99) as f64;
        assert!((p99 - 99_000_000.0).abs() / 99_000_000.0 < 0.001, "{p99}");
        assert_eq!(m.latency().quantile(1.0), 100_000_000);
        assert_eq!(m.latency().quantile(0.0), 1_000);
    }

    #[test]
    fn error_set_keeps_first_seen_order_and_counts() {
        let mut m = Metrics::new();
        for text in ["b", "a", "b", "c", "a", "a"] {
            let mut r = rec(0, 1, 0);
            r.error_kind = ErrorKind::Other;
            r.error = text.into();
            m.add(&r);
        }
        let got: Vec<(&str, u64)> = m.errors().iter().map(|e| (&*e.text, e.count)).collect();
        assert_eq!(got, [("b", 2), ("a", 3), ("c", 1)]);
    }

    #[test]
    fn huge_values_do_not_panic() {
        let mut m = Metrics::new();
        let mut r = rec(i64::MAX, u64::MAX, 200);
        r.lag = u64::MAX;
        r.bytes_in = u64::MAX;
        m.add(&r);
        m.add(&rec(i64::MIN, 0, 65535));
        assert_eq!(m.latency().max(), u64::MAX);
        assert_eq!(m.latency().quantile(0.5), 0);
        assert!(m.rate() > 0.0);
        let _ = m.throughput();
    }

    #[test]
    fn custom_success_codes() {
        let codes = SuccessCodes::parse("200-299, 404").unwrap();
        let mut m = Metrics::with_success_codes(codes);
        let mut nf = rec(0, 1, 404);
        nf.error_kind = ErrorKind::Status;
        nf.error = "404 Not Found".into();
        m.add(&nf);
        m.add(&rec(0, 1, 302));
        assert_eq!(m.successes(), 1);
        assert!(SuccessCodes::parse("2xx").is_err());
        assert!(SuccessCodes::parse("300-200").is_err());
    }
}
