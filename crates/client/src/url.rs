//! Target URLs: a small parser for the `http`/`https` URLs a load test
//! uses (no allocation beyond the parts kept), and the resolution of
//! redirect `Location`s against the URL that produced them.

use crate::error::ClientError;

/// The URL scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `http://`
    Http,
    /// `https://`
    Https,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// A parsed absolute URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub scheme: Scheme,
    /// Host name or IP literal, without IPv6 brackets.
    pub host: String,
    pub port: u16,
    /// `host[:port]` as written (brackets kept), the `Host` header value.
    pub authority: String,
    /// Path and query, percent-encoded where needed, never empty.
    pub path: String,
    /// `user:password` before the `@`, if any.
    pub userinfo: Option<String>,
}

impl Url {
    pub fn parse(raw: &str) -> Result<Url, ClientError> {
        let bad = |msg| ClientError::Url {
            url: raw.to_string(),
            msg,
        };
        let s = raw.trim();
        let (scheme, rest) = s
            .split_once("://")
            .ok_or_else(|| bad("missing scheme (want http:// or https://)"))?;
        let scheme = if scheme.eq_ignore_ascii_case("http") {
            Scheme::Http
        } else if scheme.eq_ignore_ascii_case("https") {
            Scheme::Https
        } else {
            return Err(bad("unsupported protocol scheme"));
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (auth, tail) = rest.split_at(end);
        let (userinfo, hostport) = match auth.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, auth),
        };
        let (host, port) =
            split_host_port_opt(hostport).ok_or_else(|| bad("malformed host or port"))?;
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if host
            .bytes()
            .any(|b| b <= b' ' || b == 0x7f || b"\"<>\\^`{|}".contains(&b))
        {
            return Err(bad("invalid character in host"));
        }
        let port = port.unwrap_or(scheme.default_port());
        let authority = hostport.strip_suffix(':').unwrap_or(hostport).to_string();
        let tail = tail.split('#').next().unwrap_or("");
        Ok(Url {
            scheme,
            host: host.to_string(),
            port,
            authority,
            path: encode_path(tail),
            userinfo,
        })
    }

    /// The URL as text.
    pub fn to_text(&self) -> String {
        format!("{}://{}{}", self.scheme.as_str(), self.authority, self.path)
    }

    /// Resolves a redirect `Location` against this URL.
    pub fn join(&self, loc: &str) -> Result<Url, ClientError> {
        let loc = loc.trim();
        let has_scheme = loc.find("://").is_some_and(|i| {
            loc[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        });
        if has_scheme {
            return Url::parse(loc);
        }
        if let Some(rest) = loc.strip_prefix("//") {
            return Url::parse(&format!("{}://{rest}", self.scheme.as_str()));
        }
        let base = format!("{}://{}", self.scheme.as_str(), self.authority);
        let path = if loc.starts_with('/') {
            loc.to_string()
        } else if loc.is_empty() {
            self.path.clone()
        } else if loc.starts_with('?') {
            let p = self.path.split('?').next().unwrap_or("/");
            format!("{p}{loc}")
        } else {
            let p = self.path.split('?').next().unwrap_or("/");
            let dir = &p[..p.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{loc}")
        };
        let mut u = Url::parse(&format!("{base}{}", remove_dots(&path)))?;
        u.userinfo.clone_from(&self.userinfo);
        Ok(u)
    }
}

/// Splits `host:port` (with `[v6]:port` literals); the port is required.
pub fn split_host_port(s: &str) -> Option<(&str, u16)> {
    match split_host_port_opt(s)? {
        (h, Some(p)) if !h.is_empty() => Some((h, p)),
        _ => None,
    }
}

/// Splits `host[:port]`; `None` when malformed.
fn split_host_port_opt(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" | ":" => Some((host, None)),
            p => Some((host, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match s.rsplit_once(':') {
        None => Some((s, None)),
        Some((h, "")) => Some((h, None)),
        Some((h, p)) => {
            if h.contains(':') {
                return None; // an IPv6 literal without brackets
            }
            Some((h, Some(p.parse().ok()?)))
        }
    }
}

/// Percent-encodes what cannot appear in a request line (spaces, controls,
/// non-ASCII); makes the path absolute.
fn encode_path(tail: &str) -> String {
    let mut out = String::with_capacity(tail.len() + 1);
    if !tail.starts_with('/') {
        out.push('/');
    }
    for &b in tail.as_bytes() {
        if b <= b' ' || b >= 0x7f || b == b'"' {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        } else {
            out.push(char::from(b));
        }
    }
    out
}

/// Removes `.` and `..` segments from a path (RFC 3986 §5.2.4), keeping
/// the query as is.
fn remove_dots(path: &str) -> String {
    let (p, q) = match path.find('?') {
        Some(i) => path.split_at(i),
        None => (path, ""),
    };
    if !p.split('/').any(|s| s == "." || s == "..") {
        return path.to_string();
    }
    let mut segs: Vec<&str> = Vec::new();
    let parts: Vec<&str> = p.split('/').collect();
    for (i, s) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *s {
            "." => {
                if last {
                    segs.push("");
                }
            }
            ".." => {
                if segs.len() > 1 {
                    segs.pop();
                }
                if last {
                    segs.push("");
                }
            }
            s => segs.push(s),
        }
    }
    let mut out = segs.join("/");
    if !out.starts_with('/') {
        out.insert(0, '/');
    }
    out.push_str(q);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parts_of_target_urls() {
        let u = Url::parse("https://user:pw@example.com:8443/a b?x=1#frag").unwrap();
        assert_eq!(u.scheme, Scheme::Https);
        assert_eq!((u.host.as_str(), u.port), ("example.com", 8443));
        assert_eq!(u.authority, "example.com:8443");
        assert_eq!(u.path, "/a%20b?x=1");
        assert_eq!(u.userinfo.as_deref(), Some("user:pw"));
        let u = Url::parse("HTTP://[::1]?q").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("::1", 80, "/?q")
        );
        assert_eq!(u.authority, "[::1]");
        for bad in [
            "example.com/",
            "ftp://x/",
            "http://",
            "http://h:99999/",
            "http://::1/",
            "http://a b/",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolves_redirect_locations() {
        let base = Url::parse("http://h:8080/a/b/c?q=1").unwrap();
        let t = |l: &str| base.join(l).unwrap().to_text();
        assert_eq!(t("https://other/x"), "https://other/x");
        assert_eq!(t("//other:81/y"), "http://other:81/y");
        assert_eq!(t("/root"), "http://h:8080/root");
        assert_eq!(t("d"), "http://h:8080/a/b/d");
        assert_eq!(t("../d?z"), "http://h:8080/a/d?z");
        assert_eq!(t("?z=2"), "http://h:8080/a/b/c?z=2");
        assert_eq!(split_host_port("[::1]:443"), Some(("::1", 443)));
        assert_eq!(split_host_port("h"), None);
    }
}
