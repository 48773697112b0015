//! The HTML plot in a real browser: Debian's headless Chromium driven by
//! chromedriver (WebDriver over HTTP on 127.0.0.1, with a tiny client
//! below). Checks that the page loads without a console error or network
//! request, exposes the expected series and point counts, exports a PNG,
//! and writes a screenshot to `<target>/tmp/volley-plot-browser/`.
//!
//! Chromium and chromedriver come from `scripts/setup`. When they are
//! missing the test fails, unless `VOLLEY_SKIP_BROWSER=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};
use volley_plot::{plot_html, PlotInput, PlotOptions, PlotSummary};
use volley_results::{ErrorKind, Record};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Kills the chromedriver we started (and with it its browsers).
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver() -> Driver {
    let mut child = Command::new(CHROMEDRIVER)
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {CHROMEDRIVER}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // "ChromeDriver was started successfully on port 35905."
            if let Some(rest) = line.split("on port ").nth(1) {
                if line.contains("started successfully") {
                    let port = rest.trim_end_matches('.').trim().parse::<u16>().ok();
                    let _ = tx.send(port);
                }
            }
        }
    });
    // A guard against a hung driver, not a timing assertion.
    let port = rx.recv_timeout(Duration::from_secs(60)).ok().flatten();
    let Some(port) = port else {
        let _ = child.kill();
        panic!("chromedriver did not report its port");
    };
    Driver { child, port }
}

/// One WebDriver command: HTTP/1.1 with `Connection: close`.
fn call(port: u16, method: &str, path: &str, body: Option<Value>) -> Value {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to chromedriver");
    s.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    // chromedriver keeps the connection open: read the head, then exactly
    // Content-Length bytes (or chunks).
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    let split = loop {
        if let Some(p) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = s.read(&mut buf).expect("read from chromedriver");
        assert!(
            n > 0,
            "{method} {path}: connection closed before a response"
        );
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let mut payload = raw[split + 4..].to_vec();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = head.contains("transfer-encoding: chunked");
    loop {
        let done = match length {
            Some(len) => payload.len() >= len,
            None if chunked => payload.windows(5).any(|w| w == b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = s.read(&mut buf).expect("read from chromedriver");
        if n == 0 {
            break;
        }
        payload.extend_from_slice(&buf[..n]);
    }
    if chunked {
        payload = dechunk(&payload);
    }
    let v: Value = serde_json::from_slice(&payload).unwrap_or_else(|e| {
        panic!(
            "{method} {path}: bad JSON ({e}): {}",
            String::from_utf8_lossy(&payload)
        )
    });
    if !head.starts_with("http/1.1 2") {
        panic!("{method} {path}: {}", v["value"]);
    }
    v["value"].clone()
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 2 + size + 2..];
    }
    out
}

struct Session {
    port: u16,
    id: String,
}

impl Session {
    fn new(port: u16, profile: &Path) -> Session {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.display()),
                    "--window-size=1400,1900", "--force-device-scale-factor=1",
                ],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let v = call(port, "POST", "/session", Some(caps));
        let id = v["sessionId"].as_str().expect("a session id").to_string();
        Session { port, id }
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        call(
            self.port,
            method,
            &format!("/session/{}{path}", self.id),
            body,
        )
    }

    fn js(&self, script: &str) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn open(&self, file: &Path) {
        let url = format!("file://{}", file.display());
        self.cmd("POST", "/url", Some(json!({ "url": url })));
        for _ in 0..300 {
            if self.js("return !!(window.volleyPlot && window.volleyPlot.ready)") == json!(true) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "{}: window.volleyPlot.ready never became true; console: {:?}",
            file.display(),
            self.console()
        );
    }

    /// Browser console and JavaScript errors since the last call.
    fn console(&self) -> Vec<Value> {
        let v = self.cmd("POST", "/se/log", Some(json!({"type": "browser"})));
        v.as_array().cloned().unwrap_or_default()
    }

    fn screenshot(&self) -> Vec<u8> {
        let b64 = self.cmd("GET", "/screenshot", None);
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| {
            call(self.port, "DELETE", &format!("/session/{}", self.id), None)
        });
    }
}

fn rec(attack: &Arc<str>, offset_ms: u64, latency_ms: u64, code: u16) -> Record {
    Record {
        attack: attack.clone(),
        timestamp: 1_655_100_000_000_000_000 + offset_ms as i64 * 1_000_000,
        latency: latency_ms * 1_000_000 + offset_ms % 7 * 100_000,
        code,
        error_kind: if code == 0 {
            ErrorKind::Timeout
        } else if code >= 400 {
            ErrorKind::Status
        } else {
            ErrorKind::None
        },
        ..Record::default()
    }
}

/// Two runs: a steady one with a few 500s, and one with a stall and timeouts.
fn write_plot(path: &Path) -> PlotSummary {
    let a: Arc<str> = Arc::from("master");
    let b: Arc<str> = Arc::from("candidate");
    let run1 = (0..60_000u64).map(move |i| {
        let code = if i % 1500 == 0 { 500 } else { 200 };
        rec(&a, i, 2 + i % 3, code)
    });
    let run2 = (0..60_000u64).map(move |i| {
        let stalled = (20_000..23_000).contains(&i);
        let code = if stalled && i % 10 == 0 { 0 } else { 200 };
        let lat = if stalled { 23_000 - i + 5 } else { 3 };
        rec(&b, i, lat, code)
    });
    let mut out = Vec::new();
    let summary = plot_html(
        vec![
            PlotInput::from_records("master.bin", run1),
            PlotInput::from_records("candidate.bin", run2),
        ],
        &PlotOptions {
            title: "master vs candidate, 1000 req/s".into(),
            ..PlotOptions::default()
        },
        &mut out,
    )
    .unwrap();
    std::fs::write(path, out).unwrap();
    summary
}

fn unique_dir(base: &Path, what: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let d = base.join(format!("{what}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn html_plot_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
        if std::env::var("VOLLEY_SKIP_BROWSER").as_deref() == Ok("1") {
            eprintln!("VOLLEY_SKIP_BROWSER=1: skipping the browser test");
            return;
        }
        panic!(
            "{CHROMIUM} or {CHROMEDRIVER} is missing: run scripts/setup as root \
             (apt-get install chromium chromium-driver), or set VOLLEY_SKIP_BROWSER=1"
        );
    }
    let tmp = unique_dir(&std::env::temp_dir(), "volley-plot-browser");
    let html = tmp.join("plot.html");
    let summary = write_plot(&html);
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);

    let driver = start_driver();
    let session = Session::new(driver.port, &tmp.join("profile"));
    session.open(&html);

    let vp = session.js("return window.volleyPlot");
    let names: Vec<&str> = summary.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(vp["series"], json!(names));
    for s in &summary.series {
        assert_eq!(
            vp["points"][&s.name].as_u64(),
            Some((s.ok_points + s.error_points) as u64),
            "points of {}",
            s.name
        );
        assert_eq!(
            vp["latencySeries"][format!("{} errors", s.name)].as_u64(),
            Some(s.error_points as u64)
        );
        assert_eq!(
            vp["latencySeries"][format!("{} OK max", s.name)].as_u64(),
            Some(s.ok_points as u64)
        );
    }
    assert!(summary.series.iter().all(|s| s.error_points > 0));
    assert_eq!(vp["charts"], json!(4));

    // Four drawn canvases, a legend naming both runs, nothing fetched.
    let canvases = session.js(
        "return Array.from(document.querySelectorAll('.chart canvas')).map(c => [c.width, c.height])",
    );
    let canvases = canvases.as_array().unwrap();
    assert_eq!(canvases.len(), 4);
    assert!(canvases
        .iter()
        .all(|c| c[0].as_u64() > Some(200) && c[1].as_u64() > Some(100)));
    let legend = session.js("return document.querySelector('#latency .u-legend').textContent");
    for n in &names {
        assert!(legend.as_str().unwrap().contains(n), "{n} in {legend}");
    }
    let fetched = session.js("return performance.getEntriesByType('resource').map(e => e.name)");
    assert_eq!(fetched, json!([]));

    // Zoom reset and export work.
    session.js("window.volleyPlot.reset(); return null");
    let png_url = session.js("return window.volleyPlot.exportPng()");
    let png_url = png_url.as_str().unwrap();
    let exported = base64::engine::general_purpose::STANDARD
        .decode(png_url.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap();
    let (w, h) = png_size(&exported);
    assert!(w > 300 && h > 800, "{w}x{h}");

    let console = session.console();
    let errors: Vec<&Value> = console
        .iter()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .collect();
    assert!(errors.is_empty(), "console: {errors:?}");

    // The screenshot, kept as a test artifact.
    let shot = session.screenshot();
    let (w, h) = png_size(&shot);
    assert!(w >= 1000 && h >= 1000, "{w}x{h}");
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("volley-plot-browser");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("screenshot.png"), &shot).unwrap();
    std::fs::write(artifacts.join("export.png"), &exported).unwrap();
    std::fs::copy(&html, artifacts.join("plot.html")).unwrap();
    eprintln!("screenshot: {}", artifacts.join("screenshot.png").display());

    // A hostile page: a name that tries to close the script element, a
    // single record, absurd times. Still no error, one series.
    let hostile = tmp.join("hostile.html");
    let name = "</script><script>window.pwned=1</script>\u{1F680}";
    let attack: Arc<str> = Arc::from(name);
    let records = vec![
        rec(&attack, 0, 1, 200),
        Record {
            timestamp: i64::MIN,
            latency: u64::MAX,
            ..rec(&attack, 0, 1, 0)
        },
    ];
    let mut out = Vec::new();
    plot_html(
        vec![PlotInput::from_records("hostile", records)],
        &PlotOptions::default(),
        &mut out,
    )
    .unwrap();
    std::fs::write(&hostile, out).unwrap();
    session.open(&hostile);
    let vp = session.js("return [window.volleyPlot.series, window.pwned === undefined]");
    assert_eq!(vp, json!([[name], true]));
    let console = session.console();
    let errors: Vec<&Value> = console
        .iter()
        .filter(|e| e["level"] == "SEVERE" || e["level"] == "WARNING")
        .collect();
    assert!(errors.is_empty(), "console on the hostile page: {errors:?}");

    drop(session);
    drop(driver);
    let _ = std::fs::remove_dir_all(&tmp);
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (w, h)
}
