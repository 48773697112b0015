//! The client against in-process servers over plain TCP: HTTP/1.1 framing,
//! keep-alive, HTTP/2 prior knowledge, misbehaving servers, redirects,
//! unix sockets and connect-to.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::*;
use tokio::io::AsyncWriteExt;
use volley_client::{ClientConfig, ErrorKind};

#[tokio::test]
async fn http1_content_length_and_keepalive_reuse() {
    let (addr, conns) = hyper_server().await;
    let c = client(ClientConfig::default());
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    let first = s.execute(&p, Instant::now()).await;
    ok(&first);
    assert_eq!((first.code, first.bytes_in, first.bytes_out), (200, 5, 0));
    assert!(first.phases.connecting > 0, "{first:?}");
    assert_eq!(first.body, Bytes::new(), "bodies are not kept unless asked");
    let second = s.execute(&p, Instant::now()).await;
    ok(&second);
    assert_eq!(second.phases.connecting, 0, "{second:?}");
    assert_eq!(second.bytes_in, 5);
    assert!(second.latency >= second.lag);
    assert_eq!(conns.get(), 1);
    let v = get(&c, &format!("http://{addr}/version")).await;
    ok(&v);
}

#[tokio::test]
async fn latency_runs_from_the_intended_time() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig::default());
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let intended = Instant::now() - Duration::from_millis(200);
    let o = c.session().execute(&p, intended).await;
    ok(&o);
    assert!(o.lag >= Duration::from_millis(200), "{o:?}");
    assert!(o.latency >= o.lag, "{o:?}");
}

#[tokio::test]
async fn chunked_responses_are_decoded_and_counted() {
    let (addr, conns) = raw_server(|mut s| async move {
        while read_head(&mut s).await.is_some() {
            let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n";
            if s.write_all(r).await.is_err() {
                return;
            }
        }
    })
    .await;
    let c = client(ClientConfig {
        keep_body: true,
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    for _ in 0..3 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(o.bytes_in, 11);
        assert_eq!(&o.body[..], b"hello world");
    }
    assert_eq!(conns.get(), 1, "chunked bodies keep the connection");
}

#[tokio::test]
async fn max_body_keeps_n_bytes_but_counts_all() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig {
        keep_body: true,
        max_body: Some(3),
        ..ClientConfig::default()
    });
    let o = get(&c, &format!("http://{addr}/big")).await;
    ok(&o);
    assert_eq!(o.bytes_in, 100_000);
    assert_eq!(&o.body[..], b"xxx");
    let c = client(ClientConfig {
        keep_body: true,
        max_body: Some(0),
        ..ClientConfig::default()
    });
    let o = get(&c, &format!("http://{addr}/big")).await;
    assert_eq!((o.bytes_in, o.body.len()), (100_000, 0));
}

#[tokio::test]
async fn error_statuses_are_recorded_with_their_status_line() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig::default());
    let o = get(&c, &format!("http://{addr}/404")).await;
    assert_eq!(o.code, 404);
    assert_eq!(o.error_kind, ErrorKind::Status);
    assert_eq!(o.error.as_deref(), Some("404 Not Found"));
    assert_eq!(o.bytes_in, 4);
}

#[tokio::test]
async fn request_bodies_go_out_plain_and_chunked() {
    let (addr, _) = hyper_server().await;
    for chunked in [false, true] {
        let c = client(ClientConfig {
            keep_body: true,
            chunked,
            ..ClientConfig::default()
        });
        let p = c
            .prepare(
                "POST",
                &format!("http://{addr}/echo"),
                &[("Content-Type".into(), "text/plain".into())],
                Bytes::from_static(b"payload"),
            )
            .unwrap();
        let o = c.session().execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(&o.body[..], b"POST payload");
        assert_eq!(o.bytes_out, 7);
    }
}

#[tokio::test]
async fn keepalive_off_opens_a_connection_per_request() {
    let (addr, conns) = hyper_server().await;
    let c = client(ClientConfig {
        keepalive: false,
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    for _ in 0..3 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert!(o.phases.connecting > 0);
    }
    assert_eq!(conns.get(), 3);
}

#[tokio::test]
async fn a_connection_closed_while_idle_is_replaced() {
    // Answers one request per connection, then closes without saying so.
    let (addr, conns) = raw_server(|mut s| async move {
        if read_head(&mut s).await.is_some() {
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                .await;
        }
    })
    .await;
    let c = client(ClientConfig::default());
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    for _ in 0..3 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(conns.get(), 3);
}

#[tokio::test]
async fn h2c_prior_knowledge_multiplexes_one_connection() {
    let (addr, conns) = hyper_server().await;
    let c = client(ClientConfig {
        h2c: true,
        keep_body: true,
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", &format!("http://{addr}/version"), &[], Bytes::new())
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (c, p) = (c.clone(), p.clone());
        tasks.push(tokio::spawn(async move {
            let mut s = c.session();
            let mut outs = Vec::new();
            for _ in 0..5 {
                outs.push(s.execute(&p, Instant::now()).await);
            }
            outs
        }));
    }
    for t in tasks {
        for o in t.await.unwrap() {
            ok(&o);
            assert_eq!(&o.body[..], b"HTTP/2.0");
        }
    }
    assert_eq!(conns.get(), 1);
    let p = c
        .prepare(
            "POST",
            &format!("http://{addr}/echo"),
            &[],
            Bytes::from_static(b"abc"),
        )
        .unwrap();
    let o = c.session().execute(&p, Instant::now()).await;
    ok(&o);
    assert_eq!(&o.body[..], b"POST abc");
    let o = get(&c, &format!("http://{addr}/404")).await;
    assert_eq!((o.code, o.error.as_deref()), (404, Some("404 Not Found")));
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let (addr, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
        tokio::time::sleep(Duration::from_secs(30)).await;
    })
    .await;
    let stall = Duration::from_millis(300);
    let c = client(ClientConfig {
        timeout: stall,
        ..ClientConfig::default()
    });
    let started = Instant::now();
    let o = get(&c, &format!("http://{addr}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Timeout, "{o:?}");
    assert_eq!(o.code, 0);
    assert!(o.latency >= stall, "{o:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let e = o.error.unwrap();
    assert!(e.starts_with(&format!("Get \"http://{addr}/\": ")), "{e}");
    assert!(
        e.contains("Client.Timeout exceeded while awaiting headers"),
        "{e}"
    );
}

#[tokio::test]
async fn an_endless_body_times_out_while_reading() {
    let (addr, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n")
            .await;
        let chunk = vec![b'x'; 16 * 1024];
        while s.write_all(&chunk).await.is_ok() {}
    })
    .await;
    let c = client(ClientConfig {
        timeout: Duration::from_millis(300),
        ..ClientConfig::default()
    });
    let o = get(&c, &format!("http://{addr}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Timeout, "{o:?}");
    assert!(o.error.unwrap().contains("reading body"));
    assert!(o.bytes_in > 0);
    assert!(o.phases.receiving > 0);
}

#[tokio::test]
async fn a_refused_connection_is_classified() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let c = client(ClientConfig::default());
    let o = get(&c, &format!("http://{addr}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Refused, "{o:?}");
    assert_eq!(
        o.error.as_deref(),
        Some(
            format!("Get \"http://{addr}/\": dial tcp {addr}: connect: connection refused")
                .as_str()
        )
    );
}

#[tokio::test]
async fn resets_garbage_and_truncated_bodies_are_classified() {
    let (reset, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
        #[allow(deprecated)] // blocking on drop is what a reset needs here
        let _ = s.set_linger(Some(Duration::ZERO));
        drop(s);
    })
    .await;
    let (garbage, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
        let _ = s.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
    })
    .await;
    let (truncated, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
            .await;
    })
    .await;
    let (empty, _) = raw_server(|mut s| async move {
        let _ = read_head(&mut s).await;
    })
    .await;
    let c = client(ClientConfig::default());
    let o = get(&c, &format!("http://{reset}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Reset, "{o:?}");
    assert!(o.error.unwrap().contains("connection reset by peer"));
    let o = get(&c, &format!("http://{garbage}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Protocol, "{o:?}");
    assert!(o.error.unwrap().contains("malformed HTTP response"));
    let o = get(&c, &format!("http://{truncated}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Eof, "{o:?}");
    assert_eq!(o.bytes_in, 9);
    assert!(o.error.unwrap().ends_with("unexpected EOF"));
    let o = get(&c, &format!("http://{empty}/")).await;
    assert_eq!(o.error_kind, ErrorKind::Eof, "{o:?}");
    assert!(o.error.unwrap().ends_with(": EOF"));
}

#[tokio::test]
async fn redirects_are_followed_recorded_or_capped() {
    let (addr, _) = hyper_server().await;
    let url = format!("http://{addr}/r/a");
    let c = client(ClientConfig {
        keep_body: true,
        ..ClientConfig::default()
    });
    let o = get(&c, &url).await;
    ok(&o);
    assert_eq!((o.code, &o.body[..]), (200, &b"done"[..]));

    let c = client(ClientConfig {
        redirects: -1,
        ..ClientConfig::default()
    });
    let o = get(&c, &url).await;
    ok(&o);
    assert_eq!(o.code, 302);

    let c = client(ClientConfig {
        redirects: 1,
        ..ClientConfig::default()
    });
    let o = get(&c, &url).await;
    assert_eq!(o.code, 0);
    assert_eq!(
        o.error.as_deref(),
        Some(format!("Get \"http://{addr}/r/b\": stopped after 1 redirects").as_str())
    );

    let c = client(ClientConfig {
        keep_body: true,
        ..ClientConfig::default()
    });
    let o = get(&c, &format!("http://{addr}/r/loop")).await;
    assert!(o.error.unwrap().contains("stopped after 10 redirects"));

    // 303 turns a POST into a GET without body.
    let p = c
        .prepare(
            "POST",
            &format!("http://{addr}/r/post"),
            &[],
            Bytes::from_static(b"x"),
        )
        .unwrap();
    let o = c.session().execute(&p, Instant::now()).await;
    ok(&o);
    assert_eq!(&o.body[..], b"GET ");
}

#[tokio::test]
async fn unix_sockets_carry_any_url() {
    let dir = std::env::temp_dir().join(format!("volley-client-unix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.sock");
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            tokio::spawn(serve_conn(s));
        }
    });
    let c = client(ClientConfig {
        unix_socket: Some(path.clone()),
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", "http://volley.invalid/", &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    for _ in 0..2 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(o.bytes_in, 5);
    }
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn connect_to_maps_host_and_port() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig {
        connect_to: vec![("volley.invalid:80".into(), addr.to_string())],
        ..ClientConfig::default()
    });
    let o = get(&c, "http://volley.invalid/").await;
    ok(&o);
    assert_eq!(o.phases.dns, 0);
}

#[tokio::test]
async fn names_resolve_and_bad_names_are_dns_errors() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig::default());
    let o = get(&c, &format!("http://localhost:{}/", addr.port())).await;
    ok(&o);
    // A resolver on 127.0.0.1 that knows no name (NXDOMAIN).
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let resolver = udp.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = udp.recv_from(&mut buf).await {
            let mut r = buf[..n].to_vec();
            r[2] = 0x81;
            r[3] = 0x83;
            let _ = udp.send_to(&r, from).await;
        }
    });
    let c = client(ClientConfig {
        resolvers: vec![resolver],
        ..ClientConfig::default()
    });
    let o = get(&c, "http://volley-test.invalid/").await;
    assert_eq!(o.error_kind, ErrorKind::Dns, "{o:?}");
    assert_eq!(
        o.error.as_deref(),
        Some(format!("Get \"http://volley-test.invalid/\": dial tcp: lookup volley-test.invalid on {resolver}: no such host").as_str())
    );
}

#[tokio::test]
async fn local_address_binding() {
    let (addr, _) = hyper_server().await;
    let c = client(ClientConfig {
        laddr: Some("127.0.0.1".parse().unwrap()),
        ..ClientConfig::default()
    });
    ok(&get(&c, &format!("http://{addr}/")).await);
}

#[tokio::test]
async fn bad_targets_are_errors_at_prepare() {
    let c = client(ClientConfig::default());
    assert!(c.prepare("GET", "ftp://x/", &[], Bytes::new()).is_err());
    assert!(c.prepare("G T", "http://x/", &[], Bytes::new()).is_err());
    let bad = [("X\nY".to_string(), "v".to_string())];
    assert!(c.prepare("GET", "http://x/", &bad, Bytes::new()).is_err());
    let bad = [("X".to_string(), "v\r\nInjected: 1".to_string())];
    let e = c
        .prepare("GET", "http://x/", &bad, Bytes::new())
        .unwrap_err();
    assert!(!e.to_string().contains('\n'));
}

#[tokio::test]
async fn connection_limits_per_host() {
    let (addr, conns) = hyper_server().await;
    let url = format!("http://{addr}/");
    // -max-connections=1: a second session waits for the first one's
    // connection, up to the timeout.
    let c = client(ClientConfig {
        max_connections: 1,
        timeout: Duration::from_millis(200),
        ..ClientConfig::default()
    });
    let p = c.prepare("GET", &url, &[], Bytes::new()).unwrap();
    let mut a = c.session();
    let mut b = c.session();
    ok(&a.execute(&p, Instant::now()).await);
    let o = b.execute(&p, Instant::now()).await;
    assert_eq!(o.error_kind, ErrorKind::Timeout, "{o:?}");
    assert!(o.error.unwrap().contains("waiting for connection"));
    assert!(o.phases.blocked > 0);
    drop(a);
    ok(&b.execute(&p, Instant::now()).await);
    assert_eq!(conns.get(), 2);

    // -connections=1: connections beyond one per host are not kept.
    let (addr, conns) = hyper_server().await;
    let c = client(ClientConfig {
        connections: 1,
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut a = c.session();
    let mut b = c.session();
    for _ in 0..2 {
        ok(&a.execute(&p, Instant::now()).await);
        ok(&b.execute(&p, Instant::now()).await);
    }
    assert_eq!(conns.get(), 3);
}

#[tokio::test]
async fn head_requests_and_bodiless_statuses_read_no_body() {
    let (addr, _) = raw_server(|mut s| async move {
        while let Some(h) = read_head(&mut s).await {
            let r: &[u8] = if h.starts_with(b"HEAD") {
                b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
            } else {
                b"HTTP/1.1 204 No Content\r\nContent-Length: 1000\r\n\r\n"
            };
            if s.write_all(r).await.is_err() {
                return;
            }
        }
    })
    .await;
    let c = client(ClientConfig {
        timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    });
    let mut s = c.session();
    for method in ["HEAD", "GET", "HEAD"] {
        let p = c
            .prepare(method, &format!("http://{addr}/"), &[], Bytes::new())
            .unwrap();
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(o.bytes_in, 0);
    }
}

#[test]
fn clients_and_sessions_cross_threads() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let c = client(ClientConfig::default());
    send_sync(&c);
    let p = c
        .prepare("GET", "http://127.0.0.1:1/", &[], Bytes::new())
        .unwrap();
    send_sync(&p);
    let mut s = c.session();
    send(&s);
    let fut = s.execute(&p, Instant::now());
    send(&fut);
}

/// One session reuses its timeout timer from request to request: a request
/// that starts after an earlier one still gets its whole timeout, and the
/// session works on after a timeout.
#[tokio::test]
async fn every_request_of_a_session_gets_its_whole_timeout() {
    // Requests counted over every connection: only the second one stalls.
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (addr, _) = raw_server(move |mut s| {
        let count = count.clone();
        async move {
            while read_head(&mut s).await.is_some() {
                let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                if n == 2 {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
                let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if s.write_all(r).await.is_err() {
                    return;
                }
            }
        }
    })
    .await;
    let timeout = Duration::from_millis(400);
    let c = client(ClientConfig {
        timeout,
        keep_body: true,
        ..ClientConfig::default()
    });
    let p = c
        .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    let first = s.execute(&p, Instant::now()).await;
    ok(&first);
    assert_eq!(&first.body[..], b"ok");
    // Well into the first request's timeout: the second must still get 400 ms.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let second = s.execute(&p, Instant::now()).await;
    assert_eq!(second.error_kind, ErrorKind::Timeout, "{second:?}");
    assert!(second.latency >= timeout, "timed out early: {second:?}");
    assert!(second.latency < Duration::from_secs(10), "{second:?}");
    // A new connection (the timed-out one is dropped), the same timer.
    let third = s.execute(&p, Instant::now()).await;
    ok(&third);
    let fourth = s.execute(&p, Instant::now()).await;
    ok(&fourth);
    assert_eq!(
        (&third.body[..], &fourth.body[..]),
        (&b"ok"[..], &b"ok"[..])
    );
}
