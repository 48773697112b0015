//! The HTTP/1.1 fast path: parses requests with `httparse` and writes the
//! route's precomputed response bytes, with no allocation per request.
//!
//! It handles what load tests send — GET, HEAD and POST with a small
//! `content-length` body, keep-alive and pipelining — on plain TCP and TLS.
//! Anything else (the admin API, `/metrics`, chunked or large bodies,
//! `Expect`, `Upgrade`, other methods, an h2c preface) hands the connection,
//! with the bytes already read, to hyper (`server::serve_hyper`) for the rest
//! of its life. Responses stay in order: a request's latency is waited after
//! earlier responses are flushed and before later requests are answered.

use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use crate::server::{serve_hyper, target, Proto, Shared, Target};
use crate::sim::{Answer, Prepared};

/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Request bodies above this go to hyper, which streams them.
const MAX_INLINE_BODY: usize = 256 * 1024;
/// Responses above this are written straight from the shared bytes.
const COPY_LIMIT: usize = 16 * 1024;
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum Step<'a> {
    /// Need more bytes.
    Partial,
    /// Give the connection to hyper.
    Handover,
    /// Answer with this error and close.
    Fail(u16, &'static str),
    Respond {
        consumed: usize,
        latency: std::time::Duration,
        answer: Answer<'a>,
        head_only: bool,
        /// `connection: close` or HTTP/1.0 without keep-alive.
        close: bool,
        /// HTTP/1.0 with keep-alive: the response must say so.
        keep_alive_10: bool,
    },
}

fn parse<'a>(buf: &[u8], sim: &'a crate::sim::Simulation) -> Step<'a> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > MAX_HEAD {
                Step::Fail(431, "request head too large")
            } else {
                Step::Partial
            }
        }
        Err(httparse::Error::TooManyHeaders) => return Step::Handover,
        Err(_) => return Step::Fail(400, "malformed request"),
    };
    let (Some(method), Some(full_path), Some(version)) = (req.method, req.path, req.version) else {
        return Step::Fail(400, "malformed request");
    };
    let head_only = match method {
        "GET" | "POST" => false,
        "HEAD" => true,
        _ => return Step::Handover,
    };
    let path = full_path.split_once('?').map_or(full_path, |(p, _)| p);
    if !path.starts_with('/') || !matches!(target(sim, path), Target::Simulated) {
        return Step::Handover;
    }
    let mut content_length: usize = 0;
    let mut conn_close = false;
    let mut conn_keep_alive = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let Some(n) = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
            else {
                return Step::Fail(400, "bad content-length");
            };
            if n > MAX_INLINE_BODY {
                return Step::Handover;
            }
            content_length = n;
        } else if name.eq_ignore_ascii_case(b"transfer-encoding")
            || name.eq_ignore_ascii_case(b"expect")
            || name.eq_ignore_ascii_case(b"upgrade")
        {
            return Step::Handover;
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    conn_close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    conn_keep_alive = true;
                }
            }
        }
    }
    let consumed = head_len + content_length;
    if buf.len() < consumed {
        return Step::Partial;
    }
    let http10 = version == 0;
    let (latency, answer) = sim.answer(path);
    Step::Respond {
        consumed,
        latency,
        answer,
        head_only,
        close: conn_close || (http10 && !conn_keep_alive),
        keep_alive_10: http10 && conn_keep_alive && !conn_close,
    }
}

/// Appends `p` to `out`, with an extra header when needed.
fn encode(out: &mut Vec<u8>, p: &Prepared, head_only: bool, extra: &[u8]) {
    if extra.is_empty() {
        let end = if head_only { p.head_len } else { p.wire.len() };
        out.extend_from_slice(&p.wire[..end]);
    } else {
        out.extend_from_slice(&p.wire[..p.head_len - 2]);
        out.extend_from_slice(extra);
        out.extend_from_slice(b"\r\n");
        if !head_only {
            out.extend_from_slice(&p.body);
        }
    }
}

/// Writes and flushes (TLS streams buffer until flushed).
async fn send<S: AsyncWrite + Unpin>(io: &mut S, buf: &[u8]) -> bool {
    io.write_all(buf).await.is_ok() && io.flush().await.is_ok()
}

/// Serves one connection until it closes.
pub(crate) async fn serve<S>(mut io: S, shared: Arc<Shared>, h2c: bool)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    if shared.hyper_only {
        let proto = if h2c { Proto::Auto } else { Proto::H1 };
        return Box::pin(serve_hyper(io, shared, proto)).await;
    }
    // Small buffers: 10,000 idle connections should cost little; both grow
    // when a request or a batch of responses needs it.
    let mut rbuf = BytesMut::with_capacity(1024);
    let mut wbuf: Vec<u8> = Vec::new();
    let (mut gen, mut sim) = shared.snapshot();
    let mut first = true;
    loop {
        // Answer every complete request in the buffer.
        loop {
            if rbuf.is_empty() {
                break;
            }
            if first {
                let n = rbuf.len().min(H2_PREFACE.len());
                if rbuf[..n] == H2_PREFACE[..n] {
                    if n < H2_PREFACE.len() {
                        break; // wait for the whole preface
                    }
                    if h2c {
                        let rewind = Rewind::new(io, rbuf.freeze());
                        return Box::pin(serve_hyper(rewind, shared, Proto::H2)).await;
                    }
                    return;
                }
                first = false;
            }
            let g = shared.generation.load(Ordering::Acquire);
            if g != gen {
                (gen, sim) = shared.snapshot();
            }
            match parse(&rbuf, &sim) {
                Step::Partial => break,
                Step::Handover => {
                    if !wbuf.is_empty() && !send(&mut io, &wbuf).await {
                        return;
                    }
                    let proto = if h2c { Proto::Auto } else { Proto::H1 };
                    let rewind = Rewind::new(io, rbuf.freeze());
                    return Box::pin(serve_hyper(rewind, shared, proto)).await;
                }
                Step::Fail(status, msg) => {
                    let p = Prepared::simple(status, crate::sim::TEXT, msg);
                    encode(&mut wbuf, &p, false, b"connection: close\r\n");
                    let _ = send(&mut io, &wbuf).await;
                    let _ = io.shutdown().await;
                    return;
                }
                Step::Respond {
                    consumed,
                    latency,
                    answer,
                    head_only,
                    close,
                    keep_alive_10,
                } => {
                    if !latency.is_zero() {
                        if !wbuf.is_empty() {
                            if !send(&mut io, &wbuf).await {
                                return;
                            }
                            wbuf.clear();
                        }
                        tokio::time::sleep(latency).await;
                    }
                    let p = answer.get();
                    let extra: &[u8] = if close {
                        b"connection: close\r\n"
                    } else if keep_alive_10 {
                        b"connection: keep-alive\r\n"
                    } else {
                        b""
                    };
                    if extra.is_empty() && !head_only && p.wire.len() > COPY_LIMIT {
                        if !wbuf.is_empty() {
                            if !send(&mut io, &wbuf).await {
                                return;
                            }
                            wbuf.clear();
                        }
                        if !send(&mut io, &p.wire).await {
                            return;
                        }
                    } else {
                        encode(&mut wbuf, p, head_only, extra);
                    }
                    shared.counters.record(p.status);
                    drop(answer);
                    rbuf.advance(consumed);
                    if close {
                        let _ = send(&mut io, &wbuf).await;
                        let _ = io.shutdown().await;
                        return;
                    }
                }
            }
        }
        if !wbuf.is_empty() {
            if !send(&mut io, &wbuf).await {
                return;
            }
            wbuf.clear();
            if wbuf.capacity() > 64 * 1024 {
                wbuf.shrink_to(4096);
            }
        }
        if rbuf.capacity() - rbuf.len() < 512 {
            rbuf.reserve(4096);
        }
        match io.read_buf(&mut rbuf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// An I/O stream that first yields bytes already read from it.
pub(crate) struct Rewind<S> {
    pre: Bytes,
    io: S,
}

impl<S> Rewind<S> {
    fn new(io: S, pre: Bytes) -> Self {
        Rewind { pre, io }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Rewind<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.pre.is_empty() {
            let n = self.pre.len().min(buf.remaining());
            let chunk = self.pre.split_to(n);
            buf.put_slice(&chunk);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Rewind<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
