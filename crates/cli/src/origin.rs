//! `volley origin`: the origin simulator on the command line — an
//! OriginSimulator recipe (`-recipe`) or a quick shape (`-status`,
//! `-latency`, `-body`, `-length`, `-random-content`), over HTTP/1.1, h2c,
//! TLS or mTLS. Serves until Ctrl-C.

use std::path::PathBuf;

use volley_origin::{Latency, OriginConfig, QuickShape, RecipeSource, TlsConfig};

use crate::flags::{self, Kind, Raw, Spec};
use crate::CliError;

const USAGE: &str = "Usage: volley origin [flags]

An origin simulator: serves BBC OriginSimulator recipes unchanged (routes,
stages, latency, bodies, gzip, the /_admin API) or a quick shape, plus
/_admin/counts?bin=1s and Prometheus /metrics. Examples:
  volley origin -body hello
  volley origin -status 504 -latency 1s
  volley origin -length 4096 -addr 127.0.0.1:8081
  volley origin -recipe ../shared/compat/origin_simulator/failure_scenario.json
  volley origin -body hello -cert server.crt -key server.key -client-ca ca.crt";

const SPECS: &[Spec] = &[
    Spec::new(
        "addr",
        Kind::Value,
        "127.0.0.1:8080",
        "Address to listen on",
    ),
    Spec::new(
        "recipe",
        Kind::Value,
        "",
        "OriginSimulator recipe file (JSON)",
    ),
    Spec::new("status", Kind::Value, "200", "Quick shape: response status"),
    Spec::new(
        "latency",
        Kind::Value,
        "0",
        "Quick shape: latency, fixed (100ms) or a range (100ms..200ms)",
    ),
    Spec::new("body", Kind::Value, "", "Quick shape: response body"),
    Spec::new(
        "length",
        Kind::Value,
        "",
        "Quick shape: a fixed random a-z body of this many bytes",
    ),
    Spec::new(
        "random-content",
        Kind::Value,
        "",
        "Quick shape: random content of this size (e.g. 256kb)",
    ),
    Spec::new(
        "cert",
        Kind::Value,
        "",
        "TLS certificate (PEM); serves HTTPS with HTTP/2 via ALPN",
    ),
    Spec::new("key", Kind::Value, "", "TLS private key (PEM)"),
    Spec::new(
        "client-ca",
        Kind::Value,
        "",
        "Require client certificates signed by this CA (mTLS)",
    ),
    Spec::new(
        "h2c",
        Kind::Bool,
        "false",
        "Accept HTTP/2 without TLS (prior knowledge) alongside HTTP/1.1",
    ),
    Spec::new(
        "cpus",
        Kind::Value,
        "all",
        "Number of CPUs (runtime threads) to use",
    ),
];

fn usage(m: impl std::fmt::Display) -> CliError {
    CliError::Usage(m.to_string())
}

/// Flags → configuration, before anything is bound or served.
fn config(raw: &Raw) -> Result<(OriginConfig, Option<PathBuf>), CliError> {
    let quick_flags = ["status", "latency", "body", "length", "random-content"];
    let quick = if quick_flags.iter().any(|f| raw.has(f)) {
        let mut q = QuickShape::default();
        if let Some(s) = raw.value("status") {
            q.status = s
                .parse()
                .map_err(|_| usage(format!("flag -status: {s:?} is not an HTTP status")))?;
        }
        if let Some(l) = raw.value("latency") {
            q.latency = Latency::parse(l).map_err(|e| usage(format!("flag -latency: {e}")))?;
        }
        q.body = raw.value("body").map(String::from);
        if let Some(l) = raw.value("length") {
            q.length = Some(
                l.parse()
                    .map_err(|_| usage(format!("flag -length: {l:?} is not a number of bytes")))?,
            );
        }
        if let Some(r) = raw.value("random-content") {
            q.random_content = Some(
                volley_origin::parse_size(r)
                    .map_err(|e| usage(format!("flag -random-content: {e}")))?,
            );
        }
        Some(q)
    } else {
        None
    };
    let tls = match (raw.value("cert"), raw.value("key")) {
        (Some(c), Some(k)) => Some(TlsConfig {
            cert: c.into(),
            key: k.into(),
            client_ca: raw.value("client-ca").map(PathBuf::from),
        }),
        (None, None) if raw.has("client-ca") => {
            return Err(usage("-client-ca needs -cert and -key"));
        }
        (None, None) => None,
        _ => return Err(usage("-cert and -key go together")),
    };
    Ok((
        OriginConfig {
            recipe: None,
            quick,
            tls,
            h2c: raw.bool("h2c", false),
            hyper_only: false,
        },
        raw.value("recipe").map(PathBuf::from),
    ))
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => usage(e),
    })?;
    if let Some(p) = raw.positional.first() {
        return Err(usage(format!("unexpected argument {p:?}")));
    }
    let (mut cfg, recipe) = config(&raw)?;
    let addr = raw.value("addr").unwrap_or("127.0.0.1:8080").to_string();
    let threads = match raw.value("cpus") {
        None | Some("all") => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) => n
            .parse::<usize>()
            .map_err(|_| usage(format!("flag -cpus: {n:?} is not a number")))?
            .max(1),
    };
    let runtime = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
    .map_err(|e| CliError::Runtime(format!("starting the runtime: {e}")))?;
    runtime.block_on(async move {
        if let Some(path) = recipe {
            if cfg.quick.is_some() {
                return Err(usage("give either -recipe or a quick shape, not both"));
            }
            let loaded = volley_origin::load_recipe(RecipeSource::File(path))
                .await
                .map_err(usage)?;
            cfg.recipe = Some(loaded.into());
        }
        let origin = volley_origin::Origin::new(cfg).await.map_err(|e| match e {
            volley_origin::OriginError::Io(e) => CliError::Runtime(e.to_string()),
            e => usage(e),
        })?;
        // A deep accept backlog: 10,000 simultaneous connects must not wait
        // for TCP's one-second SYN retry.
        let sock: std::net::SocketAddr = tokio::net::lookup_host(&addr)
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| usage(format!("flag -addr: {addr:?} is not host:port")))?;
        let listener = volley_origin::bind(sock)
            .map_err(|e| CliError::Runtime(format!("-addr {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        eprintln!("volley origin: listening on {local} (Ctrl-C to stop)");
        origin
            .serve(listener, async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| CliError::Runtime(e.to_string()))?;
        Ok(0)
    })
}
