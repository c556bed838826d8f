//! The Socket Mode WebSocket at `/link/?ticket=…`: a ticket from `apps.connections.open`
//! is good for one connection; `hello`, then envelopes; the client's acks recorded.
//!
//! Every connection runs one task that owns the socket: it writes what arrives on its
//! channel (frames queued under the state lock, so they keep their order) and reads the
//! client's frames. Pings are answered by the WebSocket library while the task reads —
//! and not at all once the connection is stalled.

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::state::Shared;
use crate::fake_support::ws;

/// `GET /link/?ticket=…`: 401 for a ticket that is unknown or used.
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    let ticket = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(key, _)| key == "ticket")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    if !shared.update(|inner| inner.tickets.remove(&ticket)) {
        return (StatusCode::UNAUTHORIZED, "invalid ticket").into_response();
    }
    ws.on_upgrade(move |socket| run(shared, socket))
}

async fn run(shared: Arc<Shared>, mut socket: WebSocket) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = &shared.config;
    let conn = shared.update(|inner| {
        let hello = json!({
            "type": "hello",
            "num_connections": inner.conns.len() + 1,
            "debug_info": {"host": "fake-slack", "build_number": 1,
                           "approximate_connection_time": 18060},
            "connection_info": {"app_id": config.app_id},
        });
        inner.open_conn(tx, hello)
    });
    loop {
        tokio::select! {
            out = rx.recv() => if !ws::deliver(&mut socket, out, &shared.cancel).await {
                break;
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => handle(&shared, text.as_str()),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            () = shared.cancel.cancelled() => break,
        }
    }
    shared.update(|inner| inner.close_conn(conn));
}

/// A client frame: an ack (`{"envelope_id": …}`, maybe with a `payload`); anything else
/// is ignored, as Slack does.
fn handle(shared: &Shared, text: &str) {
    let Ok(frame) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if let Some(id) = frame.get("envelope_id").and_then(Value::as_str) {
        shared.update(|inner| inner.ack(id));
    }
}
