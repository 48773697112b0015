//! The simulation: recipes compiled into ready-to-send responses, and the
//! per-request decision "which route, which stage, what latency".
//!
//! Compiling happens once per recipe load, off the hot path: bodies are
//! generated, fetched bodies gzipped when the recipe says so, and every
//! (route, stage) gets a [`Prepared`] response holding both the header list
//! (for HTTP/2) and the complete HTTP/1.1 bytes (head + body) that the fast
//! path copies out as they are. A [`Simulation`] is immutable; loading a
//! recipe builds a new one and swaps it in (see `server::Shared`).
//!
//! Semantics follow OriginSimulator: routes are merged by name when a recipe
//! is added; an exact route wins over a wildcard, and among wildcards the
//! longest prefix wins; a route whose first stage has not started yet
//! answers 406; 304 and 204 have empty bodies, 404 "Not found", 406 "Recipe
//! not set at <path>, …", other non-200 statuses "Error <status>".

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Value};

use crate::recipe::{
    expand_body, random_text, BodySource, Latency, Recipe, RouteRecipe, Stage, BASE64_ALPHABET,
    DEFAULT_ROUTE,
};

/// A response ready to send.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub status: u16,
    /// Headers except content-length (HTTP/2 and hyper path).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Bytes,
    /// The whole HTTP/1.1 response: status line, headers, blank line, body.
    pub wire: Bytes,
    /// Length of the head in `wire`, including the final blank line.
    pub head_len: usize,
}

/// Headers a recipe may not set: they would break message framing or are
/// connection-specific (illegal in HTTP/2).
const DROPPED_HEADERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "te",
];

impl Prepared {
    pub fn new(status: u16, headers: Vec<(HeaderName, HeaderValue)>, body: Bytes) -> Prepared {
        let body = if status == 204 || status == 304 {
            Bytes::new()
        } else {
            body
        };
        let reason = http::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("Unknown");
        let mut wire = Vec::with_capacity(128 + body.len());
        let _ = write!(wire, "HTTP/1.1 {status} {reason}\r\n");
        for (k, v) in &headers {
            wire.extend_from_slice(k.as_str().as_bytes());
            wire.extend_from_slice(b": ");
            wire.extend_from_slice(v.as_bytes());
            wire.extend_from_slice(b"\r\n");
        }
        if status != 204 && status != 304 {
            let _ = write!(wire, "content-length: {}\r\n", body.len());
        }
        wire.extend_from_slice(b"\r\n");
        let head_len = wire.len();
        wire.extend_from_slice(&body);
        Prepared {
            status,
            headers,
            body,
            wire: wire.into(),
            head_len,
        }
    }

    /// A plain response of the admin API or an error.
    pub fn simple(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Prepared {
        Prepared::new(
            status,
            vec![(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static(content_type),
            )],
            body.into(),
        )
    }
}

pub(crate) const TEXT: &str = "text/plain; charset=utf-8";
pub(crate) const JSON: &str = "application/json; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";
/// Plug's default, which OriginSimulator sends unless the recipe overrides it.
const DEFAULT_CACHE_CONTROL: &str = "max-age=0, private, must-revalidate";

/// How a route's responses are dressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// OriginSimulator: html/json content type, Plug's cache-control, body
    /// only on 200.
    Recipe,
    /// Quick shapes: text/plain, no cache-control, the given body on any status.
    Quick,
}

/// One stage of a compiled route.
#[derive(Debug)]
pub(crate) struct CompiledStage {
    pub stage: Stage,
    /// `None` for 406, whose body names the request path.
    pub resp: Option<Prepared>,
}

/// One route, compiled.
#[derive(Debug)]
pub(crate) struct CompiledRoute {
    pub recipe: RouteRecipe,
    pub loaded_at: Instant,
    pub stages: Vec<CompiledStage>,
    /// Headers for responses built per request (406).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub gzip: bool,
    /// True when the only stage starts at 0: no clock read per request.
    pub constant: bool,
}

/// The answer to one request.
pub(crate) enum Answer<'a> {
    Ready(&'a Prepared),
    Built(Prepared),
}

impl Answer<'_> {
    pub fn get(&self) -> &Prepared {
        match self {
            Answer::Ready(p) => p,
            Answer::Built(p) => p,
        }
    }
}

impl CompiledRoute {
    /// The stage in force `now`, or `None` before the first stage.
    pub fn stage_at(&self, now: Instant) -> Option<&CompiledStage> {
        if self.constant {
            return self.stages.first();
        }
        let elapsed = now.saturating_duration_since(self.loaded_at);
        self.stages.iter().rev().find(|s| s.stage.at <= elapsed)
    }

    fn answer(&self, path: &str) -> (Duration, Answer<'_>) {
        let now = if self.constant {
            self.loaded_at
        } else {
            Instant::now()
        };
        match self.stage_at(now) {
            Some(CompiledStage {
                stage,
                resp: Some(p),
            }) => (stage.latency.sample(), Answer::Ready(p)),
            Some(CompiledStage { stage, resp: None }) => {
                (stage.latency.sample(), Answer::Built(self.not_set(path)))
            }
            None => (Duration::ZERO, Answer::Built(self.not_set(path))),
        }
    }

    fn not_set(&self, path: &str) -> Prepared {
        let text = not_set_text(path);
        let body = if self.gzip {
            gzip(text.as_bytes())
        } else {
            text.into_bytes()
        };
        Prepared::new(406, self.headers.clone(), body.into())
    }
}

fn not_set_text(path: &str) -> String {
    if path == DEFAULT_ROUTE {
        "Recipe not set, please POST a recipe to /_admin/add_recipe".to_string()
    } else {
        format!(
            "Recipe not set at {path}, please POST a recipe for this route to /_admin/add_recipe"
        )
    }
}

/// Compiles one route: generates its body and prepares every stage.
/// Origin bodies must have been fetched already.
pub(crate) fn compile_route(
    recipe: RouteRecipe,
    style: Style,
    loaded_at: Instant,
) -> Result<CompiledRoute, String> {
    let gzip = recipe
        .headers
        .iter()
        .any(|(k, v)| k == "content-encoding" && v.trim().eq_ignore_ascii_case("gzip"));
    let plain: Vec<u8> = match &recipe.source {
        BodySource::Empty => Vec::new(),
        BodySource::Origin {
            fetched: Some(b), ..
        } => b.to_vec(),
        BodySource::Origin { url, fetched: None } => {
            return Err(format!("origin {url} was not fetched"))
        }
        BodySource::Body(text) => expand_body(text)?,
        BodySource::RandomContent(n) => random_text(*n as usize, BASE64_ALPHABET),
        BodySource::Fixed(b) => b.to_vec(),
    };
    let user_type = recipe.headers.iter().any(|(k, _)| k == "content-type");
    let user_cache = recipe.headers.iter().any(|(k, _)| k == "cache-control");
    let extra: Vec<(HeaderName, HeaderValue)> = recipe
        .headers
        .iter()
        .filter(|(k, _)| !DROPPED_HEADERS.contains(&k.as_str()))
        .filter_map(|(k, v)| {
            Some((
                HeaderName::from_bytes(k.as_bytes()).ok()?,
                HeaderValue::from_str(v).ok()?,
            ))
        })
        .collect();
    let headers_for = |body: &[u8]| {
        let mut h = Vec::with_capacity(extra.len() + 2);
        if !user_type {
            let ct = if body.first() == Some(&b'{') {
                JSON
            } else if style == Style::Quick {
                TEXT
            } else {
                HTML
            };
            h.push((http::header::CONTENT_TYPE, HeaderValue::from_static(ct)));
        }
        if style == Style::Recipe && !user_cache {
            h.push((
                http::header::CACHE_CONTROL,
                HeaderValue::from_static(DEFAULT_CACHE_CONTROL),
            ));
        }
        h.extend(extra.iter().cloned());
        h
    };
    let encode = |b: &[u8]| -> Bytes {
        if gzip && !b.is_empty() {
            gzip_bytes(b)
        } else {
            Bytes::copy_from_slice(b)
        }
    };
    let ok_body = encode(&plain);
    let mut stages = Vec::with_capacity(recipe.stages.len());
    for stage in &recipe.stages {
        let status = stage.status;
        let text: Option<Vec<u8>> = match (style, status) {
            (Style::Quick, _) if !plain.is_empty() => None,
            (_, 200) => None,
            (_, 406) => {
                stages.push(CompiledStage {
                    stage: *stage,
                    resp: None,
                });
                continue;
            }
            (_, 304) => Some(Vec::new()),
            (_, 404) => Some(b"Not found".to_vec()),
            (_, s) => Some(format!("Error {s}").into_bytes()),
        };
        let (ct_basis, body) = match text {
            None => (plain.as_slice(), ok_body.clone()),
            Some(t) => {
                let body = encode(&t);
                stages.push(CompiledStage {
                    stage: *stage,
                    resp: Some(Prepared::new(status, headers_for(&t), body)),
                });
                continue;
            }
        };
        stages.push(CompiledStage {
            stage: *stage,
            resp: Some(Prepared::new(status, headers_for(ct_basis), body)),
        });
    }
    let constant = recipe.stages.len() == 1 && recipe.stages[0].at.is_zero();
    Ok(CompiledRoute {
        headers: headers_for(b""),
        recipe,
        loaded_at,
        stages,
        gzip,
        constant,
    })
}

fn gzip_bytes(b: &[u8]) -> Bytes {
    gzip(b).into()
}

pub(crate) fn gzip(b: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(b);
    enc.finish().unwrap_or_default()
}

/// An immutable set of compiled routes.
#[derive(Debug, Default)]
pub(crate) struct Simulation {
    /// Sorted by route name.
    pub routes: Vec<Arc<CompiledRoute>>,
    exact: HashMap<Box<str>, usize>,
    /// (prefix, index), longest prefix first.
    wildcards: Vec<(Box<str>, usize)>,
}

impl Simulation {
    pub fn new(mut routes: Vec<Arc<CompiledRoute>>) -> Simulation {
        routes.sort_by(|a, b| a.recipe.route.cmp(&b.recipe.route));
        let mut exact = HashMap::new();
        let mut wildcards = Vec::new();
        for (i, r) in routes.iter().enumerate() {
            match r.recipe.route.strip_suffix('*') {
                Some(prefix) => wildcards.push((prefix.into(), i)),
                None => {
                    exact.insert(r.recipe.route.as_str().into(), i);
                }
            }
        }
        wildcards.sort_by_key(|w: &(Box<str>, usize)| std::cmp::Reverse(w.0.len()));
        Simulation {
            routes,
            exact,
            wildcards,
        }
    }

    /// The same routes with `added` replacing routes of the same name.
    pub fn merged(&self, added: Vec<Arc<CompiledRoute>>) -> Simulation {
        let mut routes: Vec<Arc<CompiledRoute>> = self
            .routes
            .iter()
            .filter(|r| !added.iter().any(|a| a.recipe.route == r.recipe.route))
            .cloned()
            .collect();
        routes.extend(added);
        Simulation::new(routes)
    }

    pub fn lookup(&self, path: &str) -> Option<&CompiledRoute> {
        if let Some(&i) = self.exact.get(path) {
            return self.routes.get(i).map(|r| &**r);
        }
        self.wildcards
            .iter()
            .find(|(prefix, _)| path.starts_with(&**prefix))
            .and_then(|&(_, i)| self.routes.get(i).map(|r| &**r))
    }

    pub fn has_exact(&self, path: &str) -> bool {
        self.exact.contains_key(path)
    }

    /// The latency to wait and the response for a request to `path`.
    pub fn answer(&self, path: &str) -> (Duration, Answer<'_>) {
        match self.lookup(path) {
            Some(route) => route.answer(path),
            None => (
                Duration::ZERO,
                Answer::Built(Prepared::simple(406, HTML, not_set_text(path))),
            ),
        }
    }

    /// `/_admin/current_recipe`: the recipes as OriginSimulator echoes them.
    pub fn recipes_json(&self) -> Value {
        Value::Array(
            self.routes
                .iter()
                .map(|r| {
                    let mut obj = serde_json::Map::new();
                    for key in ["origin", "body", "random_content"] {
                        obj.insert(key.into(), Value::Null);
                    }
                    obj.insert("headers".into(), json!({}));
                    obj.insert("stages".into(), json!([]));
                    if let Value::Object(raw) = &r.recipe.raw {
                        for (k, v) in raw {
                            obj.insert(k.clone(), v.clone());
                        }
                    }
                    obj.insert("route".into(), Value::String(r.recipe.route.clone()));
                    Value::Object(obj)
                })
                .collect(),
        )
    }

    /// `/_admin/routes_status`: `route status latency` per line.
    pub fn routes_status(&self) -> String {
        let now = Instant::now();
        self.routes
            .iter()
            .map(|r| match r.stage_at(now) {
                Some(s) => format!(
                    "{} {} {}",
                    r.recipe.route,
                    s.stage.status,
                    s.stage.latency.render_ms()
                ),
                None => format!("{} 406 0", r.recipe.route),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `/_admin/routes`: route names, one per line.
    pub fn route_names(&self) -> String {
        self.routes
            .iter()
            .map(|r| r.recipe.route.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Compiles a whole recipe (origins already fetched).
pub(crate) fn compile(recipe: Recipe, style: Style) -> Result<Vec<Arc<CompiledRoute>>, String> {
    let now = Instant::now();
    recipe
        .routes
        .into_iter()
        .map(|r| compile_route(r, style, now).map(Arc::new))
        .collect()
}

/// The recipe served when none is given, as OriginSimulator does: a gzipped
/// welcome page on `/*`, 200 after 100 ms.
pub(crate) fn default_recipe() -> Recipe {
    let body = DEFAULT_PAGE;
    let headers = vec![
        (
            "cache-control".to_string(),
            "public, max-age=30".to_string(),
        ),
        ("content-encoding".to_string(), "gzip".to_string()),
    ];
    let stage = Stage {
        at: Duration::ZERO,
        status: 200,
        latency: Latency::Fixed(Duration::from_millis(100)),
    };
    Recipe {
        routes: vec![RouteRecipe {
            route: DEFAULT_ROUTE.to_string(),
            source: BodySource::Body(body.to_string()),
            raw: json!({
                "route": DEFAULT_ROUTE,
                "body": body,
                "headers": {"cache-control": "public, max-age=30", "content-encoding": "gzip"},
                "stages": [{"at": 0, "status": 200, "latency": "100ms"}],
            }),
            headers,
            stages: vec![stage],
        }],
        is_list: false,
    }
}

const DEFAULT_PAGE: &str = "<!doctype html>
<html lang=\"en\">
<head><meta charset=\"utf-8\"><title>volley origin - default content</title></head>
<body>
<h1>volley origin</h1>
<p>An origin simulator for load tests. This is the default content: no recipe is loaded.</p>
<p>Load a recipe (OriginSimulator format):</p>
<pre>curl -X POST --data-binary @recipe.json http://HOST/_admin/add_recipe</pre>
<p>See the current one at <code>/_admin/current_recipe</code>, counts at
<code>/_admin/current_count</code> and <code>/_admin/counts?bin=1s</code>, metrics at <code>/metrics</code>.</p>
</body>
</html>
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::parse_recipe;

    fn sim(json: &str) -> Simulation {
        Simulation::new(compile(parse_recipe(json).unwrap(), Style::Recipe).unwrap())
    }

    #[test]
    fn exact_wins_and_longest_wildcard() {
        let s = sim(r#"[
            {"route":"/*","body":"root","stages":[{"status":200}]},
            {"route":"/news*","body":"news-wild","stages":[{"status":200}]},
            {"route":"/news","body":"news","stages":[{"status":200}]}]"#);
        let body = |p: &str| s.answer(p).1.get().body.clone();
        assert_eq!(body("/news"), "news");
        assert_eq!(body("/news/x"), "news-wild");
        assert_eq!(body("/newsy"), "news-wild");
        assert_eq!(body("/sport"), "root");
        assert_eq!(s.route_names(), "/*\n/news\n/news*");
    }

    #[test]
    fn statuses_and_bodies() {
        let s = sim(r#"[
            {"route":"/a","body":"{\"x\":1}","stages":[{"status":200}]},
            {"route":"/b","body":"x","stages":[{"status":304}]},
            {"route":"/c","body":"x","stages":[{"status":404}]},
            {"route":"/d","body":"x","stages":[{"status":503}]},
            {"route":"/e","body":"x","stages":[{"status":406}]},
            {"route":"/f","body":"x","stages":[{"at":"1h","status":200}]}]"#);
        let get = |p: &str| {
            let (_, a) = s.answer(p);
            let p = a.get();
            (p.status, p.body.clone(), p.headers[0].1.clone())
        };
        assert_eq!(
            get("/a"),
            (200, "{\"x\":1}".into(), HeaderValue::from_static(JSON))
        );
        assert_eq!(get("/b").1, "");
        assert_eq!(get("/c").1, "Not found");
        assert_eq!(get("/d").1, "Error 503");
        assert_eq!(
            get("/e").1,
            "Recipe not set at /e, please POST a recipe for this route to /_admin/add_recipe"
        );
        assert_eq!(get("/f").0, 406);
        assert_eq!(get("/zzz").0, 406);
        assert!(s.routes_status().contains("/f 406 0"));
    }

    #[test]
    fn wire_is_http11() {
        let p = Prepared::simple(200, TEXT, "hello");
        let text = std::str::from_utf8(&p.wire).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(text.ends_with("content-length: 5\r\n\r\nhello"));
        assert_eq!(&p.wire[p.head_len..], b"hello");
    }
}
