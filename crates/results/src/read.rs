//! Opening results inputs: format detection and [`Records`], one iterator
//! over any supported format.
//!
//! Detection looks at the first bytes: volley's magic → binary; a first
//! non-blank byte `{` → vegeta JSON lines; a first line that parses as a
//! vegeta CSV row → CSV; vegeta's gob stream → a clear error asking for
//! `vegeta encode -to=json`; anything else → "not a results file". An empty
//! input is a valid, empty volley stream.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use crate::binary::{self, Decoder, Header};
use crate::error::ReadError;
use crate::record::Record;
use crate::vegeta::{self, CsvReader, JsonReader};

/// How many bytes detection looks at.
const SNIFF: usize = 4096;

/// A results encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// volley's binary format ([`crate::binary`]).
    Volley,
    /// vegeta's JSON lines.
    VegetaJson,
    /// vegeta's CSV.
    VegetaCsv,
}

impl Format {
    /// The name `volley encode -to=` takes: `binary`, `json`, `csv`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Volley => "binary",
            Format::VegetaJson => "json",
            Format::VegetaCsv => "csv",
        }
    }

    /// Parses `binary` (also `volley`, `bin`), `json`, `csv`.
    pub fn from_name(s: &str) -> Option<Format> {
        match s {
            "binary" | "bin" | "volley" => Some(Format::Volley),
            "json" => Some(Format::VegetaJson),
            "csv" => Some(Format::VegetaCsv),
            _ => None,
        }
    }
}

type Input = BufReader<io::Chain<io::Cursor<Vec<u8>>, Box<dyn Read + Send>>>;

enum Inner {
    Volley(Box<Decoder<Input>>),
    Json(JsonReader<Input>),
    Csv(CsvReader<Input>),
    Empty,
}

/// The records of one input, in file order, whatever its format.
///
/// Iterates `Result<Record, ReadError>`; an `Err` is always the last item
/// (see [`ReadError::is_truncation`]). The iterator is `Send`.
pub struct Records {
    name: String,
    format: Format,
    inner: Inner,
}

impl Records {
    /// The detected format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The volley file header; `None` for vegeta formats.
    pub fn header(&self) -> Option<&Header> {
        match &self.inner {
            Inner::Volley(d) => Some(d.header()),
            _ => None,
        }
    }

    /// The input's name for messages (the path, or `-` for stdin).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// For volley files: whether the writer's end frame was read, i.e. the
    /// attack finished writing. Always false for other formats.
    pub fn is_complete(&self) -> bool {
        match &self.inner {
            Inner::Volley(d) => d.is_complete(),
            _ => false,
        }
    }
}

impl Iterator for Records {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Volley(d) => d.next(),
            Inner::Json(j) => j.next(),
            Inner::Csv(c) => c.next(),
            Inner::Empty => None,
        }
    }
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("name", &self.name)
            .field("format", &self.format)
            .finish()
    }
}

/// Opens a results file (`-` = stdin) and detects its format.
pub fn open_path(path: &Path) -> Result<Records, ReadError> {
    if path.as_os_str() == "-" {
        return from_reader("-", io::stdin());
    }
    let name = path.display().to_string();
    let file = File::open(path).map_err(|source| ReadError::Io {
        name: name.clone(),
        source,
    })?;
    from_reader(&name, file)
}

/// Reads results from any reader, detecting the format; `name` appears in
/// error messages.
pub fn from_reader(name: &str, r: impl Read + Send + 'static) -> Result<Records, ReadError> {
    let mut r: Box<dyn Read + Send> = Box::new(r);
    let mut prefix = vec![0u8; SNIFF];
    let mut n = 0;
    while n < SNIFF {
        match r.read(&mut prefix[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(ReadError::Io {
                    name: name.into(),
                    source,
                })
            }
        }
    }
    prefix.truncate(n);
    let format = detect(name, &prefix)?;
    let input: Input = BufReader::with_capacity(64 * 1024, io::Cursor::new(prefix).chain(r));
    let inner = match format {
        None => Inner::Empty,
        Some(Format::Volley) => Inner::Volley(Box::new(Decoder::new(name, input)?)),
        Some(Format::VegetaJson) => Inner::Json(JsonReader::new(name, input)),
        Some(Format::VegetaCsv) => Inner::Csv(CsvReader::new(name, input)),
    };
    Ok(Records {
        name: name.to_string(),
        format: format.unwrap_or(Format::Volley),
        inner,
    })
}

/// The format of an input from its first bytes; `None` when it is empty.
fn detect(name: &str, p: &[u8]) -> Result<Option<Format>, ReadError> {
    if p.is_empty() {
        return Ok(None);
    }
    let m = p.len().min(binary::MAGIC.len());
    if p[..m] == binary::MAGIC[..m] {
        return Ok(Some(Format::Volley));
    }
    match p.iter().find(|c| !c.is_ascii_whitespace()) {
        None => return Ok(None),
        Some(b'{') => return Ok(Some(Format::VegetaJson)),
        _ => {}
    }
    if looks_like_gob(p) {
        return Err(ReadError::VegetaGob { name: name.into() });
    }
    if vegeta::looks_like_csv(p) {
        return Ok(Some(Format::VegetaCsv));
    }
    Err(ReadError::NotResults { name: name.into() })
}

/// vegeta's gob stream opens with a type definition: a message length, a
/// negative type id, then the wire type of its `Result` struct by name.
fn looks_like_gob(p: &[u8]) -> bool {
    let head = &p[..p.len().min(64)];
    let first_is_len = p[0] < 0x80 || (0xf8..=0xff).contains(&p[0]);
    first_is_len && head.windows(7).any(|w| w == b"\x06Result")
}
