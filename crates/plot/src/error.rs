//! The errors of volley-plot: every one a single line that names the input
//! or option at fault, so the CLI can print it as is (exit code 2 for bad
//! input and options, 1 for I/O).

use thiserror::Error;

/// Why no plot was written.
#[derive(Debug, Error)]
pub enum PlotError {
    /// No input held a single record.
    #[error("no results to plot")]
    NoResults,
    /// An input failed before its first record (not a results file, or a
    /// corrupt header).
    #[error("{name}: {message}")]
    Input {
        /// The input's name.
        name: String,
        /// The reader's error, on one line.
        message: String,
    },
    /// An option is out of range.
    #[error("invalid plot option: {0}")]
    Option(String),
    /// The image backend failed.
    #[error("drawing the plot failed: {0}")]
    Render(String),
    /// Writing the output failed.
    #[error("writing the plot failed: {0}")]
    Io(#[from] std::io::Error),
}

impl PlotError {
    /// True when the user's input or options are at fault (CLI exit code 2)
    /// rather than the environment (exit code 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            PlotError::NoResults | PlotError::Input { .. } | PlotError::Option(_)
        )
    }
}

/// Turns any error text into one line (readers may wrap their causes).
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
