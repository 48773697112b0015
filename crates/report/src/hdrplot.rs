//! vegeta's `hdrplot` report: the latency distribution as the text that
//! HdrHistogram's plotter (hdrhistogram.github.io/HdrHistogram/plotFiles.html)
//! reads, at vegeta's fixed list of quantiles.

use std::io::{self, Write};

use crate::metrics::Metrics;
use crate::tabwriter::TabWriter;

/// vegeta's quantiles, logarithmically denser towards 1.
pub const QUANTILES: [f64; 94] = [
    0.00, 0.100, 0.200, 0.300, 0.400, 0.500, 0.550, 0.600, 0.650, 0.700, 0.750, 0.775, 0.800,
    0.825, 0.850, 0.875, 0.8875, 0.900, 0.9125, 0.925, 0.9375, 0.94375, 0.950, 0.95625, 0.9625,
    0.96875, 0.971875, 0.975, 0.978125, 0.98125, 0.984375, 0.985938, 0.9875, 0.989062, 0.990625,
    0.992188, 0.992969, 0.99375, 0.994531, 0.995313, 0.996094, 0.996484, 0.996875, 0.997266,
    0.997656, 0.998047, 0.998242, 0.998437, 0.998633, 0.998828, 0.999023, 0.999121, 0.999219,
    0.999316, 0.999414, 0.999512, 0.999561, 0.999609, 0.999658, 0.999707, 0.999756, 0.99978,
    0.999805, 0.999829, 0.999854, 0.999878, 0.99989, 0.999902, 0.999915, 0.999927, 0.999939,
    0.999945, 0.999951, 0.999957, 0.999963, 0.999969, 0.999973, 0.999976, 0.999979, 0.999982,
    0.999985, 0.999986, 0.999988, 0.999989, 0.999991, 0.999992, 0.999993, 0.999994, 0.999995,
    0.999996, 0.999997, 0.999998, 0.999999, 1.0,
];

/// Writes `Value(ms)  Percentile  TotalCount  1/(1-Percentile)` rows.
pub fn report(m: &Metrics, w: &mut impl Write) -> io::Result<()> {
    let mut tw = TabWriter::new(2);
    tw.write_str("Value(ms)\tPercentile\tTotalCount\t1/(1-Percentile)\n");
    let total = m.requests() as f64;
    for q in QUANTILES {
        let ns = m.latency().quantile(q);
        // Whole and fractional milliseconds apart, as vegeta converts.
        let value = (ns / 1_000_000) as f64 + (ns % 1_000_000) as f64 / 1e6;
        let count = (q * total + 0.5) as i64;
        let one_by = if q < 1.0 {
            1.0 / (1.0 - q)
        } else {
            10_000_000.0
        };
        tw.write_str(&format!("{value:.6}\t{q:.6}\t{count}\t{one_by:.6}\n"));
    }
    w.write_all(tw.finish().as_bytes())
}
