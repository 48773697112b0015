//! Prepared requests: a target turned once into what every execution
//! needs — the parsed URL, the HTTP/1.1 request serialised to bytes (head
//! and body, written with one `write_all`), the HTTP/2 request parts, and a
//! handle on the per-host state — behind an `Arc`, so cloning is cheap.

use std::io::Write as _;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;

use crate::client::HostState;
use crate::error::ClientError;
use crate::url::Url;

/// A request ready to execute many times. Cheap to clone.
#[derive(Clone)]
pub struct Prepared {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Prepared({} {})", self.inner.method, self.inner.url_text)
    }
}

pub(crate) struct Inner {
    pub method: String,
    /// The URL as given (error texts quote it).
    pub url_text: String,
    pub url: Url,
    /// `Get`, `Post`…: the prefix of Go's error texts.
    pub op: String,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub host: Arc<HostState>,
    /// The HTTP/1.1 request: head and body.
    pub h1: Bytes,
    /// The HTTP/1.1 request in absolute form, for a plain-HTTP proxy.
    pub h1_proxy: Option<Bytes>,
    /// No response body is expected (HEAD).
    pub head: bool,
    /// A failed attempt on a reused connection may be retried.
    pub idempotent: bool,
    pub h2: H2Parts,
}

/// What an HTTP/2 request is built from, each time.
pub(crate) struct H2Parts {
    pub method: http::Method,
    pub uri: http::Uri,
    pub headers: http::HeaderMap,
}

impl Prepared {
    /// The request method.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request URL as given.
    pub fn url(&self) -> &str {
        &self.inner.url_text
    }

    /// Request body bytes (`bytes_out`).
    pub fn body_len(&self) -> u64 {
        self.inner.body.len() as u64
    }
}

/// Settings that shape the serialised request.
pub(crate) struct Shape {
    pub keepalive: bool,
    pub chunked: bool,
    /// A plain-HTTP proxy will carry this request (absolute-form too).
    pub via_proxy: bool,
}

/// Checks a header for what cannot be sent.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), ClientError> {
    let bad = |msg| ClientError::Header {
        name: name.to_string(),
        msg,
    };
    if name.is_empty() || !name.bytes().all(is_token) {
        return Err(bad("not a valid header name"));
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(bad("line breaks or NUL in the value"));
    }
    Ok(())
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Go's `url.Error` operation: the method, capitalised (`Get`).
fn op_name(method: &str) -> String {
    let mut op = String::with_capacity(method.len());
    for (i, c) in method.chars().enumerate() {
        if i == 0 {
            op.extend(c.to_uppercase());
        } else {
            op.extend(c.to_lowercase());
        }
    }
    op
}

pub(crate) fn build(
    shape: &Shape,
    host: Arc<HostState>,
    url: Url,
    method: &str,
    url_text: &str,
    headers: &[(String, String)],
    body: Bytes,
) -> Result<Prepared, ClientError> {
    if method.is_empty() || !method.bytes().all(is_token) {
        return Err(ClientError::Method(method.to_string()));
    }
    for (k, v) in headers {
        check_header(k, v)?;
    }
    let h1 = serialise(shape, &url, method, &url.path, headers, &body);
    let h1_proxy = shape
        .via_proxy
        .then(|| serialise(shape, &url, method, &url.to_text(), headers, &body));
    let h2 = h2_parts(&url, method, url_text, headers)?;
    let head = method.eq_ignore_ascii_case("HEAD");
    let idempotent = matches!(method, "GET" | "HEAD" | "OPTIONS" | "TRACE")
        || headers.iter().any(|(k, _)| {
            k.eq_ignore_ascii_case("Idempotency-Key") || k.eq_ignore_ascii_case("X-Idempotency-Key")
        });
    Ok(Prepared {
        inner: Arc::new(Inner {
            method: method.to_string(),
            url_text: url_text.to_string(),
            op: op_name(method),
            headers: headers.to_vec(),
            body,
            host,
            h1,
            h1_proxy,
            head,
            idempotent,
            h2,
            url,
        }),
    })
}

fn has(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
}

/// The HTTP/1.1 request bytes, framed as Go frames them: `Content-Length`
/// for a body (or `Transfer-Encoding: chunked` with `-chunked`), and
/// `Content-Length: 0` for an empty POST, PUT or PATCH.
fn serialise(
    shape: &Shape,
    url: &Url,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &Bytes,
) -> Bytes {
    let mut out = Vec::with_capacity(128 + target.len() + body.len() + headers.len() * 32);
    let _ = write!(out, "{method} {target} HTTP/1.1\r\n");
    match headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("Host")) {
        Some((_, v)) => {
            let _ = write!(out, "Host: {v}\r\n");
        }
        None => {
            let _ = write!(out, "Host: {}\r\n", url.authority);
        }
    }
    if !has(headers, "User-Agent") {
        let _ = write!(out, "User-Agent: volley/{}\r\n", env!("CARGO_PKG_VERSION"));
    }
    if let Some(ui) = &url.userinfo {
        if !has(headers, "Authorization") {
            let enc = base64::engine::general_purpose::STANDARD.encode(percent_decode(ui));
            let _ = write!(out, "Authorization: Basic {enc}\r\n");
        }
    }
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("Host")
            || k.eq_ignore_ascii_case("Content-Length")
            || k.eq_ignore_ascii_case("Transfer-Encoding")
        {
            continue;
        }
        let _ = write!(out, "{k}: {v}\r\n");
    }
    let chunked = shape.chunked && !body.is_empty();
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    } else if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        let _ = write!(out, "Content-Length: {}\r\n", body.len());
    }
    if !shape.keepalive {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    if chunked {
        let _ = write!(out, "{:x}\r\n", body.len());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\r\n0\r\n\r\n");
    } else {
        out.extend_from_slice(body);
    }
    Bytes::from(out)
}

fn percent_decode(s: &str) -> Vec<u8> {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// HTTP/2 parts: an absolute URI (its authority becomes `:authority`, or the
/// `Host` header when one is given) and the headers minus the
/// connection-specific ones HTTP/2 forbids.
fn h2_parts(
    url: &Url,
    method: &str,
    url_text: &str,
    headers: &[(String, String)],
) -> Result<H2Parts, ClientError> {
    let method = http::Method::from_bytes(method.as_bytes())
        .map_err(|_| ClientError::Method(method.to_string()))?;
    let authority = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("Host"))
        .map_or(url.authority.as_str(), |(_, v)| v.as_str());
    let uri = http::Uri::builder()
        .scheme(url.scheme.as_str())
        .authority(authority)
        .path_and_query(url.path.as_str())
        .build()
        .map_err(|_| ClientError::Url {
            url: url_text.to_string(),
            msg: "not representable as an HTTP/2 URI",
        })?;
    let mut map = http::HeaderMap::with_capacity(headers.len() + 2);
    for (k, v) in headers {
        let lower = k.to_ascii_lowercase();
        if matches!(
            lower.as_str(),
            "host"
                | "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "upgrade"
                | "content-length"
        ) {
            continue;
        }
        let name =
            http::HeaderName::from_bytes(lower.as_bytes()).map_err(|_| ClientError::Header {
                name: k.clone(),
                msg: "not a valid header name",
            })?;
        let value = http::HeaderValue::from_str(v).map_err(|_| ClientError::Header {
            name: k.clone(),
            msg: "not a valid header value",
        })?;
        map.append(name, value);
    }
    if !map.contains_key(http::header::USER_AGENT) {
        map.insert(
            http::header::USER_AGENT,
            http::HeaderValue::from_static(concat!("volley/", env!("CARGO_PKG_VERSION"))),
        );
    }
    if let Some(ui) = &url.userinfo {
        if !map.contains_key(http::header::AUTHORIZATION) {
            let enc = base64::engine::general_purpose::STANDARD.encode(percent_decode(ui));
            if let Ok(v) = http::HeaderValue::from_str(&format!("Basic {enc}")) {
                map.insert(http::header::AUTHORIZATION, v);
            }
        }
    }
    Ok(H2Parts {
        method,
        uri,
        headers: map,
    })
}
