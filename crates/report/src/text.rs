//! vegeta's text report, byte for byte (`vegeta report`'s default), and
//! volley's extra notes printed after it only when there is something to
//! say (diagnosis, threshold verdicts, untracked error texts).
//!
//! vegeta's lines are never changed: scripts that parse them keep working.

use std::io::{self, Write};

use crate::gofmt::vegeta_duration;
use crate::metrics::{Metrics, MAX_ERROR_TEXTS};
use crate::tabwriter::TabWriter;
use crate::threshold::Verdict;

/// Writes vegeta's text report:
///
/// ```text
/// Requests      [total, rate, throughput]         24000, 400.02, 0.00
/// Duration      [total, attack, wait]             1m1s, 59.997s, 1.004s
/// Latencies     [min, mean, 50, 90, 95, 99, max]  1.004s, 1.005s, …
/// Bytes In      [total, mean]                     1080000, 45.00
/// Bytes Out     [total, mean]                     0, 0.00
/// Success       [ratio]                           0.00%
/// Status Codes  [code:count]                      404:24000
/// Error Set:
/// 404 Not Found
/// ```
pub fn report(m: &Metrics, w: &mut impl Write) -> io::Result<()> {
    let l = m.latency();
    let mut tw = TabWriter::new(2);
    tw.write_str(&format!(
        "Requests\t[total, rate, throughput]\t{}, {:.2}, {:.2}\n\
         Duration\t[total, attack, wait]\t{}, {}, {}\n\
         Latencies\t[min, mean, 50, 90, 95, 99, max]\t{}, {}, {}, {}, {}, {}, {}\n\
         Bytes In\t[total, mean]\t{}, {:.2}\n\
         Bytes Out\t[total, mean]\t{}, {:.2}\n\
         Success\t[ratio]\t{:.2}%\n\
         Status Codes\t[code:count]\t",
        m.requests(),
        m.rate(),
        m.throughput(),
        vegeta_duration(m.total_duration()),
        vegeta_duration(m.duration()),
        vegeta_duration(m.wait()),
        vegeta_duration(l.min()),
        vegeta_duration(l.mean()),
        vegeta_duration(l.quantile(0.5)),
        vegeta_duration(l.quantile(0.9)),
        vegeta_duration(l.quantile(0.95)),
        vegeta_duration(l.quantile(0.99)),
        vegeta_duration(l.max()),
        m.bytes_in(),
        m.bytes_in_mean(),
        m.bytes_out(),
        m.bytes_out_mean(),
        m.success_ratio() * 100.0,
    ));
    // vegeta sorts the codes as strings ("0" < "200" < "404" < "50").
    let mut codes: Vec<(String, u64)> = m
        .status_codes()
        .iter()
        .map(|(c, n)| (c.to_string(), *n))
        .collect();
    codes.sort();
    for (code, count) in codes {
        tw.write_str(&format!("{code}:{count}  "));
    }
    tw.write_str("\nError Set:\n");
    for e in m.errors() {
        tw.write_str(&e.text);
        tw.write_str("\n");
    }
    w.write_all(tw.finish().as_bytes())?;
    if m.errors_untracked() > 0 {
        writeln!(
            w,
            "({} more errors with texts beyond the first {MAX_ERROR_TEXTS} distinct ones)",
            m.errors_untracked()
        )?;
    }
    Ok(())
}

/// volley's notes after a report: `Diagnosis:` lines (see
/// [`crate::diagnose`]) and `Thresholds:` verdicts. Writes nothing when both
/// are empty.
pub fn notes(diagnosis: &[String], verdicts: &[Verdict], w: &mut impl Write) -> io::Result<()> {
    if !diagnosis.is_empty() {
        writeln!(w, "Diagnosis:")?;
        for line in diagnosis {
            writeln!(w, "{line}")?;
        }
    }
    if !verdicts.is_empty() {
        writeln!(w, "Thresholds:")?;
        for v in verdicts {
            writeln!(w, "{v}")?;
        }
    }
    Ok(())
}
