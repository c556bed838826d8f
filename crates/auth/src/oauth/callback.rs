//! The loopback listener that receives the browser's redirect after sign-in
//! (`GET /auth/callback?code=…&state=…`). It answers the browser with a small page, refuses
//! a redirect whose `state` is not this login's (and keeps waiting: a stray or forged
//! request must not end the login), and hands the first good code to the waiting login.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::sync::{mpsc, oneshot};

use super::OAuthError;
use crate::secret::Secret;

const SUCCESS_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Pincer: signed in</title></head><body><p>Signed in. You can close this window and \
return to your terminal.</p></body></html>\n";
const DENIED_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Pincer: sign-in failed</title></head><body><p>Sign-in did not complete. Return to \
your terminal for details.</p></body></html>\n";

/// What the browser brought back.
type Outcome = Result<Secret, OAuthError>;

struct CallbackState {
    expected_state: String,
    /// Taken by the first good (or denied) redirect; later ones only get a page.
    deliver: Mutex<Option<mpsc::Sender<Outcome>>>,
}

/// A running callback listener. Stops when dropped.
pub struct CallbackListener {
    addr: SocketAddr,
    outcomes: mpsc::Receiver<Outcome>,
    stop: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for CallbackListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallbackListener")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl CallbackListener {
    /// Listens on `addr` (port 0 picks a free one) for `GET <path>` carrying `state`.
    pub async fn bind(
        addr: SocketAddr,
        path: &str,
        expected_state: &str,
    ) -> Result<Self, OAuthError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| OAuthError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| OAuthError::Bind { addr, source })?;
        let (tx, outcomes) = mpsc::channel(1);
        let state = Arc::new(CallbackState {
            expected_state: expected_state.to_owned(),
            deliver: Mutex::new(Some(tx)),
        });
        let app = Router::new()
            .route(path, get(on_callback))
            .with_state(state);
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(error) = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(%error, "sign-in callback listener stopped");
            }
        });
        Ok(Self {
            addr,
            outcomes,
            stop: Some(stop),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits up to `timeout` for the redirect: `Ok(Some(code))`, `Ok(None)` on timeout, or
    /// the error the authorization server redirected with.
    pub async fn wait(&mut self, timeout: Duration) -> Result<Option<Secret>, OAuthError> {
        match tokio::time::timeout(timeout, self.outcomes.recv()).await {
            Ok(Some(outcome)) => outcome.map(Some),
            Ok(None) | Err(_) => Ok(None),
        }
    }
}

impl Drop for CallbackListener {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn on_callback(
    State(state): State<Arc<CallbackState>>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    if params.get("state") != Some(&state.expected_state) {
        return (StatusCode::BAD_REQUEST, "State mismatch").into_response();
    }
    let outcome = if let Some(error) = params.get("error") {
        Err(OAuthError::Denied {
            error: error.chars().take(100).collect(),
            description: params
                .get("error_description")
                .map(|d| d.chars().take(200).collect()),
        })
    } else {
        match params.get("code").filter(|c| !c.is_empty()) {
            Some(code) => Ok(Secret::new(code.clone())),
            None => {
                return (StatusCode::BAD_REQUEST, "Missing authorization code").into_response();
            }
        }
    };
    let page = if outcome.is_ok() {
        (StatusCode::OK, Html(SUCCESS_PAGE))
    } else {
        (StatusCode::BAD_REQUEST, Html(DENIED_PAGE))
    };
    let sender = state
        .deliver
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    if let Some(sender) = sender {
        // The login may have given up waiting; then nobody needs the code.
        let _ = sender.try_send(outcome);
    }
    page.into_response()
}
