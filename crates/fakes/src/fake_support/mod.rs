//! What every fake platform server (Telegram, Discord, Slack, Feishu) shares: its state
//! behind a mutex whose every change wakes the tests waiting on it, binding a loopback
//! port and serving its router until cancelled (a WebSocket fake's router: its socket
//! path, the rest to one handler), the request body limit and the MIME guess for files a
//! test named without a type; (in [`host`]) the shared half every handler holds and the
//! running server a handle stops on drop; (in [`ws`]) what the WebSocket fakes queue for
//! a connection and how its task sends it. Each fake writes only its platform's routes,
//! state and shapes.

mod handle;
mod host;
mod route;
pub(crate) mod ws;

pub(crate) use handle::{counters, fake_handle, records, setters, some_setters};
pub(crate) use host::{Host, Server};
pub(crate) use route::{Failures, RoutePattern, split_path};

use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Largest request body a fake reads (above the platforms' upload limits: Telegram's is
/// 50 MB).
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;

/// A fake's state: read and changed under a lock, waited on by tests.
pub(crate) struct Watched<T> {
    inner: Mutex<T>,
    /// Bumped after every change.
    changed: watch::Sender<u64>,
}

impl<T> Watched<T> {
    pub fn new(value: T) -> Self {
        Self {
            inner: Mutex::new(value),
            changed: watch::Sender::new(0),
        }
    }

    /// The state; a panic in a handler holding the lock must not wedge every later call.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads the state.
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.lock())
    }

    /// Changes the state and wakes every waiter.
    pub fn update<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let result = f(&mut self.lock());
        self.changed
            .send_modify(|version| *version = version.wrapping_add(1));
        result
    }

    /// Calls `check` on every change until it answers, `timeout` passes or `stop` is
    /// cancelled; then once more (so a last-moment change still counts).
    pub async fn wait_for<R>(
        &self,
        timeout: Duration,
        stop: &CancellationToken,
        mut check: impl FnMut(&mut T) -> Option<R>,
    ) -> Option<R> {
        let mut changes = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            changes.borrow_and_update();
            if let Some(found) = check(&mut self.lock()) {
                return Some(found);
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        break;
                    }
                }
                () = tokio::time::sleep_until(deadline) => break,
                () = stop.cancelled() => break,
            }
        }
        check(&mut self.lock())
    }
}

/// Binds `addr` (port 0: a free one); the listener and the address it got.
pub(crate) async fn bind(
    addr: SocketAddr,
) -> Result<(TcpListener, SocketAddr), (SocketAddr, std::io::Error)> {
    let listener = TcpListener::bind(addr).await.map_err(|e| (addr, e))?;
    let bound = listener.local_addr().map_err(|e| (addr, e))?;
    Ok((listener, bound))
}

/// A WebSocket fake's router: `upgrade` at each of `socket_paths`, every other request to
/// `fallback` (which sorts out the platform's HTTP API itself).
pub(crate) fn socket_router<S, U, UT, F, FT>(
    socket_paths: &[&str],
    upgrade: U,
    fallback: F,
    state: S,
) -> axum::Router
where
    S: Clone + Send + Sync + 'static,
    U: axum::handler::Handler<UT, S>,
    UT: 'static,
    F: axum::handler::Handler<FT, S>,
    FT: 'static,
{
    let routes = socket_paths
        .iter()
        .fold(axum::Router::new(), |routes, path| {
            routes.route(path, axum::routing::get(upgrade.clone()))
        });
    routes.fallback(fallback).with_state(state)
}

/// Serves `app` on `listener` until `stop` is cancelled.
pub(crate) fn serve(listener: TcpListener, app: axum::Router, stop: CancellationToken) {
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
    });
}

/// A request's `Content-Type` (empty when missing or not text).
pub(crate) fn content_type(headers: &axum::http::HeaderMap) -> &str {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

/// A MIME type from a file name's extension, for files a test gave without one.
pub(crate) fn mime_for(file_name: &str) -> &'static str {
    let extension = file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ogg" => "audio/ogg",
        "mp3" => "audio/mpeg",
        "mp4" => "video/mp4",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}
