//! volley-results: the result record and the results file formats.
//!
//! `record` defines [`Record`], the unit every stage exchanges. The binary
//! format (writer and reader), vegeta's JSON-lines and CSV encodings, format
//! detection and merging of several files live here too.

pub mod record;

pub use record::{ErrorKind, Phases, Record};
