//! The `/__fake/…` control endpoints, for driving the fake by hand (`curl`) or from the
//! `pincer-fake-telegram` binary's users: inject messages and raw updates, read what the bot
//! sent and called.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::inject::{ChatType, InjectMessage};
use super::state::Shared;

/// `POST /__fake/inject`, `POST /__fake/inject_raw`, `GET /__fake/sent_messages`,
/// `GET /__fake/calls`.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/__fake/inject", post(inject))
        .route("/__fake/inject_raw", post(inject_raw))
        .route("/__fake/sent_messages", get(sent_messages))
        .route("/__fake/calls", get(calls))
}

/// Body of `POST /__fake/inject`.
#[derive(Debug, Deserialize)]
struct InjectRequest {
    text: String,
    chat_id: Option<i64>,
    chat_type: Option<ChatType>,
    from_id: Option<i64>,
    username: Option<String>,
    first_name: Option<String>,
    message_thread_id: Option<i64>,
    reply_to_message_id: Option<i64>,
}

/// The default chat of `/__fake/inject` and of the binary's stdin.
pub(crate) const DEFAULT_CHAT_ID: i64 = 1001;

async fn inject(State(shared): State<Arc<Shared>>, Json(request): Json<InjectRequest>) -> Response {
    let chat_id = request.chat_id.unwrap_or(DEFAULT_CHAT_ID);
    let chat_type = request
        .chat_type
        .unwrap_or_else(|| ChatType::guess(chat_id));
    let from_id = request
        .from_id
        .unwrap_or(if chat_type == ChatType::Private {
            chat_id
        } else {
            DEFAULT_CHAT_ID
        });
    let mut message = InjectMessage::private(chat_id, request.text);
    message.chat_type = chat_type;
    if chat_type != ChatType::Private {
        message.chat_title = Some("Test Group".to_owned());
    }
    message.from_id = from_id;
    message.from_username = Some(request.username.unwrap_or_else(|| format!("user{from_id}")));
    if let Some(first_name) = request.first_name {
        message.from_first_name = first_name;
    }
    if let Some(thread_id) = request.message_thread_id {
        message = message.in_topic(thread_id);
    }
    message.reply_to_message_id = request.reply_to_message_id;
    let (update_id, message_id) = shared.update(|inner| inner.inject_message(message));
    Json(json!({"update_id": update_id, "message_id": message_id})).into_response()
}

async fn inject_raw(State(shared): State<Arc<Shared>>, Json(update): Json<Value>) -> Response {
    let update_id = shared.update(|inner| inner.inject_raw_update(update));
    Json(json!({"update_id": update_id})).into_response()
}

async fn sent_messages(State(shared): State<Arc<Shared>>) -> Response {
    Json(shared.read(|inner| inner.sent_messages.clone())).into_response()
}

async fn calls(State(shared): State<Arc<Shared>>) -> Response {
    Json(shared.read(|inner| inner.calls.clone())).into_response()
}
