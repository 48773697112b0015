//! Measures volley-plot on 10 million results (issue 4: < 10 s, < 300 MiB
//! RSS, HTML < 2 MB). Not a test: timings belong here and in `bench/`.
//!
//! ```text
//! cargo run --release -p volley-plot --example plot_10m            # records generated in memory
//! cargo run --release -p volley-plot --example plot_10m -- r.bin   # a results file (written first if missing)
//! ```
//!
//! Prints the wall time, peak RSS of the plotting phase (Linux VmHWM, reset
//! through /proc/self/clear_refs before plotting), and the output size.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use volley_plot::{plot, Format, PlotInput, PlotOptions};
use volley_results::{ErrorKind, Header, Record, Writer};

const N: u64 = 10_000_000;
const T0: i64 = 1_655_100_000_000_000_000;

/// 10k req/s for 1000 s: ~1–3 ms latencies, 0.1% 503s, a 2 s stall at
/// 600 s, and one 5 s spike.
fn records() -> impl Iterator<Item = Record> {
    let attack: Arc<str> = Arc::from("10m");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..N).map(move |i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let sent = i * 100_000;
        let mut latency = 1_000_000 + x % 2_000_000;
        if (600_000_000_000..602_000_000_000).contains(&sent) {
            latency += 602_000_000_000 - sent;
        }
        if i == 7_777_777 {
            latency = 5_000_000_000;
        }
        let fail = x.is_multiple_of(1000);
        Record {
            attack: attack.clone(),
            seq: i,
            timestamp: T0 + sent as i64,
            latency,
            code: if fail { 503 } else { 200 },
            error_kind: if fail {
                ErrorKind::Status
            } else {
                ErrorKind::None
            },
            ..Record::default()
        }
    })
}

fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args().nth(1);
    if let Some(f) = &file {
        if !Path::new(f).exists() {
            let t = Instant::now();
            let out = std::io::BufWriter::new(std::fs::File::create(f)?);
            let mut w = Writer::new(out, &Header::new("10m", T0, serde_json::json!({})))?;
            for r in records() {
                w.write(&r)?;
            }
            w.finish()?;
            eprintln!(
                "wrote {f}: {} bytes in {:.2?}",
                std::fs::metadata(f)?.len(),
                t.elapsed()
            );
        }
    }
    // Reset the peak RSS so that only the plot is measured.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    for format in [Format::Html, Format::Png, Format::Svg] {
        let input = match &file {
            Some(f) => {
                let r = volley_results::open_path(Path::new(f))?;
                PlotInput::new(r.name().to_string(), r)
            }
            None => PlotInput::from_records("generated", records()),
        };
        let t = Instant::now();
        let mut out = Vec::new();
        let summary = plot(vec![input], &PlotOptions::default(), format, &mut out)?;
        let s = &summary.series[0];
        println!(
            "{format:?}: {} records in {:.2?}, {} bytes, peak RSS {:.0} MiB, {} buckets of {:?}, max {:?}",
            s.records,
            t.elapsed(),
            out.len(),
            peak_rss_mib().unwrap_or(f64::NAN),
            s.buckets,
            s.bucket_width,
            s.max_latency,
        );
    }
    Ok(())
}
