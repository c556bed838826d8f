//! The HTTP API on the gateway's port, next to the WebSocket protocol: OpenAI-compatible
//! `GET /v1/models` and `POST /v1/chat/completions` (in `http_api/openai.rs`), `POST /v1/responses`
//! (`http_api/responses.rs`) and OpenClaw's
//! `POST /hooks/agent` and `POST /hooks/wake`. Every endpoint here needs
//! `Authorization: Bearer <token>` when the gateway has a token, checked like `connect`
//! (constant time, failed-attempt limiter). A token in the query string is refused outright,
//! never read: URLs end up in logs. Every POST must say `Content-Type: application/json`
//! (else 415): a web page can send other types cross-site without asking first (a CORS
//! "simple request"), but not that one.

mod openai;
mod responses;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, FromRequestParts, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Gateway;
use super::auth::{Peer, Refusal};
use super::methods::{WakeMode, wake_main};
use super::origin::single;
use super::runs::Started;
use super::runtime::{TurnOrigin, TurnRequest};
use super::session_keys::{known_agent_of_key, valid_session_key};

/// OpenClaw's body limit for hooks.
const HOOK_BODY_LIMIT: usize = 256 * 1024;

/// The routes of the HTTP API.
pub(super) fn routes() -> Router<Arc<Gateway>> {
    Router::new()
        .route("/v1/models", get(openai::models))
        .route("/v1/models/{*id}", get(openai::model))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1/responses", post(responses::create))
        .route(
            "/hooks/agent",
            post(hook_agent).layer(DefaultBodyLimit::max(HOOK_BODY_LIMIT)),
        )
        .route(
            "/hooks/wake",
            post(hook_wake).layer(DefaultBodyLimit::max(HOOK_BODY_LIMIT)),
        )
        .route_layer(middleware::from_fn(require_json))
}

/// Refuses a POST whose body is not declared JSON (415), in the endpoint's error shape.
async fn require_json(request: Request, next: Next) -> Response {
    if request.method() != Method::POST || is_json(request.headers()) {
        return next.run(request).await;
    }
    let message = "send the body as JSON, with Content-Type: application/json";
    if request.uri().path().starts_with("/v1/") {
        openai::error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            message,
            "invalid_request_error",
            "unsupported_media_type",
        )
    } else {
        hook_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, message)
    }
}

/// One `Content-Type` of `application/json`, parameters (`; charset=utf-8`) allowed.
fn is_json(headers: &HeaderMap) -> bool {
    single(headers, &header::CONTENT_TYPE).is_ok_and(|value| {
        value.is_some_and(|text| {
            text.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
    })
}

/// Guards the routes the binary adds ([`super::ServeOptions::extra_routes`]): the bearer
/// token as for the endpoints here, a refusal in the hooks' shape.
pub(super) async fn require_token(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    match authorize(&gw, request.headers(), request.uri(), peer) {
        Ok(()) => next.run(request).await,
        Err(denied) => denied.hook(),
    }
}

/// Why a request was refused before it reached its endpoint.
#[derive(Debug, Clone, PartialEq)]
enum Denied {
    /// A `token` query parameter: refused even with a good header.
    QueryToken,
    /// Bad or missing credentials.
    Auth(Refusal),
}

/// Checks the caller's credentials: the bearer header only, never the query string.
fn authorize(gw: &Gateway, headers: &HeaderMap, uri: &Uri, peer: SocketAddr) -> Result<(), Denied> {
    let query_token = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.split('=').next() == Some("token"))
    });
    if query_token {
        return Err(Denied::QueryToken);
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    gw.auth
        .check_bearer(authorization, Peer::new(peer, headers))
        .map_err(Denied::Auth)
}

impl Denied {
    /// The status, a message for the caller and extra headers.
    fn parts(
        &self,
    ) -> (
        StatusCode,
        &'static str,
        Option<(header::HeaderName, HeaderValue)>,
    ) {
        match self {
            Self::QueryToken => (
                StatusCode::BAD_REQUEST,
                "tokens in the query string are not accepted: send Authorization: Bearer <token>",
                None,
            ),
            Self::Auth(Refusal::Missing) => (
                StatusCode::UNAUTHORIZED,
                "this gateway needs a token: send Authorization: Bearer <token>",
                None,
            ),
            Self::Auth(Refusal::Mismatch) => (
                StatusCode::UNAUTHORIZED,
                "the token does not match this gateway's",
                None,
            ),
            Self::Auth(Refusal::RateLimited { retry_after }) => (
                StatusCode::TOO_MANY_REQUESTS,
                "too many failed auth attempts; try again later",
                Some((
                    header::RETRY_AFTER,
                    HeaderValue::from(retry_after.as_secs().max(1)),
                )),
            ),
        }
    }

    /// The refusal in OpenAI's error shape.
    fn openai(&self) -> Response {
        let (status, message, extra) = self.parts();
        let code = match (self, status) {
            (Self::QueryToken, _) => "query_token",
            (_, StatusCode::TOO_MANY_REQUESTS) => "rate_limited",
            _ => "invalid_api_key",
        };
        let mut response = openai::error(status, message, "invalid_request_error", code);
        if let Some((name, value)) = extra {
            response.headers_mut().insert(name, value);
        }
        response
    }

    /// The refusal in the hooks' shape (`{ok:false, error}`).
    fn hook(&self) -> Response {
        let (status, message, extra) = self.parts();
        let mut response = hook_error(status, message);
        if let Some((name, value)) = extra {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

fn hook_error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "ok": false, "error": message }))).into_response()
}

/// A fresh id (unique, not secret) for runs and generated session keys.
fn fresh_id() -> String {
    pincer_store::ids::session_id()
}

/// `POST /hooks/agent`'s body (OpenClaw's fields; delivery fields come with channels).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HookAgentBody {
    message: String,
    agent_id: Option<String>,
    session_key: Option<String>,
    name: Option<String>,
}

/// A hook call: its headers and its JSON body, read once the caller passed [`authorize`]
/// (bearer header only). Read in the order separate extractors would run (address, URI,
/// headers, body, then the check), so each refusal stays the one it was; the rejection is
/// the response to send, in the hooks' error shape.
struct HookCall<T> {
    headers: HeaderMap,
    body: T,
}

impl<T: serde::de::DeserializeOwned + Send> FromRequest<Arc<Gateway>> for HookCall<T> {
    type Rejection = Response;

    async fn from_request(request: Request, gw: &Arc<Gateway>) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let ConnectInfo(peer) = ConnectInfo::<SocketAddr>::from_request_parts(&mut parts, gw)
            .await
            .map_err(IntoResponse::into_response)?;
        let (uri, headers) = (parts.uri.clone(), parts.headers.clone());
        let bytes = Bytes::from_request(Request::from_parts(parts, body), gw)
            .await
            .map_err(IntoResponse::into_response)?;
        authorize(gw, &headers, &uri, peer).map_err(|denied| denied.hook())?;
        let body = serde_json::from_slice(&bytes)
            .map_err(|e| hook_error(StatusCode::BAD_REQUEST, &format!("invalid body: {e}")))?;
        Ok(Self { headers, body })
    }
}

/// `POST /hooks/agent`: starts a run and answers `200 {ok:true, runId}` once it is admitted
/// (OpenClaw's status), without waiting for the reply: the result lands in the session.
/// Without `sessionKey` each call gets a fresh `agent:<id>:hook:<uuid>` session (OpenClaw's
/// default `isolated` mode). An `Idempotency-Key` header makes retries return the same run.
async fn hook_agent(
    State(gw): State<Arc<Gateway>>,
    HookCall { headers, body }: HookCall<HookAgentBody>,
) -> Response {
    let message = body.message.trim();
    if message.is_empty() {
        return hook_error(StatusCode::BAD_REQUEST, "message must not be empty");
    }
    let agent_id = match body.agent_id.as_deref().map(str::trim) {
        Some(id) if gw.runtime.is_known_agent(id) => id.to_owned(),
        Some(id) => return hook_error(StatusCode::BAD_REQUEST, &format!("unknown agentId: {id}")),
        None => gw.runtime.default_agent_id(),
    };
    let (agent_id, session_key) = match body.session_key.as_deref().map(str::trim) {
        Some(key) if !valid_session_key(key) => {
            return hook_error(StatusCode::BAD_REQUEST, "invalid sessionKey");
        }
        Some(key) => (
            known_agent_of_key(&gw, key).unwrap_or(agent_id),
            key.to_owned(),
        ),
        None => {
            let key = format!("agent:{agent_id}:hook:{}", fresh_id());
            (agent_id, key)
        }
    };
    let run_id = match headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
    {
        Some(key) if valid_session_key(key) => format!("hook:{key}"),
        Some(_) => return hook_error(StatusCode::BAD_REQUEST, "invalid Idempotency-Key"),
        None => fresh_id(),
    };
    let name = body.name.unwrap_or_else(|| "Hook".to_owned());
    let request = TurnRequest {
        agent_id: agent_id.clone(),
        session_key,
        message: message.to_owned(),
        origin: TurnOrigin::User,
        media: Vec::new(),
        thinking: None,
    };
    let started = gw.runs.start(Arc::clone(&gw.runtime), &run_id, request);
    let replay = !matches!(started, Started::New { .. });
    tracing::info!(run_id = %run_id, agent_id = %agent_id, hook = %name, replay, "hook agent run admitted");
    (
        StatusCode::OK,
        axum::Json(json!({ "ok": true, "runId": run_id })),
    )
        .into_response()
}

/// `POST /hooks/wake {text, mode?}` (OpenClaw's `normalizeWakePayload` and
/// `dispatchWakeHook`): queues `text` on the default agent's main session as an untrusted
/// system event (it comes from outside) and, unless `mode` is `next-heartbeat`, asks for a
/// heartbeat (reason `hook:wake`). Answers `200 {ok:true, mode}`; `400 {ok:false, error}` for
/// a body that is not JSON or has no text (`text required`, OpenClaw's words).
async fn hook_wake(
    State(gw): State<Arc<Gateway>>,
    HookCall { body, .. }: HookCall<Value>,
) -> Response {
    let Some(text) = body
        .get("text")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        return hook_error(StatusCode::BAD_REQUEST, "text required");
    };
    // OpenClaw's leniency: anything but `next-heartbeat` means now.
    let mode = match body.get("mode").and_then(Value::as_str) {
        Some("next-heartbeat") => WakeMode::NextHeartbeat,
        _ => WakeMode::Now,
    };
    match wake_main(&gw, text, mode, "hook:wake", false) {
        Ok((session_key, injected)) => {
            tracing::info!(session_key = %session_key, mode = mode.as_str(), queued = injected.queued, "hook wake");
            (
                StatusCode::OK,
                axum::Json(json!({ "ok": true, "mode": mode.as_str() })),
            )
                .into_response()
        }
        Err(e) => hook_error(StatusCode::BAD_REQUEST, &e.message),
    }
}

/// Seconds since the Unix epoch (OpenAI's `created`).
fn unix_secs() -> i64 {
    pincer_ai::now_ms() / 1000
}

/// Reads `v[key]` as a count, 0 when absent.
fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        let with = |values: &[&[u8]]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append(
                    header::CONTENT_TYPE,
                    HeaderValue::from_bytes(value).unwrap(),
                );
            }
            is_json(&headers)
        };
        assert!(with(&[b"application/json"]));
        assert!(with(&[b"Application/JSON; charset=utf-8"]));
        assert!(with(&[b" application/json ;charset=utf-8"]));
        assert!(!with(&[]));
        assert!(!with(&[b"text/plain"]));
        assert!(!with(&[b"text/plain; application/json"]));
        assert!(!with(&[b"application/json, text/plain"]));
        assert!(!with(&[b"application/jsonx"]));
        assert!(!with(&[b"application/x-www-form-urlencoded"]));
        assert!(!with(&[b"multipart/form-data; boundary=application/json"]));
        assert!(!with(&[b"application/json", b"application/json"]));
        assert!(!with(&[b"application/json\xff"]));
        assert!(!with(&[b""]));
    }

    #[test]
    fn usage_counts_default_to_zero() {
        let usage = json!({"input": 3, "output": "x"});
        assert_eq!(count(&usage, "input"), 3);
        assert_eq!(count(&usage, "output"), 0);
        assert_eq!(count(&Value::Null, "input"), 0);
    }
}
