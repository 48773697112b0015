//! `volley`: the binary. It picks the subcommand, turns its flags into
//! validated settings and calls the library crates; nothing else lives here.
//!
//! Exit codes: 0 success, 1 runtime failure, 2 bad input (flags, targets,
//! recipes, result files, certificates), 99 a `-threshold` failed.

mod attack;
mod demo;
mod encode;
mod flags;
mod origin;
mod plot;
mod progress;
mod report;
mod signals;

use volley_report::{Metrics, Threshold};

/// A subcommand's failure, mapped to an exit code at the edge.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit 2.
    Usage(String),
    /// The environment failed us: exit 1.
    Runtime(String),
    /// `-h`: the help text, exit 0.
    Help(String),
}

const USAGE: &str = "volley — a load-testing workbench for HTTP services

Usage: volley <command> [flags]

Commands:
  attack   generate load (vegeta attack's flags), stream results
  report   summarise results: text, json, hist[...], hdrplot, k6, by-target
  encode   convert results between volley binary, vegeta JSON lines and CSV
  plot     latency over time as HTML, PNG or SVG
  origin   an origin simulator (OriginSimulator recipes, quick shapes)
  demo     attack the embedded origin simulator and print the report

Run 'volley <command> -h' for a command's flags.";

/// Prints threshold verdicts on stderr; 99 when one failed.
pub fn verdict(metrics: &Metrics, thresholds: &[Threshold]) -> Result<i32, CliError> {
    if thresholds.is_empty() {
        return Ok(0);
    }
    let verdicts = volley_report::evaluate(thresholds, metrics);
    let mut failed = false;
    for v in &verdicts {
        eprintln!("{v}");
        failed |= !v.ok;
    }
    Ok(if failed {
        volley_report::EXIT_THRESHOLD_FAILED
    } else {
        0
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cmd = args.get(1).map(String::as_str).unwrap_or("");
    let rest = args.get(2..).unwrap_or(&[]);
    let result = match cmd {
        "attack" => attack::main(rest),
        "report" => report::main(rest),
        "encode" => encode::main(rest),
        "plot" => plot::main(rest),
        "origin" => origin::main(rest),
        "demo" => demo::main(rest),
        "" | "-h" | "-help" | "--help" | "help" => Err(CliError::Help(USAGE.to_string())),
        "-version" | "--version" | "version" => {
            println!("volley {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        other => Err(CliError::Usage(format!(
            "unknown command {other:?} (commands: attack, report, encode, plot, origin, demo)"
        ))),
    };
    let code = match result {
        Ok(code) => code,
        Err(CliError::Help(text)) => {
            println!("{text}");
            0
        }
        Err(CliError::Usage(msg)) => {
            eprintln!("volley {cmd}: {msg}");
            2
        }
        Err(CliError::Runtime(msg)) => {
            eprintln!("volley {cmd}: {msg}");
            1
        }
    };
    std::process::exit(code);
}
