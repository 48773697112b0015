//! A minimal stand-alone origin for benchmarks, until `volley origin` is wired:
//! `serve [addr] [hyper] [latency]` serves "hello" on a `current_thread`
//! runtime (pin it to one core with `taskset`). `hyper` turns the HTTP/1.1
//! fast path off; `latency` is e.g. `1s`.

use volley_origin::{bind, run, Latency, OriginConfig, QuickShape};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = args
        .first()
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let hyper_only = args.iter().any(|a| a == "hyper");
    let latency = match args.iter().find(|a| a.ends_with('s')) {
        Some(l) => Latency::parse(l)?,
        None => Latency::Zero,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = bind(addr.parse()?)?;
        let cfg = OriginConfig {
            quick: Some(QuickShape {
                body: Some("hello".into()),
                latency,
                ..QuickShape::default()
            }),
            hyper_only,
            ..OriginConfig::default()
        };
        run(listener, cfg, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        Ok(())
    })
}
