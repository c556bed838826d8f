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
        // tokio's File writes on the blocking pool: without the flush the line may still
        // be in flight when the file is dropped (and the next line, or a reader, overtakes it).
        let _ = file.write_all(line.as_bytes()).await;
        let _ = file.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use futures_util::{SinkExt as _, StreamExt as _};
    use serde_json::{Value, json};
    use tokio::net::TcpListener;
    use tokio_tungstenite::tungstenite::Message;

    use super::*;

    /// Serves one CDP connection, answering every call with an empty result; closes it
    /// after `close_after` answers.
    async fn serve_one(listener: &TcpListener, close_after: Option<usize>) {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let mut answered = 0;
        while let Some(Ok(Message::Text(text))) = ws.next().await {
            let call: Value = serde_json::from_str(text.as_str()).unwrap();
            let answer = json!({"id": call["id"], "result": {}}).to_string();
            ws.send(Message::text(answer)).await.unwrap();
            answered += 1;
            if close_after == Some(answered) {
                let _ = ws.close(None).await;
                return;
            }
        }
    }

    async fn listener() -> (TcpListener, String) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/devtools/browser/x", listener.local_addr().unwrap());
        (listener, url)
    }

    #[tokio::test]
    async fn a_dropped_guard_connects_again() {
        let (listener, url) = listener().await;
        tokio::spawn(async move {
            // The first connection closes once the guard is set up; the second stays.
            serve_one(&listener, Some(1)).await;
            serve_one(&listener, None).await;
        });
        let mut guard = Guard::open(&url, NetworkPolicy::default()).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), guard.lost())
            .await
            .expect("the closed connection is noticed");
        guard.reconnect().await.unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(600), guard.lost())
                .await
                .is_err(),
            "the new connection holds"
        );
    }

    #[tokio::test]
    async fn a_guard_that_cannot_connect_again_says_why() {
        let (listener, url) = listener().await;
        let server = tokio::spawn(async move {
            serve_one(&listener, Some(1)).await;
            // The listener goes with the task: nothing answers any more.
        });
        let mut guard = Guard::open(&url, NetworkPolicy::default()).await.unwrap();
        server.await.unwrap();
        guard.lost().await;
        let started = std::time::Instant::now();
        let err = guard.reconnect().await.unwrap_err();
        assert!(
            matches!(&err, CdpError::Connect { url: u, .. } if *u == url),
            "{err:?}"
        );
        // Bounded: every try made, with its backoff, and then no more.
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(200 + 400 + 800 + 1600) && took < Duration::from_secs(8),
            "{took:?}"
        );
    }

    #[tokio::test]
    async fn the_log_gets_a_line_per_failure_and_stays_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("supervisor.log");
        log(&path, "first").await;
        log(&path, "second").await;
        let text = tokio::fs::read_to_string(&path).await.unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with(" first") && lines[1].ends_with(" second"),
            "{text}"
        );
        let mode = tokio::fs::metadata(&path)
            .await
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
