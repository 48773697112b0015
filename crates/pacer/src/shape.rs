//! Load shapes: a level as a pure function of elapsed time.
//!
//! One [`Shape`] type serves both load models: in the open model the level
//! is a request rate (hits per second, scheduled by
//! [`RatePacer`](crate::RatePacer)); in the closed model it is a number of
//! concurrent users, read by the attack engine's supervisor with
//! [`Shape::level`]. Shapes are plain data; their textual form (the `-rate`,
//! `-shape` and `-users` flags) lives in [`crate::spec`].

use std::f64::consts::TAU;
use std::time::Duration;

/// The largest level a shape accepts: a trillion hits per second (or users)
/// is far beyond any generator, and the bound keeps all arithmetic finite.
pub const MAX_LEVEL: f64 = 1e12;

/// A level (requests per second, or users) as a function of elapsed time.
///
/// All variants are defined from `t = 0`. [`Shape::Steps`] and
/// [`Shape::Stages`] have a natural [`end`](Shape::end), after which the
/// level is 0 and the attack is over; the other shapes go on forever (the
/// attack's `-duration` bounds them).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// The same level all the time. For a rate, `Constant(0.0)` and
    /// `Constant(f64::INFINITY)` mean "as fast as possible" (vegeta's
    /// `-rate=0`), see [`RatePacer::new`](crate::RatePacer::new).
    Constant(f64),
    /// Ramps linearly from `from` to `to` over `over`, then stays at `to`.
    Linear {
        /// Level at `t = 0`.
        from: f64,
        /// Level at `t = over` and after.
        to: f64,
        /// Length of the ramp; must be positive.
        over: Duration,
    },
    /// vegeta's sine pacer: `mean + amplitude * sin(2π (phase + t / period))`.
    ///
    /// `phase` is a fraction of the period: `0` starts at the mean going up
    /// (vegeta's `MeanUp`), `0.25` at the peak (`Peak`), `0.5` at the mean
    /// going down (`MeanDown`), `0.75` at the trough (`Trough`).
    Sine {
        /// Mid level; must be positive.
        mean: f64,
        /// Swing either side of the mean; at most `mean`, so the level never
        /// goes negative.
        amplitude: f64,
        /// Length of one full wave; must be positive.
        period: Duration,
        /// Starting point in the wave, as a fraction of the period in `[0, 1)`.
        phase: f64,
    },
    /// Holds each level for its duration, in order; after the last step the
    /// shape ends.
    Steps(Vec<(f64, Duration)>),
    /// k6's `stages`: each `(duration, target)` ramps linearly from the
    /// previous level (the previous target, or `start` for the first stage)
    /// to `target` over `duration`; after the last stage the shape ends.
    /// A zero-length stage jumps straight to its target.
    Stages {
        /// Level at `t = 0` (k6's `startRate` / `startVUs`); usually 0.
        start: f64,
        /// `(duration, target level)` pairs.
        stages: Vec<(Duration, f64)>,
    },
}

/// Why a [`Shape`] cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

impl Shape {
    /// The level at elapsed time `t`. After a finite shape's
    /// [`end`](Shape::end) the level is 0; a shape is defined on `[0, end)`.
    pub fn level(&self, t: Duration) -> f64 {
        let secs = t.as_secs_f64();
        match self {
            Shape::Constant(level) => *level,
            Shape::Linear { from, to, over } => {
                let over = over.as_secs_f64();
                if secs >= over || over <= 0.0 {
                    *to
                } else {
                    from + (to - from) * (secs / over)
                }
            }
            Shape::Sine {
                mean,
                amplitude,
                period,
                phase,
            } => {
                let period = period.as_secs_f64();
                if period <= 0.0 {
                    return *mean;
                }
                mean + amplitude * (TAU * (phase + secs / period)).sin()
            }
            Shape::Steps(steps) => {
                let mut start = Duration::ZERO;
                for &(level, len) in steps {
                    let end = start.saturating_add(len);
                    if t < end {
                        return level;
                    }
                    start = end;
                }
                0.0
            }
            Shape::Stages { start, stages } => {
                let mut from = *start;
                let mut begin = Duration::ZERO;
                for &(len, target) in stages {
                    let end = begin.saturating_add(len);
                    if t < end {
                        let frac = (t - begin).as_secs_f64() / len.as_secs_f64();
                        return from + (target - from) * frac;
                    }
                    from = target;
                    begin = end;
                }
                0.0
            }
        }
    }

    /// The natural end of the shape: the sum of the steps' or stages'
    /// durations; `None` for shapes that go on forever.
    pub fn end(&self) -> Option<Duration> {
        match self {
            Shape::Constant(_) | Shape::Linear { .. } | Shape::Sine { .. } => None,
            Shape::Steps(steps) => Some(
                steps
                    .iter()
                    .fold(Duration::ZERO, |acc, &(_, d)| acc.saturating_add(d)),
            ),
            Shape::Stages { stages, .. } => Some(
                stages
                    .iter()
                    .fold(Duration::ZERO, |acc, &(d, _)| acc.saturating_add(d)),
            ),
        }
    }

    /// The largest level the shape reaches.
    pub fn peak(&self) -> f64 {
        match self {
            Shape::Constant(level) => *level,
            Shape::Linear { from, to, .. } => from.max(*to),
            Shape::Sine {
                mean, amplitude, ..
            } => mean + amplitude,
            Shape::Steps(steps) => steps.iter().map(|s| s.0).fold(0.0, f64::max),
            Shape::Stages { start, stages } => stages.iter().map(|s| s.1).fold(*start, f64::max),
        }
    }

    /// Checks the shape's invariants: levels finite, non-negative and at
    /// most [`MAX_LEVEL`] (a `Constant` may also be infinite, meaning
    /// "unlimited"), positive ramp and sine periods, a sine that never goes
    /// negative, non-empty steps and stages, steps of positive length.
    pub fn validate(&self) -> Result<(), ShapeError> {
        match self {
            Shape::Constant(level) => {
                if *level == f64::INFINITY {
                    Ok(())
                } else {
                    check_level("level", *level)
                }
            }
            Shape::Linear { from, to, over } => {
                check_level("linear start level", *from)?;
                check_level("linear end level", *to)?;
                if over.is_zero() {
                    return Err(ShapeError("linear ramp needs a positive duration".into()));
                }
                Ok(())
            }
            Shape::Sine {
                mean,
                amplitude,
                period,
                phase,
            } => {
                check_level("sine mean", *mean)?;
                check_level("sine amplitude", *amplitude)?;
                if *mean <= 0.0 {
                    return Err(ShapeError("sine mean must be positive".into()));
                }
                if amplitude > mean {
                    return Err(ShapeError(format!(
                        "sine amplitude {amplitude} is larger than the mean {mean} \
                         (the level would go negative)"
                    )));
                }
                if period.is_zero() {
                    return Err(ShapeError("sine period must be positive".into()));
                }
                if !phase.is_finite() || !(0.0..1.0).contains(phase) {
                    return Err(ShapeError(format!(
                        "sine phase {phase} is not a fraction of the period in [0, 1)"
                    )));
                }
                Ok(())
            }
            Shape::Steps(steps) => {
                if steps.is_empty() {
                    return Err(ShapeError("steps: no steps".into()));
                }
                for (i, &(level, len)) in steps.iter().enumerate() {
                    check_level(&format!("step {}", i + 1), level)?;
                    if len.is_zero() {
                        return Err(ShapeError(format!("step {} has zero duration", i + 1)));
                    }
                }
                Ok(())
            }
            Shape::Stages { start, stages } => {
                check_level("stages start level", *start)?;
                if stages.is_empty() {
                    return Err(ShapeError("stages: no stages".into()));
                }
                for (i, &(_, level)) in stages.iter().enumerate() {
                    check_level(&format!("stage {}", i + 1), level)?;
                }
                Ok(())
            }
        }
    }
}

fn check_level(what: &str, level: f64) -> Result<(), ShapeError> {
    if !level.is_finite() {
        return Err(ShapeError(format!("{what}: {level} is not a finite level")));
    }
    if level < 0.0 {
        return Err(ShapeError(format!("{what}: {level} is negative")));
    }
    if level > MAX_LEVEL {
        return Err(ShapeError(format!(
            "{what}: {level} is too large (at most {MAX_LEVEL})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn levels_over_time() {
        let linear = Shape::Linear {
            from: 100.0,
            to: 500.0,
            over: s(10.0),
        };
        let sine = Shape::Sine {
            mean: 100.0,
            amplitude: 50.0,
            period: s(4.0),
            phase: 0.0,
        };
        let peak = Shape::Sine {
            mean: 100.0,
            amplitude: 50.0,
            period: s(4.0),
            phase: 0.25,
        };
        let steps = Shape::Steps(vec![(10.0, s(1.0)), (20.0, s(2.0))]);
        let stages = Shape::Stages {
            start: 0.0,
            stages: vec![(s(10.0), 100.0), (s(0.0), 50.0), (s(10.0), 0.0)],
        };
        let cases: &[(&Shape, f64, f64)] = &[
            (&Shape::Constant(7.0), 0.0, 7.0),
            (&Shape::Constant(7.0), 1e6, 7.0),
            (&linear, 0.0, 100.0),
            (&linear, 5.0, 300.0),
            (&linear, 10.0, 500.0),
            (&linear, 1e5, 500.0),
            (&sine, 0.0, 100.0),
            (&sine, 1.0, 150.0),
            (&sine, 2.0, 100.0),
            (&sine, 3.0, 50.0),
            (&peak, 0.0, 150.0),
            (&steps, 0.0, 10.0),
            (&steps, 0.999, 10.0),
            (&steps, 1.0, 20.0),
            (&steps, 2.999, 20.0),
            (&steps, 3.0, 0.0),
            (&stages, 0.0, 0.0),
            (&stages, 5.0, 50.0),
            (&stages, 9.999_999, 99.9999),
            (&stages, 10.0, 50.0),
            (&stages, 15.0, 25.0),
            (&stages, 20.0, 0.0),
            (&stages, 30.0, 0.0),
        ];
        for (shape, t, want) in cases {
            let got = shape.level(s(*t));
            assert!(
                (got - want).abs() < 1e-3,
                "{shape:?} at {t}s: {got} != {want}"
            );
        }
    }

    #[test]
    fn ends_and_peaks() {
        assert_eq!(Shape::Constant(1.0).end(), None);
        assert_eq!(
            Shape::Steps(vec![(1.0, s(1.0)), (2.0, s(2.5))]).end(),
            Some(s(3.5))
        );
        let stages = Shape::Stages {
            start: 5.0,
            stages: vec![(s(30.0), 100.0), (s(60.0), 1000.0), (s(30.0), 0.0)],
        };
        assert_eq!(stages.end(), Some(s(120.0)));
        assert!(close(stages.peak(), 1000.0));
        assert!(close(
            Shape::Sine {
                mean: 10.0,
                amplitude: 4.0,
                period: s(1.0),
                phase: 0.0
            }
            .peak(),
            14.0
        ));
    }

    #[test]
    fn validation() {
        let good = [
            Shape::Constant(0.0),
            Shape::Constant(f64::INFINITY),
            Shape::Constant(MAX_LEVEL),
            Shape::Sine {
                mean: 1.0,
                amplitude: 1.0,
                period: s(1.0),
                phase: 0.75,
            },
            Shape::Stages {
                start: 0.0,
                stages: vec![(Duration::ZERO, 5.0)],
            },
        ];
        for shape in good {
            assert_eq!(shape.validate(), Ok(()), "{shape:?}");
        }
        let bad = [
            (Shape::Constant(-1.0), "negative"),
            (Shape::Constant(f64::NAN), "not a finite"),
            (Shape::Constant(2e12), "too large"),
            (
                Shape::Linear {
                    from: 1.0,
                    to: 2.0,
                    over: Duration::ZERO,
                },
                "positive duration",
            ),
            (
                Shape::Linear {
                    from: f64::INFINITY,
                    to: 2.0,
                    over: s(1.0),
                },
                "not a finite",
            ),
            (
                Shape::Sine {
                    mean: 1.0,
                    amplitude: 2.0,
                    period: s(1.0),
                    phase: 0.0,
                },
                "larger than the mean",
            ),
            (
                Shape::Sine {
                    mean: 0.0,
                    amplitude: 0.0,
                    period: s(1.0),
                    phase: 0.0,
                },
                "mean must be positive",
            ),
            (
                Shape::Sine {
                    mean: 1.0,
                    amplitude: 0.0,
                    period: Duration::ZERO,
                    phase: 0.0,
                },
                "period",
            ),
            (
                Shape::Sine {
                    mean: 1.0,
                    amplitude: 0.0,
                    period: s(1.0),
                    phase: 1.0,
                },
                "phase",
            ),
            (Shape::Steps(vec![]), "no steps"),
            (Shape::Steps(vec![(1.0, Duration::ZERO)]), "zero duration"),
            (
                Shape::Stages {
                    start: 0.0,
                    stages: vec![],
                },
                "no stages",
            ),
            (
                Shape::Stages {
                    start: 0.0,
                    stages: vec![(s(1.0), -3.0)],
                },
                "stage 1",
            ),
        ];
        for (shape, want) in bad {
            let err = shape.validate().expect_err(want).to_string();
            assert!(err.contains(want), "{shape:?}: {err}");
        }
    }
}
