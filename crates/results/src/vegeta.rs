//! vegeta's JSON-lines and CSV result encodings, read and written.
//!
//! Field names, order and meanings follow vegeta's `lib/results.go` (v12):
//! JSON lines carry `attack, seq, code, timestamp` (RFC 3339 with
//! nanoseconds), `latency` (ns), `bytes_out, bytes_in, error, body`
//! (base64), `method, url, headers`; CSV has twelve columns: Unix-ns
//! timestamp, code, latency ns, bytes out, bytes in, error, base64 body,
//! attack, seq, method, url, base64 headers.
//!
//! volley adds its own keys to JSON (`lag`, `blocked`, `dns`, `connecting`,
//! `tls_handshaking`, `waiting`, `receiving`, `error_kind`); vegeta ignores
//! unknown keys, and with them JSON carries a [`Record`] losslessly. CSV
//! stays exactly vegeta's twelve columns (vegeta rejects any other count),
//! so lag and phases are lost there. volley records no response headers;
//! `headers` is written as `null` / an empty column and ignored when read.
//!
//! Reading fills what the line has; phases and lag default to 0 and a
//! missing `error_kind` is guessed from the error text with
//! [`classify_error_text`]. Older vegeta CSV files with 6 or 9 columns are
//! read too.

use std::io::{self, BufRead, Write};
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use serde::Deserialize;

use crate::error::ReadError;
use crate::record::{ErrorKind, Phases, Record};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Guesses an [`ErrorKind`] from an error text as Go's `net/http` (vegeta)
/// or volley write it. Empty text is [`ErrorKind::None`].
pub fn classify_error_text(text: &str) -> ErrorKind {
    let t = text.trim();
    if t.is_empty() {
        return ErrorKind::None;
    }
    let has = |needle: &str| t.contains(needle);
    let lower = t.to_ascii_lowercase();
    let has_i = |needle: &str| lower.contains(needle);
    if has("Client.Timeout") || has_i("timeout") || has_i("timed out") || has("deadline exceeded") {
        ErrorKind::Timeout
    } else if has_i("too many open files") {
        ErrorKind::TooManyOpenFiles
    } else if has_i("address already in use") || has_i("cannot assign requested address") {
        ErrorKind::PortsExhausted
    } else if has_i("connection refused") {
        ErrorKind::Refused
    } else if has_i("no such host") || has_i("server misbehaving") || has("lookup ") {
        ErrorKind::Dns
    } else if has_i("reset by peer") || has_i("broken pipe") || has_i("connection reset") {
        ErrorKind::Reset
    } else if has("x509:") || has("tls:") || has_i("certificate") || has_i("handshake") {
        ErrorKind::Tls
    } else if has("EOF") {
        ErrorKind::Eof
    } else if has_i("malformed http") || has_i("malformed response") {
        ErrorKind::Protocol
    } else if has_i("canceled") || has_i("cancelled") {
        ErrorKind::Canceled
    } else if status_text_code(t).is_some_and(|c| c >= 400) {
        ErrorKind::Status
    } else {
        ErrorKind::Other
    }
}

/// `404 Not Found` → 404.
fn status_text_code(t: &str) -> Option<u16> {
    let b = t.as_bytes();
    if b.len() >= 3 && b[..3].iter().all(u8::is_ascii_digit) && (b.len() == 3 || b[3] == b' ') {
        t[..3].parse().ok()
    } else {
        None
    }
}

// ---- time ---------------------------------------------------------------

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Writes Unix nanoseconds as Go's `time.RFC3339Nano` in UTC (trailing
/// zeros of the fraction dropped, no fraction when zero).
pub fn write_rfc3339_nano(w: &mut impl Write, ns: i64) -> io::Result<()> {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    write!(
        w,
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )?;
    if frac != 0 {
        let mut digits = [0u8; 9];
        let mut f = frac;
        for i in (0..9).rev() {
            digits[i] = b'0' + (f % 10) as u8;
            f /= 10;
        }
        let mut n = 9;
        while digits[n - 1] == b'0' {
            n -= 1;
        }
        w.write_all(b".")?;
        w.write_all(&digits[..n])?;
    }
    w.write_all(b"Z")
}

/// Parses an RFC 3339 timestamp (any offset, up to 9 fraction digits) to
/// Unix nanoseconds; `None` when malformed or outside i64 nanoseconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(part.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0')))
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac: i64 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                frac = frac * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        let n = i - start;
        if n == 0 {
            return None;
        }
        for _ in n..9 {
            frac *= 10;
        }
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let o = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    i64::try_from(i128::from(secs) * 1_000_000_000 + i128::from(frac)).ok()
}

// ---- writing ------------------------------------------------------------

/// Writes a JSON string the way Go's encoders do (HTML-safe: `<`, `>`, `&`
/// and U+2028/U+2029 as `\u` escapes), so volley's JSON lines match
/// vegeta's byte for byte.
fn write_json_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    w.write_all(b"\"")?;
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, ch) in s.char_indices() {
        let esc: Option<&[u8]> = match ch {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            _ => None,
        };
        let needs_u = matches!(
            ch,
            '\0'..='\x1f' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}'
        );
        if esc.is_none() && !needs_u {
            continue;
        }
        w.write_all(&bytes[start..i])?;
        start = i + ch.len_utf8();
        if let Some(e) = esc {
            w.write_all(e)?;
        } else {
            let c = ch as u32;
            w.write_all(&[
                b'\\',
                b'u',
                HEX[(c >> 12 & 0xf) as usize],
                HEX[(c >> 8 & 0xf) as usize],
                HEX[(c >> 4 & 0xf) as usize],
                HEX[(c & 0xf) as usize],
            ])?;
        }
    }
    w.write_all(&bytes[start..])?;
    w.write_all(b"\"")
}

/// Writes one record as a vegeta JSON line (with volley's extra keys),
/// newline included.
pub fn write_json(w: &mut impl Write, r: &Record) -> io::Result<()> {
    w.write_all(b"{\"attack\":")?;
    write_json_str(w, &r.attack)?;
    write!(w, ",\"seq\":{},\"code\":{},\"timestamp\":\"", r.seq, r.code)?;
    write_rfc3339_nano(w, r.timestamp)?;
    write!(
        w,
        "\",\"latency\":{},\"bytes_out\":{},\"bytes_in\":{},\"error\":",
        r.latency, r.bytes_out, r.bytes_in
    )?;
    write_json_str(w, &r.error)?;
    w.write_all(b",\"body\":\"")?;
    if !r.body.is_empty() {
        w.write_all(B64.encode(&r.body).as_bytes())?;
    }
    w.write_all(b"\",\"method\":")?;
    write_json_str(w, &r.method)?;
    w.write_all(b",\"url\":")?;
    write_json_str(w, &r.url)?;
    let p = &r.phases;
    write!(
        w,
        ",\"headers\":null,\"lag\":{},\"blocked\":{},\"dns\":{},\"connecting\":{},\
         \"tls_handshaking\":{},\"waiting\":{},\"receiving\":{},\"error_kind\":\"{}\"}}",
        r.lag,
        p.blocked,
        p.dns,
        p.connecting,
        p.tls_handshaking,
        p.waiting,
        p.receiving,
        r.error_kind.name()
    )?;
    w.write_all(b"\n")
}

/// Writes a CSV field the way Go's `encoding/csv` does: quoted only when
/// it holds a comma, quote, CR or LF, starts with a space, or is `\.`.
fn write_csv_field(w: &mut impl Write, s: &str) -> io::Result<()> {
    let needs = s == "\\."
        || s.bytes().any(|c| matches!(c, b',' | b'"' | b'\r' | b'\n'))
        || s.chars().next().is_some_and(char::is_whitespace);
    if !needs {
        return w.write_all(s.as_bytes());
    }
    w.write_all(b"\"")?;
    let mut first = true;
    for part in s.split('"') {
        if !first {
            w.write_all(b"\"\"")?;
        }
        first = false;
        w.write_all(part.as_bytes())?;
    }
    w.write_all(b"\"")
}

/// Writes one record as a vegeta CSV row (twelve columns), newline
/// included.
pub fn write_csv(w: &mut impl Write, r: &Record) -> io::Result<()> {
    write!(
        w,
        "{},{},{},{},{},",
        r.timestamp, r.code, r.latency, r.bytes_out, r.bytes_in
    )?;
    write_csv_field(w, &r.error)?;
    w.write_all(b",")?;
    if !r.body.is_empty() {
        w.write_all(B64.encode(&r.body).as_bytes())?;
    }
    w.write_all(b",")?;
    write_csv_field(w, &r.attack)?;
    write!(w, ",{},", r.seq)?;
    write_csv_field(w, &r.method)?;
    w.write_all(b",")?;
    write_csv_field(w, &r.url)?;
    w.write_all(b",\n")
}

// ---- reading ------------------------------------------------------------

/// Reuses the previous record's `Arc<str>` when a text field repeats, so a
/// reader allocates only for new strings.
#[derive(Debug, Default)]
struct Strings {
    attack: Arc<str>,
    method: Arc<str>,
    url: Arc<str>,
    error: Arc<str>,
}

fn intern(slot: &mut Arc<str>, s: &str) -> Arc<str> {
    if **slot != *s {
        *slot = Arc::from(s);
    }
    slot.clone()
}

fn kind_from_name(name: &str) -> Option<ErrorKind> {
    ErrorKind::ALL.into_iter().find(|k| k.name() == name)
}

#[derive(Deserialize)]
struct JsonLine<'a> {
    #[serde(default, borrow)]
    attack: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    code: Option<u16>,
    #[serde(default, borrow)]
    timestamp: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    latency: Option<u64>,
    #[serde(default)]
    bytes_out: Option<u64>,
    #[serde(default)]
    bytes_in: Option<u64>,
    #[serde(default, borrow)]
    error: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    body: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    url: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    lag: Option<u64>,
    #[serde(default)]
    blocked: Option<u64>,
    #[serde(default)]
    dns: Option<u64>,
    #[serde(default)]
    connecting: Option<u64>,
    #[serde(default)]
    tls_handshaking: Option<u64>,
    #[serde(default)]
    waiting: Option<u64>,
    #[serde(default)]
    receiving: Option<u64>,
    #[serde(default, borrow)]
    error_kind: Option<std::borrow::Cow<'a, str>>,
}

/// Reads vegeta JSON lines. Blank lines are skipped; a malformed line ends
/// the stream with a [`ReadError::Parse`] naming it.
pub struct JsonReader<R: BufRead> {
    r: R,
    name: String,
    line: u64,
    buf: Vec<u8>,
    strings: Strings,
    done: bool,
}

impl<R: BufRead> JsonReader<R> {
    pub fn new(name: &str, r: R) -> Self {
        JsonReader {
            r,
            name: name.to_string(),
            line: 0,
            buf: Vec::new(),
            strings: Strings::default(),
            done: false,
        }
    }

    fn parse_err(&self, reason: String) -> ReadError {
        ReadError::Parse {
            name: self.name.clone(),
            line: self.line,
            reason,
        }
    }

    fn parse(&mut self) -> Result<Record, ReadError> {
        let j: JsonLine<'_> = serde_json::from_slice(&self.buf).map_err(|e| ReadError::Parse {
            name: self.name.clone(),
            line: self.line,
            reason: format!("invalid JSON result: {e}"),
        })?;
        let timestamp = match j.timestamp.as_deref() {
            None => 0,
            Some(t) => {
                parse_rfc3339(t).ok_or_else(|| self.parse_err(format!("bad timestamp {t:?}")))?
            }
        };
        let body = match j.body.as_deref() {
            None | Some("") => Bytes::new(),
            Some(b) => Bytes::from(
                B64.decode(b)
                    .map_err(|e| self.parse_err(format!("bad base64 body: {e}")))?,
            ),
        };
        let error = j.error.as_deref().unwrap_or("");
        let code = j.code.unwrap_or(0);
        let error_kind = match j.error_kind.as_deref().and_then(kind_from_name) {
            Some(k) => k,
            None => classify_error_text(error),
        };
        let s = &mut self.strings;
        Ok(Record {
            attack: intern(&mut s.attack, j.attack.as_deref().unwrap_or("")),
            seq: j.seq.unwrap_or(0),
            timestamp,
            latency: j.latency.unwrap_or(0),
            lag: j.lag.unwrap_or(0),
            phases: Phases {
                blocked: j.blocked.unwrap_or(0),
                dns: j.dns.unwrap_or(0),
                connecting: j.connecting.unwrap_or(0),
                tls_handshaking: j.tls_handshaking.unwrap_or(0),
                waiting: j.waiting.unwrap_or(0),
                receiving: j.receiving.unwrap_or(0),
            },
            bytes_in: j.bytes_in.unwrap_or(0),
            bytes_out: j.bytes_out.unwrap_or(0),
            code,
            error_kind,
            error: intern(&mut s.error, error),
            method: intern(&mut s.method, j.method.as_deref().unwrap_or("")),
            url: intern(&mut s.url, j.url.as_deref().unwrap_or("")),
            body,
        })
    }
}

impl<R: BufRead> Iterator for JsonReader<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.r.read_until(b'\n', &mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    if self.buf.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let res = self.parse();
                    self.done = res.is_err();
                    return Some(res);
                }
                Err(source) => {
                    self.done = true;
                    return Some(Err(ReadError::Io {
                        name: self.name.clone(),
                        source,
                    }));
                }
            }
        }
        None
    }
}

/// Splits one CSV record (RFC 4180, Go's `encoding/csv` with
/// `TrimLeadingSpace`) into `fields`; quoted fields may span lines.
/// Returns `Ok(false)` at end of input. `line` counts physical lines.
fn read_csv_record(
    r: &mut impl BufRead,
    buf: &mut Vec<u8>,
    fields: &mut Vec<Vec<u8>>,
    nfields: &mut usize,
    line: &mut u64,
) -> io::Result<Result<bool, &'static str>> {
    *nfields = 0;
    // Skip blank lines, as Go does.
    loop {
        buf.clear();
        if r.read_until(b'\n', buf)? == 0 {
            return Ok(Ok(false));
        }
        *line += 1;
        if !buf.iter().all(|&c| c == b'\n' || c == b'\r') {
            break;
        }
    }
    let mut i = 0;
    loop {
        if *nfields == fields.len() {
            fields.push(Vec::new());
        }
        let field = &mut fields[*nfields];
        field.clear();
        *nfields += 1;
        while i < buf.len() && (buf[i] == b' ' || buf[i] == b'\t') {
            i += 1;
        }
        if buf.get(i) == Some(&b'"') {
            i += 1;
            loop {
                if i >= buf.len() {
                    // The quoted field continues on the next line.
                    buf.clear();
                    i = 0;
                    if r.read_until(b'\n', buf)? == 0 {
                        return Ok(Err("unterminated quoted field"));
                    }
                    *line += 1;
                    continue;
                }
                let c = buf[i];
                i += 1;
                if c == b'"' {
                    if buf.get(i) == Some(&b'"') {
                        field.push(b'"');
                        i += 1;
                    } else {
                        break;
                    }
                } else {
                    field.push(c);
                }
            }
            match buf.get(i) {
                Some(b',') => i += 1,
                None | Some(b'\n') => return Ok(Ok(true)),
                Some(b'\r') if buf.get(i + 1).is_none_or(|&c| c == b'\n') => return Ok(Ok(true)),
                Some(_) => return Ok(Err("extraneous character after a quoted field")),
            }
        } else {
            let start = i;
            while i < buf.len() && buf[i] != b',' && buf[i] != b'\n' {
                i += 1;
            }
            let mut end = i;
            // A record ends at LF or at end of input; drop a CR before it.
            if (i == buf.len() || buf[i] == b'\n') && end > start && buf[end - 1] == b'\r' {
                end -= 1;
            }
            field.extend_from_slice(&buf[start..end]);
            if i < buf.len() && buf[i] == b',' {
                i += 1;
            } else {
                return Ok(Ok(true));
            }
        }
    }
}

/// Reads vegeta CSV rows (12 columns; the older 6- and 9-column layouts
/// too). A malformed row ends the stream with a [`ReadError::Parse`].
pub struct CsvReader<R: BufRead> {
    r: R,
    name: String,
    line: u64,
    buf: Vec<u8>,
    fields: Vec<Vec<u8>>,
    nfields: usize,
    strings: Strings,
    done: bool,
}

impl<R: BufRead> CsvReader<R> {
    pub fn new(name: &str, r: R) -> Self {
        CsvReader {
            r,
            name: name.to_string(),
            line: 0,
            buf: Vec::new(),
            fields: Vec::new(),
            nfields: 0,
            strings: Strings::default(),
            done: false,
        }
    }

    fn parse(&mut self) -> Result<Record, String> {
        let n = self.nfields;
        if n < 6 {
            return Err(format!("expected 12 columns, found {n}"));
        }
        let mut text = Vec::with_capacity(n);
        for f in &self.fields[..n] {
            text.push(std::str::from_utf8(f).map_err(|_| "invalid UTF-8".to_string())?);
        }
        fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
            s.parse().map_err(|_| format!("bad {what} {s:?}"))
        }
        let col = |i: usize| text.get(i).copied().unwrap_or("");
        let timestamp: i64 = num(col(0), "timestamp")?;
        let code: u16 = num(col(1), "status code")?;
        let latency: u64 = num(col(2), "latency")?;
        let bytes_out: u64 = num(col(3), "bytes out")?;
        let bytes_in: u64 = num(col(4), "bytes in")?;
        let error = col(5);
        let body = if n >= 9 && !col(6).is_empty() {
            Bytes::from(
                B64.decode(col(6))
                    .map_err(|e| format!("bad base64 body: {e}"))?,
            )
        } else {
            Bytes::new()
        };
        let seq: u64 = if n >= 9 { num(col(8), "seq")? } else { 0 };
        let s = &mut self.strings;
        Ok(Record {
            attack: intern(&mut s.attack, if n >= 9 { col(7) } else { "" }),
            seq,
            timestamp,
            latency,
            lag: 0,
            phases: Phases::default(),
            bytes_in,
            bytes_out,
            code,
            error_kind: classify_error_text(error),
            error: intern(&mut s.error, error),
            method: intern(&mut s.method, col(9)),
            url: intern(&mut s.url, col(10)),
            body,
        })
    }
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let first = self.line + 1;
        let res = read_csv_record(
            &mut self.r,
            &mut self.buf,
            &mut self.fields,
            &mut self.nfields,
            &mut self.line,
        );
        let parse_err = |name: &str, reason: String| ReadError::Parse {
            name: name.to_string(),
            line: first,
            reason,
        };
        let item = match res {
            Err(source) => Err(ReadError::Io {
                name: self.name.clone(),
                source,
            }),
            Ok(Ok(false)) => {
                self.done = true;
                return None;
            }
            Ok(Err(reason)) => Err(parse_err(&self.name, reason.to_string())),
            Ok(Ok(true)) => self.parse().map_err(|reason| parse_err(&self.name, reason)),
        };
        self.done = item.is_err();
        Some(item)
    }
}

/// True when the line parses as a vegeta CSV row: used by format
/// detection.
pub(crate) fn looks_like_csv(prefix: &[u8]) -> bool {
    let mut r = prefix;
    let mut buf = Vec::new();
    let mut fields = Vec::new();
    let mut n = 0;
    let mut line = 0;
    match read_csv_record(&mut r, &mut buf, &mut fields, &mut n, &mut line) {
        Ok(Ok(true)) => {
            n >= 6
                && std::str::from_utf8(&fields[0]).is_ok_and(|s| s.parse::<i64>().is_ok())
                && std::str::from_utf8(&fields[1]).is_ok_and(|s| s.parse::<u16>().is_ok())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(ns: i64) -> String {
        let mut v = Vec::new();
        write_rfc3339_nano(&mut v, ns).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn rfc3339_like_go() {
        assert_eq!(fmt(0), "1970-01-01T00:00:00Z");
        assert_eq!(fmt(1_700_000_000_100_000_000), "2023-11-14T22:13:20.1Z");
        assert_eq!(
            fmt(1_700_000_000_000_000_005),
            "2023-11-14T22:13:20.000000005Z"
        );
        assert_eq!(fmt(-1), "1969-12-31T23:59:59.999999999Z");
        assert_eq!(fmt(951_782_400_000_000_000), "2000-02-29T00:00:00Z");
        for ns in [0, -1, 1, i64::MIN, i64::MAX, 951_782_400_123_000_000] {
            assert_eq!(parse_rfc3339(&fmt(ns)), Some(ns), "{ns}");
        }
        assert_eq!(
            parse_rfc3339("2023-11-14T23:13:20.123+01:00"),
            Some(1_700_000_000_123_000_000)
        );
        assert_eq!(
            parse_rfc3339("2023-11-14T17:43:20-04:30"),
            Some(1_700_000_000_000_000_000)
        );
        for bad in [
            "",
            "2023-11-14",
            "2023-11-14T22:13:20",
            "2023-13-14T22:13:20Z",
            "2023-11-14T22:13:20.Z",
            "2023-11-14T22:13:20+0100",
            "0001-01-01T00:00:00Z",
            "2023-11-14T22:13:20Zjunk",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn go_style_json_strings() {
        let mut v = Vec::new();
        write_json_str(&mut v, "a\"b\\c\n\t<&>\u{1}\u{2028}é").unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            r#""a\"b\\c\n\t\u003c\u0026\u003e\u0001\u2028é""#
        );
    }
}
