//! Generator self-diagnosis: when the results show that the generator, not
//! the target, was the limit — out of file descriptors, out of ephemeral
//! ports, failing DNS, falling behind its schedule, or sending well below
//! the requested rate — say so in one line each, with the fix.
//!
//! Seed 000's 15,000 req/s run is the motivating case: vegeta printed
//! `socket: too many open files` and `bind: address already in use` among
//! the target's errors, and the report read as if the service had failed.

use crate::k6::human_duration_ns;
use crate::metrics::Metrics;
use volley_results::ErrorKind;

/// A gauge as k6 reports it: last value, min and max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gauge {
    /// Last value.
    pub value: u64,
    /// Smallest value seen.
    pub min: u64,
    /// Largest value seen.
    pub max: u64,
}

/// What the run asked for, when known (from the results header or flags).
/// Everything is optional: reports work without it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunInfo {
    /// Requested constant rate, requests per second (`None` for as fast as
    /// possible, ramps, or the closed model).
    pub rate: Option<f64>,
    /// `-workers`.
    pub workers: Option<u64>,
    /// `-max-workers`.
    pub max_workers: Option<u64>,
    /// `-pace-window` when set by hand, seconds: requests wait up to this
    /// long by design, so such a lag is not the generator falling behind.
    pub pace_window: Option<f64>,
    /// Virtual users (closed model), for the k6 summary's `vus`.
    pub vus: Option<Gauge>,
    /// Allocated users, for the k6 summary's `vus_max`.
    pub vus_max: Option<Gauge>,
}

/// Send lag (p99) below which the schedule counts as kept, whatever the
/// rate: the pacer batches requests up to 2 ms (its automatic window), so a
/// lag of a few milliseconds is by design.
pub const LAG_LIMIT_NS: u64 = 10_000_000;

/// Achieved/requested rate ratio below which the rate counts as missed.
pub const RATE_SHORTFALL: f64 = 0.9;

/// One line per generator-side problem found, each naming the fix.
pub fn diagnose(m: &Metrics, run: &RunInfo) -> Vec<String> {
    let mut out = Vec::new();
    let fds = m.error_kind_count(ErrorKind::TooManyOpenFiles);
    if fds > 0 {
        out.push(format!(
            "generator ran out of file descriptors ({}): raise `ulimit -n` \
             (volley lifts the soft limit to the hard limit; raise the hard limit with \
             LimitNOFILE= or /etc/security/limits.conf), or lower -connections / -max-workers",
            requests(fds)
        ));
    }
    let ports = m.error_kind_count(ErrorKind::PortsExhausted);
    if ports > 0 {
        out.push(format!(
            "generator ran out of ephemeral ports ({}): widen \
             net.ipv4.ip_local_port_range, enable keepalive so connections are reused, \
             or add source addresses with -laddr",
            requests(ports)
        ));
    }
    let dns = m.error_kind_count(ErrorKind::Dns);
    if dns > 0 {
        out.push(format!(
            "name resolution failed on the generator ({}): pin the address \
             with -connect-to or -resolvers, and cache lookups with -dns-ttl",
            requests(dns)
        ));
    }
    let lag = m.lag();
    if lag.count() > 0 {
        let interval = run
            .rate
            .filter(|r| *r > 0.0 && r.is_finite())
            .map(|r| 1e9 / r)
            .unwrap_or(0.0);
        let window = run
            .pace_window
            .filter(|w| w.is_finite() && *w > 0.0)
            .map_or(0.0, |w| 2.0 * w * 1e9);
        let limit = (LAG_LIMIT_NS as f64).max(interval).max(window);
        let p99 = lag.quantile(0.99);
        if p99 as f64 > limit {
            out.push(format!(
                "the generator, not the target, fell behind its schedule: p99 send lag {} \
                 (max {}), and latencies include it; add -workers / -max-workers or CPU",
                human_duration_ns(p99 as f64),
                human_duration_ns(lag.max() as f64),
            ));
        }
    }
    if let Some(requested) = run.rate.filter(|r| *r > 0.0 && r.is_finite()) {
        let achieved = m.rate();
        if m.requests() > 1 && achieved < requested * RATE_SHORTFALL {
            let short = (1.0 - achieved / requested) * 100.0;
            // Generator-side failures explain a shortfall only when there
            // are enough of them to matter.
            let cause = if (fds + ports + dns) as f64 >= m.requests() as f64 * 0.01 {
                "the generator's own limits above cost requests"
            } else {
                "the generator could not keep up, or -max-workers capped it"
            };
            out.push(format!(
                "achieved rate {achieved:.2}/s is {short:.0}% below the requested {requested}/s: \
                 {cause}; add -workers / -max-workers or CPU, or split the load across machines"
            ));
        }
    }
    out
}

fn requests(n: u64) -> String {
    if n == 1 {
        "1 request".to_string()
    } else {
        format!("{n} requests")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rec;
    use crate::Sink;
    use volley_results::Record;

    /// Records shaped like seed 000's 15,000 req/s run, scaled down: half
    /// the requested rate achieved, fd, port and DNS errors from the
    /// generator, and a send lag that grows to over a second.
    fn seed_000_like() -> Vec<Record> {
        let n = 7_790u64;
        let step = 1_000_000_000 / (n - 1);
        (0..n)
            .map(|i| {
                // The last request is sent exactly 1s after the first.
                let ts = if i == n - 1 { 1_000_000_000 } else { i * step };
                let mut r = rec(ts as i64, 5_000_000 + i * 100_000, 200);
                r.lag = i * 150_000;
                let (kind, text) = match i % 10 {
                    0 => (
                        ErrorKind::TooManyOpenFiles,
                        "dial tcp 0.0.0.0:0->34.245.253.217:443: socket: too many open files",
                    ),
                    1 => (
                        ErrorKind::PortsExhausted,
                        "dial tcp 0.0.0.0:0->34.245.253.217:443: bind: address already in use",
                    ),
                    2 => (
                        ErrorKind::Dns,
                        "dial tcp: lookup cedric.belfrage.test.api.bbc.co.uk on 10.114.128.2:53: no such host",
                    ),
                    _ => (ErrorKind::None, ""),
                };
                if kind != ErrorKind::None {
                    r.code = 0;
                    r.error_kind = kind;
                    r.error = text.into();
                }
                r
            })
            .collect()
    }

    #[test]
    fn seed_000_run_names_every_generator_limit() {
        let mut m = Metrics::new();
        for r in seed_000_like() {
            m.add(&r);
        }
        let run = RunInfo {
            rate: Some(15_000.0),
            ..RunInfo::default()
        };
        let lines = diagnose(&m, &run);
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(lines[0].starts_with(
            "generator ran out of file descriptors (779 requests): raise `ulimit -n`"
        ));
        assert!(lines[1].starts_with("generator ran out of ephemeral ports (779 requests): widen net.ipv4.ip_local_port_range"));
        assert!(lines[1].contains("-laddr"));
        assert!(lines[2].contains("(779 requests): pin the address with -connect-to or -resolvers"));
        assert!(
            lines[3].starts_with(
                "the generator, not the target, fell behind its schedule: p99 send lag 1.15s"
            ),
            "{}",
            lines[3]
        );
        assert!(lines[3].ends_with("add -workers / -max-workers or CPU"));
        assert!(
            lines[4].starts_with("achieved rate 7790.00/s is 48% below the requested 15000/s: the generator's own limits"),
            "{}",
            lines[4]
        );
        assert!(lines.iter().all(|l| !l.contains('\n')));
    }

    #[test]
    fn healthy_run_has_no_diagnosis() {
        let mut m = Metrics::new();
        for i in 0..1000u64 {
            let mut r = rec(i as i64 * 1_000_000, 2_000_000, 200);
            r.lag = 200_000;
            m.add(&r);
        }
        let run = RunInfo {
            rate: Some(1000.0),
            ..RunInfo::default()
        };
        assert!(diagnose(&m, &run).is_empty());
        assert!(diagnose(&Metrics::new(), &run).is_empty());
    }

    #[test]
    fn lag_within_one_interval_is_fine_at_low_rates() {
        let mut m = Metrics::new();
        for i in 0..100u64 {
            let mut r = rec(i as i64 * 1_000_000_000, 2_000_000, 200);
            r.lag = 50_000_000;
            m.add(&r);
        }
        let slow = RunInfo {
            rate: Some(1.0),
            ..RunInfo::default()
        };
        assert!(diagnose(&m, &slow).is_empty());
        assert_eq!(diagnose(&m, &RunInfo::default()).len(), 1);
    }

    #[test]
    fn lag_within_a_chosen_pace_window_is_by_design() {
        let mut m = Metrics::new();
        for i in 0..1000u64 {
            let mut r = rec(i as i64 * 100_000, 20_000_000, 200);
            r.lag = 15_000_000;
            m.add(&r);
        }
        let wide = RunInfo {
            rate: Some(10_000.0),
            pace_window: Some(0.02),
            ..RunInfo::default()
        };
        assert!(diagnose(&m, &wide).is_empty());
        let auto = RunInfo {
            rate: Some(10_000.0),
            ..RunInfo::default()
        };
        assert_eq!(diagnose(&m, &auto).len(), 1);
    }
}
