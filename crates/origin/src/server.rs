//! The server: accept loop, per-connection protocol choice, the admin API,
//! and the hyper service used for HTTP/2, the admin API and any HTTP/1.1
//! request the fast path (`h1`) hands over.
//!
//! Shared state is one [`Shared`] per server. The current [`Simulation`] sits
//! behind a `RwLock<Arc<_>>` plus a generation counter: connections keep
//! their own `Arc` and only take the (uncontended) read lock when the
//! generation changes, so the request path reads one atomic and no lock.
//! Recipe changes (add_recipe, restart) are serialised by an async mutex and
//! compile on a blocking thread, so big bodies never stall serving.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::counters::Counters;
use crate::load::fetch_origins;
use crate::recipe::{parse_duration, parse_recipe, Recipe, RecipeError, MAX_BODY};
use crate::sim::{compile, CompiledRoute, Prepared, Simulation, Style, JSON, TEXT};
use crate::OriginError;

/// Largest recipe accepted by `POST /_admin/add_recipe`.
const MAX_RECIPE_BYTES: usize = MAX_BODY as usize + 1024 * 1024;
/// Time allowed for a TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time allowed for open connections to finish after shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

pub(crate) struct Shared {
    current: RwLock<Arc<Simulation>>,
    pub generation: AtomicU64,
    /// What `/_admin/restart` goes back to.
    initial: Recipe,
    style: Style,
    pub counters: Counters,
    admin: tokio::sync::Mutex<()>,
    pub h2c: bool,
    /// Serve HTTP/1.1 with hyper too (no fast path): for comparisons.
    pub hyper_only: bool,
}

impl Shared {
    pub fn new(
        initial: Recipe,
        style: Style,
        h2c: bool,
        hyper_only: bool,
    ) -> Result<Shared, OriginError> {
        let routes = compile(initial.clone(), style).map_err(OriginError::Config)?;
        Ok(Shared {
            current: RwLock::new(Arc::new(Simulation::new(routes))),
            generation: AtomicU64::new(0),
            initial,
            style,
            counters: Counters::new(),
            admin: tokio::sync::Mutex::new(()),
            h2c,
            hyper_only,
        })
    }

    /// The current simulation and its generation.
    pub fn snapshot(&self) -> (u64, Arc<Simulation>) {
        let g = self.generation.load(Ordering::Acquire);
        let sim = match self.current.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        (g, sim)
    }

    fn install(&self, sim: Simulation) {
        match self.current.write() {
            Ok(mut s) => *s = Arc::new(sim),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(sim),
        }
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Parses, fetches and compiles `json`, then merges it into the current
    /// simulation. On error nothing changes.
    pub async fn add_recipe(&self, json: &str) -> Result<(), RecipeError> {
        let mut recipe = parse_recipe(json)?;
        let _guard = self.admin.lock().await;
        fetch_origins(&mut recipe).await?;
        let routes = compile_blocking(recipe, Style::Recipe).await?;
        let (_, sim) = self.snapshot();
        self.install(sim.merged(routes));
        Ok(())
    }

    /// Goes back to the initial recipe, with stages timed from now.
    pub async fn restart(&self) -> Result<(), RecipeError> {
        let _guard = self.admin.lock().await;
        let routes = compile_blocking(self.initial.clone(), self.style).await?;
        self.install(Simulation::new(routes));
        Ok(())
    }
}

async fn compile_blocking(
    recipe: Recipe,
    style: Style,
) -> Result<Vec<Arc<CompiledRoute>>, RecipeError> {
    let to_err = |message: String| RecipeError::Field {
        field: "recipe".into(),
        message,
    };
    tokio::task::spawn_blocking(move || compile(recipe, style))
        .await
        .map_err(|e| to_err(e.to_string()))?
        .map_err(to_err)
}

/// Accepts connections until `shutdown` completes, then closes them.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), OriginError> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let shared = shared.clone();
                    let tls = tls.clone();
                    let mut stop = stop_rx.clone();
                    tokio::spawn(async move {
                        let _open = OpenGuard::new(&shared.counters);
                        tokio::select! {
                            _ = serve_conn(stream, peer, shared.clone(), tls) => {}
                            _ = stop.wait_for(|s| *s) => {}
                        }
                    });
                }
                // Out of file descriptors and the like: back off, keep serving.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let deadline = tokio::time::Instant::now() + DRAIN_TIMEOUT;
    while shared.counters.open.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

struct OpenGuard<'a>(&'a Counters);

impl<'a> OpenGuard<'a> {
    fn new(c: &'a Counters) -> Self {
        c.open.fetch_add(1, Ordering::Relaxed);
        c.accepted.fetch_add(1, Ordering::Relaxed);
        OpenGuard(c)
    }
}

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn serve_conn(
    stream: tokio::net::TcpStream,
    _peer: SocketAddr,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    match tls {
        None => {
            let h2c = shared.h2c;
            crate::h1::serve(stream, shared, h2c).await;
        }
        Some(acceptor) => {
            let Ok(Ok(stream)) =
                tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await
            else {
                return;
            };
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            if h2 {
                Box::pin(serve_hyper(stream, shared, Proto::H2)).await;
            } else {
                crate::h1::serve(stream, shared, false).await;
            }
        }
    }
}

/// Which protocols hyper may speak on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proto {
    H1,
    H2,
    /// HTTP/1.1 or HTTP/2 prior knowledge (h2c), detected from the preface.
    Auto,
}

pub(crate) async fn serve_hyper<S>(io: S, shared: Arc<Shared>, proto: Proto)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, req).await) }
    });
    let io = TokioIo::new(io);
    match proto {
        Proto::H1 => {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .serve_connection(io, svc)
                .await;
        }
        Proto::H2 => {
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .serve_connection(io, svc)
                .await;
        }
        Proto::Auto => {
            let mut b = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            b.http1().timer(TokioTimer::new());
            b.http2().timer(TokioTimer::new());
            let _ = b.serve_connection(io, svc).await;
        }
    }
}

fn to_response(p: &Prepared) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(p.body.clone()));
    *resp.status_mut() =
        http::StatusCode::from_u16(p.status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let h = resp.headers_mut();
    for (k, v) in &p.headers {
        h.append(k.clone(), v.clone());
    }
    resp
}

/// Where a request goes, decided from its path alone (shared with `h1`).
pub(crate) enum Target {
    Admin,
    Metrics,
    Simulated,
}

pub(crate) fn target(sim: &Simulation, path: &str) -> Target {
    if path == "/_admin" || path.starts_with("/_admin/") {
        Target::Admin
    } else if path == "/metrics" && !sim.has_exact(path) {
        Target::Metrics
    } else {
        Target::Simulated
    }
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (_, sim) = shared.snapshot();
    let path = req.uri().path().to_string();
    match target(&sim, &path) {
        Target::Admin => {
            let query = req.uri().query().unwrap_or("").to_string();
            let method = req.method().clone();
            let body = if method == Method::POST {
                match Limited::new(req.into_body(), MAX_RECIPE_BYTES)
                    .collect()
                    .await
                {
                    Ok(b) => b.to_bytes(),
                    Err(e) => {
                        return to_response(&Prepared::simple(
                            413,
                            TEXT,
                            format!("recipe too large or unreadable: {e}"),
                        ))
                    }
                }
            } else {
                Bytes::new()
            };
            to_response(&admin(shared, &method, &path, &query, &body).await)
        }
        Target::Metrics => to_response(&Prepared::simple(
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            shared.counters.prometheus(),
        )),
        Target::Simulated => {
            let method = req.method().clone();
            if method != Method::GET && method != Method::HEAD && method != Method::POST {
                shared.counters.record(404);
                return to_response(&Prepared::simple(404, TEXT, "not found"));
            }
            // Drain a request body so the connection stays reusable.
            let mut body = req.into_body();
            while let Some(frame) = body.frame().await {
                if frame.is_err() {
                    break;
                }
            }
            let (latency, answer) = sim.answer(&path);
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            let p = answer.get();
            shared.counters.record(p.status);
            to_response(p)
        }
    }
}

/// The admin API, OriginSimulator's endpoints plus `counts` and `metrics`.
pub(crate) async fn admin(
    shared: &Shared,
    method: &Method,
    path: &str,
    query: &str,
    body: &[u8],
) -> Prepared {
    let endpoint = path.trim_start_matches("/_admin").trim_end_matches('/');
    let get = method == Method::GET || method == Method::HEAD;
    match (get, method == Method::POST, endpoint) {
        (true, _, "/status") => Prepared::simple(200, TEXT, "ok!"),
        (true, _, "/current_recipe") => {
            let (_, sim) = shared.snapshot();
            let body = if sim.routes.is_empty() {
                serde_json::Value::String(
                    "Recipe not set, please POST a recipe to /_admin/add_recipe".into(),
                )
            } else {
                sim.recipes_json()
            };
            Prepared::simple(200, JSON, body.to_string())
        }
        (true, _, "/clear_current_count") => {
            shared.counters.clear();
            Prepared::simple(200, JSON, r#"{"cleared": "yes"}"#)
        }
        (true, _, "/current_count") => {
            Prepared::simple(200, JSON, shared.counters.current_count_json())
        }
        (_, true, "/add_recipe") => {
            let Ok(text) = std::str::from_utf8(body) else {
                return Prepared::simple(400, TEXT, "recipe: not UTF-8 text\n");
            };
            match shared.add_recipe(text).await {
                Ok(()) => {
                    let (_, sim) = shared.snapshot();
                    Prepared::simple(201, JSON, sim.recipes_json().to_string())
                }
                Err(e @ RecipeError::Origin { .. }) => {
                    Prepared::simple(502, TEXT, format!("{e}\n"))
                }
                Err(e) => Prepared::simple(400, TEXT, format!("{e}\n")),
            }
        }
        (true, _, "/restart") => match shared.restart().await {
            Ok(()) => Prepared::simple(200, TEXT, "ok!"),
            Err(e) => Prepared::simple(500, TEXT, format!("{e}\n")),
        },
        (true, _, "/routes") => Prepared::simple(200, TEXT, shared.snapshot().1.route_names()),
        (true, _, "/routes_status") => {
            Prepared::simple(200, TEXT, shared.snapshot().1.routes_status())
        }
        (true, _, "/counts") => {
            let bin = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("bin="))
                .unwrap_or("1s");
            match parse_duration(bin) {
                Ok(d) if !d.is_zero() => {
                    Prepared::simple(200, JSON, shared.counters.bins_json(d).to_string())
                }
                _ => Prepared::simple(
                    400,
                    TEXT,
                    format!(
                        "bin: bad duration {bin:?} (expected e.g. \"1s\", \"100ms\", \"1m\")\n"
                    ),
                ),
            }
        }
        (true, _, "/metrics") => Prepared::simple(
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            shared.counters.prometheus(),
        ),
        _ => Prepared::simple(404, TEXT, "not found"),
    }
}
