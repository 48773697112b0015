//! The HTTP/1.1 exchange, written for speed: the prepared request goes out
//! with one `write_all`, the response head is parsed with `httparse` from a
//! read buffer the session reuses, and the body (Content-Length, chunked,
//! or until close) is counted and dropped, except up to `max_body` bytes
//! kept. Nothing is allocated per request unless a body is kept, a status
//! line must be quoted in an error, or a redirect is followed.

use std::time::Instant;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use volley_results::ErrorKind;

use crate::dial::ConnGuard;
use crate::error::Failure;
use crate::prepare::Inner as Req;
use crate::session::{Measure, Stage};
use crate::stream::Stream;

/// Largest response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Read buffer size to start with, per session.
const INITIAL_BUF: usize = 8 * 1024;
/// Read buffer size for large bodies.
const LARGE_BUF: usize = 64 * 1024;
/// Longest chunk-size or trailer line accepted.
const MAX_LINE: usize = 8 * 1024;

/// An HTTP/1.1 connection held by a session.
pub(crate) struct H1Conn {
    pub stream: Stream,
    /// Requests completed on it.
    pub requests: u64,
    /// It may be kept after a response (keep-alive, under `-connections`).
    pub keep: bool,
    /// Send requests in absolute form (plain-HTTP proxy).
    pub absolute_form: bool,
    pub _guard: ConnGuard,
}

/// The session's reused read buffer: bytes `start..end` are unread.
pub(crate) struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Reads so far; tells whether a response needed more than one.
    reads: u64,
}

impl ReadBuf {
    pub fn new() -> ReadBuf {
        ReadBuf {
            buf: vec![0; INITIAL_BUF],
            start: 0,
            end: 0,
            reads: 0,
        }
    }

    pub fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.clear();
        }
    }

    /// Reads more bytes; `Ok(0)` at end of stream. Makes room by moving
    /// unread bytes to the front, or by growing up to `max`.
    async fn fill(&mut self, stream: &mut Stream, max: usize) -> Result<usize, Failure> {
        if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < max {
                let len = (self.buf.len() * 2).min(max);
                self.buf.resize(len, 0);
            } else {
                return Err(Failure::new(
                    ErrorKind::Protocol,
                    "net/http: server response headers exceeded limit",
                ));
            }
        }
        let end = self.end;
        let n = stream
            .read(&mut self.buf[end..])
            .await
            .map_err(|e| Failure::io(&format!("read {}", stream.describe()), "read", &e))?;
        self.end += n;
        self.reads += 1;
        Ok(n)
    }

    /// Grows the buffer for a large body, so it is read in fewer calls.
    fn grow_for(&mut self, remaining: u64) {
        if remaining > self.buf.len() as u64 && self.buf.len() < LARGE_BUF {
            self.buf.resize(LARGE_BUF, 0);
        }
    }
}

/// Counts body bytes and keeps up to a limit of them.
pub(crate) struct BodySink {
    pub total: u64,
    pub kept: Option<BytesMut>,
    limit: u64,
}

impl BodySink {
    pub fn new(keep: bool, limit: Option<u64>) -> BodySink {
        let limit = limit.unwrap_or(u64::MAX);
        BodySink {
            total: 0,
            kept: (keep && limit > 0).then(BytesMut::new),
            limit,
        }
    }

    pub fn reset(&mut self) {
        self.total = 0;
        if let Some(k) = &mut self.kept {
            k.clear();
        }
    }

    pub fn take(&mut self, d: &[u8]) {
        self.total += d.len() as u64;
        if let Some(k) = &mut self.kept {
            let room = self.limit.saturating_sub(k.len() as u64);
            let n = (d.len() as u64).min(room) as usize;
            if n > 0 {
                k.extend_from_slice(&d[..n]);
            }
        }
    }
}

/// What a response head says.
pub(crate) struct Head {
    pub code: u16,
    /// `404 Not Found`, set only for statuses outside 200..=399.
    pub status: Option<String>,
    /// The `Location` of a redirect, when asked for.
    pub location: Option<String>,
}

enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// Where a failure left the exchange, for the stale-connection retry.
pub(crate) struct H1Error {
    pub failure: Failure,
    /// Nothing of a response arrived (the request may be retried on a new
    /// connection if this one was reused).
    pub before_response: bool,
}

fn err(failure: Failure, before_response: bool) -> H1Error {
    H1Error {
        failure,
        before_response,
    }
}

/// One request/response on `conn`. On success returns the head and
/// whether the connection can carry another request.
pub(crate) async fn exchange(
    conn: &mut H1Conn,
    rb: &mut ReadBuf,
    req: &Req,
    sink: &mut BodySink,
    m: &mut Measure,
    want_location: bool,
) -> Result<(Head, bool), H1Error> {
    rb.clear();
    m.stage = Stage::Sending;
    let bytes = match (&req.h1_proxy, conn.absolute_form) {
        (Some(b), true) => b,
        _ => &req.h1,
    };
    let write = async {
        conn.stream.write_all(bytes).await?;
        conn.stream.flush().await
    };
    if let Err(e) = write.await {
        return Err(err(
            Failure::io(&format!("write {}", conn.stream.describe()), "write", &e),
            true,
        ));
    }
    m.t_written = Some(Instant::now());
    m.stage = Stage::AwaitingHeaders;

    // The head, skipping 1xx interim responses.
    let mut got_any = false;
    let mut reads_at_first = 0;
    let (head, framing, close) = loop {
        if rb.start < rb.end {
            match parse_head(rb.data(), want_location, req.head) {
                Ok(Some((n, parsed))) => {
                    rb.consume(n);
                    match parsed {
                        Some(p) => break p,
                        None => continue, // 1xx
                    }
                }
                Ok(None) => {}
                Err(f) => return Err(err(f, false)),
            }
        }
        let n = match rb.fill(&mut conn.stream, MAX_HEAD).await {
            Ok(n) => n,
            Err(f) => return Err(err(f, !got_any)),
        };
        if n == 0 {
            let msg = if got_any { "unexpected EOF" } else { "EOF" };
            return Err(err(Failure::new(ErrorKind::Eof, msg), !got_any));
        }
        if !got_any {
            got_any = true;
            m.t_first = Some(Instant::now());
            reads_at_first = rb.reads;
        }
    };
    m.code = head.code;
    m.stage = Stage::Body;

    let reusable = match framing {
        Framing::None => true,
        Framing::Length(len) => {
            read_exact(conn, rb, sink, len)
                .await
                .map_err(|f| err(f, false))?;
            true
        }
        Framing::Chunked => {
            read_chunked(conn, rb, sink)
                .await
                .map_err(|f| err(f, false))?;
            true
        }
        Framing::UntilClose => {
            let d = rb.data();
            sink.take(d);
            rb.clear();
            loop {
                rb.grow_for(u64::MAX);
                let n = rb
                    .fill(&mut conn.stream, LARGE_BUF)
                    .await
                    .map_err(|f| err(f, false))?;
                if n == 0 {
                    break;
                }
                sink.take(rb.data());
                rb.clear();
            }
            false
        }
    };
    // A response that came whole in its first read ended when that read
    // returned: the time since is parsing, not receiving.
    m.t_end = if rb.reads == reads_at_first {
        m.t_first
    } else {
        Some(Instant::now())
    };
    conn.requests += 1;
    Ok((head, reusable && !close && conn.keep))
}

/// Parses a response head. `Ok(None)`: incomplete. `Ok(Some((n, None)))`:
/// a 1xx interim response of `n` bytes to skip.
#[allow(clippy::type_complexity)]
fn parse_head(
    data: &[u8],
    want_location: bool,
    head_req: bool,
) -> Result<Option<(usize, Option<(Head, Framing, bool)>)>, Failure> {
    // Uninitialised slots: zeroing 100 headers on every parse cost more
    // than parsing a small response.
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; 100];
    let mut resp = httparse::Response::new(&mut []);
    let n = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        data,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(malformed(data, e)),
    };
    let code = resp.code.unwrap_or(0);
    if (100..200).contains(&code) {
        if code == 101 {
            return Err(Failure::new(
                ErrorKind::Protocol,
                "net/http: unexpected 101 Switching Protocols response",
            ));
        }
        return Ok(Some((n, None)));
    }
    let http10 = resp.version == Some(0);
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut close = http10;
    let mut location = None;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .map(str::trim)
                .and_then(|v| v.parse::<u64>().ok());
            match (v, length) {
                (None, _) => {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        "net/http: bad Content-Length",
                    ))
                }
                (Some(v), Some(l)) if v != l => {
                    return Err(Failure::new(
                        ErrorKind::Protocol,
                        "net/http: message cannot contain multiple Content-Length headers",
                    ))
                }
                (Some(v), _) => length = Some(v),
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            for tok in h.value.split(|&b| b == b',') {
                let tok = tok.trim_ascii();
                if tok.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if tok.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    close = false;
                }
            }
        } else if want_location && name.eq_ignore_ascii_case(b"location") {
            location = Some(String::from_utf8_lossy(h.value).into_owned());
        }
    }
    let framing = if head_req || code == 204 || code == 304 {
        Framing::None
    } else if chunked && !http10 {
        Framing::Chunked
    } else if let Some(l) = length {
        if l == 0 {
            Framing::None
        } else {
            Framing::Length(l)
        }
    } else {
        Framing::UntilClose
    };
    let status = (!(200..400).contains(&code)).then(|| {
        let reason = resp.reason.unwrap_or("").trim();
        let reason = if reason.is_empty() {
            http::StatusCode::from_u16(code)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("")
        } else {
            reason
        };
        format!("{code} {reason}").trim_end().to_string()
    });
    Ok(Some((
        n,
        Some((
            Head {
                code,
                status,
                location,
            },
            framing,
            close,
        )),
    )))
}

fn malformed(data: &[u8], e: httparse::Error) -> Failure {
    let shown: String = String::from_utf8_lossy(&data[..data.len().min(40)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Failure::new(
        ErrorKind::Protocol,
        format!("net/http: HTTP/1.x transport connection broken: malformed HTTP response {shown:?} ({e})"),
    )
}

/// Reads and counts exactly `len` body bytes.
async fn read_exact(
    conn: &mut H1Conn,
    rb: &mut ReadBuf,
    sink: &mut BodySink,
    mut len: u64,
) -> Result<(), Failure> {
    loop {
        let avail = (rb.end - rb.start) as u64;
        let n = avail.min(len) as usize;
        if n > 0 {
            sink.take(&rb.data()[..n]);
            rb.consume(n);
            len -= n as u64;
        }
        if len == 0 {
            return Ok(());
        }
        rb.grow_for(len);
        if rb.fill(&mut conn.stream, LARGE_BUF).await? == 0 {
            return Err(Failure::new(ErrorKind::Eof, "unexpected EOF"));
        }
    }
}

/// The next line (without CRLF), read as needed and consumed from the
/// buffer; its first 64 bytes are copied to `out`, its length returned.
async fn read_line(
    conn: &mut H1Conn,
    rb: &mut ReadBuf,
    out: &mut [u8; 64],
) -> Result<usize, Failure> {
    loop {
        if let Some(i) = rb.data().iter().position(|&b| b == b'\n') {
            let line = rb.data()[..i]
                .strip_suffix(b"\r")
                .unwrap_or(&rb.data()[..i]);
            // Only the start of a line matters (chunk size); trailers are skipped.
            let n = line.len().min(out.len());
            out[..n].copy_from_slice(&line[..n]);
            let full = line.len();
            rb.consume(i + 1);
            return Ok(full);
        }
        if rb.end - rb.start > MAX_LINE {
            return Err(Failure::new(
                ErrorKind::Protocol,
                "net/http: chunked line too long",
            ));
        }
        if rb.fill(&mut conn.stream, LARGE_BUF).await? == 0 {
            return Err(Failure::new(ErrorKind::Eof, "unexpected EOF"));
        }
    }
}

/// Reads a chunked body, counting the decoded bytes.
async fn read_chunked(
    conn: &mut H1Conn,
    rb: &mut ReadBuf,
    sink: &mut BodySink,
) -> Result<(), Failure> {
    let mut line = [0u8; 64];
    loop {
        let n = read_line(conn, rb, &mut line).await?;
        let size = parse_chunk_size(&line[..n.min(line.len())]).ok_or_else(|| {
            Failure::new(ErrorKind::Protocol, "net/http: malformed chunked encoding")
        })?;
        if size == 0 {
            // Trailers, up to the empty line.
            while read_line(conn, rb, &mut line).await? > 0 {}
            return Ok(());
        }
        read_exact(conn, rb, sink, size).await?;
        if read_line(conn, rb, &mut line).await? != 0 {
            return Err(Failure::new(
                ErrorKind::Protocol,
                "net/http: malformed chunked encoding",
            ));
        }
    }
}

fn parse_chunk_size(line: &[u8]) -> Option<u64> {
    let hex = line.split(|&b| b == b';').next()?.trim_ascii();
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in hex {
        v = v << 4 | u64::from((b as char).to_digit(16)?);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_heads_and_framing() {
        let r = b"HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nhello";
        let (n, p) = parse_head(r, false, false).unwrap().unwrap();
        let (head, framing, close) = p.unwrap();
        assert_eq!(n, r.len() - 5);
        assert_eq!(head.code, 404);
        assert_eq!(head.status.as_deref(), Some("404 Not Found"));
        assert!(matches!(framing, Framing::Length(5)));
        assert!(!close);
        let r = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let (_, p) = parse_head(r, false, false).unwrap().unwrap();
        let (head, framing, close) = p.unwrap();
        assert!(head.status.is_none());
        assert!(matches!(framing, Framing::UntilClose));
        assert!(close);
        let r = b"HTTP/1.1 100 Continue\r\n\r\n";
        assert!(parse_head(r, false, false).unwrap().unwrap().1.is_none());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\n", false, false)
            .unwrap()
            .is_none());
        assert_eq!(
            parse_head(b"garbage\r\n\r\n", false, false)
                .err()
                .unwrap()
                .kind,
            ErrorKind::Protocol
        );
        let r =
            b"HTTP/1.1 302 Found\r\nLocation: /x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        let (head, framing, close) = parse_head(r, true, false).unwrap().unwrap().1.unwrap();
        assert_eq!(head.location.as_deref(), Some("/x"));
        assert!(matches!(framing, Framing::None));
        assert!(close);
    }

    #[test]
    fn parses_chunk_sizes() {
        assert_eq!(parse_chunk_size(b"1a"), Some(26));
        assert_eq!(parse_chunk_size(b"A;ext=1"), Some(10));
        assert_eq!(parse_chunk_size(b"0"), Some(0));
        assert_eq!(parse_chunk_size(b""), None);
        assert_eq!(parse_chunk_size(b"zz"), None);
        assert_eq!(parse_chunk_size(b"11111111111111111"), None);
    }

    #[test]
    fn the_body_sink_counts_all_and_keeps_the_limit() {
        let mut s = BodySink::new(true, Some(3));
        s.take(b"hello");
        s.take(b"world");
        assert_eq!(s.total, 10);
        assert_eq!(&s.kept.unwrap()[..], b"hel");
        let mut s = BodySink::new(true, Some(0));
        s.take(b"x");
        assert!(s.kept.is_none());
    }
}
