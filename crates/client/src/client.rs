//! [`Client`]: what all workers of an attack share — the validated
//! configuration, the TLS configurations, the DNS cache, proxy settings and
//! one [`HostState`] per scheme/host/port (connection limits and the shared
//! HTTP/2 connection). Cheap to clone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::Semaphore;

use crate::config::ClientConfig;
use crate::dns::Dns;
use crate::error::ClientError;
use crate::prepare::{self, Prepared, Shape};
use crate::session::Session;
use crate::tls::LazyTls;
use crate::url::{Scheme, Url};

/// The HTTP client of an attack. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("cfg", &self.inner.cfg)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub cfg: ClientConfig,
    pub tls: LazyTls,
    pub dns: Dns,
    pub connect_to: Vec<ConnectTo>,
    pub proxy: Proxy,
    hosts: Mutex<HashMap<(Scheme, String, u16), Arc<HostState>>>,
}

/// One `-connect-to` mapping, parsed.
pub(crate) struct ConnectTo {
    pub from_host: String,
    pub from_port: u16,
    pub to_host: String,
    pub to_port: u16,
}

/// State shared by all sessions for one scheme/host/port.
pub(crate) struct HostState {
    /// `-max-connections`.
    pub limit: Option<Arc<Semaphore>>,
    /// Open HTTP/1.1 connections (for the `-connections` idle limit).
    pub open: AtomicUsize,
    /// The shared HTTP/2 connection.
    pub h2: tokio::sync::Mutex<Option<crate::h2::Sender>>,
    /// ALPN answered `http/1.1`: stop queueing for an HTTP/2 connection.
    pub h1_only: AtomicBool,
    /// Round-robin position over `-connect-to` targets and DNS answers.
    pub rr: AtomicUsize,
}

/// The proxies from the environment, as Go's `ProxyFromEnvironment` reads
/// them (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, upper or lower case).
/// Loopback targets never use a proxy.
#[derive(Default)]
pub(crate) struct Proxy {
    pub http: Option<Url>,
    pub https: Option<Url>,
    no_proxy: Vec<String>,
}

impl Proxy {
    fn from_env() -> Proxy {
        let var = |name: &str| {
            std::env::var(name)
                .or_else(|_| std::env::var(name.to_ascii_lowercase()))
                .ok()
                .filter(|v| !v.is_empty())
        };
        let parse = |v: String| {
            let v = if v.contains("://") {
                v
            } else {
                format!("http://{v}")
            };
            Url::parse(&v).ok()
        };
        Proxy {
            http: var("HTTP_PROXY").and_then(parse),
            https: var("HTTPS_PROXY").and_then(parse),
            no_proxy: var("NO_PROXY")
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_ascii_lowercase())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The proxy for a target, if any.
    pub fn for_url(&self, url: &Url) -> Option<&Url> {
        let proxy = match url.scheme {
            Scheme::Http => self.http.as_ref(),
            Scheme::Https => self.https.as_ref(),
        }?;
        let host = url.host.to_ascii_lowercase();
        if host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
        {
            return None;
        }
        for np in &self.no_proxy {
            if np == "*" {
                return None;
            }
            let np = np.split(':').next().unwrap_or(np);
            let np = np.strip_prefix('.').unwrap_or(np);
            if host == np || host.ends_with(&format!(".{np}")) {
                return None;
            }
        }
        Some(proxy)
    }
}

impl Client {
    /// A client for these settings; reads and checks certificates.
    pub fn new(cfg: ClientConfig) -> Result<Client, ClientError> {
        cfg.check_plain()?;
        let tls = LazyTls::new(&cfg.tls)?;
        let mut connect_to = Vec::with_capacity(cfg.connect_to.len());
        for (from, to) in &cfg.connect_to {
            let bad = |s: &str| ClientError::Config(format!("-connect-to: {s:?} is not host:port"));
            let (fh, fp) = crate::url::split_host_port(from).ok_or_else(|| bad(from))?;
            let (th, tp) = crate::url::split_host_port(to).ok_or_else(|| bad(to))?;
            connect_to.push(ConnectTo {
                from_host: fh.to_ascii_lowercase(),
                from_port: fp,
                to_host: th.to_string(),
                to_port: tp,
            });
        }
        let dns = Dns::new(cfg.dns_ttl, cfg.resolvers.clone());
        Ok(Client {
            inner: Arc::new(Inner {
                tls,
                dns,
                connect_to,
                proxy: Proxy::from_env(),
                hosts: Mutex::new(HashMap::new()),
                cfg,
            }),
        })
    }

    /// The settings this client runs with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// A worker's session: its own connections and read buffer.
    pub fn session(&self) -> Session {
        Session::new(self.clone())
    }

    /// Turns a target into a request ready to execute: parses the URL,
    /// checks method and headers, serialises the HTTP/1.1 bytes.
    pub fn prepare(
        &self,
        method: &str,
        url: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> Result<Prepared, ClientError> {
        let parsed = Url::parse(url)?;
        self.prepare_url(parsed, method, url, headers, body)
    }

    pub(crate) fn prepare_url(
        &self,
        parsed: Url,
        method: &str,
        url_text: &str,
        headers: &[(String, String)],
        body: Bytes,
    ) -> Result<Prepared, ClientError> {
        let host = self.host_state(&parsed);
        let shape = Shape {
            keepalive: self.inner.cfg.keepalive,
            chunked: self.inner.cfg.chunked,
            via_proxy: parsed.scheme == Scheme::Http && self.inner.proxy.for_url(&parsed).is_some(),
        };
        prepare::build(&shape, host, parsed, method, url_text, headers, body)
    }

    fn host_state(&self, url: &Url) -> Arc<HostState> {
        let key = (url.scheme, url.host.to_ascii_lowercase(), url.port);
        let mut hosts = self.inner.hosts.lock().unwrap_or_else(|e| e.into_inner());
        hosts
            .entry(key)
            .or_insert_with(|| {
                let max = self.inner.cfg.max_connections;
                Arc::new(HostState {
                    limit: (max > 0).then(|| Arc::new(Semaphore::new(max))),
                    open: AtomicUsize::new(0),
                    h2: tokio::sync::Mutex::new(None),
                    h1_only: AtomicBool::new(false),
                    rr: AtomicUsize::new(0),
                })
            })
            .clone()
    }
}
