//! End-to-end tests of the results formats: roundtrips, damage, growth,
//! merging, size, and vegeta's own lines.

use std::io::Cursor;
use std::sync::Arc;

use bytes::Bytes;
use volley_results::{
    classify_error_text, encode, from_reader, merge, vegeta, ErrorKind, Format, Header, Phases,
    ReadError, Record, Records, Writer,
};

/// A small deterministic PRNG (xorshift64*), so tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const T0: i64 = 1_700_000_000_123_456_789;

fn header() -> Header {
    Header::new(
        "smoke",
        T0,
        serde_json::json!({"rate": "10000/1s", "duration": "10s", "volley": "0.1.0"}),
    )
}

/// Records exercising every field and flag, including extreme values.
fn varied_records() -> Vec<Record> {
    let url: Arc<str> = Arc::from("http://localhost:8080/status");
    let mut out = Vec::new();
    for i in 0..200u64 {
        let mut r = Record {
            attack: Arc::from(if i % 50 < 25 { "a" } else { "b" }),
            seq: i,
            timestamp: T0 + (i as i64) * 1_000_003,
            latency: 1_000_000 + i * 7919,
            lag: if i % 3 == 0 { 0 } else { i * 13 },
            phases: Phases {
                waiting: 900_000 + i,
                receiving: i % 4,
                ..Phases::default()
            },
            bytes_in: 5,
            bytes_out: if i % 10 == 0 { 42 } else { 0 },
            code: 200,
            method: Arc::from("GET"),
            url: url.clone(),
            ..Record::default()
        };
        if i % 17 == 0 {
            r.phases.blocked = 12_345;
            r.phases.dns = 2_000;
            r.phases.connecting = 50_000;
            r.phases.tls_handshaking = 1_000_000;
        }
        if i % 23 == 0 {
            r.code = 503;
            r.error_kind = ErrorKind::Status;
            r.error = Arc::from("503 Service Unavailable");
        }
        if i % 31 == 0 {
            r.code = 0;
            r.error_kind = ErrorKind::Timeout;
            r.error = Arc::from(format!("Get \"http://x/{i}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"));
            r.bytes_in = 0;
        }
        if i % 41 == 0 {
            r.body = Bytes::from(format!("hello, \"world\" {i}\n<&>"));
            r.url = Arc::from(format!("http://localhost:8080/item?id={i}&x=\u{e9}"));
            r.method = Arc::from("POST");
        }
        if i == 7 {
            // Out of order, far away, odd values.
            r.seq = 1_000_000;
            r.timestamp = T0 - 5_000_000_000;
        }
        out.push(r);
    }
    out.push(Record {
        attack: Arc::from(""),
        seq: u64::MAX,
        timestamp: i64::MIN,
        latency: u64::MAX,
        lag: u64::MAX,
        phases: Phases {
            blocked: u64::MAX,
            dns: 1,
            connecting: u64::MAX,
            tls_handshaking: 3,
            waiting: u64::MAX,
            receiving: u64::MAX,
        },
        bytes_in: u64::MAX,
        bytes_out: u64::MAX,
        code: u16::MAX,
        error_kind: ErrorKind::Other,
        error: Arc::from("x".repeat(10_000)),
        method: Arc::from(""),
        url: Arc::from(""),
        body: Bytes::from(vec![0u8; 3]),
    });
    out.push(Record {
        timestamp: i64::MAX,
        ..Record::default()
    });
    out
}

fn write_binary(records: &[Record], flush_every: usize) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), &header()).unwrap();
    for (i, r) in records.iter().enumerate() {
        w.write(r).unwrap();
        if flush_every > 0 && (i + 1) % flush_every == 0 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap()
}

fn read_all(name: &str, data: Vec<u8>) -> (Vec<Record>, Option<ReadError>) {
    let recs = from_reader(name, Cursor::new(data)).unwrap();
    collect(recs)
}

fn collect(
    recs: impl Iterator<Item = Result<Record, ReadError>>,
) -> (Vec<Record>, Option<ReadError>) {
    let mut out = Vec::new();
    let mut err = None;
    for item in recs {
        match item {
            Ok(r) => {
                assert!(err.is_none(), "a record after an error");
                out.push(r)
            }
            Err(e) => {
                assert!(err.is_none(), "two errors");
                err = Some(e)
            }
        }
    }
    (out, err)
}

fn to_format(
    records: &[Record],
    f: impl Fn(&mut Vec<u8>, &Record) -> std::io::Result<()>,
) -> Vec<u8> {
    let mut buf = Vec::new();
    for r in records {
        f(&mut buf, r).unwrap();
    }
    buf
}

#[test]
fn binary_roundtrip_is_exact() {
    let records = varied_records();
    for flush_every in [0, 1, 7, 1000] {
        let data = write_binary(&records, flush_every);
        let recs = from_reader("rt.bin", Cursor::new(data)).unwrap();
        assert_eq!(recs.format(), Format::Volley);
        let h = recs.header().unwrap().clone();
        assert_eq!(h.attack, "smoke");
        assert_eq!(h.started, T0);
        assert_eq!(h.meta["rate"], "10000/1s");
        let (got, err) = collect(recs);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(got, records);
    }
}

#[test]
fn binary_end_frame_marks_complete() {
    let records = varied_records();
    let data = write_binary(&records, 10);
    let mut recs = from_reader("x", Cursor::new(data.clone())).unwrap();
    assert!(!recs.is_complete());
    assert!(recs.by_ref().all(|r| r.is_ok()));
    assert!(recs.is_complete());
    // Without the 9-byte end frame: clean end, but not complete.
    let mut recs = from_reader("x", Cursor::new(data[..data.len() - 9].to_vec())).unwrap();
    assert!(recs.by_ref().all(|r| r.is_ok()));
    assert!(!recs.is_complete());
}

#[test]
fn json_roundtrip_is_lossless() {
    let records = varied_records();
    let json = to_format(&records, vegeta::write_json);
    let (got, err) = read_all("x.json", json.clone());
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, records);

    // json → binary → json gives the same bytes.
    let mut bin = Vec::new();
    let inputs = vec![from_reader("x.json", Cursor::new(json.clone())).unwrap()];
    let done = encode(inputs, Format::Volley, &mut bin).unwrap();
    assert!(done.warnings.is_empty());
    // encode merges by timestamp: compare against the sorted order.
    let (back, err) = read_all("x.bin", bin.clone());
    assert!(err.is_none());
    let mut sorted = records.clone();
    sorted.sort_by_key(|r| r.timestamp);
    let mut back_sorted = back.clone();
    back_sorted.sort_by_key(|r| r.timestamp);
    assert_eq!(back_sorted, sorted);
    let mut json2 = Vec::new();
    encode(
        vec![from_reader("x.bin", Cursor::new(bin)).unwrap()],
        Format::VegetaJson,
        &mut json2,
    )
    .unwrap();
    assert_eq!(json2, to_format(&back, vegeta::write_json));
}

#[test]
fn csv_roundtrip_keeps_vegeta_fields() {
    // CSV has no lag, phases or error kind: those come back as 0 / guessed.
    let records: Vec<Record> = varied_records()
        .into_iter()
        .map(|mut r| {
            r.lag = 0;
            r.phases = Phases::default();
            r.error_kind = classify_error_text(&r.error);
            r
        })
        .collect();
    let csv = to_format(&records, vegeta::write_csv);
    let recs = from_reader("x.csv", Cursor::new(csv)).unwrap();
    assert_eq!(recs.format(), Format::VegetaCsv);
    let (got, err) = collect(recs);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, records);
}

#[test]
fn binary_to_csv_to_binary() {
    let records: Vec<Record> = varied_records()[..150]
        .iter()
        .cloned()
        .map(|mut r| {
            r.lag = 0;
            r.phases = Phases::default();
            r.error_kind = classify_error_text(&r.error);
            r
        })
        .collect();
    let bin = write_binary(&records, 64);
    let mut csv = Vec::new();
    encode(
        vec![from_reader("a.bin", Cursor::new(bin)).unwrap()],
        Format::VegetaCsv,
        &mut csv,
    )
    .unwrap();
    let mut bin2 = Vec::new();
    encode(
        vec![from_reader("a.csv", Cursor::new(csv)).unwrap()],
        Format::Volley,
        &mut bin2,
    )
    .unwrap();
    let (mut got, err) = read_all("b.bin", bin2);
    assert!(err.is_none());
    let mut want = records;
    want.sort_by_key(|r| (r.timestamp, r.seq));
    got.sort_by_key(|r| (r.timestamp, r.seq));
    assert_eq!(got, want);
}

/// Cutting a file anywhere reads a prefix of the records, then either ends
/// cleanly (cut at a frame boundary) or reports a truncation.
#[test]
fn truncation_at_every_byte() {
    let records = varied_records()[..60].to_vec();
    let data = write_binary(&records, 5);
    // Frame boundaries, found by reading the frame headers.
    let header_len = 16 + u32::from_le_bytes(data[8..12].try_into().unwrap()) as usize;
    let mut boundaries = vec![header_len];
    let mut pos = header_len;
    while pos < data.len() {
        let len = u32::from_le_bytes(data[pos + 1..pos + 5].try_into().unwrap()) as usize;
        pos += 9 + len;
        boundaries.push(pos);
    }
    assert_eq!(pos, data.len());
    let mut last = 0;
    for cut in 0..data.len() {
        let prefix = data[..cut].to_vec();
        let recs = match from_reader("cut.bin", Cursor::new(prefix)) {
            Ok(r) => r,
            Err(e) => {
                assert!(cut < header_len, "open failed at {cut}: {e}");
                assert!(e.is_truncation() || cut == 0, "{e}");
                continue;
            }
        };
        let (got, err) = collect(recs);
        assert_eq!(got[..], records[..got.len()], "cut at {cut}");
        assert!(got.len() >= last, "fewer records at a longer cut");
        last = got.len();
        match err {
            None => assert!(cut == 0 || boundaries.contains(&cut), "clean end at {cut}"),
            Some(e) => {
                assert!(e.is_truncation(), "cut at {cut}: {e}");
                let msg = e.to_string();
                assert!(msg.starts_with("cut.bin: truncated "), "{msg}");
            }
        }
    }
    assert_eq!(last, records.len());
}

#[test]
fn corruption_is_detected_and_stops() {
    let records = varied_records()[..40].to_vec();
    let data = write_binary(&records, 8);
    for i in 0..data.len() {
        for bit in [0x01u8, 0x80] {
            let mut bad = data.clone();
            bad[i] ^= bit;
            let Ok(recs) = from_reader("bad.bin", Cursor::new(bad)) else {
                continue;
            };
            let (got, err) = collect(recs);
            assert_eq!(got[..], records[..got.len().min(records.len())]);
            if i >= 16 {
                let e = err.unwrap_or_else(|| panic!("flip at {i} went unnoticed"));
                let msg = e.to_string();
                assert!(
                    msg.contains("corrupt frame at byte")
                        || msg.contains("truncated frame")
                        || msg.contains("bad header"),
                    "{msg}"
                );
            }
        }
    }
}

#[test]
fn error_messages_are_one_line_and_name_the_place() {
    let records = varied_records()[..20].to_vec();
    let mut data = write_binary(&records, 10);
    let n = data.len();
    data[n - 20] ^= 0xff;
    let (_, err) = read_all("results.bin", data);
    let msg = err.unwrap().to_string();
    assert!(
        msg.starts_with("results.bin: corrupt frame at byte "),
        "{msg}"
    );
    assert!(msg.ends_with("checksum mismatch"), "{msg}");

    let e = from_reader(
        "x.txt",
        Cursor::new(b"hello world\nthis is text\n".to_vec()),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.txt: not a results file (expected volley binary, vegeta JSON lines or CSV)"
    );
    let (_, err) = read_all("r.json", b"{\"code\":200}\n{\"code\":\n".to_vec());
    let msg = err.unwrap().to_string();
    assert!(msg.starts_with("r.json: line 2: invalid JSON"), "{msg}");
    assert!(!msg.contains('\n'));
    let (_, err) = read_all(
        "r.csv",
        b"1,200,3,0,0,,,,0,GET,u,\n1,x,3,0,0,,,,0,GET,u,\n".to_vec(),
    );
    assert_eq!(
        err.unwrap().to_string(),
        "r.csv: line 2: bad status code \"x\""
    );
}

#[test]
fn vegeta_gob_gets_a_clear_error() {
    // The opening of `gob.NewEncoder(w).Encode(&vegeta.Result{…})`.
    let gob = hex("ff967f03010106526573756c7401ff8000010c010641747461636b010c000103536571010600");
    let e = from_reader("old.bin", Cursor::new(gob)).unwrap_err();
    assert!(matches!(e, ReadError::VegetaGob { .. }));
    assert!(e.to_string().contains("vegeta encode -to=json"), "{e}");
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn empty_input_is_an_empty_stream() {
    let (got, err) = read_all("empty", Vec::new());
    assert!(got.is_empty() && err.is_none());
}

/// A reader at the end of a file that is still being written sees every
/// complete frame so far.
#[test]
fn reading_while_writing() {
    let dir = std::env::temp_dir().join(format!("volley-results-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("growing.bin");
    let records = varied_records();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = Writer::new(file, &header()).unwrap();
    let mut seen = 0;
    for (i, chunk) in records.chunks(37).enumerate() {
        for r in chunk {
            w.write(r).unwrap();
        }
        w.flush().unwrap();
        let recs = volley_results::open_path(&path).unwrap();
        let (got, err) = collect(recs);
        assert!(err.is_none(), "after chunk {i}: {err:?}");
        assert_eq!(got[..], records[..got.len()]);
        assert_eq!(got.len(), seen + chunk.len());
        seen = got.len();
        // A partial frame at the end (the writer caught mid-write) reads as
        // a truncation, after the complete frames.
        let mut partial = std::fs::read(&path).unwrap();
        partial.extend_from_slice(&[1, 200, 0, 0, 0, 1, 2]);
        let (got2, err2) = read_all("p", partial);
        assert_eq!(got2.len(), seen);
        assert!(err2.unwrap().is_truncation());
    }
    w.finish().unwrap();
    let mut recs = volley_results::open_path(&path).unwrap();
    assert_eq!(recs.by_ref().count(), records.len());
    assert!(recs.is_complete());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn at(ts: i64, seq: u64, attack: &str) -> Record {
    Record {
        timestamp: ts,
        seq,
        attack: Arc::from(attack),
        code: 200,
        latency: 1000,
        ..Record::default()
    }
}

#[test]
fn merge_orders_by_timestamp_and_survives_errors() {
    let a: Vec<Record> = (0..100).map(|i| at(i * 30, i as u64, "a")).collect();
    let b: Vec<Record> = (0..70).map(|i| at(i * 45 + 7, i as u64, "b")).collect();
    let c: Vec<Record> = (0..50).map(|i| at(i * 61 + 3, i as u64, "c")).collect();
    let bin_a = write_binary(&a, 10);
    let json_b = to_format(&b, vegeta::write_json);
    let mut bin_c = write_binary(&c, 10);
    bin_c.truncate(bin_c.len() - 30); // cut inside the last frame
    let inputs: Vec<Records> = vec![
        from_reader("a.bin", Cursor::new(bin_a)).unwrap(),
        from_reader("b.json", Cursor::new(json_b)).unwrap(),
        from_reader("c.bin", Cursor::new(bin_c)).unwrap(),
    ];
    let mut got = Vec::new();
    let mut errors = Vec::new();
    for item in merge(inputs) {
        match item {
            Ok(r) => got.push(r),
            Err(e) => errors.push(e),
        }
    }
    assert_eq!(errors.len(), 1);
    assert!(errors[0].is_truncation() && errors[0].name() == "c.bin");
    assert!(got.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    assert_eq!(got.iter().filter(|r| &*r.attack == "a").count(), 100);
    assert_eq!(got.iter().filter(|r| &*r.attack == "b").count(), 70);
    let from_c = got.iter().filter(|r| &*r.attack == "c").count();
    assert!((40..50).contains(&from_c), "{from_c}");
}

#[test]
fn encode_merges_several_inputs_and_reports_warnings() {
    let a: Vec<Record> = (0..10).map(|i| at(i * 2, i as u64, "a")).collect();
    let b: Vec<Record> = (0..10).map(|i| at(i * 2 + 1, i as u64, "b")).collect();
    let mut bad_csv = to_format(&b, vegeta::write_csv);
    bad_csv.extend_from_slice(b"garbage line\n");
    let inputs = vec![
        from_reader("a.bin", Cursor::new(write_binary(&a, 0))).unwrap(),
        from_reader("b.csv", Cursor::new(bad_csv)).unwrap(),
    ];
    let mut out = Vec::new();
    let done = encode(inputs, Format::VegetaJson, &mut out).unwrap();
    assert_eq!(done.records, 20);
    assert_eq!(done.warnings.len(), 1);
    assert_eq!(
        done.warnings[0].to_string(),
        "b.csv: line 11: expected 12 columns, found 1"
    );
    let (got, _) = read_all("o.json", out);
    let ts: Vec<i64> = got.iter().map(|r| r.timestamp).collect();
    assert_eq!(ts, (0..20).collect::<Vec<_>>());
}

/// Records as an attack at 10,000 req/s against one URL writes them:
/// intended times on the pacer's schedule with a little jitter, latencies
/// of 1–50 ms (log-normal-ish), emitted in completion order, a few errors,
/// some new connections, a flush every 200 ms.
fn realistic_run(n: u64) -> Vec<Record> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let url: Arc<str> = Arc::from("https://service.example.com/api/v1/status");
    let get: Arc<str> = Arc::from("GET");
    let none: Arc<str> = Arc::from("");
    let e503: Arc<str> = Arc::from("503 Service Unavailable");
    // Bodies are kept by default (-max-body=-1), as vegeta does.
    let hello = Bytes::from_static(b"hello");
    let unavailable = Bytes::from_static(b"upstream unavailable");
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let ts = T0 + (i as i64) * 100_000 + rng.below(20_000) as i64;
        // log-uniform latency between 1 and 50 ms
        let latency = (1e6 * 50f64.powf(rng.unit())) as u64;
        let lag = rng.below(1_000_000).min(latency / 2);
        let receiving = rng.below(30_000);
        let write = 500 + rng.below(3_000);
        let mut r = Record {
            attack: none.clone(),
            seq: i,
            timestamp: ts,
            latency,
            lag,
            phases: Phases::default(),
            bytes_in: 5,
            bytes_out: 0,
            code: 200,
            error_kind: ErrorKind::None,
            error: none.clone(),
            method: get.clone(),
            url: url.clone(),
            body: hello.clone(),
        };
        if rng.below(100) == 0 {
            // A new connection: DNS, connect, TLS.
            r.phases.dns = 20_000 + rng.below(200_000);
            r.phases.blocked = r.phases.dns + rng.below(10_000);
            r.phases.connecting = 100_000 + rng.below(400_000);
            r.phases.tls_handshaking = 500_000 + rng.below(1_500_000);
        }
        let used = lag + r.phases.blocked + r.phases.connecting + r.phases.tls_handshaking;
        r.phases.receiving = receiving.min(latency.saturating_sub(used) / 4);
        r.phases.waiting = latency.saturating_sub(used + r.phases.receiving + write);
        match rng.below(1000) {
            0..=4 => {
                r.code = 503;
                r.error_kind = ErrorKind::Status;
                r.error = e503.clone();
                r.bytes_in = 20;
                r.body = unavailable.clone();
            }
            5 => {
                r.code = 0;
                r.error_kind = ErrorKind::Timeout;
                r.error = Arc::from(format!(
                    "Get \"{url}\": read tcp 10.0.0.1:{}->10.0.0.2:443: i/o timeout",
                    30_000 + rng.below(30_000)
                ));
                r.bytes_in = 0;
                r.body = Bytes::new();
                r.latency = 30_000_000_000 + rng.below(1_000_000);
            }
            _ => {}
        }
        out.push(r);
    }
    // Completion order, as workers emit them.
    out.sort_by_key(|r| r.end());
    out
}

#[test]
fn size_per_record() {
    let records = realistic_run(100_000);
    let mut w = Writer::new(Vec::new(), &header()).unwrap();
    let mut next_flush = records[0].end() + 200_000_000;
    for r in &records {
        if r.end() >= next_flush {
            w.flush().unwrap();
            next_flush += 200_000_000;
        }
        w.write(r).unwrap();
    }
    let data = w.finish().unwrap();
    let per = data.len() as f64 / records.len() as f64;
    println!(
        "volley binary: {per:.2} bytes per record ({} bytes)",
        data.len()
    );
    let json = to_format(&records[..1000], vegeta::write_json);
    println!(
        "vegeta JSON: {:.1} bytes per record",
        json.len() as f64 / 1000.0
    );
    assert!(per < 16.0, "{per:.2} bytes per record");
    // And it reads back exactly.
    let (got, err) = read_all("size.bin", data);
    assert!(err.is_none());
    assert_eq!(got, records);
}

/// Version 1 files (written before bodies carried over from record to
/// record) still read: there a record without a body flag has no body.
#[test]
fn reads_version_1_files() {
    let mk = |seq: u64, body: &'static [u8]| Record {
        seq,
        timestamp: T0 + seq as i64 * 1_000_000,
        latency: 500_000,
        code: 200,
        body: Bytes::from_static(body),
        ..Record::default()
    };
    // Every body differs from the one before: the same bytes in both versions.
    let distinct = vec![mk(0, b"a"), mk(1, b""), mk(2, b"b"), mk(3, b"")];
    let mut data = write_binary(&distinct, 0);
    assert_eq!(data[7], 2);
    data[7] = 1;
    let (got, err) = read_all("v1.bin", data);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, distinct);
    // A repeated body is written once in version 2 and carried over.
    let repeated = vec![mk(0, b"same"), mk(1, b"same"), mk(2, b""), mk(3, b"")];
    let data = write_binary(&repeated, 0);
    let (got, err) = read_all("v2.bin", data.clone());
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got, repeated);
    let mut v1 = data;
    v1[7] = 1;
    let (got, _) = read_all("v1.bin", v1);
    let bodies: Vec<&[u8]> = got.iter().map(|r| &r.body[..]).collect();
    assert_eq!(bodies, [&b"same"[..], b"", b"", b""]);
    // Versions outside 1..=2 are refused by name.
    let mut v9 = write_binary(&repeated, 0);
    v9[7] = 9;
    let e = from_reader("v9.bin", Cursor::new(v9)).unwrap_err();
    assert!(e.to_string().contains("version 9 is not supported"), "{e}");
}

/// Lines as vegeta 12 writes them (field order of `lib/results.go`).
#[test]
fn golden_vegeta_json() {
    let line = concat!(
        r#"{"attack":"big-bang","seq":3,"code":200,"timestamp":"2023-11-14T23:13:20.123456789+01:00","#,
        r#""latency":2500000,"bytes_out":4,"bytes_in":5,"error":"","body":"aGVsbG8=","#,
        r#""method":"POST","url":"http://localhost:8080/?a=1\u0026b=2","headers":{"Content-Type":["text/plain"]}}"#,
        "\n",
        r#"{"attack":"big-bang","seq":4,"code":0,"timestamp":"2023-11-14T22:13:20.2Z","latency":30000000000,"#,
        r#""bytes_out":0,"bytes_in":0,"error":"Get \"http://localhost:8080/\": dial tcp 127.0.0.1:8080: connect: connection refused","#,
        r#""body":null,"method":"GET","url":"http://localhost:8080/","headers":null}"#,
        "\n"
    );
    let recs = from_reader("v.json", Cursor::new(line.as_bytes().to_vec())).unwrap();
    assert_eq!(recs.format(), Format::VegetaJson);
    let (got, err) = collect(recs);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), 2);
    let r = &got[0];
    assert_eq!(&*r.attack, "big-bang");
    assert_eq!(r.seq, 3);
    assert_eq!(r.code, 200);
    assert_eq!(r.timestamp, 1_700_000_000_123_456_789);
    assert_eq!(r.latency, 2_500_000);
    assert_eq!((r.bytes_out, r.bytes_in), (4, 5));
    assert_eq!(&r.body[..], b"hello");
    assert_eq!(&*r.url, "http://localhost:8080/?a=1&b=2");
    assert_eq!(r.error_kind, ErrorKind::None);
    assert_eq!(r.lag, 0);
    let r = &got[1];
    assert_eq!(r.timestamp, 1_700_000_000_200_000_000);
    assert_eq!(r.error_kind, ErrorKind::Refused);
    assert!(r.body.is_empty());

    // What volley writes starts with exactly vegeta's fields and escaping.
    let mut out = Vec::new();
    vegeta::write_json(&mut out, &got[0]).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with(concat!(
        r#"{"attack":"big-bang","seq":3,"code":200,"timestamp":"2023-11-14T22:13:20.123456789Z","#,
        r#""latency":2500000,"bytes_out":4,"bytes_in":5,"error":"","body":"aGVsbG8=","#,
        r#""method":"POST","url":"http://localhost:8080/?a=1\u0026b=2","headers":null,"lag":0,"#
    )), "{out}");
    assert!(out.ends_with("\"error_kind\":\"none\"}\n"));
}

#[test]
fn golden_vegeta_csv() {
    let csv = concat!(
        "1700000000123456789,200,2500000,4,5,,aGVsbG8=,big-bang,3,POST,http://localhost:8080/,Q29udGVudC1UeXBlOiB0ZXh0L3BsYWluDQoNCg==\n",
        "1700000000200000000,0,30000000000,0,0,\"Get \"\"http://localhost:8080/\"\": dial tcp 127.0.0.1:8080: connect: connection refused\",,big-bang,4,GET,http://localhost:8080/,\n",
        "1700000000300000000,404,1000,0,9,404 Not Found,,,5,GET,\"http://h/?a=1,2\",\n",
    );
    let recs = from_reader("v.csv", Cursor::new(csv.as_bytes().to_vec())).unwrap();
    assert_eq!(recs.format(), Format::VegetaCsv);
    let (got, err) = collect(recs);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].timestamp, 1_700_000_000_123_456_789);
    assert_eq!(&got[0].body[..], b"hello");
    assert_eq!(&*got[0].method, "POST");
    assert_eq!(got[1].error_kind, ErrorKind::Refused);
    assert!(got[1]
        .error
        .starts_with("Get \"http://localhost:8080/\": dial"));
    assert_eq!(got[2].error_kind, ErrorKind::Status);
    assert_eq!(&*got[2].url, "http://h/?a=1,2");
    assert_eq!(got[2].seq, 5);

    // Written back, the rows match vegeta's byte for byte (volley keeps no
    // response headers, so that column is empty).
    let out = to_format(&got, vegeta::write_csv);
    let want = csv.replace("Q29udGVudC1UeXBlOiB0ZXh0L3BsYWluDQoNCg==", "");
    assert_eq!(String::from_utf8(out).unwrap(), want);

    // vegeta 6-column files from before v7.
    let old = "1700000000123456789,200,2500000,0,5,\"\"\n";
    let (got, err) = read_all("old.csv", old.as_bytes().to_vec());
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got[0].latency, 2_500_000);
}

#[test]
fn classify_error_texts() {
    let cases = [
        ("", ErrorKind::None),
        ("Get \"http://x/\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", ErrorKind::Timeout),
        ("read tcp 10.0.0.1:5000->10.0.0.2:80: i/o timeout", ErrorKind::Timeout),
        ("dial tcp 127.0.0.1:80: connect: connection refused", ErrorKind::Refused),
        ("dial tcp 127.0.0.1:80: socket: too many open files", ErrorKind::TooManyOpenFiles),
        ("dial tcp 127.0.0.1:80: bind: address already in use", ErrorKind::PortsExhausted),
        ("dial tcp 127.0.0.1:80: connect: cannot assign requested address", ErrorKind::PortsExhausted),
        ("dial tcp: lookup nope.invalid: no such host", ErrorKind::Dns),
        ("Get \"http://x/\": EOF", ErrorKind::Eof),
        ("read tcp 1.2.3.4:1->5.6.7.8:80: read: connection reset by peer", ErrorKind::Reset),
        ("write tcp 1.2.3.4:1->5.6.7.8:80: write: broken pipe", ErrorKind::Reset),
        ("x509: certificate signed by unknown authority", ErrorKind::Tls),
        ("500 Internal Server Error", ErrorKind::Status),
        ("404 Not Found", ErrorKind::Status),
        ("something odd", ErrorKind::Other),
    ];
    for (text, kind) in cases {
        assert_eq!(classify_error_text(text), kind, "{text}");
    }
}

/// Deterministic stand-in for the fuzz target: thousands of mutated files
/// in every format must decode without panicking, yielding at most one
/// error, last.
#[test]
fn mutated_inputs_never_panic() {
    let records = varied_records()[..30].to_vec();
    let seeds = [
        write_binary(&records, 4),
        to_format(&records, vegeta::write_json),
        to_format(&records, vegeta::write_csv),
    ];
    let mut rng = Rng(42);
    for round in 0..3000 {
        let mut data = seeds[round % seeds.len()].clone();
        for _ in 0..=rng.below(8) {
            if data.is_empty() {
                break;
            }
            let i = rng.below(data.len() as u64) as usize;
            match rng.below(5) {
                0 => data[i] ^= 1 << rng.below(8),
                1 => data[i] = rng.next() as u8,
                2 => data.truncate(i),
                3 => {
                    let j = rng.below(data.len() as u64) as usize;
                    let (a, b) = (i.min(j), i.max(j));
                    data.drain(a..b.min(a + 16));
                }
                _ => data.insert(i, rng.next() as u8),
            }
        }
        if let Ok(recs) = from_reader("fuzz", Cursor::new(data)) {
            let _ = collect(recs);
        }
    }
}
