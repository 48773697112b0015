//! A k6-style end-of-test summary, laid out as k6's summary (the format of
//! k6 up to v0.53, which most published reports show):
//!
//! ```text
//!      http_req_duration..............: avg=170.1ms  min=119.51ms med=138.23ms max=421.28ms p(90)=230.15ms p(95)=247.55ms
//!        { expected_response:true }...: avg=…
//!      http_req_failed................: 0.00%  ✓ 0         ✗ 980
//!      http_reqs......................: 980    97.033248/s
//! ```
//!
//! Numbers are humanised with k6's rules: durations truncated (not rounded)
//! to two decimals in the largest unit below them (`1.07s`, `138.23ms`,
//! `854µs`), bytes in SI units (`2.3 MB`, `229 kB/s`), rates truncated to
//! two decimals. Columns are padded to the widest value, dots align the
//! names. volley's latency (`http_req_duration`) runs from the intended send
//! time, so it includes any queueing in the generator; the send lag itself
//! is shown as the custom metric `volley_send_lag`. There is no sending
//! phase, so `http_req_sending` is omitted.

use std::io::{self, Write};

use crate::diagnose::RunInfo;
use crate::gofmt;
use crate::metrics::{Distribution, Metrics, Phase};
use crate::threshold::Verdict;

/// k6's humanised duration of a value in milliseconds
/// (`humanizeGenericDuration`).
pub fn human_duration_ms(dur: f64) -> String {
    if dur == 0.0 || !dur.is_finite() {
        return "0s".to_string();
    }
    if dur < 0.001 {
        return format!("{}ns", js_num((dur * 1_000_000.0).trunc()));
    }
    if dur < 1.0 {
        return format!("{}µs", fixed_no_trailing_zeros_trunc(dur * 1000.0, 2));
    }
    if dur < 1000.0 {
        return format!("{}ms", fixed_no_trailing_zeros_trunc(dur, 2));
    }
    let prec = if dur > 60_000.0 { 0 } else { 2 };
    let mut result = format!(
        "{}s",
        fixed_no_trailing_zeros_trunc((dur % 60_000.0) / 1000.0, prec)
    );
    let mut rem = (dur / 60_000.0).trunc();
    if rem < 1.0 {
        return result;
    }
    result = format!("{}m{result}", js_num(rem % 60.0));
    rem = (rem / 60.0).trunc();
    if rem < 1.0 {
        return result;
    }
    format!("{}h{result}", js_num(rem))
}

/// [`human_duration_ms`] of nanoseconds.
pub fn human_duration_ns(ns: f64) -> String {
    human_duration_ms(ns / 1e6)
}

/// k6's humanised byte count (`humanizeBytes`): `9 B`, `2.3 MB`, `229 kB`.
pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 9] = ["B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    if !bytes.is_finite() || bytes < 10.0 {
        return format!("{} B", js_num(if bytes.is_finite() { bytes } else { 0.0 }));
    }
    let e = ((bytes.ln() / 1000f64.ln()).floor() as usize).min(UNITS.len() - 1);
    let val = ((bytes / 1000f64.powi(e as i32)) * 10.0 + 0.5).floor() / 10.0;
    let prec = if val < 10.0 { 1 } else { 0 };
    format!("{val:.prec$} {}", UNITS[e])
}

/// JavaScript's `Number.prototype.toString` for the values we print
/// (Rust's shortest round-trip `Display` matches it below 1e21).
fn js_num(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else {
        format!("{v}")
    }
}

/// `parseFloat(val.toFixed(prec)).toString()`.
fn fixed_no_trailing_zeros(val: f64, prec: usize) -> String {
    let s = format!("{val:.prec$}");
    js_num(s.parse::<f64>().unwrap_or(0.0))
}

/// Truncates to `prec` decimals, then [`fixed_no_trailing_zeros`].
fn fixed_no_trailing_zeros_trunc(val: f64, prec: i32) -> String {
    let mult = 10f64.powi(prec);
    fixed_no_trailing_zeros((mult * val).trunc() / mult, prec as usize)
}

/// k6's rate humanisation: truncated to two decimals, as a percentage.
fn human_rate(v: f64) -> String {
    format!("{:.2}%", (v * 100.0 * 100.0).trunc() / 100.0)
}

/// The six default trend statistics, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrendStats {
    pub avg: f64,
    pub min: f64,
    pub med: f64,
    pub max: f64,
    pub p90: f64,
    pub p95: f64,
}

impl TrendStats {
    fn of(d: &Distribution) -> Self {
        let ms = |ns: u64| ns as f64 / 1e6;
        TrendStats {
            avg: d.mean_f64() / 1e6,
            min: ms(d.min()),
            med: ms(d.quantile(0.5)),
            max: ms(d.max()),
            p90: ms(d.quantile(0.9)),
            p95: ms(d.quantile(0.95)),
        }
    }
}

const TREND_COLS: [&str; 6] = ["avg", "min", "med", "max", "p(90)", "p(95)"];

#[derive(Debug, Clone)]
pub(crate) enum RowData {
    Trend(TrendStats),
    /// First value, then extras.
    Values(Vec<String>),
}

/// One summary line: a metric name (`name{tag:value}` for sub-metrics).
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub name: String,
    pub data: RowData,
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn display_name(name: &str) -> (String, &'static str) {
    match name.find('{') {
        Some(i) => (
            format!("{{ {} }}", &name[i + 1..name.len().saturating_sub(1)]),
            "  ",
        ),
        None => (name.to_string(), ""),
    }
}

/// Lays rows out as k6 does; `mark(name)` gives the threshold mark.
pub(crate) fn render(rows: &[Row], mark: impl Fn(&str) -> char) -> String {
    let indent = "   ";
    let name_len_max = rows
        .iter()
        .map(|r| {
            let (d, i) = display_name(&r.name);
            width(i) + width(&d)
        })
        .max()
        .unwrap_or(0);
    let trend_cells: Vec<Option<Vec<String>>> = rows
        .iter()
        .map(|r| match &r.data {
            RowData::Trend(t) => Some(
                [t.avg, t.min, t.med, t.max, t.p90, t.p95]
                    .iter()
                    .map(|v| human_duration_ms(*v))
                    .collect(),
            ),
            RowData::Values(_) => None,
        })
        .collect();
    let mut trend_max = [0usize; 6];
    for cells in trend_cells.iter().flatten() {
        for (m, c) in trend_max.iter_mut().zip(cells) {
            *m = (*m).max(width(c));
        }
    }
    let mut value_max = 0;
    let mut extra_max = [0usize; 2];
    for r in rows {
        if let RowData::Values(v) = &r.data {
            value_max = value_max.max(v.first().map_or(0, |s| width(s)));
            for (m, e) in extra_max.iter_mut().zip(v.iter().skip(1)) {
                *m = (*m).max(width(e));
            }
        }
    }
    let mut out = String::new();
    for (row, cells) in rows.iter().zip(&trend_cells) {
        let data = match (&row.data, cells) {
            (RowData::Trend(_), Some(cells)) => cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    format!(
                        "{}={c}{}",
                        TREND_COLS[i],
                        " ".repeat(trend_max[i] - width(c))
                    )
                })
                .collect::<Vec<_>>()
                .join(" "),
            (RowData::Values(v), _) => {
                let first = v.first().map(String::as_str).unwrap_or("");
                let mut s = format!("{first}{}", " ".repeat(value_max - width(first)));
                let extras = &v[1.min(v.len())..];
                if extras.len() == 1 {
                    s.push(' ');
                    s.push_str(&extras[0]);
                } else if extras.len() > 1 {
                    let parts: Vec<String> = extras
                        .iter()
                        .enumerate()
                        .map(|(i, e)| {
                            let w = extra_max.get(i).copied().unwrap_or(0);
                            format!("{e}{}", " ".repeat(w.saturating_sub(width(e))))
                        })
                        .collect();
                    s.push(' ');
                    s.push_str(&parts.join(" "));
                }
                s
            }
            _ => String::new(),
        };
        let (name, fmt_indent) = display_name(&row.name);
        let dots = (name_len_max + 3).saturating_sub(width(&name) + width(fmt_indent));
        out.push_str(&format!(
            "{indent}{fmt_indent}{} {name}{}: {data}\n",
            mark(&row.name),
            ".".repeat(dots)
        ));
    }
    out
}

/// Writes the k6-style summary. `verdicts` mark the metrics they apply to
/// with ✓ or ✗, as k6 marks metrics that have thresholds.
pub fn report(
    m: &Metrics,
    run: &RunInfo,
    verdicts: &[Verdict],
    w: &mut impl Write,
) -> io::Result<()> {
    let secs = gofmt::seconds(m.total_duration());
    let per_sec = |n: f64| if secs > 0.0 { n / secs } else { n };
    let counter = |n: u64| {
        vec![
            fixed_no_trailing_zeros(n as f64, 6),
            format!("{}/s", fixed_no_trailing_zeros(per_sec(n as f64), 6)),
        ]
    };
    let bytes = |n: u64| {
        vec![
            human_bytes(n as f64),
            format!("{}/s", human_bytes(per_sec(n as f64))),
        ]
    };
    let trend = |name: &str, d: &Distribution| Row {
        name: name.to_string(),
        data: RowData::Trend(TrendStats::of(d)),
    };
    let failed = m.requests() - m.successes();
    let mut rows = vec![
        Row {
            name: "data_received".into(),
            data: RowData::Values(bytes(m.bytes_in())),
        },
        Row {
            name: "data_sent".into(),
            data: RowData::Values(bytes(m.bytes_out())),
        },
        trend("http_req_blocked", m.phase(Phase::Blocked)),
        trend("http_req_connecting", m.phase(Phase::Connecting)),
        trend("http_req_duration", m.latency()),
    ];
    if m.successes() > 0 {
        rows.push(trend(
            "http_req_duration{expected_response:true}",
            m.success_latency(),
        ));
    }
    let failed_ratio = if m.requests() == 0 {
        0.0
    } else {
        failed as f64 / m.requests() as f64
    };
    rows.extend([
        Row {
            name: "http_req_failed".into(),
            data: RowData::Values(vec![
                human_rate(failed_ratio),
                format!("✓ {failed}"),
                format!("✗ {}", m.successes()),
            ]),
        },
        trend("http_req_receiving", m.phase(Phase::Receiving)),
        trend("http_req_tls_handshaking", m.phase(Phase::TlsHandshaking)),
        trend("http_req_waiting", m.phase(Phase::Waiting)),
        Row {
            name: "http_reqs".into(),
            data: RowData::Values(counter(m.requests())),
        },
        Row {
            name: "iterations".into(),
            data: RowData::Values(counter(m.requests())),
        },
        trend("volley_send_lag", m.lag()),
    ]);
    for (name, g) in [("vus", run.vus), ("vus_max", run.vus_max)] {
        if let Some(g) = g {
            rows.push(Row {
                name: name.into(),
                data: RowData::Values(vec![
                    fixed_no_trailing_zeros(g.value as f64, 6),
                    format!("min={}", fixed_no_trailing_zeros(g.min as f64, 6)),
                    format!("max={}", fixed_no_trailing_zeros(g.max as f64, 6)),
                ]),
            });
        }
    }
    let text = render(&rows, |name| {
        let mut applies = verdicts.iter().filter(|v| v.metric == name).peekable();
        if applies.peek().is_none() {
            ' '
        } else if applies.all(|v| v.ok) {
            '✓'
        } else {
            '✗'
        }
    });
    w.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_humanise_like_k6() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0s"),
            (0.0005, "500ns"),
            (0.854, "854µs"),
            (0.0123456, "12.34µs"),
            (138.23999, "138.23ms"),
            (170.1, "170.1ms"),
            (515.0, "515ms"),
            (1070.9, "1.07s"),
            (14_951.0, "14.95s"),
            (60_000.0, "1m0s"),
            (61_500.0, "1m1s"),
            (3_723_000.0, "1h2m3s"),
        ];
        for (ms, want) in cases {
            assert_eq!(human_duration_ms(*ms), *want, "{ms}");
        }
    }

    #[test]
    fn bytes_humanise_like_k6() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0 B"),
            (9.0, "9 B"),
            (3.5, "3.5 B"),
            (10.0, "10 B"),
            (999.0, "999 B"),
            (1000.0, "1.0 kB"),
            (2_300_000.0, "2.3 MB"),
            (229_012.0, "229 kB"),
            (80_100.0, "80 kB"),
            (7_900.0, "7.9 kB"),
        ];
        for (b, want) in cases {
            assert_eq!(human_bytes(*b), *want, "{b}");
        }
    }

    #[test]
    fn rates_truncate() {
        assert_eq!(human_rate(0.99999), "99.99%");
        assert_eq!(human_rate(0.0), "0.00%");
    }

    /// Seed 004 prints `http_req_duration` lines of a k6 run whose widest
    /// name is the `{ expected_response:true }` sub-metric. Rendering the
    /// seed's two runs' figures in one table reproduces both lines' layout
    /// byte for byte (the figures are the seed's plus 1µs, as k6
    /// truncates rather than rounds).
    #[test]
    fn reproduces_seed_004_trend_lines() {
        let ingress = TrendStats {
            avg: 170.101,
            min: 119.511,
            med: 138.231,
            max: 421.281,
            p90: 230.151,
            p95: 247.551,
        };
        let ingress_less = TrendStats {
            avg: 240.511,
            min: 121.961,
            med: 133.181,
            max: 1070.001,
            p90: 565.071,
            p95: 657.621,
        };
        let rows = [
            Row {
                name: "http_req_duration".into(),
                data: RowData::Trend(ingress),
            },
            Row {
                name: "http_req_duration{expected_response:true}".into(),
                data: RowData::Trend(ingress_less),
            },
        ];
        let out = render(&rows, |_| ' ');
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "     http_req_duration..............: avg=170.1ms  min=119.51ms med=138.23ms max=421.28ms p(90)=230.15ms p(95)=247.55ms"
        );
        assert_eq!(
            lines[1],
            "       { expected_response:true }...: avg=240.51ms min=121.96ms med=133.18ms max=1.07s    p(90)=565.07ms p(95)=657.62ms"
        );
    }
}
