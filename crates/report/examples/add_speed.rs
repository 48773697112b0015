//! Measures how fast `Metrics` (and the text report) digest records:
//! `cargo run --release -p volley-report --example add_speed [N]`.
//! The goal is 10 million records summarised in well under 5 seconds.

use std::time::Instant;

use volley_report::{text, Metrics, Record, Sink};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let mut r = Record {
        method: "GET".into(),
        url: "http://localhost/".into(),
        code: 200,
        ..Record::default()
    };
    let mut m = Metrics::new();
    let start = Instant::now();
    for i in 0..n {
        r.timestamp = (i * 100_000) as i64;
        r.latency = 1_000_000 + (i * 7919) % 5_000_000;
        r.lag = (i * 31) % 200_000;
        r.phases.waiting = r.latency * 8 / 10;
        r.phases.receiving = r.latency / 10;
        m.add(&r);
    }
    let added = start.elapsed();
    let mut out = Vec::new();
    text::report(&m, &mut out).expect("writing to a Vec cannot fail");
    eprintln!(
        "{n} records: add {:?} ({:.1} ns/record), report {:?}",
        added,
        added.as_nanos() as f64 / n as f64,
        start.elapsed() - added
    );
    print!("{}", String::from_utf8_lossy(&out));
}
