//! volley-targets: what to attack, in vegeta's target formats.
//!
//! Targets come from stdin or `-targets` in vegeta's `http` format
//! (`METHOD URL`, header lines, an optional `@file` body line, blank lines
//! between targets, `#` comments) or its `json` format (one object per
//! line). They are read eagerly and served round-robin, or lazily
//! (`-lazy`), one per request, until the input ends. The `-header` and
//! `-body` flags give defaults for every target. Every [`Target`] is
//! validated (method, absolute http/https URL, header syntax) when read, so
//! the attack never starts on bad input, and every error names its line.
//! Nothing here panics, whatever the input.
//!
//! # Modules
//!
//! - [`target`]: [`Target`], [`Format`], [`Defaults`], [`TargetError`] and
//!   the checks every target passes ([`parse_header`] for `-header`).
//! - [`lines`]: the line reader both formats share (line numbers, one line
//!   of look-ahead, a cap on line length, CRLF).
//! - [`http_format`]: vegeta's `http` format.
//! - [`json_format`]: vegeta's `json` format.
//! - [`targeter`]: [`TargetReader`] (lazy decoding), [`Targeter`]
//!   (round-robin or lazy, handing out `Arc<Target>`), [`read_all`].
//!
//! ```
//! use std::io::Cursor;
//! use volley_targets::{read_all, Defaults, Format, Targeter};
//! let input = "GET https://example.com/a\nX-Id: 1\n\n# a comment\nPOST https://example.com/b\n";
//! let targets = read_all(Cursor::new(input), Format::Http, &Defaults::default()).unwrap();
//! assert_eq!(targets.len(), 2);
//! assert_eq!(targets[0].headers, vec![("X-Id".to_string(), "1".to_string())]);
//! let mut rr = Targeter::eager(targets).unwrap();
//! let urls: Vec<String> = (0..3).map(|_| rr.next().unwrap().unwrap().url.clone()).collect();
//! assert_eq!(urls, ["https://example.com/a", "https://example.com/b", "https://example.com/a"]);
//! ```

pub mod http_format;
pub mod json_format;
pub mod lines;
pub mod target;
pub mod targeter;

pub use target::{parse_header, Defaults, Format, HeaderError, Target, TargetError};
pub use targeter::{read_all, read_all_from, TargetReader, Targeter};
