//! `volley encode`: converts results between volley's binary format and
//! vegeta's JSON lines and CSV. The input format is detected; several inputs
//! are merged by timestamp.

use std::io::Write;

use volley_results::Format;

use crate::flags::{self, Kind, Spec};
use crate::CliError;

const USAGE: &str = "Usage: volley encode [flags] [files...]   (default: stdin)

Converts results to another format. Input formats (volley binary, vegeta JSON
lines, vegeta CSV) are detected; several inputs merge by timestamp. Examples:
  volley encode -to=json results.bin > results.json
  volley encode -to=binary a.json b.csv > merged.bin";

const SPECS: &[Spec] = &[
    Spec::new(
        "to",
        Kind::Value,
        "json",
        "Output encoding [binary, json, csv]",
    ),
    Spec::new("output", Kind::Value, "stdout", "Output file"),
];

/// Opens every input (stdin when none): a missing or foreign file is a
/// one-line usage error naming it.
pub fn open_inputs(paths: &[String]) -> Result<Vec<volley_results::Records>, CliError> {
    let paths: Vec<&str> = if paths.is_empty() {
        vec!["-"]
    } else {
        paths.iter().map(String::as_str).collect()
    };
    paths
        .iter()
        .map(|p| {
            volley_results::open_path(std::path::Path::new(p))
                .map_err(|e| CliError::Usage(e.to_string()))
        })
        .collect()
}

/// Opens `-output` (stdout by default).
pub fn open_output(path: Option<&str>) -> Result<Box<dyn Write>, CliError> {
    Ok(match path {
        None | Some("stdout") | Some("-") => Box::new(std::io::stdout().lock()),
        Some(p) => Box::new(
            std::fs::File::create(p).map_err(|e| CliError::Runtime(format!("-output {p}: {e}")))?,
        ),
    })
}

/// Prints read warnings; a truncation is benign (exit 0), a malformed input
/// is bad input (exit 2).
pub fn report_warnings(warnings: &[volley_results::ReadError]) -> i32 {
    let mut code = 0;
    for w in warnings {
        if w.is_truncation() {
            eprintln!("volley: warning: {w} (results before the cut are used)");
        } else {
            eprintln!("volley: {w}");
            code = 2;
        }
    }
    code
}

pub fn main(args: &[String]) -> Result<i32, CliError> {
    let raw = flags::parse(SPECS, args).map_err(|e| match e {
        flags::FlagError::Help => CliError::Help(flags::help(USAGE, SPECS)),
        e => CliError::Usage(e.to_string()),
    })?;
    let to = raw.value("to").unwrap_or("json");
    let to = Format::from_name(to).ok_or_else(|| {
        CliError::Usage(format!(
            "flag -to: unknown encoding {to:?} (want binary, json or csv)"
        ))
    })?;
    let inputs = open_inputs(&raw.positional)?;
    let out = open_output(raw.value("output"))?;
    let done = volley_results::encode(inputs, to, out).map_err(|e| match e {
        volley_results::EncodeError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            CliError::Runtime(String::new())
        }
        e => CliError::Runtime(e.to_string()),
    });
    match done {
        Ok(done) => Ok(report_warnings(&done.warnings)),
        Err(CliError::Runtime(m)) if m.is_empty() => Ok(0),
        Err(e) => Err(e),
    }
}
