//! TLS configuration with rustls: the client certificate and key for mTLS,
//! the trusted roots (the system's, or `-root-certs` instead of them, as
//! vegeta does), `-insecure` (no chain or name check, handshake signatures
//! still verified), session resumption with `-session-tickets`, and the
//! ALPN offers (`h2` then `http/1.1`, or `http/1.1` alone).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig as RustlsConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::config::TlsOptions;
use crate::error::ClientError;

/// The two rustls configurations a client uses.
#[derive(Clone)]
pub(crate) struct TlsConfigs {
    /// ALPN `h2`, `http/1.1`.
    pub h2: Arc<RustlsConfig>,
    /// ALPN `http/1.1` only.
    pub h1: Arc<RustlsConfig>,
}

/// The configurations, built on first use: loading the system's trusted
/// roots reads hundreds of files, which a plain-HTTP attack never needs.
pub(crate) struct LazyTls {
    opts: TlsOptions,
    cell: std::sync::OnceLock<Result<TlsConfigs, String>>,
}

impl LazyTls {
    /// Checks the user's files now (certificates, key, `-root-certs`);
    /// the system roots wait for the first TLS connection.
    pub fn new(opts: &TlsOptions) -> Result<LazyTls, ClientError> {
        TlsConfigs::build(opts, false)?;
        Ok(LazyTls {
            opts: opts.clone(),
            cell: std::sync::OnceLock::new(),
        })
    }

    /// The configurations; an error text if they cannot be built.
    pub fn get(&self) -> Result<&TlsConfigs, &str> {
        self.cell
            .get_or_init(|| TlsConfigs::build(&self.opts, true).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }
}

impl TlsConfigs {
    /// Builds both configurations; `native` loads the system's roots when
    /// no `-root-certs` replace them (skipped when only checking files).
    pub fn build(opts: &TlsOptions, native: bool) -> Result<TlsConfigs, ClientError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let client_auth = match &opts.cert {
            Some(cert_path) => {
                let data = read("-cert", cert_path)?;
                let certs = parse_certs("-cert", cert_path, &data)?;
                let key = match &opts.key {
                    Some(key_path) => parse_key("-key", key_path, &read("-key", key_path)?)?,
                    // vegeta looks for the key in the certificate file.
                    None => parse_key("-cert", cert_path, &data)?,
                };
                Some((certs, key))
            }
            None => {
                if let Some(key_path) = &opts.key {
                    // Read it anyway so that a bad path is reported.
                    parse_key("-key", key_path, &read("-key", key_path)?)?;
                    return Err(ClientError::Config("-key needs -cert".into()));
                }
                None
            }
        };
        let builder = RustlsConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| ClientError::Tls(e.to_string()))?;
        let builder = if opts.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        } else {
            builder.with_root_certificates(roots(opts, native)?)
        };
        let mut cfg = match client_auth {
            Some((certs, key)) => builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| ClientError::Tls(format!("client certificate and key: {e}")))?,
            None => builder.with_no_client_auth(),
        };
        cfg.resumption = if opts.session_tickets {
            Resumption::in_memory_sessions(4096)
        } else {
            Resumption::disabled()
        };
        let mut h1 = cfg.clone();
        h1.alpn_protocols = vec![b"http/1.1".to_vec()];
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsConfigs {
            h2: Arc::new(cfg),
            h1: Arc::new(h1),
        })
    }
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, ClientError> {
    std::fs::read(path).map_err(|e| ClientError::Read {
        what,
        path: path.to_path_buf(),
        msg: crate::error::io_text(&e),
    })
}

fn parse_certs(
    what: &'static str,
    path: &Path,
    data: &[u8],
) -> Result<Vec<CertificateDer<'static>>, ClientError> {
    let pem = |msg: String| ClientError::Pem {
        what,
        path: path.to_path_buf(),
        msg,
    };
    let certs = rustls_pemfile::certs(&mut &data[..])
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem(format!("malformed PEM: {e}")))?;
    if certs.is_empty() {
        return Err(pem("no PEM certificate found".into()));
    }
    Ok(certs)
}

fn parse_key(
    what: &'static str,
    path: &Path,
    data: &[u8],
) -> Result<PrivateKeyDer<'static>, ClientError> {
    let pem = |msg: String| ClientError::Pem {
        what,
        path: path.to_path_buf(),
        msg,
    };
    match rustls_pemfile::private_key(&mut &data[..]) {
        Ok(Some(k)) => Ok(k),
        Ok(None) => Err(pem("no PEM private key found".into())),
        Err(e) => Err(pem(format!("malformed PEM: {e}"))),
    }
}

/// The trusted roots: `-root-certs` files if any, the system's otherwise.
fn roots(opts: &TlsOptions, native: bool) -> Result<RootCertStore, ClientError> {
    let mut store = RootCertStore::empty();
    if opts.root_certs.is_empty() {
        if !native {
            return Ok(store);
        }
        let native = rustls_native_certs::load_native_certs();
        store.add_parsable_certificates(native.certs);
        return Ok(store);
    }
    for path in &opts.root_certs {
        for cert in parse_certs("-root-certs", path, &read("-root-certs", path)?)? {
            store.add(cert).map_err(|e| ClientError::Pem {
                what: "-root-certs",
                path: path.to_path_buf(),
                msg: format!("unusable certificate: {e}"),
            })?;
        }
    }
    Ok(store)
}

/// `-insecure`: accepts any certificate for any name, but still checks
/// that the server holds the key of the certificate it sent.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
