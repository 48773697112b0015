//! vegeta's bucketed latency histogram (`-type=hist[0,20ms,40ms,...]`):
//! a [`Sink`] with exact counts per bucket and the reporter that prints it
//! in vegeta's layout.
//!
//! Bucket rule, as vegeta's: a latency goes to bucket `i` when
//! `b[i] <= latency < b[i+1]`; anything else (at or above the last bound,
//! or below the first one) goes to the last bucket, printed `[last, +Inf]`.

use std::io::{self, Write};

use volley_results::Record;

use crate::gofmt;
use crate::metrics::Sink;
use crate::tabwriter::TabWriter;

/// Bucket bounds that do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad buckets {spec:?}: {reason}")]
pub struct BucketsError {
    /// The rejected text.
    pub spec: String,
    /// Why.
    pub reason: String,
}

/// Exact per-bucket latency counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    bounds: Vec<u64>,
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    /// A histogram over ascending lower bounds in nanoseconds.
    pub fn new(bounds: Vec<u64>) -> Result<Self, BucketsError> {
        if bounds.is_empty() {
            return Err(BucketsError {
                spec: String::new(),
                reason: "no buckets".into(),
            });
        }
        let counts = vec![0; bounds.len()];
        Ok(Histogram {
            bounds,
            counts,
            total: 0,
        })
    }

    /// Parses vegeta's bucket list, `[0,20ms,40ms]` (Go durations).
    pub fn parse(spec: &str) -> Result<Self, BucketsError> {
        let bad = |reason: String| BucketsError {
            spec: spec.to_string(),
            reason,
        };
        let inner = spec
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .ok_or_else(|| bad("expected [d1,d2,...]".into()))?;
        let mut bounds = Vec::new();
        for part in inner.split(',') {
            let part = part.trim();
            let d = volley_pacer::parse_duration(part)
                .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
                .map_err(|e| bad(e.to_string()))?;
            bounds.push(d);
        }
        if bounds.windows(2).any(|w| w[0] >= w[1]) {
            return Err(bad("bounds must increase".into()));
        }
        Histogram::new(bounds).map_err(|e| bad(e.reason))
    }

    /// Counts one latency.
    #[inline]
    pub fn record(&mut self, latency: u64) {
        let n = self.bounds.len();
        // First bucket whose lower bound is above the latency, minus one.
        let i = self.bounds.partition_point(|&b| b <= latency);
        let idx = if i == 0 || i >= n { n - 1 } else { i - 1 };
        self.counts[idx] += 1;
        self.total += 1;
    }

    /// Lower bounds, ns.
    pub fn bounds(&self) -> &[u64] {
        &self.bounds
    }

    /// Counts per bucket.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// All counted latencies.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Builds a histogram from known counts (for tests and re-rendering).
    pub fn from_counts(bounds: Vec<u64>, counts: Vec<u64>) -> Result<Self, BucketsError> {
        if bounds.len() != counts.len() || bounds.is_empty() {
            return Err(BucketsError {
                spec: String::new(),
                reason: "bounds and counts differ in length".into(),
            });
        }
        let total = counts.iter().sum();
        Ok(Histogram {
            bounds,
            counts,
            total,
        })
    }

    /// The bucket's printed bounds, `(lo, hi)`, `hi` being `+Inf` last.
    pub fn nth(&self, i: usize) -> (String, String) {
        let lo = gofmt::duration_string(gofmt::clamp_i64(self.bounds[i]));
        let hi = match self.bounds.get(i + 1) {
            Some(&b) => gofmt::duration_string(gofmt::clamp_i64(b)),
            None => "+Inf".to_string(),
        };
        (lo, hi)
    }

    /// vegeta's hist report: `Bucket  #  %  Histogram`, one row per bucket,
    /// bars of `#` 75 wide for 100%.
    pub fn report(&self, w: &mut impl Write) -> io::Result<()> {
        let mut tw = TabWriter::new(2);
        tw.write_str("Bucket\t\t#\t%\tHistogram\n");
        for (i, &count) in self.counts.iter().enumerate() {
            let ratio = if self.total == 0 {
                0.0
            } else {
                count as f64 / self.total as f64
            };
            let (lo, hi) = self.nth(i);
            let bar = "#".repeat((ratio * 75.0) as usize);
            tw.write_str(&format!(
                "[{lo},\t{hi}]\t{count}\t{:.2}%\t{bar}\n",
                ratio * 100.0
            ));
        }
        w.write_all(tw.finish().as_bytes())
    }
}

impl Sink for Histogram {
    fn add(&mut self, r: &Record) {
        self.record(r.latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn parses_vegeta_bucket_lists() {
        let h = Histogram::parse("[0,20ms, 40ms,1s]").unwrap();
        assert_eq!(h.bounds(), &[0, 20 * MS, 40 * MS, 1_000 * MS]);
        for bad in ["0,1ms", "[]", "[1ms,0]", "[x]", "[-1ms]", "[1ms,1ms]"] {
            assert!(Histogram::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn buckets_follow_vegeta_rules() {
        let mut h = Histogram::parse("[10ms,20ms,30ms]").unwrap();
        for l in [10 * MS, 19 * MS, 20 * MS, 30 * MS, 99 * MS, 5 * MS] {
            h.record(l);
        }
        // 5ms is below the first bound: vegeta puts it in the last bucket.
        assert_eq!(h.counts(), &[2, 1, 3]);
    }

    #[test]
    fn empty_histogram_prints_zero_ratios() {
        let h = Histogram::parse("[0,1ms]").unwrap();
        let mut out = Vec::new();
        h.report(&mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("[0s,    1ms]   0  0.00%"), "{s}");
    }
}
