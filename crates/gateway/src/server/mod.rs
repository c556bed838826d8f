//! The gateway's network face: one port serving OpenClaw's WebSocket protocol, the HTTP API
//! and (later) the web chat page. `serve` runs until the shutdown token is cancelled, then
//! stops accepting, tells connected clients (`shutdown` event) and returns.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// What the server needs to know to start.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The shared token clients must present; `None` disables auth (refused off loopback).
    pub token: Option<String>,
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("refusing to listen on {addr} without auth: a non-loopback address needs a token")]
    PublicWithoutAuth { addr: SocketAddr },
    #[error("the server stopped with an error: {0}")]
    Io(#[from] std::io::Error),
}

/// Shared state of a running server.
pub struct Gateway {
    pub options: ServeOptions,
    pub started: Instant,
}

/// Serves on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: TcpListener,
    options: ServeOptions,
    shutdown: CancellationToken,
) -> Result<(), ServerError> {
    let addr = listener.local_addr()?;
    if options.token.is_none() && !addr.ip().is_loopback() {
        return Err(ServerError::PublicWithoutAuth { addr });
    }
    let state = Arc::new(Gateway {
        options,
        started: Instant::now(),
    });
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ready" }))
        .with_state(state);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}
