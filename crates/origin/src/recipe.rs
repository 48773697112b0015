//! OriginSimulator recipes: the JSON schema, parsed into validated values.
//!
//! A recipe is one object or a list of objects, one per route. Parsing walks
//! the JSON by hand (not serde derive) so that every error names the field it
//! is about, e.g. `stages[1].latency: bad duration "10 sec"` or, in a list,
//! `[2].random_content: bad size "5 kb"`. Unknown keys are ignored, as
//! OriginSimulator ignores them. Limits keep a recipe from taking the server
//! down: bodies up to [`MAX_BODY`] bytes, latencies up to [`MAX_LATENCY`].

use std::time::Duration;

use rand::Rng;
use serde_json::{Map, Value};

/// Largest body a recipe may ask for (after expanding `<<…>>` tags), and the
/// largest body fetched from an `origin`.
pub const MAX_BODY: u64 = 100 * 1024 * 1024;
/// Largest latency a stage may ask for.
pub const MAX_LATENCY: Duration = Duration::from_secs(3600);
/// Largest `at` offset of a stage (a week: stages beyond that are a typo).
pub const MAX_AT: Duration = Duration::from_secs(7 * 24 * 3600);
/// The route used when a recipe names none.
pub const DEFAULT_ROUTE: &str = "/*";

/// A recipe error, naming the field (`stages[1].latency`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecipeError {
    /// The text is not JSON.
    #[error("recipe is not valid JSON: {0}")]
    Json(String),
    /// A field has a bad value; `field` is a path such as `[1].stages[0].status`.
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    /// The recipe file could not be read.
    #[error("cannot read recipe {path}: {message}")]
    Read { path: String, message: String },
    /// An `origin` URL could not be fetched.
    #[error("{field}: cannot fetch origin {url}: {message}")]
    Origin {
        field: String,
        url: String,
        message: String,
    },
}

fn field_err(field: &str, message: impl Into<String>) -> RecipeError {
    RecipeError::Field {
        field: field.to_string(),
        message: message.into(),
    }
}

/// A whole recipe: one or more routes.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub routes: Vec<RouteRecipe>,
    /// Written as a JSON list: errors name fields `[i].field`.
    pub is_list: bool,
}

/// The recipe of one route.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRecipe {
    /// Request path; a trailing `*` makes it a prefix wildcard.
    pub route: String,
    pub source: BodySource,
    /// Response headers, names lower-cased, in recipe order.
    pub headers: Vec<(String, String)>,
    pub stages: Vec<Stage>,
    /// The object as written, echoed by `/_admin/current_recipe`.
    pub raw: Value,
}

/// Where the body of a 200 comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum BodySource {
    /// No body source given: an empty body.
    Empty,
    /// Fetched once when the recipe loads; `fetched` holds the bytes once done.
    Origin {
        url: String,
        fetched: Option<bytes::Bytes>,
    },
    /// Text with `<<256kb>>` tags, expanded when the recipe loads.
    Body(String),
    /// Random text of this many bytes.
    RandomContent(u64),
    /// Exact bytes, served as they are (quick shapes).
    Fixed(bytes::Bytes),
}

/// One stage: from `at` after the recipe loaded, answer `status` after `latency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stage {
    pub at: Duration,
    pub status: u16,
    pub latency: Latency,
}

/// A stage latency: fixed, or uniform random in `[min, max]` per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Latency {
    #[default]
    Zero,
    Fixed(Duration),
    Range(Duration, Duration),
}

impl Latency {
    /// Parses `0`, `"250ms"`, `"2s"`, `"1m"`, or a range `"100ms..200ms"`.
    pub fn parse(text: &str) -> Result<Latency, String> {
        let text = text.trim();
        let lat = if let Some((lo, hi)) = text.split_once("..") {
            let lo = parse_duration(lo)?;
            let hi = parse_duration(hi)?;
            if lo > hi {
                return Err(format!("bad latency range {text:?}: minimum above maximum"));
            }
            if hi.is_zero() {
                Latency::Zero
            } else {
                Latency::Range(lo, hi)
            }
        } else {
            let d = parse_duration(text)?;
            if d.is_zero() {
                Latency::Zero
            } else {
                Latency::Fixed(d)
            }
        };
        if lat.max() > MAX_LATENCY {
            return Err(format!(
                "latency {text:?} is above the limit of {}s",
                MAX_LATENCY.as_secs()
            ));
        }
        Ok(lat)
    }

    /// The largest delay this latency can produce.
    pub fn max(&self) -> Duration {
        match *self {
            Latency::Zero => Duration::ZERO,
            Latency::Fixed(d) => d,
            Latency::Range(_, hi) => hi,
        }
    }

    /// The delay for one request.
    pub fn sample(&self) -> Duration {
        match *self {
            Latency::Zero => Duration::ZERO,
            Latency::Fixed(d) => d,
            Latency::Range(lo, hi) => {
                let (lo, hi) = (lo.as_micros() as u64, hi.as_micros() as u64);
                Duration::from_micros(rand::thread_rng().gen_range(lo..=hi))
            }
        }
    }

    /// OriginSimulator's rendering in `/_admin/routes_status`: ms, or `lo..hi`.
    pub fn render_ms(&self) -> String {
        match *self {
            Latency::Zero => "0".to_string(),
            Latency::Fixed(d) => d.as_millis().to_string(),
            Latency::Range(lo, hi) => format!("{}..{}", lo.as_millis(), hi.as_millis()),
        }
    }
}

/// Parses `0`, `"0"`, `"250ms"`, `"2s"`, `"1m"`, `"1h"`, `"500us"` (integers only).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad duration {text:?} (expected e.g. \"250ms\" or \"2s\")"))?;
    let d = match unit {
        "" if n == 0 => Duration::ZERO,
        "us" | "µs" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => {
            return Err(format!(
                "bad duration {text:?} (expected e.g. \"250ms\" or \"2s\")"
            ))
        }
    };
    Ok(d)
}

/// Parses a size: `"50kb"`, `"128b"`, `"2mb"` (1024-based), or a plain number
/// of bytes. Refuses sizes above [`MAX_BODY`].
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad size {text:?} (expected e.g. \"50kb\", units b, kb, mb)"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1024,
        "mb" | "m" => 1024 * 1024,
        "gb" | "g" => 1024 * 1024 * 1024,
        _ => {
            return Err(format!(
                "bad size {text:?} (expected e.g. \"50kb\", units b, kb, mb)"
            ))
        }
    };
    let size = n.saturating_mul(mult);
    if size > MAX_BODY {
        return Err(format!(
            "size {text:?} is above the limit of {} MB",
            MAX_BODY / (1024 * 1024)
        ));
    }
    Ok(size)
}

/// Parses a recipe: one object or a list of objects.
pub fn parse_recipe(json: &str) -> Result<Recipe, RecipeError> {
    let value: Value = serde_json::from_str(json).map_err(|e| RecipeError::Json(e.to_string()))?;
    match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(field_err("recipe", "empty list: give at least one route"));
            }
            let mut routes = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                routes.push(parse_route(item, &format!("[{i}]."))?);
            }
            Ok(Recipe {
                routes,
                is_list: true,
            })
        }
        obj @ Value::Object(_) => Ok(Recipe {
            routes: vec![parse_route(obj, "")?],
            is_list: false,
        }),
        _ => Err(field_err(
            "recipe",
            "expected a JSON object or a list of objects",
        )),
    }
}

fn parse_route(value: Value, prefix: &str) -> Result<RouteRecipe, RecipeError> {
    let f = |name: &str| format!("{prefix}{name}");
    let Value::Object(obj) = &value else {
        let name = if prefix.is_empty() {
            "recipe".to_string()
        } else {
            prefix.trim_end_matches('.').to_string()
        };
        return Err(field_err(&name, "expected a JSON object"));
    };
    let route = match obj.get("route") {
        None | Some(Value::Null) => DEFAULT_ROUTE.to_string(),
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(other) => {
            return Err(field_err(
                &f("route"),
                format!("expected a non-empty path string, got {other}"),
            ))
        }
    };
    let source = parse_source(obj, &f)?;
    let headers = match obj.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => {
            let mut headers = Vec::with_capacity(map.len());
            for (name, v) in map {
                let field = f(&format!("headers.{name}"));
                let Value::String(v) = v else {
                    return Err(field_err(&field, format!("expected a string, got {v}")));
                };
                if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(field_err(&field, "not a valid header name"));
                }
                if http::HeaderValue::from_str(v).is_err() {
                    return Err(field_err(&field, format!("not a valid header value {v:?}")));
                }
                headers.push((name.to_ascii_lowercase(), v.clone()));
            }
            headers
        }
        Some(other) => {
            return Err(field_err(
                &f("headers"),
                format!("expected an object of header names to values, got {other}"),
            ))
        }
    };
    let stages = match obj.get("stages") {
        None | Some(Value::Null) => {
            return Err(field_err(&f("stages"), "missing: give at least one stage"))
        }
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err(field_err(&f("stages"), "empty: give at least one stage"));
            }
            let mut stages = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                stages.push(parse_stage(item, &f(&format!("stages[{i}]")))?);
            }
            stages.sort_by_key(|s| s.at);
            stages
        }
        Some(other) => {
            return Err(field_err(
                &f("stages"),
                format!("expected a list of stages, got {other}"),
            ))
        }
    };
    Ok(RouteRecipe {
        route,
        source,
        headers,
        stages,
        raw: value,
    })
}

fn parse_source(
    obj: &Map<String, Value>,
    f: &dyn Fn(&str) -> String,
) -> Result<BodySource, RecipeError> {
    let present: Vec<&str> = ["origin", "body", "random_content"]
        .into_iter()
        .filter(|k| !matches!(obj.get(*k), None | Some(Value::Null)))
        .collect();
    if present.len() > 1 {
        return Err(field_err(
            &f(present[1]),
            format!("give only one body source, found {}", present.join(" and ")),
        ));
    }
    let Some(&key) = present.first() else {
        return Ok(BodySource::Empty);
    };
    let field = f(key);
    let Some(Value::String(text)) = obj.get(key) else {
        return Err(field_err(&field, "expected a string"));
    };
    match key {
        "origin" => {
            let uri: http::Uri = text
                .parse()
                .map_err(|_| field_err(&field, format!("bad URL {text:?}")))?;
            match uri.scheme_str() {
                Some("http") | Some("https") if uri.host().is_some() => {}
                _ => {
                    return Err(field_err(
                        &field,
                        format!("bad URL {text:?} (expected http:// or https://)"),
                    ))
                }
            }
            Ok(BodySource::Origin {
                url: text.clone(),
                fetched: None,
            })
        }
        "body" => {
            // Validate the tags now so the error names the field.
            expanded_len(text).map_err(|m| field_err(&field, m))?;
            Ok(BodySource::Body(text.clone()))
        }
        _ => Ok(BodySource::RandomContent(
            parse_size(text).map_err(|m| field_err(&field, m))?,
        )),
    }
}

fn parse_stage(value: &Value, field: &str) -> Result<Stage, RecipeError> {
    let Value::Object(obj) = value else {
        return Err(field_err(field, format!("expected an object, got {value}")));
    };
    let at = match obj.get("at") {
        None | Some(Value::Null) => Duration::ZERO,
        Some(v) => duration_value(v).map_err(|m| field_err(&format!("{field}.at"), m))?,
    };
    if at > MAX_AT {
        return Err(field_err(
            &format!("{field}.at"),
            "offset is above the limit of 7 days",
        ));
    }
    let status = match obj.get("status") {
        Some(Value::Number(n)) => n
            .as_u64()
            .filter(|s| (200..=599).contains(s))
            .map(|s| s as u16),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|s| (200..=599).contains(s)),
        _ => None,
    };
    let Some(status) = status else {
        let got = obj
            .get("status")
            .map(|v| v.to_string())
            .unwrap_or_else(|| "nothing".into());
        return Err(field_err(
            &format!("{field}.status"),
            format!("expected a final HTTP status 200..599, got {got}"),
        ));
    };
    let latency = match obj.get("latency") {
        None | Some(Value::Null) => Latency::Zero,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => Latency::Zero,
            Some(ms) if Duration::from_millis(ms) <= MAX_LATENCY => {
                Latency::Fixed(Duration::from_millis(ms))
            }
            _ => {
                return Err(field_err(
                    &format!("{field}.latency"),
                    format!("bad latency {n} (expected e.g. \"100ms\", at most 1h)"),
                ))
            }
        },
        Some(Value::String(s)) => {
            Latency::parse(s).map_err(|m| field_err(&format!("{field}.latency"), m))?
        }
        Some(other) => {
            return Err(field_err(
                &format!("{field}.latency"),
                format!("expected e.g. \"100ms\" or \"100ms..200ms\", got {other}"),
            ))
        }
    };
    Ok(Stage {
        at,
        status,
        latency,
    })
}

fn duration_value(v: &Value) -> Result<Duration, String> {
    match v {
        // OriginSimulator documents bare numbers as milliseconds.
        Value::Number(n) => n
            .as_u64()
            .map(Duration::from_millis)
            .ok_or_else(|| format!("bad duration {n}")),
        Value::String(s) => parse_duration(s),
        other => Err(format!("expected e.g. \"10s\", got {other}")),
    }
}

/// Iterates the `<<size>>` tags of a body: (start, end, size) byte offsets.
fn tags(text: &str) -> impl Iterator<Item = (usize, usize, Result<u64, String>)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let start = pos + text.get(pos..)?.find("<<")?;
        let inner = start + 2;
        let close = inner + text.get(inner..)?.find(">>")?;
        pos = close + 2;
        Some((start, close + 2, parse_size(&text[inner..close])))
    })
}

/// The length of a body once its tags are expanded; errors on bad tags or
/// on a total above [`MAX_BODY`].
fn expanded_len(text: &str) -> Result<u64, String> {
    let mut total = text.len() as u64;
    for (start, end, size) in tags(text) {
        total = total - (end - start) as u64 + size?;
    }
    if total > MAX_BODY {
        return Err(format!(
            "body expands to {total} bytes, above the limit of {} MB",
            MAX_BODY / (1024 * 1024)
        ));
    }
    Ok(total)
}

/// Expands `<<256kb>>` tags into that much random text.
pub(crate) fn expand_body(text: &str) -> Result<Vec<u8>, String> {
    let len = expanded_len(text)?;
    let mut out = Vec::with_capacity(len as usize);
    let mut last = 0;
    for (start, end, size) in tags(text) {
        out.extend_from_slice(&text.as_bytes()[last..start]);
        random_text_into(&mut out, size? as usize, BASE64_ALPHABET);
        last = end;
    }
    out.extend_from_slice(&text.as_bytes()[last..]);
    Ok(out)
}

/// OriginSimulator's random text is base64 of random bytes.
pub(crate) const BASE64_ALPHABET: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// The seed's Go server returns a random a–z string.
pub(crate) const LOWER_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// Appends `len` random characters drawn from `alphabet`.
pub(crate) fn random_text_into(out: &mut Vec<u8>, len: usize, alphabet: &[u8]) {
    let mut rng = rand::thread_rng();
    out.reserve(len);
    out.extend((0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]));
}

/// `len` random characters drawn from `alphabet`.
pub(crate) fn random_text(len: usize, alphabet: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    random_text_into(&mut out, len, alphabet);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_duration("10 sec").is_err());
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("1.5s").is_err());
    }

    #[test]
    fn latencies() {
        assert_eq!(Latency::parse("0"), Ok(Latency::Zero));
        assert_eq!(
            Latency::parse("100ms..200ms"),
            Ok(Latency::Range(
                Duration::from_millis(100),
                Duration::from_millis(200)
            ))
        );
        assert!(Latency::parse("200ms..100ms").is_err());
        assert!(Latency::parse("2h").unwrap_err().contains("limit"));
        let r = Latency::parse("100ms..200ms").unwrap();
        for _ in 0..100 {
            let d = r.sample();
            assert!(d >= Duration::from_millis(100) && d <= Duration::from_millis(200));
        }
        assert_eq!(r.render_ms(), "100..200");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("50kb"), Ok(50 * 1024));
        assert_eq!(parse_size("128b"), Ok(128));
        assert_eq!(parse_size("1mb"), Ok(1024 * 1024));
        assert!(parse_size("5 kb").is_err());
        assert!(parse_size("101mb").unwrap_err().contains("limit"));
        assert!(parse_size("99999999999999999999gb").is_err());
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_recipe(
            r#"{"stages":[{"at":0,"status":200,"latency":0},{"at":"1s","status":200,"latency":"10 sec"}]}"#,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"stages[1].latency: bad duration "10 sec" (expected e.g. "250ms" or "2s")"#
        );
        let e = parse_recipe(r#"[{"stages":[{"at":0,"status":200}]},{"random_content":"5 kb","stages":[{"status":200}]}]"#)
            .unwrap_err();
        assert!(
            e.to_string().starts_with("[1].random_content: bad size"),
            "{e}"
        );
        let e = parse_recipe(r#"{"stages":[{"status":99}]}"#).unwrap_err();
        assert!(e.to_string().starts_with("stages[0].status:"), "{e}");
        let e = parse_recipe(r#"{"body":"x","origin":"http://a/","stages":[{"status":200}]}"#)
            .unwrap_err();
        assert!(e.to_string().contains("only one body source"), "{e}");
        let e = parse_recipe(r#"{"body":"<<200mb>>","stages":[{"status":200}]}"#).unwrap_err();
        assert!(e.to_string().starts_with("body:"), "{e}");
        let e = parse_recipe(r#"{"stages":[{"status":200,"latency":"2h"}]}"#).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        assert!(matches!(parse_recipe("{"), Err(RecipeError::Json(_))));
        assert!(parse_recipe("3").is_err());
        assert!(parse_recipe("[]").is_err());
        assert!(parse_recipe(r#"{"stages":[]}"#).is_err());
        assert!(parse_recipe(r#"{"origin":"ftp://x/","stages":[{"status":200}]}"#).is_err());
    }

    #[test]
    fn body_tags_expand() {
        let body = expand_body("{\"a\":\"<<16b>>\",\"b\":\"<<1kb>>\"}").unwrap();
        assert_eq!(body.len(), "{\"a\":\"\",\"b\":\"\"}".len() + 16 + 1024);
        assert!(body.starts_with(b"{\"a\":\""));
        assert_eq!(expand_body("no tags <<").unwrap(), b"no tags <<");
        assert!(expand_body("<<x>>").is_err());
    }
}
