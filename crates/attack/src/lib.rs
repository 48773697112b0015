//! volley-attack: the load engine.
//!
//! One worker loop serves every load model. A worker takes a [`Ticket`]
//! (intended send time + target) from its source, executes it on its own
//! client session and hands the [`Record`](volley_results::Record) to the
//! output. Only the source differs between models:
//!
//! - **open model** (`-rate`, any `Shape`): a pacer task releases tickets at
//!   the pacer's due times into a shared queue; workers start at `-workers`
//!   and grow up to `-max-workers` when tickets wait with no idle worker.
//!   Latency counts from the due time, so queueing shows (no coordinated
//!   omission);
//! - **closed model** (`-users`, k6 VUs): each user is a worker whose next
//!   ticket is due its think time after its previous response; a supervisor
//!   grows and shrinks the users along the users `Shape`.
//!
//! Layout:
//! - [`clock`]: the pacer's microsecond sleep (a timerfd);
//! - [`engine`]: settings, `run`, the pacer and user supervisor tasks;
//! - [`source`]: the two ticket sources behind the one worker loop;
//! - [`queue`]: the open model's ticket queue from the pacer to idle workers;
//! - [`jobs`]: targets prepared for the client, round-robin or lazy;
//! - [`output`]: the output thread that takes records off the hot path,
//!   feeds sinks and flushes them on a schedule;
//! - [`limits`]: raising the open-files limit at start.

pub mod clock;
pub mod engine;
pub mod jobs;
pub mod limits;
pub mod output;
pub mod queue;
pub mod source;

pub use engine::{run, Mode, RunSummary, Settings, Stopper};
pub use jobs::Jobs;
pub use output::{Output, OutputHandle};
pub use source::Ticket;
