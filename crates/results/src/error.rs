//! Errors from reading results files.
//!
//! Every message is one line that names the input and the place (byte
//! offset for the binary format, line for text formats). A [`ReadError`]
//! yielded by a [`crate::Records`] iterator is always its last item: the
//! records before it are intact. [`ReadError::is_truncation`] tells a cut
//! file (report as a warning) from a damaged or foreign one.

use std::io;

/// Why a results input could not be read (further).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The underlying reader failed.
    #[error("{name}: {source}")]
    Io {
        name: String,
        #[source]
        source: io::Error,
    },
    /// The input is none of the formats volley reads.
    #[error("{name}: not a results file (expected volley binary, vegeta JSON lines or CSV)")]
    NotResults { name: String },
    /// vegeta's own gob encoding, which volley does not decode.
    #[error("{name}: vegeta gob results are not supported; convert them first with `vegeta encode -to=json`")]
    VegetaGob { name: String },
    /// A volley binary file from a newer volley.
    #[error("{name}: volley results format version {version} is not supported (this volley reads versions {} to {})", crate::binary::MIN_VERSION, crate::binary::VERSION)]
    UnsupportedVersion { name: String, version: u8 },
    /// The file header is damaged.
    #[error("{name}: bad header at byte {offset}: {reason}")]
    BadHeader {
        name: String,
        offset: u64,
        reason: String,
    },
    /// The input ends inside a frame (or inside the header): a crash, a
    /// Ctrl-C, a copy in progress, or a file still being written. Every
    /// record before `offset` was delivered.
    #[error("{name}: truncated {what} at byte {offset}")]
    Truncated {
        name: String,
        offset: u64,
        what: &'static str,
    },
    /// A frame failed its checksum or does not decode. Every record before
    /// `offset` was delivered; nothing after it is trusted.
    #[error("{name}: corrupt frame at byte {offset}: {reason}")]
    Corrupt {
        name: String,
        offset: u64,
        reason: &'static str,
    },
    /// A line of a JSON or CSV file does not parse.
    #[error("{name}: line {line}: {reason}")]
    Parse {
        name: String,
        line: u64,
        reason: String,
    },
}

impl ReadError {
    /// True when the input was merely cut short: the records read so far
    /// are complete and callers should warn rather than fail.
    pub fn is_truncation(&self) -> bool {
        matches!(self, ReadError::Truncated { .. })
    }

    /// The input's name as given to [`crate::open_path`] or
    /// [`crate::from_reader`].
    pub fn name(&self) -> &str {
        match self {
            ReadError::Io { name, .. }
            | ReadError::NotResults { name }
            | ReadError::VegetaGob { name }
            | ReadError::UnsupportedVersion { name, .. }
            | ReadError::BadHeader { name, .. }
            | ReadError::Truncated { name, .. }
            | ReadError::Corrupt { name, .. }
            | ReadError::Parse { name, .. } => name,
        }
    }
}
