//! `volley report`: summarises results files (any format, merged) as
//! vegeta's text, JSON, `hist[...]` or `hdrplot`, a k6-style summary or a
//! per-target breakdown; `-every 1s` reports a stream as it grows;
//! `-threshold` prints verdicts and exits 99 when one fails.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use volley_report::{Context, Report, ReportType, RunInfo, Sink, SuccessCodes, Threshold};
use volley_results::Header;

use crate::encode::{open_inputs, open_output, report_warnings};
use crate::flags::{self, Kind, Spec};
use crate::CliError;

const USAGE: &str = "Usage: volley report [flags] [files...]   (default: stdin)

Summarises results; several files (any of volley binary, vegeta JSON lines
or CSV) merge into one report. Examples:
  volley attack ... | tee results.bin | volley report
  volley report -type='hist[0,20ms,40ms,60ms,80ms,100ms,200ms]' results.bin
  volley report -type=k6 results.bin
  volley report -type=json -threshold 'p99<250ms' a.bin b.bin";

const SPECS: &[Spec] = &[
    Spec::new(
        "type",
        Kind::Value,
        "text",
        "Report type: text, json, hist[buckets], hdrplot, k6, by-target, by-attack",
    ),
    Spec::new(
        "buckets",
        Kind::Value,
        "",
        "Histogram buckets, e.g. '[0,1ms,10ms]' (with -type=hist)",
    ),
    Spec::new(
        "every",
        Kind::Value,
        "0s",
        "Report interval while the input grows (0 = once, at the end)",
    ),
    Spec::new("output", Kind::Value, "stdout", "Output file"),
    Spec::new(
        "threshold",
        Kind::Repeated,
        "",
        "Pass/fail criterion such as 'p99<250ms' or 'success>=99.9%'; exit 99 when one fails",
    ),
    Spec::new(
        "success-codes",
        Kind::Value,
        "200-399",
        "Status codes that count as success, e.g. '200-299,404'",
    ),
];

fn usage(m: impl std::fmt::Display) -> CliError {
    CliError::Usage(m.to_string())
}

/// What the attack recorded about itself in the results header.
pub fn run_info(header: Option<&Header>) -> RunInfo {
    let Some(run) = header.and_then(|h| h.meta.get("run")) else {
        return RunInfo::default();
    };
    let num = |k: &str| run.get(k).and_then(serde_json::Value::as_u64);
    RunInfo {
        rate: run.get("rate").and_then(serde_json::Value::as_f64),
        workers: num("workers"),
        max_workers: num("max_workers"),
        pace_window: run.get("pace_window_s").and_then(serde_json::Value::as_f64),
        vus: num("vus_max").map(|v| volley_report::Gauge {
            value: v,
            min: num("vus_min").unwrap_or(v),
            max: v,
        }),
        vus_max: num("vus_max").map(|v| volley_report::Gauge {
            value: v,
            min: v,
            max: v,
        }),
    }
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => usage(e),
    })?;
    let mut kind_text = raw.value("type").unwrap_or("text").to_string();
    if let Some(b) = raw.value("buckets") {
        if kind_text == "hist" {
            kind_text = format!("hist{b}");
        }
    }
    if kind_text == "hist" {
        return Err(usage(
            "flag -type: hist needs buckets, e.g. -type='hist[0,20ms,40ms]'",
        ));
    }
    let kind: ReportType = kind_text
        .parse()
        .map_err(|e| usage(format!("flag -type: {e}")))?;
    let success = match raw.value("success-codes") {
        None => SuccessCodes::default(),
        Some(s) => {
            SuccessCodes::parse(s).map_err(|e| usage(format!("flag -success-codes: {e}")))?
        }
    };
    let thresholds = raw
        .values("threshold")
        .iter()
        .map(|t| Threshold::parse(t).map_err(|e| usage(format!("flag -threshold: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let every = raw
        .parsed("every", volley_pacer::parse_duration)
        .map_err(usage)?
        .unwrap_or(Duration::ZERO);

    let inputs = open_inputs(&raw.positional)?;
    let run = run_info(inputs.iter().find_map(|r| r.header()));
    let mut out = open_output(raw.value("output"))?;
    let report = Arc::new(Mutex::new(Report::new(kind, success)));

    // Read on a thread of its own, so `-every` can report while a pipe
    // is still being written.
    let reader = {
        let report = report.clone();
        std::thread::spawn(move || {
            let mut warnings = Vec::new();
            let mut batch = Vec::with_capacity(4096);
            let mut merged = volley_results::merge(inputs);
            loop {
                let mut end = false;
                for item in merged.by_ref().take(4096) {
                    match item {
                        Ok(r) => batch.push(r),
                        Err(e) => warnings.push(e),
                    }
                }
                if batch.is_empty() {
                    end = true;
                }
                let mut rep = report.lock().unwrap_or_else(|e| e.into_inner());
                for r in batch.drain(..) {
                    rep.add(&r);
                }
                if end {
                    rep.finish();
                    return warnings;
                }
            }
        })
    };
    let write = |out: &mut dyn Write, final_: bool| -> Result<bool, CliError> {
        let rep = report.lock().unwrap_or_else(|e| e.into_inner());
        let verdicts = if final_ {
            volley_report::evaluate(&thresholds, rep.metrics())
        } else {
            Vec::new()
        };
        let diagnosis = volley_report::diagnose(rep.metrics(), &run);
        let ctx = Context {
            run: &run,
            verdicts: &verdicts,
            diagnosis: &diagnosis,
        };
        let mut buf = Vec::new();
        rep.write(&ctx, &mut buf)
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        match out.write_all(&buf).and_then(|_| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => return Err(CliError::Runtime(format!("writing the report: {e}"))),
            Ok(()) => {}
        }
        Ok(verdicts.iter().all(|v| v.ok))
    };
    if !every.is_zero() {
        while !reader.is_finished() {
            std::thread::sleep(every);
            if !reader.is_finished() {
                write(&mut out, false)?;
            }
        }
    }
    let warnings = reader
        .join()
        .map_err(|_| CliError::Runtime("the results reader failed".into()))?;
    let code = report_warnings(&warnings);
    let passed = write(&mut out, true)?;
    if !passed {
        return Ok(volley_report::EXIT_THRESHOLD_FAILED);
    }
    Ok(code)
}
