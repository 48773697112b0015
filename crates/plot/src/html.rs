//! The interactive page: one self-contained HTML file.
//!
//! The page embeds the vendored uPlot (`assets/uPlot.iife.min.js`, pinned in
//! `assets/README.md`), the page script `assets/plot.js`, and the plot data
//! as JSON in a `<script type="application/json" id="volley-data">` element
//! (escaped so that no string in it can close the element). It loads no
//! other resource. Once drawn it sets `window.volleyPlot = { series,
//! points, ready: true, … }` for tests and scripts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::collect::{PlotData, SeriesData};
use crate::error::PlotError;

const UPLOT_JS: &str = include_str!("../assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uPlot.min.css");
const PAGE_JS: &str = include_str!("../assets/plot.js");
const PAGE_CSS: &str = include_str!("../assets/plot.css");

/// Status codes kept apart per series in the throughput panel; the rarer
/// ones are summed as `other`.
const MAX_CODES: usize = 8;

/// Percentile panel: points per decade of 1/(1−q), and most decades
/// (10^7: up to the 99.99999th percentile).
const PCT_PER_DECADE: u32 = 20;
const PCT_MAX_DECADES: u32 = 7;

/// Distribution panel: log-spaced bins per decade, from 1 µs.
const HIST_PER_DECADE: f64 = 10.0;
const HIST_FROM_NS: f64 = 1_000.0;

#[derive(Serialize)]
struct Page<'a> {
    title: &'a str,
    warnings: &'a [String],
    series: Vec<PageSeries<'a>>,
    /// Percentile panel x values, 1/(1−q).
    pct_x: Vec<f64>,
    /// Distribution panel bin lower edges, ms (one more than values: the
    /// last is the upper edge of the last bin).
    hist_x: Vec<f64>,
}

#[derive(Serialize)]
struct PageSeries<'a> {
    name: &'a str,
    input: &'a str,
    attack: &'a str,
    records: u64,
    ok: u64,
    errors: u64,
    max_ms: f64,
    /// Latency bucket width, s; then per non-empty bucket: start (s since
    /// the input's start), OK max / OK min / error max (ms or null).
    w: f64,
    t: Vec<f64>,
    ok_max: Vec<Option<f64>>,
    ok_min: Vec<Option<f64>>,
    err_max: Vec<Option<f64>>,
    /// Rate bucket width, s; then per bucket (gaps included): start,
    /// completed responses, and per status code the count.
    rw: f64,
    rt: Vec<f64>,
    rc: Vec<u64>,
    codes: BTreeMap<String, Vec<u64>>,
    /// Latency (ms) at each `pct_x`, null beyond this series' resolution.
    pct: Vec<Option<f64>>,
    /// Percent of requests in each distribution bin.
    hist: Vec<f64>,
}

fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    let r = (v * m).round() / m;
    if r.is_finite() {
        r
    } else {
        0.0
    }
}

fn ms(ns: u64) -> f64 {
    round(ns as f64 / 1e6, 3)
}

fn page_series<'a>(s: &'a SeriesData, pct_x: &[f64], hist_bins: usize) -> PageSeries<'a> {
    let mut t = Vec::new();
    let mut ok_max = Vec::new();
    let mut ok_min = Vec::new();
    let mut err_max = Vec::new();
    for (x, b) in &s.latency {
        if b.ok.count == 0 && b.err.count == 0 {
            continue;
        }
        t.push(round(*x, 6));
        let some = |c: u64, v: u64| (c > 0).then(|| ms(v));
        ok_max.push(some(b.ok.count, b.ok.max));
        ok_min.push(some(b.ok.count, b.ok.min));
        err_max.push(some(b.err.count, b.err.max));
    }

    // The most frequent codes get their own series.
    let mut by_count: Vec<(u16, u64)> = s.codes.iter().map(|(&c, &n)| (c, n)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let kept: Vec<u16> = by_count.iter().take(MAX_CODES).map(|&(c, _)| c).collect();
    let has_other = by_count.len() > MAX_CODES;
    let mut codes: BTreeMap<String, Vec<u64>> = kept
        .iter()
        .map(|c| (c.to_string(), Vec::with_capacity(s.rate.len())))
        .collect();
    if has_other {
        codes.insert("other".to_string(), Vec::with_capacity(s.rate.len()));
    }
    let mut rt = Vec::with_capacity(s.rate.len());
    let mut rc = Vec::with_capacity(s.rate.len());
    for (x, b) in &s.rate {
        rt.push(round(*x, 6));
        rc.push(b.count);
        let mut other = 0;
        for c in &kept {
            let n = b
                .codes
                .iter()
                .find(|(bc, _)| bc == c)
                .map_or(0, |&(_, n)| n);
            if let Some(v) = codes.get_mut(&c.to_string()) {
                v.push(n);
            }
        }
        if has_other {
            for (bc, n) in &b.codes {
                if !kept.contains(bc) {
                    other += n;
                }
            }
            if let Some(v) = codes.get_mut("other") {
                v.push(other);
            }
        }
    }

    let n = s.hist.len();
    let pct = pct_x
        .iter()
        .map(|&x| (n > 0 && x <= n as f64).then(|| ms(s.hist.value_at_quantile(1.0 - 1.0 / x))))
        .collect();

    let mut hist = vec![0u64; hist_bins];
    for v in s.hist.iter_recorded() {
        let i = hist_bin(v.value_iterated_to()).min(hist_bins.saturating_sub(1));
        if let Some(h) = hist.get_mut(i) {
            *h += v.count_at_value();
        }
    }
    let total = n.max(1) as f64;
    let hist = hist
        .into_iter()
        .map(|c| round(c as f64 * 100.0 / total, 4))
        .collect();

    PageSeries {
        name: &s.name,
        input: &s.input,
        attack: &s.attack,
        records: s.records,
        ok: s.ok,
        errors: s.errors(),
        max_ms: ms(s.max_latency),
        w: s.latency_width,
        t,
        ok_max,
        ok_min,
        err_max,
        rw: s.rate_width,
        rt,
        rc,
        codes,
        pct,
        hist,
    }
}

fn hist_bin(ns: u64) -> usize {
    let v = ns as f64 / HIST_FROM_NS;
    if v <= 1.0 {
        0
    } else {
        (v.log10() * HIST_PER_DECADE).floor() as usize
    }
}

fn hist_edge_ms(i: usize) -> f64 {
    HIST_FROM_NS * 10f64.powf(i as f64 / HIST_PER_DECADE) / 1e6
}

/// The JSON embedded in the page.
fn page_json(data: &PlotData) -> Result<String, PlotError> {
    let most = data
        .series
        .iter()
        .map(|s| s.records)
        .max()
        .unwrap_or(1)
        .max(1);
    let decades = ((most as f64).log10().ceil() as u32).clamp(1, PCT_MAX_DECADES);
    let pct_x: Vec<f64> = (0..=decades * PCT_PER_DECADE)
        .map(|k| round(10f64.powf(k as f64 / PCT_PER_DECADE as f64), 4))
        .collect();
    let max = data.series.iter().map(|s| s.hist.max()).max().unwrap_or(0);
    let bins = hist_bin(max) + 1;
    let hist_x = (0..=bins).map(|i| round(hist_edge_ms(i), 6)).collect();
    let page = Page {
        title: &data.title,
        warnings: &data.warnings,
        series: data
            .series
            .iter()
            .map(|s| page_series(s, &pct_x, bins))
            .collect(),
        pct_x,
        hist_x,
    };
    let json = serde_json::to_string(&page).map_err(|e| PlotError::Render(e.to_string()))?;
    Ok(escape_json_for_script(&json))
}

/// Makes JSON safe inside a `<script>` element: `<`, `>` and `&` only occur
/// inside JSON strings, where `\u003c` etc. mean the same to `JSON.parse`,
/// so no `</script>` or `<!--` can appear in the element.
pub fn escape_json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn render(data: &PlotData) -> Result<String, PlotError> {
    let json = page_json(data)?;
    let title = escape_html(&data.title);
    let mut p = String::with_capacity(json.len() + UPLOT_JS.len() + 8192);
    p.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    p.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    p.push_str("<meta name=\"generator\" content=\"volley plot\">\n<title>");
    p.push_str(&title);
    p.push_str("</title>\n<style>\n");
    p.push_str(UPLOT_CSS);
    p.push_str("\n</style>\n<style>\n");
    p.push_str(PAGE_CSS);
    p.push_str("</style>\n</head>\n<body>\n<header>\n<h1 id=\"title\">");
    p.push_str(&title);
    p.push_str(
        "</h1>\n<div class=\"bar\">\
         <button id=\"reset\" type=\"button\">Reset zoom</button> \
         <button id=\"export\" type=\"button\">Export PNG</button> \
         <span class=\"hint\">drag to zoom, double-click to reset</span></div>\n\
         <div id=\"summary\"></div>\n<ul id=\"warnings\"></ul>\n</header>\n\
         <section><h2>Latency over time</h2><div id=\"latency\" class=\"chart\"></div></section>\n\
         <section><h2>Throughput and status codes</h2><div id=\"rate\" class=\"chart\"></div></section>\n\
         <div class=\"row\">\n\
         <section><h2>Latency percentiles</h2><div id=\"pct\" class=\"chart\"></div></section>\n\
         <section><h2>Latency distribution</h2><div id=\"hist\" class=\"chart\"></div></section>\n\
         </div>\n<script type=\"application/json\" id=\"volley-data\">",
    );
    p.push_str(&json);
    p.push_str("</script>\n<script>\n");
    p.push_str(UPLOT_JS);
    p.push_str("\n</script>\n<script>\n");
    p.push_str(PAGE_JS);
    p.push_str("\n</script>\n</body>\n</html>\n");
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_cannot_close_the_script_element() {
        let s = escape_json_for_script(r#"{"name":"</script><script>alert(1)</script><!--&"}"#);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["name"], "</script><script>alert(1)</script><!--&");
    }

    #[test]
    fn html_escaping() {
        assert_eq!(
            escape_html(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn histogram_bins_are_log_spaced() {
        assert_eq!(hist_bin(0), 0);
        assert_eq!(hist_bin(1_000), 0);
        assert_eq!(hist_bin(10_000), 10);
        assert_eq!(hist_bin(1_000_000), 30);
        assert!((hist_edge_ms(30) - 1.0).abs() < 1e-9);
    }
}
