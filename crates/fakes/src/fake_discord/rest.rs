//! The HTTP side: the REST subset under `/api/v10`, attachment downloads, and the routes
//! of the gateway WebSocket.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::gateway;
use super::inject::{mime_for, timestamp};
use crate::fake_support::{socket_router, split_path};

use super::state::{Failure, SentFile, SentMessage, Shared};

/// Largest uploaded file (Discord's limit for bots in unboosted guilds).
const MAX_FILE: usize = 10 * 1024 * 1024;
/// Longest message content, in characters.
const MAX_CONTENT: usize = 2000;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    socket_router(&["/gateway", "/gateway/"], gateway::upgrade, handle, shared)
}

/// `{"message": …, "code": …}` with HTTP `status`.
fn error(status: u16, message: &str, code: u64) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(json!({"message": message, "code": code}))).into_response()
}

/// 400 `Invalid Form Body` (code 50035) with one error on `field`.
fn invalid_form(field: &str, code: &str, message: &str) -> Response {
    let body = json!({
        "message": "Invalid Form Body",
        "code": 50035,
        "errors": {field: {"_errors": [{"code": code, "message": message}]}},
    });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

fn failure_response(failure: &Failure) -> Response {
    let status = StatusCode::from_u16(failure.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if failure.status != 429 {
        let reason = status.canonical_reason().unwrap_or("Error");
        return error(failure.status, &format!("{}: {reason}", failure.status), 0);
    }
    let body = json!({
        "message": "You are being rate limited.",
        "retry_after": failure.retry_after,
        "global": failure.global,
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let mut response = (status, Json(body)).into_response();
    let headers = response.headers_mut();
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    };
    set("retry-after", format!("{}", failure.retry_after.ceil()));
    set("x-ratelimit-limit", "5".to_owned());
    set("x-ratelimit-remaining", "0".to_owned());
    set(
        "x-ratelimit-reset",
        format!("{:.3}", now + failure.retry_after),
    );
    set(
        "x-ratelimit-reset-after",
        format!("{:.3}", failure.retry_after),
    );
    set("x-ratelimit-bucket", "fakebucket0000".to_owned());
    if failure.global {
        set("x-ratelimit-global", "true".to_owned());
        set("x-ratelimit-scope", "global".to_owned());
    } else {
        set("x-ratelimit-scope", "user".to_owned());
    }
    response
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().replace("%40", "@");
    if let Some(key) = path.strip_prefix("/attachments/") {
        return download(&shared, key);
    }
    let Some(route) = path.strip_prefix("/api/v10") else {
        return error(404, "404: Not Found", 0);
    };
    let expected = format!("Bot {}", shared.config.token);
    let authorized = parts
        .headers
        .get(header::AUTHORIZATION)
        .is_some_and(|value| value.as_bytes() == expected.as_bytes());
    if !authorized {
        return error(401, "401: Unauthorized", 0);
    }
    let method = parts.method.as_str().to_owned();
    let failure = shared.update(|inner| {
        inner.calls.push(format!("{method} {route}"));
        inner.failures.take(&method, route)
    });
    if let Some(failure) = failure {
        return failure_response(&failure);
    }
    let content_type = crate::fake_support::content_type(&parts.headers).to_owned();
    let Ok(body) = axum::body::to_bytes(body, crate::fake_support::MAX_BODY).await else {
        return error(413, "Request entity too large", 40005);
    };
    let segments = split_path(route);
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    let numeric = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["gateway", "bot"]) => Json(json!({
            "url": shared.gateway_url(),
            "shards": 1,
            "session_start_limit": {
                "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1,
            },
        }))
        .into_response(),
        ("GET", ["gateway"]) => Json(json!({"url": shared.gateway_url()})).into_response(),
        ("GET", ["users", "@me"]) => Json(shared.bot_user()).into_response(),
        ("POST", ["users", "@me", "channels"]) => dm_channel(&shared, &body),
        ("GET", ["channels", id]) if numeric(id) => channel_object(&shared, id),
        ("POST", ["channels", id, "messages"]) if numeric(id) => {
            send_message(&shared, id, &content_type, &body)
        }
        ("POST", ["channels", id, "typing"]) if numeric(id) => {
            shared.update(|inner| inner.typing.push((*id).to_owned()));
            StatusCode::NO_CONTENT.into_response()
        }
        (
            _,
            ["gateway", "bot"]
            | ["gateway"]
            | ["users", "@me"]
            | ["users", "@me", "channels"]
            | ["channels", _]
            | ["channels", _, "messages" | "typing"],
        ) => error(405, "405: Method Not Allowed", 0),
        _ => error(404, "404: Not Found", 0),
    }
}

/// `GET /channels/{id}`: a thread added with `add_thread` (type 11 with its parent), a DM
/// channel (type 1), a guild text channel seen in an injected message (type 0), else
/// Discord's "Unknown Channel".
fn channel_object(shared: &Shared, id: &str) -> Response {
    shared.read(|inner| {
        if let Some((parent, guild)) = inner.threads.get(id) {
            return Json(json!({
                "id": id, "type": 11, "guild_id": guild, "parent_id": parent,
                "name": format!("thread-{id}"),
                "thread_metadata": {"archived": false, "locked": false},
            }))
            .into_response();
        }
        if inner.dm_channels.values().any(|c| c == id) {
            return Json(json!({"id": id, "type": 1})).into_response();
        }
        match inner.guild_channels.get(id) {
            Some(guild) => Json(json!({
                "id": id, "type": 0, "guild_id": guild, "name": format!("channel-{id}"),
            }))
            .into_response(),
            None => error(404, "Unknown Channel", 10003),
        }
    })
}

/// `GET /attachments/<channel>/<id>/<filename>`: no auth, like Discord's CDN.
fn download(shared: &Shared, key: &str) -> Response {
    match shared.read(|inner| inner.attachments.get(key).cloned()) {
        Some((content_type, bytes)) => Response::builder()
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(bytes))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => error(404, "404: Not Found", 0),
    }
}

/// A snowflake given as a string or a number.
fn snowflake(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) if !text.is_empty() => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

fn dm_channel(shared: &Shared, body: &Bytes) -> Response {
    let Ok(Value::Object(payload)) = serde_json::from_slice::<Value>(body) else {
        return error(400, "400: Bad Request", 0);
    };
    let Some(recipient) = snowflake(payload.get("recipient_id")) else {
        return invalid_form(
            "recipient_id",
            "BASE_TYPE_REQUIRED",
            "This field is required",
        );
    };
    let channel = shared.update(|inner| {
        let id = match inner.dm_channels.get(&recipient) {
            Some(id) => id.clone(),
            None => {
                let id = inner.take_id();
                inner.dm_channels.insert(recipient.clone(), id.clone());
                id
            }
        };
        json!({
            "id": id, "type": 1, "last_message_id": null, "flags": 0,
            "recipients": [inner.user(&recipient)],
        })
    });
    Json(channel).into_response()
}

/// The payload and files of a message: a JSON body, or `multipart/form-data` with
/// `payload_json` (and/or plain fields) and file parts.
/// `None` for a malformed body.
fn message_payload(content_type: &str, body: &Bytes) -> Option<(Value, Vec<SentFile>)> {
    let Some(boundary) = crate::multipart::boundary(content_type) else {
        return match serde_json::from_slice::<Value>(body) {
            Ok(payload @ Value::Object(_)) => Some((payload, Vec::new())),
            _ => None,
        };
    };
    let parts = crate::multipart::parse(body, &boundary).ok()?;
    let mut payload = Map::new();
    let mut files = Vec::new();
    for part in parts {
        if let Some(filename) = part.file_name {
            files.push(SentFile {
                field: part.name,
                filename,
                content_type: part.content_type,
                bytes: part.data.to_vec(),
            });
        } else if part.name == "payload_json" {
            match serde_json::from_slice::<Value>(&part.data) {
                Ok(Value::Object(map)) => payload.extend(map),
                _ => return None,
            }
        } else {
            let text = String::from_utf8_lossy(&part.data).into_owned();
            payload.insert(part.name, Value::String(text));
        }
    }
    Some((Value::Object(payload), files))
}

fn send_message(shared: &Shared, channel_id: &str, content_type: &str, body: &Bytes) -> Response {
    let Some((payload, files)) = message_payload(content_type, body) else {
        return error(400, "400: Bad Request", 0);
    };
    let content = match payload.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(_) => return invalid_form("content", "BASE_TYPE_STRING", "Must be a string."),
    };
    if content.chars().count() > MAX_CONTENT {
        return invalid_form(
            "content",
            "BASE_TYPE_MAX_LENGTH",
            "Must be 2000 or fewer in length.",
        );
    }
    let has_embeds = payload
        .get("embeds")
        .and_then(Value::as_array)
        .is_some_and(|embeds| !embeds.is_empty());
    if content.trim().is_empty() && files.is_empty() && !has_embeds {
        return error(400, "Cannot send an empty message", 50006);
    }
    if files.iter().any(|file| file.bytes.len() > MAX_FILE) {
        return error(413, "Request entity too large", 40005);
    }
    let reference = payload.get("message_reference");
    let reference_id = snowflake(reference.and_then(|r| r.get("message_id")));
    let must_exist = reference
        .and_then(|r| r.get("fail_if_not_exists"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let message = shared.update(|inner| {
        if let Some(id) = &reference_id
            && must_exist
            && !inner.messages.contains_key(id)
        {
            return None;
        }
        let id = inner.take_id();
        let attachments: Vec<Value> = files
            .iter()
            .map(|file| {
                let attachment_id = inner.take_id();
                let mime = file
                    .content_type
                    .clone()
                    .unwrap_or_else(|| mime_for(&file.filename).to_owned());
                let key = format!("{channel_id}/{attachment_id}/{}", file.filename);
                let url = format!("{}/attachments/{key}", shared.base_url);
                let bytes = Bytes::from(file.bytes.clone());
                inner.attachments.insert(key, (mime.clone(), bytes));
                json!({
                    "id": attachment_id, "filename": file.filename, "size": file.bytes.len(),
                    "url": url, "proxy_url": url, "content_type": mime,
                })
            })
            .collect();
        let mut message = json!({
            "id": id,
            "type": if reference_id.is_some() { 19 } else { 0 },
            "channel_id": channel_id,
            "author": shared.bot_user(),
            "content": content,
            "timestamp": timestamp(),
            "edited_timestamp": null,
            "tts": false,
            "mention_everyone": false,
            "mentions": [],
            "mention_roles": [],
            "attachments": attachments,
            "embeds": payload.get("embeds").cloned().unwrap_or_else(|| json!([])),
            "pinned": false,
            "flags": 0,
        });
        if let Some(reference) = &reference_id {
            message["message_reference"] =
                json!({"type": 0, "message_id": reference, "channel_id": channel_id});
            if let Some(referenced) = inner.messages.get(reference) {
                message["referenced_message"] = referenced.clone();
            }
        }
        inner.remember_message(&message);
        inner.sent_messages.push(SentMessage {
            id,
            channel_id: channel_id.to_owned(),
            content: content.clone(),
            message_reference: reference_id.clone(),
            allowed_mentions: payload.get("allowed_mentions").cloned(),
            files: files.clone(),
            payload: payload.clone(),
        });
        Some(message)
    });
    match message {
        Some(message) => Json(message).into_response(),
        None => invalid_form(
            "message_reference",
            "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
            "Unknown message",
        ),
    }
}
