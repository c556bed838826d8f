//! A fake platform's shared half ([`Host`]: its config, stop token, base URL and watched
//! state, held by every handler and connection task) and its running server ([`Server`]:
//! bound on loopback, serving until the last handle is dropped).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::Watched;

/// What a fake's handlers share: `C` is its config, `I` its recorded state.
pub(crate) struct Host<C, I> {
    pub config: C,
    /// Cancelled when the fake stops: the server and every connection task end.
    pub cancel: CancellationToken,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    state: Watched<I>,
}

impl<C, I> Host<C, I> {
    pub fn new(config: C, base_url: String, inner: I) -> Self {
        Self {
            config,
            cancel: CancellationToken::new(),
            base_url,
            state: Watched::new(inner),
        }
    }

    /// Reads the state.
    pub fn read<T>(&self, f: impl FnOnce(&I) -> T) -> T {
        self.state.read(f)
    }

    /// Changes the state and wakes every waiter.
    pub fn update<T>(&self, f: impl FnOnce(&mut I) -> T) -> T {
        self.state.update(f)
    }

    /// Calls `check` on every change until it answers, `timeout` passes or the fake stops.
    pub async fn wait_for<T>(
        &self,
        timeout: Duration,
        check: impl FnMut(&mut I) -> Option<T>,
    ) -> Option<T> {
        self.state.wait_for(timeout, &self.cancel, check).await
    }

    /// Waits until `count` of the state reaches `n`, `timeout` passes or the fake stops;
    /// returns the count then.
    pub async fn wait_count(
        &self,
        n: usize,
        timeout: Duration,
        count: impl Fn(&I) -> usize,
    ) -> usize {
        self.wait_for(timeout, |inner| (count(inner) >= n).then_some(()))
            .await;
        self.read(count)
    }

    /// Waits until the record `field` holds at least `n` entries or `timeout` passed;
    /// returns them all (fewer on a timeout).
    pub async fn wait_len<T: Clone>(
        &self,
        n: usize,
        timeout: Duration,
        field: impl Fn(&I) -> &Vec<T>,
    ) -> Vec<T> {
        let found = self
            .wait_for(timeout, |inner| {
                let records = field(inner);
                (records.len() >= n).then(|| records.clone())
            })
            .await;
        found.unwrap_or_else(|| self.read(|inner| field(inner).clone()))
    }
}

/// A fake serving on loopback; it stops when dropped (a fake's handle holds it in an `Arc`,
/// so the last clone of the handle stops it).
pub(crate) struct Server<C, I> {
    pub addr: SocketAddr,
    pub host: Arc<Host<C, I>>,
}

impl<C, I> Server<C, I> {
    /// Binds `addr` (port 0: a free one) and serves the router `routes` makes until the
    /// fake stops.
    pub async fn start(
        addr: SocketAddr,
        config: C,
        inner: I,
        routes: impl FnOnce(Arc<Host<C, I>>) -> axum::Router,
    ) -> Result<Self, (SocketAddr, std::io::Error)> {
        Self::start_serving(addr, config, inner, |listener, host| {
            let cancel = host.cancel.clone();
            super::serve(listener, routes(host), cancel);
        })
        .await
    }

    /// Binds `addr` and lets `serve` serve the listener its own way (it must stop when the
    /// host's `cancel` is cancelled).
    pub async fn start_serving(
        addr: SocketAddr,
        config: C,
        inner: I,
        serve: impl FnOnce(TcpListener, Arc<Host<C, I>>),
    ) -> Result<Self, (SocketAddr, std::io::Error)> {
        let (listener, addr) = super::bind(addr).await?;
        let host = Arc::new(Host::new(config, format!("http://{addr}"), inner));
        serve(listener, host.clone());
        Ok(Self { addr, host })
    }

    /// Stops serving (also while handles are alive); open connections end.
    pub fn stop(&self) {
        self.host.cancel.cancel();
    }

    /// `Name { addr: … }`, for a handle's `Debug`.
    pub fn debug(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name).field("addr", &self.addr).finish()
    }
}

impl<C, I> Drop for Server<C, I> {
    fn drop(&mut self) {
        self.stop();
    }
}
