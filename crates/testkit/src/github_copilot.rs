//! `FakeGitHub`: GitHub's device flow and Copilot's token endpoint, on 127.0.0.1 (the
//! github-copilot sign-in).
//!
//! - `POST /login/device/code` (form: `client_id`, `scope`) answers a device code, a user
//!   code, `http://…/login/device` as the verification URI, `interval` and `expires_in`.
//! - `POST /login/oauth/access_token` (form: `client_id`, `device_code`, `grant_type`)
//!   answers from a script ([`Poll`]): `authorization_pending`, `slow_down`, an error, and
//!   the GitHub token once the script is used up.
//! - `GET /copilot_internal/v2/token` with `Authorization: Bearer <GitHub token>` answers a
//!   Copilot token `tid=copilot-N;exp=…;proxy-ep=…;` and `expires_at`; a token it does not
//!   know gets 401. Each exchange issues a new token, so tests can tell them apart.
//!
//! Every request is recorded with its headers.

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::oauth::FakeOAuthError;

/// The client id the fake expects (Copilot Chat's public one).
pub const FAKE_COPILOT_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The user code shown to the user.
pub const FAKE_USER_CODE: &str = "ABCD-1234";
/// The GitHub token the device flow grants.
pub const FAKE_GITHUB_TOKEN: &str = "gho_fake_github_token";

/// One scripted answer to a poll of the access-token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Poll {
    Pending,
    /// `slow_down`, with a new interval (seconds) when given.
    SlowDown(Option<u64>),
    /// An error that ends the login (`expired_token`, `access_denied`).
    Error(String),
}

/// One request the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubRequest {
    pub method: String,
    pub path: String,
    /// Form fields of a POST.
    pub params: BTreeMap<String, String>,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
}

impl GitHubRequest {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

struct Inner {
    script: VecDeque<Poll>,
    interval: u64,
    expires_in: u64,
    /// GitHub tokens the Copilot endpoint accepts.
    github_tokens: Vec<String>,
    /// The `proxy-ep` put into Copilot tokens.
    proxy_endpoint: String,
    /// Seconds from now until issued Copilot tokens expire.
    copilot_lifetime: u64,
    issued: u64,
    requests: Vec<GitHubRequest>,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Inner> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running fake. Stops when dropped.
pub struct FakeGitHub {
    addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeGitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitHub")
            .field("addr", &self.addr)
            .finish()
    }
}

impl FakeGitHub {
    /// Serves on 127.0.0.1 with a free port; polls answer `authorization_pending` once,
    /// then the token; the device code's interval is 0 s and it lives 60 s.
    pub async fn start() -> Result<Self, FakeOAuthError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let (listener, addr) = crate::server::bind(addr)
            .await
            .map_err(|source| FakeOAuthError::Bind { addr, source })?;
        let shared: Shared = Arc::new(Mutex::new(Inner {
            script: VecDeque::from([Poll::Pending]),
            interval: 0,
            expires_in: 60,
            github_tokens: vec![FAKE_GITHUB_TOKEN.to_owned()],
            proxy_endpoint: "proxy.individual.githubcopilot.com".to_owned(),
            copilot_lifetime: 1800,
            issued: 0,
            requests: Vec::new(),
        }));
        let app = Router::new()
            .route("/login/device/code", post(device_code))
            .route("/login/oauth/access_token", post(access_token))
            .route("/copilot_internal/v2/token", get(copilot_token))
            .with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            addr,
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://127.0.0.1:PORT`: both the GitHub base and the API base.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The poll answers before the token is granted.
    pub fn set_script(&self, script: impl IntoIterator<Item = Poll>) {
        lock(&self.shared).script = script.into_iter().collect();
    }

    /// The device code's `interval` and `expires_in`, seconds.
    pub fn set_timing(&self, interval: u64, expires_in: u64) {
        let mut inner = lock(&self.shared);
        inner.interval = interval;
        inner.expires_in = expires_in;
    }

    /// Another GitHub token the Copilot endpoint accepts (an environment token).
    pub fn accept_github_token(&self, token: &str) {
        lock(&self.shared).github_tokens.push(token.to_owned());
    }

    /// Stops accepting every GitHub token (a revoked sign-in).
    pub fn revoke_github_tokens(&self) {
        lock(&self.shared).github_tokens.clear();
    }

    /// The `proxy-ep` of issued Copilot tokens (`127.0.0.1:PORT` in tests that want the
    /// API host taken from the token).
    pub fn set_proxy_endpoint(&self, endpoint: &str) {
        endpoint.clone_into(&mut lock(&self.shared).proxy_endpoint);
    }

    /// How long issued Copilot tokens live, seconds (default 1800).
    pub fn set_copilot_lifetime(&self, secs: u64) {
        lock(&self.shared).copilot_lifetime = secs;
    }

    /// The requests so far, oldest first.
    pub fn requests(&self) -> Vec<GitHubRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Requests to `path`.
    pub fn requests_to(&self, path: &str) -> Vec<GitHubRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// The Copilot token the `n`-th exchange issued (1-based).
    pub fn copilot_token(&self, n: u64) -> String {
        let inner = lock(&self.shared);
        copilot_token_text(n, &inner.proxy_endpoint)
    }

    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn copilot_token_text(serial: u64, proxy: &str) -> String {
    format!("tid=copilot-{serial};exp=9999999999;sku=free;proxy-ep={proxy};8kp=1")
}

fn record(shared: &Shared, method: &str, path: &str, headers: &HeaderMap, body: &[u8]) {
    let params = form_urlencoded::parse(body).into_owned().collect();
    let headers = headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    lock(shared).requests.push(GitHubRequest {
        method: method.into(),
        path: path.into(),
        params,
        headers,
    });
}

fn error(code: &str, description: &str) -> Response {
    let body = json!({"error": code, "error_description": description});
    (StatusCode::OK, axum::Json(body)).into_response()
}

async fn device_code(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, "POST", "/login/device/code", &headers, &body);
    let form: BTreeMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    if form.get("client_id").map(String::as_str) != Some(FAKE_COPILOT_CLIENT_ID) {
        return (StatusCode::BAD_REQUEST, "unknown client_id").into_response();
    }
    let inner = lock(&shared);
    let body = json!({
        "device_code": "dc-fake-1",
        "user_code": FAKE_USER_CODE,
        "verification_uri": "https://github.com/login/device",
        "expires_in": inner.expires_in,
        "interval": inner.interval,
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

async fn access_token(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    record(
        &shared,
        "POST",
        "/login/oauth/access_token",
        &headers,
        &body,
    );
    let form: BTreeMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    if get("client_id") != FAKE_COPILOT_CLIENT_ID
        || get("device_code") != "dc-fake-1"
        || get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code"
    {
        return error("incorrect_device_code", "unknown device code or grant");
    }
    let next = lock(&shared).script.pop_front();
    match next {
        None => {
            let body = json!({"access_token": FAKE_GITHUB_TOKEN, "token_type": "bearer", "scope": "read:user"});
            (StatusCode::OK, axum::Json(body)).into_response()
        }
        Some(Poll::Pending) => error("authorization_pending", "waiting for the user"),
        Some(Poll::SlowDown(interval)) => {
            let mut body = json!({"error": "slow_down", "error_description": "Too many requests"});
            if let Some(secs) = interval {
                body["interval"] = json!(secs);
            }
            (StatusCode::OK, axum::Json(body)).into_response()
        }
        Some(Poll::Error(code)) => error(&code, "the login cannot go on"),
    }
}

async fn copilot_token(State(shared): State<Shared>, headers: HeaderMap) -> Response {
    record(&shared, "GET", "/copilot_internal/v2/token", &headers, b"");
    let presented = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    let mut inner = lock(&shared);
    if !inner.github_tokens.contains(&presented) {
        let body = json!({"message": "Bad credentials"});
        return (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    }
    inner.issued += 1;
    let expires_at = pincer_base::time::now_secs().unsigned_abs() + inner.copilot_lifetime;
    let body = json!({
        "token": copilot_token_text(inner.issued, &inner.proxy_endpoint),
        "expires_at": expires_at,
        "refresh_in": 1500,
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}
