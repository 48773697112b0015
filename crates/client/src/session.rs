//! [`Session`]: one worker's side of the client. It owns at most one
//! HTTP/1.1 connection per host (reopened when closed) or handles on the
//! shared HTTP/2 connections, a reused read buffer, and the measurement of
//! the request in flight. [`Session::execute`] runs one request under the
//! whole-request timeout, follows redirects, and returns the [`Outcome`]:
//! status, bytes, phases, send lag and latency from the *intended* time.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use volley_results::{ErrorKind, Phases};

use crate::client::{Client, HostState, Inner as ClientInner};
use crate::dial::dial;
use crate::error::Failure;
use crate::h1::{self, BodySink, H1Conn, Head, ReadBuf};
use crate::h2::{self, Sender};
use crate::prepare::{Inner as Req, Prepared};
use crate::url::Scheme;

/// Connections a session keeps at once (one per host it talks to).
const MAX_SLOTS: usize = 16;

/// What happened to one request: the fields of a `volley_results::Record`
/// that the client knows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// HTTP status of the final response; 0 when none was read in full.
    pub code: u16,
    /// Response body bytes received (all of them, whatever `max_body`).
    pub bytes_in: u64,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// Phase breakdown, summed over a redirect chain.
    pub phases: Phases,
    /// Intended send time → the moment the session started the request.
    pub lag: Duration,
    /// Intended send time → last body byte (or the failure).
    pub latency: Duration,
    /// Error class; `None` on a success.
    pub error_kind: ErrorKind,
    /// Error text, vegeta style: `404 Not Found`, or
    /// `Get "http://…": dial tcp …: connect: connection refused`.
    pub error: Option<String>,
    /// Kept body (up to `max_body`, when bodies are kept).
    pub body: Bytes,
}

impl Outcome {
    /// A response with a status in 200..=399 and no error.
    pub fn is_success(&self) -> bool {
        self.error_kind == ErrorKind::None && (200..400).contains(&self.code)
    }
}

/// How far a request got, for timeout texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    Connecting,
    Sending,
    AwaitingHeaders,
    Body,
}

/// A connection-opening phase, timed while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Blocked,
    Dns,
    Connecting,
    Tls,
}

/// The request in flight: timings and progress, kept in the session so
/// that a timeout (which drops the request's future) still reports them.
pub(crate) struct Measure {
    pub phases: Phases,
    pub stage: Stage,
    pub t_written: Option<Instant>,
    pub t_first: Option<Instant>,
    pub t_end: Option<Instant>,
    pub code: u16,
    /// The opening phase under way, if any, and its start.
    open_phase: Option<(Phase, Instant)>,
    /// The request body went out at least once.
    sent: bool,
    /// The slot in use, dropped if the request times out.
    busy: Option<usize>,
    /// The hop in flight when it is a redirect (error texts name its URL).
    hop: Option<Prepared>,
}

impl Measure {
    fn new() -> Measure {
        Measure {
            phases: Phases::default(),
            stage: Stage::Connecting,
            t_written: None,
            t_first: None,
            t_end: None,
            code: 0,
            open_phase: None,
            sent: false,
            busy: None,
            hop: None,
        }
    }

    fn reset(&mut self) {
        *self = Measure::new();
    }

    /// Starts timing a connection-opening phase.
    pub fn begin(&mut self, phase: Phase) {
        self.open_phase = Some((phase, Instant::now()));
    }

    /// Ends the phase under way (a timeout ends it too), adding its time.
    pub fn end(&mut self) {
        if let Some((phase, t)) = self.open_phase.take() {
            let d = t.elapsed().as_nanos() as u64;
            match phase {
                Phase::Blocked => self.phases.blocked += d,
                Phase::Dns => {
                    self.phases.dns += d;
                    self.phases.blocked += d;
                }
                Phase::Connecting => self.phases.connecting += d,
                Phase::Tls => self.phases.tls_handshaking += d,
            }
        }
    }

    /// Adds the finished (or abandoned) hop's waiting and receiving times.
    fn account_hop(&mut self, now: Instant) {
        if let Some(w) = self.t_written.take() {
            self.sent = true;
            let first = self.t_first.take();
            let f = first.unwrap_or(now);
            self.phases.waiting += f.saturating_duration_since(w).as_nanos() as u64;
            if let Some(f) = first {
                let end = self.t_end.unwrap_or(now);
                self.phases.receiving += end.saturating_duration_since(f).as_nanos() as u64;
            }
        }
    }
}

enum Conn {
    H1(H1Conn),
    H2(Sender),
}

struct Slot {
    host: Arc<HostState>,
    conn: Conn,
}

/// One worker's connections and buffers. Not shared: each worker owns one.
pub struct Session {
    client: Client,
    slots: Vec<Slot>,
    rb: ReadBuf,
    sink: BodySink,
    m: Measure,
    /// The whole-request timeout, one timer reused from request to
    /// request. It is moved only when it fires: if the request in flight
    /// has time left then, it is set to that request's deadline. A timer
    /// per request would cost an insertion and a removal in tokio's wheel.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The last body handed out; an identical next body shares it instead
    /// of allocating (most targets answer the same bytes every time).
    last_body: Bytes,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("connections", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn new(client: Client) -> Session {
        let cfg = &client.inner.cfg;
        let sink = BodySink::new(cfg.keep_body, cfg.max_body);
        Session {
            client,
            slots: Vec::new(),
            rb: ReadBuf::new(),
            sink,
            m: Measure::new(),
            timer: None,
            last_body: Bytes::new(),
        }
    }

    /// Runs one request, whose schedule said it should start at
    /// `intended` (possibly in the past), and measures it. Never panics,
    /// never takes longer than the timeout (plus the wait for the timer).
    pub async fn execute(&mut self, req: &Prepared, intended: Instant) -> Outcome {
        let start = Instant::now();
        self.m.reset();
        self.sink.reset();
        let timeout = self.client.inner.cfg.timeout;
        let result = if timeout.is_zero() {
            self.run(req).await
        } else {
            let deadline = tokio::time::Instant::from_std(start + timeout);
            let mut timer = self
                .timer
                .take()
                .unwrap_or_else(|| Box::pin(tokio::time::sleep_until(deadline)));
            let finished = {
                let mut run = std::pin::pin!(self.run(req));
                std::future::poll_fn(|cx| {
                    if let Poll::Ready(r) = run.as_mut().poll(cx) {
                        return Poll::Ready(Some(r));
                    }
                    while timer.as_mut().poll(cx).is_ready() {
                        // Set for an earlier request: this one has time left.
                        if timer.deadline() >= deadline {
                            return Poll::Ready(None);
                        }
                        timer.as_mut().reset(deadline);
                    }
                    Poll::Pending
                })
                .await
            };
            self.timer = Some(timer);
            match finished {
                Some(r) => r,
                None => {
                    if let Some(i) = self.m.busy.take() {
                        if i < self.slots.len() {
                            self.slots.swap_remove(i);
                        }
                    }
                    Err(self.timeout_failure(req))
                }
            }
        };
        self.m.end();
        // A complete response already has its end time; read the clock only
        // when the request ended otherwise.
        let now = match (&result, self.m.t_end) {
            (Ok(_), Some(t)) => t,
            _ => Instant::now(),
        };
        self.m.account_hop(now);
        let m = &self.m;
        let end = match (&result, m.t_end) {
            (Ok(_), Some(t)) => t,
            _ => now,
        };
        let (code, error_kind, error, body) = match result {
            Ok(None) => (m.code, ErrorKind::None, None, self.take_body()),
            Ok(Some(status)) => (m.code, ErrorKind::Status, Some(status), self.take_body()),
            Err(f) => (0, f.kind, Some(f.msg), Bytes::new()),
        };
        Outcome {
            code,
            bytes_in: self.sink.total,
            bytes_out: if self.m.sent { req.body_len() } else { 0 },
            phases: self.m.phases,
            lag: start.saturating_duration_since(intended),
            latency: end.saturating_duration_since(intended),
            error_kind,
            error,
            body,
        }
    }

    fn take_body(&mut self) -> Bytes {
        match &mut self.sink.kept {
            Some(k) if !k.is_empty() => {
                if k[..] == self.last_body[..] {
                    k.clear();
                    return self.last_body.clone();
                }
                let body = std::mem::take(k).freeze();
                self.last_body = body.clone();
                body
            }
            _ => Bytes::new(),
        }
    }

    /// Go's wording for a `Client.Timeout`, by how far the request got.
    fn timeout_failure(&self, req: &Prepared) -> Failure {
        let msg = match self.m.stage {
            Stage::Connecting => "net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)",
            Stage::Sending | Stage::AwaitingHeaders => "net/http: request canceled (Client.Timeout exceeded while awaiting headers)",
            Stage::Body => "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
        };
        let r = self.m.hop.as_ref().unwrap_or(req);
        prefixed(&r.inner, Failure::new(ErrorKind::Timeout, msg))
    }

    /// The request and its redirects. `Ok(Some(status))` for a response
    /// whose status is an error.
    async fn run(&mut self, req: &Prepared) -> Result<Option<String>, Failure> {
        let redirects = self.client.inner.cfg.redirects;
        let mut next: Option<Prepared> = None;
        let mut hops = 0;
        loop {
            let r = next.as_ref().unwrap_or(req);
            let head = self
                .hop(&r.inner, redirects >= 0)
                .await
                .map_err(|f| prefixed(&r.inner, f))?;
            if redirects >= 0 && matches!(head.code, 301 | 302 | 303 | 307 | 308) {
                if let Some(loc) = head.location {
                    if hops >= redirects {
                        return Err(prefixed(
                            &r.inner,
                            Failure::new(
                                ErrorKind::Other,
                                format!("stopped after {redirects} redirects"),
                            ),
                        ));
                    }
                    hops += 1;
                    let new = redirect(&self.client, &r.inner, &loc, head.code).map_err(|e| {
                        prefixed(
                            &r.inner,
                            Failure::new(ErrorKind::Protocol, format!("redirect: {e}")),
                        )
                    })?;
                    self.sink.reset();
                    self.m.hop = Some(new.clone());
                    next = Some(new);
                    continue;
                }
            }
            return Ok(head.status);
        }
    }

    /// One request on a connection to its host, opened if needed; a
    /// request that fails before any response on a reused connection (the
    /// server closed it while idle) is retried once on a new one when it
    /// is idempotent, as Go does.
    async fn hop(&mut self, r: &Req, want_location: bool) -> Result<Head, Failure> {
        let Session {
            client,
            slots,
            rb,
            sink,
            m,
            ..
        } = self;
        let c: &ClientInner = &client.inner;
        let mut retried = false;
        loop {
            m.busy = None;
            m.t_written = None;
            m.t_first = None;
            m.t_end = None;
            let mut found = slots.iter().position(|s| Arc::ptr_eq(&s.host, &r.host));
            if let Some(i) = found {
                if matches!(&slots[i].conn, Conn::H2(s) if s.is_closed()) {
                    slots.swap_remove(i);
                    found = None;
                }
            }
            let (i, fresh) = match found {
                Some(i) => (i, false),
                None => {
                    let conn = open(c, &r.host, r, m).await?;
                    if slots.len() >= MAX_SLOTS {
                        slots.remove(0);
                    }
                    slots.push(Slot {
                        host: r.host.clone(),
                        conn,
                    });
                    (slots.len() - 1, true)
                }
            };
            m.busy = Some(i);
            let result = match &mut slots[i].conn {
                Conn::H1(conn) => {
                    let reused = !fresh && conn.requests > 0;
                    match h1::exchange(conn, rb, r, sink, m, want_location).await {
                        Ok((head, keep)) => Ok((head, keep)),
                        Err(e) => {
                            let idle_closed = e.before_response && reused;
                            Err((e.failure, idle_closed))
                        }
                    }
                }
                Conn::H2(sender) => match h2::exchange(sender, r, sink, m, want_location).await {
                    Ok(head) => Ok((head, true)),
                    Err((f, retry)) => Err((f, retry && !fresh)),
                },
            };
            m.busy = None;
            match result {
                Ok((head, keep)) => {
                    m.account_hop(m.t_end.unwrap_or_else(Instant::now));
                    if !keep {
                        slots.swap_remove(i);
                    }
                    return Ok(head);
                }
                Err((mut f, stale)) => {
                    slots.swap_remove(i);
                    if stale && !retried && r.idempotent {
                        retried = true;
                        sink.reset();
                        continue;
                    }
                    if stale && f.kind == ErrorKind::Eof {
                        f.msg = "http: server closed idle connection".into();
                    }
                    m.account_hop(Instant::now());
                    return Err(f);
                }
            }
        }
    }
}

/// `Get "http://host/": message`, as Go's `url.Error` reads.
fn prefixed(r: &Req, f: Failure) -> Failure {
    Failure {
        kind: f.kind,
        msg: format!("{} {:?}: {}", r.op, r.url_text, f.msg),
    }
}

/// Opens a connection for a request: HTTP/2 (shared per host) when ALPN or
/// `-h2c` allows, HTTP/1.1 otherwise.
async fn open(
    c: &ClientInner,
    host: &Arc<HostState>,
    r: &Req,
    m: &mut crate::session::Measure,
) -> Result<Conn, Failure> {
    let h2_wanted = match r.url.scheme {
        // Without keep-alive every request gets its own connection: HTTP/1.1.
        Scheme::Https => c.cfg.http2 && c.cfg.keepalive && !host.h1_only.load(Ordering::Relaxed),
        Scheme::Http => c.cfg.h2c,
    };
    if h2_wanted {
        m.begin(Phase::Blocked);
        let mut shared = host.h2.lock().await;
        m.end();
        if !host.h1_only.load(Ordering::Relaxed) {
            if let Some(s) = shared.as_ref() {
                if !s.is_closed() {
                    return Ok(Conn::H2(s.clone()));
                }
            }
            *shared = None;
            let d = dial(c, host, &r.url, true, m).await?;
            if r.url.scheme == Scheme::Http || d.h2 {
                let sender = h2::handshake(d.stream, d.guard).await?;
                *shared = Some(sender.clone());
                return Ok(Conn::H2(sender));
            }
            // ALPN chose HTTP/1.1: this host speaks it; stop queueing here.
            host.h1_only.store(true, Ordering::Relaxed);
            return Ok(Conn::H1(H1Conn {
                stream: d.stream,
                requests: 0,
                keep: d.keep && c.cfg.keepalive,
                absolute_form: d.absolute_form,
                _guard: d.guard,
            }));
        }
    }
    let d = dial(c, host, &r.url, false, m).await?;
    Ok(Conn::H1(H1Conn {
        stream: d.stream,
        requests: 0,
        keep: d.keep && c.cfg.keepalive,
        absolute_form: d.absolute_form,
        _guard: d.guard,
    }))
}

/// The next request of a redirect chain, as Go builds it: 301, 302 and 303
/// turn other methods than GET and HEAD into a GET without body; 307 and
/// 308 repeat the request. The `Host` override is dropped.
fn redirect(
    client: &Client,
    r: &Req,
    loc: &str,
    code: u16,
) -> Result<Prepared, crate::ClientError> {
    let url = r.url.join(loc)?;
    let text = url.to_text();
    let keep = matches!(code, 307 | 308) || r.method == "GET" || r.method == "HEAD";
    let (method, body) = if keep {
        (r.method.as_str(), r.body.clone())
    } else {
        ("GET", Bytes::new())
    };
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| {
            !k.eq_ignore_ascii_case("Host") && (keep || !k.eq_ignore_ascii_case("Content-Type"))
        })
        .cloned()
        .collect();
    client.prepare_url(url, method, &text, &headers, body)
}
