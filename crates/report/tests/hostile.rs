//! No input makes a report panic: extreme timestamps and latencies, any
//! status code, error texts with tabs, newlines and odd Unicode, empty and
//! huge sets — through every sink and reporter.

mod common;

use common::rec;
use volley_report::threshold::{evaluate, parse_all};
use volley_report::{
    diagnose, hdrplot, json, k6, text, Breakdown, BreakdownBy, Histogram, JsonExtras, Metrics,
    Record, RunInfo, Sink,
};
use volley_results::ErrorKind;

/// A tiny deterministic generator (no extra dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 ^ (self.0 >> 29)
    }
}

fn hostile_records() -> Vec<Record> {
    let texts = [
        "",
        "tab\there",
        "new\nline",
        "\u{2028}<&>\u{0}",
        "µs ✓ ✗ 🚀",
        "x",
    ];
    let mut g = Lcg(42);
    (0..5_000)
        .map(|i| {
            let pick = g.next();
            let mut r = rec(
                match pick % 4 {
                    0 => i64::MIN,
                    1 => i64::MAX,
                    _ => g.next() as i64,
                },
                match pick % 5 {
                    0 => u64::MAX,
                    1 => 0,
                    _ => g.next() >> (g.next() % 64),
                },
                (g.next() % 70_000).min(u16::MAX as u64) as u16,
            );
            r.lag = g.next() >> (g.next() % 64);
            r.bytes_in = g.next();
            r.bytes_out = g.next();
            r.phases.blocked = g.next();
            r.phases.waiting = u64::MAX;
            r.error_kind = ErrorKind::from_u8((g.next() % 14) as u8).unwrap();
            r.error = texts[(g.next() % texts.len() as u64) as usize].into();
            r.url = texts[(i % texts.len() as u64) as usize].into();
            r.attack = texts[(g.next() % texts.len() as u64) as usize].into();
            r
        })
        .collect()
}

fn run_all(records: &[Record]) {
    let mut m = Metrics::new();
    let mut t = Breakdown::new(BreakdownBy::Target);
    let mut a = Breakdown::new(BreakdownBy::Attack);
    let mut h = Histogram::parse("[0,1ns,1ms,1h]").unwrap();
    for r in records {
        m.add(r);
        t.add(r);
        a.add(r);
        h.add(r);
    }
    let mut merged = Metrics::new();
    merged.merge(&m);
    merged.merge(&m);
    let run = RunInfo {
        rate: Some(1e300),
        ..RunInfo::default()
    };
    let verdicts = evaluate(
        &parse_all(&[
            "p99<1ms",
            "success>=0%",
            "rate>0",
            "lag:max<1h",
            "requests!=0",
        ])
        .unwrap(),
        &m,
    );
    let diagnosis = diagnose(&m, &run);
    for m in [&m, &merged] {
        let mut out = Vec::new();
        text::report(m, &mut out).unwrap();
        text::notes(&diagnosis, &verdicts, &mut out).unwrap();
        hdrplot::report(m, &mut out).unwrap();
        k6::report(m, &run, &verdicts, &mut out).unwrap();
        t.report(&mut out).unwrap();
        a.report(&mut out).unwrap();
        h.report(&mut out).unwrap();
        let extras = JsonExtras {
            buckets: Some(&h),
            breakdowns: &[&t, &a],
            verdicts: &verdicts,
            diagnosis: &diagnosis,
        };
        let mut js = Vec::new();
        json::report(m, &extras, &mut js).unwrap();
        let _: serde_json::Value = serde_json::from_slice(&js).unwrap();
    }
}

#[test]
fn hostile_records_never_panic() {
    let records = hostile_records();
    run_all(&records);
    run_all(&records[..1]);
    run_all(&[]);
}
