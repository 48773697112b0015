//! The sink that turns a stream of records into plot data in bounded memory.
//!
//! [`Collector`] takes records one at a time (`add`) and keeps, per series
//! (one per input and attack name), two [`Timeline`]s — latencies by
//! intended send time and completed responses by status code by completion
//! time — plus an HDR histogram for the percentile and distribution panels.
//! `finish` turns them into [`PlotData`], which every output format
//! renders. Nothing here grows with the number of records.

use std::collections::BTreeMap;
use std::sync::Arc;

use hdrhistogram::Histogram;
use volley_results::Record;

use crate::error::{one_line, PlotError};
use crate::timeline::{Extent, LatencyBucket, RateBucket, Timeline};
use crate::{PlotInput, PlotOptions};

/// Most series kept apart; further attack names share an `(other)` series
/// per input, so a file with thousands of names cannot exhaust memory.
pub const MAX_SERIES: usize = 32;

/// Up to this many series, each gets `max_points` buckets; beyond, they
/// share `BUDGET_SERIES × max_points` (but keep at least
/// `MIN_SHARED_POINTS` each).
const BUDGET_SERIES: usize = 8;
const MIN_SHARED_POINTS: usize = 250;

/// Largest latency the HDR histograms resolve (24 h); longer ones count
/// as 24 h in the percentile panel (the over-time panel stays exact).
const HDR_MAX_NS: u64 = 24 * 3600 * 1_000_000_000;

/// Narrowest latency bucket: 1 ms.
const LATENCY_BASE_NS: u64 = 1_000_000;
/// Narrowest rate bucket: 1 s, so rates are per whole second.
const RATE_BASE_NS: u64 = 1_000_000_000;

struct InputState {
    name: String,
    origin: Option<i64>,
    min_ts: i64,
    records: u64,
    other_group: Option<usize>,
}

struct Group {
    input: usize,
    attack: Arc<str>,
    lat: Timeline<LatencyBucket>,
    rate: Timeline<RateBucket>,
    hist: Histogram<u64>,
    all: Extent,
    ok: u64,
    codes: BTreeMap<u16, u64>,
}

/// A sink of records for one plot: `begin_input`, `add` each record,
/// `finish`.
pub struct Collector {
    limit: usize,
    title: String,
    inputs: Vec<InputState>,
    groups: Vec<Group>,
    warnings: Vec<String>,
    /// The last (input, attack) looked up, to skip the search on the hot
    /// path (consecutive records usually share both).
    last: Option<(usize, Arc<str>, usize)>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("inputs", &self.inputs.len())
            .field("series", &self.groups.len())
            .finish()
    }
}

impl Collector {
    /// A collector for the given options.
    pub fn new(opts: &PlotOptions) -> Self {
        Collector {
            limit: opts.max_points.max(4),
            title: opts.title.clone(),
            inputs: Vec::new(),
            groups: Vec::new(),
            warnings: Vec::new(),
            last: None,
        }
    }

    /// Starts a new input (a results file); returns its index for `add`.
    pub fn begin_input(&mut self, name: &str) -> usize {
        self.inputs.push(InputState {
            name: name.to_string(),
            origin: None,
            min_ts: i64::MAX,
            records: 0,
            other_group: None,
        });
        self.inputs.len() - 1
    }

    /// Records a non-fatal problem, reported in [`PlotSummary::warnings`].
    ///
    /// [`PlotSummary::warnings`]: crate::PlotSummary::warnings
    pub fn warn(&mut self, msg: String) {
        self.warnings.push(msg);
    }

    /// Number of records added to input `input` so far.
    pub fn records(&self, input: usize) -> u64 {
        self.inputs.get(input).map_or(0, |i| i.records)
    }

    /// Adds one record of input `input` (an index from `begin_input`;
    /// records for an unknown index are ignored).
    pub fn add(&mut self, input: usize, r: &Record) {
        let Some(inp) = self.inputs.get_mut(input) else {
            return;
        };
        inp.records += 1;
        inp.min_ts = inp.min_ts.min(r.timestamp);
        let origin = *inp.origin.get_or_insert(r.timestamp);
        let gi = match &self.last {
            Some((i, a, g)) if *i == input && Arc::ptr_eq(a, &r.attack) => *g,
            _ => {
                let g = self.group_for(input, &r.attack, origin);
                self.last = Some((input, r.attack.clone(), g));
                g
            }
        };
        let g = &mut self.groups[gi];
        let ok = r.is_success();
        let b = g.lat.bucket(r.timestamp);
        if ok {
            b.ok.add(r.latency);
            g.ok += 1;
        } else {
            b.err.add(r.latency);
        }
        g.rate.bucket(r.end()).add(r.code);
        g.hist.saturating_record(r.latency.clamp(1, HDR_MAX_NS));
        g.all.add(r.latency);
        *g.codes.entry(r.code).or_insert(0) += 1;
    }

    fn group_for(&mut self, input: usize, attack: &Arc<str>, origin: i64) -> usize {
        if let Some(i) = self
            .groups
            .iter()
            .position(|g| g.input == input && *g.attack == **attack)
        {
            return i;
        }
        if self.groups.len() >= MAX_SERIES {
            if let Some(i) = self.inputs[input].other_group {
                return i;
            }
            let msg = format!(
                "{}: more than {MAX_SERIES} attack names; the rest are plotted as \"(other)\"",
                self.inputs[input].name
            );
            self.warnings.push(msg);
            let i = self.new_group(input, Arc::from("(other)"), origin);
            self.inputs[input].other_group = Some(i);
            return i;
        }
        self.new_group(input, attack.clone(), origin)
    }

    fn new_group(&mut self, input: usize, attack: Arc<str>, origin: i64) -> usize {
        let mut lat = Timeline::new(self.limit, LATENCY_BASE_NS);
        lat.set_origin(origin);
        let mut rate = Timeline::new(self.limit, RATE_BASE_NS);
        rate.set_origin(origin);
        // Cannot fail: the bounds are constants within HDR's range.
        let hist = Histogram::new_with_bounds(1, HDR_MAX_NS, 3)
            .unwrap_or_else(|_| Histogram::new(3).expect("3 significant digits is valid"));
        self.groups.push(Group {
            input,
            attack,
            lat,
            rate,
            hist,
            all: Extent::default(),
            ok: 0,
            codes: BTreeMap::new(),
        });
        self.groups.len() - 1
    }

    /// Ends collection: the plot data, or `NoResults` when nothing was added.
    pub fn finish(mut self) -> Result<PlotData, PlotError> {
        if self.groups.is_empty() {
            return Err(PlotError::NoResults);
        }
        for inp in &self.inputs {
            if inp.records == 0 {
                self.warnings
                    .push(format!("{}: no results in this input", inp.name));
            }
        }
        // Many series share a total budget, so that the page stays small
        // (a few hundred kB per 4000 buckets).
        if self.groups.len() > BUDGET_SERIES {
            let each = (self.limit * BUDGET_SERIES / self.groups.len()).max(MIN_SHARED_POINTS);
            for g in &mut self.groups {
                g.lat.shrink_to(each);
                g.rate.shrink_to(each);
            }
        }
        let names = series_names(&self.groups, &self.inputs);
        let mut series = Vec::with_capacity(self.groups.len());
        for (g, name) in self.groups.into_iter().zip(names) {
            let base = self.inputs[g.input].min_ts as i128;
            let secs = |start: i128| ((start - base).max(0)) as f64 / 1e9;
            let latency = g.lat.iter().map(|(s, b)| (secs(s), b.clone())).collect();
            let rate = g.rate.iter().map(|(s, b)| (secs(s), b.clone())).collect();
            series.push(SeriesData {
                name,
                input: self.inputs[g.input].name.clone(),
                attack: g.attack.to_string(),
                records: g.all.count,
                ok: g.ok,
                min_latency: g.all.min,
                max_latency: g.all.max,
                codes: g.codes,
                latency_width: g.lat.width_ns() as f64 / 1e9,
                latency,
                rate_width: g.rate.width_ns() as f64 / 1e9,
                rate,
                hist: g.hist,
            });
        }
        Ok(PlotData {
            title: self.title,
            series,
            warnings: self.warnings,
        })
    }
}

/// One label per series: the attack name, or the input's name when the
/// attack has none; `input: attack` when that would be ambiguous.
fn series_names(groups: &[Group], inputs: &[InputState]) -> Vec<String> {
    let short = |g: &Group| -> String {
        if g.attack.is_empty() {
            inputs[g.input].name.clone()
        } else {
            g.attack.to_string()
        }
    };
    let shorts: Vec<String> = groups.iter().map(short).collect();
    let mut names: Vec<String> = groups
        .iter()
        .zip(&shorts)
        .map(|(g, s)| {
            let dup = shorts.iter().filter(|o| *o == s).count() > 1;
            if dup && !g.attack.is_empty() {
                format!("{}: {}", inputs[g.input].name, g.attack)
            } else {
                s.clone()
            }
        })
        .collect();
    // Still equal (two inputs with the same name): number them.
    for i in 0..names.len() {
        let mut n = 2;
        while names[..i].contains(&names[i]) {
            names[i] = format!("{} #{n}", shorts[i]);
            n += 1;
        }
    }
    names
}

/// Everything a plot shows, per series, independent of the output format.
#[derive(Debug)]
pub struct PlotData {
    /// The plot's title.
    pub title: String,
    /// One entry per (input, attack name), in order of first appearance.
    pub series: Vec<SeriesData>,
    /// Non-fatal problems (a truncated input, an empty input, …).
    pub warnings: Vec<String>,
}

/// One series: an attack (or input) with its downsampled timelines.
#[derive(Debug)]
pub struct SeriesData {
    /// Label shown in legends.
    pub name: String,
    /// The input (file) it came from.
    pub input: String,
    /// The attack name (may be empty).
    pub attack: String,
    /// Number of records.
    pub records: u64,
    /// Successful records.
    pub ok: u64,
    /// Smallest latency, ns.
    pub min_latency: u64,
    /// Largest latency, ns (exact).
    pub max_latency: u64,
    /// Records per status code.
    pub codes: BTreeMap<u16, u64>,
    /// Width of the latency buckets, seconds.
    pub latency_width: f64,
    /// (seconds since the input's first intended send, bucket), by time.
    pub latency: Vec<(f64, LatencyBucket)>,
    /// Width of the rate buckets, seconds.
    pub rate_width: f64,
    /// (seconds since the input's first intended send, responses completed
    /// in the bucket), by time.
    pub rate: Vec<(f64, RateBucket)>,
    /// All latencies, ns, 3 significant digits.
    pub hist: Histogram<u64>,
}

impl SeriesData {
    /// Failed records.
    pub fn errors(&self) -> u64 {
        self.records - self.ok
    }

    /// Buckets holding at least one success (points of the OK series).
    pub fn ok_points(&self) -> usize {
        self.latency.iter().filter(|(_, b)| b.ok.count > 0).count()
    }

    /// Buckets holding at least one error (points of the error series).
    pub fn error_points(&self) -> usize {
        self.latency.iter().filter(|(_, b)| b.err.count > 0).count()
    }
}

/// Reads every input into a collector. An input that fails before its
/// first record is fatal; one that fails later (a truncated file) keeps
/// what came before and adds a warning.
pub fn collect(inputs: Vec<PlotInput<'_>>, opts: &PlotOptions) -> Result<PlotData, PlotError> {
    opts.validate()?;
    let mut c = Collector::new(opts);
    for input in inputs {
        let idx = c.begin_input(&input.name);
        for item in input.records {
            match item {
                Ok(r) => c.add(idx, &r),
                Err(e) => {
                    let message = one_line(&e.to_string());
                    let n = c.records(idx);
                    if n == 0 {
                        return Err(PlotError::Input {
                            name: input.name,
                            message,
                        });
                    }
                    c.warn(format!(
                        "{}: {message} (plotted the {n} results before it)",
                        input.name
                    ));
                    break;
                }
            }
        }
    }
    c.finish()
}
