//! The JSON report against its JSON Schema (`schema/report.schema.json`),
//! over empty, mixed and generator-limited record sets.

mod common;

use common::*;
use volley_report::json::{self, JsonExtras, SCHEMA};
use volley_report::threshold::{evaluate, parse_all};
use volley_report::{diagnose, Breakdown, BreakdownBy, Histogram, Metrics, RunInfo, Sink};
use volley_results::ErrorKind;

fn validate(doc: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{doc:#}");
}

fn write(m: &Metrics, extras: &JsonExtras<'_>) -> serde_json::Value {
    let mut out = Vec::new();
    json::report(m, extras, &mut out).unwrap();
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1, "one line");
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn empty_report_matches_schema() {
    let doc = write(&Metrics::new(), &JsonExtras::default());
    validate(&doc);
    assert_eq!(doc["earliest"], "0001-01-01T00:00:00Z");
    assert_eq!(doc["requests"], 0);
    assert_eq!(doc["errors"], serde_json::json!([]));
}

#[test]
fn full_report_matches_schema() {
    let records = mixed();
    let m = metrics_of(&records);
    let mut t = Breakdown::new(BreakdownBy::Target);
    let mut a = Breakdown::new(BreakdownBy::Attack);
    let mut h = Histogram::parse("[0,2ms,4ms]").unwrap();
    for r in &records {
        t.add(r);
        a.add(r);
        h.add(r);
    }
    let verdicts = evaluate(&parse_all(&["p99<1ms", "success>=90%"]).unwrap(), &m);
    let diagnosis = diagnose(
        &m,
        &RunInfo {
            rate: Some(1000.0),
            ..RunInfo::default()
        },
    );
    let doc = write(
        &m,
        &JsonExtras {
            buckets: Some(&h),
            breakdowns: &[&t, &a],
            verdicts: &verdicts,
            diagnosis: &diagnosis,
        },
    );
    validate(&doc);
    // vegeta's names and meanings.
    assert_eq!(doc["requests"], 200);
    assert_eq!(doc["duration"], 995_000_000u64);
    assert_eq!(doc["status_codes"]["200"], 194);
    assert!(doc["latencies"]["50th"].as_u64().unwrap() > 0);
    assert_eq!(doc["earliest"], "2020-02-03T10:42:48Z");
    assert_eq!(doc["volley"]["error_kinds"]["dns"], 1);
    assert_eq!(doc["volley"]["by_target"].as_array().unwrap().len(), 2);
    assert_eq!(doc["volley"]["thresholds"][0]["ok"], false);
    assert!(doc["buckets"]["2000000"].as_u64().unwrap() > 0);
}

#[test]
fn generator_limited_report_matches_schema_and_escapes_like_go() {
    let mut m = Metrics::new();
    for i in 0..50u64 {
        let r = rec(T0 + i as i64, MS, 200);
        let r = match i % 3 {
            0 => fail(
                r,
                ErrorKind::TooManyOpenFiles,
                "dial tcp 0.0.0.0:0->1.2.3.4:443: socket: too many open files",
            ),
            1 => fail(
                r,
                ErrorKind::PortsExhausted,
                "dial tcp 0.0.0.0:0->1.2.3.4:443: bind: address already in use",
            ),
            _ => r,
        };
        m.add(&r);
    }
    let mut out = Vec::new();
    json::report(&m, &JsonExtras::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r"0.0.0.0:0-\u003e1.2.3.4:443"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    validate(&doc);
    assert_eq!(doc["volley"]["error_kinds"]["too_many_open_files"], 17);
}
