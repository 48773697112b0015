//! `volley encode`: read any number of inputs in any format, merge them by
//! timestamp, and write one output as volley binary, vegeta JSON lines or
//! vegeta CSV.
//!
//! Read errors do not stop the conversion: each input contributes what it
//! holds up to its error, and the errors come back as warnings in
//! [`Encoded`] for the CLI to print (and to pick an exit code from: a
//! truncation is benign, a parse error is bad input).

use std::io::{self, BufWriter, Write};

use crate::binary::{Header, Writer};
use crate::error::ReadError;
use crate::merge::merge;
use crate::read::{Format, Records};
use crate::vegeta;

/// What an [`encode`] did.
#[derive(Debug, Default)]
pub struct Encoded {
    /// Records written.
    pub records: u64,
    /// Read errors met on the way, in order; each ended its input.
    pub warnings: Vec<ReadError>,
}

/// Why an [`encode`] failed.
#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Io(#[from] io::Error),
}

/// Converts `inputs` (merged by timestamp) to `to`, written to `out`.
///
/// For binary output the header is the first input's volley header when
/// there is one (its metadata is kept); otherwise a new header whose start
/// is the first record's timestamp and whose `meta.encoded_from` lists the
/// inputs.
pub fn encode(inputs: Vec<Records>, to: Format, out: impl Write) -> Result<Encoded, EncodeError> {
    let header = inputs.iter().find_map(|r| r.header().cloned());
    let sources: Vec<serde_json::Value> = inputs
        .iter()
        .map(|r| serde_json::json!({"name": r.name(), "format": r.format().name()}))
        .collect();
    let mut out = BufWriter::with_capacity(256 * 1024, out);
    let mut done = Encoded::default();
    let mut merged = merge(inputs);
    // The next record, setting read errors aside as warnings.
    let mut next = |warnings: &mut Vec<ReadError>| loop {
        match merged.next()? {
            Ok(r) => return Some(r),
            Err(e) => warnings.push(e),
        }
    };
    match to {
        Format::Volley => {
            let first = next(&mut done.warnings);
            let header = header.unwrap_or_else(|| {
                Header::new(
                    "",
                    first.as_ref().map_or(0, |r| r.timestamp),
                    serde_json::json!({ "encoded_from": sources }),
                )
            });
            let mut w = Writer::new(&mut out, &header)?;
            let mut cur = first;
            while let Some(r) = cur {
                w.write(&r)?;
                done.records += 1;
                cur = next(&mut done.warnings);
            }
            w.finish()?;
        }
        Format::VegetaJson | Format::VegetaCsv => {
            while let Some(r) = next(&mut done.warnings) {
                if to == Format::VegetaJson {
                    vegeta::write_json(&mut out, &r)?;
                } else {
                    vegeta::write_csv(&mut out, &r)?;
                }
                done.records += 1;
            }
        }
    }
    out.flush()?;
    Ok(done)
}
