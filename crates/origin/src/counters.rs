//! What the origin saw: request counts per status, per 100 ms time slot,
//! and connection counts — all atomics, so counting never takes a lock.
//!
//! Time slots live in a ring covering the last hour ([`SLOTS`] × [`TICK`]).
//! Each slot holds up to six (status, count) pairs packed into one `u64`
//! each (status in the top 10 bits) plus an "other statuses" count, so a
//! slot is one cache line. `GET /_admin/counts?bin=1s` sums slots into bins;
//! `/_admin/current_count` and `/metrics` read the totals.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

/// Resolution of the time slots.
pub const TICK: Duration = Duration::from_millis(100);
/// Number of slots kept: one hour.
pub const SLOTS: usize = 36_000;
const PAIRS: usize = 6;
const STATUS_SHIFT: u32 = 54;
const COUNT_MASK: u64 = (1 << STATUS_SHIFT) - 1;

struct Slot {
    /// Tick number + 1 of the data held; 0 = empty.
    epoch: AtomicU64,
    pairs: [AtomicU64; PAIRS],
    other: AtomicU64,
}

/// Totals by status, as returned by [`crate::OriginHandle::counts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests answered (admin API and `/metrics` excluded).
    pub total: u64,
    pub by_status: BTreeMap<u16, u64>,
}

pub(crate) struct Counters {
    started: Instant,
    started_unix: Duration,
    total: AtomicU64,
    by_status: Box<[AtomicU64]>,
    slots: Box<[Slot]>,
    pub open: AtomicU64,
    pub accepted: AtomicU64,
}

impl Counters {
    pub fn new() -> Counters {
        Counters {
            started: Instant::now(),
            started_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
            total: AtomicU64::new(0),
            by_status: (0..600).map(|_| AtomicU64::new(0)).collect(),
            slots: (0..SLOTS)
                .map(|_| Slot {
                    epoch: AtomicU64::new(0),
                    pairs: Default::default(),
                    other: AtomicU64::new(0),
                })
                .collect(),
            open: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
        }
    }

    fn tick_now(&self) -> u64 {
        (self.started.elapsed().as_nanos() / TICK.as_nanos()) as u64
    }

    /// Counts one answered request.
    pub fn record(&self, status: u16) {
        self.total.fetch_add(1, Relaxed);
        if let Some(c) = self.by_status.get(status as usize) {
            c.fetch_add(1, Relaxed);
        }
        let tick = self.tick_now();
        let slot = &self.slots[(tick % SLOTS as u64) as usize];
        let epoch = slot.epoch.load(Relaxed);
        if epoch != tick + 1 {
            // The ring wrapped (or first use): reset. A request racing the
            // reset may be lost from the slot; totals stay exact.
            if epoch < tick + 1
                && slot
                    .epoch
                    .compare_exchange(epoch, tick + 1, Relaxed, Relaxed)
                    .is_ok()
                && epoch != 0
            {
                for p in &slot.pairs {
                    p.store(0, Relaxed);
                }
                slot.other.store(0, Relaxed);
            }
        }
        let key = (status as u64) << STATUS_SHIFT;
        for p in &slot.pairs {
            let v = p.load(Relaxed);
            if v & !COUNT_MASK == key {
                p.fetch_add(1, Relaxed);
                return;
            }
            if v == 0 {
                match p.compare_exchange(0, key | 1, Relaxed, Relaxed) {
                    Ok(_) => return,
                    Err(now) if now & !COUNT_MASK == key => {
                        p.fetch_add(1, Relaxed);
                        return;
                    }
                    Err(_) => {}
                }
            }
        }
        slot.other.fetch_add(1, Relaxed);
    }

    /// Resets every count (`/_admin/clear_current_count`).
    pub fn clear(&self) {
        self.total.store(0, Relaxed);
        for c in self.by_status.iter() {
            c.store(0, Relaxed);
        }
        for s in self.slots.iter() {
            s.epoch.store(0, Relaxed);
            for p in &s.pairs {
                p.store(0, Relaxed);
            }
            s.other.store(0, Relaxed);
        }
    }

    pub fn counts(&self) -> Counts {
        Counts {
            total: self.total.load(Relaxed),
            by_status: self
                .by_status
                .iter()
                .enumerate()
                .filter_map(|(s, c)| {
                    let n = c.load(Relaxed);
                    (n > 0).then_some((s as u16, n))
                })
                .collect(),
        }
    }

    /// OriginSimulator's `/_admin/current_count`: `{"total_requests":N,"200":M}`.
    pub fn current_count_json(&self) -> String {
        let c = self.counts();
        let mut obj = Map::new();
        obj.insert("total_requests".into(), json!(c.total));
        for (s, n) in c.by_status {
            obj.insert(s.to_string(), json!(n));
        }
        Value::Object(obj).to_string()
    }

    /// `/_admin/counts?bin=…`: counts summed per bin from the first slot
    /// with data to now. `bin` is rounded to a multiple of [`TICK`].
    pub fn bins_json(&self, bin: Duration) -> Value {
        let per = (bin.as_nanos() / TICK.as_nanos()).max(1) as u64;
        let now = self.tick_now();
        let oldest = now.saturating_sub(SLOTS as u64 - 1);
        // tick -> (status -> count)
        let mut by_tick: BTreeMap<u64, BTreeMap<String, u64>> = BTreeMap::new();
        for s in self.slots.iter() {
            let epoch = s.epoch.load(Relaxed);
            if epoch == 0 || epoch - 1 < oldest || epoch - 1 > now {
                continue;
            }
            let bin_tick = (epoch - 1) / per * per;
            let entry = by_tick.entry(bin_tick).or_default();
            for p in &s.pairs {
                let v = p.load(Relaxed);
                if v != 0 {
                    *entry.entry((v >> STATUS_SHIFT).to_string()).or_default() += v & COUNT_MASK;
                }
            }
            let other = s.other.load(Relaxed);
            if other > 0 {
                *entry.entry("other".into()).or_default() += other;
            }
        }
        let tick_ms = TICK.as_millis() as u64;
        let mut bins = Vec::new();
        if let Some((&first, _)) = by_tick.iter().next() {
            let mut t = first;
            while t <= now {
                let status = by_tick.remove(&t).unwrap_or_default();
                let total: u64 = status.values().sum();
                let offset_ms = t * tick_ms;
                bins.push(json!({
                    "start_ms": offset_ms,
                    "start_unix_ms": self.started_unix.as_millis() as u64 + offset_ms,
                    "total": total,
                    "status": status,
                }));
                t += per;
            }
        }
        json!({
            "bin_ms": per * tick_ms,
            "started_unix_ms": self.started_unix.as_millis() as u64,
            "bins": bins,
        })
    }

    /// Prometheus text exposition.
    pub fn prometheus(&self) -> String {
        let mut out = String::with_capacity(1024);
        let c = self.counts();
        out.push_str("# HELP volley_origin_requests_total Requests answered by the simulator (admin API and /metrics excluded), by status.\n");
        out.push_str("# TYPE volley_origin_requests_total counter\n");
        for (s, n) in &c.by_status {
            let _ = writeln!(out, "volley_origin_requests_total{{status=\"{s}\"}} {n}");
        }
        out.push_str("# HELP volley_origin_connections_open Connections open now.\n");
        out.push_str("# TYPE volley_origin_connections_open gauge\n");
        let _ = writeln!(
            out,
            "volley_origin_connections_open {}",
            self.open.load(Relaxed)
        );
        out.push_str("# HELP volley_origin_connections_accepted_total Connections accepted.\n");
        out.push_str("# TYPE volley_origin_connections_accepted_total counter\n");
        let _ = writeln!(
            out,
            "volley_origin_connections_accepted_total {}",
            self.accepted.load(Relaxed)
        );
        out.push_str("# HELP volley_origin_uptime_seconds Seconds since the simulator started.\n");
        out.push_str("# TYPE volley_origin_uptime_seconds gauge\n");
        let _ = writeln!(
            out,
            "volley_origin_uptime_seconds {:.3}",
            self.started.elapsed().as_secs_f64()
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_bins() {
        let c = Counters::new();
        for s in [200, 200, 500, 201, 202, 203, 204, 205, 206] {
            c.record(s);
        }
        let counts = c.counts();
        assert_eq!(counts.total, 9);
        assert_eq!(counts.by_status[&200], 2);
        let bins = c.bins_json(Duration::from_secs(60));
        let first = &bins["bins"][0];
        assert_eq!(first["total"], 9);
        assert_eq!(first["status"]["200"], 2);
        assert_eq!(first["status"]["other"], 2);
        assert!(c.current_count_json().contains("\"total_requests\":9"));
        assert!(c
            .prometheus()
            .contains("volley_origin_requests_total{status=\"500\"} 1"));
        c.clear();
        assert_eq!(c.counts().total, 0);
        assert_eq!(
            c.bins_json(TICK)["bins"].as_array().map(|b| b.len()),
            Some(0)
        );
    }
}
