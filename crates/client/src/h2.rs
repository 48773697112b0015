//! HTTP/2 over hyper: one multiplexed connection per host (ALPN `h2` over
//! TLS, or `-h2c` prior knowledge), shared by every session; each request
//! is a stream whose body frames are counted and dropped like HTTP/1.1's.

use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use volley_results::ErrorKind;

use crate::dial::ConnGuard;
use crate::error::{io_kind, Failure};
use crate::h1::{BodySink, Head};
use crate::prepare::Inner as Req;
use crate::session::{Measure, Stage};
use crate::stream::Stream;

/// A handle on a shared HTTP/2 connection.
pub(crate) type Sender = hyper::client::conn::http2::SendRequest<Full<Bytes>>;

/// Runs the HTTP/2 handshake and spawns the connection's driver, which
/// owns the host's connection slot (`guard`) until the connection ends.
pub(crate) async fn handshake(stream: Stream, guard: ConnGuard) -> Result<Sender, Failure> {
    let (sender, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .adaptive_window(true)
        .handshake(TokioIo::new(stream))
        .await
        .map_err(|e| failure(&e))?;
    tokio::spawn(async move {
        let _ = conn.await;
        drop(guard);
    });
    Ok(sender)
}

/// One request on a shared connection.
pub(crate) async fn exchange(
    sender: &mut Sender,
    req: &Req,
    sink: &mut BodySink,
    m: &mut Measure,
    want_location: bool,
) -> Result<Head, (Failure, bool)> {
    m.stage = Stage::Sending;
    sender.ready().await.map_err(|e| (failure(&e), true))?;
    let mut request = http::Request::new(Full::new(req.body.clone()));
    *request.method_mut() = req.h2.method.clone();
    *request.uri_mut() = req.h2.uri.clone();
    *request.headers_mut() = req.h2.headers.clone();
    let fut = sender.send_request(request);
    m.t_written = Some(Instant::now());
    m.stage = Stage::AwaitingHeaders;
    let resp = fut.await.map_err(|e| {
        let f = failure(&e);
        // A connection that went away before answering may be replaced.
        let retry = e.is_canceled() || e.is_closed();
        (f, retry)
    })?;
    m.t_first = Some(Instant::now());
    let code = resp.status().as_u16();
    m.code = code;
    m.stage = Stage::Body;
    let location = if want_location {
        resp.headers()
            .get(http::header::LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    } else {
        None
    };
    let mut body = resp.into_body();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| (failure(&e), false))?;
        if let Some(d) = frame.data_ref() {
            sink.take(d);
        }
    }
    m.t_end = Some(Instant::now());
    let status = (!(200..400).contains(&code)).then(|| {
        let reason = http::StatusCode::from_u16(code)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        format!("{code} {reason}").trim_end().to_string()
    });
    Ok(Head {
        code,
        status,
        location,
    })
}

/// A hyper error, classified; the text joins its causes (`http2: stream
/// error received: …`).
fn failure(e: &hyper::Error) -> Failure {
    let mut text = format!("http2: {e}");
    let mut kind = None;
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        if kind.is_none() {
            if let Some(io) = s.downcast_ref::<std::io::Error>() {
                let tls = io.get_ref().is_some_and(|i| i.is::<rustls::Error>());
                kind = Some(if tls { ErrorKind::Tls } else { io_kind(io) });
            } else if s.is::<rustls::Error>() {
                kind = Some(ErrorKind::Tls);
            }
        }
        source = s.source();
    }
    let lower = text.to_ascii_lowercase();
    // h2 rebuilds I/O errors from their kind and text, losing rustls's type.
    let tls_text = lower.contains("fatal alert") || lower.contains("certificate");
    let kind = match kind {
        Some(ErrorKind::Protocol | ErrorKind::Other) | None if tls_text => Some(ErrorKind::Tls),
        k => k,
    };
    let kind = kind.unwrap_or_else(|| {
        if e.is_incomplete_message() {
            ErrorKind::Eof
        } else if lower.contains("goaway")
            || lower.contains("reset")
            || e.is_canceled()
            || e.is_closed()
        {
            ErrorKind::Reset
        } else {
            ErrorKind::Protocol
        }
    });
    Failure { kind, msg: text }
}
