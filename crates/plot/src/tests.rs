//! End-to-end tests of the library: records in, page/image bytes out.

use std::sync::Arc;

use volley_results::{ErrorKind, Record};

use crate::*;

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;
/// An arbitrary Unix time (2022-06-13), like a real results file.
const T0: i64 = 1_655_100_000 * SEC as i64;

fn rec(offset_ns: u64, latency: u64, code: u16) -> Record {
    Record {
        timestamp: T0 + offset_ns as i64,
        latency,
        code,
        error_kind: if code == 0 {
            ErrorKind::Timeout
        } else if (200..400).contains(&code) {
            ErrorKind::None
        } else {
            ErrorKind::Status
        },
        ..Record::default()
    }
}

/// `n` requests at `rate`/s with 1 ms latency, through `f` for changes.
fn steady(n: u64, rate: u64, f: impl Fn(u64, Record) -> Record) -> impl Iterator<Item = Record> {
    (0..n).map(move |i| f(i, rec(i * SEC / rate, MS, 200)))
}

/// The JSON embedded in a page.
fn page_data(html: &str) -> serde_json::Value {
    let open = "<script type=\"application/json\" id=\"volley-data\">";
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

fn html_of(inputs: Vec<PlotInput<'_>>) -> (String, PlotSummary) {
    let mut out = Vec::new();
    let summary = plot_html(inputs, &PlotOptions::default(), &mut out).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

fn floats(v: &serde_json::Value) -> Vec<Option<f64>> {
    v.as_array().unwrap().iter().map(|x| x.as_f64()).collect()
}

#[test]
fn a_single_spike_survives_ten_million_records() {
    // One 5 s request among 10 million 1 ms ones (10k/s for 1000 s).
    const N: u64 = 10_000_000;
    let records = steady(N, 10_000, |i, mut r| {
        if i == 6_543_210 {
            r.latency = 5 * SEC;
        }
        r
    });
    let data = collect(
        vec![PlotInput::from_records("big", records)],
        &PlotOptions::default(),
    )
    .unwrap();
    let s = &data.series[0];
    assert_eq!(s.records, N);
    assert!(s.latency.len() <= 4000, "{} buckets", s.latency.len());
    let spikes: Vec<f64> = s
        .latency
        .iter()
        .filter(|(_, b)| b.ok.max == 5 * SEC)
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(spikes.len(), 1);
    // In the bucket that holds t = 654.321 s.
    assert!(spikes[0] <= 654.321 && 654.321 < spikes[0] + s.latency_width);
    assert!(s.latency.iter().all(|(_, b)| b.ok.min == MS));

    let html = html::render(&data).unwrap();
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
    let page = page_data(&html);
    let max: Vec<f64> = floats(&page["series"][0]["ok_max"])
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(max.iter().filter(|&&v| v == 5000.0).count(), 1);
    assert_eq!(max.iter().filter(|&&v| v == 1.0).count(), max.len() - 1);
}

#[test]
fn a_stall_shows_in_the_plot_data() {
    // 10k/s for 20 s; everything sent in [8 s, 9 s) completes at 9 s (a
    // one-second stall of the target).
    let records = steady(200_000, 10_000, |i, mut r| {
        let sent = i * SEC / 10_000;
        if (8 * SEC..9 * SEC).contains(&sent) {
            r.latency = 9 * SEC - sent + MS;
        }
        r
    });
    let (html, summary) = html_of(vec![PlotInput::from_records("stall.bin", records)]);
    assert_eq!(summary.series[0].max_latency.as_millis(), 1001);
    let page = page_data(&html);
    let s = &page["series"][0];
    let t = floats(&s["t"]);
    let max = floats(&s["ok_max"]);
    let w = s["w"].as_f64().unwrap();
    for (t, m) in t.iter().zip(&max) {
        let (t, m) = (t.unwrap(), m.unwrap());
        if t + w <= 8.0 || t >= 9.0 {
            assert_eq!(m, 1.0, "bucket at {t}");
        } else {
            assert!(m > 1.0, "bucket at {t} max {m}");
        }
    }
    assert!(max.iter().flatten().any(|&m| m >= 990.0));
    // Throughput by completion time, per whole second: (almost) nothing
    // completes during the stall, then a burst.
    assert_eq!(s["rw"].as_f64(), Some(1.0));
    let rt = floats(&s["rt"]);
    let rc: Vec<u64> = s["rc"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    for (x, c) in rt.iter().zip(&rc) {
        match x.unwrap() {
            8.0 => assert!(*c < 100, "{c} completed during the stall"),
            9.0 => assert!(*c > 19_000, "{c} completed right after the stall"),
            x if x < 20.0 => assert!((9_900..=10_100).contains(c), "{c} at {x} s"),
            _ => {}
        }
    }
    // The percentile panel reaches the stall too.
    let pct: Vec<f64> = floats(&s["pct"]).into_iter().flatten().collect();
    assert!(*pct.last().unwrap() >= 900.0);
    assert!(pct[0] <= 1.01);
}

#[test]
fn ok_and_error_series_per_attack_and_input() {
    let a: Vec<Record> = (0..1000u64)
        .map(|i| {
            let code = if i % 100 == 0 { 500 } else { 200 };
            let mut r = rec(i * MS, 2 * MS, code);
            r.attack = Arc::from("baseline");
            r
        })
        .collect();
    let b: Vec<Record> = (0..1000u64)
        .map(|i| {
            let code = if i % 10 == 0 { 0 } else { 200 };
            let mut r = rec(i * MS + 3600 * SEC, 3 * MS, code);
            r.attack = Arc::from(if i % 2 == 0 { "baseline" } else { "candidate" });
            r
        })
        .collect();
    let (html, summary) = html_of(vec![
        PlotInput::from_records("a.bin", a),
        PlotInput::from_records("b.bin", b),
    ]);
    let names: Vec<&str> = summary.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a.bin: baseline", "b.bin: baseline", "candidate"]);
    assert_eq!(summary.series[0].errors, 10);
    assert_eq!(summary.series[1].errors, 100);
    assert_eq!(summary.series[2].errors, 0);
    assert_eq!(summary.series[2].error_points, 0);
    assert!(summary.series[0].error_points > 0);
    let page = page_data(&html);
    // Both inputs start at 0 s though recorded an hour apart.
    for s in page["series"].as_array().unwrap() {
        assert!(s["t"][0].as_f64().unwrap() < 0.01);
    }
    let codes = page["series"][1]["codes"].as_object().unwrap();
    let mut keys: Vec<&String> = codes.keys().collect();
    keys.sort();
    assert_eq!(keys, ["0", "200"]);
}

#[test]
fn bad_inputs_write_nothing() {
    let mut out = Vec::new();
    let err = plot_html(
        vec![PlotInput::from_records("empty.bin", Vec::new())],
        &PlotOptions::default(),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "no results to plot");
    assert!(err.is_bad_input());
    assert!(out.is_empty());

    let foreign = vec![Err::<Record, _>(std::io::Error::other(
        "not a results file:\n  unknown magic",
    ))];
    let err = plot_html(
        vec![PlotInput::new("photo.jpg", foreign)],
        &PlotOptions::default(),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "photo.jpg: not a results file: unknown magic"
    );
    assert!(out.is_empty());

    let err = plot(
        vec![PlotInput::from_records("x", vec![rec(0, MS, 200)])],
        &PlotOptions {
            width: 5,
            ..PlotOptions::default()
        },
        Format::Png,
        &mut out,
    )
    .unwrap_err();
    assert!(err.to_string().contains("-width 5"), "{err}");
    assert!(out.is_empty());
    assert!(Format::parse("gif").is_err());
    assert_eq!(Format::parse("SVG").unwrap(), Format::Svg);
}

#[test]
fn a_truncated_input_plots_what_came_before() {
    let mut items: Vec<Result<Record, std::io::Error>> =
        (0..500).map(|i| Ok(rec(i * MS, MS, 200))).collect();
    items.push(Err(std::io::Error::other("unexpected end of file")));
    items.push(Ok(rec(999 * MS, MS, 200)));
    let (html, summary) = html_of(vec![
        PlotInput::new("cut.bin", items),
        PlotInput::from_records("none.bin", Vec::new()),
    ]);
    assert_eq!(summary.series.len(), 1);
    assert_eq!(summary.series[0].records, 500);
    assert_eq!(
        summary.warnings,
        [
            "cut.bin: unexpected end of file (plotted the 500 results before it)",
            "none.bin: no results in this input",
        ]
    );
    assert!(html.ends_with("</html>\n"));
    assert_eq!(page_data(&html)["warnings"].as_array().unwrap().len(), 2);
}

#[test]
fn names_and_titles_cannot_break_the_page() {
    let mut r = rec(0, MS, 200);
    r.attack = Arc::from("</script><script>alert(1)</script>");
    let mut out = Vec::new();
    plot_html(
        vec![PlotInput::from_records("x", vec![r])],
        &PlotOptions {
            title: "<b>&</title>".into(),
            ..PlotOptions::default()
        },
        &mut out,
    )
    .unwrap();
    let html = String::from_utf8(out).unwrap();
    assert_eq!(html.matches("</script>").count(), 3);
    assert!(html.contains("<title>&lt;b&gt;&amp;&lt;/title&gt;</title>"));
    let page = page_data(&html);
    assert_eq!(
        page["series"][0]["name"],
        "</script><script>alert(1)</script>"
    );
    // No network: nothing is loaded from elsewhere.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
}

fn mixed() -> Vec<PlotInput<'static>> {
    let records = steady(20_000, 1_000, |i, mut r| {
        if i % 997 == 0 {
            r.code = 503;
            r.error_kind = ErrorKind::Status;
            r.latency = 40 * MS;
        }
        if i % 2000 == 0 {
            r.latency = 80 * MS;
        }
        r
    });
    vec![PlotInput::from_records("run-1", records)]
}

#[test]
fn png_has_the_size_and_a_picture() {
    let mut out = Vec::new();
    let opts = PlotOptions {
        width: 900,
        height: 500,
        ..PlotOptions::default()
    };
    let summary = plot_png(mixed(), &opts, &mut out).unwrap();
    assert_eq!(summary.bytes, out.len() as u64);
    let decoder = png::Decoder::new(std::io::Cursor::new(&out));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (900, 500));
    let px = &buf[..info.buffer_size()];
    let colors: std::collections::HashSet<&[u8]> = px.chunks(3).collect();
    assert!(colors.len() > 10, "{} colours", colors.len());
    // The OK colour of the first series and the error colour are drawn.
    assert!(colors.contains(&[0x1f, 0x77, 0xb4][..]));
    assert!(colors.contains(&[0xd6, 0x27, 0x28][..]));
    let white = px.chunks(3).filter(|c| *c == [255, 255, 255]).count();
    assert!(white > px.len() / 3 / 2, "mostly background");
}

#[test]
fn svg_parses_and_names_the_series() {
    let mut out = Vec::new();
    plot_svg(mixed(), &PlotOptions::default(), &mut out).unwrap();
    let svg = String::from_utf8(out).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some("1200"));
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(str::trim))
        .collect();
    for want in [
        "volley plot",
        "run-1 OK",
        "run-1 errors",
        "run-1 responses/s",
    ] {
        assert!(texts.contains(&want), "{want} not in {texts:?}");
    }
    let circles = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert!(circles > 100, "{circles} points");
}

#[test]
fn many_series_share_the_page_budget() {
    // 16 runs of 100k records: each alone would get 4000 buckets.
    let inputs = (0..16)
        .map(|k| PlotInput::from_records(format!("run-{k}"), steady(100_000, 100, |_, r| r)))
        .collect();
    let (html, summary) = html_of(inputs);
    assert!(summary.series.iter().all(|s| s.buckets <= 2000));
    assert!(html.len() < 2 * 1024 * 1024, "{} bytes", html.len());
}

#[test]
fn many_attack_names_are_bounded() {
    let records = (0..1000u64).map(|i| {
        let mut r = rec(i * MS, MS, 200);
        r.attack = Arc::from(format!("a{i}").as_str());
        r
    });
    let data = collect(
        vec![PlotInput::from_records("many", records)],
        &PlotOptions::default(),
    )
    .unwrap();
    assert_eq!(data.series.len(), collect::MAX_SERIES + 1);
    let buckets: usize = data.series.iter().map(|s| s.latency.len()).sum();
    assert!(buckets <= 8 * 4000, "{buckets}");
    assert_eq!(data.series.last().unwrap().name, "(other)");
    assert_eq!(data.series.last().unwrap().records, 1000 - 32);
    assert_eq!(data.warnings.len(), 1);
}

#[test]
#[ignore = "writes sample images to $VOLLEY_PLOT_SAMPLES for a human to look at"]
fn write_samples() {
    let dir = std::env::var("VOLLEY_PLOT_SAMPLES").unwrap_or_else(|_| "/tmp".into());
    for (format, ext) in [(Format::Png, "png"), (Format::Svg, "svg")] {
        let mut out = Vec::new();
        let mut inputs = mixed();
        inputs.push(PlotInput::from_records(
            "run-2",
            steady(20_000, 1_000, |i, mut r| {
                r.latency = 3 * MS + (i % 50) * 100_000;
                if (9_000..10_000).contains(&i) {
                    r.latency = (10_000 - i) * MS;
                }
                r
            }),
        ));
        plot(inputs, &PlotOptions::default(), format, &mut out).unwrap();
        std::fs::write(format!("{dir}/volley-plot-sample.{ext}"), out).unwrap();
    }
}

#[test]
fn hostile_records_plot_in_every_format() {
    let name: Arc<str> = Arc::from("<b>\"a&b'</b>\n\u{1F680}\u{0}");
    let records = || {
        let name = name.clone();
        [
            (i64::MIN, u64::MAX, 0u16),
            (i64::MAX, 0, 999),
            (0, 1, 200),
            (T0, 5 * SEC, 200),
        ]
        .into_iter()
        .map(move |(timestamp, latency, code)| Record {
            attack: name.clone(),
            timestamp,
            latency,
            code,
            ..Record::default()
        })
    };
    for format in [Format::Html, Format::Png, Format::Svg] {
        let mut out = Vec::new();
        let summary = plot(
            vec![PlotInput::from_records("x", records())],
            &PlotOptions::default(),
            format,
            &mut out,
        )
        .unwrap();
        assert_eq!(summary.series[0].records, 4);
        assert!(summary.series[0].buckets <= 4000);
        if format == Format::Svg {
            roxmltree::Document::parse(std::str::from_utf8(&out).unwrap()).unwrap();
        }
        if format == Format::Html {
            let html = String::from_utf8(out).unwrap();
            assert_eq!(page_data(&html)["series"][0]["name"], *name);
        }
    }
}

#[test]
fn same_named_inputs_get_distinct_labels() {
    let one = || PlotInput::from_records("r.bin", vec![rec(0, MS, 200)]);
    let (_, summary) = html_of(vec![one(), one(), one()]);
    let names: Vec<&str> = summary.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["r.bin", "r.bin #2", "r.bin #3"]);
}
