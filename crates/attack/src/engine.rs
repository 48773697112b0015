//! The engine: settings, the pacer task (open model), the user supervisor
//! (closed model) and the one worker loop both feed.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tokio::task::JoinSet;
use volley_client::{Client, Outcome};
use volley_pacer::{Pacer, Shape};
use volley_results::Record;

use crate::clock::{Clock, Window};
use crate::jobs::Jobs;
use crate::output::OutputHandle;
use crate::queue::TicketQueue;
use crate::source::{SharedQueue, Source, Ticket, UserClock, Users};

/// Workers the open model may add per pacer wake-up (at most about a
/// thousand a second, see [`clock`](crate::clock)) when tickets are waiting
/// for a free worker.
pub const GROWTH_PER_TICK: usize = 8;

/// How load is generated.
pub enum Mode {
    /// Arrivals at the pacer's times, whatever the target does.
    Open {
        pacer: Arc<dyn Pacer + Send + Sync>,
        /// Workers started up front.
        workers: usize,
        /// Upper bound on workers (each holds one HTTP/1.1 connection).
        max_workers: usize,
        /// How long due requests may be held to leave together.
        window: Window,
    },
    /// A number of users (k6 VUs), each sending its next request `think`
    /// after the previous response.
    Closed { users: Shape, think: Duration },
}

impl std::fmt::Debug for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Open {
                workers,
                max_workers,
                window,
                ..
            } => write!(
                f,
                "Open {{ workers: {workers}, max_workers: {max_workers}, window: {window:?} }}"
            ),
            Mode::Closed { users, think } => {
                write!(f, "Closed {{ users: {users:?}, think: {think:?} }}")
            }
        }
    }
}

/// Validated attack settings.
#[derive(Debug)]
pub struct Settings {
    /// Attack name recorded in every result.
    pub name: Arc<str>,
    pub mode: Mode,
    /// Attack length; `None` runs until stopped (or the shape or `-n` ends).
    pub duration: Option<Duration>,
    /// Stop after this many requests (`-n`).
    pub max_requests: Option<u64>,
}

/// When an attack ends, whatever its model.
#[derive(Debug, Clone, Copy)]
struct Limits {
    duration: Option<Duration>,
    max_requests: Option<u64>,
}

/// What happened, for the report's metadata and the exit code.
#[derive(Debug, Clone)]
pub struct RunSummary {
    pub started: SystemTime,
    pub sent: u64,
    pub peak_workers: usize,
    pub elapsed: Duration,
    /// Set when targets could not be read or prepared mid-attack.
    pub jobs_error: Option<String>,
}

/// Stops an attack from anywhere (signal handler, failing output).
#[derive(Clone, Debug)]
pub struct Stopper {
    flag: Arc<AtomicBool>,
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Stopper {
    fn default() -> Self {
        Stopper {
            flag: Arc::new(AtomicBool::new(false)),
            tx: Arc::new(watch::channel(false).0),
        }
    }
}

impl Stopper {
    /// Asks the attack to stop sending; in-flight requests complete.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::Release);
        self.tx.send_replace(true);
    }

    /// Whether `stop` was called.
    pub fn stopped(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Resolves once `stop` is called.
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }
}

/// What every worker shares: where records go and how to stamp them.
struct Ctx {
    out: OutputHandle,
    attack: Arc<str>,
    empty: Arc<str>,
    start: Instant,
    start_unix_ns: i64,
    stopper: Stopper,
    workers: AtomicUsize,
    peak: AtomicUsize,
    sent: AtomicU64,
}

impl Ctx {
    fn record(&self, t: &Ticket, o: Outcome) -> Record {
        let offset = t.intended.saturating_duration_since(self.start).as_nanos() as i64;
        Record {
            attack: self.attack.clone(),
            seq: t.seq,
            timestamp: self.start_unix_ns + offset,
            latency: o.latency.as_nanos() as u64,
            lag: o.lag.as_nanos() as u64,
            phases: o.phases,
            bytes_in: o.bytes_in,
            bytes_out: o.bytes_out,
            code: o.code,
            error_kind: o.error_kind,
            error: match o.error {
                None => self.empty.clone(),
                Some(e) => Arc::from(e),
            },
            method: t.job.method.clone(),
            url: t.job.url.clone(),
            body: o.body,
        }
    }

    fn worker_started(&self) {
        let n = self.workers.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(n, Ordering::Relaxed);
    }
}

/// The one worker loop, for every mode.
async fn worker(mut source: Source, client: Client, ctx: Arc<Ctx>) {
    let mut session = client.session();
    ctx.worker_started();
    while let Some(ticket) = source.next().await {
        if ctx.stopper.stopped() && matches!(source, Source::Shared(_)) {
            // Stopped: tickets still queued are never sent.
            continue;
        }
        let outcome = session.execute(&ticket.job.prepared, ticket.intended).await;
        source.done(ticket.intended + outcome.latency);
        ctx.sent.fetch_add(1, Ordering::Relaxed);
        ctx.out.push(ctx.record(&ticket, outcome));
    }
    ctx.workers.fetch_sub(1, Ordering::Relaxed);
}

/// Runs an attack to its end (duration, shape end, `-n`, exhausted lazy
/// targets, or `stopper`) and waits for in-flight requests.
pub async fn run(
    settings: Settings,
    jobs: Arc<Jobs>,
    client: Client,
    out: OutputHandle,
    stopper: Stopper,
) -> RunSummary {
    let started = SystemTime::now();
    let start = Instant::now();
    let ctx = Arc::new(Ctx {
        out,
        attack: settings.name.clone(),
        empty: Arc::from(""),
        start,
        start_unix_ns: started
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0),
        stopper: stopper.clone(),
        workers: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        sent: AtomicU64::new(0),
    });
    // Keep an early tokio timer pending. Each request arms a timeout; when
    // it is the earliest timer the runtime has, tokio wakes its driver (an
    // eventfd write, a syscall per request) to re-plan its sleep. With this
    // 100 ms anchor always earlier, arming a timeout costs no syscall.
    let anchor = tokio::spawn(async {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let limits = Limits {
        duration: settings.duration,
        max_requests: settings.max_requests,
    };
    let (sent, jobs_error) = match settings.mode {
        Mode::Open {
            pacer,
            workers,
            max_workers,
            window,
        } => {
            let pool = Pool {
                workers,
                max_workers,
            };
            open_model(&*pacer, pool, window, limits, jobs, client, ctx.clone()).await
        }
        Mode::Closed { ref users, think } => {
            closed_model(users, think, limits, jobs, client, ctx.clone()).await
        }
    };
    anchor.abort();
    RunSummary {
        started,
        sent,
        peak_workers: ctx.peak.load(Ordering::Relaxed),
        elapsed: start.elapsed(),
        jobs_error,
    }
}

/// The open model's workers: how many to start, how many at most.
#[derive(Debug, Clone, Copy)]
struct Pool {
    workers: usize,
    max_workers: usize,
}

async fn open_model(
    pacer: &(dyn Pacer + Send + Sync),
    pool: Pool,
    window: Window,
    settings: Limits,
    jobs: Arc<Jobs>,
    client: Client,
    ctx: Arc<Ctx>,
) -> (u64, Option<String>) {
    let max_workers = pool.max_workers.max(1);
    let queue = TicketQueue::new(1 << 16);
    let mut set = JoinSet::new();
    for _ in 0..pool.workers.clamp(1, max_workers) {
        set.spawn(worker(
            Source::Shared(SharedQueue::join(&queue)),
            client.clone(),
            ctx.clone(),
        ));
    }
    let stopper = &ctx.stopper;
    let start = ctx.start;
    let mut clock = Clock::with_window(window);
    let mut prev_due = Duration::ZERO;
    let mut sent = 0u64;
    let mut error = None;
    // The clock as of the last look: tickets due by then go out without
    // reading it again (one read per wake-up, not one per ticket).
    let mut now = Instant::now();
    loop {
        if settings.max_requests.is_some_and(|m| sent >= m) {
            break;
        }
        let Some(due) = pacer.due(sent) else { break };
        if settings.duration.is_some_and(|d| due >= d) {
            break;
        }
        let gap = due.saturating_sub(prev_due);
        prev_due = due;
        let at = start + due;
        if at > now {
            now = Instant::now();
        }
        if at > now {
            now = tokio::select! {
                woke = clock.sleep_until(at, gap) => woke,
                _ = stopper.wait() => break,
            };
            // Workers ran while the pacer slept: tickets still queued now
            // waited a whole wake-up with no free worker, so add workers — a
            // few per wake-up, so that a hiccup does not open a connection per
            // queued ticket (the storm that collapses vegeta at high rates).
            let backlog = queue.backlog();
            let room = max_workers.saturating_sub(set.len());
            for _ in 0..backlog.min(GROWTH_PER_TICK).min(room) {
                set.spawn(worker(
                    Source::Shared(SharedQueue::join(&queue)),
                    client.clone(),
                    ctx.clone(),
                ));
            }
            while set.try_join_next().is_some() {}
        }
        if stopper.stopped() {
            break;
        }
        let job = match jobs.next().await {
            Ok(Some(j)) => j,
            Ok(None) => break,
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        };
        queue
            .push(Ticket {
                seq: sent,
                intended: at,
                job,
            })
            .await;
        sent += 1;
    }
    queue.close();
    while set.join_next().await.is_some() {}
    debug_assert!(ctx.sent.load(Ordering::Relaxed) <= sent);
    (ctx.sent.load(Ordering::Relaxed), error)
}

async fn closed_model(
    shape: &Shape,
    think: Duration,
    settings: Limits,
    jobs: Arc<Jobs>,
    client: Client,
    ctx: Arc<Ctx>,
) -> (u64, Option<String>) {
    let start = ctx.start;
    let end = match (settings.duration, shape.end()) {
        (Some(d), Some(e)) => Some(d.min(e)),
        (d, e) => d.or(e),
    };
    let users = Arc::new(Users {
        jobs,
        seq: AtomicU64::new(0),
        allowed: AtomicUsize::new(0),
        active: AtomicUsize::new(0),
        max_requests: settings.max_requests,
        deadline: end.map(|e| start + e),
        stopper: ctx.stopper.clone(),
        exhausted: AtomicBool::new(false),
        error: std::sync::Mutex::new(None),
    });
    let mut set = JoinSet::new();
    let mut spawned = 0usize;
    loop {
        let t = start.elapsed();
        if ctx.stopper.stopped()
            || users.exhausted.load(Ordering::Relaxed)
            || end.is_some_and(|e| t >= e)
            || settings
                .max_requests
                .is_some_and(|m| users.seq.load(Ordering::Relaxed) >= m)
        {
            break;
        }
        let target = shape.level(t).round().max(0.0) as usize;
        users.allowed.store(target, Ordering::Relaxed);
        while spawned < target {
            let clock = UserClock {
                id: spawned,
                think,
                next_at: Instant::now(),
                users: users.clone(),
            };
            set.spawn(worker(Source::User(clock), client.clone(), ctx.clone()));
            spawned += 1;
        }
        spawned = spawned.min(target);
        while set.try_join_next().is_some() {}
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            _ = ctx.stopper.wait() => break,
        }
    }
    // Users stop at their next ticket (at most one think time from now).
    users.allowed.store(0, Ordering::Relaxed);
    while set.join_next().await.is_some() {}
    let error = users.error.lock().unwrap_or_else(|e| e.into_inner()).take();
    (ctx.sent.load(Ordering::Relaxed), error)
}
