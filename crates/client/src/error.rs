//! Errors: [`ClientError`] for set-up (configuration, certificates, bad
//! targets), and [`Failure`], a request's classified failure, whose texts
//! follow Go's net/http wording so that vegeta users recognise them
//! (`dial tcp 127.0.0.1:8080: connect: connection refused`).

use std::io;
use std::path::PathBuf;

use volley_results::ErrorKind;

/// A set-up error: bad configuration, unreadable or malformed certificate
/// files, or a target that cannot be turned into a request. One line each.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A setting is inconsistent or malformed.
    #[error("{0}")]
    Config(String),
    /// A certificate or key file could not be read.
    #[error("cannot read {what} {}: {msg}", path.display())]
    Read {
        /// Which flag the file came from (`-cert`, `-key`, `-root-certs`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        msg: String,
    },
    /// A certificate or key file holds no usable PEM data.
    #[error("{what} {}: {msg}", path.display())]
    Pem {
        /// Which flag the file came from.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
    },
    /// rustls refused the TLS configuration.
    #[error("TLS configuration: {0}")]
    Tls(String),
    /// The target URL cannot be used.
    #[error("invalid URL {url:?}: {msg}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        msg: &'static str,
    },
    /// The method is not an HTTP token.
    #[error("invalid method {0:?}")]
    Method(String),
    /// A header name or value cannot be sent.
    #[error("invalid header {name:?}: {msg}")]
    Header {
        /// The header name.
        name: String,
        /// What is wrong with it.
        msg: &'static str,
    },
}

/// A request's failure: its class and the text that goes into the record
/// (without the `Get "url": ` prefix, added by the session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub kind: ErrorKind,
    pub msg: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Failure {
        Failure {
            kind,
            msg: msg.into(),
        }
    }

    /// An I/O error during `op` (`dial tcp 1.2.3.4:80`, `read tcp a->b`),
    /// with `sys` the failing system call (`connect`, `read`), Go style.
    pub fn io(op: &str, sys: &str, e: &io::Error) -> Failure {
        if let Some(f) = tls_failure(e) {
            return f;
        }
        let kind = io_kind(e);
        let msg = if kind == ErrorKind::Eof {
            if op.is_empty() {
                "EOF".to_string()
            } else {
                format!("{op}: EOF")
            }
        } else if op.is_empty() {
            io_text(e)
        } else if sys.is_empty() {
            format!("{op}: {}", io_text(e))
        } else {
            format!("{op}: {sys}: {}", io_text(e))
        };
        Failure { kind, msg }
    }
}

/// The rustls error inside an I/O error from tokio-rustls, if any.
fn tls_failure(e: &io::Error) -> Option<Failure> {
    let inner = e.get_ref()?;
    let tls = inner.downcast_ref::<rustls::Error>()?;
    Some(Failure::new(
        ErrorKind::Tls,
        format!("tls: {}", tls_text(tls)),
    ))
}

/// Go-like wording for the common rustls errors.
pub(crate) fn tls_text(e: &rustls::Error) -> String {
    match e {
        rustls::Error::AlertReceived(a) => format!("remote error: {}", alert_text(*a)),
        rustls::Error::InvalidCertificate(c) => format!("failed to verify certificate: {c:?}"),
        other => other.to_string(),
    }
}

fn alert_text(a: rustls::AlertDescription) -> String {
    use rustls::AlertDescription as A;
    match a {
        A::BadCertificate => "bad certificate".into(),
        A::CertificateRequired => "certificate required".into(),
        A::UnknownCA => "unknown certificate authority".into(),
        A::HandshakeFailure => "handshake failure".into(),
        A::ProtocolVersion => "protocol version not supported".into(),
        A::NoApplicationProtocol => "no application protocol".into(),
        A::InternalError => "internal error".into(),
        other => format!("{other:?}"),
    }
}

/// The class of an I/O error.
pub(crate) fn io_kind(e: &io::Error) -> ErrorKind {
    if let Some(code) = e.raw_os_error() {
        match code {
            libc::ECONNREFUSED => return ErrorKind::Refused,
            libc::ECONNRESET | libc::EPIPE | libc::ECONNABORTED => return ErrorKind::Reset,
            libc::EMFILE | libc::ENFILE => return ErrorKind::TooManyOpenFiles,
            libc::EADDRNOTAVAIL | libc::EADDRINUSE => return ErrorKind::PortsExhausted,
            libc::ETIMEDOUT => return ErrorKind::Timeout,
            _ => {}
        }
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::Refused,
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::ConnectionAborted => ErrorKind::Reset,
        io::ErrorKind::UnexpectedEof => ErrorKind::Eof,
        io::ErrorKind::AddrInUse | io::ErrorKind::AddrNotAvailable => ErrorKind::PortsExhausted,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::InvalidData => ErrorKind::Protocol,
        _ => ErrorKind::Other,
    }
}

/// An I/O error's text as Go prints it: `connection refused`, without
/// Rust's capital letter and `(os error 111)` suffix.
pub(crate) fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => &s[..i],
        _ => &s[..],
    };
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    if let Some(c) = chars.next() {
        out.extend(c.to_lowercase());
    }
    out.push_str(chars.as_str());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_are_classified_and_worded_like_go() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        let f = Failure::io("dial tcp 127.0.0.1:1", "connect", &e);
        assert_eq!(f.kind, ErrorKind::Refused);
        assert_eq!(f.msg, "dial tcp 127.0.0.1:1: connect: connection refused");
        assert_eq!(
            io_kind(&io::Error::from_raw_os_error(libc::EMFILE)),
            ErrorKind::TooManyOpenFiles
        );
        assert_eq!(
            io_kind(&io::Error::from_raw_os_error(libc::EADDRNOTAVAIL)),
            ErrorKind::PortsExhausted
        );
        assert_eq!(
            io_kind(&io::Error::from_raw_os_error(libc::EPIPE)),
            ErrorKind::Reset
        );
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert_eq!(Failure::io("", "", &eof).msg, "EOF");
    }
}
