//! Opening connections: the `-max-connections` permit, the address to dial
//! (`-unix-socket`, a proxy from the environment, `-connect-to`, DNS), the
//! TCP connect from `-laddr`, a proxy `CONNECT` tunnel with
//! `-proxy-header`s, and the TLS handshake with ALPN. Each step's time goes
//! into the request's phases.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream, UnixStream};
use tokio::sync::OwnedSemaphorePermit;
use tokio_rustls::TlsConnector;
use volley_results::ErrorKind;

use crate::client::{HostState, Inner};
use crate::error::Failure;
use crate::session::{Measure, Phase, Stage};
use crate::stream::{Plain, Stream};
use crate::url::{Scheme, Url};

/// Keeps a host's connection count and `-max-connections` permit for as
/// long as the connection lives.
pub(crate) struct ConnGuard {
    host: Arc<HostState>,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.host.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A new connection.
pub(crate) struct Dialed {
    pub stream: Stream,
    /// ALPN chose HTTP/2.
    pub h2: bool,
    /// Requests go to a plain-HTTP proxy, in absolute form.
    pub absolute_form: bool,
    /// Fewer than `-connections` were open for this host: it may be kept.
    pub keep: bool,
    pub guard: ConnGuard,
}

/// Opens a connection for `url`, offering HTTP/2 by ALPN when `alpn_h2`.
pub(crate) async fn dial(
    c: &Inner,
    host: &Arc<HostState>,
    url: &Url,
    alpn_h2: bool,
    m: &mut Measure,
) -> Result<Dialed, Failure> {
    m.stage = Stage::Connecting;
    let permit = match &host.limit {
        Some(sem) => {
            m.begin(Phase::Blocked);
            let p = sem.clone().acquire_owned().await;
            m.end();
            Some(p.map_err(|_| Failure::new(ErrorKind::Canceled, "client closed"))?)
        }
        None => None,
    };
    let open = host.open.fetch_add(1, Ordering::Relaxed);
    let guard = ConnGuard {
        host: host.clone(),
        _permit: permit,
    };
    let keep = open < c.cfg.connections.max(1);

    let proxy = c.proxy.for_url(url);
    let plain = if let Some(path) = &c.cfg.unix_socket {
        m.begin(Phase::Connecting);
        let s = UnixStream::connect(path).await;
        m.end();
        Plain::Unix(
            s.map_err(|e| Failure::io(&format!("dial unix {}", path.display()), "connect", &e))?,
        )
    } else {
        let (h, p) = match proxy {
            Some(px) => (px.host.as_str(), px.port),
            None => connect_target(c, host, url),
        };
        Plain::Tcp(tcp(c, host, h, p, m).await?)
    };
    let mut plain = plain;
    let mut absolute_form = false;
    if let Some(px) = proxy {
        if url.scheme == Scheme::Https {
            connect_tunnel(c, px, url, &mut plain).await?;
        } else {
            absolute_form = true;
        }
    }
    let (stream, h2) = match url.scheme {
        Scheme::Http => (Stream::Plain(plain), false),
        Scheme::Https => {
            m.begin(Phase::Tls);
            let configs = c
                .tls
                .get()
                .map_err(|msg| Failure::new(ErrorKind::Tls, format!("tls: {msg}")))?;
            let cfg = if alpn_h2 {
                configs.h2.clone()
            } else {
                configs.h1.clone()
            };
            let name = rustls_pki_types::ServerName::try_from(url.host.clone()).map_err(|_| {
                Failure::new(
                    ErrorKind::Tls,
                    format!("tls: invalid server name {:?}", url.host),
                )
            })?;
            let tls = TlsConnector::from(cfg).connect(name, plain).await;
            m.end();
            let tls = tls.map_err(|e| Failure::io("tls handshake", "", &e))?;
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            (Stream::Tls(Box::new(tls)), h2)
        }
    };
    Ok(Dialed {
        stream,
        h2,
        absolute_form,
        keep,
        guard,
    })
}

/// The host and port to dial for a URL: a `-connect-to` mapping (several
/// for one source rotate) or the URL's own.
fn connect_target<'a>(c: &'a Inner, host: &HostState, url: &'a Url) -> (&'a str, u16) {
    let mut matches = c
        .connect_to
        .iter()
        .filter(|m| m.from_port == url.port && m.from_host.eq_ignore_ascii_case(&url.host));
    let n = matches.clone().count();
    if n == 0 {
        return (&url.host, url.port);
    }
    let i = host.rr.fetch_add(1, Ordering::Relaxed) % n;
    match matches.nth(i) {
        Some(m) => (&m.to_host, m.to_port),
        None => (&url.host, url.port),
    }
}

/// Resolves (unless an IP literal) and connects, trying each address in
/// turn from a rotating start.
async fn tcp(
    c: &Inner,
    hs: &HostState,
    host: &str,
    port: u16,
    m: &mut Measure,
) -> Result<TcpStream, Failure> {
    let ips: Arc<[IpAddr]> = match host.parse::<IpAddr>() {
        Ok(ip) => Arc::from([ip]),
        Err(_) => {
            m.begin(Phase::Dns);
            let r = c.dns.lookup(host).await;
            m.end();
            r?
        }
    };
    let start = if ips.len() > 1 {
        hs.rr.fetch_add(1, Ordering::Relaxed)
    } else {
        0
    };
    let mut last = None;
    m.begin(Phase::Connecting);
    for k in 0..ips.len() {
        let addr = SocketAddr::new(ips[(start + k) % ips.len()], port);
        let crowded = hs.open.load(Ordering::Relaxed) >= CROWDED;
        match connect(c, addr, crowded).await {
            Ok(s) => {
                m.end();
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(f) => {
                // Generator-side limits will not get better on the next address.
                if matches!(
                    f.kind,
                    ErrorKind::TooManyOpenFiles | ErrorKind::PortsExhausted
                ) {
                    return Err(f);
                }
                last = Some(f);
            }
        }
    }
    Err(last.unwrap_or_else(|| {
        Failure::new(
            ErrorKind::Dns,
            format!("dial tcp: lookup {host}: no such host"),
        )
    }))
}

/// Open connections to one host beyond which loopback connections spread
/// over several source addresses.
const CROWDED: usize = 8192;

/// Source addresses a crowded loopback target's connections rotate over.
const LOOPBACK_SOURCES: u8 = 16;

static LOOPBACK_NEXT: AtomicUsize = AtomicUsize::new(0);

/// A connection from 127.0.0.2–17 to a loopback target, the port chosen at
/// connect time (`IP_BIND_ADDRESS_NO_PORT`), so that each source address has
/// a port range of its own. Linux gives `connect` only half of
/// `ip_local_port_range` and searches it linearly: past about 14,000
/// connections to one address every connect burns milliseconds of kernel
/// time, and the generator, not the target, becomes the bottleneck.
async fn connect_spread(addr: SocketAddr) -> std::io::Result<TcpStream> {
    let n = LOOPBACK_NEXT.fetch_add(1, Ordering::Relaxed) % LOOPBACK_SOURCES as usize;
    let src = std::net::Ipv4Addr::new(127, 0, 0, 2 + n as u8);
    let sock = TcpSocket::new_v4()?;
    nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::IpBindAddressNoPort, &true)
        .map_err(std::io::Error::from)?;
    sock.bind(SocketAddr::new(src.into(), 0))?;
    sock.connect(addr).await
}

async fn connect(c: &Inner, addr: SocketAddr, crowded: bool) -> Result<TcpStream, Failure> {
    let Some(laddr) = c.cfg.laddr else {
        let spread = crowded && matches!(addr.ip(), IpAddr::V4(ip) if ip.is_loopback());
        let conn = if spread {
            match connect_spread(addr).await {
                Ok(s) => Ok(s),
                Err(_) => TcpStream::connect(addr).await,
            }
        } else {
            TcpStream::connect(addr).await
        };
        return conn.map_err(|e| Failure::io(&format!("dial tcp {addr}"), "connect", &e));
    };
    let op = || format!("dial tcp {}->{addr}", SocketAddr::new(laddr, 0));
    let sock = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| Failure::io(&op(), "socket", &e))?;
    sock.bind(SocketAddr::new(laddr, 0))
        .map_err(|e| Failure::io(&op(), "bind", &e))?;
    sock.connect(addr)
        .await
        .map_err(|e| Failure::io(&op(), "connect", &e))
}

/// Asks a proxy to open a tunnel to the target (`CONNECT host:port`) with
/// the `-proxy-header`s, and checks for a 2xx answer.
async fn connect_tunnel(
    c: &Inner,
    proxy: &Url,
    url: &Url,
    plain: &mut Plain,
) -> Result<(), Failure> {
    use base64::Engine as _;
    let target = if url.host.contains(':') {
        format!("[{}]:{}", url.host, url.port)
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let mut req = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(ui) = &proxy.userinfo {
        let enc = base64::engine::general_purpose::STANDARD.encode(ui.as_bytes());
        req.push_str(&format!("Proxy-Authorization: Basic {enc}\r\n"));
    }
    for (k, v) in &c.cfg.proxy_header {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let op = format!("proxyconnect tcp {}", proxy.authority);
    plain
        .write_all(req.as_bytes())
        .await
        .map_err(|e| Failure::io(&op, "write", &e))?;
    let mut buf = vec![0u8; 8192];
    let mut n = 0;
    loop {
        let r = plain
            .read(&mut buf[n..])
            .await
            .map_err(|e| Failure::io(&op, "read", &e))?;
        if r == 0 {
            return Err(Failure::new(
                ErrorKind::Eof,
                format!("{op}: unexpected EOF"),
            ));
        }
        n += r;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut resp = httparse::Response::new(&mut headers);
        match resp.parse(&buf[..n]) {
            Ok(httparse::Status::Complete(_)) => {
                let code = resp.code.unwrap_or(0);
                if (200..300).contains(&code) {
                    return Ok(());
                }
                let reason = resp.reason.unwrap_or("");
                return Err(Failure::new(
                    ErrorKind::Other,
                    format!("{op}: proxy answered {code} {reason}"),
                ));
            }
            Ok(httparse::Status::Partial) if n < buf.len() => {}
            Ok(httparse::Status::Partial) => {
                return Err(Failure::new(
                    ErrorKind::Protocol,
                    format!("{op}: proxy response header too large"),
                ))
            }
            Err(e) => {
                return Err(Failure::new(
                    ErrorKind::Protocol,
                    format!("{op}: malformed proxy response: {e}"),
                ))
            }
        }
    }
}
