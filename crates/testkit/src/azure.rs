//! Azure OpenAI on the mock server: the Responses protocol under an Azure resource's
//! `/openai/v1/responses` (and the classic `/openai/deployments/{deployment}/responses`),
//! answered only with an `api-version` query parameter and either an `api-key` header or
//! an `Authorization: Bearer` token, as Azure refuses requests without them; and a
//! Microsoft Entra ID token endpoint (`/{tenant}/oauth2/v2.0/token`, client credentials)
//! that issues `entra-token-{n}` tokens living [`ENTRA_TOKEN_SECONDS`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::handlers::{MAX_BODY_BYTES, has_bearer_token, json_response, recorded};
use crate::server::AppState;

/// How long issued Entra tokens live (`expires_in`).
pub const ENTRA_TOKEN_SECONDS: u64 = 3599;

static ISSUED: AtomicU64 = AtomicU64::new(0);

/// Azure's answer to a request it cannot authenticate or route (its error shape).
fn azure_error(status: StatusCode, code: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": code, "message": message}}),
    )
}

/// Check what Azure checks before the body: the version and the credentials.
pub(crate) fn refusal(query: Option<&str>, headers: &HeaderMap) -> Option<Response> {
    let version = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("api-version="))
        .filter(|v| !v.is_empty());
    if version.is_none() {
        return Some(azure_error(
            StatusCode::NOT_FOUND,
            "404",
            "Resource not found: the api-version query parameter is required",
        ));
    }
    let api_key = headers
        .get("api-key")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().is_empty());
    if !api_key && !has_bearer_token(headers) {
        return Some(azure_error(
            StatusCode::UNAUTHORIZED,
            "401",
            "Access denied due to invalid subscription key or wrong API endpoint.",
        ));
    }
    None
}

/// `POST /openai/v1/responses` and `/openai/deployments/{deployment}/responses`.
pub(crate) async fn responses(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if let Some(refused) = refusal(request.uri().query(), request.headers()) {
        let (parts, _) = request.into_parts();
        state.record(recorded(&parts, Value::Null, Api::OpenAiResponses));
        return refused;
    }
    crate::handlers::answer(state, Api::OpenAiResponses, request, None).await
}

/// `POST /{tenant}/oauth2/v2.0/token`: a client-credentials grant gets a fresh token.
pub(crate) async fn entra_token(
    State(state): State<Arc<AppState>>,
    Path(tenant): Path<String>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &json!({"error": "too large"}),
        );
    };
    let form: serde_json::Map<String, Value> = String::from_utf8_lossy(&bytes)
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), Value::String(percent_decode(v))))
        .collect();
    state.record(recorded(
        &parts,
        Value::Object(form.clone()),
        Api::OpenAiResponses,
    ));
    let field = |name: &str| form.get(name).and_then(Value::as_str).unwrap_or_default();
    if field("grant_type") != "client_credentials"
        || field("client_id").is_empty()
        || field("client_secret").is_empty()
    {
        return json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_request", "error_description": "AADSTS900144: a client-credentials request needs client_id and client_secret."}),
        );
    }
    if field("client_secret") == "wrong" {
        return json_response(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_client", "error_description": format!("AADSTS7000215: Invalid client secret provided for tenant {tenant}.")}),
        );
    }
    let n = ISSUED.fetch_add(1, Ordering::Relaxed) + 1;
    json_response(
        StatusCode::OK,
        &json!({
            "token_type": "Bearer",
            "expires_in": ENTRA_TOKEN_SECONDS,
            "ext_expires_in": ENTRA_TOKEN_SECONDS,
            "access_token": format!("entra-token-{n}"),
        }),
    )
}

/// Undo form encoding (`+` is a space, `%XX` a byte).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| char::from(b).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        // Two hex digits make one byte (high * 16 + low < 256).
                        out.push(u8::try_from(high * 16 + low).unwrap_or(b'?'));
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
