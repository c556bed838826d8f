//! A listener whose connections a handler can abort: the handler marks its connection, the
//! next read or write on it fails, hyper drops it and the socket closes with a TCP reset
//! (zero linger), so the client sees the connection die without any response bytes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Accepts TCP connections and wraps each in an abortable [`AbortableStream`].
pub(crate) struct AbortableListener(pub TcpListener);

/// Per-connection handle, available to handlers as `ConnectInfo<ConnHandle>`.
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle {
    killed: Arc<AtomicBool>,
}

impl ConnHandle {
    fn new() -> Self {
        Self {
            killed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Makes every further read and write on the connection fail, so it is dropped without
    /// a response.
    pub fn abort(&self) {
        self.killed.store(true, Ordering::SeqCst);
    }
}

impl Connected<IncomingStream<'_, AbortableListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, AbortableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

impl Listener for AbortableListener {
    type Io = AbortableStream;
    type Addr = ConnHandle;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, _remote)) => {
                    let _ = stream.set_nodelay(true);
                    let handle = ConnHandle::new();
                    let io = AbortableStream {
                        inner: stream,
                        killed: handle.killed.clone(),
                        reset: false,
                    };
                    return (io, handle);
                }
                // Per-connection errors (reset before accept, fd exhaustion): back off a little.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        // The address type is the per-connection handle; the bound address is not needed.
        self.0.local_addr().map(|_| ConnHandle::new())
    }
}

/// A TCP stream that fails every operation once its connection was aborted.
pub(crate) struct AbortableStream {
    inner: TcpStream,
    killed: Arc<AtomicBool>,
    reset: bool,
}

impl AbortableStream {
    /// `Some(error)` once aborted; the first time also arms a reset-on-close.
    fn check(&mut self) -> Option<io::Error> {
        if !self.killed.load(Ordering::SeqCst) {
            return None;
        }
        if !self.reset {
            self.reset = true;
            let _ = self.inner.set_zero_linger();
        }
        Some(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "connection aborted by the fake",
        ))
    }
}

impl AsyncRead for AbortableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(err) = self.check() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for AbortableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.check() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(err) = self.check() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(err) = self.check() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(err) = self.check() {
            return Poll::Ready(Err(err));
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
