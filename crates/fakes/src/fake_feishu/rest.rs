//! The HTTP side: the Open Platform REST subset (tenant token, bot info, the long
//! connection's endpoint, message resources, sending and replying, image and file
//! uploads), injected failures, and the route of the long connection's WebSocket.
//!
//! Answers are Feishu's `{"code": …, "msg": …, "data"?: …}`. Credential errors on the
//! token and endpoint calls come with HTTP 200 (the body's code is what counts), the IM
//! API's errors with HTTP 400, as on Feishu.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};

use super::inject::{dm_chat_id, now_millis};
use super::long_conn;
use super::state::{EndpointRequest, Failure, SentMessage, Shared, TokenRequest};
use crate::fake_support::{socket_router, split_path};

/// Largest uploaded image (Feishu: 10 MB).
pub(crate) const MAX_IMAGE: usize = 10 * 1024 * 1024;
/// Largest uploaded file (Feishu: 30 MB).
pub(crate) const MAX_FILE: usize = 30 * 1024 * 1024;
/// Largest `content` of a card, in bytes (Feishu: 30 KB).
pub(crate) const MAX_CARD: usize = 30 * 1024;
/// Largest `content` of other messages, in bytes (Feishu: 150 KB).
pub(crate) const MAX_CONTENT: usize = 150 * 1024;

const TOKEN_INVALID: i64 = 99_991_663;
const TOKEN_MISSING: i64 = 99_991_661;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    socket_router(&["/ws/v2"], long_conn::upgrade, handle, shared)
}

/// `{"code": code, "msg": msg}` with HTTP `status`.
pub(crate) fn error_response(status: u16, code: i64, msg: &str) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(json!({"code": code, "msg": msg}))).into_response()
}

/// A Feishu error answer (small, unlike a `Response`, for `Result`s).
#[derive(Debug)]
pub(crate) struct ApiError {
    status: u16,
    code: i64,
    msg: String,
}

impl ApiError {
    pub fn new(status: u16, code: i64, msg: &str) -> Self {
        Self {
            status,
            code,
            msg: msg.to_owned(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error_response(self.status, self.code, &self.msg)
    }
}

pub(crate) fn ok_response(data: Value) -> Response {
    Json(json!({"code": 0, "msg": "success", "data": data})).into_response()
}

fn failure_response(failure: &Failure) -> Response {
    let msg = match (failure.status, failure.code) {
        (_, 99_991_400) | (429, _) => "request trigger frequency limit",
        (500..=599, _) => "internal error",
        _ => "injected failure",
    };
    let mut response = error_response(failure.status, failure.code, msg);
    if failure.status == 429 || failure.code == 99_991_400 {
        let headers = response.headers_mut();
        headers.insert(
            "x-ogw-ratelimit-limit",
            header::HeaderValue::from_static("5"),
        );
        if let Ok(value) = header::HeaderValue::from_str(&failure.reset_secs.to_string()) {
            headers.insert("x-ogw-ratelimit-reset", value);
        }
    }
    response
}

fn query_map(query: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

fn json_body(body: &Bytes) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

fn str_field(object: &serde_json::Map<String, Value>, name: &str) -> String {
    object
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let method = parts.method.as_str().to_owned();
    let failure = shared.update(|inner| {
        inner.calls.push(format!("{method} {path}"));
        inner.failures.take(&method, &path)
    });
    if let Some(failure) = failure {
        return failure_response(&failure);
    }
    let Ok(body) = axum::body::to_bytes(body, crate::fake_support::MAX_BODY).await else {
        return error_response(413, 234_006, "request body too large");
    };
    let segments = split_path(&path);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    match (method.as_str(), segments.as_slice()) {
        ("POST", ["open-apis", "auth", "v3", "tenant_access_token", "internal"]) => {
            tenant_token(&shared, &body)
        }
        ("POST", ["callback", "ws", "endpoint"]) => endpoint(&shared, &parts.headers, &body),
        ("GET", ["open-apis", ..]) | ("POST", ["open-apis", ..]) => {
            if let Err(err) = authorize(&shared, &parts.headers) {
                return err.into_response();
            }
            let query = query_map(parts.uri.query());
            let content_type = crate::fake_support::content_type(&parts.headers).to_owned();
            api(&shared, &method, &segments, &query, &content_type, &body)
        }
        _ => error_response(404, 404, "404 page not found"),
    }
}

fn authorize(shared: &Shared, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::new(
            400,
            TOKEN_MISSING,
            "Missing access token for authorization.",
        ));
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if shared.read(|inner| inner.tokens.contains(token)) {
        Ok(())
    } else {
        Err(ApiError::new(
            400,
            TOKEN_INVALID,
            "Invalid access token for authorization.",
        ))
    }
}

fn api(
    shared: &Shared,
    method: &str,
    segments: &[&str],
    query: &HashMap<String, String>,
    content_type: &str,
    body: &Bytes,
) -> Response {
    match (method, segments) {
        ("GET", ["open-apis", "bot", "v3", "info"]) => Json(json!({
            "code": 0,
            "msg": "ok",
            "bot": {
                "activate_status": 2,
                "app_name": shared.config.bot_name,
                "avatar_url": "",
                "ip_white_list": [],
                "open_id": shared.config.bot_open_id,
            },
        }))
        .into_response(),
        (
            "GET",
            [
                "open-apis",
                "im",
                "v1",
                "messages",
                message_id,
                "resources",
                key,
            ],
        ) => resource(shared, message_id, key, query),
        ("POST", ["open-apis", "im", "v1", "messages"]) => super::send::create(shared, query, body),
        ("POST", ["open-apis", "im", "v1", "messages", message_id, "reply"]) => {
            super::send::reply(shared, message_id, body)
        }
        ("POST", ["open-apis", "im", "v1", "images"]) => {
            super::send::upload_image(shared, content_type, body)
        }
        ("POST", ["open-apis", "im", "v1", "files"]) => {
            super::send::upload_file(shared, content_type, body)
        }
        _ => error_response(404, 404, "404 page not found"),
    }
}

fn tenant_token(shared: &Shared, body: &Bytes) -> Response {
    let Some(request) = json_body(body) else {
        return error_response(400, 9499, "Bad Request");
    };
    let app_id = str_field(&request, "app_id");
    let app_secret = str_field(&request, "app_secret");
    let config = &shared.config;
    let refusal = if app_id != config.app_id {
        Some((10_003, "invalid param: app_id is invalid"))
    } else if app_secret != config.app_secret {
        Some((10_014, "app secret invalid"))
    } else {
        None
    };
    let token = shared.update(|inner| {
        let token = refusal
            .is_none()
            .then(|| format!("t-fake{:x}", inner.take_id()));
        if let Some(token) = &token {
            inner.tokens.insert(token.clone());
        }
        inner.token_requests.push(TokenRequest {
            app_id,
            token: token.clone(),
        });
        token
    });
    match (token, refusal) {
        (Some(token), _) => Json(json!({
            "code": 0,
            "msg": "ok",
            "tenant_access_token": token,
            "expire": config.token_expire_secs,
        }))
        .into_response(),
        (None, Some((code, msg))) => error_response(200, code, msg),
        (None, None) => error_response(500, 1, "internal error"),
    }
}

fn endpoint(shared: &Shared, headers: &HeaderMap, body: &Bytes) -> Response {
    let Some(request) = json_body(body) else {
        return error_response(400, 1, "bad request");
    };
    let app_id = str_field(&request, "AppID");
    let app_secret = str_field(&request, "AppSecret");
    let locale = headers
        .get("locale")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let config = &shared.config;
    let accepted = app_id == config.app_id && app_secret == config.app_secret;
    let answer = shared.update(|inner| {
        let url = accepted.then(|| {
            let id = inner.take_id();
            let ticket = format!("tk{id:x}");
            inner.tickets.insert(ticket.clone());
            format!(
                "{}/ws/v2?fpid=1&aid=2&device_id=d{id:x}&access_key=k{id:x}&service_id={}&ticket={ticket}",
                shared.base_url.replacen("http://", "ws://", 1),
                config.service_id,
            )
        });
        inner.endpoint_requests.push(EndpointRequest {
            app_id,
            locale,
            url: url.clone(),
        });
        url.map(|url| (url, inner.client_config()))
    });
    match answer {
        Some((url, client_config)) => Json(json!({
            "code": 0,
            "msg": "ok",
            "data": {"URL": url, "ClientConfig": client_config},
        }))
        .into_response(),
        None => error_response(200, 514, "auth failed: app id or app secret invalid"),
    }
}

/// `GET …/messages/{message_id}/resources/{key}?type=image|file`: the raw bytes.
fn resource(
    shared: &Shared,
    message_id: &str,
    key: &str,
    query: &HashMap<String, String>,
) -> Response {
    let found = shared.read(|inner| {
        inner
            .resources
            .get(&(message_id.to_owned(), key.to_owned()))
            .cloned()
    });
    let Some(resource) = found else {
        return error_response(400, 234_003, "File not in msg.");
    };
    let wanted = query.get("type").map(String::as_str);
    // Feishu fetches images with `type=image` and files (and audio, video) with `type=file`.
    if wanted != Some(resource.kind) {
        return error_response(400, 234_001, "Invalid request param: type.");
    }
    let content_type = match resource.kind {
        "image" => "image/png",
        _ => "application/octet-stream",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CONTENT_LENGTH, resource.bytes.len())
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", resource.name),
        )
        .body(Body::from(resource.bytes))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Records a sent message and remembers it (so it can be replied to); returns the answer.
pub(crate) fn record_sent(shared: &Shared, mut sent: SentMessage) -> Response {
    let (message_id, sent) = shared.update(|inner| {
        sent.message_id = format!("om_bot{:x}", inner.take_id());
        inner.messages.insert(
            sent.message_id.clone(),
            super::state::MessageInfo {
                chat_id: sent.chat_id.clone(),
                thread_id: sent.thread_id.clone(),
            },
        );
        inner.sent_messages.push(sent.clone());
        (sent.message_id.clone(), sent)
    });
    ok_response(json!({
        "message_id": message_id,
        "root_id": sent.reply_to.clone().unwrap_or_default(),
        "parent_id": sent.reply_to.clone().unwrap_or_default(),
        "thread_id": sent.thread_id.clone().unwrap_or_default(),
        "msg_type": sent.msg_type,
        "create_time": now_millis(),
        "update_time": now_millis(),
        "deleted": false,
        "updated": false,
        "chat_id": sent.chat_id,
        "sender": {
            "id": shared.config.app_id,
            "id_type": "app_id",
            "sender_type": "app",
            "tenant_key": shared.config.tenant_key,
        },
        "body": {"content": sent.content.to_string()},
    }))
}

/// The chat a `receive_id` of `receive_id_type` lands in, or why it is refused.
pub(crate) fn receive_chat(receive_id_type: &str, receive_id: &str) -> Result<String, ApiError> {
    let invalid = |what: &str| {
        Err(ApiError::new(
            400,
            230_001,
            &format!("Your request contains an invalid request parameter: {what}"),
        ))
    };
    match receive_id_type {
        "open_id" if receive_id.starts_with("ou_") => Ok(dm_chat_id(receive_id)),
        "chat_id" if receive_id.starts_with("oc_") => Ok(receive_id.to_owned()),
        "user_id" | "union_id" | "email" if !receive_id.is_empty() => {
            Ok(format!("oc_dm_{receive_id}"))
        }
        "open_id" | "chat_id" | "user_id" | "union_id" | "email" => invalid(&format!(
            "receive_id {receive_id:?} is not a valid {receive_id_type}"
        )),
        "" => Err(ApiError::new(
            400,
            99_992_402,
            "field validation failed: receive_id_type is required",
        )),
        other => invalid(&format!("receive_id_type {other:?}")),
    }
}
