//! Loading a recipe: read the file, parse it, and fetch every `origin` URL
//! once, so that serving never touches the network.
//!
//! Fetching is bounded: each URL gets [`FETCH_TIMEOUT`] for connect, TLS,
//! headers and body together, follows up to five redirects, and keeps at
//! most [`MAX_BODY`] bytes. An unreachable origin is an error naming the
//! field and the URL, never a hang.

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;

use crate::recipe::{parse_recipe, BodySource, Recipe, RecipeError, MAX_BODY};

/// Time allowed to fetch one `origin` URL, from connect to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a recipe comes from.
#[derive(Debug, Clone)]
pub enum RecipeSource {
    /// A JSON file (`-recipe file.json`).
    File(PathBuf),
    /// JSON text (the body of `POST /_admin/add_recipe`).
    Json(String),
    /// An already parsed recipe.
    Parsed(Recipe),
}

/// A recipe whose `origin` bodies have all been fetched: ready to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedRecipe {
    pub recipe: Recipe,
}

impl From<LoadedRecipe> for Recipe {
    fn from(l: LoadedRecipe) -> Recipe {
        l.recipe
    }
}

/// Reads, parses and fetches a recipe.
pub async fn load_recipe(source: RecipeSource) -> Result<LoadedRecipe, RecipeError> {
    let mut recipe = match source {
        RecipeSource::File(path) => {
            let text = tokio::fs::read_to_string(&path)
                .await
                .map_err(|e| RecipeError::Read {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
            parse_recipe(&text)?
        }
        RecipeSource::Json(text) => parse_recipe(&text)?,
        RecipeSource::Parsed(r) => r,
    };
    fetch_origins(&mut recipe).await?;
    Ok(LoadedRecipe { recipe })
}

/// Fetches every `origin` body not fetched yet, all URLs concurrently.
pub(crate) async fn fetch_origins(recipe: &mut Recipe) -> Result<(), RecipeError> {
    let mut jobs = tokio::task::JoinSet::new();
    let many = recipe.is_list;
    for (i, route) in recipe.routes.iter().enumerate() {
        if let BodySource::Origin { url, fetched: None } = &route.source {
            let url = url.clone();
            let gzip = route
                .headers
                .iter()
                .any(|(k, v)| k == "content-encoding" && v.eq_ignore_ascii_case("gzip"));
            jobs.spawn(async move {
                let res = tokio::time::timeout(FETCH_TIMEOUT, fetch_url(&url, gzip))
                    .await
                    .unwrap_or_else(|_| {
                        Err(format!("no answer within {}s", FETCH_TIMEOUT.as_secs()))
                    });
                (i, url, res)
            });
        }
    }
    while let Some(joined) = jobs.join_next().await {
        let Ok((i, url, res)) = joined else {
            return Err(RecipeError::Origin {
                field: "origin".into(),
                url: String::new(),
                message: "fetch task failed".into(),
            });
        };
        match res {
            Ok(body) => {
                if let Some(route) = recipe.routes.get_mut(i) {
                    route.source = BodySource::Origin {
                        url,
                        fetched: Some(body),
                    };
                }
            }
            Err(message) => {
                return Err(RecipeError::Origin {
                    field: if many {
                        format!("[{i}].origin")
                    } else {
                        "origin".into()
                    },
                    url,
                    message,
                })
            }
        }
    }
    Ok(())
}

/// GETs `url` (http or https), following up to five redirects, and returns
/// the identity-encoded body.
async fn fetch_url(url: &str, gzip: bool) -> Result<Bytes, String> {
    let mut uri: http::Uri = url.parse().map_err(|_| "bad URL".to_string())?;
    for _ in 0..6 {
        let resp = get_once(&uri, gzip).await?;
        if resp.status().is_redirection() {
            if let Some(loc) = resp
                .headers()
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            {
                uri = resolve(&uri, loc)?;
                continue;
            }
        }
        let gzipped = resp
            .headers()
            .get(http::header::CONTENT_ENCODING)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
        let body = Limited::new(resp.into_body(), MAX_BODY as usize)
            .collect()
            .await
            .map_err(|e| format!("reading body: {e}"))?
            .to_bytes();
        if !gzipped {
            return Ok(body);
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&body[..])
            .take(MAX_BODY + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("bad gzip body: {e}"))?;
        if out.len() as u64 > MAX_BODY {
            return Err("body above the 100 MB limit".into());
        }
        return Ok(out.into());
    }
    Err("too many redirects".into())
}

fn resolve(base: &http::Uri, location: &str) -> Result<http::Uri, String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location
            .parse()
            .map_err(|_| format!("bad redirect {location:?}"));
    }
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
    format!("{scheme}://{authority}{location}")
        .parse()
        .map_err(|_| format!("bad redirect {location:?}"))
}

async fn get_once(
    uri: &http::Uri,
    gzip: bool,
) -> Result<http::Response<hyper::body::Incoming>, String> {
    let host = uri.host().ok_or("URL has no host")?.to_string();
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let tcp = tokio::net::TcpStream::connect((bare, port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let mut req = http::Request::get(path)
        .header(
            http::header::HOST,
            uri.authority().map(|a| a.as_str()).unwrap_or(&host),
        )
        .header(http::header::USER_AGENT, "volley-origin")
        .header(http::header::ACCEPT, "*/*");
    if gzip {
        req = req.header(http::header::ACCEPT_ENCODING, "gzip");
    }
    let req = req
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("bad request: {e}"))?;
    if https {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = rustls_pki_types::ServerName::try_from(bare.to_string())
            .map_err(|_| format!("bad TLS server name {bare:?}"))?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        send(TokioIo::new(tls), req).await
    } else {
        send(TokioIo::new(tcp), req).await
    }
}

async fn send<IO>(
    io: IO,
    req: http::Request<Empty<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, String>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender
        .send_request(req)
        .await
        .map_err(|e| format!("request: {e}"))
}
