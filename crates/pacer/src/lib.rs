//! volley-pacer: load shapes as pure functions of time, and the schedule of
//! hits along them.
//!
//! No I/O, no clocks, no async: every function here maps numbers to
//! numbers, so the attack engine's timing logic is table-tested without a
//! network or a timer.
//!
//! # Modules
//!
//! - [`shape`]: [`Shape`], a level (rate or users) over time: constant,
//!   linear ramp, sine, steps, k6-style stages.
//! - [`pacer`]: the [`Pacer`] trait and [`RatePacer`], which schedules hits
//!   along a rate shape: `hits(t)`, `due(n)`, vegeta's `pace(elapsed, sent)`.
//!   Rate 0 is the explicit [`RatePacer::unlimited`] pacer.
//! - [`spec`]: parsing and printing of `-rate`, `-shape` and `-users` values.
//! - [`duration`]: Go-syntax durations (`1m30s`), parsed and printed as Go does.
//!
//! # Shape grammar
//!
//! The same grammar serves `-shape` (levels are requests per second) and
//! `-users` (levels are users). A LEVEL is written like vegeta's `-rate`:
//! `N` or `N/DURATION` (`5000`, `5000/s`, `50/1s`, `100/1m`, `1/500ms`,
//! `0.5`); DURATION is Go syntax (`90s`, `1m30s`, `250ms`).
//!
//! | spec | shape |
//! |---|---|
//! | `LEVEL`, `constant:LEVEL`, `infinity` | [`Shape::Constant`]; a constant rate of `0` or `infinity` is unpaced |
//! | `linear:FROM..TO[:OVER]` | [`Shape::Linear`]: ramp FROM→TO over OVER (default: the attack `-duration`), then hold TO |
//! | `sine:MEAN,AMP,PERIOD[,PHASE]` | [`Shape::Sine`]: vegeta's sine; PHASE a fraction of the period or `meanup` (0), `peak`, `meandown`, `trough` |
//! | `steps:LEVELxDUR,...` | [`Shape::Steps`]: hold each level for its duration, then stop |
//! | `stages:[START,]DUR:TARGET,...` | [`Shape::Stages`]: k6 stages, linear from the previous level (START, default 0) to each TARGET, then stop |
//!
//! Examples:
//!
//! ```
//! use std::time::Duration;
//! use volley_pacer::Shape;
//! let minute = Some(Duration::from_secs(60));
//! for spec in [
//!     "1000",
//!     "1000/s",
//!     "50/1s",
//!     "infinity",
//!     "linear:100..5000",          // over the attack duration
//!     "linear:100..5000:60s",
//!     "linear:10/1s..0.5/1ms:2m",  // rates in N/duration form
//!     "sine:1000,500,1m",
//!     "sine:1000,500,1m,peak",
//!     "steps:1000x60s,2000x60s,3000x60s",
//!     "stages:30s:100,60s:1000,30s:0",
//!     "stages:50,30s:100,1m:100", // start at 50
//! ] {
//!     let shape = Shape::parse(spec, minute).unwrap();
//!     // Display prints the spec back, and it parses to the same shape.
//!     assert_eq!(shape.to_string().parse::<Shape>().unwrap(), shape);
//! }
//! ```
//!
//! # Scheduling
//!
//! ```
//! use std::time::Duration;
//! use volley_pacer::{Pacer, RatePacer, Shape};
//! let shape: Shape = "steps:10x1s,20x1s".parse().unwrap();
//! let pacer = RatePacer::new(shape).unwrap();
//! assert_eq!(pacer.due(10), Some(Duration::from_secs(1)));
//! assert_eq!(pacer.due(29), Some(Duration::from_millis(1950)));
//! assert_eq!(pacer.due(30), None); // 30 hits in all, then stop
//! let pace = pacer.pace(Duration::from_millis(500), 10);
//! assert_eq!((pace.wait, pace.stop), (Duration::from_millis(500), false));
//! ```

pub mod duration;
pub mod pacer;
pub mod shape;
pub mod spec;

pub use duration::{format_duration, parse_duration};
pub use pacer::{Pace, Pacer, RatePacer};
pub use shape::{Shape, ShapeError, MAX_LEVEL};
pub use spec::{format_level, parse_rate, parse_shape, ParseError};
