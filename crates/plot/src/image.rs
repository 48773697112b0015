//! Static images: PNG and SVG, drawn with plotters, no browser needed.
//!
//! One figure: the title, latency over time (each series' per-bucket
//! maximum as OK points and error crosses, so spikes show) above
//! throughput (responses and failed responses per second, by completion
//! time). Text uses the vendored DejaVu Sans (`assets/DejaVuSans.ttf`)
//! through plotters' `ab_glyph` feature, so no system font or fontconfig
//! is needed. Rendered to memory; the caller writes the bytes.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::collect::{PlotData, SeriesData};
use crate::error::PlotError;
use crate::PlotOptions;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

const OK_COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];
const ERR_COLORS: [RGBColor; 8] = [
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0xc2, 0x18, 0x5b),
    RGBColor(0xa0, 0x52, 0x2d),
    RGBColor(0xe6, 0x55, 0x0d),
    RGBColor(0xb8, 0x86, 0x0b),
    RGBColor(0xad, 0x14, 0x57),
    RGBColor(0x5d, 0x40, 0x37),
];

fn fonts() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    if *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, FONT).is_ok()) {
        Ok(())
    } else {
        Err(PlotError::Render("the embedded font is invalid".into()))
    }
}

fn render_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Render(e.to_string())
}

/// The figure as PNG bytes.
pub fn render_png(data: &PlotData, opts: &PlotOptions) -> Result<Vec<u8>, PlotError> {
    opts.validate()?;
    fonts()?;
    let (w, h) = (opts.width, opts.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root =
            BitMapBackend::<plotters::backend::RGBPixel>::with_buffer_and_format(&mut rgb, (w, h))
                .map_err(render_err)?
                .into_drawing_area();
        draw(&root, data)?;
        root.present().map_err(render_err)?;
    }
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(render_err)?;
        writer.write_image_data(&rgb).map_err(render_err)?;
        writer.finish().map_err(render_err)?;
    }
    Ok(png_bytes)
}

/// The figure as an SVG document.
pub fn render_svg(data: &PlotData, opts: &PlotOptions) -> Result<String, PlotError> {
    opts.validate()?;
    fonts()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (opts.width, opts.height)).into_drawing_area();
        draw(&root, data)?;
        root.present().map_err(render_err)?;
    }
    Ok(svg)
}

/// A non-empty, finite range (plotters needs `lo < hi`).
fn range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let lo = if lo.is_finite() { lo } else { 0.0 };
    let hi = if hi.is_finite() { hi } else { lo + 1.0 };
    if hi > lo {
        lo..hi
    } else {
        lo..lo + 1.0
    }
}

fn fmt_secs(v: &f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fmt_ms(v: &f64) -> String {
    if *v == 0.0 {
        "0".to_string()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Text for the image: control characters (invalid in SVG's XML, and
/// glyph-less) become spaces.
fn text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{fffe}' || c == '\u{ffff}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn is_failure(code: u16) -> bool {
    !(200..400).contains(&code)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &PlotData,
) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(render_err)?;
    let (_, h) = root.dim_in_pixel();
    let title_size = (h / 28).clamp(12, 28);
    let root = root
        .titled(&text(&data.title), (FAMILY, title_size))
        .map_err(render_err)?;
    let (_, h) = root.dim_in_pixel();
    let (upper, lower) = root.split_vertically(h * 65 / 100);
    let font = (h / 45).clamp(10, 16);

    let max_x = data
        .series
        .iter()
        .flat_map(|s| {
            let l = s.latency.last().map(|(x, _)| x + s.latency_width);
            let r = s.rate.last().map(|(x, _)| x + s.rate_width);
            l.into_iter().chain(r)
        })
        .fold(0.0f64, f64::max);
    let max_ms = data
        .series
        .iter()
        .map(|s| s.max_latency as f64 / 1e6)
        .fold(0.0f64, f64::max);

    // Latency over time.
    let mut chart = ChartBuilder::on(&upper)
        .margin(10)
        .caption("latency over time (max per bucket)", (FAMILY, font + 2))
        .x_label_area_size(font * 3)
        .y_label_area_size(font * 5)
        .build_cartesian_2d(range(0.0, max_x), range(0.0, max_ms * 1.05))
        .map_err(render_err)?;
    chart
        .configure_mesh()
        .x_desc("seconds since start")
        .y_desc("latency (ms)")
        .x_label_formatter(&fmt_secs)
        .y_label_formatter(&fmt_ms)
        .label_style((FAMILY, font))
        .axis_desc_style((FAMILY, font))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(render_err)?;
    let psize = if h >= 600 { 2 } else { 1 };
    for (i, s) in data.series.iter().enumerate() {
        let ok = OK_COLORS[i % OK_COLORS.len()];
        let err = ERR_COLORS[i % ERR_COLORS.len()];
        let oks = s
            .latency
            .iter()
            .filter(|(_, b)| b.ok.count > 0)
            .map(|(x, b)| (*x, b.ok.max as f64 / 1e6));
        chart
            .draw_series(oks.map(|p| Circle::new(p, psize, ok.filled())))
            .map_err(render_err)?
            .label(format!("{} OK", text(&s.name)))
            .legend(move |(x, y)| Circle::new((x + 6, y), 4, ok.filled()));
        if s.error_points() > 0 {
            let errs = s
                .latency
                .iter()
                .filter(|(_, b)| b.err.count > 0)
                .map(|(x, b)| (*x, b.err.max as f64 / 1e6));
            chart
                .draw_series(errs.map(|p| Cross::new(p, psize + 2, err.stroke_width(1))))
                .map_err(render_err)?
                .label(format!("{} errors", text(&s.name)))
                .legend(move |(x, y)| Cross::new((x + 6, y), 4, err.stroke_width(1)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, font))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(render_err)?;

    // Throughput.
    let per_sec = |s: &SeriesData, f: &dyn Fn(&crate::timeline::RateBucket) -> u64| {
        let w = if s.rate_width > 0.0 {
            s.rate_width
        } else {
            1.0
        };
        s.rate
            .iter()
            .map(|(x, b)| (*x, f(b) as f64 / w))
            .collect::<Vec<_>>()
    };
    let max_rate = data
        .series
        .iter()
        .flat_map(|s| per_sec(s, &|b| b.count))
        .map(|(_, y)| y)
        .fold(0.0f64, f64::max);
    let mut chart = ChartBuilder::on(&lower)
        .margin(10)
        .caption("responses per second", (FAMILY, font + 2))
        .x_label_area_size(font * 3)
        .y_label_area_size(font * 5)
        .build_cartesian_2d(range(0.0, max_x), range(0.0, max_rate * 1.1))
        .map_err(render_err)?;
    chart
        .configure_mesh()
        .x_desc("seconds since start")
        .y_desc("per second")
        .x_label_formatter(&fmt_secs)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FAMILY, font))
        .axis_desc_style((FAMILY, font))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(render_err)?;
    for (i, s) in data.series.iter().enumerate() {
        let ok = OK_COLORS[i % OK_COLORS.len()];
        let err = ERR_COLORS[i % ERR_COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                per_sec(s, &|b| b.count),
                ok.stroke_width(2),
            ))
            .map_err(render_err)?
            .label(format!("{} responses/s", text(&s.name)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], ok.stroke_width(2)));
        let failed = |b: &crate::timeline::RateBucket| {
            b.codes
                .iter()
                .filter(|(c, _)| is_failure(*c))
                .map(|&(_, n)| n)
                .sum::<u64>()
        };
        if s.rate.iter().any(|(_, b)| failed(b) > 0) {
            chart
                .draw_series(LineSeries::new(per_sec(s, &failed), err.stroke_width(1)))
                .map_err(render_err)?
                .label(format!("{} failed/s", text(&s.name)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 12, y)], err.stroke_width(1))
                });
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .label_font((FAMILY, font))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .draw()
        .map_err(render_err)?;
    Ok(())
}
