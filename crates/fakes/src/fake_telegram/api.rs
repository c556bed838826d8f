//! The HTTP side: `/bot<token>/<method>` and `/file/bot<token>/<path>`, the Bot API methods
//! the fake implements, and the routes of the `/__fake/…` control endpoints.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::conn::ConnHandle;
use super::control;
use super::html::parse_html;
use super::params::{Params, percent_decode};
use super::state::{Failure, Inner, RecordedCall, SentFile, SentMessage, Shared, now};

/// Longest message text, in UTF-16 code units after entity parsing.
pub(super) const MAX_TEXT: usize = 4096;
/// Longest caption, same unit.
const MAX_CAPTION: usize = 1024;
/// Longest `getUpdates` long poll honoured.
const MAX_POLL: Duration = Duration::from_secs(3600);

/// The methods the fake implements, in canonical case.
const METHODS: &[&str] = &[
    "getMe",
    "getUpdates",
    "sendMessage",
    "sendChatAction",
    "sendDocument",
    "sendPhoto",
    "getFile",
    "setMyCommands",
    "deleteWebhook",
    "editMessageText",
    "setMessageReaction",
    "deleteMessage",
];

const CHAT_ACTIONS: &[&str] = &[
    "typing",
    "upload_photo",
    "record_video",
    "upload_video",
    "record_voice",
    "upload_voice",
    "upload_document",
    "choose_sticker",
    "find_location",
    "record_video_note",
    "upload_video_note",
];

/// An error answer: `{"ok":false,"error_code":…,"description":…[,"parameters":…]}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: u16,
    description: String,
    retry_after: Option<u32>,
}

impl ApiError {
    pub(super) fn new(status: u16, description: impl Into<String>) -> Self {
        Self {
            status,
            description: description.into(),
            retry_after: None,
        }
    }

    pub(super) fn bad_request(message: impl std::fmt::Display) -> Self {
        Self::new(400, format!("Bad Request: {message}"))
    }
}

impl From<Failure> for ApiError {
    fn from(failure: Failure) -> Self {
        Self {
            status: failure.status,
            description: failure.description,
            retry_after: failure.retry_after,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({
            "ok": false,
            "error_code": self.status,
            "description": self.description,
        });
        if let Some(seconds) = self.retry_after {
            body["parameters"] = json!({"retry_after": seconds});
        }
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(body)).into_response()
    }
}

pub(super) type ApiResult = Result<Value, ApiError>;

fn ok(result: Value) -> Response {
    Json(json!({"ok": true, "result": result})).into_response()
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .merge(control::routes())
        .fallback(handle)
        .with_state(shared)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(conn): ConnectInfo<ConnHandle>,
    request: Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let path = percent_decode(parts.uri.path());
    if let Some(rest) = path.strip_prefix("/file/bot") {
        return download(&shared, &parts.method, rest);
    }
    let Some(rest) = path.strip_prefix("/bot") else {
        return ApiError::new(404, "Not Found").into_response();
    };
    let (token, method) = rest.split_once('/').unwrap_or((rest, ""));
    if token != shared.config.token {
        return ApiError::new(401, "Unauthorized").into_response();
    }
    let method = METHODS
        .iter()
        .find(|known| known.eq_ignore_ascii_case(method))
        .map_or_else(|| method.to_owned(), |known| (*known).to_owned());

    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let parsed = match axum::body::to_bytes(body, crate::fake_support::MAX_BODY).await {
        Ok(bytes) => Params::parse(parts.uri.query(), content_type.as_deref(), &bytes),
        Err(_) => Err("request body is too large or was cut".to_owned()),
    };
    let params = match parsed {
        Ok(params) => params,
        Err(message) => {
            shared.update(|inner| {
                inner.calls.push(RecordedCall {
                    method: method.clone(),
                    params: Value::Null,
                })
            });
            return ApiError::bad_request(message).into_response();
        }
    };

    let (dropped, failure) = shared.update(|inner| {
        inner.calls.push(RecordedCall {
            method: method.clone(),
            params: params.summary(),
        });
        if method == "getUpdates" {
            let offset = params.int("offset").ok().flatten().unwrap_or(0);
            inner.get_updates_offsets.push(offset);
        }
        let dropped = inner.take_drop(&method);
        let failure = if dropped {
            None
        } else {
            inner.take_failure(&method)
        };
        (dropped, failure)
    });
    if dropped {
        // The client never sees this answer: the connection fails before it is written.
        conn.abort();
        return StatusCode::BAD_GATEWAY.into_response();
    }
    if let Some(failure) = failure {
        return ApiError::from(failure).into_response();
    }

    let result = match method.as_str() {
        "getMe" => Ok(get_me(&shared)),
        "getUpdates" => get_updates(&shared, &params).await,
        "sendMessage" => send_message(&shared, &params),
        "sendChatAction" => send_chat_action(&shared, &params),
        "sendDocument" => send_file(&shared, &params, "sendDocument", "document"),
        "sendPhoto" => send_file(&shared, &params, "sendPhoto", "photo"),
        "getFile" => get_file(&shared, &params),
        "setMyCommands" => set_my_commands(&shared, &params),
        "deleteWebhook" => Ok(Value::Bool(true)),
        "editMessageText" => super::actions::edit_message_text(&shared, &params),
        "setMessageReaction" => super::actions::set_message_reaction(&shared, &params),
        "deleteMessage" => super::actions::delete_message(&shared, &params),
        _ => Err(ApiError::new(404, "Not Found: method not found")),
    };
    match result {
        Ok(value) => ok(value),
        Err(error) => error.into_response(),
    }
}

/// `GET /file/bot<token>/<file_path>`.
fn download(shared: &Shared, method: &Method, rest: &str) -> Response {
    let (token, file_path) = rest.split_once('/').unwrap_or((rest, ""));
    if token != shared.config.token {
        return ApiError::new(401, "Unauthorized").into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        return ApiError::new(404, "Not Found").into_response();
    }
    let file = shared.read(|inner| inner.file_by_path(file_path).cloned());
    match file {
        Some(file) => Response::builder()
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .body(Body::from(file.bytes))
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response()),
        None => ApiError::new(404, "Not Found").into_response(),
    }
}

fn get_me(shared: &Shared) -> Value {
    let mut user = shared.bot_user();
    user["can_join_groups"] = json!(true);
    user["can_read_all_group_messages"] = json!(false);
    user["supports_inline_queries"] = json!(false);
    user
}

pub(super) fn int(params: &Params, name: &str) -> Result<Option<i64>, ApiError> {
    params.int(name).map_err(ApiError::bad_request)
}

async fn get_updates(shared: &Shared, params: &Params) -> ApiResult {
    let offset = int(params, "offset")?.unwrap_or(0);
    let limit = int(params, "limit")?.unwrap_or(100).clamp(1, 100);
    let limit = usize::try_from(limit).unwrap_or(100);
    let timeout = int(params, "timeout")?.unwrap_or(0).max(0);
    let wait = Duration::from_secs(timeout.unsigned_abs()).min(MAX_POLL);
    shared.update(|inner| inner.confirm(offset));
    let updates = shared
        .wait_for(wait, |inner| inner.take_updates(offset, limit))
        .await;
    Ok(Value::Array(updates.unwrap_or_default()))
}

pub(super) fn chat_id(params: &Params) -> Result<i64, ApiError> {
    match params.int("chat_id") {
        Ok(Some(id)) => Ok(id),
        Ok(None) => Err(ApiError::bad_request("chat_id is empty")),
        Err(_) => Err(ApiError::bad_request("chat not found")),
    }
}

fn reply_to(params: &Params) -> Result<Option<i64>, ApiError> {
    if let Some(reply) = params
        .json("reply_parameters")
        .map_err(ApiError::bad_request)?
    {
        let id = match reply.get("message_id") {
            Some(Value::Number(number)) => number.as_i64(),
            Some(Value::String(text)) => text.parse().ok(),
            _ => None,
        };
        return id
            .map(Some)
            .ok_or_else(|| ApiError::bad_request("invalid reply_parameters specified"));
    }
    int(params, "reply_to_message_id")
}

/// Checks `text` for `parse_mode` and returns its visible text.
pub(super) fn visible_text(text: &str, parse_mode: Option<&str>) -> Result<String, ApiError> {
    match parse_mode {
        None => Ok(text.to_owned()),
        Some(mode) if mode.eq_ignore_ascii_case("html") => parse_html(text)
            .map_err(|message| ApiError::bad_request(format!("can't parse entities: {message}"))),
        Some(mode)
            if mode.eq_ignore_ascii_case("markdown") || mode.eq_ignore_ascii_case("markdownv2") =>
        {
            Ok(text.to_owned())
        }
        Some(_) => Err(ApiError::bad_request("unsupported parse_mode")),
    }
}

pub(super) fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The common part of a sent `Message`.
fn bot_message(
    shared: &Shared,
    inner: &mut Inner,
    chat_id: i64,
    thread: Option<i64>,
    reply: Option<i64>,
) -> Value {
    let chat = inner.chat(chat_id);
    let mut message = json!({
        "message_id": inner.take_message_id(),
        "from": shared.bot_user(),
        "chat": chat,
        "date": now(),
    });
    if let Some(thread_id) = thread {
        message["message_thread_id"] = json!(thread_id);
        if message.pointer("/chat/type") == Some(&json!("supergroup")) {
            message["is_topic_message"] = json!(true);
        }
    }
    if let Some(reply_id) = reply {
        message["reply_to_message"] = inner.replied_message(&message["chat"], reply_id);
    }
    message
}

fn message_id_of(message: &Value) -> i64 {
    message
        .get("message_id")
        .and_then(Value::as_i64)
        .unwrap_or_default()
}

fn send_message(shared: &Shared, params: &Params) -> ApiResult {
    let chat_id = chat_id(params)?;
    let thread = int(params, "message_thread_id")?;
    let reply = reply_to(params)?;
    let parse_mode = params.str("parse_mode").filter(|mode| !mode.is_empty());
    let text = params.str("text").unwrap_or_default();
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("message text is empty"));
    }
    let plain_text = visible_text(&text, parse_mode.as_deref())?;
    if plain_text.trim().is_empty() {
        return Err(ApiError::bad_request("message text is empty"));
    }
    if utf16_len(&plain_text) > MAX_TEXT {
        return Err(ApiError::bad_request("message is too long"));
    }
    Ok(shared.update(|inner| {
        let mut message = bot_message(shared, inner, chat_id, thread, reply);
        message["text"] = json!(plain_text);
        inner.remember_message(&message);
        inner.sent_messages.push(SentMessage {
            message_id: message_id_of(&message),
            chat_id,
            text,
            plain_text,
            parse_mode,
            message_thread_id: thread,
            reply_to_message_id: reply,
            disable_notification: params.bool("disable_notification"),
            params: params.summary(),
        });
        message
    }))
}

fn send_chat_action(shared: &Shared, params: &Params) -> ApiResult {
    let chat_id = chat_id(params)?;
    int(params, "message_thread_id")?;
    let action = params.str("action").unwrap_or_default();
    if action.is_empty() {
        return Err(ApiError::bad_request("action is empty"));
    }
    if !CHAT_ACTIONS.contains(&action.as_str()) {
        return Err(ApiError::bad_request("wrong parameter action in request"));
    }
    shared.update(|inner| inner.chat_actions.push((chat_id, action)));
    Ok(Value::Bool(true))
}

/// `sendDocument` / `sendPhoto`: an upload (multipart) or a `file_id` the fake knows.
fn send_file(shared: &Shared, params: &Params, method: &str, field: &str) -> ApiResult {
    let chat_id = chat_id(params)?;
    let thread = int(params, "message_thread_id")?;
    let reply = reply_to(params)?;
    let parse_mode = params.str("parse_mode").filter(|mode| !mode.is_empty());
    let caption = params.str("caption").filter(|caption| !caption.is_empty());
    let plain_caption = match &caption {
        Some(caption) => Some(visible_text(caption, parse_mode.as_deref())?),
        None => None,
    };
    if plain_caption
        .as_deref()
        .is_some_and(|c| utf16_len(c) > MAX_CAPTION)
    {
        return Err(ApiError::bad_request("message caption is too long"));
    }
    let upload = if let Some(upload) = params.files.get(field) {
        upload.clone()
    } else if let Some(reference) = params.str(field) {
        let attached = reference
            .strip_prefix("attach://")
            .and_then(|name| params.files.get(name));
        match attached {
            Some(upload) => upload.clone(),
            None => {
                let known = shared.read(|inner| inner.file(&reference).cloned());
                let file = known.ok_or_else(|| {
                    ApiError::bad_request("wrong file identifier/HTTP URL specified")
                })?;
                super::params::Upload {
                    file_name: Some(file.info.file_name),
                    content_type: Some(file.info.mime_type),
                    data: file.bytes,
                }
            }
        }
    } else {
        return Err(ApiError::bad_request(format!(
            "there is no {field} in the request"
        )));
    };
    if upload.data.is_empty() {
        return Err(ApiError::bad_request("file must be non-empty"));
    }
    let is_photo = field == "photo";
    Ok(shared.update(|inner| {
        let default_name = if is_photo { "photo.jpg" } else { "document" };
        let name = upload
            .file_name
            .clone()
            .unwrap_or_else(|| default_name.to_owned());
        let file = inner.register_file(upload.data.clone(), &name, is_photo);
        let mut message = bot_message(shared, inner, chat_id, thread, reply);
        if let Some(caption) = &plain_caption {
            message["caption"] = json!(caption);
        }
        if is_photo {
            message["photo"] = json!([{
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_size": file.file_size,
                "width": 800,
                "height": 600,
            }]);
        } else {
            message["document"] = json!({
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_name": file.file_name,
                "mime_type": upload.content_type.clone().unwrap_or(file.mime_type),
                "file_size": file.file_size,
            });
        }
        inner.remember_message(&message);
        inner.sent_files.push(SentFile {
            message_id: message_id_of(&message),
            method: method.to_owned(),
            chat_id,
            caption,
            parse_mode,
            message_thread_id: thread,
            reply_to_message_id: reply,
            file_name: upload.file_name,
            content_type: upload.content_type,
            bytes: upload.data.to_vec(),
        });
        message
    }))
}

fn get_file(shared: &Shared, params: &Params) -> ApiResult {
    let file_id = params.str("file_id").unwrap_or_default();
    if file_id.is_empty() {
        return Err(ApiError::bad_request("file_id is empty"));
    }
    let file = shared.read(|inner| inner.file(&file_id).map(|file| file.info.clone()));
    let file = file.ok_or_else(|| ApiError::bad_request("invalid file_id"))?;
    Ok(json!({
        "file_id": file.file_id,
        "file_unique_id": file.file_unique_id,
        "file_size": file.file_size,
        "file_path": file.file_path,
    }))
}

fn set_my_commands(shared: &Shared, params: &Params) -> ApiResult {
    let commands = params
        .json("commands")
        .map_err(ApiError::bad_request)?
        .ok_or_else(|| ApiError::bad_request("parameter \"commands\" is required"))?;
    let Some(list) = commands.as_array() else {
        return Err(ApiError::bad_request("can't parse commands JSON object"));
    };
    for command in list {
        let name = command
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let valid = (1..=32).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(ApiError::bad_request("BOT_COMMAND_INVALID"));
        }
        let description = command
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !(1..=256).contains(&description.chars().count()) {
            return Err(ApiError::bad_request("BOT_COMMAND_DESCRIPTION_INVALID"));
        }
    }
    shared.update(|inner| inner.my_commands = Some(commands));
    Ok(Value::Bool(true))
}
