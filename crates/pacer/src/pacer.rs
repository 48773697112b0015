//! The rate pacer: when each hit of an open-model attack is due.
//!
//! A [`Pacer`] turns a rate [`Shape`] into a schedule. `hits(t)` is the
//! expected number of hits by elapsed time `t` (the integral of the rate);
//! `due(n)` inverts it, giving the intended send time of hit `n`; `pace` is
//! vegeta's interface on top of `due` (how long to wait before the next
//! hit, and whether to stop). The attack engine stamps every request with
//! `due(n)`, so latency is measured from the schedule, not from whenever the
//! generator got round to sending (no coordinated omission).
//!
//! Everything is a pure function of its arguments. Piecewise shapes
//! (constant, linear, steps, stages) are inverted in closed form, segment
//! by segment; the sine shape by a safeguarded Newton iteration. Both are
//! accurate to well under a microsecond and non-decreasing in `n`.
//!
//! Rate 0 (vegeta's `-rate=0`) means "as fast as possible": that is the
//! explicit [`RatePacer::unlimited`] pacer, whose hits are all due at once.

use std::f64::consts::TAU;
use std::time::Duration;

use crate::shape::{Shape, ShapeError};

/// What a worker loop should do before sending the next hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// How long to sleep before the next hit; zero when it is already due.
    pub wait: Duration,
    /// The schedule is over: send nothing more.
    pub stop: bool,
}

/// A schedule of hits over elapsed attack time.
pub trait Pacer {
    /// Expected cumulative hits by elapsed time `t`: the integral of
    /// [`rate`](Pacer::rate) from 0 to `t`. Infinite for an unlimited pacer.
    fn hits(&self, t: Duration) -> f64;

    /// Intended send time of hit `n` (0-based), or `None` when the schedule
    /// ends before it.
    ///
    /// Formally `due(n) = inf { t : hits(t) > n }`: the smallest `t` with
    /// `hits(t) >= n` from which the rate is positive. So at a constant rate
    /// `r` hit `n` is due at `n / r` (hit 0 at once), a stretch at rate 0
    /// delays the next hit to its end, and a shape with `N` expected hits
    /// in total schedules exactly hits `0..N`. Non-decreasing in `n`.
    fn due(&self, n: u64) -> Option<Duration>;

    /// vegeta's `Pace`: given the elapsed time and the hits sent so far,
    /// how long to wait before sending hit number `sent`, and whether to
    /// stop instead. Derived from [`due`](Pacer::due): a hit already due
    /// (the generator is behind) gets a zero wait.
    fn pace(&self, elapsed: Duration, sent: u64) -> Pace {
        match self.due(sent) {
            Some(due) => Pace {
                wait: due.saturating_sub(elapsed),
                stop: false,
            },
            None => Pace {
                wait: Duration::ZERO,
                stop: true,
            },
        }
    }

    /// Instantaneous rate at `t`, in hits per second (infinite when unlimited).
    fn rate(&self, t: Duration) -> f64;
}

/// The pacer for every rate shape, plus the unlimited pacer.
///
/// ```
/// use std::time::Duration;
/// use volley_pacer::{Pacer, RatePacer, Shape};
/// let p = RatePacer::new(Shape::Constant(100.0)).unwrap();
/// assert_eq!(p.due(0), Some(Duration::ZERO));
/// assert_eq!(p.due(250), Some(Duration::from_millis(2500)));
/// // A 10 s attack at 100/s sends exactly 1000 hits.
/// let p = p.until(Duration::from_secs(10));
/// assert_eq!(p.due(999), Some(Duration::from_millis(9990)));
/// assert_eq!(p.due(1000), None);
/// ```
#[derive(Debug, Clone)]
pub struct RatePacer {
    plan: Plan,
    /// Hits due at or after this instant are not sent (the attack duration).
    limit: Option<Duration>,
    shape: Option<Shape>,
}

#[derive(Debug, Clone)]
enum Plan {
    Unlimited,
    Piecewise(Vec<Segment>),
    Sine(Sine),
}

/// A stretch of time over which the rate is linear: `rate = a + slope * dt`.
#[derive(Debug, Clone)]
struct Segment {
    /// Start time, seconds.
    start: f64,
    /// End time, seconds (`start + len`, or infinity for an open tail).
    end: f64,
    /// Rate at `start`, hits per second.
    a: f64,
    /// Change of rate per second.
    slope: f64,
    /// Expected hits before `start`.
    before: f64,
    /// Expected hits by `end` (infinite for a busy open tail); the next
    /// segment's `before`.
    after: f64,
}

impl Segment {
    fn new(start: f64, len: f64, a: f64, slope: f64, before: f64) -> Segment {
        let total = if len.is_infinite() {
            if a > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        } else {
            snap(a * len + slope * len * len / 2.0).max(0.0)
        };
        let before = snap(before);
        Segment {
            start,
            end: start + len,
            a,
            slope,
            before,
            after: snap(before + total).max(before),
        }
    }

    /// Expected hits in the segment by `dt` seconds after its start.
    fn hits_within(&self, dt: f64) -> f64 {
        if self.slope == 0.0 {
            self.a * dt
        } else {
            self.a * dt + self.slope * dt * dt / 2.0
        }
    }

    /// Seconds after the segment's start at which `h` hits of it are done.
    ///
    /// The quadratic `a t + s t²/2 = h` is solved in the form whose every
    /// step is monotonic in `h` (so dues never go backwards) unless the
    /// rate barely changes over a second, where that form cancels
    /// catastrophically and the textbook-stable form is used instead.
    fn invert(&self, h: f64) -> f64 {
        let (a, s) = (self.a, self.slope);
        if s == 0.0 {
            return h / a;
        }
        let disc = (a * a + 2.0 * s * h).max(0.0);
        if a > 1e6 * s.abs() {
            2.0 * h / (a + disc.sqrt())
        } else if s > 0.0 {
            (disc.sqrt() - a) / s
        } else {
            (a - disc.sqrt()) / -s
        }
    }
}

/// Rounds totals that are integers up to float noise (`2999.9999999996`) to
/// those integers, so shapes that should schedule exactly N hits do.
fn snap(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() <= 1e-9 * r.abs().max(1.0) {
        r
    } else {
        x
    }
}

#[derive(Debug, Clone)]
struct Sine {
    mean: f64,
    amp: f64,
    /// Angular frequency, radians per second.
    omega: f64,
    /// Starting angle, radians.
    theta0: f64,
}

impl Sine {
    fn rate(&self, t: f64) -> f64 {
        self.mean + self.amp * (self.theta0 + self.omega * t).sin()
    }

    /// `mean t + (amp / ω)(cos θ0 − cos(θ0 + ω t))`, with the cosine
    /// difference written as a product of sines so it stays accurate for
    /// small `t`.
    fn hits(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        let half = self.omega * t / 2.0;
        self.mean * t + 2.0 * self.amp / self.omega * (self.theta0 + half).sin() * half.sin()
    }

    fn due(&self, n: f64) -> f64 {
        // |hits(t) - mean t| <= 2 amp / ω, which brackets the answer.
        let spread = 2.0 * self.amp / self.omega;
        let mut lo = ((n - spread) / self.mean).max(0.0);
        let mut hi = (n + spread) / self.mean + 1e-9;
        let mut t = (n / self.mean).clamp(lo, hi);
        for _ in 0..200 {
            let f = self.hits(t) - n;
            if f == 0.0 {
                return t;
            }
            if f > 0.0 {
                hi = t;
            } else {
                lo = t;
            }
            let r = self.rate(t);
            if r > 0.0 {
                let next = t - f / r;
                if next > lo && next < hi {
                    if (next - t).abs() < 1e-11 {
                        return next;
                    }
                    t = next;
                    continue;
                }
            }
            let mid = lo + (hi - lo) / 2.0;
            if hi - lo < 1e-11 || mid <= lo || mid >= hi {
                return hi;
            }
            t = mid;
        }
        hi
    }
}

impl RatePacer {
    /// A pacer over a rate shape, in hits per second.
    ///
    /// `Shape::Constant(0.0)` and `Shape::Constant(f64::INFINITY)` give the
    /// [`unlimited`](RatePacer::unlimited) pacer, like vegeta's `-rate=0`.
    /// Inside other shapes a level of 0 means no hits for that stretch.
    pub fn new(shape: Shape) -> Result<RatePacer, ShapeError> {
        shape.validate()?;
        let plan = match &shape {
            Shape::Constant(level) if *level == 0.0 || level.is_infinite() => Plan::Unlimited,
            Shape::Constant(level) => {
                Plan::Piecewise(vec![Segment::new(0.0, f64::INFINITY, *level, 0.0, 0.0)])
            }
            Shape::Linear { from, to, over } => {
                let len = over.as_secs_f64();
                let ramp = Segment::new(0.0, len, *from, (to - from) / len, 0.0);
                let tail = Segment::new(ramp.end, f64::INFINITY, *to, 0.0, ramp.after);
                Plan::Piecewise(vec![ramp, tail])
            }
            Shape::Sine {
                mean,
                amplitude,
                period,
                phase,
            } => Plan::Sine(Sine {
                mean: *mean,
                amp: *amplitude,
                omega: TAU / period.as_secs_f64(),
                theta0: TAU * phase,
            }),
            Shape::Steps(steps) => {
                let mut segs = Vec::with_capacity(steps.len());
                let (mut start, mut before) = (Duration::ZERO, 0.0);
                for &(level, len) in steps {
                    let seg =
                        Segment::new(start.as_secs_f64(), len.as_secs_f64(), level, 0.0, before);
                    start = start.saturating_add(len);
                    before = seg.after;
                    segs.push(seg);
                }
                Plan::Piecewise(segs)
            }
            Shape::Stages { start, stages } => {
                let mut segs = Vec::with_capacity(stages.len());
                let (mut begin, mut before, mut from) = (Duration::ZERO, 0.0, *start);
                for &(len, target) in stages {
                    if !len.is_zero() {
                        let secs = len.as_secs_f64();
                        let seg = Segment::new(
                            begin.as_secs_f64(),
                            secs,
                            from,
                            (target - from) / secs,
                            before,
                        );
                        before = seg.after;
                        segs.push(seg);
                    }
                    begin = begin.saturating_add(len);
                    from = target;
                }
                Plan::Piecewise(segs)
            }
        };
        // Segment ends are recomputed as the next segment's start, so the
        // clamp in `due` can never step over a boundary.
        let plan = match plan {
            Plan::Piecewise(mut segs) => {
                for i in 1..segs.len() {
                    let next_start = segs[i].start;
                    segs[i - 1].end = next_start;
                }
                Plan::Piecewise(segs)
            }
            other => other,
        };
        Ok(RatePacer {
            plan,
            limit: None,
            shape: Some(shape),
        })
    }

    /// The "as fast as possible" pacer (vegeta's `-rate=0` or
    /// `-rate=infinity`): every hit is due at once, `hits` is infinite, and
    /// concurrency is bounded by the workers, not by the pacer.
    pub fn unlimited() -> RatePacer {
        RatePacer {
            plan: Plan::Unlimited,
            limit: None,
            shape: None,
        }
    }

    /// Bounds the schedule to an attack duration: hits due at or after
    /// `limit` are not sent, so `-duration=10s -rate=100` sends exactly 1000
    /// hits. An unlimited pacer stops once `elapsed >= limit`. A zero
    /// limit means no bound (vegeta's `-duration=0`).
    pub fn until(mut self, limit: Duration) -> RatePacer {
        self.limit = (!limit.is_zero()).then_some(limit);
        self
    }

    /// Whether this is the unlimited pacer.
    pub fn is_unlimited(&self) -> bool {
        matches!(self.plan, Plan::Unlimited)
    }

    /// The shape this pacer follows (`None` for [`RatePacer::unlimited`]).
    pub fn shape(&self) -> Option<&Shape> {
        self.shape.as_ref()
    }

    /// When the schedule ends: the shape's natural end or the `until`
    /// limit, whichever is first; `None` if it goes on forever.
    pub fn end(&self) -> Option<Duration> {
        let natural = self.shape.as_ref().and_then(Shape::end);
        match (natural, self.limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Expected number of hits over the whole schedule, if it is finite.
    pub fn total(&self) -> Option<f64> {
        if self.is_unlimited() {
            return None;
        }
        let end = self.end()?;
        Some(self.hits(end))
    }

    fn due_secs(&self, n: u64) -> Option<f64> {
        let nf = n as f64;
        let t = match &self.plan {
            Plan::Unlimited => 0.0,
            Plan::Sine(sine) => sine.due(nf),
            Plan::Piecewise(segs) => {
                // First segment whose schedule goes past hit n.
                let k = segs.partition_point(|s| s.after <= nf);
                let seg = segs.get(k)?;
                let h = (nf - seg.before).clamp(0.0, seg.after - seg.before);
                (seg.start + seg.invert(h).clamp(0.0, f64::MAX)).min(seg.end)
            }
        };
        match self.limit {
            Some(limit) if !self.is_unlimited() && t >= limit.as_secs_f64() => None,
            _ => Some(t),
        }
    }
}

/// Seconds to a `Duration`, rounded to the nearest nanosecond; `None` when
/// beyond what a `Duration` counts in nanoseconds (centuries away).
fn to_duration(secs: f64) -> Option<Duration> {
    let nanos = (secs * 1e9).round();
    if !(0.0..1.8e19).contains(&nanos) {
        return None;
    }
    Some(Duration::from_nanos(nanos as u64))
}

impl Pacer for RatePacer {
    fn hits(&self, t: Duration) -> f64 {
        let mut secs = t.as_secs_f64();
        if let Some(limit) = self.limit {
            secs = secs.min(limit.as_secs_f64());
        }
        match &self.plan {
            Plan::Unlimited => f64::INFINITY,
            Plan::Sine(sine) => sine.hits(secs),
            Plan::Piecewise(segs) => {
                let k = segs.partition_point(|s| s.start <= secs);
                let Some(seg) = k.checked_sub(1).and_then(|k| segs.get(k)) else {
                    return 0.0;
                };
                if secs >= seg.end {
                    seg.after
                } else {
                    let within = seg.hits_within(secs - seg.start);
                    (seg.before + within.max(0.0)).min(seg.after)
                }
            }
        }
    }

    fn due(&self, n: u64) -> Option<Duration> {
        self.due_secs(n).and_then(to_duration)
    }

    fn pace(&self, elapsed: Duration, sent: u64) -> Pace {
        if self.is_unlimited() {
            let stop = self.limit.is_some_and(|l| elapsed >= l);
            return Pace {
                wait: Duration::ZERO,
                stop,
            };
        }
        match self.due(sent) {
            Some(due) => Pace {
                wait: due.saturating_sub(elapsed),
                stop: false,
            },
            None => Pace {
                wait: Duration::ZERO,
                stop: true,
            },
        }
    }

    fn rate(&self, t: Duration) -> f64 {
        if self.limit.is_some_and(|l| t >= l) {
            return 0.0;
        }
        match &self.plan {
            Plan::Unlimited => f64::INFINITY,
            Plan::Sine(sine) => sine.rate(t.as_secs_f64()),
            Plan::Piecewise(_) => self.shape.as_ref().map_or(0.0, |s| s.level(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn pacer(spec: &str) -> RatePacer {
        RatePacer::new(Shape::parse(spec, None).unwrap()).unwrap()
    }

    /// |a - b| <= 1 µs.
    fn near(a: Duration, b: Duration) -> bool {
        a.abs_diff(b) <= Duration::from_micros(1)
    }

    #[test]
    fn due_table() {
        let cases: &[(&str, u64, Option<Duration>)] = &[
            ("100", 0, Some(Duration::ZERO)),
            ("100", 1, Some(ms(10))),
            ("100", 250, Some(ms(2500))),
            ("3", 1, Some(Duration::from_nanos(333_333_333))),
            ("3", 3, Some(secs(1.0))),
            ("1/1h", 0, Some(Duration::ZERO)),
            ("1/1h", 1, Some(secs(3600.0))),
            ("1/1h", 24, Some(secs(86400.0))),
            ("1000000000", 1, Some(Duration::from_nanos(1))),
            ("1000000000", 1_000_000_000, Some(secs(1.0))),
            ("1000000000000", 999, Some(Duration::from_nanos(1))),
            ("0.5", 1, Some(secs(2.0))),
            // Ramp 0 -> 100 over 10 s: hits(t) = 5 t^2, then 100/s.
            ("linear:0..100:10s", 0, Some(Duration::ZERO)),
            ("linear:0..100:10s", 5, Some(secs(1.0))),
            ("linear:0..100:10s", 20, Some(secs(2.0))),
            ("linear:0..100:10s", 500, Some(secs(10.0))),
            ("linear:0..100:10s", 600, Some(secs(11.0))),
            // Ramp down to 0: 500 hits in all.
            ("linear:100..0:10s", 0, Some(Duration::ZERO)),
            ("linear:100..0:10s", 375, Some(secs(5.0))),
            ("linear:100..0:10s", 499, Some(secs(10.0 - (0.2f64).sqrt()))),
            ("linear:100..0:10s", 500, None),
            ("linear:100..0:10s", u64::MAX, None),
            // Steps and their boundaries; a zero step delays the next hit.
            ("steps:100x1s,0x1s,100x1s", 99, Some(ms(990))),
            ("steps:100x1s,0x1s,100x1s", 100, Some(secs(2.0))),
            ("steps:100x1s,0x1s,100x1s", 101, Some(ms(2010))),
            ("steps:100x1s,0x1s,100x1s", 199, Some(ms(2990))),
            ("steps:100x1s,0x1s,100x1s", 200, None),
            ("steps:0x10s,1x10s", 0, Some(secs(10.0))),
            ("steps:0x10s,1x10s", 9, Some(secs(19.0))),
            ("steps:0x10s,1x10s", 10, None),
            ("steps:0x10s", 0, None),
            ("steps:10x1s,20x1s", 10, Some(secs(1.0))),
            ("steps:10x1s,20x1s", 29, Some(ms(1950))),
            ("steps:10x1s,20x1s", 30, None),
            // k6 stages: 1500 + 33000 + 15000 hits.
            ("stages:30s:100,60s:1000,30s:0", 0, Some(Duration::ZERO)),
            ("stages:30s:100,60s:1000,30s:0", 1500, Some(secs(30.0))),
            ("stages:30s:100,60s:1000,30s:0", 34500, Some(secs(90.0))),
            (
                "stages:30s:100,60s:1000,30s:0",
                49499,
                Some(secs(120.0 - (0.06f64).sqrt())),
            ),
            ("stages:30s:100,60s:1000,30s:0", 49500, None),
            ("stages:10,10s:10", 99, Some(ms(9900))),
            ("stages:10,10s:10", 100, None),
            ("stages:0s:10,10s:10", 50, Some(secs(5.0))),
            ("stages:10s:0,10s:0", 0, None),
            // Sine at mean 100 +- 50 over 4 s: 400 hits per period.
            ("sine:100,50,4s", 0, Some(Duration::ZERO)),
            ("sine:100,50,4s", 400, Some(secs(4.0))),
            ("sine:100,50,4s", 800, Some(secs(8.0))),
            ("sine:100,50,4s,0.5", 400, Some(secs(4.0))),
            ("sine:100,0,4s", 7, Some(ms(70))),
        ];
        for (spec, n, want) in cases {
            let got = pacer(spec).due(*n);
            let ok = match (got, want) {
                (Some(g), Some(w)) => near(g, *w),
                (None, None) => true,
                _ => false,
            };
            assert!(ok, "{spec} due({n}) = {got:?}, want {want:?}");
        }
    }

    #[test]
    fn hits_table() {
        let cases: &[(&str, f64, f64)] = &[
            ("100", 0.0, 0.0),
            ("100", 2.5, 250.0),
            ("1/1h", 7200.0, 2.0),
            ("linear:0..100:10s", 2.0, 20.0),
            ("linear:0..100:10s", 10.0, 500.0),
            ("linear:0..100:10s", 12.0, 700.0),
            ("linear:100..0:10s", 1e6, 500.0),
            ("steps:100x1s,0x1s,100x1s", 1.5, 100.0),
            ("steps:100x1s,0x1s,100x1s", 2.5, 150.0),
            ("steps:100x1s,0x1s,100x1s", 99.0, 200.0),
            ("stages:30s:100,60s:1000,30s:0", 30.0, 1500.0),
            ("stages:30s:100,60s:1000,30s:0", 120.0, 49500.0),
            ("stages:30s:100,60s:1000,30s:0", 1e9, 49500.0),
            ("sine:100,50,4s", 4.0, 400.0),
            (
                "sine:100,50,4s",
                1.0,
                100.0 + 50.0 * 4.0 / std::f64::consts::TAU,
            ),
            ("sine:100,50,4s,trough", 2.0, 200.0),
        ];
        for (spec, t, want) in cases {
            let got = pacer(spec).hits(secs(*t));
            assert!(
                (got - want).abs() < 1e-6,
                "{spec} hits({t}s) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn sine_matches_vegeta_integral() {
        // vegeta: H = M t + (A P / 2π)(cos(O) − cos(O + 2π t / P)).
        for phase in [0.0, 0.25, 0.5, 0.75, 0.1] {
            let p = RatePacer::new(Shape::Sine {
                mean: 300.0,
                amplitude: 200.0,
                period: secs(7.0),
                phase,
            })
            .unwrap();
            let o = TAU * phase;
            for i in 0..200 {
                let t = i as f64 * 0.173;
                let want = 300.0 * t + (200.0 * 7.0 / TAU) * (o.cos() - (o + TAU * t / 7.0).cos());
                let got = p.hits(secs(t));
                assert!(
                    (got - want).abs() < 1e-6,
                    "phase {phase} t {t}: {got} vs {want}"
                );
                let rate = 300.0 + 200.0 * (o + TAU * t / 7.0).sin();
                assert!((p.rate(secs(t)) - rate).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn unlimited() {
        for p in [
            RatePacer::unlimited(),
            RatePacer::new(Shape::Constant(0.0)).unwrap(),
            RatePacer::new(Shape::Constant(f64::INFINITY)).unwrap(),
        ] {
            assert!(p.is_unlimited());
            for n in [0, 1, 1_000_000, u64::MAX] {
                assert_eq!(p.due(n), Some(Duration::ZERO));
            }
            assert_eq!(p.hits(secs(1.0)), f64::INFINITY);
            assert_eq!(p.rate(secs(1.0)), f64::INFINITY);
            assert_eq!(p.total(), None);
            assert_eq!(
                p.pace(secs(1e6), u64::MAX),
                Pace {
                    wait: Duration::ZERO,
                    stop: false
                }
            );
            let p = p.until(secs(10.0));
            assert!(!p.pace(ms(9999), 1 << 40).stop);
            assert!(p.pace(secs(10.0), 0).stop);
        }
    }

    #[test]
    fn pace_table() {
        let bounded = pacer("100").until(secs(1.0));
        let cases: &[(&RatePacer, Duration, u64, Duration, bool)] = &[
            (&bounded, Duration::ZERO, 0, Duration::ZERO, false),
            (&bounded, Duration::ZERO, 1, ms(10), false),
            (&bounded, ms(5), 1, ms(5), false),
            (&bounded, ms(10), 1, Duration::ZERO, false),
            // Behind schedule: send at once.
            (&bounded, ms(500), 1, Duration::ZERO, false),
            (&bounded, ms(990), 99, Duration::ZERO, false),
            (&bounded, ms(500), 99, ms(490), false),
            // Hit 100 would be due at the limit: stop.
            (&bounded, ms(990), 100, Duration::ZERO, true),
            (&bounded, Duration::ZERO, 100, Duration::ZERO, true),
        ];
        for (p, elapsed, sent, wait, stop) in cases {
            let got = p.pace(*elapsed, *sent);
            assert_eq!(got.stop, *stop, "pace({elapsed:?}, {sent})");
            assert!(near(got.wait, *wait), "pace({elapsed:?}, {sent}) = {got:?}");
        }
        let steps = pacer("steps:10x1s");
        assert!(!steps.pace(secs(5.0), 9).stop);
        assert!(steps.pace(Duration::ZERO, 10).stop);
        assert!(steps.pace(secs(5.0), 10).stop);
    }

    #[test]
    fn limits_totals_and_rates() {
        assert_eq!(pacer("100").total(), None);
        assert_eq!(pacer("100").until(secs(10.0)).total(), Some(1000.0));
        assert_eq!(pacer("100").until(Duration::ZERO).total(), None);
        assert_eq!(pacer("steps:100x1s,50x2s").total(), Some(200.0));
        assert_eq!(
            pacer("steps:100x1s,50x2s").until(secs(2.0)).total(),
            Some(150.0)
        );
        assert_eq!(pacer("steps:100x1s,50x2s").end(), Some(secs(3.0)));
        // A 10 s attack at 100/s sends exactly hits 0..1000.
        let p = pacer("100").until(secs(10.0));
        assert!(p.due(999).is_some());
        assert_eq!(p.due(1000), None);
        let rates: &[(&RatePacer, f64, f64)] = &[
            (&p, 3.0, 100.0),
            (&p, 10.0, 0.0),
            (&pacer("linear:0..100:10s"), 5.0, 50.0),
            (&pacer("linear:0..100:10s"), 50.0, 100.0),
            (&pacer("steps:100x1s,50x2s"), 1.0, 50.0),
            (&pacer("steps:100x1s,50x2s"), 3.0, 0.0),
            (&pacer("sine:100,50,4s"), 1.0, 150.0),
        ];
        for (p, t, want) in rates {
            assert!(
                (p.rate(secs(*t)) - want).abs() < 1e-9,
                "{:?} rate({t})",
                p.shape()
            );
        }
    }

    /// The schedule never goes backwards, and every due time is within 1 µs
    /// of the ideal: `hits(due - 1µs) <= n <= hits(due + 1µs)`.
    fn check_schedule(p: &RatePacer, count: u64, accuracy_every: u64) {
        let us = Duration::from_micros(1);
        let mut prev = Duration::ZERO;
        for n in 0..count {
            let Some(due) = p.due(n) else {
                // Once the schedule ends it stays ended.
                for m in [n + 1, n + 1000, count * 2] {
                    assert_eq!(p.due(m), None, "{:?}", p.shape());
                }
                return;
            };
            assert!(
                due >= prev,
                "{:?}: due({n}) = {due:?} < {prev:?}",
                p.shape()
            );
            prev = due;
            if n % accuracy_every == 0 {
                let nf = n as f64;
                // Float noise in `hits` itself, which matters where the rate is ~0.
                let eps = 1e-9 + nf * 1e-12;
                let below = p.hits(due.saturating_sub(us));
                let above = p.hits(due + us);
                assert!(
                    below <= nf + eps && (above >= nf - eps || n == 0),
                    "{:?}: due({n}) = {due:?}, hits around it {below}..{above}",
                    p.shape()
                );
            }
        }
    }

    #[test]
    fn ten_million_dues_are_monotonic_and_exact() {
        for spec in ["5000", "linear:100..5000:30m", "stages:1h:10000,1h:100"] {
            check_schedule(&pacer(spec), 10_000_000, 97);
        }
    }

    #[test]
    fn schedules_are_monotonic_and_exact() {
        let specs = [
            "1",
            "3",
            "1/1h",
            "7/1m",
            "123456789",
            "1000000000",
            "linear:0..1000:10s",
            "linear:1000..0:10s",
            "linear:1000..1000.001:1h",
            "linear:1..2000000:1s",
            "linear:0.001..100:1h",
            "steps:100x1s,0x1s,1000x1s,1x1s,50000x1s",
            "steps:1/1h x2h,1x5s",
            "stages:30s:100,60s:1000,30s:0",
            "stages:10,0s:1000,10s:1000,10s:0,0s:500,1s:500",
            "stages:1s:1000000,1s:0",
            "sine:1000,500,1m",
            "sine:1000,1000,10s,trough",
            "sine:1000,999,1s,0.3",
            "sine:1,1,1h",
            "sine:100000,50000,333ms",
        ];
        for spec in specs {
            check_schedule(&pacer(spec), 100_000, 1);
        }
        check_schedule(&pacer("sine:1000,500,1m"), 2_000_000, 13);
    }

    #[test]
    fn far_future_dues_do_not_overflow() {
        let p = pacer("1/1h");
        assert_eq!(p.due(u64::MAX), None);
        assert!(p.due(1 << 40).is_none()); // ~125 million years
        let p = pacer("1000000000000");
        assert!(p.due(u64::MAX).is_some());
        let p = pacer("sine:1,1,1h");
        assert_eq!(p.due(u64::MAX), None);
        assert!(p.pace(Duration::MAX, u64::MAX).stop);
    }

    #[test]
    fn invalid_shapes_are_refused() {
        assert!(RatePacer::new(Shape::Constant(-1.0)).is_err());
        assert!(RatePacer::new(Shape::Steps(vec![])).is_err());
    }
}
