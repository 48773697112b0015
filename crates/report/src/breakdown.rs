//! Per-target and per-attack breakdowns: one [`Metrics`] per key
//! (`METHOD URL`, or the attack's `-name`), and a table with one
//! vegeta-style line per key.
//!
//! Keys are bounded ([`MAX_KEYS`]); records of further keys are gathered
//! under one `(other)` line so memory stays bounded with many URLs.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use volley_results::Record;

use crate::gofmt::vegeta_duration;
use crate::metrics::{Metrics, Sink, SuccessCodes};
use crate::tabwriter::TabWriter;

/// Most distinct keys tracked separately.
pub const MAX_KEYS: usize = 1_000;

/// Label of the line gathering keys beyond [`MAX_KEYS`].
pub const OTHER_KEY: &str = "(other)";

/// What a breakdown groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakdownBy {
    /// Method and URL.
    Target,
    /// Attack name (`-name`).
    Attack,
}

/// One [`Metrics`] per key, in first-seen order.
#[derive(Debug, Clone)]
pub struct Breakdown {
    by: BreakdownBy,
    success: SuccessCodes,
    /// method → url → entry index (lookups by `&str`, no allocation).
    targets: HashMap<Arc<str>, HashMap<Arc<str>, usize>>,
    attacks: HashMap<Arc<str>, usize>,
    entries: Vec<(String, Metrics)>,
    other: Option<Metrics>,
}

impl Breakdown {
    /// An empty breakdown with vegeta's success rule.
    pub fn new(by: BreakdownBy) -> Self {
        Self::with_success_codes(by, SuccessCodes::default())
    }

    /// An empty breakdown with a custom success rule.
    pub fn with_success_codes(by: BreakdownBy, success: SuccessCodes) -> Self {
        Breakdown {
            by,
            success,
            targets: HashMap::new(),
            attacks: HashMap::new(),
            entries: Vec::new(),
            other: None,
        }
    }

    /// What it groups by.
    pub fn by(&self) -> BreakdownBy {
        self.by
    }

    /// `(label, metrics)` per key in first-seen order, then `(other)` if any.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Metrics)> {
        self.entries
            .iter()
            .map(|(k, m)| (k.as_str(), m))
            .chain(self.other.as_ref().map(|m| (OTHER_KEY, m)))
    }

    fn lookup(&self, r: &Record) -> Option<usize> {
        match self.by {
            BreakdownBy::Target => self
                .targets
                .get(&*r.method)
                .and_then(|urls| urls.get(&*r.url))
                .copied(),
            BreakdownBy::Attack => self.attacks.get(&*r.attack).copied(),
        }
    }

    fn insert(&mut self, r: &Record) -> Option<usize> {
        if self.entries.len() >= MAX_KEYS {
            return None;
        }
        let i = self.entries.len();
        let label = match self.by {
            BreakdownBy::Target => {
                self.targets
                    .entry(r.method.clone())
                    .or_default()
                    .insert(r.url.clone(), i);
                format!("{} {}", r.method, r.url)
            }
            BreakdownBy::Attack => {
                self.attacks.insert(r.attack.clone(), i);
                r.attack.to_string()
            }
        };
        self.entries
            .push((label, Metrics::with_success_codes(self.success.clone())));
        Some(i)
    }

    /// The table: one line per key with requests, rate, success and
    /// vegeta's latency figures.
    pub fn report(&self, w: &mut impl Write) -> io::Result<()> {
        let mut tw = TabWriter::new(2);
        let head = match self.by {
            BreakdownBy::Target => "Target",
            BreakdownBy::Attack => "Attack",
        };
        tw.write_str(&format!(
            "{head}\tRequests\tRate\tSuccess\tLatencies [min, mean, 50, 90, 95, 99, max]\n"
        ));
        for (key, m) in self.entries() {
            let l = m.latency();
            // Keep tabs and newlines in keys from breaking the table.
            let key: String = key
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            tw.write_str(&format!(
                "{key}\t{}\t{:.2}\t{:.2}%\t{}, {}, {}, {}, {}, {}, {}\n",
                m.requests(),
                m.rate(),
                m.success_ratio() * 100.0,
                vegeta_duration(l.min()),
                vegeta_duration(l.mean()),
                vegeta_duration(l.quantile(0.5)),
                vegeta_duration(l.quantile(0.9)),
                vegeta_duration(l.quantile(0.95)),
                vegeta_duration(l.quantile(0.99)),
                vegeta_duration(l.max()),
            ));
        }
        w.write_all(tw.finish().as_bytes())
    }
}

impl Sink for Breakdown {
    fn add(&mut self, r: &Record) {
        match self.lookup(r).or_else(|| self.insert(r)) {
            Some(i) => self.entries[i].1.add_record(r),
            None => self
                .other
                .get_or_insert_with(|| Metrics::with_success_codes(self.success.clone()))
                .add_record(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rec;

    #[test]
    fn groups_by_target_in_first_seen_order() {
        let mut b = Breakdown::new(BreakdownBy::Target);
        for (i, (method, url)) in [("GET", "/b"), ("GET", "/a"), ("POST", "/b"), ("GET", "/b")]
            .iter()
            .enumerate()
        {
            let mut r = rec(i as i64, 1_000_000, 200);
            r.method = (*method).into();
            r.url = (*url).into();
            b.add(&r);
        }
        let got: Vec<(&str, u64)> = b.entries().map(|(k, m)| (k, m.requests())).collect();
        assert_eq!(got, [("GET /b", 2), ("GET /a", 1), ("POST /b", 1)]);
    }

    #[test]
    fn keys_beyond_the_limit_go_to_other() {
        let mut b = Breakdown::new(BreakdownBy::Attack);
        for i in 0..(MAX_KEYS + 5) {
            let mut r = rec(0, 1, 200);
            r.attack = format!("a{i}").into();
            b.add(&r);
        }
        let last = b.entries().last().unwrap();
        assert_eq!((last.0, last.1.requests()), (OTHER_KEY, 5));
    }
}
