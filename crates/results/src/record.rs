//! The result record: one per request, the unit every stage exchanges.
//!
//! Workers emit records, sinks (the results file, live progress, reports)
//! consume them. Times are nanoseconds; `timestamp` is the request's
//! *intended* send time (the pacer's schedule) as Unix nanoseconds, and
//! `latency` runs from that intended time to the last body byte, so queueing
//! in the generator or a stalled target shows in the percentiles.

use std::sync::Arc;

/// What went wrong with a request, classified so that reports and the
/// generator's self-diagnosis can group errors without parsing text.
/// The discriminants are part of the binary results format: never renumber.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum ErrorKind {
    /// No error: a response was read in full (whatever its status).
    #[default]
    None = 0,
    /// The response status is outside the success range (error text is the
    /// status line, e.g. `404 Not Found`, as vegeta records it).
    Status = 1,
    /// `-timeout` expired before the response was complete.
    Timeout = 2,
    /// The target refused the connection (ECONNREFUSED).
    Refused = 3,
    /// The connection was reset by the peer (ECONNRESET, EPIPE).
    Reset = 4,
    /// The peer closed the connection before a complete response.
    Eof = 5,
    /// TLS handshake or certificate failure.
    Tls = 6,
    /// Name resolution failed.
    Dns = 7,
    /// The generator ran out of file descriptors (EMFILE/ENFILE).
    TooManyOpenFiles = 8,
    /// The generator ran out of ephemeral ports (EADDRNOTAVAIL/EADDRINUSE).
    PortsExhausted = 9,
    /// The response could not be parsed as HTTP.
    Protocol = 10,
    /// The URL or request could not be built.
    Request = 11,
    /// The request was never sent because the attack was stopped.
    Canceled = 12,
    /// Anything else; the error text says what.
    Other = 13,
}

impl ErrorKind {
    /// All kinds, in discriminant order.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::None,
        ErrorKind::Status,
        ErrorKind::Timeout,
        ErrorKind::Refused,
        ErrorKind::Reset,
        ErrorKind::Eof,
        ErrorKind::Tls,
        ErrorKind::Dns,
        ErrorKind::TooManyOpenFiles,
        ErrorKind::PortsExhausted,
        ErrorKind::Protocol,
        ErrorKind::Request,
        ErrorKind::Canceled,
        ErrorKind::Other,
    ];

    /// The kind for a discriminant read from a file, if it is one.
    pub fn from_u8(v: u8) -> Option<ErrorKind> {
        ErrorKind::ALL.get(v as usize).copied()
    }

    /// A short stable name, used in JSON reports and CSV.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::None => "none",
            ErrorKind::Status => "status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Refused => "refused",
            ErrorKind::Reset => "reset",
            ErrorKind::Eof => "eof",
            ErrorKind::Tls => "tls",
            ErrorKind::Dns => "dns",
            ErrorKind::TooManyOpenFiles => "too_many_open_files",
            ErrorKind::PortsExhausted => "ports_exhausted",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Request => "request",
            ErrorKind::Canceled => "canceled",
            ErrorKind::Other => "other",
        }
    }
}

/// Per-request phase timings in nanoseconds, named as k6 names them.
/// A phase that did not happen (a reused connection has no connect) is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Phases {
    /// Waiting for a free connection or worker (k6 `http_req_blocked`),
    /// including DNS resolution.
    pub blocked: u64,
    /// DNS resolution alone (part of `blocked`).
    pub dns: u64,
    /// TCP connect (k6 `http_req_connecting`).
    pub connecting: u64,
    /// TLS handshake (k6 `http_req_tls_handshaking`).
    pub tls_handshaking: u64,
    /// Request written → first response byte (k6 `http_req_waiting`, TTFB).
    pub waiting: u64,
    /// First response byte → last body byte (k6 `http_req_receiving`).
    pub receiving: u64,
}

/// One request's outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// Attack name (`-name`); empty when none was given.
    pub attack: Arc<str>,
    /// Sequence number within its attack, from 0.
    pub seq: u64,
    /// Intended send time, Unix nanoseconds.
    pub timestamp: i64,
    /// Intended send time → last response byte, nanoseconds.
    pub latency: u64,
    /// Intended send time → actual send, nanoseconds (generator lag).
    pub lag: u64,
    /// Phase breakdown.
    pub phases: Phases,
    /// Response bytes received (headers excluded, body counted in full even
    /// when `-max-body` keeps less).
    pub bytes_in: u64,
    /// Request body bytes sent.
    pub bytes_out: u64,
    /// HTTP status; 0 when no response was received.
    pub code: u16,
    /// Error class; `ErrorKind::None` on a complete response.
    pub error_kind: ErrorKind,
    /// Error text (vegeta's `error` field); empty when none.
    pub error: Arc<str>,
    /// Request method.
    pub method: Arc<str>,
    /// Request URL.
    pub url: Arc<str>,
    /// Kept response body (up to `-max-body`), only when the attack kept
    /// bodies; empty otherwise.
    pub body: bytes::Bytes,
}

impl Record {
    /// True when the request counts as a success: a response with a status
    /// in 200..=399 and no error (vegeta's definition).
    pub fn is_success(&self) -> bool {
        self.error_kind == ErrorKind::None && (200..400).contains(&self.code)
    }

    /// Intended send time plus latency: when the response completed.
    pub fn end(&self) -> i64 {
        self.timestamp.saturating_add(self.latency as i64)
    }
}
