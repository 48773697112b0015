//! Snapshots (insta) of every text report over fixed record sets: the
//! exact bytes users and their scripts read. Review changes with
//! `cargo insta review`; a changed vegeta line is a bug.

mod common;

use common::*;
use volley_report::threshold::{self, parse_all};
use volley_report::{
    diagnose, hdrplot, k6, text, Breakdown, BreakdownBy, Context, Gauge, Histogram, Metrics,
    Report, ReportType, RunInfo, Sink, SuccessCodes,
};

fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    f(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn text_mixed() {
    let m = metrics_of(&mixed());
    insta::assert_snapshot!(render(|w| text::report(&m, w)));
}

#[test]
fn text_empty() {
    let m = Metrics::new();
    insta::assert_snapshot!(render(|w| text::report(&m, w)));
}

#[test]
fn text_with_notes() {
    let m = metrics_of(&mixed());
    let run = RunInfo {
        rate: Some(400.0),
        ..RunInfo::default()
    };
    let diagnosis = diagnose(&m, &run);
    let verdicts = threshold::evaluate(
        &parse_all(&["p99<250ms", "success>=99.9%", "rate>=190"]).unwrap(),
        &m,
    );
    insta::assert_snapshot!(render(|w| {
        text::report(&m, w)?;
        text::notes(&diagnosis, &verdicts, w)
    }));
}

#[test]
fn hist_mixed() {
    let mut h = Histogram::parse("[0,2ms,4ms,6ms,8ms]").unwrap();
    for r in mixed() {
        h.add(&r);
    }
    insta::assert_snapshot!(render(|w| h.report(w)));
}

#[test]
fn hdrplot_mixed() {
    let m = metrics_of(&mixed());
    insta::assert_snapshot!(render(|w| hdrplot::report(&m, w)));
}

#[test]
fn k6_mixed() {
    let m = metrics_of(&mixed());
    let run = RunInfo {
        vus: Some(Gauge {
            value: 10,
            min: 1,
            max: 10,
        }),
        vus_max: Some(Gauge {
            value: 10,
            min: 10,
            max: 10,
        }),
        ..RunInfo::default()
    };
    let verdicts = threshold::evaluate(
        &parse_all(&["http_req_duration:p(95)<500", "http_req_failed:rate<0.01"]).unwrap(),
        &m,
    );
    insta::assert_snapshot!(render(|w| k6::report(&m, &run, &verdicts, w)));
}

#[test]
fn k6_empty() {
    let m = Metrics::new();
    insta::assert_snapshot!(render(|w| k6::report(&m, &RunInfo::default(), &[], w)));
}

#[test]
fn by_target_and_by_attack() {
    let mut t = Breakdown::new(BreakdownBy::Target);
    let mut a = Breakdown::new(BreakdownBy::Attack);
    for r in mixed() {
        t.add(&r);
        a.add(&r);
    }
    insta::assert_snapshot!(render(|w| {
        t.report(w)?;
        a.report(w)
    }));
}

#[test]
fn json_mixed() {
    let records = mixed();
    let mut report = Report::new(ReportType::Json, SuccessCodes::default())
        .with_breakdown(BreakdownBy::Target)
        .with_breakdown(BreakdownBy::Attack)
        .with_buckets(Histogram::parse("[0,2ms,4ms]").unwrap());
    for r in &records {
        report.add(r);
    }
    let m = report.metrics().clone();
    let run = RunInfo::default();
    let verdicts = threshold::evaluate(&parse_all(&["p99<250ms"]).unwrap(), &m);
    let diagnosis = diagnose(&m, &run);
    let ctx = Context {
        run: &run,
        verdicts: &verdicts,
        diagnosis: &diagnosis,
    };
    insta::assert_snapshot!(render(|w| report.write(&ctx, w)));
}

/// `-every 1s`: the same report printed twice from a live aggregate, with
/// records added in between, reflects the records so far each time.
#[test]
fn reports_can_be_written_repeatedly() {
    let records = mixed();
    let mut report = Report::new("text".parse().unwrap(), SuccessCodes::default());
    let run = RunInfo::default();
    let ctx = Context {
        run: &run,
        verdicts: &[],
        diagnosis: &[],
    };
    for r in &records[..100] {
        report.add(r);
    }
    let first = render(|w| report.write(&ctx, w));
    assert_eq!(first, render(|w| report.write(&ctx, w)));
    for r in &records[100..] {
        report.add(r);
    }
    let second = render(|w| report.write(&ctx, w));
    assert!(first.starts_with("Requests      [total, rate, throughput]         100, "));
    assert!(second.starts_with("Requests      [total, rate, throughput]         200, "));
}
