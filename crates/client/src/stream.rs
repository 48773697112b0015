//! The byte streams a connection runs on: TCP or a unix socket, optionally
//! wrapped in TLS. One enum so the HTTP/1.1 code is not generic.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::client::TlsStream;

/// A transport without TLS.
pub(crate) enum Plain {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// A connection's stream.
pub(crate) enum Stream {
    Plain(Plain),
    Tls(Box<TlsStream<Plain>>),
}

impl Plain {
    /// `tcp 10.0.0.1:5000->10.0.0.2:80` for error texts, as Go words them.
    pub fn describe(&self) -> String {
        match self {
            Plain::Tcp(s) => match (s.local_addr(), s.peer_addr()) {
                (Ok(l), Ok(p)) => format!("tcp {l}->{p}"),
                _ => "tcp".into(),
            },
            Plain::Unix(s) => match s
                .peer_addr()
                .ok()
                .and_then(|a| a.as_pathname().map(|p| p.display().to_string()))
            {
                Some(p) => format!("unix ->{p}"),
                None => "unix".into(),
            },
        }
    }
}

impl Stream {
    pub fn describe(&self) -> String {
        match self {
            Stream::Plain(p) => p.describe(),
            Stream::Tls(t) => t.get_ref().0.describe(),
        }
    }
}

impl AsyncRead for Plain {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Plain::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Plain::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Plain {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Plain::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Plain::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Plain::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Plain::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Plain::Tcp(s) => Pin::new(s).poll_flush(cx),
            Plain::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Plain::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Plain::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
