//! `volley demo`: the whole job on one machine with nothing else installed —
//! starts the embedded origin simulator on 127.0.0.1 (a port of its own),
//! attacks it at a fixed rate, and prints vegeta's text report and a latency
//! histogram. Useful as a first run and as a smoke test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use volley_attack::{Jobs, Mode, Output, Settings, Stopper};
use volley_origin::{OriginConfig, RecipeSource};
use volley_report::{Histogram, Sink};
use volley_results::Record;

use crate::flags::{self, Kind, Spec};
use crate::CliError;

const USAGE: &str = "Usage: volley demo [flags]

Starts the origin simulator in-process (a 'hello' body, 1–5 ms latency) and
attacks it, then prints the report. Example:
  volley demo -rate 2000 -duration 5s";

const SPECS: &[Spec] = &[
    Spec::new("rate", Kind::Value, "1000/1s", "Requests per second"),
    Spec::new("duration", Kind::Value, "5s", "Attack duration"),
];

#[derive(Clone, Default)]
struct Collect(Arc<Mutex<(volley_report::Metrics, Option<Histogram>)>>);

impl Output for Collect {
    fn record(&mut self, r: &Record) -> std::io::Result<()> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0.add(r);
        if let Some(h) = &mut g.1 {
            h.add(r);
        }
        Ok(())
    }
    fn flush(&mut self, _: Duration) -> std::io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => CliError::Usage(e.to_string()),
    })?;
    let rate = volley_pacer::parse_rate(raw.value("rate").unwrap_or("1000/1s"))
        .map_err(|e| CliError::Usage(format!("flag -rate: {e}")))?;
    if rate == 0.0 || rate.is_infinite() {
        return Err(CliError::Usage(
            "flag -rate: the demo needs a finite rate".into(),
        ));
    }
    let duration = raw
        .parsed("duration", volley_pacer::parse_duration)
        .map_err(|e| CliError::Usage(e.to_string()))?
        .unwrap_or(Duration::from_secs(5));
    if duration.is_zero() || duration > Duration::from_secs(600) {
        return Err(CliError::Usage(
            "flag -duration: between 1ms and 10m".into(),
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    runtime.block_on(async move {
        let recipe = r#"{"body":"hello","stages":[{"at":0,"status":200,"latency":"1ms..5ms"}]}"#;
        let recipe = volley_origin::load_recipe(RecipeSource::Json(recipe.into()))
            .await
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        let origin = volley_origin::spawn(OriginConfig {
            recipe: Some(recipe.into()),
            ..OriginConfig::default()
        })
        .await
        .map_err(|e| CliError::Runtime(format!("starting the origin simulator: {e}")))?;
        let url = format!("{}/", origin.url());
        eprintln!(
            "volley demo: origin simulator on {url} (1–5 ms), attacking at {rate}/s for {}",
            volley_pacer::format_duration(duration)
        );
        let client = volley_client::Client::new(volley_client::ClientConfig::default())
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        let target = Arc::new(volley_targets::Target {
            method: "GET".into(),
            url: url.clone(),
            headers: vec![],
            body: Default::default(),
        });
        let jobs = Jobs::eager(&client, &[target]).map_err(|e| CliError::Runtime(e.to_string()))?;
        let hist = Histogram::parse("[0,1ms,2ms,3ms,4ms,5ms,6ms,10ms,20ms]")
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        let out = Collect(Arc::new(Mutex::new((Default::default(), Some(hist)))));
        let stopper = Stopper::default();
        let thread =
            volley_attack::output::spawn(out.clone(), Duration::from_millis(200), stopper.clone())
                .map_err(|e| CliError::Runtime(e.to_string()))?;
        let settings = Settings {
            name: Arc::from("demo"),
            mode: Mode::Open {
                pacer: Arc::new(
                    volley_pacer::RatePacer::new(volley_pacer::Shape::Constant(rate))
                        .map_err(|e| CliError::Usage(e.to_string()))?,
                ),
                workers: 10,
                max_workers: 10_000,
                window: Default::default(),
            },
            duration: Some(duration),
            max_requests: None,
        };
        let signals = tokio::spawn(crate::signals::stop_on_signal(stopper.clone()));
        volley_attack::run(settings, Arc::new(jobs), client, thread.handle(), stopper).await;
        signals.abort();
        let (_, result) = tokio::task::spawn_blocking(move || thread.join())
            .await
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        result.map_err(|e| CliError::Runtime(e.to_string()))?;
        let seen = origin.counts().total;
        let _ = origin.shutdown().await;
        let mut g = out.0.lock().unwrap_or_else(|e| e.into_inner());
        g.0.finish();
        let mut so = std::io::stdout().lock();
        let w = |e: std::io::Error| CliError::Runtime(e.to_string());
        volley_report::text::report(&g.0, &mut so).map_err(w)?;
        println!();
        if let Some(h) = &g.1 {
            h.report(&mut so).map_err(w)?;
        }
        println!("\nThe origin simulator counted {seen} requests.");
        Ok(0)
    })
}
