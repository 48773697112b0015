//! TLS listener set-up: certificate and key from PEM files, ALPN `h2` and
//! `http/1.1`, and with `client_ca` mutual TLS (client certificates required
//! and verified against that CA). The ring provider is named explicitly so
//! the choice does not depend on which rustls features other crates enable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::OriginError;

/// TLS settings of the listener (`-cert`, `-key`, `-client-ca`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM CA certificates; when set, clients must present a certificate
    /// signed by one of them.
    pub client_ca: Option<PathBuf>,
}

fn tls_err(path: &Path, message: impl std::fmt::Display) -> OriginError {
    OriginError::Tls(format!("{}: {message}", path.display()))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, OriginError> {
    let pem = std::fs::read(path).map_err(|e| tls_err(path, e))?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut &pem[..])
        .collect::<Result<_, _>>()
        .map_err(|e| tls_err(path, format!("bad PEM: {e}")))?;
    if certs.is_empty() {
        return Err(tls_err(path, "no certificate found"));
    }
    Ok(certs)
}

pub(crate) fn server_config(cfg: &TlsConfig) -> Result<Arc<rustls::ServerConfig>, OriginError> {
    let certs = read_certs(&cfg.cert)?;
    let pem = std::fs::read(&cfg.key).map_err(|e| tls_err(&cfg.key, e))?;
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut &pem[..])
        .map_err(|e| tls_err(&cfg.key, format!("bad PEM: {e}")))?
        .ok_or_else(|| tls_err(&cfg.key, "no private key found"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| OriginError::Tls(e.to_string()))?;
    let builder = match &cfg.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in read_certs(ca)? {
                roots.add(cert).map_err(|e| tls_err(ca, e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| tls_err(ca, e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| tls_err(&cfg.key, e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
