//! The engine against real sockets: the origin simulator in-process on
//! port 0, attacked in both models; a stall must show in the percentiles.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use volley_attack::{Jobs, Mode, Output, Settings, Stopper};
use volley_client::{Client, ClientConfig};
use volley_origin::{OriginConfig, RecipeSource};
use volley_pacer::{RatePacer, Shape};
use volley_report::{Metrics, Sink};
use volley_results::Record;
use volley_targets::Target;

/// Collects records in memory.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<Record>>>);

impl Output for Collect {
    fn record(&mut self, r: &Record) -> io::Result<()> {
        self.0.lock().unwrap().push(r.clone());
        Ok(())
    }
    fn flush(&mut self, _: Duration) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

async fn attack(url: &str, mode: Mode, duration: Duration) -> Vec<Record> {
    let client = Client::new(ClientConfig::default()).unwrap();
    let target = Arc::new(Target {
        method: "GET".into(),
        url: url.into(),
        headers: vec![],
        body: Default::default(),
    });
    let jobs = Jobs::eager(&client, &[target]).unwrap();
    let stopper = Stopper::default();
    let out = Collect::default();
    let thread =
        volley_attack::output::spawn(out.clone(), Duration::from_millis(100), stopper.clone())
            .unwrap();
    let settings = Settings {
        name: Arc::from("test"),
        mode,
        duration: Some(duration),
        max_requests: None,
    };
    let summary =
        volley_attack::run(settings, Arc::new(jobs), client, thread.handle(), stopper).await;
    let (_, result) = tokio::task::spawn_blocking(move || thread.join())
        .await
        .unwrap();
    result.unwrap();
    let records = out.0.lock().unwrap().clone();
    assert_eq!(summary.sent, records.len() as u64);
    records
}

fn open(rate: f64) -> Mode {
    Mode::Open {
        pacer: Arc::new(RatePacer::new(Shape::Constant(rate)).unwrap()),
        workers: 2,
        max_workers: 1000,
        window: Default::default(),
    }
}

fn metrics(records: &[Record]) -> Metrics {
    let mut m = Metrics::default();
    for r in records {
        m.add(r);
    }
    m.finish();
    m
}

async fn origin_with(recipe: &str) -> volley_origin::OriginHandle {
    let recipe = volley_origin::load_recipe(RecipeSource::Json(recipe.into()))
        .await
        .unwrap();
    volley_origin::spawn(OriginConfig {
        recipe: Some(recipe.into()),
        ..OriginConfig::default()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_model_sends_the_scheduled_requests_in_order() {
    let origin =
        origin_with(r#"{"body":"hello","stages":[{"at":0,"status":200,"latency":0}]}"#).await;
    let records = attack(
        &format!("{}/", origin.url()),
        open(200.0),
        Duration::from_secs(1),
    )
    .await;
    // 1 s at 200/s: exactly 200 hits, due at n/200 s.
    assert_eq!(records.len(), 200);
    let mut seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    seqs.sort();
    assert_eq!(seqs, (0..200).collect::<Vec<_>>());
    let first = records.iter().map(|r| r.timestamp).min().unwrap();
    for r in &records {
        // Intended times follow the schedule exactly.
        assert_eq!(
            (r.timestamp - first) as u64,
            r.seq * 5_000_000,
            "seq {}",
            r.seq
        );
        assert!(r.is_success(), "{r:?}");
        assert_eq!(r.bytes_in, 5);
        assert_eq!(&*r.url, format!("{}/", origin.url()).as_str());
    }
    assert_eq!(origin.counts().total, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_second_stall_shows_at_p99() {
    // The origin answers at once, except during [300ms, 1300ms) when every
    // request takes 1 s: the seed reports' stall after a 500.
    let origin = origin_with(
        r#"{"body":"ok","stages":[
            {"at":0,"status":200,"latency":0},
            {"at":"300ms","status":200,"latency":"1s"},
            {"at":"1300ms","status":200,"latency":0}]}"#,
    )
    .await;
    let records = attack(
        &format!("{}/", origin.url()),
        open(100.0),
        Duration::from_secs(2),
    )
    .await;
    let m = metrics(&records);
    assert_eq!(m.requests(), 200);
    let p99 = m.latency().quantile(0.99);
    assert!(p99 >= 1_000_000_000, "p99 {p99} ns");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queueing_in_the_generator_counts_from_the_intended_time() {
    // One worker, one connection; every request takes 50 ms but they are
    // due every 10 ms. A tool with coordinated omission would report 50 ms;
    // from the schedule, latencies grow as the queue does.
    let origin =
        origin_with(r#"{"body":"ok","stages":[{"at":0,"status":200,"latency":"50ms"}]}"#).await;
    let mode = Mode::Open {
        pacer: Arc::new(RatePacer::new(Shape::Constant(100.0)).unwrap()),
        workers: 1,
        max_workers: 1,
        window: Default::default(),
    };
    let records = attack(
        &format!("{}/", origin.url()),
        mode,
        Duration::from_millis(500),
    )
    .await;
    assert_eq!(records.len(), 50);
    let max = records.iter().map(|r| r.latency).max().unwrap();
    // The last of 50 requests cannot start before 49 × 50 ms of service.
    assert!(max >= 2_000_000_000, "max latency {max} ns");
    let lagged = records.iter().filter(|r| r.lag >= 100_000_000).count();
    assert!(lagged >= 30, "only {lagged} records show send lag");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_model_users_wait_for_responses_and_think() {
    let origin =
        origin_with(r#"{"body":"ok","stages":[{"at":0,"status":200,"latency":"20ms"}]}"#).await;
    let mode = Mode::Closed {
        users: Shape::Constant(5.0),
        think: Duration::from_millis(80),
    };
    let records = attack(&format!("{}/", origin.url()), mode, Duration::from_secs(1)).await;
    // 5 users, each at most one request per 100 ms: at most 50.
    assert!(records.len() <= 55, "{} requests", records.len());
    assert!(records.len() >= 20, "{} requests", records.len());
    assert!(records.iter().all(|r| r.latency >= 20_000_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_targets_are_measured_not_fatal() {
    // A port with nothing listening: every request is a refused error.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let records = attack(
        &format!("http://127.0.0.1:{port}/"),
        open(50.0),
        Duration::from_millis(200),
    )
    .await;
    assert_eq!(records.len(), 10);
    for r in &records {
        assert_eq!(r.code, 0);
        assert_eq!(r.error_kind, volley_results::ErrorKind::Refused, "{r:?}");
        assert!(!r.error.is_empty());
    }
}
