//! Servers for the client tests, all on 127.0.0.1:0 inside the test: a
//! hyper server (HTTP/1.1 and HTTP/2, plain or TLS), raw TCP servers that
//! misbehave on purpose, and certificates made with rcgen.
#![allow(dead_code)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use volley_client::{Client, ClientConfig, Outcome};

/// Connections a server accepted.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
    fn inc(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The routes every hyper test server answers.
async fn handle(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let version = format!("{:?}", req.version());
    let path = req.uri().path().to_string();
    let resp = |code: u16, body: Bytes| {
        let mut r = Response::new(Full::new(body));
        *r.status_mut() = hyper::StatusCode::from_u16(code).unwrap();
        r
    };
    let redirect = |code: u16, to: &str| {
        let mut r = resp(code, Bytes::from_static(b"moved"));
        r.headers_mut().insert("location", to.parse().unwrap());
        r
    };
    Ok(match path.as_str() {
        "/" => resp(200, Bytes::from_static(b"hello")),
        "/version" => resp(200, Bytes::from(version)),
        "/404" => resp(404, Bytes::from_static(b"nope")),
        "/big" => resp(200, Bytes::from(vec![b'x'; 100_000])),
        "/echo" => {
            let method = req.method().to_string();
            let body = req
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let mut out = method.into_bytes();
            out.push(b' ');
            out.extend_from_slice(&body);
            resp(200, Bytes::from(out))
        }
        "/r/a" => redirect(302, "b"),
        "/r/b" => redirect(301, "/r/c"),
        "/r/c" => resp(200, Bytes::from_static(b"done")),
        "/r/post" => redirect(303, "/echo"),
        "/r/loop" => redirect(302, "/r/loop"),
        _ => resp(404, Bytes::from_static(b"no route")),
    })
}

/// Serves one connection with hyper, HTTP/1.1 or HTTP/2 by what the
/// client speaks.
pub async fn serve_conn<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: S) {
    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(io), hyper::service::service_fn(handle))
        .await;
}

/// A plain hyper server; returns its address and connection counter.
pub async fn hyper_server() -> (SocketAddr, Counter) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Counter::default();
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            c.inc();
            tokio::spawn(serve_conn(s));
        }
    });
    (addr, count)
}

/// A raw server: `f` gets each accepted connection.
pub async fn raw_server<F, Fut>(f: F) -> (SocketAddr, Counter)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Counter::default();
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            c.inc();
            tokio::spawn(f(s));
        }
    });
    (addr, count)
}

/// Reads one request head (and nothing of a body) from a raw connection.
pub async fn read_head(s: &mut TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        let n = s.read(&mut b).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&b[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            return Some(buf);
        }
    }
}

pub fn client(cfg: ClientConfig) -> Client {
    Client::new(cfg).unwrap()
}

/// Runs one GET with a fresh session.
pub async fn get(c: &Client, url: &str) -> Outcome {
    let p = c.prepare("GET", url, &[], Bytes::new()).unwrap();
    c.session().execute(&p, Instant::now()).await
}

/// Asserts a successful outcome, printing it otherwise.
#[track_caller]
pub fn ok(o: &Outcome) {
    assert!(o.is_success(), "{o:?}");
}

/// A CA, a server certificate for 127.0.0.1/localhost and a client
/// certificate, as PEM files in a fresh directory.
pub struct Pki {
    pub dir: std::path::PathBuf,
    pub ca: std::path::PathBuf,
    pub client_cert: std::path::PathBuf,
    pub client_key: std::path::PathBuf,
    pub server_chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    pub server_key: rustls::pki_types::PrivateKeyDer<'static>,
    pub ca_der: rustls::pki_types::CertificateDer<'static>,
}

pub fn pki(name: &str) -> Pki {
    use rcgen::{
        BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair, SanType,
    };
    let dir = std::env::temp_dir().join(format!("volley-client-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();

    let srv_key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    p.subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let srv = p.signed_by(&srv_key, &ca, &ca_key).unwrap();

    let cl_key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(vec!["client".to_string()]).unwrap();
    p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cl = p.signed_by(&cl_key, &ca, &ca_key).unwrap();

    let w = |f: &str, s: String| {
        let path = dir.join(f);
        std::fs::write(&path, s).unwrap();
        path
    };
    Pki {
        ca: w("ca.pem", ca.pem()),
        client_cert: w("client.pem", cl.pem()),
        client_key: w("client.key", cl_key.serialize_pem()),
        server_chain: vec![srv.der().clone()],
        server_key: rustls::pki_types::PrivateKeyDer::Pkcs8(srv_key.serialize_der().into()),
        ca_der: ca.der().clone(),
        dir,
    }
}

/// A TLS server (ALPN h2 and http/1.1 as `alpn` says) running the hyper
/// routes; with `client_ca`, it demands a client certificate.
pub async fn tls_server(
    pki: &Pki,
    alpn: &[&[u8]],
    require_client_cert: bool,
) -> (SocketAddr, Counter) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if require_client_cert {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(pki.ca_der.clone()).unwrap();
        let v =
            rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .unwrap();
        builder.with_client_cert_verifier(v)
    } else {
        builder.with_no_client_auth()
    };
    let mut cfg = builder
        .with_single_cert(pki.server_chain.clone(), pki.server_key.clone_key())
        .unwrap();
    cfg.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Counter::default();
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            c.inc();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(s).await {
                    serve_conn(tls).await;
                }
            });
        }
    });
    (addr, count)
}
