//! Client settings: vegeta's attack flags that shape the HTTP client, as one
//! value the CLI fills and [`ClientConfig::validate`] checks before the first
//! request (certificates and keys are read and parsed there).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::ClientError;

/// TLS settings (`-cert`, `-key`, `-root-certs`, `-insecure`,
/// `-session-tickets`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// Client certificate chain (PEM) for mTLS.
    pub cert: Option<PathBuf>,
    /// Client private key (PEM). When absent and `cert` is given, the key is
    /// looked for in the certificate file, as vegeta does.
    pub key: Option<PathBuf>,
    /// Root certificates (PEM). When non-empty they *replace* the system
    /// roots, as vegeta's `-root-certs` does.
    pub root_certs: Vec<PathBuf>,
    /// Skip server certificate verification (chain and name); handshake
    /// signatures are still checked.
    pub insecure: bool,
    /// Resume TLS sessions (tickets or ids) on new connections.
    pub session_tickets: bool,
}

/// Everything the client needs to know; defaults are vegeta's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Whole-request timeout, connection included (`-timeout`, 30s); zero
    /// means none, as in vegeta.
    pub timeout: Duration,
    /// Body bytes kept per response (`-max-body`): `None` keeps all
    /// (vegeta's -1), `Some(0)` keeps nothing. Bytes are counted in full
    /// either way.
    pub max_body: Option<u64>,
    /// Keep response bodies at all (up to `max_body`).
    pub keep_body: bool,
    /// Reuse connections (`-keepalive`, true). When false every request
    /// carries `Connection: close` and gets a fresh connection.
    pub keepalive: bool,
    /// Offer HTTP/2 by ALPN over TLS (`-http2`, true); not with
    /// `keepalive` off, which asks for a connection per request.
    pub http2: bool,
    /// HTTP/2 with prior knowledge over plain TCP (`-h2c`).
    pub h2c: bool,
    /// TLS settings.
    pub tls: TlsOptions,
    /// Redirects to follow (`-redirects`, 10); -1 records the 3xx response
    /// without following it.
    pub redirects: i32,
    /// Send request bodies with `Transfer-Encoding: chunked` (`-chunked`).
    pub chunked: bool,
    /// Local IP address to bind before connecting (`-laddr`).
    pub laddr: Option<IpAddr>,
    /// Connect to this unix socket whatever the URL's host (`-unix-socket`).
    pub unix_socket: Option<PathBuf>,
    /// `host:port` → `addr:port` mappings (`-connect-to`); several mappings
    /// of one source are used round-robin.
    pub connect_to: Vec<(String, String)>,
    /// DNS cache lifetime (`-dns-ttl`): `None` caches forever (vegeta's
    /// default `0`), `Some(Duration::ZERO)` disables the cache (vegeta's
    /// `-1`), otherwise entries live this long.
    pub dns_ttl: Option<Duration>,
    /// DNS servers to ask over UDP instead of the system resolver
    /// (`-resolvers`).
    pub resolvers: Vec<SocketAddr>,
    /// Headers sent on proxy `CONNECT` requests (`-proxy-header`); the proxy
    /// itself comes from `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY` as in Go.
    pub proxy_header: Vec<(String, String)>,
    /// Maximum connections per host, 0 = unlimited (`-max-connections`).
    pub max_connections: usize,
    /// Maximum idle (kept-alive) connections per host (`-connections`,
    /// 10000); connections beyond it are closed after their response.
    pub connections: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            timeout: Duration::from_secs(30),
            max_body: None,
            keep_body: false,
            keepalive: true,
            http2: true,
            h2c: false,
            tls: TlsOptions::default(),
            redirects: 10,
            chunked: false,
            laddr: None,
            unix_socket: None,
            connect_to: Vec::new(),
            dns_ttl: None,
            resolvers: Vec::new(),
            proxy_header: Vec::new(),
            max_connections: 0,
            connections: 10_000,
        }
    }
}

impl ClientConfig {
    /// Checks the settings and loads certificates and keys, so that every
    /// configuration error comes out before the first request.
    pub fn validate(&self) -> Result<(), ClientError> {
        self.check_plain()?;
        crate::tls::TlsConfigs::build(&self.tls, false)?;
        Ok(())
    }

    /// The checks that need no file.
    pub(crate) fn check_plain(&self) -> Result<(), ClientError> {
        for (from, to) in &self.connect_to {
            crate::url::split_host_port(from).ok_or_else(|| {
                ClientError::Config(format!("-connect-to: {from:?} is not host:port"))
            })?;
            crate::url::split_host_port(to).ok_or_else(|| {
                ClientError::Config(format!("-connect-to: {to:?} is not addr:port"))
            })?;
        }
        for (k, v) in &self.proxy_header {
            crate::prepare::check_header(k, v)?;
        }
        Ok(())
    }
}
