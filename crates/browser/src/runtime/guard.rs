//! The runtime's own navigation guard: a CDP connection ([`Connection::guard`], the same
//! check the tool's connections run) that whoever runs Chromium — the supervisor, or the
//! in-process runtime — keeps for the browser's whole life. Without it a page would be
//! checked only while some tool call is connected: after a one-shot `pincer tools invoke
//! browser open` exits, a page navigating by itself (a timer, a meta refresh, a script
//! setting `location`) would load whatever it likes, and a later `snapshot` would read it.
//!
//! The guard fails closed: if it cannot connect once Chromium is up, the browser does not
//! start; if its connection drops while Chromium lives and a few reconnects fail, the
//! browser is ended. Either is written to `supervisor.log`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pincer_web::ssrf::NetworkPolicy;
use tokio::io::AsyncWriteExt as _;

use crate::tool::cdp::CdpError;
use crate::tool::conn::Connection;

/// How long each of the guard's CDP calls (and its connect) may take.
const GUARD_CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Reconnects tried after the guard's connection dropped, the first at once.
const RECONNECTS: u32 = 5;
/// The wait before the second reconnect; doubled for each further one.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(200);

/// The connected guard of one browser.
pub(crate) struct Guard {
    conn: Arc<Connection>,
    policy: Arc<NetworkPolicy>,
}

impl Guard {
    /// Connects the guard to the browser at `ws_url`.
    pub(crate) async fn open(ws_url: &str, policy: NetworkPolicy) -> Result<Self, CdpError> {
        let policy = Arc::new(policy);
        let conn = Connection::guard(ws_url, GUARD_CALL_TIMEOUT, policy.clone()).await?;
        Ok(Self { conn, policy })
    }

    /// Returns once the guard's connection has dropped.
    pub(crate) async fn lost(&self) {
        self.conn.closed().await;
    }

    /// Connects again after [`Guard::lost`], trying [`RECONNECTS`] times; the last error
    /// when none worked.
    pub(crate) async fn reconnect(&mut self) -> Result<(), CdpError> {
        let ws_url = self.conn.ws_url.clone();
        let mut wait = Duration::ZERO;
        let mut last = CdpError::Closed;
        for _ in 0..RECONNECTS {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).max(RECONNECT_BACKOFF);
            match Connection::guard(&ws_url, GUARD_CALL_TIMEOUT, self.policy.clone()).await {
                Ok(conn) => {
                    self.conn = conn;
                    return Ok(());
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Notes `message` in the profile's `supervisor.log` (and in this process's log): the
/// guard's failures end or refuse the browser, and the user should be able to find why.
pub(crate) async fn log(supervisor_log: &Path, message: &str) {
    tracing::warn!("browser: {message}");
    let line = format!("{} {message}\n", pincer_base::time::iso_now());
    let mut options = tokio::fs::OpenOptions::new();
    options.create(true).append(true).mode(0o600);
    if let Ok(mut file) = options.open(supervisor_log).await {
        let _ = file.write_all(line.as_bytes()).await;
    }
}
