//! volley-client: the HTTP client of the load generator.
//!
//! One [`Client`] per attack holds what all workers share (TLS
//! configuration, DNS cache, per-host state such as HTTP/2 connections and
//! connection limits); each worker owns a [`Session`] with at most one
//! HTTP/1.1 connection per host and a reused read buffer, so that steady-state
//! requests allocate nothing. Targets are turned once into [`Prepared`]
//! requests (URL parsed, HTTP/1.1 bytes serialised) and then executed many
//! times; every execution yields an [`Outcome`] with the fields of a
//! `volley_results::Record`.
//!
//! # Layout
//!
//! - [`config`]: [`ClientConfig`] and [`TlsOptions`], vegeta's attack flags
//!   as validated values.
//! - [`error`]: [`ClientError`] for set-up failures; the classification of
//!   request failures into `ErrorKind` with vegeta-like texts.
//! - `url`: target URL parsing and redirect resolution.
//! - [`prepare`]: [`Prepared`] requests: HTTP/1.1 bytes and HTTP/2 parts.
//! - `tls`: rustls configurations (mTLS, root certificates, `-insecure`).
//! - `dns`: name resolution with a TTL cache and custom UDP resolvers.
//! - `dial`: connections: connect-to, unix sockets, local address, proxy
//!   CONNECT, TLS handshake with ALPN, per-host limits.
//! - `h1`: the hand-written HTTP/1.1 exchange (httparse, Content-Length and
//!   chunked bodies).
//! - `h2`: HTTP/2 over hyper, one shared multiplexed connection per host.
//! - [`session`]: [`Session::execute`]: timeouts, redirects, phases and the
//!   [`Outcome`].

pub mod config;
mod dial;
mod dns;
pub mod error;
mod h1;
mod h2;
pub mod prepare;
pub mod session;
mod stream;
mod tls;
mod url;

mod client;

pub use client::Client;
pub use config::{ClientConfig, TlsOptions};
pub use error::ClientError;
pub use prepare::Prepared;
pub use session::{Outcome, Session};
pub use volley_results::{ErrorKind, Phases};
