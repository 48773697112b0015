//! The live progress line on stderr: sent, rate, success, p99 so far and the
//! most frequent errors. Shown only when stderr is a terminal (or forced
//! with `-progress`); redrawn in place, cleared at the end.

use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

use volley_results::Record;

/// Running counters for the progress line.
#[derive(Default)]
pub struct Progress {
    sent: u64,
    ok: u64,
    last_sent: u64,
    last_at: Duration,
    hist: Option<hdrhistogram::Histogram<u64>>,
    errors: HashMap<String, u64>,
}

impl Progress {
    pub fn add(&mut self, r: &Record) {
        self.sent += 1;
        if r.is_success() {
            self.ok += 1;
        } else if !r.error.is_empty() && self.errors.len() < 64 {
            *self.errors.entry(r.error.to_string()).or_default() += 1;
        } else if let Some(c) = self.errors.get_mut(&*r.error) {
            *c += 1;
        }
        let h = self.hist.get_or_insert_with(|| {
            hdrhistogram::Histogram::new(3).expect("3 significant digits is valid")
        });
        let _ = h.record(r.latency.max(1));
    }

    pub fn show(&mut self, elapsed: Duration) {
        let dt = (elapsed - self.last_at).as_secs_f64();
        if dt < 0.9 {
            return;
        }
        let rate = (self.sent - self.last_sent) as f64 / dt;
        self.last_sent = self.sent;
        self.last_at = elapsed;
        let p99 = self.hist.as_ref().map_or(0, |h| h.value_at_quantile(0.99));
        let ok = if self.sent == 0 {
            100.0
        } else {
            self.ok as f64 * 100.0 / self.sent as f64
        };
        let mut top: Vec<_> = self.errors.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        let errs: Vec<String> = top
            .iter()
            .take(2)
            .map(|(e, n)| format!("{n}× {}", truncate(e, 40)))
            .collect();
        let line = format!(
            "[{:>6.1}s] sent {}  rate {:.1}/s  success {:.2}%  p99 {}  {}",
            elapsed.as_secs_f64(),
            self.sent,
            rate,
            ok,
            volley_report::gofmt::vegeta_duration(p99),
            if errs.is_empty() {
                String::new()
            } else {
                format!("errors: {}", errs.join("; "))
            }
        );
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }

    pub fn clear(&mut self) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}
