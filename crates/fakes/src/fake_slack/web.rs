//! The HTTP side of the fake Slack: the Web API subset under `/api/<method>` (arguments as
//! JSON, a form or the query string; `Authorization: Bearer` with the right token type),
//! private file downloads at `/files/<id>`, external uploads at `/upload/<file_id>`, and
//! the Socket Mode WebSocket route.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::socket;
use super::state::{Failure, PendingUpload, SentSlackMessage, Shared, UploadedSlackFile};
use crate::fake_support::socket_router;

/// Slack truncates (here: refuses) text over 40 000 chars.
const MAX_TEXT: usize = 40_000;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    socket_router(&["/link", "/link/"], socket::upgrade, handle, shared)
}

fn slack_error(error: &str) -> Response {
    Json(json!({"ok": false, "error": error})).into_response()
}

fn ok(mut body: Value) -> Response {
    body["ok"] = json!(true);
    Json(body).into_response()
}

fn failure_response(failure: &Failure) -> Response {
    match failure {
        Failure::OkFalse(error) => slack_error(error),
        Failure::Status {
            status,
            retry_after,
        } => {
            let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let error = if *status == 429 {
                "ratelimited"
            } else {
                "fatal_error"
            };
            let mut response = (code, Json(json!({"ok": false, "error": error}))).into_response();
            if let Some(secs) = retry_after
                && let Ok(value) = HeaderValue::from_str(&secs.to_string())
            {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
    }
}

/// The call's arguments: the query string, then a JSON or form body on top.
fn arguments(query: Option<&str>, content_type: &str, body: &Bytes) -> Option<Map<String, Value>> {
    let mut args = Map::new();
    let form = |bytes: &[u8], args: &mut Map<String, Value>| {
        for (key, value) in form_urlencoded::parse(bytes) {
            args.insert(key.into_owned(), Value::String(value.into_owned()));
        }
    };
    if let Some(query) = query {
        form(query.as_bytes(), &mut args);
    }
    if body.is_empty() {
        return Some(args);
    }
    if content_type.starts_with("application/json") {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => args.extend(map),
            _ => return None,
        }
    } else {
        form(body, &mut args);
    }
    Some(args)
}

fn string(args: &Map<String, Value>, name: &str) -> Option<String> {
    match args.get(name)? {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let bearer = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let Ok(body) = axum::body::to_bytes(body, crate::fake_support::MAX_BODY).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "too large").into_response();
    };
    if let Some(id) = path.strip_prefix("/files/") {
        return download(&shared, id, bearer.as_deref());
    }
    if let Some(file_id) = path.strip_prefix("/upload/") {
        return upload(&shared, file_id, &parts.headers, &body);
    }
    let Some(method) = path.strip_prefix("/api/") else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    let method = method.trim_end_matches('/').to_owned();
    shared.update(|inner| inner.calls.push(method.clone()));
    let config = &shared.config;
    let wanted = if method == "apps.connections.open" {
        &config.app_token
    } else {
        &config.bot_token
    };
    let other = if method == "apps.connections.open" {
        &config.bot_token
    } else {
        &config.app_token
    };
    match bearer {
        None => return slack_error("not_authed"),
        Some(token) if token == *other => return slack_error("not_allowed_token_type"),
        Some(token) if token != *wanted => return slack_error("invalid_auth"),
        Some(_) => {}
    }
    if let Some(failure) = shared.update(|inner| inner.take_failure(&method)) {
        return failure_response(&failure);
    }
    let content_type = crate::fake_support::content_type(&parts.headers).to_owned();
    let Some(args) = arguments(parts.uri.query(), &content_type, &body) else {
        return slack_error("invalid_json");
    };
    match method.as_str() {
        "auth.test" => ok(json!({
            "url": "https://fake.slack.com/", "team": "Fake Team", "user": "pincer",
            "team_id": config.team_id, "user_id": config.bot_user_id, "bot_id": config.bot_id,
            "is_enterprise_install": false,
        })),
        "apps.connections.open" => {
            let ticket = shared.update(|inner| inner.take_ticket());
            let ws = shared.base_url.replacen("http://", "ws://", 1);
            ok(json!({"url": format!("{ws}/link/?ticket={ticket}&app_id={}", config.app_id)}))
        }
        "chat.postMessage" => post_message(&shared, &args),
        "conversations.open" => {
            let Some(users) = string(&args, "users") else {
                return slack_error("users_list_not_supplied");
            };
            let user = users
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            let channel = shared.update(|inner| inner.dm_channel(&user));
            ok(json!({"channel": {"id": channel}}))
        }
        "files.getUploadURLExternal" => {
            let (Some(name), Some(length)) = (string(&args, "filename"), string(&args, "length"))
            else {
                return slack_error("invalid_arguments");
            };
            if length.parse::<u64>().is_err() {
                return slack_error("invalid_arguments");
            }
            let file_id = shared.update(|inner| {
                let id = inner.take_id("F");
                inner
                    .uploads
                    .insert(id.clone(), PendingUpload { name, bytes: None });
                id
            });
            ok(json!({
                "upload_url": format!("{}/upload/{file_id}", shared.base_url),
                "file_id": file_id,
            }))
        }
        "files.completeUploadExternal" => complete_upload(&shared, &args),
        _ => slack_error("unknown_method"),
    }
}

fn post_message(shared: &Shared, args: &Map<String, Value>) -> Response {
    let Some(channel) = string(args, "channel") else {
        return slack_error("channel_not_found");
    };
    if !channel.starts_with(['C', 'D', 'G']) {
        return slack_error("channel_not_found");
    }
    let text = string(args, "text").unwrap_or_default();
    let has_blocks = args.get("blocks").is_some_and(|b| !b.is_null());
    if text.trim().is_empty() && !has_blocks {
        return slack_error("no_text");
    }
    if text.chars().count() > MAX_TEXT {
        return slack_error("msg_too_long");
    }
    let thread_ts = string(args, "thread_ts");
    let ts = shared.update(|inner| {
        let ts = inner.take_ts();
        inner.sent_messages.push(SentSlackMessage {
            channel: channel.clone(),
            text: text.clone(),
            thread_ts: thread_ts.clone(),
            ts: ts.clone(),
            payload: Value::Object(args.clone()),
        });
        ts
    });
    ok(json!({
        "channel": channel, "ts": ts,
        "message": {"type": "message", "text": text, "user": shared.config.bot_user_id,
                    "bot_id": shared.config.bot_id, "ts": ts, "thread_ts": thread_ts},
    }))
}

/// `files` as a JSON array or a form field holding one.
fn file_list(args: &Map<String, Value>) -> Option<Vec<Value>> {
    match args.get("files")? {
        Value::Array(files) => Some(files.clone()),
        Value::String(text) => serde_json::from_str(text).ok(),
        _ => None,
    }
}

fn complete_upload(shared: &Shared, args: &Map<String, Value>) -> Response {
    let Some(files) = file_list(args).filter(|f| !f.is_empty()) else {
        return slack_error("invalid_arguments");
    };
    let channel = string(args, "channel_id").or_else(|| string(args, "channels"));
    let thread_ts = string(args, "thread_ts");
    let done = shared.update(|inner| {
        let mut done = Vec::new();
        for file in &files {
            let id = file.get("id").and_then(Value::as_str).unwrap_or_default();
            let Some(PendingUpload {
                name,
                bytes: Some(bytes),
            }) = inner.uploads.remove(id)
            else {
                return Err("file_not_found");
            };
            let title = file.get("title").and_then(Value::as_str).map(str::to_owned);
            if let Some(channel) = &channel {
                inner.uploaded_files.push(UploadedSlackFile {
                    file_id: id.to_owned(),
                    channel: channel.clone(),
                    name: name.clone(),
                    title: title.clone(),
                    bytes,
                    thread_ts: thread_ts.clone(),
                });
            }
            done.push(json!({"id": id, "title": title.unwrap_or(name)}));
        }
        Ok(done)
    });
    match done {
        Ok(files) => ok(json!({"files": files})),
        Err(error) => slack_error(error),
    }
}

/// `GET /files/<id>`: the bot token is needed; without it Slack answers its sign-in page.
fn download(shared: &Shared, id: &str, bearer: Option<&str>) -> Response {
    if bearer != Some(shared.config.bot_token.as_str()) {
        return Response::builder()
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .body(Body::from(
                "<!DOCTYPE html><html><body>Sign in to Slack</body></html>",
            ))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response());
    }
    match shared.read(|inner| inner.files.get(id).cloned()) {
        Some((mime, bytes)) => Response::builder()
            .header(header::CONTENT_TYPE, mime)
            .body(Body::from(bytes))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => (StatusCode::NOT_FOUND, "file not found").into_response(),
    }
}

/// `POST /upload/<file_id>`: the raw bytes, or a multipart body with a file part.
fn upload(
    shared: &Shared,
    file_id: &str,
    headers: &axum::http::HeaderMap,
    body: &Bytes,
) -> Response {
    let content_type = crate::fake_support::content_type(headers);
    let bytes = match crate::multipart::boundary(content_type) {
        Some(boundary) => match crate::multipart::parse(body, &boundary) {
            Ok(parts) => match parts.into_iter().find(|p| p.file_name.is_some()) {
                Some(part) => part.data.to_vec(),
                None => return (StatusCode::BAD_REQUEST, "no file part").into_response(),
            },
            Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
        },
        None => body.to_vec(),
    };
    let length = bytes.len();
    let known = shared.update(|inner| match inner.uploads.get_mut(file_id) {
        Some(pending) => {
            pending.bytes = Some(bytes);
            true
        }
        None => false,
    });
    if known {
        (StatusCode::OK, format!("OK - {length}")).into_response()
    } else {
        (StatusCode::NOT_FOUND, "unknown upload").into_response()
    }
}
