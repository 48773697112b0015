//! The client over TLS against in-process servers with certificates made
//! in the test: root certificates, `-insecure`, mTLS, ALPN to HTTP/2 or
//! HTTP/1.1, and certificate files that cannot be used.

mod common;

use std::time::Instant;

use bytes::Bytes;
use common::*;
use volley_client::{Client, ClientConfig, ClientError, ErrorKind, TlsOptions};

fn tls_cfg(opts: TlsOptions) -> ClientConfig {
    ClientConfig {
        tls: opts,
        keep_body: true,
        ..ClientConfig::default()
    }
}

#[tokio::test]
async fn https_with_root_certs_negotiates_h2_and_shares_the_connection() {
    let pki = pki("h2");
    let (addr, conns) = tls_server(&pki, &[b"h2", b"http/1.1"], false).await;
    let c = client(tls_cfg(TlsOptions {
        root_certs: vec![pki.ca.clone()],
        ..TlsOptions::default()
    }));
    let p = c
        .prepare("GET", &format!("https://{addr}/version"), &[], Bytes::new())
        .unwrap();
    let mut s1 = c.session();
    let mut s2 = c.session();
    let o = s1.execute(&p, Instant::now()).await;
    ok(&o);
    assert_eq!(&o.body[..], b"HTTP/2.0");
    assert!(
        o.phases.tls_handshaking > 0 && o.phases.connecting > 0,
        "{o:?}"
    );
    let o = s2.execute(&p, Instant::now()).await;
    ok(&o);
    assert_eq!(
        o.phases.tls_handshaking, 0,
        "second session rides the shared connection"
    );
    assert_eq!(conns.get(), 1);
}

#[tokio::test]
async fn https_http1_when_http2_is_off_or_not_offered() {
    let pki = pki("h1");
    let (addr, _) = tls_server(&pki, &[b"h2", b"http/1.1"], false).await;
    let opts = TlsOptions {
        root_certs: vec![pki.ca.clone()],
        ..TlsOptions::default()
    };
    let c = client(ClientConfig {
        http2: false,
        ..tls_cfg(opts.clone())
    });
    let p = c
        .prepare(
            "GET",
            &format!("https://localhost:{}/version", addr.port()),
            &[],
            Bytes::new(),
        )
        .unwrap();
    let mut s = c.session();
    for _ in 0..2 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(&o.body[..], b"HTTP/1.1");
    }
    // A server that only speaks HTTP/1.1 answers an h2 offer with it.
    let (addr, _) = tls_server(&pki, &[b"http/1.1"], false).await;
    let c = client(tls_cfg(opts));
    let p = c
        .prepare("GET", &format!("https://{addr}/version"), &[], Bytes::new())
        .unwrap();
    let mut s = c.session();
    for _ in 0..2 {
        let o = s.execute(&p, Instant::now()).await;
        ok(&o);
        assert_eq!(&o.body[..], b"HTTP/1.1");
    }
}

#[tokio::test]
async fn untrusted_certificates_fail_unless_insecure() {
    let pki = pki("insecure");
    let (addr, _) = tls_server(&pki, &[b"http/1.1"], false).await;
    let url = format!("https://{addr}/");
    // System roots do not know the test CA.
    let o = get(&client(tls_cfg(TlsOptions::default())), &url).await;
    assert_eq!(o.error_kind, ErrorKind::Tls, "{o:?}");
    assert!(o.error.unwrap().contains("certificate"));
    let o = get(
        &client(tls_cfg(TlsOptions {
            insecure: true,
            ..TlsOptions::default()
        })),
        &url,
    )
    .await;
    ok(&o);
}

#[tokio::test]
async fn mtls_with_and_without_a_client_certificate() {
    let pki = pki("mtls");
    let (addr, _) = tls_server(&pki, &[b"h2", b"http/1.1"], true).await;
    let url = format!("https://{addr}/");
    for http2 in [true, false] {
        let with = TlsOptions {
            cert: Some(pki.client_cert.clone()),
            key: Some(pki.client_key.clone()),
            root_certs: vec![pki.ca.clone()],
            ..TlsOptions::default()
        };
        let o = get(
            &client(ClientConfig {
                http2,
                ..tls_cfg(with)
            }),
            &url,
        )
        .await;
        ok(&o);
        let without = TlsOptions {
            root_certs: vec![pki.ca.clone()],
            ..TlsOptions::default()
        };
        let o = get(
            &client(ClientConfig {
                http2,
                ..tls_cfg(without)
            }),
            &url,
        )
        .await;
        assert_eq!(o.error_kind, ErrorKind::Tls, "http2={http2}: {o:?}");
        assert_eq!(o.code, 0);
    }
}

#[tokio::test]
async fn the_key_may_sit_in_the_certificate_file() {
    let pki = pki("combined");
    let both = pki.dir.join("both.pem");
    let text = std::fs::read_to_string(&pki.client_cert).unwrap()
        + &std::fs::read_to_string(&pki.client_key).unwrap();
    std::fs::write(&both, text).unwrap();
    let cfg = tls_cfg(TlsOptions {
        cert: Some(both),
        ..TlsOptions::default()
    });
    cfg.validate().unwrap();
}

#[test]
fn unusable_certificate_files_are_named_in_one_line() {
    let pki = pki("bad");
    let garbage = pki.dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let missing = pki.dir.join("missing.pem");
    let cases = [
        TlsOptions {
            cert: Some(missing.clone()),
            key: Some(pki.client_key.clone()),
            ..TlsOptions::default()
        },
        TlsOptions {
            cert: Some(pki.client_cert.clone()),
            key: Some(missing.clone()),
            ..TlsOptions::default()
        },
        TlsOptions {
            cert: Some(garbage.clone()),
            key: Some(pki.client_key.clone()),
            ..TlsOptions::default()
        },
        TlsOptions {
            cert: Some(pki.client_cert.clone()),
            key: Some(garbage.clone()),
            ..TlsOptions::default()
        },
        TlsOptions {
            root_certs: vec![garbage.clone()],
            ..TlsOptions::default()
        },
        TlsOptions {
            root_certs: vec![missing.clone()],
            ..TlsOptions::default()
        },
    ];
    for opts in cases {
        let cfg = ClientConfig {
            tls: opts.clone(),
            ..ClientConfig::default()
        };
        let e = cfg.validate().unwrap_err();
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{msg}");
        let named = [&missing, &garbage]
            .iter()
            .any(|p| msg.contains(&p.display().to_string()));
        assert!(named, "{opts:?}: {msg}");
        assert!(matches!(
            Client::new(cfg),
            Err(ClientError::Read { .. } | ClientError::Pem { .. })
        ));
    }
    // A certificate with the wrong key.
    let other = pki.dir.join("other.key");
    std::fs::write(&other, rcgen::KeyPair::generate().unwrap().serialize_pem()).unwrap();
    let cfg = ClientConfig {
        tls: TlsOptions {
            cert: Some(pki.client_cert.clone()),
            key: Some(other),
            ..TlsOptions::default()
        },
        ..ClientConfig::default()
    };
    assert!(cfg.validate().is_err());
}
