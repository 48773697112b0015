//! `volley attack`: vegeta's attack flags → validated settings → the engine.
//!
//! Flag errors, unreadable certificates and malformed targets all surface
//! here, before the first request. Results stream to `-output` (default
//! stdout) in volley's binary format; when stdout is a terminal and no
//! `-output` was given, the text report is printed there instead of binary.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use volley_attack::{clock::Window, Jobs, Mode, Output, Settings, Stopper};
use volley_client::{ClientConfig, TlsOptions};
use volley_pacer::Shape;
use volley_report::{Metrics, Sink};
use volley_results::{Header, Record, Writer};

use crate::flags::{self, Kind, Raw, Spec};
use crate::{progress::Progress, CliError};

pub const USAGE: &str = "Usage: volley attack [flags] < targets > results.bin

Sends requests at a fixed or shaped rate (open model, vegeta's -rate) or with
a number of users (closed model, k6's VUs: -users), and streams one result
per request. Targets come from stdin or -targets, in vegeta's http or json
format. Examples:
  echo \"GET http://127.0.0.1:8080/\" | volley attack -duration=10s -rate=1000 | volley report
  volley attack -targets t.txt -shape linear:100..5000 -duration 60s -output r.bin
  volley attack -targets t.txt -users 200 -think 1s -duration 60s -threshold 'p99<250ms'";

pub const SPECS: &[Spec] = &[
    Spec::new("targets", Kind::Value, "stdin", "Targets file"),
    Spec::new("format", Kind::Value, "http", "Targets format [http, json]"),
    Spec::new("lazy", Kind::Bool, "false", "Read targets lazily, as they are needed"),
    Spec::new("header", Kind::Repeated, "", "Request header \"Key: value\" added to every target"),
    Spec::new("body", Kind::Value, "", "Requests body file"),
    Spec::new("name", Kind::Value, "", "Attack name"),
    Spec::new("rate", Kind::Value, "50/1s", "Number of requests per time unit [0 = infinity]"),
    Spec::new("shape", Kind::Value, "constant", "Rate shape: constant | linear:FROM..TO[:OVER] | sine:MEAN,AMP,PERIOD | steps:RATExDUR,... | stages:DUR:RATE,..."),
    Spec::new("duration", Kind::Value, "0s", "Duration of the test [0 = forever]"),
    Spec::new("n", Kind::Value, "0", "Stop after this many requests [0 = no limit]"),
    Spec::new("users", Kind::Value, "", "Closed model: number of users (k6 VUs), or a users shape like linear:0..1000"),
    Spec::new("think", Kind::Value, "0s", "Closed model: think time between a user's response and its next request"),
    Spec::new("pace-window", Kind::Value, "auto", "Longest a due request may wait to leave with others, so the pacer wakes less often [auto = 0.2µs per req/s, at most 2ms; 0 = each request at its own time]"),
    Spec::new("workers", Kind::Value, "10", "Initial number of workers"),
    Spec::new("max-workers", Kind::Value, "18446744073709551615", "Maximum number of workers"),
    Spec::new("connections", Kind::Value, "10000", "Max open idle connections per target host"),
    Spec::new("max-connections", Kind::Value, "0", "Max connections per target host [0 = no limit]"),
    Spec::new("keepalive", Kind::Bool, "true", "Use persistent connections"),
    Spec::new("timeout", Kind::Value, "30s", "Requests timeout"),
    Spec::new("max-body", Kind::Value, "-1", "Maximum number of bytes to keep of each response body [-1 = no limit]; bytes in are always counted in full"),
    Spec::new("http2", Kind::Bool, "true", "Send HTTP/2 requests when supported by the server"),
    Spec::new("h2c", Kind::Bool, "false", "Send HTTP/2 requests without TLS encryption"),
    Spec::new("cert", Kind::Value, "", "TLS client PEM encoded certificate file"),
    Spec::new("key", Kind::Value, "", "TLS client PEM encoded private key file"),
    Spec::new("root-certs", Kind::Repeated, "", "TLS root certificate files (comma separated list)"),
    Spec::new("insecure", Kind::Bool, "false", "Ignore invalid server TLS certificates"),
    Spec::new("session-tickets", Kind::Bool, "false", "Enable TLS session resumption using session tickets"),
    Spec::new("redirects", Kind::Value, "10", "Number of redirects to follow. -1 will not follow but marks as success"),
    Spec::new("chunked", Kind::Bool, "false", "Send body with chunked transfer encoding"),
    Spec::new("output", Kind::Value, "stdout", "Output file"),
    Spec::new("laddr", Kind::Value, "0.0.0.0", "Local IP address"),
    Spec::new("unix-socket", Kind::Value, "", "Connect over a unix socket. This overrides the host address in target URLs"),
    Spec::new("connect-to", Kind::Repeated, "", "A mapping of (ip|host):port to use instead of a target URL's (ip|host):port, e.g. example.com:80:127.0.0.1:8080"),
    Spec::new("dns-ttl", Kind::Value, "0s", "Cache DNS lookups for the given duration [-1 = disabled, 0 = forever]"),
    Spec::new("resolvers", Kind::Value, "", "List of addresses (ip:port) to use for DNS resolution, comma separated"),
    Spec::new("proxy-header", Kind::Repeated, "", "Proxy CONNECT header \"Key: value\""),
    Spec::new("threshold", Kind::Repeated, "", "Pass/fail criterion such as 'p99<250ms' or 'success>=99.9%'; exit 99 when one fails"),
    Spec::new("cpus", Kind::Value, "all", "Number of CPUs (runtime threads) to use"),
    Spec::new("progress", Kind::Bool, "auto", "Live progress on stderr (default: when stderr is a terminal)"),
];

/// Everything `attack` needs, validated.
pub struct AttackPlan {
    pub settings: Settings,
    pub client: ClientConfig,
    pub targets: TargetSource,
    pub output: Option<PathBuf>,
    pub thresholds: Vec<volley_report::Threshold>,
    pub threads: usize,
    pub progress: bool,
    pub meta: serde_json::Value,
}

/// Where targets come from.
pub enum TargetSource {
    Eager(Vec<Arc<volley_targets::Target>>),
    Lazy(volley_targets::Targeter),
}

fn usage(msg: impl std::fmt::Display) -> CliError {
    CliError::Usage(msg.to_string())
}

fn dur(raw: &Raw, name: &str, default: Duration) -> Result<Duration, CliError> {
    Ok(raw
        .parsed(name, volley_pacer::parse_duration)
        .map_err(usage)?
        .unwrap_or(default))
}

fn num<T: std::str::FromStr>(raw: &Raw, name: &str, default: T) -> Result<T, CliError> {
    match raw.value(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| usage(format!("flag -{name}: {v:?} is not a valid number"))),
    }
}

/// Parses and validates every attack flag; reads targets and certificates.
pub fn plan(args: &[String]) -> Result<AttackPlan, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => usage(e),
    })?;
    if let Some(p) = raw.positional.first() {
        return Err(usage(format!(
            "unexpected argument {p:?} (targets come from stdin or -targets)"
        )));
    }
    let duration = dur(&raw, "duration", Duration::ZERO)?;
    let duration = (!duration.is_zero()).then_some(duration);
    let n: u64 = num(&raw, "n", 0)?;
    let max_requests = (n > 0).then_some(n);
    let workers: usize = num(&raw, "workers", 10)?;
    let max_workers: u64 = num(&raw, "max-workers", u64::MAX)?;
    let max_connections: usize = num(&raw, "max-connections", 0)?;
    let mut max_workers = usize::try_from(max_workers).unwrap_or(usize::MAX);
    if max_connections > 0 {
        max_workers = max_workers.min(max_connections);
    }

    let window = match raw.value("pace-window") {
        None | Some("auto") => Window::Auto,
        Some(_) => Window::Fixed(dur(&raw, "pace-window", Duration::ZERO)?),
    };
    let mut constant_rate = None;
    let mode = if let Some(users) = raw.value("users") {
        if raw.has("rate") || raw.has("shape") {
            return Err(usage(
                "-users (closed model) and -rate/-shape (open model) exclude each other",
            ));
        }
        if raw.has("pace-window") {
            return Err(usage(
                "-pace-window applies to the open model (-rate): users send on their own clocks",
            ));
        }
        let shape = volley_pacer::parse_shape(users, duration)
            .map_err(|e| usage(format!("flag -users: {e}")))?;
        Mode::Closed {
            users: shape,
            think: dur(&raw, "think", Duration::ZERO)?,
        }
    } else {
        if raw.has("think") {
            return Err(usage(
                "-think applies to the closed model: use it with -users",
            ));
        }
        let rate = raw.value("rate").unwrap_or("50/1s");
        let shape_spec = raw.value("shape").unwrap_or("constant");
        let shape = if shape_spec == "constant" {
            let r =
                volley_pacer::parse_rate(rate).map_err(|e| usage(format!("flag -rate: {e}")))?;
            if r == 0.0 || r.is_infinite() {
                None
            } else {
                Some(Shape::Constant(r))
            }
        } else {
            Some(
                volley_pacer::parse_shape(shape_spec, duration)
                    .map_err(|e| usage(format!("flag -shape: {e}")))?,
            )
        };
        match shape {
            // -rate=0: as fast as possible with -max-workers workers, like
            // vegeta: that is a closed model with no think time.
            None => {
                if max_workers == usize::MAX {
                    return Err(usage(
                        "-rate=0 (as fast as possible) needs -max-workers (or -max-connections)",
                    ));
                }
                Mode::Closed {
                    users: Shape::Constant(max_workers as f64),
                    think: Duration::ZERO,
                }
            }
            Some(shape) => {
                if let Shape::Constant(r) = shape {
                    constant_rate = Some(r);
                }
                let pacer = volley_pacer::RatePacer::new(shape)
                    .map_err(|e| usage(format!("flag -shape: {e}")))?;
                Mode::Open {
                    pacer: Arc::new(pacer) as Arc<dyn volley_pacer::Pacer + Send + Sync>,
                    workers,
                    max_workers,
                    window,
                }
            }
        }
    };

    let mut client = client_config(&raw, max_connections)?;
    if let Mode::Closed { users, .. } = &mode {
        // vegeta's -connections caps idle connections per host (10,000 by
        // default); k6's users each keep theirs. Without -connections, let
        // every user keep its connection.
        if !raw.has("connections") {
            // Twice the users: reconnects after errors overlap the
            // connections they replace.
            client.connections = client.connections.max(2 * users.peak().ceil() as usize);
        }
    }
    client.validate().map_err(usage)?;

    let format = raw.value("format").unwrap_or("http");
    let format = match format {
        "http" => volley_targets::Format::Http,
        "json" => volley_targets::Format::Json,
        f => {
            return Err(usage(format!(
                "flag -format: unknown targets format {f:?} (want http or json)"
            )))
        }
    };
    let mut defaults = volley_targets::Defaults::default();
    for h in raw.values("header") {
        let (k, v) = h
            .split_once(':')
            .ok_or_else(|| usage(format!("flag -header: {h:?} is not \"Key: value\"")))?;
        defaults
            .headers
            .push((k.trim().to_string(), v.trim().to_string()));
    }
    if let Some(b) = raw.value("body") {
        let body = std::fs::read(b).map_err(|e| usage(format!("flag -body: {b}: {e}")))?;
        defaults.body = Some(body.into());
    }
    let input: Box<dyn std::io::BufRead + Send> = match raw.value("targets") {
        None | Some("stdin") | Some("-") => Box::new(std::io::BufReader::new(std::io::stdin())),
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p).map_err(|e| usage(format!("flag -targets: {p}: {e}")))?,
        )),
    };
    let lazy = raw.bool("lazy", false);
    let targeter = volley_targets::Targeter::lazy(input, format, defaults);
    let targets = if lazy {
        TargetSource::Lazy(targeter)
    } else {
        TargetSource::Eager(volley_targets::read_all_from(targeter).map_err(usage)?)
    };

    let thresholds = raw
        .values("threshold")
        .iter()
        .map(|t| {
            volley_report::Threshold::parse(t).map_err(|e| usage(format!("flag -threshold: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;

    let threads = match raw.value("cpus") {
        None | Some("all") => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(_) => num::<usize>(&raw, "cpus", 1)?.max(1),
    };
    let progress = match raw.value("progress") {
        None => std::io::stderr().is_terminal(),
        Some(_) => raw.bool("progress", false),
    };
    let name: Arc<str> = Arc::from(raw.value("name").unwrap_or(""));
    let run = match &mode {
        Mode::Open {
            workers,
            max_workers,
            window,
            ..
        } => serde_json::json!({
            "model": "open",
            "rate": constant_rate,
            "workers": workers,
            "max_workers": (*max_workers != usize::MAX).then_some(*max_workers),
            "pace_window_s": match window {
                Window::Auto => None,
                Window::Fixed(d) => Some(d.as_secs_f64()),
            },
        }),
        Mode::Closed { users, think } => serde_json::json!({
            "model": "closed",
            "vus_max": users.peak().round() as u64,
            "think_s": think.as_secs_f64(),
        }),
    };
    let meta = serde_json::json!({
        "run": run,
        "command": std::env::args().collect::<Vec<_>>(),
        "rate": raw.value("rate"),
        "shape": raw.value("shape"),
        "users": raw.value("users"),
        "think": raw.value("think"),
        "duration": duration.map(|d| d.as_secs_f64()),
        "volley": env!("CARGO_PKG_VERSION"),
    });
    Ok(AttackPlan {
        settings: Settings {
            name,
            mode,
            duration,
            max_requests,
        },
        client,
        targets,
        output: match raw.value("output") {
            None | Some("stdout") | Some("-") => None,
            Some(p) => Some(PathBuf::from(p)),
        },
        thresholds,
        threads,
        progress,
        meta,
    })
}

fn client_config(raw: &Raw, max_connections: usize) -> Result<ClientConfig, CliError> {
    let max_body: i64 = num(raw, "max-body", -1)?;
    let mut root_certs = Vec::new();
    for v in raw.values("root-certs") {
        root_certs.extend(v.split(',').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    let mut connect_to = Vec::new();
    for m in raw.values("connect-to") {
        // host:port:addr:port, with [v6] literals allowed on either side.
        let (from, to) = split_mapping(m)
            .ok_or_else(|| usage(format!("flag -connect-to: {m:?} is not src:port:dst:port")))?;
        connect_to.push((from, to));
    }
    let laddr = match raw.value("laddr") {
        None | Some("0.0.0.0") => None,
        Some(a) => Some(
            a.parse()
                .map_err(|_| usage(format!("flag -laddr: {a:?} is not an IP address")))?,
        ),
    };
    let resolvers = match raw.value("resolvers") {
        None | Some("") => Vec::new(),
        Some(list) => list
            .split(',')
            .map(|r| {
                let r = r.trim();
                r.parse()
                    .or_else(|_| format!("{r}:53").parse())
                    .map_err(|_| usage(format!("flag -resolvers: {r:?} is not ip[:port]")))
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let mut proxy_header = Vec::new();
    for h in raw.values("proxy-header") {
        let (k, v) = h
            .split_once(':')
            .ok_or_else(|| usage(format!("flag -proxy-header: {h:?} is not \"Key: value\"")))?;
        proxy_header.push((k.trim().to_string(), v.trim().to_string()));
    }
    let dns_ttl = match raw.value("dns-ttl") {
        Some("-1") | Some("-1s") => Some(Duration::ZERO),
        _ => {
            let d = dur(raw, "dns-ttl", Duration::ZERO)?;
            if d.is_zero() {
                None
            } else {
                Some(d)
            }
        }
    };
    let redirects: i32 = num(raw, "redirects", 10)?;
    Ok(ClientConfig {
        timeout: dur(raw, "timeout", Duration::from_secs(30))?,
        max_body: (max_body >= 0).then_some(max_body as u64),
        keep_body: max_body != 0,
        keepalive: raw.bool("keepalive", true),
        http2: raw.bool("http2", true),
        h2c: raw.bool("h2c", false),
        tls: TlsOptions {
            cert: raw.value("cert").map(PathBuf::from),
            key: raw.value("key").map(PathBuf::from),
            root_certs,
            insecure: raw.bool("insecure", false),
            session_tickets: raw.bool("session-tickets", false),
        },
        redirects,
        chunked: raw.bool("chunked", false),
        laddr,
        unix_socket: raw
            .value("unix-socket")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
        connect_to,
        dns_ttl,
        resolvers,
        proxy_header,
        max_connections,
        connections: num(raw, "connections", 10000)?,
    })
}

/// Splits `src:port:dst:port` into `("src:port", "dst:port")`.
fn split_mapping(m: &str) -> Option<(String, String)> {
    // Find the split point: the colon after the first host:port.
    let first_port_end = if let Some(rest) = m.strip_prefix('[') {
        let close = rest.find(']')? + 1;
        let after = &m[close + 1..];
        let colon = after.strip_prefix(':')?.find(':')?;
        close + 2 + colon
    } else {
        let c1 = m.find(':')?;
        c1 + 1 + m[c1 + 1..].find(':')?
    };
    let (from, to) = (&m[..first_port_end], &m[first_port_end + 1..]);
    (!from.is_empty() && to.contains(':')).then(|| (from.to_string(), to.to_string()))
}

/// The attack's output: results file, in-memory metrics, live progress.
struct AttackOutput {
    writer: Option<Writer<Box<dyn Write + Send>>>,
    metrics: Metrics,
    progress: Option<Progress>,
}

impl Output for AttackOutput {
    fn record(&mut self, r: &Record) -> std::io::Result<()> {
        if let Some(w) = &mut self.writer {
            w.write(r)?;
        }
        self.metrics.add(r);
        if let Some(p) = &mut self.progress {
            p.add(r);
        }
        Ok(())
    }

    fn flush(&mut self, elapsed: Duration) -> std::io::Result<()> {
        if let Some(w) = &mut self.writer {
            w.flush()?;
        }
        if let Some(p) = &mut self.progress {
            p.show(elapsed);
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(p) = &mut self.progress {
            p.clear();
        }
        if let Some(w) = &mut self.writer {
            w.flush()?;
        }
        Ok(())
    }
}

/// `volley attack`.
pub fn main(args: &[String]) -> Result<i32, CliError> {
    let plan = plan(args)?;
    volley_attack::limits::raise_nofile();
    let runtime = if plan.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(plan.threads)
            .enable_all()
            .build()
    }
    .map_err(|e| CliError::Runtime(format!("starting the runtime: {e}")))?;
    // Run as a task, not as block_on's own future: wake-ups sent from
    // block_on's future go through the runtime's cross-thread queue and an
    // eventfd write each, one per request for the pacer.
    runtime.block_on(async {
        tokio::spawn(attack(plan))
            .await
            .unwrap_or_else(|e| Err(CliError::Runtime(format!("attack task: {e}"))))
    })
}

async fn attack(plan: AttackPlan) -> Result<i32, CliError> {
    let client = volley_client::Client::new(plan.client.clone()).map_err(usage)?;
    let jobs = match plan.targets {
        TargetSource::Eager(ts) => Jobs::eager(&client, &ts).map_err(usage)?,
        TargetSource::Lazy(t) => Jobs::lazy(&client, t),
    };
    let stdout_tty = plan.output.is_none() && std::io::stdout().is_terminal();
    let sink: Option<Box<dyn Write + Send>> = match &plan.output {
        Some(p) => Some(Box::new(std::io::BufWriter::with_capacity(
            1 << 16,
            std::fs::File::create(p)
                .map_err(|e| CliError::Runtime(format!("-output {}: {e}", p.display())))?,
        ))),
        None if stdout_tty => None,
        None => Some(Box::new(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        ))),
    };
    let header = Header {
        version: u32::from(volley_results::binary::VERSION),
        attack: plan.settings.name.to_string(),
        started: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0),
        meta: plan.meta.clone(),
    };
    let writer = match sink {
        Some(s) => Some(
            Writer::new(s, &header)
                .map_err(|e| CliError::Runtime(format!("writing results: {e}")))?,
        ),
        None => None,
    };
    let stopper = Stopper::default();
    let out = AttackOutput {
        writer,
        metrics: Metrics::default(),
        progress: plan.progress.then(Progress::default),
    };
    let thread = volley_attack::output::spawn(out, Duration::from_millis(200), stopper.clone())
        .map_err(|e| CliError::Runtime(format!("starting the output thread: {e}")))?;
    let signals = tokio::spawn(crate::signals::stop_on_signal(stopper.clone()));
    let summary = volley_attack::run(
        plan.settings,
        Arc::new(jobs),
        client,
        thread.handle(),
        stopper,
    )
    .await;
    signals.abort();
    let (mut out, result) = tokio::task::spawn_blocking(move || thread.join())
        .await
        .map_err(|e| CliError::Runtime(format!("output thread: {e}")))?;
    if let Err(e) = result {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(CliError::Runtime(format!("writing results: {e}")));
        }
    }
    out.metrics.finish();
    if let Some(e) = &summary.jobs_error {
        eprintln!("volley attack: targets: {e}");
    }
    let mut run = crate::report::run_info(Some(&header));
    if run.vus_max.is_some() {
        let peak = summary.peak_workers as u64;
        let gauge = volley_report::Gauge {
            value: peak,
            min: peak,
            max: peak,
        };
        run.vus = Some(gauge);
        run.vus_max = Some(gauge);
    }
    if stdout_tty {
        let mut so = std::io::stdout().lock();
        volley_report::text::report(&out.metrics, &mut so)
            .map_err(|e| CliError::Runtime(e.to_string()))?;
    }
    for line in volley_report::diagnose(&out.metrics, &run) {
        eprintln!("volley: {line}");
    }
    crate::verdict(&out.metrics, &plan.thresholds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/seeds")
    }

    /// A client certificate and key made for the test, standing in for the
    /// seeds' /etc/pki paths.
    fn test_cert(dir: &std::path::Path) -> (PathBuf, PathBuf) {
        let ck = rcgen::generate_simple_self_signed(vec!["client".into()]).unwrap();
        let (c, k) = (dir.join("client.crt"), dir.join("client.key"));
        std::fs::write(&c, ck.cert.pem()).unwrap();
        std::fs::write(&k, ck.key_pair.serialize_pem()).unwrap();
        (c, k)
    }

    /// Every `vegeta attack` command line in the seed reports, as arguments.
    fn seed_attacks() -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(seeds_dir()).expect("../shared/seeds beside the repo") {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            for line in text.lines() {
                for part in line.split('|') {
                    let words: Vec<&str> = part.split_whitespace().collect();
                    if words.len() >= 2 && words[0] == "vegeta" && words[1] == "attack" {
                        out.push(words[2..].iter().map(|s| s.to_string()).collect());
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_seed_attack_command_line_parses() {
        let dir = std::env::temp_dir().join(format!("volley-seeds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = test_cert(&dir);
        let targets = dir.join("targets.txt");
        std::fs::write(&targets, "GET https://127.0.0.1:1/status\n").unwrap();
        let attacks = seed_attacks();
        assert!(
            attacks.len() >= 11,
            "found only {} seed command lines",
            attacks.len()
        );
        for mut args in attacks {
            for a in &mut args {
                *a = a
                    .replace(
                        "/etc/pki/tls/certs/client_chain.crt",
                        cert.to_str().unwrap(),
                    )
                    .replace("/etc/pki/tls/private/client.key", key.to_str().unwrap());
            }
            let uses_cert = args.iter().any(|a| a.starts_with("-cert="));
            args.push("-targets".into());
            args.push(targets.display().to_string());
            let plan = plan(&args).unwrap_or_else(|e| panic!("{args:?}: {e:?}"));
            assert_eq!(plan.settings.duration, Some(Duration::from_secs(60)));
            assert_eq!(plan.client.max_body, Some(0));
            assert_eq!(plan.client.tls.cert.is_some(), uses_cert);
            assert!(matches!(plan.settings.mode, Mode::Open { .. }));
        }
        // Seed 000 also runs with "-http2 false", meaning off.
        let args: Vec<String> = ["-http2", "false", "-rate=3800", "-duration=60s", "-targets"]
            .iter()
            .map(|s| s.to_string())
            .chain([targets.display().to_string()])
            .collect();
        assert!(!plan(&args).unwrap().client.http2);
    }

    #[test]
    fn bad_flags_are_one_line_usage_errors() {
        for (args, want) in [
            (vec!["-rate=fast"], "flag -rate"),
            (vec!["-duration=10"], "flag -duration"),
            (vec!["-bogus"], "unknown flag -bogus"),
            (vec!["-rate=0"], "-max-workers"),
            (vec!["-users", "10", "-rate", "5"], "exclude each other"),
            (vec!["-pace-window=soon"], "flag -pace-window"),
            (vec!["-users", "10", "-pace-window", "1ms"], "open model"),
            (
                vec!["-cert", "/nonexistent/c.pem", "-key", "/nonexistent/k.pem"],
                "/nonexistent/c.pem",
            ),
        ] {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            match plan(&args) {
                Err(CliError::Usage(msg)) => {
                    assert!(msg.contains(want), "{args:?}: {msg}");
                    assert!(!msg.contains('\n'), "{args:?}: multi-line error {msg:?}");
                }
                Err(other) => panic!("{args:?}: {other:?}"),
                Ok(_) => panic!("{args:?}: accepted"),
            }
        }
    }

    #[test]
    fn pace_window_is_automatic_unless_set() {
        let targets = std::env::temp_dir().join(format!("volley-pw-{}.txt", std::process::id()));
        std::fs::write(&targets, "GET http://127.0.0.1:9/\n").unwrap();
        let t = targets.display().to_string();
        let window = |extra: &[&str]| {
            let args: Vec<String> = ["-rate=10000", "-duration=1s", "-targets", &t]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .collect();
            match plan(&args) {
                Ok(AttackPlan {
                    settings:
                        Settings {
                            mode: Mode::Open { window, .. },
                            ..
                        },
                    meta,
                    ..
                }) => (window, meta["run"]["pace_window_s"].clone()),
                Ok(_) => panic!("{extra:?}: not the open model"),
                Err(e) => panic!("{extra:?}: {e:?}"),
            }
        };
        assert_eq!(window(&[]), (Window::Auto, serde_json::Value::Null));
        assert_eq!(window(&["-pace-window=auto"]).0, Window::Auto);
        assert_eq!(
            window(&["-pace-window", "500us"]),
            (Window::Fixed(Duration::from_micros(500)), 0.0005.into())
        );
        assert_eq!(
            window(&["--pace-window", "0"]).0,
            Window::Fixed(Duration::ZERO)
        );
        std::fs::remove_file(&targets).ok();
    }

    #[test]
    fn connect_to_mappings_split_at_the_right_colon() {
        assert_eq!(
            split_mapping("example.com:80:127.0.0.1:8080"),
            Some(("example.com:80".into(), "127.0.0.1:8080".into()))
        );
        assert_eq!(
            split_mapping("[::1]:443:[::1]:8443"),
            Some(("[::1]:443".into(), "[::1]:8443".into()))
        );
        assert_eq!(split_mapping("nonsense"), None);
    }
}
