//! The volley binary results format, version 2: writer and streaming reader
//! (which also reads version 1).
//!
//! Designed for attacks that write tens of thousands of records a second to
//! a pipe or a file: a few bytes per request, append-only, readable while
//! written, and safe to cut at any byte (a crash loses at most the frame
//! being built, i.e. the last flush interval).
//!
//! # Layout
//!
//! All fixed-width integers are little-endian. `uvarint` is unsigned LEB128
//! (7 bits per byte, low group first, high bit = more follows, at most 10
//! bytes); `ivarint` is a zigzag-mapped signed value (`0,-1,1,-2…` →
//! `0,1,2,3…`) written as a uvarint.
//!
//! ## File header (written once by [`Writer::new`])
//!
//! | bytes | field |
//! |---|---|
//! | 0..7 | magic `56 4F 4C 4C 45 59 00` (`"VOLLEY\0"`) |
//! | 7 | format version, `02` (`01` is read too, see [`Record`](#record)) |
//! | 8..12 | `u32` length `H` of the JSON header |
//! | 12..16 | `u32` CRC-32 (IEEE, as `crc32fast`) of the JSON header |
//! | 16..16+H | JSON header: `{"version":2,"attack":…,"started":<unix ns>,"meta":{…}}` ([`Header`]) |
//!
//! ## Frames (repeated until end of file)
//!
//! | bytes | field |
//! |---|---|
//! | 0 | kind: `01` records frame, `02` end frame |
//! | 1..5 | `u32` payload length `L` (at most [`MAX_FRAME`]) |
//! | 5..9 | `u32` CRC-32 of the payload |
//! | 9..9+L | payload |
//!
//! A writer emits a records frame when [`Writer::flush`] is called (the
//! attack engine does so every 100–200 ms and at exit) or when the frame
//! reaches about 64 KiB, and one empty end frame from [`Writer::finish`].
//! Each frame goes to the underlying writer in a single `write_all`.
//!
//! ## Records frame payload
//!
//! | field | meaning |
//! |---|---|
//! | uvarint `hint` | sequence-number prediction interval in ns (0 = none), see below |
//! | uvarint `n` | number of new dictionary strings |
//! | `n` × (uvarint len, UTF-8 bytes) | strings appended to the file's dictionary, in order |
//! | uvarint `count` | number of records |
//! | `count` × record | the records, then the payload must end |
//!
//! The dictionary, and the "previous record" every record is encoded
//! against, live for the whole file (they carry over from frame to frame;
//! both start empty / all-zero). A *string reference* is a uvarint: `0` =
//! empty string, `1` = an inline literal follows (uvarint len + UTF-8 bytes,
//! not added to the dictionary; used once the dictionary is full), `k ≥ 2`
//! = dictionary entry `k − 2`.
//!
//! ## Record
//!
//! One flags byte, then the fields in this order, each present only when
//! its flag says so (absent fields take the value described):
//!
//! | flag bit | fields | when absent |
//! |---|---|---|
//! | — | ivarint `end − prev_end` where `end = timestamp + latency` (wrapping i64) | always present |
//! | — | uvarint `latency` | always present |
//! | 5 `SEQ` | ivarint `seq − predicted_seq` | `seq = predicted_seq` |
//! | 2 `STATUS` | uvarint `code`, byte `error_kind`, string ref `error` | same as previous |
//! | 3 `TARGET` | string refs `attack`, `method`, `url` | same as previous |
//! | 4 `BYTES` | uvarint `bytes_out`, uvarint `bytes_in` | same as previous |
//! | 6 `LAG` | uvarint `lag` | 0 |
//! | 0 `CONN` | uvarints `blocked`, `dns`, `connecting`, `tls_handshaking` | all 0 |
//! | 7 `TIMING` | uvarint `receiving`, ivarint `latency − lag − blocked − connecting − tls_handshaking − receiving − waiting` (wrapping) | `receiving = waiting = 0` |
//! | 1 `BODY` | uvarint len + body bytes | same as previous (version 1: empty) |
//!
//! Records are written in the order they are given (completion order for
//! an attack), so the end time moves forward by about one arrival interval
//! per record; `timestamp = end − latency`. The sequence number is predicted
//! from the timestamp: `predicted_seq = prev_seq + round((timestamp −
//! prev_timestamp) / hint)` when `hint > 0`, else `prev_seq + 1` (all
//! wrapping, rounding half away from zero). The writer sets each frame's
//! `hint` from the previous frame's records (the mean nanoseconds per
//! sequence number; while it has none it ends frames after 256 records),
//! so at a steady rate `seq` costs nothing even though completions arrive
//! out of order. Waiting is stored as its difference
//! from what the other phases leave of the latency, usually a few µs.
//! Everything is exact to the nanosecond.
//!
//! A typical record (status, target and sizes as the previous one, reused
//! connection) is flags + end delta + latency + lag + receiving + waiting
//! residual: 12–16 bytes; the `size_per_record` test measures 15.5 bytes
//! on average for 100k records of a 10,000 req/s run with 1–50 ms
//! latencies (vegeta's JSON: ~350).
//!
//! ## Reading
//!
//! [`Decoder`] yields records frame by frame. End of input exactly at a
//! frame boundary ends the stream cleanly; end of input inside the header
//! or a frame yields [`ReadError::Truncated`] as the last item (a file
//! still being written looks like that when read mid-frame: the complete
//! frames before it were all delivered); a bad CRC, unknown frame kind or
//! undecodable payload yields [`ReadError::Corrupt`] as the last item.
//! [`Decoder::is_complete`] says whether the end frame was seen.

use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::error::ReadError;
use crate::record::{ErrorKind, Phases, Record};
use crate::varint::{put_ivarint, put_uvarint, Cursor};

/// The file magic, `"VOLLEY\0"`.
pub const MAGIC: &[u8; 7] = b"VOLLEY\0";
/// The format version this crate writes and reads.
pub const VERSION: u8 = 2;
/// The oldest format version this crate reads: version 1 differs only in
/// that a record without the `BODY` flag has an empty body.
pub const MIN_VERSION: u8 = 1;
/// Largest frame payload a reader accepts (a writer stays far below it
/// unless a single record carries a huge body).
pub const MAX_FRAME: u32 = 1 << 30;
/// Largest JSON header a reader accepts.
pub const MAX_HEADER: u32 = 16 << 20;

const FRAME_RECORDS: u8 = 1;
const FRAME_END: u8 = 2;
const FRAME_HEADER_LEN: usize = 9;
/// A frame is closed once its payload reaches this size.
const FRAME_TARGET: usize = 64 * 1024 - 256;

const F_CONN: u8 = 1 << 0;
const F_BODY: u8 = 1 << 1;
const F_STATUS: u8 = 1 << 2;
const F_TARGET: u8 = 1 << 3;
const F_BYTES: u8 = 1 << 4;
const F_SEQ: u8 = 1 << 5;
const F_LAG: u8 = 1 << 6;
const F_TIMING: u8 = 1 << 7;

const REF_EMPTY: u64 = 0;
const REF_INLINE: u64 = 1;
const REF_BASE: u64 = 2;

/// Dictionary limits: past them strings are written inline, so a run whose
/// error texts are all different (they often embed local ports) keeps the
/// writer's memory bounded.
const DICT_MAX_ENTRIES: usize = 1 << 16;
const DICT_MAX_BYTES: usize = 16 << 20;
const DICT_MAX_STRING: usize = 4096;

/// The self-describing part of a results file: format version and run
/// metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Header {
    /// Format version ([`VERSION`]); [`Writer::new`] always writes its own.
    pub version: u32,
    /// Attack name (`-name`), empty when none.
    #[serde(default)]
    pub attack: String,
    /// When the attack started, Unix nanoseconds.
    #[serde(default)]
    pub started: i64,
    /// Run metadata: rate, duration, targets, command line, host, volley
    /// version … Free-form JSON; readers must tolerate any shape.
    #[serde(default)]
    pub meta: serde_json::Value,
}

impl Header {
    /// A header for the current format version.
    pub fn new(attack: impl Into<String>, started: i64, meta: serde_json::Value) -> Self {
        Header {
            version: u32::from(VERSION),
            attack: attack.into(),
            started,
            meta,
        }
    }
}

/// The fields every record is encoded against; shared by writer and reader
/// so the two cannot disagree on the starting state.
#[derive(Debug, Clone, Default)]
struct Prev {
    end: i64,
    timestamp: i64,
    seq: u64,
    code: u16,
    error_kind: ErrorKind,
    error: Arc<str>,
    attack: Arc<str>,
    method: Arc<str>,
    url: Arc<str>,
    bytes_out: u64,
    bytes_in: u64,
    body: Bytes,
}

fn predict_seq(prev_seq: u64, prev_ts: i64, ts: i64, hint: u64) -> u64 {
    if hint == 0 {
        return prev_seq.wrapping_add(1);
    }
    let dt = i128::from(ts.wrapping_sub(prev_ts));
    let h = i128::from(hint);
    let q = if dt >= 0 {
        (dt + h / 2) / h
    } else {
        -((-dt + h / 2) / h)
    };
    prev_seq.wrapping_add(q as i64 as u64)
}

fn waiting_residual(r: &Record) -> u64 {
    let p = &r.phases;
    r.latency
        .wrapping_sub(r.lag)
        .wrapping_sub(p.blocked)
        .wrapping_sub(p.connecting)
        .wrapping_sub(p.tls_handshaking)
        .wrapping_sub(p.receiving)
}

fn same(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

/// Writes records in the volley binary format (see the module docs).
///
/// Records are encoded into an in-memory frame as they come; the frame goes
/// to `W` on [`flush`](Writer::flush), when it reaches ~64 KiB, and on
/// [`finish`](Writer::finish). Dropping a writer without `finish` still
/// writes the pending frame (best effort) but no end frame.
pub struct Writer<W: Write> {
    w: Option<W>,
    prev: Prev,
    dict: HashMap<Arc<str>, u64>,
    dict_bytes: usize,
    /// New dictionary strings of the current frame.
    dict_buf: Vec<u8>,
    dict_new: u64,
    /// Encoded records of the current frame.
    rec_buf: Vec<u8>,
    rec_count: u64,
    /// The whole frame, assembled for one write.
    out: Vec<u8>,
    hint: u64,
    /// (min seq, its timestamp, max seq, its timestamp) in this frame.
    span: Option<(u64, i64, u64, i64)>,
}

impl<W: Write> Writer<W> {
    /// Writes the file header and returns a writer for the records.
    pub fn new(mut w: W, header: &Header) -> io::Result<Self> {
        let mut h = header.clone();
        h.version = u32::from(VERSION);
        let json = serde_json::to_vec(&h).map_err(io::Error::other)?;
        let mut out = Vec::with_capacity(16 + json.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        out.extend_from_slice(&json);
        w.write_all(&out)?;
        out.clear();
        Ok(Writer {
            w: Some(w),
            prev: Prev::default(),
            dict: HashMap::new(),
            dict_bytes: 0,
            dict_buf: Vec::with_capacity(1024),
            dict_new: 0,
            rec_buf: Vec::with_capacity(FRAME_TARGET + 1024),
            rec_count: 0,
            out,
            hint: 0,
            span: None,
        })
    }

    /// Appends one record to the current frame; writes the frame out when
    /// it is full. Allocates only for strings never seen before.
    pub fn write(&mut self, r: &Record) -> io::Result<()> {
        self.encode(r);
        // Without a hint yet (first frame), close early so that sequence
        // prediction starts after a few hundred records, not a whole frame.
        let early = self.hint == 0 && self.rec_count >= 256;
        if early || self.rec_buf.len() + self.dict_buf.len() >= FRAME_TARGET {
            self.end_frame()?;
        }
        Ok(())
    }

    /// Ends the current frame (if it holds any record) and flushes `W`, so
    /// that everything written so far is durable and visible to readers.
    pub fn flush(&mut self) -> io::Result<()> {
        self.end_frame()?;
        match self.w.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }

    /// Writes the pending frame and the end frame, flushes, and returns
    /// the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.end_frame()?;
        let mut w = self
            .w
            .take()
            .ok_or_else(|| io::Error::other("writer already finished"))?;
        w.write_all(&[FRAME_END, 0, 0, 0, 0, 0, 0, 0, 0])?;
        w.flush()?;
        Ok(w)
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> Option<&W> {
        self.w.as_ref()
    }

    fn put_str(&mut self, s: &Arc<str>) {
        if s.is_empty() {
            put_uvarint(&mut self.rec_buf, REF_EMPTY);
            return;
        }
        if let Some(&idx) = self.dict.get(&**s) {
            put_uvarint(&mut self.rec_buf, REF_BASE + idx);
            return;
        }
        if s.len() <= DICT_MAX_STRING
            && self.dict.len() < DICT_MAX_ENTRIES
            && self.dict_bytes + s.len() <= DICT_MAX_BYTES
        {
            let idx = self.dict.len() as u64;
            self.dict.insert(s.clone(), idx);
            self.dict_bytes += s.len();
            put_uvarint(&mut self.dict_buf, s.len() as u64);
            self.dict_buf.extend_from_slice(s.as_bytes());
            self.dict_new += 1;
            put_uvarint(&mut self.rec_buf, REF_BASE + idx);
        } else {
            put_uvarint(&mut self.rec_buf, REF_INLINE);
            put_uvarint(&mut self.rec_buf, s.len() as u64);
            self.rec_buf.extend_from_slice(s.as_bytes());
        }
    }

    fn encode(&mut self, r: &Record) {
        let p = &r.phases;
        let end = r.timestamp.wrapping_add(r.latency as i64);
        let pred = predict_seq(self.prev.seq, self.prev.timestamp, r.timestamp, self.hint);
        let status = r.code != self.prev.code
            || r.error_kind != self.prev.error_kind
            || !same(&r.error, &self.prev.error);
        let target = !same(&r.attack, &self.prev.attack)
            || !same(&r.method, &self.prev.method)
            || !same(&r.url, &self.prev.url);
        let bytes = r.bytes_out != self.prev.bytes_out || r.bytes_in != self.prev.bytes_in;
        let conn = p.blocked != 0 || p.dns != 0 || p.connecting != 0 || p.tls_handshaking != 0;
        let timing = p.receiving != 0 || p.waiting != 0;
        let body = r.body != self.prev.body;

        let mut flags = 0u8;
        if conn {
            flags |= F_CONN;
        }
        if body {
            flags |= F_BODY;
        }
        if status {
            flags |= F_STATUS;
        }
        if target {
            flags |= F_TARGET;
        }
        if bytes {
            flags |= F_BYTES;
        }
        if r.seq != pred {
            flags |= F_SEQ;
        }
        if r.lag != 0 {
            flags |= F_LAG;
        }
        if timing {
            flags |= F_TIMING;
        }

        self.rec_buf.push(flags);
        put_ivarint(&mut self.rec_buf, end.wrapping_sub(self.prev.end));
        put_uvarint(&mut self.rec_buf, r.latency);
        if flags & F_SEQ != 0 {
            put_ivarint(&mut self.rec_buf, r.seq.wrapping_sub(pred) as i64);
        }
        if status {
            put_uvarint(&mut self.rec_buf, u64::from(r.code));
            self.rec_buf.push(r.error_kind as u8);
            self.put_str(&r.error);
        }
        if target {
            self.put_str(&r.attack);
            self.put_str(&r.method);
            self.put_str(&r.url);
        }
        if bytes {
            put_uvarint(&mut self.rec_buf, r.bytes_out);
            put_uvarint(&mut self.rec_buf, r.bytes_in);
        }
        if r.lag != 0 {
            put_uvarint(&mut self.rec_buf, r.lag);
        }
        if conn {
            put_uvarint(&mut self.rec_buf, p.blocked);
            put_uvarint(&mut self.rec_buf, p.dns);
            put_uvarint(&mut self.rec_buf, p.connecting);
            put_uvarint(&mut self.rec_buf, p.tls_handshaking);
        }
        if timing {
            put_uvarint(&mut self.rec_buf, p.receiving);
            put_ivarint(
                &mut self.rec_buf,
                waiting_residual(r).wrapping_sub(p.waiting) as i64,
            );
        }
        if body {
            put_uvarint(&mut self.rec_buf, r.body.len() as u64);
            self.rec_buf.extend_from_slice(&r.body);
        }
        self.rec_count += 1;

        // Remember the state the next record is encoded against. Cloning an
        // Arc only bumps a counter; skip even that when nothing changed.
        let prev = &mut self.prev;
        prev.end = end;
        prev.timestamp = r.timestamp;
        prev.seq = r.seq;
        if status {
            prev.code = r.code;
            prev.error_kind = r.error_kind;
            prev.error = r.error.clone();
        }
        if target {
            prev.attack = r.attack.clone();
            prev.method = r.method.clone();
            prev.url = r.url.clone();
        }
        prev.bytes_out = r.bytes_out;
        prev.bytes_in = r.bytes_in;
        if body {
            prev.body = r.body.clone();
        }

        self.span = Some(match self.span {
            None => (r.seq, r.timestamp, r.seq, r.timestamp),
            Some((lo, lo_ts, hi, hi_ts)) => {
                let (lo, lo_ts) = if r.seq < lo {
                    (r.seq, r.timestamp)
                } else {
                    (lo, lo_ts)
                };
                let (hi, hi_ts) = if r.seq > hi {
                    (r.seq, r.timestamp)
                } else {
                    (hi, hi_ts)
                };
                (lo, lo_ts, hi, hi_ts)
            }
        });
    }

    fn end_frame(&mut self) -> io::Result<()> {
        if self.rec_count == 0 {
            return Ok(());
        }
        let Some(w) = self.w.as_mut() else {
            return Ok(());
        };
        let out = &mut self.out;
        out.clear();
        out.extend_from_slice(&[FRAME_RECORDS, 0, 0, 0, 0, 0, 0, 0, 0]);
        put_uvarint(out, self.hint);
        put_uvarint(out, self.dict_new);
        out.extend_from_slice(&self.dict_buf);
        put_uvarint(out, self.rec_count);
        out.extend_from_slice(&self.rec_buf);
        let payload = &out[FRAME_HEADER_LEN..];
        let len = payload.len() as u32;
        let crc = crc32fast::hash(payload);
        out[1..5].copy_from_slice(&len.to_le_bytes());
        out[5..9].copy_from_slice(&crc.to_le_bytes());
        let res = w.write_all(out);

        // The next frame's prediction interval: mean ns per sequence number
        // over this frame (kept when this frame cannot tell).
        if let Some((lo, lo_ts, hi, hi_ts)) = self.span.take() {
            if hi > lo && hi_ts > lo_ts {
                let dt = hi_ts.wrapping_sub(lo_ts) as u64;
                self.hint = dt / (hi - lo);
            }
        }
        self.dict_buf.clear();
        self.dict_new = 0;
        self.rec_buf.clear();
        self.rec_count = 0;
        res
    }
}

impl<W: Write> Drop for Writer<W> {
    fn drop(&mut self) {
        if self.w.is_some() {
            let _ = self.end_frame();
            if let Some(w) = self.w.as_mut() {
                let _ = w.flush();
            }
        }
    }
}

/// Reads `buf.len()` bytes unless the input ends first; returns how many
/// were read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Streaming reader of the volley binary format (see the module docs).
pub struct Decoder<R: BufRead> {
    r: R,
    name: String,
    header: Header,
    /// Byte offset in the input of the next unread byte.
    offset: u64,
    prev: Prev,
    dict: Vec<Arc<str>>,
    frame: Vec<u8>,
    /// Offset of the current frame, for messages.
    frame_offset: u64,
    pos: usize,
    left: u64,
    hint: u64,
    /// Version 2 on: a record without the `BODY` flag repeats the previous
    /// record's body (version 1: it has none).
    body_carries: bool,
    done: bool,
    complete: bool,
}

impl<R: BufRead> Decoder<R> {
    /// Reads and checks the file header.
    pub fn new(name: &str, mut r: R) -> Result<Self, ReadError> {
        let io_err = |source| ReadError::Io {
            name: name.to_string(),
            source,
        };
        let truncated = |offset| ReadError::Truncated {
            name: name.to_string(),
            offset,
            what: "header",
        };
        let mut fixed = [0u8; 16];
        let n = read_full(&mut r, &mut fixed).map_err(io_err)?;
        if n < 8 {
            if fixed[..n.min(7)] == MAGIC[..n.min(7)] {
                return Err(truncated(0));
            }
            return Err(ReadError::NotResults { name: name.into() });
        }
        if &fixed[..7] != MAGIC {
            return Err(ReadError::NotResults { name: name.into() });
        }
        if !(MIN_VERSION..=VERSION).contains(&fixed[7]) {
            return Err(ReadError::UnsupportedVersion {
                name: name.into(),
                version: fixed[7],
            });
        }
        if n < 16 {
            return Err(truncated(0));
        }
        let len = u32::from_le_bytes([fixed[8], fixed[9], fixed[10], fixed[11]]);
        let crc = u32::from_le_bytes([fixed[12], fixed[13], fixed[14], fixed[15]]);
        let bad = |reason: String| ReadError::BadHeader {
            name: name.to_string(),
            offset: 16,
            reason,
        };
        if len > MAX_HEADER {
            return Err(bad(format!("header length {len} is too large")));
        }
        let mut json = Vec::new();
        (&mut r)
            .take(u64::from(len))
            .read_to_end(&mut json)
            .map_err(io_err)?;
        if json.len() < len as usize {
            return Err(truncated(0));
        }
        if crc32fast::hash(&json) != crc {
            return Err(bad("checksum mismatch".into()));
        }
        let header: Header =
            serde_json::from_slice(&json).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        Ok(Decoder {
            r,
            name: name.to_string(),
            header,
            offset: 16 + u64::from(len),
            prev: Prev::default(),
            dict: Vec::new(),
            frame: Vec::new(),
            frame_offset: 0,
            pos: 0,
            left: 0,
            hint: 0,
            body_carries: fixed[7] >= 2,
            done: false,
            complete: false,
        })
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// True once the end frame written by [`Writer::finish`] was read: the
    /// writer finished cleanly (a file may also end cleanly at a frame
    /// boundary without it, e.g. while still being written).
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    fn corrupt(&mut self, reason: &'static str) -> ReadError {
        self.done = true;
        ReadError::Corrupt {
            name: self.name.clone(),
            offset: self.frame_offset,
            reason,
        }
    }

    /// Reads the next frame; `Ok(false)` at a clean end of input.
    fn next_frame(&mut self) -> Result<bool, ReadError> {
        loop {
            self.frame_offset = self.offset;
            let mut head = [0u8; FRAME_HEADER_LEN];
            let n = read_full(&mut self.r, &mut head).map_err(|source| ReadError::Io {
                name: self.name.clone(),
                source,
            })?;
            if n == 0 {
                return Ok(false);
            }
            let truncated = ReadError::Truncated {
                name: self.name.clone(),
                offset: self.frame_offset,
                what: "frame",
            };
            if head[0] != FRAME_RECORDS && head[0] != FRAME_END {
                return Err(self.corrupt("unknown frame kind"));
            }
            if n < FRAME_HEADER_LEN {
                return Err(truncated);
            }
            let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
            let crc = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
            if len > MAX_FRAME {
                return Err(self.corrupt("frame length out of range"));
            }
            self.frame.clear();
            self.pos = 0;
            // `take` grows the buffer with the data actually present, so a
            // damaged length cannot make us allocate gigabytes up front.
            (&mut self.r)
                .take(u64::from(len))
                .read_to_end(&mut self.frame)
                .map_err(|source| ReadError::Io {
                    name: self.name.clone(),
                    source,
                })?;
            if self.frame.len() < len as usize {
                return Err(truncated);
            }
            self.offset += FRAME_HEADER_LEN as u64 + u64::from(len);
            if crc32fast::hash(&self.frame) != crc {
                return Err(self.corrupt("checksum mismatch"));
            }
            if head[0] == FRAME_END {
                if len != 0 {
                    return Err(self.corrupt("end frame with a payload"));
                }
                self.complete = true;
                continue;
            }
            self.parse_frame_head()?;
            if self.left > 0 {
                return Ok(true);
            }
        }
    }

    fn parse_frame_head(&mut self) -> Result<(), ReadError> {
        let mut c = Cursor::new(&self.frame);
        let parsed = (|| {
            let hint = c.uvarint()?;
            let n = c.uvarint()?;
            let mut new = Vec::new();
            for _ in 0..n {
                let len = c.uvarint()?;
                let s = std::str::from_utf8(c.bytes(len)?).ok()?;
                new.push(Arc::<str>::from(s));
            }
            let count = c.uvarint()?;
            Some((hint, new, count))
        })();
        let pos = c.pos();
        let Some((hint, new, count)) = parsed else {
            return Err(self.corrupt("bad frame header"));
        };
        // Each record takes at least two bytes.
        if count > (self.frame.len() - pos) as u64 / 2 + 1 {
            return Err(self.corrupt("record count out of range"));
        }
        self.dict.extend(new);
        self.hint = hint;
        self.left = count;
        self.pos = pos;
        Ok(())
    }

    fn decode_record(&mut self) -> Option<Record> {
        let mut c = Cursor::new(&self.frame);
        c.bytes(self.pos as u64)?;
        let dict = &self.dict;
        let prev = &mut self.prev;
        let get_str = |c: &mut Cursor<'_>| -> Option<Arc<str>> {
            match c.uvarint()? {
                REF_EMPTY => Some(Arc::from("")),
                REF_INLINE => {
                    let len = c.uvarint()?;
                    Some(Arc::from(std::str::from_utf8(c.bytes(len)?).ok()?))
                }
                k => dict.get(usize::try_from(k - REF_BASE).ok()?).cloned(),
            }
        };
        let flags = c.u8()?;
        let end = prev.end.wrapping_add(c.ivarint()?);
        let latency = c.uvarint()?;
        let timestamp = end.wrapping_sub(latency as i64);
        let pred = predict_seq(prev.seq, prev.timestamp, timestamp, self.hint);
        let seq = if flags & F_SEQ != 0 {
            pred.wrapping_add(c.ivarint()? as u64)
        } else {
            pred
        };
        if flags & F_STATUS != 0 {
            let code = u16::try_from(c.uvarint()?).ok()?;
            let kind = ErrorKind::from_u8(c.u8()?)?;
            let error = get_str(&mut c)?;
            prev.code = code;
            prev.error_kind = kind;
            prev.error = error;
        }
        if flags & F_TARGET != 0 {
            prev.attack = get_str(&mut c)?;
            prev.method = get_str(&mut c)?;
            prev.url = get_str(&mut c)?;
        }
        if flags & F_BYTES != 0 {
            prev.bytes_out = c.uvarint()?;
            prev.bytes_in = c.uvarint()?;
        }
        let lag = if flags & F_LAG != 0 { c.uvarint()? } else { 0 };
        let mut phases = Phases::default();
        if flags & F_CONN != 0 {
            phases.blocked = c.uvarint()?;
            phases.dns = c.uvarint()?;
            phases.connecting = c.uvarint()?;
            phases.tls_handshaking = c.uvarint()?;
        }
        let mut rec = Record {
            attack: prev.attack.clone(),
            seq,
            timestamp,
            latency,
            lag,
            phases,
            bytes_in: prev.bytes_in,
            bytes_out: prev.bytes_out,
            code: prev.code,
            error_kind: prev.error_kind,
            error: prev.error.clone(),
            method: prev.method.clone(),
            url: prev.url.clone(),
            body: Bytes::new(),
        };
        if flags & F_TIMING != 0 {
            rec.phases.receiving = c.uvarint()?;
            let residual = c.ivarint()? as u64;
            rec.phases.waiting = waiting_residual(&rec).wrapping_sub(residual);
        }
        if flags & F_BODY != 0 {
            let len = c.uvarint()?;
            rec.body = Bytes::copy_from_slice(c.bytes(len)?);
            if self.body_carries {
                prev.body = rec.body.clone();
            }
        } else if self.body_carries {
            rec.body = prev.body.clone();
        }
        prev.end = end;
        prev.timestamp = timestamp;
        prev.seq = seq;
        self.pos = c.pos();
        Some(rec)
    }
}

impl<R: BufRead> Iterator for Decoder<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.left == 0 {
            if self.pos != self.frame.len() {
                return Some(Err(self.corrupt("trailing bytes after the last record")));
            }
            match self.next_frame() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        match self.decode_record() {
            Some(rec) => {
                self.left -= 1;
                Some(Ok(rec))
            }
            None => Some(Err(self.corrupt("undecodable record"))),
        }
    }
}
