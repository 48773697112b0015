//! volley-origin: the origin simulator behind `volley origin`.
//!
//! It serves BBC OriginSimulator recipes unchanged (routes, stages, latency,
//! `origin` / `body` / `random_content`, gzip), OriginSimulator's admin API,
//! quick shapes without a recipe (a status, a latency, a fixed body), over
//! HTTP/1.1, HTTP/2 (ALPN over TLS, and h2c prior knowledge), TLS and mTLS,
//! and counts what it saw (`/_admin/current_count`, `/_admin/counts?bin=1s`,
//! Prometheus `/metrics`).
//!
//! # Flags of `volley origin` → [`OriginConfig`]
//!
//! | flag | maps to |
//! |---|---|
//! | `-addr host:port` (default `127.0.0.1:8080`) | [`bind`]`(addr)` → the listener given to [`run`] |
//! | `-recipe file.json` | [`load_recipe`]`(`[`RecipeSource::File`]`)` → `OriginConfig::recipe` |
//! | `-status 404` | `OriginConfig::quick` → [`QuickShape::status`] (default 200) |
//! | `-latency 100ms` or `100ms..200ms` | [`QuickShape::latency`] via [`Latency::parse`] |
//! | `-body hello` | [`QuickShape::body`] |
//! | `-length 4096` | [`QuickShape::length`]: a random a–z string of that length, generated once |
//! | `-random-content 256kb` | [`QuickShape::random_content`] via [`parse_size`] |
//! | `-cert c.pem -key k.pem` | `OriginConfig::tls` = [`TlsConfig`] `{ cert, key, client_ca: None }` |
//! | `-client-ca ca.pem` | [`TlsConfig::client_ca`]: require and verify client certificates (mTLS) |
//! | `-h2c` | `OriginConfig::h2c`: accept HTTP/2 prior knowledge alongside HTTP/1.1 on plain TCP |
//!
//! Any quick-shape flag makes `quick` `Some`; `-recipe` together with a quick
//! shape is an error ([`OriginError::Config`]). With neither, the server
//! serves OriginSimulator's default: a gzipped welcome page on `/*`, 200
//! after 100 ms. Recipe errors ([`RecipeError`]) are bad input (exit code 2).
//!
//! # Layout
//!
//! - `recipe`: the recipe schema, parsing with errors naming the field, limits.
//! - `load`: reading recipe files and fetching `origin` URLs once, bounded.
//! - `sim`: recipes compiled into precomputed responses; route and stage choice.
//! - `counters`: atomic counts per status and per 100 ms slot; Prometheus text.
//! - `server`: accept loop, shared state, admin API, the hyper service (HTTP/2,
//!   admin, anything unusual).
//! - `h1`: the HTTP/1.1 fast path writing precomputed bytes.
//! - `tls`: rustls server configuration, ALPN, client verification.
//!
//! # Performance notes
//!
//! Each request on the fast path reads one atomic (the recipe generation),
//! looks the path up in a hash map, and copies the precomputed response into
//! the connection's write buffer; counters are atomics. Latency is a tokio
//! timer per request, so 10,000 waiting connections cost only their buffers.
//! For one-core comparisons run it on a `current_thread` runtime.

mod counters;
mod h1;
mod load;
mod recipe;
mod server;
mod sim;
mod tls;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::json;

pub use counters::{Counts, SLOTS, TICK};
pub use load::{load_recipe, LoadedRecipe, RecipeSource, FETCH_TIMEOUT};
pub use recipe::{
    parse_duration, parse_recipe, parse_size, BodySource, Latency, Recipe, RecipeError,
    RouteRecipe, Stage, MAX_AT, MAX_BODY, MAX_LATENCY,
};
pub use tls::TlsConfig;

use recipe::{random_text, LOWER_ALPHABET};
use server::Shared;
use sim::Style;

/// Everything `volley origin` needs to start serving.
#[derive(Debug, Clone, Default)]
pub struct OriginConfig {
    /// An OriginSimulator recipe. `origin` URLs not fetched yet (see
    /// [`load_recipe`]) are fetched before serving starts.
    pub recipe: Option<Recipe>,
    /// A quick shape instead of a recipe.
    pub quick: Option<QuickShape>,
    /// Serve TLS (and mTLS with `client_ca`) instead of plain TCP.
    pub tls: Option<TlsConfig>,
    /// Accept h2c (HTTP/2 prior knowledge) alongside HTTP/1.1 on plain TCP.
    pub h2c: bool,
    /// Serve HTTP/1.1 with hyper instead of the fast path (benchmarks only).
    pub hyper_only: bool,
}

/// One response shape on every path, without a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuickShape {
    /// Response status, 200..=599.
    pub status: u16,
    pub latency: Latency,
    /// A fixed body, served on any status.
    pub body: Option<String>,
    /// A random a–z string of this length, generated once (seed 001's Go server).
    pub length: Option<usize>,
    /// Random text of this many bytes.
    pub random_content: Option<u64>,
}

impl Default for QuickShape {
    fn default() -> Self {
        QuickShape {
            status: 200,
            latency: Latency::Zero,
            body: None,
            length: None,
            random_content: None,
        }
    }
}

impl QuickShape {
    /// The shape as a one-route recipe on `/*`.
    fn to_recipe(&self) -> Result<Recipe, OriginError> {
        let bad = |m: String| OriginError::Config(m);
        if !(200..=599).contains(&self.status) {
            return Err(bad(format!(
                "-status {}: expected an HTTP status 200..599",
                self.status
            )));
        }
        if self.latency.max() > MAX_LATENCY {
            return Err(bad(format!(
                "-latency: above the limit of {}s",
                MAX_LATENCY.as_secs()
            )));
        }
        let given = [
            self.body.is_some(),
            self.length.is_some(),
            self.random_content.is_some(),
        ];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(bad(
                "give only one of -body, -length and -random-content".into()
            ));
        }
        let source = if let Some(b) = &self.body {
            if b.len() as u64 > MAX_BODY {
                return Err(bad("-body: above the 100 MB limit".into()));
            }
            BodySource::Fixed(Bytes::copy_from_slice(b.as_bytes()))
        } else if let Some(n) = self.length {
            if n as u64 > MAX_BODY {
                return Err(bad(format!("-length {n}: above the 100 MB limit")));
            }
            BodySource::Fixed(random_text(n, LOWER_ALPHABET).into())
        } else if let Some(n) = self.random_content {
            if n > MAX_BODY {
                return Err(bad(format!("-random-content {n}: above the 100 MB limit")));
            }
            BodySource::RandomContent(n)
        } else {
            BodySource::Empty
        };
        let latency = match self.latency {
            Latency::Zero => json!(0),
            l => json!(match l {
                Latency::Range(lo, hi) => format!("{}ms..{}ms", lo.as_millis(), hi.as_millis()),
                _ => format!("{}ms", l.max().as_millis()),
            }),
        };
        let stage = Stage {
            at: std::time::Duration::ZERO,
            status: self.status,
            latency: self.latency,
        };
        Ok(Recipe {
            routes: vec![RouteRecipe {
                route: "/*".into(),
                source,
                headers: Vec::new(),
                stages: vec![stage],
                raw: json!({
                    "route": "/*",
                    "stages": [{"at": 0, "status": self.status, "latency": latency}],
                    "quick": {
                        "status": self.status,
                        "body": self.body,
                        "length": self.length,
                        "random_content": self.random_content,
                    },
                }),
            }],
            is_list: false,
        })
    }
}

/// Errors starting or running the simulator.
#[derive(Debug, thiserror::Error)]
pub enum OriginError {
    /// Contradictory or out-of-range settings.
    #[error("{0}")]
    Config(String),
    /// The recipe is malformed, or an `origin` could not be fetched.
    #[error(transparent)]
    Recipe(#[from] RecipeError),
    /// Certificates, keys or the client CA could not be used.
    #[error("TLS: {0}")]
    Tls(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A simulator ready to serve: recipe loaded, origins fetched, TLS set up.
pub struct Origin {
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

impl Origin {
    /// Validates `cfg`, fetches origins, compiles responses.
    pub async fn new(cfg: OriginConfig) -> Result<Origin, OriginError> {
        let tls = match &cfg.tls {
            Some(t) => Some(tokio_rustls::TlsAcceptor::from(tls::server_config(t)?)),
            None => None,
        };
        let (recipe, style) = match (cfg.recipe, &cfg.quick) {
            (Some(_), Some(_)) => {
                return Err(OriginError::Config(
                    "give either a recipe or a quick shape (-status, -latency, -body, -length, -random-content), not both".into(),
                ))
            }
            (Some(mut r), None) => {
                load::fetch_origins(&mut r).await?;
                (r, Style::Recipe)
            }
            (None, Some(q)) => (q.to_recipe()?, Style::Quick),
            (None, None) => (sim::default_recipe(), Style::Recipe),
        };
        let (h2c, hyper_only) = (cfg.h2c, cfg.hyper_only);
        let shared =
            tokio::task::spawn_blocking(move || Shared::new(recipe, style, h2c, hyper_only))
                .await
                .map_err(|e| OriginError::Config(e.to_string()))??;
        Ok(Origin {
            shared: Arc::new(shared),
            tls,
        })
    }

    /// Requests answered so far, by status.
    pub fn counts(&self) -> Counts {
        self.shared.counters.counts()
    }

    /// Serves on `listener` until `shutdown` completes.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), OriginError> {
        server::serve(listener, self.shared, self.tls, shutdown).await
    }
}

/// Binds a listener with a deep accept backlog (clamped by the kernel's
/// `somaxconn`), so thousands of clients connecting at once are not left
/// waiting for SYN retransmits. Use it for `-addr`.
pub fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(65_535)
}

/// Serves `cfg` on `listener` until `shutdown` completes.
pub async fn run(
    listener: tokio::net::TcpListener,
    cfg: OriginConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<(), OriginError> {
    Origin::new(cfg).await?.serve(listener, shutdown).await
}

/// Starts a simulator on 127.0.0.1 with a free port, in the background.
pub async fn spawn(cfg: OriginConfig) -> Result<OriginHandle, OriginError> {
    let tls = cfg.tls.is_some();
    let origin = Origin::new(cfg).await?;
    let listener = bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let addr = listener.local_addr()?;
    let shared = origin.shared.clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(origin.serve(listener, async move {
        let _ = stopped.await;
    }));
    Ok(OriginHandle {
        addr,
        tls,
        shared,
        stop: Some(stop),
        task,
    })
}

/// A simulator running in the background (see [`spawn`]); dropping it stops it.
pub struct OriginHandle {
    addr: SocketAddr,
    tls: bool,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), OriginError>>,
}

impl OriginHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:port` or `https://…` with TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Requests answered so far, by status (admin API excluded).
    pub fn counts(&self) -> Counts {
        self.shared.counters.counts()
    }

    /// Stops accepting, closes connections, waits for the server to end.
    pub async fn shutdown(mut self) -> Result<(), OriginError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(r) => r,
            Err(e) => Err(OriginError::Config(format!("server task failed: {e}"))),
        }
    }
}
