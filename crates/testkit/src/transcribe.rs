//! The mock's speech to text (`POST /v1/audio/transcriptions`, OpenAI's multipart form): it
//! records the request like every other (the body as text) and answers
//! `{"text": "mock transcript of <file name> (<n> bytes, <model>)"}`, so a test can tell
//! which file and model reached it. A request without a bearer token is a 401, one without
//! a `file` or `model` part a 400, both in OpenAI's error shape.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::api::Api;
use crate::handlers::{MAX_BODY_BYTES, has_bearer_token, json_response, protocol_error, recorded};
use crate::server::AppState;

pub(crate) async fn answer(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let api = Api::OpenAiTranscriptions;
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return protocol_error(api, StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
    };
    let body = serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned());
    state.record(recorded(&parts, body, api));
    if !has_bearer_token(&parts.headers) {
        return protocol_error(api, StatusCode::UNAUTHORIZED, "missing bearer token");
    }
    let boundary = parts
        .headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split("boundary=").nth(1))
        .map(|b| b.trim_matches('"').to_owned());
    let Some(boundary) = boundary else {
        return protocol_error(api, StatusCode::BAD_REQUEST, "not multipart/form-data");
    };
    let fields = form_fields(&bytes, &boundary);
    let model = fields.iter().find(|f| f.name == "model");
    let file = fields.iter().find(|f| f.name == "file");
    match (model, file) {
        (Some(model), Some(file)) => {
            let text = format!(
                "mock transcript of {} ({} bytes, {})",
                file.file_name.as_deref().unwrap_or("?"),
                file.value.len(),
                String::from_utf8_lossy(&model.value),
            );
            json_response(StatusCode::OK, &json!({ "text": text }))
        }
        _ => protocol_error(
            api,
            StatusCode::BAD_REQUEST,
            "a file and a model are required",
        ),
    }
}

struct Field {
    name: String,
    file_name: Option<String>,
    value: Vec<u8>,
}

/// The parts of a multipart body: each part's name, file name and content.
fn form_fields(body: &[u8], boundary: &str) -> Vec<Field> {
    let delimiter = format!("--{boundary}");
    let mut fields = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, delimiter.as_bytes()) {
        rest = &rest[start + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let Some(head_end) = find(rest, b"\r\n\r\n") else {
            break;
        };
        let head = String::from_utf8_lossy(&rest[..head_end]).into_owned();
        let content = &rest[head_end + 4..];
        let end = find(content, format!("\r\n{delimiter}").as_bytes()).unwrap_or(content.len());
        let quoted = |key: &str| {
            head.split(&format!("{key}=\""))
                .nth(1)
                .and_then(|v| v.split('"').next())
                .map(str::to_owned)
        };
        fields.push(Field {
            name: quoted(" name")
                .or_else(|| quoted("; name"))
                .unwrap_or_default(),
            file_name: quoted("filename"),
            value: content[..end].to_vec(),
        });
        rest = &content[end..];
    }
    fields
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
