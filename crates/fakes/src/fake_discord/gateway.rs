//! The Gateway WebSocket at `/gateway`: Hello, heartbeats and their acks, Identify and
//! READY, Resume with replay, and the close codes of the payloads the fake refuses.
//!
//! Every connection runs one task that owns the socket: it writes what arrives on its
//! channel (payloads queued under the state lock, so they keep their order) and reads the
//! client's payloads.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use crate::fake_support::ws;

use super::state::{Out, RecordedIdentify, RecordedResume, Shared, op};

/// `GET /gateway` (any query; `v` other than 10 is refused with 4012).
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> Response {
    let version_ok = query.as_deref().unwrap_or("").split('&').all(|pair| {
        pair.strip_prefix("v=")
            .is_none_or(|version| version == "10")
    });
    ws.on_upgrade(move |socket| run(shared, socket, version_ok))
}

async fn run(shared: Arc<Shared>, mut socket: WebSocket, version_ok: bool) {
    if !version_ok {
        ws::close(&mut socket, Some((4012, "Invalid API version."))).await;
        return;
    }
    let interval = shared.config.heartbeat_interval;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let conn = shared.update(|inner| inner.open_conn(tx, interval));
    // The fake closes with 4009 when no heartbeat came for twice the interval.
    let grace = Duration::from_millis(interval.saturating_mul(2));
    let mut deadline = Instant::now() + grace;
    let mut client_close = None;
    loop {
        tokio::select! {
            out = rx.recv() => if !ws::deliver(&mut socket, out, &shared.cancel).await {
                break;
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    let heartbeat = handle(&shared, conn, text.as_str());
                    if heartbeat {
                        deadline = Instant::now() + grace;
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    // ETF and compressed payloads are not supported.
                    ws::close(&mut socket, Some((4002, "Error while decoding payload."))).await;
                    break;
                }
                Some(Ok(Message::Close(frame))) => {
                    client_close = Some(frame.map_or(1005, |frame| frame.code));
                    break;
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
            () = sleep_until(deadline), if shared.config.enforce_heartbeat => {
                ws::close(&mut socket, Some((4009, "Session timed out."))).await;
                break;
            }
            () = shared.cancel.cancelled() => break,
        }
    }
    shared.update(|inner| inner.close_conn(conn, client_close));
}

/// Handles one client payload (answers go through the connection's channel); `true` for
/// a heartbeat.
fn handle(shared: &Shared, conn: u64, text: &str) -> bool {
    let close = |code: u16, reason: &'static str| {
        shared.update(|inner| inner.send_to(conn, Out::Close(Some((code, reason)))));
    };
    let Ok(payload) = serde_json::from_str::<Value>(text) else {
        close(4002, "Error while decoding payload.");
        return false;
    };
    let d = payload.get("d").cloned().unwrap_or(Value::Null);
    match payload.get("op").and_then(Value::as_u64) {
        Some(1) => {
            shared.update(|inner| {
                inner.heartbeats.push(d.as_u64());
                inner.send_to(conn, Out::Text(op(11, Value::Null)));
            });
            return true;
        }
        Some(2) => identify(shared, conn, &d),
        Some(6) => resume(shared, conn, &d),
        // Presence and voice state updates, guild member requests: accepted, ignored.
        Some(3 | 4 | 8) => {
            if !shared.read(|inner| inner.authenticated(conn)) {
                close(4003, "Not authenticated.");
            }
        }
        _ => close(4001, "Unknown opcode."),
    }
    false
}

fn str_field(d: &Value, name: &str) -> String {
    d.get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The token, with or without a `Bot ` prefix.
fn token_ok(shared: &Shared, token: &str) -> bool {
    token.strip_prefix("Bot ").unwrap_or(token) == shared.config.token
}

fn identify(shared: &Shared, conn: u64, d: &Value) {
    let token = str_field(d, "token");
    let record = RecordedIdentify {
        token: token.clone(),
        intents: d.get("intents").and_then(Value::as_u64),
        properties: d.get("properties").cloned().unwrap_or(Value::Null),
        payload: d.clone(),
    };
    let bot = shared.bot_user();
    shared.update(|inner| {
        inner.identifies.push(record);
        if !token_ok(shared, &token) {
            inner.send_to(conn, Out::Close(Some((4004, "Authentication failed."))));
        } else if inner.authenticated(conn) {
            inner.send_to(conn, Out::Close(Some((4005, "Already authenticated."))));
        } else if d.get("intents").and_then(Value::as_u64).is_none() {
            inner.send_to(conn, Out::Close(Some((4013, "Invalid intent(s)."))));
        } else {
            inner.identify(conn, |session_id| {
                json!({
                    "v": 10,
                    "user": bot,
                    "session_id": session_id,
                    "resume_gateway_url": shared.gateway_url(),
                    "guilds": [],
                    "private_channels": [],
                    "application": {"id": shared.config.bot_id, "flags": 0},
                })
            });
        }
    });
}

fn resume(shared: &Shared, conn: u64, d: &Value) {
    let token = str_field(d, "token");
    let session_id = str_field(d, "session_id");
    let seq = d.get("seq").and_then(Value::as_u64);
    shared.update(|inner| {
        let accepted = if !token_ok(shared, &token) {
            inner.send_to(conn, Out::Close(Some((4004, "Authentication failed."))));
            false
        } else if inner.resume(conn, &session_id, seq.unwrap_or(0)) {
            true
        } else {
            inner.send_to(conn, Out::Text(op(9, Value::Bool(false))));
            false
        };
        inner.resumes.push(RecordedResume {
            token,
            session_id,
            seq,
            accepted,
        });
    });
}
