//! `volley plot`: latency over time from results files, as a self-contained
//! HTML page (default), PNG or SVG. Nothing is written when the inputs are
//! unusable, so a bad file never leaves a broken page behind.

use std::io::Write;

use volley_plot::{Format, PlotInput, PlotOptions};

use crate::encode::{open_inputs, open_output};
use crate::flags::{self, Kind, Spec};
use crate::CliError;

const USAGE: &str = "Usage: volley plot [flags] [files...]   (default: stdin)

Plots latency over time, throughput and status codes per second, percentiles
and the latency distribution. Several files overlay, named after the file.
Examples:
  volley plot results.bin > plot.html
  volley plot -format png -output plot.png before.bin after.bin";

const SPECS: &[Spec] = &[
    Spec::new("title", Kind::Value, "volley plot", "Title of the plot"),
    Spec::new(
        "format",
        Kind::Value,
        "html",
        "Output format [html, png, svg]",
    ),
    Spec::new("output", Kind::Value, "stdout", "Output file"),
    Spec::new(
        "width",
        Kind::Value,
        "1200",
        "Image width in pixels (png, svg)",
    ),
    Spec::new(
        "height",
        Kind::Value,
        "700",
        "Image height in pixels (png, svg)",
    ),
    Spec::new(
        "threshold",
        Kind::Value,
        "4000",
        "Time buckets per series (downsampling keeps every bucket's min and max)",
    ),
    Spec::new("max-points", Kind::Value, "4000", "Alias of -threshold"),
];

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => CliError::Usage(e.to_string()),
    })?;
    let bad = |e: volley_plot::PlotError| CliError::Usage(e.to_string());
    let format = Format::parse(raw.value("format").unwrap_or("html")).map_err(bad)?;
    let number = |name: &str, default: u64| -> Result<u64, CliError> {
        raw.value(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| CliError::Usage(format!("flag -{name}: {v:?} is not a number")))
        })
    };
    let points = raw
        .value("max-points")
        .map_or(number("threshold", 4000), |_| number("max-points", 4000))?;
    let opts = PlotOptions {
        title: raw.value("title").unwrap_or("volley plot").to_string(),
        width: number("width", 1200)?.try_into().unwrap_or(u32::MAX),
        height: number("height", 700)?.try_into().unwrap_or(u32::MAX),
        max_points: points.try_into().unwrap_or(usize::MAX),
    };
    opts.validate().map_err(bad)?;
    let inputs: Vec<PlotInput> = open_inputs(&raw.positional)?
        .into_iter()
        .map(|r| PlotInput::new(r.name().to_string(), r))
        .collect();
    // Render into memory first: nothing is written unless the plot is whole.
    let mut buf = Vec::new();
    let summary = volley_plot::plot(inputs, &opts, format, &mut buf).map_err(|e| {
        if e.is_bad_input() {
            CliError::Usage(e.to_string())
        } else {
            CliError::Runtime(e.to_string())
        }
    })?;
    for w in &summary.warnings {
        eprintln!("volley plot: warning: {w}");
    }
    let mut out = open_output(raw.value("output"))?;
    out.write_all(&buf)
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Runtime(format!("writing the plot: {e}")))?;
    Ok(0)
}
