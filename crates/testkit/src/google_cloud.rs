//! Google Cloud on the mock server: Vertex AI, Cloud Code Assist and a Google token endpoint.
//!
//! - `POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent`
//!   (Application Default Credentials: `Authorization: Bearer ya29.mock-…`) and
//!   `POST /v1/publishers/google/models/{model}:streamGenerateContent` (express mode:
//!   `x-goog-api-key`) answer as Gemini does; without credentials, 401 `UNAUTHENTICATED`.
//! - `POST /v1internal:streamGenerateContent` (Cloud Code Assist) takes
//!   `{model, project, request: {…}}` and streams each Gemini chunk as `{"response": {…}}`;
//!   `POST /v1internal:loadCodeAssist` reports a new user (no tier yet) and
//!   `POST /v1internal:onboardUser` provisions [`MOCK_CODE_ASSIST_PROJECT`] at once.
//! - `POST /token` issues `ya29.mock-{n}` for a service account's RS256 JWT assertion (checked
//!   against [`TEST_SERVICE_ACCOUNT_KEY`]'s public half, with its claims) or an
//!   `authorized_user` refresh grant.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use crate::api::Api;
use crate::handlers::{MAX_BODY_BYTES, json_response, recorded};
use crate::server::AppState;
use crate::wire::Frame;

/// A throwaway RSA key (PKCS#8 PEM) for service-account files in tests; the mock's token
/// endpoint accepts only assertions it signed.
pub const TEST_SERVICE_ACCOUNT_KEY: &str = include_str!("google-test-service-account.pem");
/// The project `onboardUser` provisions.
pub const MOCK_CODE_ASSIST_PROJECT: &str = "mock-code-assist-project";
/// How long issued tokens live (`expires_in`).
pub const GOOGLE_TOKEN_SECONDS: u64 = 3599;

static ISSUED: AtomicU64 = AtomicU64::new(0);

/// A `service_account` credential file whose `token_uri` is `token_uri`.
pub fn service_account_json(token_uri: &str, client_email: &str) -> String {
    json!({
        "type": "service_account",
        "project_id": "mock-project",
        "private_key_id": "mock-key-1",
        "private_key": TEST_SERVICE_ACCOUNT_KEY,
        "client_email": client_email,
        "client_id": "1234567890",
        "token_uri": token_uri,
    })
    .to_string()
}

/// An `authorized_user` credential file (gcloud's) whose `token_uri` is `token_uri`.
pub fn authorized_user_json(token_uri: &str) -> String {
    json!({
        "type": "authorized_user",
        "client_id": "mock-client.apps.googleusercontent.com",
        "client_secret": "mock-secret",
        "refresh_token": "mock-refresh-token",
        "token_uri": token_uri,
    })
    .to_string()
}

fn google_error(status: StatusCode, google_status: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": status.as_u16(), "message": message, "status": google_status}}),
    )
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .filter(|t| !t.trim().is_empty())
}

fn unauthenticated() -> Response {
    google_error(
        StatusCode::UNAUTHORIZED,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token.",
    )
}

/// The `{model}:{method}` tail of a Vertex path.
fn vertex_target(path: &str) -> Option<String> {
    path.split_once("/models/").map(|(_, t)| t.to_owned())
}

/// Vertex with ADC: a token this mock issued is required.
pub(crate) async fn vertex(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let ok = bearer(request.headers()).is_some_and(|t| t.starts_with("ya29.mock-"));
    let target = vertex_target(request.uri().path());
    if !ok {
        let (parts, _) = request.into_parts();
        state.record(recorded(&parts, Value::Null, Api::GoogleGenerativeAi));
        return unauthenticated();
    }
    crate::handlers::answer(state, Api::GoogleGenerativeAi, request, target).await
}

/// Vertex express mode: an API key is required.
pub(crate) async fn vertex_express(
    State(state): State<Arc<AppState>>,
    request: Request,
) -> Response {
    let ok = request
        .headers()
        .get("x-goog-api-key")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().is_empty());
    let target = vertex_target(request.uri().path());
    if !ok {
        let (parts, _) = request.into_parts();
        state.record(recorded(&parts, Value::Null, Api::GoogleGenerativeAi));
        return unauthenticated();
    }
    crate::handlers::answer(state, Api::GoogleGenerativeAi, request, target).await
}

/// Cloud Code Assist's stream: a bearer token is required.
pub(crate) async fn code_assist(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if bearer(request.headers()).is_none() {
        let (parts, _) = request.into_parts();
        state.record(recorded(&parts, Value::Null, Api::GoogleGenerativeAi));
        return unauthenticated();
    }
    crate::handlers::answer(state, Api::GoogleGenerativeAi, request, None).await
}

/// True for Cloud Code Assist's paths (the body and the frames are wrapped).
pub(crate) fn is_code_assist(path: &str) -> bool {
    path.starts_with("/v1internal:")
}

/// The Gemini request inside a Code Assist body, and its `{model}:streamGenerateContent`.
pub(crate) fn unwrap_request(body: Value) -> Result<(Value, String), String> {
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .ok_or("model is missing")?
        .to_owned();
    if body
        .get("project")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err("project is missing".into());
    }
    let inner = body.get("request").cloned().ok_or("request is missing")?;
    Ok((inner, format!("{model}:streamGenerateContent")))
}

/// Each `data: {chunk}` frame as `data: {"response": {chunk}}`.
pub(crate) fn wrap_frames(frames: Vec<Frame>) -> Vec<Frame> {
    frames
        .into_iter()
        .map(|frame| {
            let text = String::from_utf8_lossy(&frame.bytes);
            let Some(rest) = text.strip_prefix("data: ") else {
                return frame;
            };
            let end = rest.len() - rest.trim_end().len();
            let (data, tail) = rest.split_at(rest.len() - end);
            match serde_json::from_str::<Value>(data) {
                Ok(chunk) => Frame {
                    bytes: format!(
                        "data: {}{tail}",
                        json!({"response": chunk, "traceId": "mock"})
                    )
                    .into_bytes()
                    .into(),
                    is_final: frame.is_final,
                },
                Err(_) => frame,
            }
        })
        .collect()
}

async fn read(state: &AppState, request: Request) -> Result<(HeaderMap, Value), Response> {
    let (parts, body) = request.into_parts();
    let bytes: Bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            google_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "INVALID_ARGUMENT",
                "too large",
            )
        })?;
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    state.record(recorded(&parts, value.clone(), Api::GoogleGenerativeAi));
    Ok((parts.headers, value))
}

/// `loadCodeAssist`: the user has no tier yet; the free tier is the default.
pub(crate) async fn load_code_assist(
    State(state): State<Arc<AppState>>,
    request: Request,
) -> Response {
    let (headers, _) = match read(&state, request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    if bearer(&headers).is_none() {
        return unauthenticated();
    }
    json_response(
        StatusCode::OK,
        &json!({"allowedTiers": [{"id": "legacy-tier"}, {"id": "free-tier", "isDefault": true}]}),
    )
}

/// `onboardUser`: done at once, with the provisioned project.
pub(crate) async fn onboard_user(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (headers, body) = match read(&state, request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    if bearer(&headers).is_none() {
        return unauthenticated();
    }
    if body.get("tierId").and_then(Value::as_str) != Some("free-tier") {
        return google_error(
            StatusCode::BAD_REQUEST,
            "INVALID_ARGUMENT",
            "unknown tierId",
        );
    }
    json_response(
        StatusCode::OK,
        &json!({"name": "operations/mock", "done": true,
            "response": {"cloudaicompanionProject": {"id": MOCK_CODE_ASSIST_PROJECT}}}),
    )
}

fn token_error(code: &str, description: &str) -> Response {
    json_response(
        StatusCode::BAD_REQUEST,
        &json!({"error": code, "error_description": description}),
    )
}

/// `POST /token`: a JWT-bearer assertion or a refresh grant.
pub(crate) async fn token(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return token_error("invalid_request", "body too large");
    };
    let form: std::collections::BTreeMap<String, String> =
        form_urlencoded::parse(&bytes).into_owned().collect();
    state.record(recorded(&parts, json!(form), Api::GoogleGenerativeAi));
    let get = |name: &str| form.get(name).map(String::as_str).unwrap_or("");
    let problem = match get("grant_type") {
        "urn:ietf:params:oauth:grant-type:jwt-bearer" => check_assertion(get("assertion")).err(),
        "refresh_token" => ["client_id", "client_secret", "refresh_token"]
            .into_iter()
            .find(|f| get(f).is_empty())
            .map(|f| format!("{f} is missing")),
        other => Some(format!("unsupported grant_type {other:?}")),
    };
    if let Some(problem) = problem {
        return token_error("invalid_grant", &problem);
    }
    let n = ISSUED.fetch_add(1, Ordering::Relaxed) + 1;
    json_response(
        StatusCode::OK,
        &json!({"access_token": format!("ya29.mock-{n}"), "expires_in": GOOGLE_TOKEN_SECONDS, "token_type": "Bearer"}),
    )
}

/// Checks an assertion's signature (the test key) and its claims.
fn check_assertion(assertion: &str) -> Result<(), String> {
    let mut pieces = assertion.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (pieces.next(), pieces.next(), pieces.next(), pieces.next())
    else {
        return Err("the assertion is not a JWT".into());
    };
    let decode = |s: &str| {
        URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| "not base64url".to_owned())
    };
    let header: Value = serde_json::from_slice(&decode(header)?).map_err(|e| e.to_string())?;
    let claims: Value = serde_json::from_slice(&decode(claims)?).map_err(|e| e.to_string())?;
    if header["alg"] != "RS256" || header["typ"] != "JWT" {
        return Err(format!("unexpected JWT header {header}"));
    }
    let iat = claims["iat"].as_u64().unwrap_or(0);
    if claims["scope"] != "https://www.googleapis.com/auth/cloud-platform"
        || claims["iss"].as_str().is_none_or(str::is_empty)
        || !claims["aud"]
            .as_str()
            .is_some_and(|a| a.ends_with("/token"))
        || claims["exp"].as_u64() != Some(iat + 3600)
    {
        return Err(format!("unexpected claims {claims}"));
    }
    let der = pem_body(TEST_SERVICE_ACCOUNT_KEY)?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| e.to_string())?;
    let public = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        ring::signature::KeyPair::public_key(&key).as_ref().to_vec(),
    );
    let signed = &assertion[..assertion.rfind('.').unwrap_or(0)];
    public
        .verify(signed.as_bytes(), &decode(signature)?)
        .map_err(|_| "bad signature".to_owned())
}

fn pem_body(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    STANDARD.decode(body).map_err(|e| e.to_string())
}
