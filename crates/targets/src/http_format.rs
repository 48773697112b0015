//! vegeta's `http` target format.
//!
//! ```text
//! # comment lines are ignored anywhere
//! GET https://example.com/a
//! X-Account-ID: 8675309
//! X-Tag: one
//! X-Tag: two
//!
//! POST https://example.com/b
//! Content-Type: application/json
//! @path/to/body.json
//! ```
//!
//! A target is a `METHOD URL` line, then optional `Key: value` header lines
//! (repeatable), then an optional `@file` line whose file contents are the
//! body (relative paths are relative to the current directory, or
//! [`Defaults::base_dir`]); the `@file` line ends the target. Targets are
//! separated by blank lines, or simply follow one another: a line that
//! starts with an upper-case word and a space begins the next target (vegeta
//! only checks this on the line right after `METHOD URL`; volley checks it on
//! every line, which can only turn vegeta's nonsense header `GET http` into
//! a target). Leading and trailing whitespace, and CRLF endings, are ignored.

use std::io::BufRead;
use std::path::Path;

use bytes::Bytes;

use crate::lines::{Line, Lines};
use crate::target::{check_header, check_url, split_header, Defaults, Target, TargetError};

/// Whether a line starts a target: an upper-case ASCII word, then
/// whitespace (vegeta's `^[A-Z]+\s`).
pub fn starts_with_method(line: &str) -> bool {
    let word = line.bytes().take_while(u8::is_ascii_uppercase).count();
    word > 0 && line[word..].starts_with(|c: char| c.is_ascii_whitespace())
}

/// Decodes the next target, or `None` at the end of input.
pub fn next_target<R: BufRead>(
    lines: &mut Lines<R>,
    defaults: &Defaults,
) -> Result<Option<Target>, TargetError> {
    // Skip blank and comment lines up to the request line.
    let Line { number, text } = loop {
        match lines.next_line()? {
            None => return Ok(None),
            Some(line) => {
                let trimmed = line.text.trim();
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    break line;
                }
            }
        }
    };
    let request = text.trim();
    let Some((method, url)) = request.split_once(|c: char| c.is_ascii_whitespace()) else {
        return Err(TargetError::new(
            number,
            format!("bad target line {request:?} (want \"METHOD URL\")"),
        ));
    };
    let url = url.trim();
    if !starts_with_method(request) && method.ends_with(':') {
        return Err(TargetError::new(
            number,
            format!(
                "bad target line {request:?} (want \"METHOD URL\"; header lines go right \
                 after their METHOD URL line, before any blank or @body line)"
            ),
        ));
    }
    if !starts_with_method(request) {
        return Err(TargetError::new(
            number,
            format!("bad method {method:?} in {request:?} (want an upper-case method like GET)"),
        ));
    }
    check_url(url).map_err(|why| TargetError::new(number, why))?;
    let mut target = Target {
        method: method.to_string(),
        url: url.to_string(),
        headers: defaults.headers.clone(),
        body: defaults.body.clone().unwrap_or_default(),
    };
    while let Some(next) = lines.peek()? {
        let line = next.text.trim();
        if starts_with_method(line) {
            // The next target, with no blank line before it.
            break;
        }
        let Some(Line { number, text }) = lines.next_line()? else {
            break;
        };
        let line = text.trim();
        if line.is_empty() {
            break;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some(path) = line.strip_prefix('@') {
            target.body = read_body(path.trim(), defaults.base_dir.as_deref())
                .map_err(|why| TargetError::new(number, why))?;
            break;
        }
        let Some((name, value)) = split_header(line) else {
            return Err(TargetError::new(
                number,
                format!("bad header line {line:?} (want \"Key: value\")"),
            ));
        };
        check_header(name, value).map_err(|why| TargetError::new(number, why))?;
        target.headers.push((name.to_string(), value.to_string()));
    }
    Ok(Some(target))
}

fn read_body(path: &str, base: Option<&Path>) -> Result<Bytes, String> {
    if path.is_empty() {
        return Err("bad body line \"@\" (want \"@path/to/file\")".to_string());
    }
    let full = match base {
        Some(base) => base.join(path),
        None => Path::new(path).to_path_buf(),
    };
    std::fs::read(&full)
        .map(Bytes::from)
        .map_err(|e| format!("bad body file {path:?}: {e}"))
}
