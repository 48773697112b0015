//! volley-results: the result record and the results file formats.
//!
//! Workers emit one [`Record`] per request; this crate stores and reloads
//! them. Reports and plots read result files offline through [`Records`],
//! whatever their format.
//!
//! # Layout
//!
//! - [`record`]: [`Record`], [`Phases`], [`ErrorKind`], the contract every
//!   crate codes against.
//! - [`binary`]: volley's own compact format ([`Writer`], [`binary::Decoder`]),
//!   documented byte by byte.
//! - [`vegeta`]: vegeta's JSON-lines and CSV encodings, and
//!   [`classify_error_text`].
//! - [`read`]: format detection ([`open_path`], [`from_reader`]) and
//!   [`Records`], the one iterator over any input.
//! - [`merge`](mod@merge): k-way merge of several inputs by timestamp.
//! - [`encode`](mod@encode): `volley encode`, any inputs to one output format.
//! - [`error`]: [`ReadError`], one-line messages naming file and place.
//!
//! # Errors while reading
//!
//! A [`Records`] iterator yields `Err` at most once, as its last item:
//! every record before it is intact. [`ReadError::is_truncation`] tells a
//! file cut short (warn and go on) from a damaged one.

pub mod binary;
pub mod encode;
pub mod error;
pub mod merge;
pub mod read;
pub mod record;
mod varint;
pub mod vegeta;

pub use binary::{Header, Writer};
pub use encode::{encode, EncodeError, Encoded};
pub use error::ReadError;
pub use merge::merge;
pub use read::{from_reader, open_path, Format, Records};
pub use record::{ErrorKind, Phases, Record};
pub use vegeta::classify_error_text;
