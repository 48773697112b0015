//! End-to-end tests of the origin simulator over real sockets on 127.0.0.1:
//! the OriginSimulator compatibility recipes (from file and through the admin
//! API), stages, quick shapes, the admin API, TLS, mTLS, HTTP/2, h2c and bad
//! input. Timing checks are lower bounds only (latency ≥ configured).
//!
//! Every request goes through [`fetch`] / [`request`], so the hyper client
//! here can later be swapped for volley's own client.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use volley_origin::{
    load_recipe, parse_recipe, spawn, Latency, OriginConfig, OriginHandle, QuickShape,
    RecipeSource, TlsConfig,
};

type Reply = (StatusCode, HeaderMap, Bytes);

/// Options of one test request.
#[derive(Default, Clone)]
struct Opts {
    method: Option<&'static str>,
    body: Option<Vec<u8>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    h2: bool,
}

/// GET `url` over HTTP/1.1.
async fn fetch(url: &str) -> Reply {
    request(url, Opts::default()).await
}

async fn post(url: &str, body: &str) -> Reply {
    request(
        url,
        Opts {
            method: Some("POST"),
            body: Some(body.as_bytes().to_vec()),
            ..Opts::default()
        },
    )
    .await
}

async fn request(url: &str, opts: Opts) -> Reply {
    let uri: http::Uri = url.parse().unwrap();
    let addr = format!("{}:{}", uri.host().unwrap(), uri.port_u16().unwrap());
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let req = http::Request::builder()
        .method(opts.method.unwrap_or("GET"))
        .uri(if opts.h2 {
            url.to_string()
        } else {
            uri.path_and_query().unwrap().to_string()
        })
        .header("host", &addr)
        .body(Full::new(Bytes::from(
            opts.body.clone().unwrap_or_default(),
        )))
        .unwrap();
    match opts.tls.clone() {
        Some(cfg) => {
            let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
            let tls = tokio_rustls::TlsConnector::from(cfg)
                .connect(name, tcp)
                .await
                .unwrap();
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            send(TokioIo::new(tls), req, h2).await
        }
        None => send(TokioIo::new(tcp), req, opts.h2).await,
    }
}

async fn send<IO>(io: IO, req: http::Request<Full<Bytes>>, h2: bool) -> Reply
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let resp = if h2 {
        let (mut s, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .unwrap();
        tokio::spawn(conn);
        s.send_request(req).await.unwrap()
    } else {
        let (mut s, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(conn);
        s.send_request(req).await.unwrap()
    };
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts.status, parts.headers, body)
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> &'a str {
    h.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn compat_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/compat/origin_simulator")
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-origin-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const STUB_PAGE: &str = "<html><body>local stand-in for a public origin</body></html>";

/// A local server standing in for the public sites named by recipes.
async fn stub_origin() -> OriginHandle {
    spawn(OriginConfig {
        quick: Some(QuickShape {
            body: Some(STUB_PAGE.into()),
            ..QuickShape::default()
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap()
}

/// Points every `origin` URL of a recipe at `base`, keeping the path.
fn rewrite_origins(json: &str, base: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    let fix = |o: &mut serde_json::Value| {
        if let Some(url) = o.get("origin").and_then(|u| u.as_str()) {
            let path = url
                .splitn(4, '/')
                .nth(3)
                .map(|p| format!("/{p}"))
                .unwrap_or_else(|| "/".into());
            o["origin"] = serde_json::Value::String(format!("{base}{path}"));
        }
    };
    match &mut v {
        serde_json::Value::Array(items) => items.iter_mut().for_each(fix),
        o => fix(o),
    }
    v.to_string()
}

/// A path that the route pattern matches.
fn sample_path(route: &str) -> String {
    match route.strip_suffix('*') {
        Some(prefix) => format!("{}sample/page", prefix.trim_end_matches('/')).replace("//", "/"),
        None => route.to_string(),
    }
}

/// Checks that `url_base` serves what `json` (a compat recipe) says at stage 0.
async fn check_serves(url_base: &str, json: &str) {
    let recipe = parse_recipe(json).unwrap();
    for route in &recipe.routes {
        let path = sample_path(&route.route);
        let path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        let stage = route.stages[0];
        let started = Instant::now();
        let (status, headers, body) = fetch(&format!("{url_base}{path}")).await;
        let took = started.elapsed();
        assert_eq!(status.as_u16(), stage.status, "{path}");
        let min = match stage.latency {
            Latency::Zero => Duration::ZERO,
            Latency::Fixed(d) => d,
            Latency::Range(lo, _) => lo,
        };
        assert!(
            took >= min,
            "{path}: answered in {took:?}, latency is {min:?}"
        );
        let gzip = route
            .headers
            .iter()
            .any(|(k, v)| k == "content-encoding" && v == "gzip");
        assert_eq!(header(&headers, "content-encoding") == "gzip", gzip);
        let body = if gzip { gunzip(&body) } else { body.to_vec() };
        let json_body = body.first() == Some(&b'{');
        if !gzip {
            let ct = header(&headers, "content-type");
            assert!(
                ct.starts_with(if json_body {
                    "application/json"
                } else {
                    "text/html"
                }),
                "{ct}"
            );
        }
        match stage.status {
            200 => {
                let raw = &route.raw;
                if let Some(size) = raw.get("random_content").and_then(|v| v.as_str()) {
                    assert_eq!(body.len() as u64, volley_origin::parse_size(size).unwrap());
                } else if let Some(b) = raw.get("body").and_then(|v| v.as_str()) {
                    assert_eq!(body, b.as_bytes());
                } else if raw.get("origin").is_some() {
                    assert_eq!(body, STUB_PAGE.as_bytes());
                }
            }
            304 => assert!(body.is_empty()),
            404 => assert_eq!(body, b"Not found"),
            s => assert_eq!(body, format!("Error {s}").as_bytes()),
        }
    }
}

fn compat_recipes() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(compat_dir())
        .expect("../shared/compat/origin_simulator/ beside the repo")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 12, "compat recipes missing: {}", out.len());
    out
}

#[tokio::test]
async fn compat_recipes_from_file() {
    let stub = stub_origin().await;
    for (name, json) in compat_recipes() {
        let json = rewrite_origins(&json, &stub.url());
        let path = temp_path(&name);
        std::fs::write(&path, &json).unwrap();
        let loaded = load_recipe(RecipeSource::File(path)).await.unwrap();
        let origin = spawn(OriginConfig {
            recipe: Some(loaded.into()),
            ..OriginConfig::default()
        })
        .await
        .unwrap();
        check_serves(&origin.url(), &json).await;
        origin.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn compat_recipes_through_admin_api() {
    let stub = stub_origin().await;
    let origin = spawn(OriginConfig::default()).await.unwrap();
    for (name, json) in compat_recipes() {
        let json = rewrite_origins(&json, &stub.url());
        let (status, headers, body) =
            post(&format!("{}/_admin/add_recipe", origin.url()), &json).await;
        assert_eq!(status, 201, "{name}: {body:?}");
        assert!(header(&headers, "content-type").starts_with("application/json"));
        check_serves(&origin.url(), &json).await;
        // Back to a clean slate so routes of one recipe do not shadow the next.
        let (status, _, body) = fetch(&format!("{}/_admin/restart", origin.url())).await;
        assert_eq!((status.as_u16(), &body[..]), (200, &b"ok!"[..]));
    }
}

#[tokio::test]
async fn default_recipe_like_origin_simulator() {
    let origin = spawn(OriginConfig::default()).await.unwrap();
    let started = Instant::now();
    let (status, headers, body) = fetch(&format!("{}/anything", origin.url())).await;
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), "gzip");
    assert_eq!(header(&headers, "cache-control"), "public, max-age=30");
    assert!(String::from_utf8(gunzip(&body)).unwrap().contains("<html"));
    let (_, _, routes) = fetch(&format!("{}/_admin/routes", origin.url())).await;
    assert_eq!(routes, "/*");
    let (_, _, rs) = fetch(&format!("{}/_admin/routes_status", origin.url())).await;
    assert_eq!(rs, "/* 200 100");
}

#[tokio::test]
async fn admin_api() {
    let origin = spawn(OriginConfig::default()).await.unwrap();
    let base = origin.url();
    let (s, h, b) = fetch(&format!("{base}/_admin/status")).await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"ok!"[..]));
    assert_eq!(header(&h, "content-type"), "text/plain; charset=utf-8");

    let recipe = r#"[{"route":"/a","body":"A","stages":[{"at":0,"status":200,"latency":0}]},
                     {"route":"/b*","body":"{\"b\":1}","stages":[{"at":0,"status":503,"latency":"10ms..20ms"}]}]"#;
    let (s, _, b) = post(&format!("{base}/_admin/add_recipe"), recipe).await;
    assert_eq!(s, 201);
    let all: serde_json::Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        all.as_array().unwrap().len(),
        3,
        "merged with the default /*: {all}"
    );

    let (_, _, b) = fetch(&format!("{base}/_admin/routes")).await;
    assert_eq!(b, "/*\n/a\n/b*");
    let (_, _, b) = fetch(&format!("{base}/_admin/routes_status")).await;
    assert_eq!(b, "/* 200 100\n/a 200 0\n/b* 503 10..20");
    let (_, h, b) = fetch(&format!("{base}/_admin/current_recipe")).await;
    assert!(header(&h, "content-type").starts_with("application/json"));
    let cur: serde_json::Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(cur[1]["route"], "/a");
    assert_eq!(cur[1]["body"], "A");
    assert!(cur[1]["origin"].is_null());

    fetch(&format!("{base}/_admin/clear_current_count")).await;
    assert_eq!(fetch(&format!("{base}/a")).await.2, "A");
    assert_eq!(fetch(&format!("{base}/a")).await.2, "A");
    let (s, h, b) = fetch(&format!("{base}/b/c")).await;
    assert_eq!((s.as_u16(), &b[..]), (503, &b"Error 503"[..]));
    assert!(header(&h, "content-type").starts_with("text/html"));
    let (_, _, b) = fetch(&format!("{base}/_admin/current_count")).await;
    let c: serde_json::Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(c["total_requests"], 3);
    assert_eq!(c["200"], 2);
    assert_eq!(c["503"], 1);
    assert_eq!(origin.counts().total, 3);

    let (s, _, b) = fetch(&format!("{base}/_admin/counts?bin=1s")).await;
    assert_eq!(s, 200);
    let bins: serde_json::Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(bins["bin_ms"], 1000);
    let sum: u64 = bins["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["total"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 3);
    let (s, _, _) = fetch(&format!("{base}/_admin/counts?bin=banana")).await;
    assert_eq!(s, 400);

    let (s, h, b) = fetch(&format!("{base}/metrics")).await;
    assert_eq!(s, 200);
    assert!(header(&h, "content-type").starts_with("text/plain"));
    let text = String::from_utf8_lossy(&b);
    assert!(
        text.contains("volley_origin_requests_total{status=\"200\"} 2"),
        "{text}"
    );

    let (s, _, b) = fetch(&format!("{base}/_admin/clear_current_count")).await;
    assert_eq!((s.as_u16(), &b[..]), (200, &br#"{"cleared": "yes"}"#[..]));
    assert_eq!(origin.counts().total, 0);

    let (s, _, _) = fetch(&format!("{base}/_admin/nope")).await;
    assert_eq!(s, 404);

    fetch(&format!("{base}/_admin/restart")).await;
    let (_, _, b) = fetch(&format!("{base}/_admin/routes")).await;
    assert_eq!(b, "/*");
}

#[tokio::test]
async fn malformed_recipe_keeps_the_previous_one() {
    let origin = spawn(OriginConfig::default()).await.unwrap();
    let base = origin.url();
    let good = r#"{"body":"kept","stages":[{"at":0,"status":200,"latency":0}]}"#;
    assert_eq!(
        post(&format!("{base}/_admin/add_recipe"), good).await.0,
        201
    );
    for (bad, field) in [
        (
            r#"{"body":"x","stages":[{"at":0,"status":200,"latency":0},{"at":"1s","status":200,"latency":"10 sec"}]}"#,
            "stages[1].latency: bad duration \"10 sec\"",
        ),
        (
            r#"{"random_content":"500mb","stages":[{"status":200}]}"#,
            "random_content:",
        ),
        (
            r#"{"body":"x","stages":[{"status":200,"latency":"2h"}]}"#,
            "stages[0].latency:",
        ),
        (
            r#"[{"body":"x","stages":[{"status":200}]},{"body":"y","stages":[{"status":"abc"}]}]"#,
            "[1].stages[0].status:",
        ),
        ("{not json", "not valid JSON"),
    ] {
        let (s, _, b) = post(&format!("{base}/_admin/add_recipe"), bad).await;
        assert_eq!(s, 400, "{bad}");
        let msg = String::from_utf8_lossy(&b);
        assert!(msg.contains(field), "{msg} should name {field}");
        assert_eq!(fetch(&format!("{base}/x")).await.2, "kept");
    }
}

#[tokio::test]
async fn stages_change_over_time() {
    let recipe = parse_recipe(
        r#"[{"route":"/s","body":"up","stages":[
              {"at":0,"status":200,"latency":0},
              {"at":"300ms","status":503,"latency":"50ms"}]},
            {"route":"/later","body":"x","stages":[{"at":"1h","status":200}]}]"#,
    )
    .unwrap();
    let origin = spawn(OriginConfig {
        recipe: Some(recipe),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let base = origin.url();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let started = Instant::now();
    let (s, _, b) = fetch(&format!("{base}/s")).await;
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert_eq!((s.as_u16(), &b[..]), (503, &b"Error 503"[..]));
    // Before its first stage a route answers 406, as OriginSimulator does.
    let (s, _, b) = fetch(&format!("{base}/later")).await;
    assert_eq!(s, 406);
    assert_eq!(
        b,
        "Recipe not set at /later, please POST a recipe for this route to /_admin/add_recipe"
    );
    // A path no route matches: 406 too.
    assert_eq!(fetch(&format!("{base}/none")).await.0, 406);
}

#[tokio::test]
async fn stage_timing_restarts_with_restart() {
    let recipe =
        parse_recipe(r#"{"body":"ok","stages":[{"at":0,"status":200},{"at":"5s","status":500}]}"#)
            .unwrap();
    let origin = spawn(OriginConfig {
        recipe: Some(recipe),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    // Far from the 5 s boundary: these are not timing assertions.
    assert_eq!(fetch(&format!("{}/", origin.url())).await.0, 200);
    fetch(&format!("{}/_admin/restart", origin.url())).await;
    assert_eq!(fetch(&format!("{}/", origin.url())).await.0, 200);
}

#[tokio::test]
async fn unreachable_origin_is_a_clear_error() {
    // Refused connection.
    let refused = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/news", refused.local_addr().unwrap());
    drop(refused);
    let json = format!(r#"{{"origin":"{url}","stages":[{{"at":0,"status":200}}]}}"#);
    let err = load_recipe(RecipeSource::Json(json.clone()))
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("origin: cannot fetch origin"), "{msg}");
    assert!(msg.contains(&url), "{msg}");

    // Through the API: an error status, and the server keeps serving.
    let origin = spawn(OriginConfig::default()).await.unwrap();
    let (s, _, b) = post(&format!("{}/_admin/add_recipe", origin.url()), &json).await;
    assert_eq!(s, 502);
    assert!(String::from_utf8_lossy(&b).contains(&url));

    // A server that accepts and never answers: bounded by FETCH_TIMEOUT.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", silent.local_addr().unwrap());
    let keep = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let json = format!(r#"[{{"route":"/x","origin":"{url}","stages":[{{"status":200}}]}}]"#);
    let err = load_recipe(RecipeSource::Json(json)).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("[0].origin: cannot fetch origin"), "{msg}");
    assert!(msg.contains("no answer within"), "{msg}");
    keep.abort();

    // Missing file: names the path.
    let err = load_recipe(RecipeSource::File("/nonexistent/r.json".into()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/r.json"));
}

#[tokio::test]
async fn gzip_origin_is_served_gzipped() {
    let stub = stub_origin().await;
    let json = format!(
        r#"{{"route":"/news","origin":"{}/news","stages":[{{"at":0,"status":200,"latency":0}}],"headers":{{"content-encoding":"gzip","x-extra":"1"}}}}"#,
        stub.url()
    );
    let origin = spawn(OriginConfig {
        recipe: Some(parse_recipe(&json).unwrap()),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let (s, h, b) = fetch(&format!("{}/news", origin.url())).await;
    assert_eq!(s, 200);
    assert_eq!(header(&h, "content-encoding"), "gzip");
    assert_eq!(header(&h, "x-extra"), "1");
    assert_eq!(gunzip(&b), STUB_PAGE.as_bytes());
}

#[tokio::test]
async fn quick_shapes() {
    let quick = |q: QuickShape| async move {
        spawn(OriginConfig {
            quick: Some(q),
            ..OriginConfig::default()
        })
        .await
        .unwrap()
    };
    let o = quick(QuickShape {
        status: 404,
        latency: Latency::parse("100ms").unwrap(),
        ..QuickShape::default()
    })
    .await;
    let started = Instant::now();
    let (s, _, b) = fetch(&format!("{}/x", o.url())).await;
    assert!(started.elapsed() >= Duration::from_millis(100));
    assert_eq!((s.as_u16(), &b[..]), (404, &b"Not found"[..]));

    let o = quick(QuickShape {
        body: Some("hello".into()),
        ..QuickShape::default()
    })
    .await;
    let (s, h, b) = fetch(&format!("{}/", o.url())).await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"hello"[..]));
    assert_eq!(header(&h, "content-type"), "text/plain; charset=utf-8");

    let o = quick(QuickShape {
        length: Some(4096),
        ..QuickShape::default()
    })
    .await;
    let (_, _, b1) = fetch(&format!("{}/", o.url())).await;
    let (_, _, b2) = fetch(&format!("{}/other", o.url())).await;
    assert_eq!(b1.len(), 4096);
    assert_eq!(b1, b2, "generated once");
    assert!(b1.iter().all(|c| c.is_ascii_lowercase()));

    let o = quick(QuickShape {
        random_content: Some(volley_origin::parse_size("256kb").unwrap()),
        ..QuickShape::default()
    })
    .await;
    let (_, _, b) = fetch(&format!("{}/", o.url())).await;
    assert_eq!(b.len(), 256 * 1024);

    // Contradictions and limits are refused.
    for bad in [
        QuickShape {
            body: Some("a".into()),
            length: Some(3),
            ..QuickShape::default()
        },
        QuickShape {
            length: Some(200 * 1024 * 1024),
            ..QuickShape::default()
        },
        QuickShape {
            status: 42,
            ..QuickShape::default()
        },
    ] {
        let r = spawn(OriginConfig {
            quick: Some(bad),
            ..OriginConfig::default()
        })
        .await;
        assert!(matches!(r, Err(volley_origin::OriginError::Config(_))));
    }
}

/// Raw bytes in, raw bytes out: the fast path's edge cases.
async fn raw(addr: std::net::SocketAddr, bytes: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    s.shutdown().await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn http1_edge_cases_never_break_the_server() {
    let o = spawn(OriginConfig {
        quick: Some(QuickShape {
            body: Some("hello".into()),
            ..QuickShape::default()
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let a = o.addr();
    // Pipelined requests, answered in order.
    let out = raw(
        a,
        b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 2, "{out}");
    // HEAD: no body, same length.
    let out = raw(
        a,
        b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(
        out.contains("content-length: 5") && !out.contains("hello"),
        "{out}"
    );
    // HTTP/1.0 closes after answering.
    let out = raw(a, b"GET / HTTP/1.0\r\n\r\n").await;
    assert!(out.ends_with("hello"), "{out}");
    // POST bodies, fixed length and chunked.
    let out = raw(a, b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert_eq!(out.matches("hello").count(), 2, "{out}");
    let out = raw(
        a,
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    )
    .await;
    assert!(out.contains("200 OK") && out.contains("hello"), "{out}");
    // Admin API after a fast-path request on the same connection.
    let out = raw(
        a,
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /_admin/status HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    .await;
    assert!(out.contains("hello") && out.contains("ok!"), "{out}");
    // Garbage.
    for junk in [
        &b"\x00\x01\x02\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET / HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n",
        &[b'A'; 100_000][..],
    ] {
        let _ = raw(a, junk).await;
    }
    let mut huge = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..200 {
        huge.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
    }
    huge.extend_from_slice(b"\r\n");
    let _ = raw(a, &huge).await;
    // Still serving.
    assert_eq!(fetch(&format!("{}/", o.url())).await.2, "hello");
}

fn certs() -> (
    PathBuf,
    PathBuf,
    PathBuf,
    Arc<rustls::ClientConfig>,
    Arc<rustls::ClientConfig>,
) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let srv_key = rcgen::KeyPair::generate().unwrap();
    let srv = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&srv_key, &ca, &ca_key)
        .unwrap();
    let cli_key = rcgen::KeyPair::generate().unwrap();
    let cli = rcgen::CertificateParams::new(vec!["client".to_string()])
        .unwrap()
        .signed_by(&cli_key, &ca, &ca_key)
        .unwrap();
    let tag = format!("{:?}", std::thread::current().id()).replace(['(', ')'], "");
    let (cert, key, ca_path) = (
        temp_path(&format!("srv{tag}.pem")),
        temp_path(&format!("srv{tag}.key")),
        temp_path(&format!("ca{tag}.pem")),
    );
    std::fs::write(&cert, srv.pem()).unwrap();
    std::fs::write(&key, srv_key.serialize_pem()).unwrap();
    std::fs::write(&ca_path, ca.pem()).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = || {
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots.clone())
    };
    let mut anon = builder().with_no_client_auth();
    anon.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let key_der = rustls_pki_types::PrivateKeyDer::try_from(cli_key.serialize_der()).unwrap();
    let mut with_cert = builder()
        .with_client_auth_cert(vec![cli.der().clone()], key_der)
        .unwrap();
    with_cert.alpn_protocols = vec![b"http/1.1".to_vec()];
    (cert, key, ca_path, Arc::new(anon), Arc::new(with_cert))
}

#[tokio::test]
async fn tls_h2_and_mtls() {
    let (cert, key, ca, anon, with_cert) = certs();
    let quick = Some(QuickShape {
        body: Some("hello".into()),
        ..QuickShape::default()
    });
    let o = spawn(OriginConfig {
        quick: quick.clone(),
        tls: Some(TlsConfig {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: None,
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    // ALPN offers h2: served over HTTP/2.
    let (s, _, b) = request(
        &format!("{}/", o.url()),
        Opts {
            tls: Some(anon.clone()),
            ..Opts::default()
        },
    )
    .await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"hello"[..]));
    // HTTP/1.1 over TLS (fast path), admin API included.
    for path in ["/", "/_admin/status"] {
        let (s, _, _) = request(
            &format!("{}{path}", o.url()),
            Opts {
                tls: Some(with_cert.clone()),
                ..Opts::default()
            },
        )
        .await;
        assert_eq!(s, 200);
    }
    assert_eq!(o.counts().total, 2);

    // mTLS: a client without a certificate is refused, one with is served.
    let o = spawn(OriginConfig {
        quick,
        tls: Some(TlsConfig {
            cert,
            key,
            client_ca: Some(ca),
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let (s, _, b) = request(
        &format!("{}/", o.url()),
        Opts {
            tls: Some(with_cert),
            ..Opts::default()
        },
    )
    .await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"hello"[..]));
    let tcp = tokio::net::TcpStream::connect(o.addr()).await.unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let refused = async {
        let mut tls = tokio_rustls::TlsConnector::from(anon)
            .connect(name, tcp)
            .await?;
        tls.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await?;
        let mut buf = [0u8; 64];
        let n = tls.read(&mut buf).await?;
        Ok::<usize, std::io::Error>(n)
    }
    .await;
    assert!(
        !matches!(refused, Ok(n) if n > 0),
        "served without a client certificate"
    );

    // Bad TLS files: a clear error naming the file.
    let err = spawn(OriginConfig {
        tls: Some(TlsConfig {
            cert: "/nonexistent/c.pem".into(),
            key: "/nonexistent/k.pem".into(),
            client_ca: None,
        }),
        ..OriginConfig::default()
    })
    .await
    .err()
    .unwrap();
    assert!(err.to_string().contains("/nonexistent/c.pem"), "{err}");
}

#[tokio::test]
async fn h2c_prior_knowledge() {
    let o = spawn(OriginConfig {
        quick: Some(QuickShape {
            body: Some("hello".into()),
            ..QuickShape::default()
        }),
        h2c: true,
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let h2 = Opts {
        h2: true,
        ..Opts::default()
    };
    let (s, _, b) = request(&format!("{}/", o.url()), h2.clone()).await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"hello"[..]));
    let (s, _, _) = request(&format!("{}/_admin/status", o.url()), h2).await;
    assert_eq!(s, 200);
    // HTTP/1.1 on the same listener.
    assert_eq!(fetch(&format!("{}/", o.url())).await.2, "hello");
}

#[tokio::test]
async fn hyper_only_mode_serves_the_same() {
    let o = spawn(OriginConfig {
        quick: Some(QuickShape {
            body: Some("hello".into()),
            ..QuickShape::default()
        }),
        hyper_only: true,
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let (s, h, b) = fetch(&format!("{}/", o.url())).await;
    assert_eq!((s.as_u16(), &b[..]), (200, &b"hello"[..]));
    assert_eq!(header(&h, "content-type"), "text/plain; charset=utf-8");
}

#[tokio::test]
async fn many_waiting_connections_use_timers() {
    // A small, bounded version of the 10,000-connection bench: 200
    // connections each waiting 200 ms, all answered.
    let o = spawn(OriginConfig {
        quick: Some(QuickShape {
            latency: Latency::parse("200ms").unwrap(),
            body: Some("x".into()),
            ..QuickShape::default()
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let url = format!("{}/", o.url());
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..200 {
        let url = url.clone();
        set.spawn(async move { fetch(&url).await.0 });
    }
    while let Some(s) = set.join_next().await {
        assert_eq!(s.unwrap(), 200);
    }
    assert_eq!(o.counts().total, 200);
    o.shutdown().await.unwrap();
}
