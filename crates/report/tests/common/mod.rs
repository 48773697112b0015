//! Deterministic record sets shared by the integration tests.

#![allow(dead_code)]

use std::sync::Arc;

use volley_report::{Metrics, Record, Sink};
use volley_results::{ErrorKind, Phases};

pub const MS: u64 = 1_000_000;
/// 2020-02-03T10:42:48Z, a seed's date.
pub const T0: i64 = 1_580_726_568_000_000_000;

pub fn rec(timestamp: i64, latency: u64, code: u16) -> Record {
    Record {
        timestamp,
        latency,
        code,
        method: "GET".into(),
        url: "https://edge.example/status".into(),
        ..Record::default()
    }
}

pub fn fail(mut r: Record, kind: ErrorKind, text: &str) -> Record {
    r.code = 0;
    r.error_kind = kind;
    r.error = text.into();
    r
}

/// A small mixed attack: two targets, two attack names, phases, lag,
/// 200s, a 404, a 503, a timeout, a reset and a DNS failure; 200 req/s
/// for one second.
pub fn mixed() -> Vec<Record> {
    let home: Arc<str> = "https://edge.example/".into();
    let status: Arc<str> = "https://edge.example/status".into();
    (0..200u64)
        .map(|i| {
            let lat = 2 * MS + (i * i * 7919 % 50) * MS / 10 + i * 13_000;
            let mut r = rec(T0 + (i * 5 * MS) as i64, lat, 200);
            r.attack = if i % 2 == 0 { "warm".into() } else { "cold".into() };
            r.url = if i % 3 == 0 { home.clone() } else { status.clone() };
            r.seq = i;
            r.lag = 20_000 + (i % 7) * 15_000;
            r.bytes_in = 4096;
            r.bytes_out = if i % 5 == 0 { 128 } else { 0 };
            let connect = if i < 10 { 1 } else { 0 };
            r.phases = Phases {
                blocked: 3_000 + connect * 2 * MS,
                dns: connect * 400_000,
                connecting: connect * 900_000,
                tls_handshaking: connect * 1_100_000,
                waiting: lat * 8 / 10,
                receiving: lat / 10,
            };
            match i {
                17 => {
                    r.code = 404;
                    r.error_kind = ErrorKind::Status;
                    r.error = "404 Not Found".into();
                    r
                }
                42 | 43 => {
                    r.code = 503;
                    r.error_kind = ErrorKind::Status;
                    r.error = "503 Service Unavailable".into();
                    r
                }
                100 => fail(r, ErrorKind::Timeout, "Get \"https://edge.example/status\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
                150 => fail(r, ErrorKind::Reset, "read tcp 10.0.0.1:50475->10.0.0.2:443: read: connection reset by peer"),
                151 => fail(r, ErrorKind::Dns, "dial tcp: lookup edge.example on 10.0.0.53:53: no such host"),
                _ => r,
            }
        })
        .collect()
}

pub fn metrics_of(records: &[Record]) -> Metrics {
    let mut m = Metrics::new();
    for r in records {
        m.add(r);
    }
    m.finish();
    m
}
