//! The target type, its formats, defaults and errors, and the checks every
//! target passes whatever format it came in.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use bytes::Bytes;

/// One HTTP request blueprint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Target {
    /// `GET`, `POST`, ... (an HTTP token; case preserved).
    pub method: String,
    /// An absolute `http://` or `https://` URL with a host, as written.
    pub url: String,
    /// Headers in order: the `-header` defaults first, then the target's
    /// own. Names keep their case (vegeta does not canonicalise them,
    /// since some systems under test are case-sensitive); a name may
    /// repeat.
    pub headers: Vec<(String, String)>,
    /// The request body: the target's own, else the `-body` default.
    pub body: Bytes,
}

/// A targets format, as named by the `-format` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// vegeta's `http` format (the default).
    #[default]
    Http,
    /// vegeta's `json` format: one JSON object per line.
    Json,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "http" => Ok(Format::Http),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown targets format {other:?} (want http or json)"
            )),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Http => "http",
            Format::Json => "json",
        })
    }
}

/// What the `-header` and `-body` flags add to every target.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// Sent before each target's own headers (vegeta merges by appending:
    /// a name given both here and in a target is sent with both values).
    pub headers: Vec<(String, String)>,
    /// Body for targets that have none of their own.
    pub body: Option<Bytes>,
    /// Directory that relative `@file` body paths are resolved against;
    /// `None` means the current directory, as vegeta does.
    pub base_dir: Option<PathBuf>,
}

/// A targets input that cannot be used: one line, naming the line number
/// (`line` is 0 when no line is to blame, as for an empty input).
///
/// Displayed as `targets:3: bad header line "Foo" (want "Key: value")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetError {
    /// 1-based line number in the input; 0 when not about one line.
    pub line: usize,
    /// What is wrong, without the `targets:N:` prefix.
    pub message: String,
}

impl TargetError {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> TargetError {
        TargetError {
            line,
            message: message.into(),
        }
    }

    /// The error for an input with no targets at all.
    pub fn no_targets() -> TargetError {
        TargetError::new(0, "no targets to attack")
    }
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "targets: {}", self.message)
        } else {
            write!(f, "targets:{}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for TargetError {}

/// A `-header` flag value that is not `Key: value`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HeaderError(pub String);

/// Parses a `-header` flag value, `Key: value`, as vegeta does: split at
/// the first colon, both sides trimmed and non-empty; the name must also
/// be a valid HTTP token and the value free of control characters.
pub fn parse_header(s: &str) -> Result<(String, String), HeaderError> {
    let (name, value) = split_header(s).ok_or_else(|| {
        HeaderError(format!(
            "header {s:?} has a wrong format (want \"Key: value\")"
        ))
    })?;
    check_header(name, value).map_err(|why| HeaderError(format!("header {s:?}: {why}")))?;
    Ok((name.to_string(), value.to_string()))
}

/// `Key: value` split at the first colon, both trimmed; `None` if either
/// side is empty.
pub(crate) fn split_header(line: &str) -> Option<(&str, &str)> {
    let (name, value) = line.split_once(':')?;
    let (name, value) = (name.trim(), value.trim());
    (!name.is_empty() && !value.is_empty()).then_some((name, value))
}

/// An HTTP token (RFC 9110 `tchar`): what a method or header name may be.
pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Header name a token, value without control characters (tab allowed).
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), String> {
    if !is_token(name) {
        return Err(format!("bad header name {name:?}"));
    }
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(format!("control character in the value of header {name:?}"));
    }
    Ok(())
}

/// Checks a method is an HTTP token.
pub(crate) fn check_method(method: &str) -> Result<(), String> {
    if is_token(method) {
        Ok(())
    } else {
        Err(format!("bad method {method:?}"))
    }
}

/// Checks a URL is absolute `http`/`https` with a host, in the form the
/// client will parse it (`http::Uri`).
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("bad URL {url:?}: {e}"))?;
    match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => {}
        Some(s) => {
            return Err(format!(
                "bad URL {url:?}: scheme {s:?} is not http or https"
            ))
        }
        None => {
            return Err(format!(
                "bad URL {url:?}: not absolute (want http://host/...)"
            ))
        }
    }
    match uri.host() {
        Some(h) if !h.is_empty() => {}
        _ => return Err(format!("bad URL {url:?}: no host")),
    }
    // `http::Uri` accepts any digits as a port; a port must fit in 16 bits.
    let authority = uri.authority().map_or("", |a| a.as_str());
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    if let Some((_, port)) = host_port
        .rsplit_once(':')
        .filter(|_| !host_port.ends_with(']'))
    {
        if !port.is_empty() && port.parse::<u16>().is_err() {
            return Err(format!("bad URL {url:?}: bad port {port:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for good in [
            "http://example.com",
            "https://example.com/a/b?c=d&e=f#frag",
            "http://127.0.0.1:8080/",
            "http://[::1]:8080/x",
            "HTTPS://Example.COM/",
            "http://user:pass@example.com/",
            "http://localhost/%20encoded",
        ] {
            assert_eq!(check_url(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("", "bad URL"),
            ("/relative", "not absolute"),
            ("example.com/x", "bad URL"),
            ("ftp://example.com/", "scheme \"ftp\""),
            ("http://", "bad URL"),
            ("http:///path", "bad URL"),
            ("http://exa mple.com/", "bad URL"),
            ("http://example.com/a b", "bad URL"),
            ("http://example.com:99999999/", "bad URL"),
        ] {
            let err = check_url(bad).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("X-Id:  42 "),
            Ok(("X-Id".to_string(), "42".to_string()))
        );
        assert_eq!(
            parse_header("Host: a:8080"),
            Ok(("Host".to_string(), "a:8080".to_string()))
        );
        assert_eq!(
            parse_header("x-lower: v\tw"),
            Ok(("x-lower".to_string(), "v\tw".to_string()))
        );
        for (bad, why) in [
            ("NoColon", "wrong format"),
            (": value", "wrong format"),
            ("Key:", "wrong format"),
            ("Key:   ", "wrong format"),
            ("Bad Name: v", "bad header name"),
            ("Bad\"Name: v", "bad header name"),
            ("K: a\rb", "control character"),
            ("K: a\u{7f}", "control character"),
        ] {
            let err = parse_header(bad).expect_err(bad).to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    #[test]
    fn formats_and_errors() {
        assert_eq!("http".parse(), Ok(Format::Http));
        assert_eq!("json".parse(), Ok(Format::Json));
        assert!("xml".parse::<Format>().unwrap_err().contains("\"xml\""));
        assert_eq!(Format::Json.to_string(), "json");
        assert_eq!(
            TargetError::new(3, "bad header line \"Foo\" (want \"Key: value\")").to_string(),
            "targets:3: bad header line \"Foo\" (want \"Key: value\")"
        );
        assert_eq!(
            TargetError::no_targets().to_string(),
            "targets: no targets to attack"
        );
    }
}
