//! OriginSimulator's example recipes (`../shared/compat/origin_simulator/`)
//! served by volley's origin simulator and checked with volley's own
//! client: each recipe is loaded from its file and, separately, POSTed to
//! `/_admin/add_recipe` by the client; every route then answers with the
//! recipe's status, no sooner than its latency, with the body size it names.
//! Recipes whose `origin` is a public site get a local stand-in instead.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use volley_client::{Client, ClientConfig, Outcome};
use volley_origin::{OriginConfig, OriginHandle, QuickShape, RecipeSource};

const STAND_IN: &str = "<html>a local stand-in for a public origin</html>";

fn compat_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/compat/origin_simulator")
}

async fn get(client: &Client, url: &str) -> Outcome {
    let req = client.prepare("GET", url, &[], Default::default()).unwrap();
    client.session().execute(&req, Instant::now()).await
}

async fn post(client: &Client, url: &str, body: &str) -> Outcome {
    let req = client
        .prepare("POST", url, &[], body.to_string().into())
        .unwrap();
    client.session().execute(&req, Instant::now()).await
}

fn latency_of(stage: &Value) -> Duration {
    match &stage["latency"] {
        Value::Number(n) => Duration::from_millis(n.as_u64().unwrap_or(0)),
        Value::String(s) => {
            let first = s.split("..").next().unwrap();
            volley_origin::parse_duration(first).unwrap()
        }
        _ => Duration::ZERO,
    }
}

/// The body size a route's recipe promises, when not gzipped.
fn body_size(route: &Value) -> Option<u64> {
    if let Some(b) = route["body"].as_str() {
        return Some(b.len() as u64);
    }
    if let Some(r) = route["random_content"].as_str() {
        return Some(volley_origin::parse_size(r).unwrap());
    }
    route["origin"].as_str().map(|_| STAND_IN.len() as u64)
}

async fn check(client: &Client, origin: &OriginHandle, recipe: &Value, name: &str) {
    let routes: Vec<Value> = match recipe {
        Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    for route in &routes {
        let path = route["route"].as_str().unwrap_or("/*").replace('*', "");
        let path = if path.is_empty() { "/".into() } else { path };
        let url = format!("{}{}", origin.url(), path);
        let stage = &route["stages"][0];
        let want_status = stage["status"].as_u64().unwrap() as u16;
        let out = get(client, &url).await;
        assert_eq!(out.code, want_status, "{name} {path}: {out:?}");
        assert!(
            out.latency >= latency_of(stage),
            "{name} {path}: {:?} < {:?}",
            out.latency,
            latency_of(stage)
        );
        let gzip = route["headers"]["content-encoding"].as_str() == Some("gzip");
        match (want_status, body_size(route)) {
            (200, Some(n)) if !gzip => assert_eq!(out.bytes_in, n, "{name} {path}"),
            (200, Some(n)) => {
                // Served gzipped: some bytes, not the raw body.
                assert!(
                    out.bytes_in > 0 && out.bytes_in != n,
                    "{name} {path}: {out:?}"
                );
            }
            _ => assert!(out.bytes_in > 0, "{name} {path}: {out:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_compat_recipe_serves_what_it_says() {
    let client = Client::new(ClientConfig::default()).unwrap();
    // The stand-in for https://www.bbc.co.uk/… on any path.
    let stand_in = volley_origin::spawn(OriginConfig {
        quick: Some(QuickShape {
            body: Some(STAND_IN.into()),
            ..QuickShape::default()
        }),
        ..OriginConfig::default()
    })
    .await
    .unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(compat_dir())
        .expect("../shared/compat/origin_simulator beside the repo")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&file)
            .unwrap()
            .replace("https://www.bbc.co.uk", &stand_in.url());
        let recipe: Value = serde_json::from_str(&text).unwrap();

        // From the file (rewritten to the stand-in).
        let tmp = std::env::temp_dir().join(format!("volley-compat-{}-{name}", std::process::id()));
        std::fs::write(&tmp, &text).unwrap();
        let loaded = volley_origin::load_recipe(RecipeSource::File(tmp.clone()))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let origin = volley_origin::spawn(OriginConfig {
            recipe: Some(loaded.into()),
            ..OriginConfig::default()
        })
        .await
        .unwrap();
        check(&client, &origin, &recipe, &name).await;
        origin.shutdown().await.unwrap();

        // Through the admin API, POSTed by volley's client.
        let origin = volley_origin::spawn(OriginConfig::default()).await.unwrap();
        let out = post(
            &client,
            &format!("{}/_admin/add_recipe", origin.url()),
            &text,
        )
        .await;
        assert!(
            (200..300).contains(&out.code),
            "{name}: add_recipe answered {out:?}"
        );
        check(&client, &origin, &recipe, &name).await;
        origin.shutdown().await.unwrap();
        let _ = std::fs::remove_file(tmp);
    }
}
