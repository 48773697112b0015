//! vegeta's `json` target format: one JSON object per line.
//!
//! ```text
//! {"method":"POST","url":"https://example.com/a","body":"aGVsbG8=","header":{"X-Tag":["one","two"]}}
//! {"method":"GET","url":"https://example.com/b"}
//! ```
//!
//! `method` and `url` are required; `body` is standard base64 (as Go
//! encodes `[]byte`); `header` maps names to lists of values, kept in the
//! order written. Unknown fields are ignored and blank lines skipped, as in
//! vegeta. A target without a body gets the `-body` default; the `-header`
//! defaults come before the target's own headers.

use std::fmt;
use std::io::BufRead;

use base64::Engine as _;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::lines::Lines;
use crate::target::{check_header, check_method, check_url, Defaults, Target, TargetError};

#[derive(Deserialize)]
struct JsonTarget {
    method: Option<String>,
    url: Option<String>,
    body: Option<String>,
    header: Option<OrderedHeader>,
}

/// A JSON object of `name: [values]`, in document order.
struct OrderedHeader(Vec<(String, Vec<String>)>);

impl<'de> Deserialize<'de> for OrderedHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedHeader;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of header names to lists of values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedHeader, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Option<Vec<String>>>()? {
                    out.push((k, v.unwrap_or_default()));
                }
                Ok(OrderedHeader(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Decodes the next target, or `None` at the end of input.
pub fn next_target<R: BufRead>(
    lines: &mut Lines<R>,
    defaults: &Defaults,
) -> Result<Option<Target>, TargetError> {
    let (number, text) = loop {
        match lines.next_line()? {
            None => return Ok(None),
            Some(line) if line.text.trim().is_empty() => continue,
            Some(line) => break (line.number, line.text),
        }
    };
    let err = |message: String| TargetError::new(number, message);
    if !text.trim_start().starts_with('{') {
        return Err(err("bad JSON target: want one JSON object per line".into()));
    }
    let parsed: JsonTarget = serde_json::from_str(text.trim()).map_err(|e| {
        let mut why = e.to_string();
        if let Some(at) = why.rfind(" at line ") {
            why.truncate(at);
        }
        err(format!("bad JSON target: {why} (column {})", e.column()))
    })?;
    let method = parsed.method.filter(|m| !m.is_empty());
    let Some(method) = method else {
        return Err(err("JSON target: required \"method\" is missing".into()));
    };
    let Some(url) = parsed.url.filter(|u| !u.is_empty()) else {
        return Err(err("JSON target: required \"url\" is missing".into()));
    };
    check_method(&method).map_err(err)?;
    check_url(&url).map_err(err)?;
    let mut headers = defaults.headers.clone();
    for (name, values) in parsed.header.map(|h| h.0).unwrap_or_default() {
        for value in values {
            check_header(&name, &value).map_err(err)?;
            headers.push((name.clone(), value));
        }
    }
    let body = match parsed.body.filter(|b| !b.is_empty()) {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64.as_bytes())
            .map_err(|e| err(format!("bad JSON target: \"body\" is not base64: {e}")))?
            .into(),
        None => defaults.body.clone().unwrap_or_default(),
    };
    Ok(Some(Target {
        method,
        url,
        headers,
        body,
    }))
}
