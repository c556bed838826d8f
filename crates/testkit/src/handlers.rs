//! HTTP routes and request handling: read and record the request, check it, let the script
//! decide, then answer with a fault, a stream or a JSON document (embedding endpoints:
//! always a document of vectors, see `embed`).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use serde_json::{Value, json};

use crate::api::Api;
use crate::body::{self, Layout};
use crate::embed;
use crate::request::{self, BadRequest, Delivery};
use crate::scenario::Fault;
use crate::server::{AppState, RecordedRequest};
use crate::wire;

/// Largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

const DEFAULT_HTML: &str = "<!DOCTYPE html>\n<html><head><title>Mock</title></head><body><h1>mock: this is not an event stream</h1></body></html>\n";

/// All routes of the mock server.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/chat/completions", speaks(Api::OpenAiCompletions))
        .route("/chat/completions", speaks(Api::OpenAiCompletions))
        .route("/v1/responses", speaks(Api::OpenAiResponses))
        .route("/responses", speaks(Api::OpenAiResponses))
        // ChatGPT's Codex backend speaks the Responses protocol under its own path.
        .route("/codex/responses", speaks(Api::OpenAiResponses))
        .route("/v1/messages", speaks(Api::AnthropicMessages))
        .route("/v1beta/models/{*target}", post(google))
        .route("/api/stream", speaks(Api::Proxy))
        // Azure OpenAI: the v1 path and the classic deployment path, and Entra ID tokens.
        .route("/openai/v1/responses", post(crate::azure::responses))
        .route(
            "/openai/deployments/{deployment}/responses",
            post(crate::azure::responses),
        )
        .route(
            "/{tenant}/oauth2/v2.0/token",
            post(crate::azure::entra_token),
        )
        .route(
            "/model/{model}/converse-stream",
            post(crate::bedrock::converse_stream),
        )
        // AWS credential sources for Bedrock's chain: IMDSv2, a container endpoint, STS.
        .route("/latest/api/token", put(crate::aws_credentials::imds_token))
        .route(
            "/latest/meta-data/iam/security-credentials/",
            get(crate::aws_credentials::imds_roles),
        )
        .route(
            "/latest/meta-data/iam/security-credentials/{role}",
            get(crate::aws_credentials::imds_role),
        )
        .route(
            "/aws/container-credentials",
            get(crate::aws_credentials::container),
        )
        .route("/sts/", post(crate::aws_credentials::sts))
        // Google Cloud: Vertex AI (ADC and express mode), Cloud Code Assist, token endpoint.
        .route(
            "/v1/projects/{project}/locations/{location}/publishers/google/models/{*target}",
            post(crate::google_cloud::vertex),
        )
        .route(
            "/v1/publishers/google/models/{*target}",
            post(crate::google_cloud::vertex_express),
        )
        .route(
            "/v1internal:streamGenerateContent",
            post(crate::google_cloud::code_assist),
        )
        .route(
            "/v1internal:loadCodeAssist",
            post(crate::google_cloud::load_code_assist),
        )
        .route(
            "/v1internal:onboardUser",
            post(crate::google_cloud::onboard_user),
        )
        .route("/token", post(crate::google_cloud::token))
        .route("/v1/embeddings", speaks(Api::OpenAiEmbeddings))
        .route("/embeddings", speaks(Api::OpenAiEmbeddings))
        .route("/api/embed", speaks(Api::OllamaEmbeddings))
        .route("/v1/audio/transcriptions", post(crate::transcribe::answer))
        .route("/audio/transcriptions", post(crate::transcribe::answer))
        .route(
            "/__mock/requests",
            get(list_requests).delete(clear_requests),
        )
        .route("/healthz", get(|| async { "ok" }))
        .fallback(not_found)
        .with_state(state)
}

/// A POST route that speaks `api` (Google's is [`google`]: one path for two APIs).
fn speaks(api: Api) -> MethodRouter<Arc<AppState>> {
    post(
        move |State(state): State<Arc<AppState>>, request: Request| {
            answer(state, api, request, None)
        },
    )
}

async fn google(
    State(state): State<Arc<AppState>>,
    Path(target): Path<String>,
    request: Request,
) -> Response {
    // Gemini's chat and embedding methods share the `models/{model}:{method}` path.
    let api = if target.ends_with(":batchEmbedContents") {
        Api::GoogleEmbeddings
    } else {
        Api::GoogleGenerativeAi
    };
    answer(state, api, request, Some(target)).await
}

async fn list_requests(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(state.requests()).into_response()
}

async fn clear_requests(State(state): State<Arc<AppState>>) -> StatusCode {
    state.clear_requests();
    StatusCode::NO_CONTENT
}

async fn not_found(request: Request) -> Response {
    let message = format!(
        "mock: no route for {} {}",
        request.method(),
        request.uri().path()
    );
    json_response(StatusCode::NOT_FOUND, &json!({"error": message}))
}

/// The request of `parts` with `body`, as [`MockLlm::requests`](crate::MockLlm::requests)
/// lists it.
pub(crate) fn recorded(
    parts: &axum::http::request::Parts,
    body: Value,
    api: Api,
) -> RecordedRequest {
    RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body,
        api,
    }
}

pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

pub(crate) fn protocol_error(api: Api, status: StatusCode, message: &str) -> Response {
    json_response(status, &wire::error_body(api, status.as_u16(), message))
}

pub(crate) fn has_bearer_token(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .is_some_and(|token| !token.trim().is_empty())
}

pub(crate) async fn answer(
    state: Arc<AppState>,
    api: Api,
    request: Request,
    google_target: Option<String>,
) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return protocol_error(
            api,
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body unreadable or too large",
        );
    };
    let parsed_json = serde_json::from_slice::<Value>(&bytes);
    let recorded_body = match &parsed_json {
        Ok(value) => value.clone(),
        Err(_) if bytes.is_empty() => Value::Null,
        Err(_) => Value::String(String::from_utf8_lossy(&bytes).into_owned()),
    };
    state.record(recorded(&parts, recorded_body, api));
    if api == Api::Proxy && !has_bearer_token(&parts.headers) {
        return json_response(StatusCode::UNAUTHORIZED, &json!({"error": "missing token"}));
    }
    let body_json = match parsed_json {
        Ok(value) => value,
        Err(err) => {
            let message = format!("invalid JSON body: {err}");
            return protocol_error(api, StatusCode::BAD_REQUEST, &message);
        }
    };
    // Cloud Code Assist wraps a Gemini request; its frames are wrapped on the way out.
    let code_assist = crate::google_cloud::is_code_assist(parts.uri.path());
    let (body_json, google_target) = if code_assist {
        match crate::google_cloud::unwrap_request(body_json) {
            Ok((inner, target)) => (inner, Some(target)),
            Err(message) => return protocol_error(api, StatusCode::BAD_REQUEST, &message),
        }
    } else {
        (body_json, google_target)
    };
    // Embedding requests keep their texts for the answer; chat requests go to the script.
    let (parsed, embedding) = if api.is_embeddings() {
        match embed::read(api, &body_json, google_target.as_deref()) {
            Ok(req) => (req.parsed(api, bytes.len()), Some(req)),
            Err(BadRequest(message)) => {
                return protocol_error(api, StatusCode::BAD_REQUEST, &message);
            }
        }
    } else {
        match request::parse(
            api,
            &body_json,
            bytes.len(),
            google_target.as_deref(),
            parts.uri.query(),
        ) {
            Ok(parsed) => (parsed, None),
            Err(BadRequest(message)) => {
                return protocol_error(api, StatusCode::BAD_REQUEST, &message);
            }
        }
    };
    let decision = state.script.decide(&parsed);
    let fault = &decision.fault;
    if let Some(ms) = fault.slow_first_byte_ms {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = state.cancel.cancelled() => {
                return protocol_error(api, StatusCode::SERVICE_UNAVAILABLE, "mock server shutting down");
            }
        }
    }
    if let Some(status) = fault.status {
        return fault_response(api, status, fault);
    }
    if let Some(content_type) = &fault.content_type {
        return html_response(content_type, fault.body.as_ref());
    }
    if let Some(req) = embedding {
        return json_response(StatusCode::OK, &embed::answer(api, &req, fault));
    }
    let plan = &decision.plan;
    if parsed.delivery != Delivery::Sse {
        return json_response(StatusCode::OK, &wire::document(api, plan, parsed.delivery));
    }
    let mut frames = match &decision.cached {
        Some(frames) => frames.to_vec(),
        None => wire::frames(api, plan),
    };
    if code_assist {
        frames = crate::google_cloud::wrap_frames(frames);
    }
    let layout = Layout {
        api,
        fault,
        delay: plan.delay,
        byte_chunk: state.script.byte_chunk(),
    };
    let steps = body::steps(&frames, &layout);
    let mut response = Response::new(body::body(steps, state.cancel.clone()));
    let headers = response.headers_mut();
    let content_type = match api {
        Api::BedrockConverseStream => "application/vnd.amazon.eventstream",
        _ => "text/event-stream",
    };
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn fault_response(api: Api, status: u16, fault: &Fault) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match &fault.body {
        Some(Value::String(text)) => {
            let mut response = Response::new(Body::from(text.clone()));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            response
        }
        Some(body) => json_response(status, body),
        None => {
            let message = format!("mock fault: HTTP {}", status.as_u16());
            protocol_error(api, status, &message)
        }
    };
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in [
        ("retry-after", &fault.retry_after),
        ("retry-after-ms", &fault.retry_after_ms),
    ] {
        if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    response
}

fn html_response(content_type: &str, body: Option<&Value>) -> Response {
    let text = match body {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => DEFAULT_HTML.to_owned(),
    };
    let mut response = Response::new(Body::from(text));
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}
