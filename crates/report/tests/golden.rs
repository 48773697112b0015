//! Golden tests: records shaped so that volley must print exactly what a
//! seed report shows vegeta printing. The seeds' markdown dropped trailing
//! spaces, so lines are compared with trailing spaces trimmed; the exact
//! bytes are locked by the snapshot tests.

mod common;

use common::*;
use volley_report::{text, Histogram, Record, Sink};
use volley_results::ErrorKind;

fn trim_lines(s: &str) -> String {
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
}

/// Seed 002, "OriginSimulator for both origins, 500ms latency": 24,000
/// requests at 400/s for 59.997s, all `404 Not Found` after about 1.005s.
#[test]
fn text_report_reproduces_seed_002() {
    const N: u64 = 24_000;
    const STEP: u64 = 2_499_979; // 23,999 steps = 59.996996021s
    let records: Vec<Record> = (0..N)
        .map(|i| {
            let latency = match i {
                0 => 1_211_000_000,
                1..=300 => 1_015_000_000,
                i if i == N - 1 => 1_004_000_000,
                _ => 1_005_000_000,
            };
            let mut r = rec(T0 + (i * STEP) as i64, latency, 404);
            r.bytes_in = 45;
            r.error_kind = ErrorKind::Status;
            r.error = "404 Not Found".into();
            r
        })
        .collect();
    let m = metrics_of(&records);
    let mut out = Vec::new();
    text::report(&m, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    let seed = "\
Requests      [total, rate, throughput]         24000, 400.02, 0.00
Duration      [total, attack, wait]             1m1s, 59.997s, 1.004s
Latencies     [min, mean, 50, 90, 95, 99, max]  1.004s, 1.005s, 1.005s, 1.005s, 1.005s, 1.015s, 1.211s
Bytes In      [total, mean]                     1080000, 45.00
Bytes Out     [total, mean]                     0, 0.00
Success       [ratio]                           0.00%
Status Codes  [code:count]                      404:24000
Error Set:
404 Not Found
";
    assert_eq!(trim_lines(&out), seed);
    // vegeta leaves two spaces after every code:count.
    assert!(out.contains("404:24000  \nError Set:\n"));
}

/// Seed 003's five `hist[0,20ms,40ms,60ms,80ms,100ms,200ms,300ms,400ms,500ms]`
/// tables, from records with the same counts per bucket.
#[test]
fn hist_report_reproduces_seed_003() {
    let seeds: [(&[u64; 10], &str); 5] = [
        (
            &[2600, 2259, 6892, 136, 22, 10, 53, 19, 9, 0],
            "\
Bucket           #     %       Histogram
[0s,     20ms]   2600  21.67%  ################
[20ms,   40ms]   2259  18.82%  ##############
[40ms,   60ms]   6892  57.43%  ###########################################
[60ms,   80ms]   136   1.13%
[80ms,   100ms]  22    0.18%
[100ms,  200ms]  10    0.08%
[200ms,  300ms]  53    0.44%
[300ms,  400ms]  19    0.16%
[400ms,  500ms]  9     0.07%
[500ms,  +Inf]   0     0.00%
",
        ),
        (
            &[1828, 1754, 7583, 754, 43, 38, 0, 0, 0, 0],
            "\
Bucket           #     %       Histogram
[0s,     20ms]   1828  15.23%  ###########
[20ms,   40ms]   1754  14.62%  ##########
[40ms,   60ms]   7583  63.19%  ###############################################
[60ms,   80ms]   754   6.28%   ####
[80ms,   100ms]  43    0.36%
[100ms,  200ms]  38    0.32%
[200ms,  300ms]  0     0.00%
[300ms,  400ms]  0     0.00%
[400ms,  500ms]  0     0.00%
[500ms,  +Inf]   0     0.00%
",
        ),
        (
            &[11781, 14, 85, 49, 0, 1, 4, 55, 11, 0],
            "\
Bucket           #      %       Histogram
[0s,     20ms]   11781  98.17%  #########################################################################
[20ms,   40ms]   14     0.12%
[40ms,   60ms]   85     0.71%
[60ms,   80ms]   49     0.41%
[80ms,   100ms]  0      0.00%
[100ms,  200ms]  1      0.01%
[200ms,  300ms]  4      0.03%
[300ms,  400ms]  55     0.46%
[400ms,  500ms]  11     0.09%
[500ms,  +Inf]   0      0.00%
",
        ),
        (
            &[1684, 1789, 7814, 631, 43, 16, 6, 17, 0, 0],
            "\
Bucket           #     %       Histogram
[0s,     20ms]   1684  14.03%  ##########
[20ms,   40ms]   1789  14.91%  ###########
[40ms,   60ms]   7814  65.12%  ################################################
[60ms,   80ms]   631   5.26%   ###
[80ms,   100ms]  43    0.36%
[100ms,  200ms]  16    0.13%
[200ms,  300ms]  6     0.05%
[300ms,  400ms]  17    0.14%
[400ms,  500ms]  0     0.00%
[500ms,  +Inf]   0     0.00%
",
        ),
        (
            &[1980, 2097, 7066, 764, 29, 26, 4, 27, 7, 0],
            "\
Bucket           #     %       Histogram
[0s,     20ms]   1980  16.50%  ############
[20ms,   40ms]   2097  17.47%  #############
[40ms,   60ms]   7066  58.88%  ############################################
[60ms,   80ms]   764   6.37%   ####
[80ms,   100ms]  29    0.24%
[100ms,  200ms]  26    0.22%
[200ms,  300ms]  4     0.03%
[300ms,  400ms]  27    0.22%
[400ms,  500ms]  7     0.06%
[500ms,  +Inf]   0     0.00%
",
        ),
    ];
    for (counts, want) in seeds {
        let mut h =
            Histogram::parse("[0,20ms,40ms,60ms,80ms,100ms,200ms,300ms,400ms,500ms]").unwrap();
        let bounds = h.bounds().to_vec();
        for (i, &n) in counts.iter().enumerate() {
            for k in 0..n {
                // Spread within the bucket, including its lower bound.
                let width = bounds.get(i + 1).map_or(MS, |hi| hi - bounds[i]);
                h.add(&rec(T0, bounds[i] + k % width, 200));
            }
        }
        let mut out = Vec::new();
        h.report(&mut out).unwrap();
        assert_eq!(trim_lines(&String::from_utf8(out).unwrap()), want);
    }
}
