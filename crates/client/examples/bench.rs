//! Micro-benchmark of the HTTP/1.1 path against an in-process tiny server
//! (its own thread), for profiling; nothing is asserted.
//!
//! ```text
//! cargo run --release -p volley-client --example bench -- [connections=50] [seconds=5] [rate=0]
//! ```
//!
//! The client runs on one thread (a current-thread runtime); it reports
//! requests per second and the client thread's CPU time per request (user
//! and system, from /proc/thread-self/stat). `rate` 0 runs flat out;
//! another value paces the connections to that total rate.

use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use volley_client::{Client, ClientConfig};

/// A server that answers every request head with a 5-byte body.
async fn server(listener: tokio::net::TcpListener) {
    while let Ok((mut s, _)) = listener.accept().await {
        let _ = s.set_nodelay(true);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            let mut have = 0;
            loop {
                let n = match s.read(&mut buf[have..]).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                have += n;
                let mut answers = 0;
                let mut start = 0;
                while let Some(i) = buf[start..have].windows(4).position(|w| w == b"\r\n\r\n") {
                    answers += 1;
                    start += i + 4;
                }
                buf.copy_within(start..have, 0);
                have -= start;
                for _ in 0..answers {
                    let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
                    if s.write_all(r).await.is_err() {
                        return;
                    }
                }
                if have == buf.len() {
                    return;
                }
            }
        });
    }
}

/// This thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after ')'.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (conns, secs, rate) = (arg(0, 50) as usize, arg(1, 5), arg(2, 0));

    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = std_listener.local_addr().expect("addr");
    std_listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            server(tokio::net::TcpListener::from_std(std_listener).expect("listener")).await;
        });
    });

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (n, elapsed, cpu, errors) = rt.block_on(async move {
        let client = Client::new(ClientConfig::default()).expect("client");
        let req = client
            .prepare("GET", &format!("http://{addr}/"), &[], Bytes::new())
            .expect("prepare");
        let start = Instant::now();
        let end = start + Duration::from_secs(secs);
        let cpu0 = thread_cpu();
        let mut tasks = Vec::new();
        for w in 0..conns {
            let (client, req) = (client.clone(), req.clone());
            tasks.push(tokio::spawn(async move {
                let mut s = client.session();
                let (mut n, mut errors) = (0u64, 0u64);
                let period =
                    (rate > 0).then(|| Duration::from_secs_f64(conns as f64 / rate as f64));
                let mut intended =
                    start + period.map_or(Duration::ZERO, |p| p.mul_f64(w as f64 / conns as f64));
                while intended < end {
                    if period.is_some() {
                        tokio::time::sleep_until(intended.into()).await;
                    } else {
                        intended = Instant::now();
                    }
                    let o = s.execute(&req, intended).await;
                    n += 1;
                    errors += u64::from(!o.is_success());
                    if let Some(p) = period {
                        intended += p;
                    }
                }
                (n, errors)
            }));
        }
        let (mut n, mut errors) = (0, 0);
        for t in tasks {
            let (a, b) = t.await.expect("worker");
            n += a;
            errors += b;
        }
        (
            n,
            start.elapsed(),
            thread_cpu().saturating_sub(cpu0),
            errors,
        )
    });
    println!(
        "{n} requests in {:.2}s: {:.0} req/s, {errors} errors, client CPU {:.1} µs/request",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / n.max(1) as f64
    );
}
