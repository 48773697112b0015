//! The `volley` binary end to end: real processes, real sockets on
//! 127.0.0.1, the origin simulator as the target. Checks the outputs users
//! parse, the exit codes, and that bad input gets a one-line error.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn volley() -> Command {
    Command::new(env!("CARGO_BIN_EXE_volley"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("volley-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A `volley origin` process on a free port; killed on drop.
struct Origin {
    child: Child,
    addr: String,
}

impl Origin {
    fn start(args: &[&str]) -> Origin {
        let mut child = volley()
            .arg("origin")
            .args(["-addr", "127.0.0.1:0", "-cpus", "1"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split_whitespace()
            .find(|w| w.starts_with("127.0.0.1:"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Origin { child, addr }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = volley()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A process that rejects its flags may exit before reading its input:
    // a broken pipe here is part of the run, not a test failure.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// Runs `volley attack args` with `targets` on stdin.
fn attack(targets: &str, args: &[&str]) -> Output {
    let all: Vec<&str> = std::iter::once("attack")
        .chain(args.iter().copied())
        .collect();
    run(&all, targets.as_bytes())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts a failed run with `code` and a single-line error containing `want`.
fn assert_one_line_error(out: &Output, code: i32, want: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err:?}");
    assert!(err.contains(want), "{err:?} lacks {want:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn attack_report_encode_round_trip() {
    let origin = Origin::start(&["-body", "hello"]);
    let targets = format!("GET http://{}/\n", origin.addr);
    let out = attack(&targets, &["-rate=200", "-duration=1s", "-max-body=0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bin = tmp("rt.bin");
    std::fs::write(&bin, &out.stdout).unwrap();
    // A few bytes per request, not a text line.
    assert!(
        out.stdout.len() < 200 * 40,
        "{} bytes for 200 results",
        out.stdout.len()
    );

    let report = run(&["report", bin.to_str().unwrap()], b"");
    assert!(report.status.success());
    let r = text(&report.stdout);
    let lines: Vec<&str> = r.lines().collect();
    assert!(
        lines[0].starts_with("Requests      [total, rate, throughput]         200, "),
        "{r}"
    );
    assert!(
        lines[1].starts_with("Duration      [total, attack, wait]  "),
        "{r}"
    );
    assert!(
        lines[2].starts_with("Latencies     [min, mean, 50, 90, 95, 99, max]  "),
        "{r}"
    );
    assert_eq!(
        lines[3],
        "Bytes In      [total, mean]                     1000, 5.00"
    );
    assert_eq!(
        lines[5],
        "Success       [ratio]                           100.00%"
    );
    assert_eq!(
        lines[6].trim_end(),
        "Status Codes  [code:count]                      200:200"
    );

    // binary → JSON → binary reports the same.
    let json = run(&["encode", "-to=json", bin.to_str().unwrap()], b"");
    assert!(json.status.success());
    assert_eq!(text(&json.stdout).lines().count(), 200);
    let back = run(&["encode", "-to=binary"], &json.stdout);
    assert!(back.status.success());
    let again = run(&["report"], &back.stdout);
    assert_eq!(text(&again.stdout), r);

    // JSON report carries vegeta's field names.
    let j = run(&["report", "-type=json", bin.to_str().unwrap()], b"");
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["requests"], 200);
    assert_eq!(v["status_codes"]["200"], 200);
    assert!(v["latencies"]["99th"].as_u64().unwrap() > 0);
}

#[test]
fn thresholds_exit_99_when_one_fails() {
    let origin = Origin::start(&["-body", "ok", "-latency", "20ms"]);
    let targets = format!("GET http://{}/\n", origin.addr);
    let out = attack(
        &targets,
        &[
            "-rate=50",
            "-duration=500ms",
            "-threshold",
            "p99<5ms",
            "-threshold",
            "success>=99%",
        ],
    );
    assert_eq!(out.status.code(), Some(99), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("p99<5ms"), "{err}");
    let bin = tmp("th.bin");
    std::fs::write(&bin, &out.stdout).unwrap();
    let ok = run(
        &["report", "-threshold", "p50>=20ms", bin.to_str().unwrap()],
        b"",
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stdout));
}

#[test]
fn closed_model_and_ramps_run_from_the_command_line() {
    let origin = Origin::start(&["-body", "ok", "-latency", "10ms"]);
    let targets = format!("GET http://{}/\n", origin.addr);
    let out = attack(
        &targets,
        &["-users", "4", "-think", "40ms", "-duration", "1s"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rep = run(&["report", "-type=k6"], &out.stdout);
    let k6 = text(&rep.stdout);
    assert!(k6.contains("http_req_duration"), "{k6}");
    assert!(k6.contains("vus"), "{k6}");
    // A linear ramp: 0 → 200/s over 1 s sends about 100 requests.
    let out = attack(&targets, &["-shape", "linear:0..200", "-duration", "1s"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rep = run(&["report", "-type=json"], &out.stdout);
    let v: serde_json::Value = serde_json::from_slice(&rep.stdout).unwrap();
    assert_eq!(v["requests"], 100, "{v}");
}

/// Writes a CA, a server certificate for 127.0.0.1 and a client
/// certificate signed by the CA; returns their paths.
fn certificates() -> [PathBuf; 5] {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(vec![]).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issue = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca_cert, &ca_key)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let (server, server_key) = issue(vec!["127.0.0.1".into(), "localhost".into()]);
    let (client, client_key) = issue(vec!["client".into()]);
    let paths = [
        tmp("ca.crt"),
        tmp("server.crt"),
        tmp("server.key"),
        tmp("client.crt"),
        tmp("client.key"),
    ];
    for (p, c) in paths
        .iter()
        .zip([ca_cert.pem(), server, server_key, client, client_key])
    {
        std::fs::write(p, c).unwrap();
    }
    paths
}

#[test]
fn tls_mtls_http2_and_h2c() {
    let [ca, crt, key, ccrt, ckey] = certificates();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let origin = Origin::start(&[
        "-body",
        "tls",
        "-cert",
        &s(&crt),
        "-key",
        &s(&key),
        "-client-ca",
        &s(&ca),
    ]);
    let targets = format!("GET https://{}/\n", origin.addr);
    // With a client certificate: every request succeeds (HTTP/2 via ALPN).
    let out = attack(
        &targets,
        &[
            "-rate=50",
            "-duration=400ms",
            "-root-certs",
            &s(&ca),
            "-cert",
            &s(&ccrt),
            "-key",
            &s(&ckey),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["report", "-type=json"], &out.stdout).stdout).unwrap();
    assert_eq!(v["requests"], 20, "{v}");
    assert_eq!(v["success"], 1.0, "{v}");
    // Same over HTTP/1.1 (the seeds' -http2 false).
    let out = attack(
        &targets,
        &[
            "-http2",
            "false",
            "-rate=50",
            "-duration=400ms",
            "-root-certs",
            &s(&ca),
            "-cert",
            &s(&ccrt),
            "-key",
            &s(&ckey),
        ],
    );
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["report", "-type=json"], &out.stdout).stdout).unwrap();
    assert_eq!(v["success"], 1.0, "{v}");
    // Without one: measured as errors, not a crash.
    let out = attack(
        &targets,
        &["-rate=50", "-duration=200ms", "-root-certs", &s(&ca)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["report", "-type=json"], &out.stdout).stdout).unwrap();
    assert_eq!(v["success"], 0.0, "{v}");
    assert!(!v["errors"].as_array().unwrap().is_empty(), "{v}");

    let h2c = Origin::start(&["-body", "h2c", "-h2c"]);
    let out = attack(
        &format!("GET http://{}/\n", h2c.addr),
        &["-h2c", "-rate=50", "-duration=400ms"],
    );
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["report", "-type=json"], &out.stdout).stdout).unwrap();
    assert_eq!(v["success"], 1.0, "{v}");
}

#[test]
fn interrupted_attacks_keep_their_results() {
    let origin = Origin::start(&["-body", "ok"]);
    let bin = tmp("int.bin");
    let mut child = volley()
        .args([
            "attack",
            "-rate=100",
            "-duration=60s",
            "-output",
            bin.to_str().unwrap(),
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("GET http://{}/\n", origin.addr).as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["report", "-type=json", bin.to_str().unwrap()], b"").stdout)
            .unwrap();
    let n = v["requests"].as_u64().unwrap();
    assert!((100..=200).contains(&n), "{n} results after 1.5 s at 100/s");
}

#[test]
fn truncated_results_report_everything_before_the_cut() {
    let origin = Origin::start(&["-body", "ok"]);
    let out = attack(
        &format!("GET http://{}/\n", origin.addr),
        &["-rate=500", "-duration=1s"],
    );
    let full = out.stdout;
    let cut = tmp("cut.bin");
    std::fs::write(&cut, &full[..full.len() * 2 / 3]).unwrap();
    let rep = run(&["report", "-type=json", cut.to_str().unwrap()], b"");
    assert_eq!(rep.status.code(), Some(0), "{}", text(&rep.stderr));
    assert!(
        text(&rep.stderr).contains("warning"),
        "{}",
        text(&rep.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&rep.stdout).unwrap();
    assert!(v["requests"].as_u64().unwrap() > 100, "{v}");
}

#[test]
fn bad_input_is_a_one_line_error_and_exit_2() {
    let foreign = tmp("foreign.txt");
    std::fs::write(&foreign, b"\x00\x01\x02 this is not a results file").unwrap();
    let f = foreign.to_str().unwrap();
    assert_one_line_error(&run(&["report", f], b""), 2, "foreign.txt");
    assert_one_line_error(
        &run(&["report", "/nonexistent/r.bin"], b""),
        2,
        "/nonexistent/r.bin",
    );
    assert_one_line_error(&run(&["encode", "-to=xml"], b""), 2, "-to");
    assert_one_line_error(&run(&["plot", f], b""), 2, "foreign.txt");
    assert_one_line_error(&run(&["plot"], b""), 2, "no results");
    assert_one_line_error(&run(&["report", "-type=pie"], b""), 2, "pie");
    assert_one_line_error(
        &run(&["attack", "-rate=lots"], b"GET http://127.0.0.1:1/\n"),
        2,
        "-rate",
    );
    assert_one_line_error(&run(&["attack", "-duration=1s"], b"GET\n"), 2, "targets:1:");
    assert_one_line_error(&run(&["attack", "-duration=1s"], b""), 2, "no targets");
    assert_one_line_error(&run(&["attack", "-wat"], b""), 2, "unknown flag -wat");
    assert_one_line_error(
        &run(
            &["attack", "-cert", f, "-key", f],
            b"GET http://127.0.0.1:1/\n",
        ),
        2,
        "foreign.txt",
    );
    let recipe = tmp("bad.json");
    std::fs::write(&recipe, br#"{"stages":[{"at":0,"status":"two hundred"}]}"#).unwrap();
    assert_one_line_error(
        &run(&["origin", "-recipe", recipe.to_str().unwrap()], b""),
        2,
        "status",
    );
    assert_one_line_error(&run(&["origin", "-latency", "soon"], b""), 2, "-latency");
    assert_one_line_error(&run(&["frobnicate"], b""), 2, "unknown command");
}
