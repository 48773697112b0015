//! volley-plot: latency over time as one self-contained interactive HTML
//! page, or as a PNG or SVG image, from any number of results.
//!
//! # Layout
//!
//! - [`timeline`]: adaptive, max-preserving time bucketing (the downsampler).
//! - [`collect`]: the record sink ([`Collector`]) and the format-neutral
//!   [`PlotData`] it produces.
//! - [`html`]: the page — vendored uPlot (see `assets/README.md`), data
//!   embedded as JSON, four panels: latency over time (OK and error points per
//!   series, drag to zoom, reset, export to PNG), throughput and status codes
//!   per second, percentiles (HDR, x = 1/(1−q) on a log scale), and the
//!   latency distribution.
//! - [`image`]: PNG and SVG with plotters and the vendored DejaVu Sans font
//!   (no browser, no fontconfig): latency over time above throughput.
//!
//! # Data flow
//!
//! Each [`PlotInput`] (one results file, or any iterator of records) is read
//! to its end before anything is written, so a bad input never leaves a
//! broken file behind: an input that fails before its first record is an
//! error; one that fails later (a truncated file) plots what came before and
//! says so in [`PlotSummary::warnings`]. Memory is bounded by
//! `max_points` buckets per series, whatever the number of records; beyond
//! 8 series they share 8 × `max_points` (so the page stays under ~2 MB),
//! and beyond 32 attack names per plot the rest fold into `(other)`.
//!
//! Time on the x axis is seconds since the first intended send of each
//! input, so two runs made at different times overlay. Latencies are shown
//! at their intended send time; throughput and status codes at completion
//! time (a stall shows as a gap, then a burst).
//!
//! # Flags of `volley plot` (the CLI maps them onto [`PlotOptions`])
//!
//! | flag | option | default |
//! |---|---|---|
//! | `-title <text>` | [`PlotOptions::title`] | `volley plot` (vegeta's `Vegeta Plot`) |
//! | `-format html\|png\|svg` | [`Format`] (`Format::parse`) | `html` |
//! | `-width <px>` | [`PlotOptions::width`] (png/svg) | 1200 |
//! | `-height <px>` | [`PlotOptions::height`] (png/svg) | 700 |
//! | `-threshold <n>` (alias `-max-points`) | [`PlotOptions::max_points`]: time buckets per series | 4000 |
//!
//! Inputs are the results files named on the command line (stdin when
//! none), each a [`PlotInput`] named after its file (`Records::name()`).
//!
//! ```
//! use volley_plot::{plot, Format, PlotInput, PlotOptions};
//! use volley_results::Record;
//!
//! let records = (0..1000).map(|i| Record {
//!     timestamp: i * 1_000_000,
//!     latency: 2_000_000,
//!     code: 200,
//!     ..Record::default()
//! });
//! let mut html = Vec::new();
//! let summary = plot(
//!     vec![PlotInput::from_records("run.bin", records)],
//!     &PlotOptions::default(),
//!     Format::Html,
//!     &mut html,
//! )
//! .unwrap();
//! assert_eq!(summary.series[0].records, 1000);
//! ```

pub mod collect;
mod error;
pub mod html;
pub mod image;
pub mod timeline;

use std::io::Write;
use std::time::Duration;

use volley_results::Record;

pub use collect::{collect, Collector, PlotData, SeriesData};
pub use error::PlotError;

/// The error type of an input's records: whatever the reader returns.
pub type InputError = Box<dyn std::error::Error + Send + Sync>;

/// One input: a name (legend label, usually the file name) and its
/// records. A records file with several attack names gives one series per
/// name.
pub struct PlotInput<'a> {
    /// Shown in legends and messages.
    pub name: String,
    /// The records, read once.
    pub records: Box<dyn Iterator<Item = Result<Record, InputError>> + 'a>,
}

impl std::fmt::Debug for PlotInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlotInput")
            .field("name", &self.name)
            .finish()
    }
}

impl<'a> PlotInput<'a> {
    /// An input from a fallible record iterator, e.g.
    /// `volley_results::open_path(p)?` (`Records`).
    pub fn new<I, E>(name: impl Into<String>, records: I) -> Self
    where
        I: IntoIterator<Item = Result<Record, E>>,
        I::IntoIter: 'a,
        E: Into<InputError>,
    {
        PlotInput {
            name: name.into(),
            records: Box::new(records.into_iter().map(|r| r.map_err(Into::into))),
        }
    }

    /// An input from records that cannot fail (tests, in-memory data).
    pub fn from_records<I>(name: impl Into<String>, records: I) -> Self
    where
        I: IntoIterator<Item = Record>,
        I::IntoIter: 'a,
    {
        PlotInput {
            name: name.into(),
            records: Box::new(records.into_iter().map(Ok)),
        }
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Self-contained interactive page.
    #[default]
    Html,
    /// Raster image.
    Png,
    /// Vector image.
    Svg,
}

impl Format {
    /// Parses `html`, `png` or `svg` (the `-format` flag).
    pub fn parse(s: &str) -> Result<Format, PlotError> {
        match s.to_ascii_lowercase().as_str() {
            "html" => Ok(Format::Html),
            "png" => Ok(Format::Png),
            "svg" => Ok(Format::Svg),
            _ => Err(PlotError::Option(format!(
                "-format {s:?}: expected html, png or svg"
            ))),
        }
    }
}

/// Options of a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotOptions {
    /// Title of the page or image.
    pub title: String,
    /// Image width in pixels (PNG/SVG), 200..=10000.
    pub width: u32,
    /// Image height in pixels (PNG/SVG), 200..=10000.
    pub height: u32,
    /// Time buckets per series (4..=100000): each bucket gives at most
    /// one OK point (its maximum), one OK minimum and one error point.
    pub max_points: usize,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            title: "volley plot".to_string(),
            width: 1200,
            height: 700,
            max_points: 4000,
        }
    }
}

impl PlotOptions {
    /// Checks ranges; called by every entry point before reading input.
    pub fn validate(&self) -> Result<(), PlotError> {
        for (flag, v) in [("-width", self.width), ("-height", self.height)] {
            if !(200..=10_000).contains(&v) {
                return Err(PlotError::Option(format!(
                    "{flag} {v}: expected 200 to 10000 pixels"
                )));
            }
        }
        if !(4..=100_000).contains(&self.max_points) {
            return Err(PlotError::Option(format!(
                "-threshold {}: expected 4 to 100000 points per series",
                self.max_points
            )));
        }
        Ok(())
    }
}

/// What was plotted.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSummary {
    /// One entry per series, in legend order.
    pub series: Vec<SeriesSummary>,
    /// Non-fatal problems (e.g. `r.bin: unexpected end of file (plotted the
    /// 1234 results before it)`).
    pub warnings: Vec<String>,
    /// Bytes written.
    pub bytes: u64,
}

/// One series of a plot.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesSummary {
    /// Legend label.
    pub name: String,
    /// Records in the series.
    pub records: u64,
    /// Successful records.
    pub ok: u64,
    /// Failed records.
    pub errors: u64,
    /// Largest latency.
    pub max_latency: Duration,
    /// Width of a time bucket.
    pub bucket_width: Duration,
    /// Time buckets (from the first to the last send).
    pub buckets: usize,
    /// Points of the series' OK latency series (buckets with a success).
    pub ok_points: usize,
    /// Points of the series' error series (buckets with an error).
    pub error_points: usize,
}

impl PlotData {
    /// The summary of this data, with `bytes` written.
    pub fn summary(&self, bytes: u64) -> PlotSummary {
        PlotSummary {
            series: self
                .series
                .iter()
                .map(|s| SeriesSummary {
                    name: s.name.clone(),
                    records: s.records,
                    ok: s.ok,
                    errors: s.errors(),
                    max_latency: Duration::from_nanos(s.max_latency),
                    bucket_width: Duration::from_secs_f64(s.latency_width),
                    buckets: s.latency.len(),
                    ok_points: s.ok_points(),
                    error_points: s.error_points(),
                })
                .collect(),
            warnings: self.warnings.clone(),
            bytes,
        }
    }
}

/// Reads all inputs, then writes the plot in `format` to `out`. Nothing is
/// written when an error is returned (except an I/O error while writing).
pub fn plot(
    inputs: Vec<PlotInput<'_>>,
    opts: &PlotOptions,
    format: Format,
    out: &mut impl Write,
) -> Result<PlotSummary, PlotError> {
    let data = collect(inputs, opts)?;
    let bytes = match format {
        Format::Html => html::render(&data)?.into_bytes(),
        Format::Png => image::render_png(&data, opts)?,
        Format::Svg => image::render_svg(&data, opts)?.into_bytes(),
    };
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(data.summary(bytes.len() as u64))
}

/// [`plot`] as a self-contained HTML page.
pub fn plot_html(
    inputs: Vec<PlotInput<'_>>,
    opts: &PlotOptions,
    out: &mut impl Write,
) -> Result<PlotSummary, PlotError> {
    plot(inputs, opts, Format::Html, out)
}

/// [`plot`] as a PNG image of `opts.width` × `opts.height` pixels.
pub fn plot_png(
    inputs: Vec<PlotInput<'_>>,
    opts: &PlotOptions,
    out: &mut impl Write,
) -> Result<PlotSummary, PlotError> {
    plot(inputs, opts, Format::Png, out)
}

/// [`plot`] as an SVG image of `opts.width` × `opts.height` pixels.
pub fn plot_svg(
    inputs: Vec<PlotInput<'_>>,
    opts: &PlotOptions,
    out: &mut impl Write,
) -> Result<PlotSummary, PlotError> {
    plot(inputs, opts, Format::Svg, out)
}

#[cfg(test)]
mod tests;
