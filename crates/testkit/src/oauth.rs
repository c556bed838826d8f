//! `FakeOAuthServer`: a fake OAuth 2.0 authorization server in the shape of
//! `auth.openai.com` (the openai-codex sign-in), on 127.0.0.1.
//!
//! - `GET /oauth/authorize` checks the PKCE request (response_type, client id, redirect URI,
//!   S256 challenge, state) and redirects (302) to the redirect URI with `code` and `state`,
//!   as a browser would after the user signs in, or with `error=access_denied` when told to
//!   deny. A test plays the browser by GETting the authorize URL with reqwest.
//! - `POST /oauth/token` (form-encoded) serves `grant_type=authorization_code` (checking the
//!   code, redirect URI, client id and that SHA-256 of the verifier is the challenge) and
//!   `grant_type=refresh_token` (refresh tokens rotate: each works once; a reused one gets
//!   OpenAI's `refresh_token_reused`). Refreshes can be delayed and made to fail.
//! - Access tokens are unsigned JWTs (`header.payload.signature`, base64url) whose payload
//!   carries `"https://api.openai.com/auth": {"chatgpt_account_id": …}`.
//!
//! - `POST /v1/oauth/token` is the same endpoint taking JSON, as Anthropic's (the Claude
//!   sign-in); [`FakeOAuthServer::set_access_token_prefix`] makes access tokens look like
//!   Anthropic's (`sk-ant-oat01-…`) instead of JWTs.
//!
//! Every request is recorded. The server checks PKCE with its own code (sha2 + base64), not
//! Pincer's, so a bug in Pincer's PKCE cannot hide behind the same bug here.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The client id the fake expects by default (the Codex CLI's public one).
pub const FAKE_CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
/// The account id in issued access tokens unless changed.
pub const FAKE_ACCOUNT_ID: &str = "acct-fake-1";
/// The claim the account id is under.
pub const OPENAI_AUTH_CLAIM: &str = "https://api.openai.com/auth";

/// How refreshes fail when told to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshFailure {
    /// 400 `{"error":"invalid_grant","error_description":…}` (RFC 6749).
    InvalidGrant,
    /// 401 `{"error":{"code":"refresh_token_invalidated",…}}` (OpenAI).
    RefreshTokenInvalidated,
    /// 503 with a plain-text body: a transient outage.
    Unavailable,
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthRequest {
    pub method: String,
    pub path: String,
    /// Query parameters (GET) or form fields (POST).
    pub params: BTreeMap<String, String>,
}

impl OAuthRequest {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// `grant_type` of a token request.
    pub fn grant_type(&self) -> Option<&str> {
        self.param("grant_type")
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeOAuthError {
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// What an issued authorization code was issued for.
struct PendingCode {
    challenge: String,
    redirect_uri: String,
    client_id: String,
    account_id: String,
}

struct Inner {
    client_id: String,
    account_id: String,
    expires_in: u64,
    refresh_delay: Duration,
    refresh_failure: Option<RefreshFailure>,
    deny: bool,
    codes: HashMap<String, PendingCode>,
    /// Refresh token -> account id; removed when used (rotation).
    live_refresh: HashMap<String, String>,
    used_refresh: HashSet<String>,
    issued: u64,
    requests: Vec<OAuthRequest>,
    /// Access tokens are `<prefix><serial>` instead of JWTs when set.
    access_prefix: Option<String>,
}

type Shared = Arc<Mutex<Inner>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Inner> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running fake authorization server. Stops when dropped.
pub struct FakeOAuthServer {
    addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeOAuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeOAuthServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl FakeOAuthServer {
    /// Serves on `127.0.0.1` with a free port.
    pub async fn start() -> Result<Self, FakeOAuthError> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        let (listener, addr) = crate::server::bind(addr)
            .await
            .map_err(|source| FakeOAuthError::Bind { addr, source })?;
        let shared: Shared = Arc::new(Mutex::new(Inner {
            client_id: FAKE_CLIENT_ID.to_owned(),
            account_id: FAKE_ACCOUNT_ID.to_owned(),
            expires_in: 3600,
            refresh_delay: Duration::ZERO,
            refresh_failure: None,
            deny: false,
            codes: HashMap::new(),
            live_refresh: HashMap::new(),
            used_refresh: HashSet::new(),
            issued: 0,
            requests: Vec::new(),
            access_prefix: None,
        }));
        let app = Router::new()
            .route("/oauth/authorize", get(authorize))
            .route("/oauth/token", post(token))
            .route("/v1/oauth/token", post(json_token))
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

    /// `http://127.0.0.1:PORT`, the issuer base (`/oauth/authorize`, `/oauth/token`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn authorize_url(&self) -> String {
        format!("{}/oauth/authorize", self.url())
    }

    pub fn token_url(&self) -> String {
        format!("{}/oauth/token", self.url())
    }

    /// The client id requests must carry (default [`FAKE_CLIENT_ID`]).
    pub fn set_client_id(&self, client_id: &str) {
        lock(&self.shared).client_id = client_id.to_owned();
    }

    /// The account id put into tokens issued from now on.
    pub fn set_account_id(&self, account_id: &str) {
        lock(&self.shared).account_id = account_id.to_owned();
    }

    /// `expires_in` of issued tokens, seconds (default 3600).
    pub fn set_expires_in(&self, secs: u64) {
        lock(&self.shared).expires_in = secs;
    }

    /// Delays every refresh answer (to make concurrent refreshes overlap).
    pub fn set_refresh_delay(&self, delay: Duration) {
        lock(&self.shared).refresh_delay = delay;
    }

    /// Makes refreshes fail this way (`None`: succeed again).
    pub fn fail_refreshes(&self, failure: Option<RefreshFailure>) {
        lock(&self.shared).refresh_failure = failure;
    }

    /// Issues access tokens `<prefix><serial>` (Anthropic's `sk-ant-oat01-`) instead of JWTs.
    pub fn set_access_token_prefix(&self, prefix: &str) {
        lock(&self.shared).access_prefix = Some(prefix.to_owned());
    }

    /// Makes the authorize endpoint redirect with `error=access_denied`.
    pub fn deny_authorization(&self, deny: bool) {
        lock(&self.shared).deny = deny;
    }

    /// Registers a refresh token as valid for the current account (for tests that store
    /// an OAuth profile without logging in).
    pub fn seed_refresh_token(&self, refresh_token: &str) {
        let mut inner = lock(&self.shared);
        let account = inner.account_id.clone();
        inner.live_refresh.insert(refresh_token.to_owned(), account);
    }

    /// The requests received so far, oldest first.
    pub fn requests(&self) -> Vec<OAuthRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Token requests with `grant_type` = `grant`.
    pub fn token_requests(&self, grant: &str) -> Vec<OAuthRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/oauth/token") && r.grant_type() == Some(grant))
            .collect()
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeOAuthServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// An unsigned JWT (`alg: none`) with `claims` as its payload.
pub fn fake_jwt(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signature = URL_SAFE_NO_PAD.encode(b"fake-signature");
    format!("{header}.{payload}.{signature}")
}

/// An access token like the real ones: the account id claim, `exp`, and a `jti` so tokens
/// differ.
pub fn fake_access_token(account_id: &str, serial: u64, expires_in: u64) -> String {
    let now = pincer_base::time::now_secs().unsigned_abs();
    fake_jwt(&json!({
        "iss": "https://auth.fake.invalid",
        "iat": now,
        "exp": now + expires_in,
        "jti": format!("at-{serial}"),
        OPENAI_AUTH_CLAIM: {"chatgpt_account_id": account_id, "chatgpt_plan_type": "plus"},
    }))
}

/// `BASE64URL(SHA256(verifier))`, the S256 challenge.
fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn oauth_error(status: StatusCode, code: &str, description: &str) -> Response {
    let body = json!({"error": code, "error_description": description});
    (status, axum::Json(body)).into_response()
}

fn openai_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}});
    (status, axum::Json(body)).into_response()
}

fn redirect_to(base: &str, params: &[(&str, &str)]) -> Response {
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let separator = if base.contains('?') { '&' } else { '?' };
    let location = format!("{base}{separator}{query}");
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn authorize(
    State(shared): State<Shared>,
    Query(params): Query<BTreeMap<String, String>>,
) -> Response {
    let mut inner = lock(&shared);
    inner.requests.push(OAuthRequest {
        method: "GET".into(),
        path: "/oauth/authorize".into(),
        params: params.clone(),
    });
    let get = |name: &str| params.get(name).map(String::as_str).unwrap_or("");
    let problem = if get("response_type") != "code" {
        Some("response_type must be code")
    } else if get("client_id") != inner.client_id {
        Some("unknown client_id")
    } else if get("redirect_uri").is_empty() {
        Some("redirect_uri is missing")
    } else if get("code_challenge").is_empty() || get("code_challenge_method") != "S256" {
        Some("an S256 code_challenge is required")
    } else if get("state").is_empty() {
        Some("state is missing")
    } else {
        None
    };
    if let Some(problem) = problem {
        return (StatusCode::BAD_REQUEST, problem).into_response();
    }
    if inner.deny {
        return redirect_to(
            get("redirect_uri"),
            &[
                ("error", "access_denied"),
                ("error_description", "The user denied access"),
                ("state", get("state")),
            ],
        );
    }
    inner.issued += 1;
    let code = format!("code-fake-{}", inner.issued);
    let pending = PendingCode {
        challenge: get("code_challenge").to_owned(),
        redirect_uri: get("redirect_uri").to_owned(),
        client_id: get("client_id").to_owned(),
        account_id: inner.account_id.clone(),
    };
    inner.codes.insert(code.clone(), pending);
    redirect_to(
        get("redirect_uri"),
        &[("code", &code), ("state", get("state"))],
    )
}

async fn token(State(shared): State<Shared>, body: Bytes) -> Response {
    let form: BTreeMap<String, String> = form_urlencoded::parse(&body).into_owned().collect();
    token_answer(shared, "/oauth/token", form).await
}

/// The token endpoint taking a JSON object of strings (Anthropic's); anything else is a 400.
async fn json_token(State(shared): State<Shared>, body: Bytes) -> Response {
    let Ok(form) = serde_json::from_slice::<BTreeMap<String, String>>(&body) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be a JSON object of strings",
        );
    };
    token_answer(shared, "/v1/oauth/token", form).await
}

async fn token_answer(shared: Shared, path: &str, form: BTreeMap<String, String>) -> Response {
    let delay = {
        let mut inner = lock(&shared);
        inner.requests.push(OAuthRequest {
            method: "POST".into(),
            path: path.into(),
            params: form.clone(),
        });
        inner.refresh_delay
    };
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    match get("grant_type") {
        "authorization_code" => exchange_code(&shared, &form),
        "refresh_token" => {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            refresh(&shared, &form)
        }
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
    }
}

fn exchange_code(shared: &Shared, form: &BTreeMap<String, String>) -> Response {
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    let mut inner = lock(shared);
    // A code works once, whether the exchange succeeds or not (as real servers do).
    let Some(pending) = inner.codes.remove(get("code")) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "unknown or used code",
        );
    };
    let problem = if get("client_id") != pending.client_id {
        Some("client_id does not match the authorization request")
    } else if get("redirect_uri") != pending.redirect_uri {
        Some("redirect_uri does not match the authorization request")
    } else if s256(get("code_verifier")) != pending.challenge {
        Some("code_verifier does not match code_challenge")
    } else {
        None
    };
    if let Some(problem) = problem {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", problem);
    }
    issue_tokens(&mut inner, &pending.account_id)
}

fn refresh(shared: &Shared, form: &BTreeMap<String, String>) -> Response {
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    let mut inner = lock(shared);
    match inner.refresh_failure {
        Some(RefreshFailure::InvalidGrant) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "The refresh token is invalid or expired",
            );
        }
        Some(RefreshFailure::RefreshTokenInvalidated) => {
            return openai_error(
                StatusCode::UNAUTHORIZED,
                "refresh_token_invalidated",
                "Your refresh token has been invalidated. Please try signing in again.",
            );
        }
        Some(RefreshFailure::Unavailable) => {
            return (StatusCode::SERVICE_UNAVAILABLE, "upstream unavailable").into_response();
        }
        None => {}
    }
    if get("client_id") != inner.client_id {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "unknown client_id",
        );
    }
    let presented = get("refresh_token");
    if let Some(account) = inner.live_refresh.remove(presented) {
        inner.used_refresh.insert(presented.to_owned());
        return issue_tokens(&mut inner, &account);
    }
    if inner.used_refresh.contains(presented) {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "refresh_token_reused",
            "Your refresh token has already been used to generate a new access token.",
        );
    }
    oauth_error(
        StatusCode::BAD_REQUEST,
        "invalid_grant",
        "unknown refresh token",
    )
}

fn issue_tokens(inner: &mut Inner, account_id: &str) -> Response {
    inner.issued += 1;
    let serial = inner.issued;
    let refresh_token = format!("rt-fake-{serial}");
    inner
        .live_refresh
        .insert(refresh_token.clone(), account_id.to_owned());
    let body = json!({
        "access_token": match &inner.access_prefix {
            Some(prefix) => format!("{prefix}{serial}"),
            None => fake_access_token(account_id, serial, inner.expires_in),
        },
        "refresh_token": refresh_token,
        "id_token": fake_jwt(&json!({"email": "user@example.invalid", OPENAI_AUTH_CLAIM: {"chatgpt_account_id": account_id}})),
        "token_type": "Bearer",
        "expires_in": inner.expires_in,
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}
