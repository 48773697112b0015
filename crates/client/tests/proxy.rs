//! Proxies from the environment, as Go reads them: absolute-form requests
//! through an HTTP proxy, and a `CONNECT` tunnel with `-proxy-header`s for
//! HTTPS. Alone in its test binary because it sets environment variables.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use tokio::io::AsyncWriteExt;
use volley_client::{ClientConfig, TlsOptions};

#[tokio::test]
async fn requests_go_through_proxies_from_the_environment() {
    let pki = pki("proxy");
    let (tls_addr, _) = tls_server(&pki, &[b"h2", b"http/1.1"], false).await;
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = seen.clone();
    let (proxy, _) = raw_server(move |mut s| {
        let log = log.clone();
        async move {
            let Some(head) = read_head(&mut s).await else {
                return;
            };
            let head = String::from_utf8_lossy(&head).into_owned();
            log.lock().unwrap().push(head.clone());
            if head.starts_with("CONNECT ") {
                let _ = s
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                if let Ok(mut up) = tokio::net::TcpStream::connect(tls_addr).await {
                    let _ = tokio::io::copy_bidirectional(&mut s, &mut up).await;
                }
            } else {
                let _ = s
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nproxied")
                    .await;
            }
        }
    })
    .await;
    std::env::set_var("HTTP_PROXY", format!("http://{proxy}"));
    std::env::set_var("HTTPS_PROXY", format!("http://{proxy}"));
    std::env::set_var("NO_PROXY", "skip.invalid");

    let c = client(ClientConfig {
        keep_body: true,
        proxy_header: vec![("X-Proxy-Token".into(), "secret".into())],
        tls: TlsOptions {
            insecure: true,
            ..TlsOptions::default()
        },
        ..ClientConfig::default()
    });
    let o = get(&c, "http://volley.invalid/path?q=1").await;
    ok(&o);
    assert_eq!(&o.body[..], b"proxied");
    let o = get(&c, "https://volley.invalid/version").await;
    ok(&o);
    assert_eq!(&o.body[..], b"HTTP/2.0");

    let seen = seen.lock().unwrap().clone();
    assert!(
        seen[0].starts_with("GET http://volley.invalid/path?q=1 HTTP/1.1\r\n"),
        "{seen:?}"
    );
    assert!(
        seen[1].starts_with("CONNECT volley.invalid:443 HTTP/1.1\r\n"),
        "{seen:?}"
    );
    assert!(seen[1].contains("X-Proxy-Token: secret\r\n"), "{seen:?}");

    // NO_PROXY names are dialled directly: here, to a closed local port.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_addr = closed.local_addr().unwrap();
    drop(closed);
    let c = client(ClientConfig {
        connect_to: vec![("skip.invalid:80".into(), closed_addr.to_string())],
        ..ClientConfig::default()
    });
    let o = get(&c, "http://skip.invalid/").await;
    assert_eq!(o.error_kind, volley_client::ErrorKind::Refused, "{o:?}");
    assert_eq!(seen.len(), 2);
}
