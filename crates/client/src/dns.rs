//! Name resolution: the system resolver (getaddrinfo on tokio's blocking
//! pool) or `-resolvers` DNS servers asked directly over UDP (A and AAAA),
//! with the `-dns-ttl` cache in front of both. Answers rotate, so that
//! connections spread over a name's addresses.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::UdpSocket;
use volley_results::ErrorKind;

use crate::error::Failure;

/// How long one UDP query waits before the next server is tried.
const QUERY_TIMEOUT: Duration = Duration::from_secs(3);

/// Addresses and when they were looked up.
type Cached = (Instant, Arc<[IpAddr]>);

pub(crate) struct Dns {
    /// `None`: forever; zero: no cache.
    ttl: Option<Duration>,
    resolvers: Vec<SocketAddr>,
    cache: Mutex<HashMap<String, Cached>>,
    next_id: AtomicUsize,
}

impl Dns {
    pub fn new(ttl: Option<Duration>, resolvers: Vec<SocketAddr>) -> Dns {
        let seed = std::process::id() as usize ^ Instant::now().elapsed().subsec_nanos() as usize;
        Dns {
            ttl,
            resolvers,
            cache: Mutex::new(HashMap::new()),
            next_id: AtomicUsize::new(seed),
        }
    }

    /// The addresses of `host` (not an IP literal).
    pub async fn lookup(&self, host: &str) -> Result<Arc<[IpAddr]>, Failure> {
        let caching = self.ttl != Some(Duration::ZERO);
        if caching {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, addrs)) = cache.get(host) {
                if self.ttl.is_none_or(|ttl| at.elapsed() < ttl) {
                    return Ok(addrs.clone());
                }
            }
        }
        let addrs: Arc<[IpAddr]> = if host.eq_ignore_ascii_case("localhost") {
            Arc::from([
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ])
        } else if self.resolvers.is_empty() {
            self.system(host).await?
        } else {
            self.udp(host).await?
        };
        if caching {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.insert(host.to_string(), (Instant::now(), addrs.clone()));
        }
        Ok(addrs)
    }

    async fn system(&self, host: &str) -> Result<Arc<[IpAddr]>, Failure> {
        let fail =
            |msg: String| Failure::new(ErrorKind::Dns, format!("dial tcp: lookup {host}: {msg}"));
        let found = tokio::net::lookup_host((host, 0)).await.map_err(|e| {
            let text = e.to_string();
            if text.contains("not known")
                || text.contains("No address associated")
                || text.contains("no such host")
            {
                fail("no such host".into())
            } else {
                fail(crate::error::io_text(&e))
            }
        })?;
        let mut addrs: Vec<IpAddr> = Vec::new();
        for a in found {
            if !addrs.contains(&a.ip()) {
                addrs.push(a.ip());
            }
        }
        if addrs.is_empty() {
            return Err(fail("no such host".into()));
        }
        Ok(addrs.into())
    }

    /// Asks each resolver in turn for A and AAAA records.
    async fn udp(&self, host: &str) -> Result<Arc<[IpAddr]>, Failure> {
        let mut last = None;
        for server in &self.resolvers {
            let fail = |msg: &str| {
                Failure::new(
                    ErrorKind::Dns,
                    format!("dial tcp: lookup {host} on {server}: {msg}"),
                )
            };
            let mut addrs = Vec::new();
            let mut nxdomain = false;
            let mut error = None;
            for qtype in [1u16, 28u16] {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed) as u16;
                match query(*server, host, qtype, id).await {
                    Ok(Answer::Addrs(a)) => addrs.extend(a),
                    Ok(Answer::NxDomain) => nxdomain = true,
                    Err(e) => error = Some(e),
                }
            }
            if !addrs.is_empty() {
                return Ok(addrs.into());
            }
            last = Some(match (nxdomain, error) {
                (true, _) | (false, None) => fail("no such host"),
                (false, Some(e)) => fail(&e),
            });
        }
        Err(last.unwrap_or_else(|| {
            Failure::new(
                ErrorKind::Dns,
                format!("dial tcp: lookup {host}: no resolvers"),
            )
        }))
    }
}

enum Answer {
    Addrs(Vec<IpAddr>),
    NxDomain,
}

async fn query(server: SocketAddr, host: &str, qtype: u16, id: u16) -> Result<Answer, String> {
    let packet = encode_query(host, qtype, id).ok_or_else(|| "invalid name".to_string())?;
    let bind: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let sock = UdpSocket::bind(bind)
        .await
        .map_err(|e| crate::error::io_text(&e))?;
    sock.connect(server)
        .await
        .map_err(|e| crate::error::io_text(&e))?;
    sock.send(&packet)
        .await
        .map_err(|e| crate::error::io_text(&e))?;
    let mut buf = [0u8; 1500];
    let deadline = tokio::time::Instant::now() + QUERY_TIMEOUT;
    loop {
        let n = match tokio::time::timeout_at(deadline, sock.recv(&mut buf)).await {
            Ok(r) => r.map_err(|e| crate::error::io_text(&e))?,
            Err(_) => return Err("i/o timeout".into()),
        };
        match decode_answer(&buf[..n], id, qtype) {
            Some(a) => return Ok(a),
            None => continue, // not our answer, or garbage: keep waiting
        }
    }
}

/// A standard recursive query for one name and type.
fn encode_query(host: &str, qtype: u16, id: u16) -> Option<Vec<u8>> {
    let mut p = Vec::with_capacity(18 + host.len());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in host.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return None;
        }
        p.push(label.len() as u8);
        p.extend_from_slice(label.as_bytes());
    }
    p.push(0);
    p.extend_from_slice(&qtype.to_be_bytes());
    p.extend_from_slice(&[0, 1]);
    Some(p)
}

/// The addresses of the given type in an answer with the given id; `None`
/// for a packet that is not a well-formed answer to our query.
fn decode_answer(p: &[u8], id: u16, qtype: u16) -> Option<Answer> {
    let u16_at =
        |i: usize| -> Option<u16> { Some(u16::from_be_bytes([*p.get(i)?, *p.get(i + 1)?])) };
    if u16_at(0)? != id || p.get(2)? & 0x80 == 0 {
        return None;
    }
    let rcode = p.get(3)? & 0x0f;
    if rcode == 3 {
        return Some(Answer::NxDomain);
    }
    if rcode != 0 {
        return Some(Answer::Addrs(Vec::new()));
    }
    let qd = u16_at(4)?;
    let an = u16_at(6)?;
    let mut i = 12;
    for _ in 0..qd {
        i = skip_name(p, i)? + 4;
    }
    let mut out = Vec::new();
    for _ in 0..an {
        i = skip_name(p, i)?;
        let rtype = u16_at(i)?;
        let len = usize::from(u16_at(i + 8)?);
        let data = p.get(i + 10..i + 10 + len)?;
        match (rtype, len) {
            (1, 4) if qtype == 1 => out.push(IpAddr::V4(Ipv4Addr::new(
                data[0], data[1], data[2], data[3],
            ))),
            (28, 16) if qtype == 28 => {
                let mut b = [0u8; 16];
                b.copy_from_slice(data);
                out.push(IpAddr::V6(Ipv6Addr::from(b)));
            }
            _ => {}
        }
        i += 10 + len;
    }
    Some(Answer::Addrs(out))
}

/// The index after a (possibly compressed) name at `i`.
fn skip_name(p: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let len = *p.get(i)?;
        if len == 0 {
            return Some(i + 1);
        }
        if len & 0xc0 == 0xc0 {
            return Some(i + 2);
        }
        i += 1 + usize::from(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_records_and_ignores_garbage() {
        let q = encode_query("example.com", 1, 7).unwrap();
        let mut r = q.clone();
        r[2] = 0x81;
        r[3] = 0x80;
        r[7] = 1; // one answer
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 1, 2, 3]);
        match decode_answer(&r, 7, 1) {
            Some(Answer::Addrs(a)) => assert_eq!(a, vec![IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3))]),
            _ => panic!("no answer"),
        }
        assert!(decode_answer(&r, 8, 1).is_none());
        assert!(decode_answer(&r[..20], 7, 1).is_none());
        assert!(decode_answer(&[], 7, 1).is_none());
        assert!(encode_query("a..b", 1, 1).is_none());
    }

    #[tokio::test]
    async fn asks_a_udp_resolver() {
        let server = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            while let Ok((n, from)) = server.recv_from(&mut buf).await {
                let mut r = buf[..n].to_vec();
                r[2] = 0x81;
                r[3] = 0x80;
                if u16::from_be_bytes([r[n - 4], r[n - 3]]) == 1 {
                    r[7] = 1;
                    r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 9]);
                }
                let _ = server.send_to(&r, from).await;
            }
        });
        let dns = Dns::new(None, vec![addr]);
        let a = dns.lookup("svc.test").await.unwrap();
        assert_eq!(&a[..], &[IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9))]);
    }
}
