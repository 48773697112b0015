//! volley-report: sinks over result records, and the reports built on them.
//!
//! Workers and result-file readers hand [`Record`]s to [`Sink`]s; reports
//! read the aggregates. Nothing here does I/O other than writing a report
//! to the `Write` it is given, so every report can be printed repeatedly
//! from a live aggregate (`-every 1s`) or once at the end.
//!
//! # Layout
//!
//! - [`metrics`]: the [`Sink`] trait and [`Metrics`], the aggregate every
//!   report reads (HDR histograms, exact min/max/mean, status codes, error
//!   set, error kinds, phases, send lag, vegeta's rate/throughput/duration).
//! - [`breakdown`]: one `Metrics` per target (`METHOD URL`) or attack name.
//! - [`histogram`]: vegeta's bucketed `hist[...]` sink and report.
//! - [`text`]: vegeta's text report, byte for byte, plus volley's notes.
//! - [`json`]: vegeta's JSON fields plus volley's under `volley`; schema in
//!   `schema/report.schema.json`.
//! - [`hdrplot`]: vegeta's HdrHistogram plot-file text.
//! - [`k6`]: a k6-style end-of-test summary.
//! - [`threshold`]: `-threshold` specs, verdicts, exit code 99.
//! - [`diagnose`]: generator self-diagnosis (fds, ports, DNS, lag, rate).
//! - [`gofmt`], [`tabwriter`]: Go's duration/time formatting and
//!   `text/tabwriter` layout, so output matches vegeta exactly.
//!
//! [`Report`] ties one report type to the sinks it needs, for the CLI.

pub mod breakdown;
pub mod diagnose;
pub mod gofmt;
pub mod hdrplot;
pub mod histogram;
pub mod json;
pub mod k6;
pub mod metrics;
pub mod tabwriter;
pub mod text;
pub mod threshold;

use std::io::{self, Write};

pub use breakdown::{Breakdown, BreakdownBy};
pub use diagnose::{diagnose, Gauge, RunInfo};
pub use histogram::{BucketsError, Histogram};
pub use json::JsonExtras;
pub use metrics::{Distribution, ErrorEntry, Metrics, Phase, Sink, SuccessCodes};
pub use threshold::{evaluate, Threshold, ThresholdError, Verdict, EXIT_THRESHOLD_FAILED};
pub use volley_results::Record;

/// A `-type` value that names no report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportTypeError {
    /// Not one of the known types.
    #[error(
        "unknown report type {0:?}: use text, json, hist[...], hdrplot, k6, by-target or by-attack"
    )]
    Unknown(String),
    /// `hist[...]` with bad buckets.
    #[error(transparent)]
    Buckets(#[from] BucketsError),
}

/// A report type, as `-type` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportType {
    /// vegeta's text report.
    Text,
    /// vegeta's JSON plus volley's.
    Json,
    /// vegeta's `hist[...]`.
    Hist(Histogram),
    /// vegeta's `hdrplot`.
    HdrPlot,
    /// k6-style summary.
    K6,
    /// One line per target or attack name.
    Breakdown(BreakdownBy),
}

impl std::str::FromStr for ReportType {
    type Err = ReportTypeError;
    /// `text`, `json`, `hist[0,20ms,...]`, `hdrplot`, `k6`, `by-target`,
    /// `by-attack`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Ok(match s {
            "text" => ReportType::Text,
            "json" => ReportType::Json,
            "hdrplot" => ReportType::HdrPlot,
            "k6" => ReportType::K6,
            "by-target" => ReportType::Breakdown(BreakdownBy::Target),
            "by-attack" | "by-name" => ReportType::Breakdown(BreakdownBy::Attack),
            _ => match s.strip_prefix("hist") {
                Some(b) if b.starts_with('[') => ReportType::Hist(Histogram::parse(b)?),
                _ => return Err(ReportTypeError::Unknown(s.to_string())),
            },
        })
    }
}

/// What a report may add besides the figures.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// What the run asked for.
    pub run: &'a RunInfo,
    /// Threshold verdicts to print.
    pub verdicts: &'a [Verdict],
    /// Diagnosis lines to print.
    pub diagnosis: &'a [String],
}

/// One report type with the sinks it needs: feed it records, then write it
/// as many times as wanted.
#[derive(Debug, Clone)]
pub struct Report {
    kind: ReportType,
    success: SuccessCodes,
    metrics: Metrics,
    hist: Option<Histogram>,
    breakdowns: Vec<Breakdown>,
}

impl Report {
    /// A report of `kind` with the given success rule.
    pub fn new(kind: ReportType, success: SuccessCodes) -> Self {
        let mut breakdowns = Vec::new();
        let mut hist = None;
        match &kind {
            ReportType::Breakdown(by) => {
                breakdowns.push(Breakdown::with_success_codes(*by, success.clone()))
            }
            ReportType::Hist(h) => hist = Some(h.clone()),
            _ => {}
        }
        Report {
            kind,
            metrics: Metrics::with_success_codes(success.clone()),
            success,
            hist,
            breakdowns,
        }
    }

    /// Also keeps a breakdown (included in JSON as `volley.by_target` /
    /// `volley.by_attack`).
    pub fn with_breakdown(mut self, by: BreakdownBy) -> Self {
        if !self.breakdowns.iter().any(|b| b.by() == by) {
            self.breakdowns
                .push(Breakdown::with_success_codes(by, self.success.clone()));
        }
        self
    }

    /// Also counts vegeta's `buckets` (included in JSON).
    pub fn with_buckets(mut self, h: Histogram) -> Self {
        self.hist = Some(h);
        self
    }

    /// The aggregate, for thresholds and diagnosis.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The report type.
    pub fn kind(&self) -> &ReportType {
        &self.kind
    }

    /// Writes the report, then volley's notes (diagnosis, verdicts) when
    /// there are any — except in JSON, which carries them inside.
    pub fn write(&self, ctx: &Context<'_>, w: &mut impl Write) -> io::Result<()> {
        match &self.kind {
            ReportType::Json => {
                let refs: Vec<&Breakdown> = self.breakdowns.iter().collect();
                let extras = JsonExtras {
                    buckets: self.hist.as_ref(),
                    breakdowns: &refs,
                    verdicts: ctx.verdicts,
                    diagnosis: ctx.diagnosis,
                };
                return json::report(&self.metrics, &extras, w);
            }
            ReportType::Text => text::report(&self.metrics, w)?,
            ReportType::Hist(_) => {
                if let Some(h) = &self.hist {
                    h.report(w)?;
                }
            }
            ReportType::HdrPlot => hdrplot::report(&self.metrics, w)?,
            ReportType::K6 => k6::report(&self.metrics, ctx.run, ctx.verdicts, w)?,
            ReportType::Breakdown(by) => {
                if let Some(b) = self.breakdowns.iter().find(|b| b.by() == *by) {
                    b.report(w)?;
                }
            }
        }
        text::notes(ctx.diagnosis, ctx.verdicts, w)
    }
}

impl Sink for Report {
    fn add(&mut self, r: &Record) {
        self.metrics.add_record(r);
        if let Some(h) = &mut self.hist {
            h.record(r.latency);
        }
        for b in &mut self.breakdowns {
            b.add(r);
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use volley_results::Record;

    /// A successful GET record.
    pub fn rec(timestamp: i64, latency: u64, code: u16) -> Record {
        Record {
            timestamp,
            latency,
            code,
            method: "GET".into(),
            url: "http://localhost/".into(),
            ..Record::default()
        }
    }
}
