//! The accept loop (in place of `axum::serve`, which has no header-read timeout and no
//! connection cap): HTTP/1.1 through hyper with WebSocket upgrades, `TCP_NODELAY`, the peer's
//! address for the handlers (`ConnectInfo<SocketAddr>`), and two limits:
//! - a header-read timeout: a client that does not finish a request's headers in time, or
//!   leaves a kept-alive connection idle that long, is disconnected (hyper starts the same
//!   timer when a connection opens and each time it goes idle);
//! - a cap on open connections, WebSockets included (the slot is held by the socket itself,
//!   so it is freed when the socket closes, however long after the upgrade). Past the cap a
//!   new connection is closed at once rather than left waiting: a slot may not free for hours
//!   (WebSockets live that long), and a refused client can tell a full gateway from a slow one
//!   and retry; waiting ones would also hold file descriptors the gateway needs.
//!
//! On shutdown it stops accepting, lets each connection finish its request in flight
//! (idle ones close at once) and returns when all have ended, as `axum::serve` did.
//! Upgraded WebSockets are not waited for here: they end on the shutdown token themselves.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower_service::Service as _;

/// The limits of the accept loop.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
}

/// How long to pause after an accept error that is not about one connection (out of file
/// descriptors, say), so the loop does not spin while the condition lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `shutdown` is cancelled and the connections have ended.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // The connection tasks, waited for on shutdown.
    let connections = TaskTracker::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let mut refused_at_cap = 0u64;
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            refused_at_cap += 1;
            // Once per power of two: a flood does not flood the log too.
            if refused_at_cap.is_power_of_two() {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    refused = refused_at_cap,
                    "too many open connections; closing new ones"
                );
            }
            drop(stream);
            continue;
        };
        // Events are small frames that must go out at once: no Nagle delay (it held deltas
        // back ~40 ms against the peer's delayed ACKs).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let io = TokioIo::new(Counted {
            stream,
            _slot: slot,
        });
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut app = app.clone();
            async move { app.call(request.map(Body::new)).await }
        });
        let connection = http.serve_connection(io, service).with_upgrades();
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// Errors about one connection that went away before it was accepted: try the next.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// A socket holding its slot under the connection cap until it is dropped, which for an
/// upgraded WebSocket is when the WebSocket ends.
struct Counted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
