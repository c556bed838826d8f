//! The long connection: the fake's own `pbbp2.Frame` protobuf definition (written from
//! the protocol notes, independently of the adapter's), the WebSocket at `/ws/v2` (a
//! single-use ticket from `/callback/ws/endpoint`), pongs, event frames and acks.
//!
//! Every connection runs one task that owns the socket: it writes what arrives on its
//! channel (frames queued under the state lock, so they keep their order) and reads the
//! client's frames. Anything the client gets wrong is recorded in `protocol_errors` (the
//! tests assert it stays empty) rather than silently accepted.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use prost::Message as _;
use serde_json::Value;
use tokio::sync::mpsc;

use super::state::{Out, RecordedAck, RecordedPing, Shared};
use crate::fake_support::ws;

/// A frame header (`pbbp2.Header`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Header {
    #[prost(string, required, tag = "1")]
    pub key: String,
    #[prost(string, required, tag = "2")]
    pub value: String,
}

/// `pbbp2.Frame`: `method` 0 is a control frame (ping/pong), 1 a data frame (events).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Frame {
    #[prost(uint64, required, tag = "1")]
    pub seq_id: u64,
    #[prost(uint64, required, tag = "2")]
    pub log_id: u64,
    #[prost(int32, required, tag = "3")]
    pub service: i32,
    #[prost(int32, required, tag = "4")]
    pub method: i32,
    #[prost(message, repeated, tag = "5")]
    pub headers: Vec<Header>,
    #[prost(string, optional, tag = "6")]
    pub payload_encoding: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub payload_type: Option<String>,
    #[prost(bytes = "vec", optional, tag = "8")]
    pub payload: Option<Vec<u8>>,
    #[prost(string, optional, tag = "9")]
    pub log_id_new: Option<String>,
}

impl Frame {
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|header| header.key == key)
            .map(|header| header.value.as_str())
    }
}

pub(crate) fn encode_frame(frame: &Frame) -> Vec<u8> {
    frame.encode_to_vec()
}

/// `GET /ws/v2?…&service_id=…&ticket=…`: the ticket must come from an endpoint call and
/// is used up by the handshake (so every reconnect needs a new endpoint call).
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    ws: WebSocketUpgrade,
) -> Response {
    let ticket = query.get("ticket").cloned().unwrap_or_default();
    let valid = shared.update(|inner| {
        inner.calls.push("GET /ws/v2".to_owned());
        inner.tickets.remove(&ticket)
    });
    if !valid {
        shared.update(|inner| {
            inner.protocol_errors.push(format!(
                "websocket handshake with an unknown or used ticket {ticket:?}"
            ));
        });
        return (
            StatusCode::FORBIDDEN,
            [
                ("handshake-status", "403"),
                ("handshake-msg", "invalid ticket"),
            ],
        )
            .into_response();
    }
    let service = query
        .get("service_id")
        .and_then(|id| id.parse().ok())
        .unwrap_or(shared.config.service_id);
    ws.on_upgrade(move |socket| run(shared, socket, service))
}

async fn run(shared: Arc<Shared>, mut socket: WebSocket, service: i32) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let conn = shared.update(|inner| inner.open_conn(tx, service));
    loop {
        tokio::select! {
            out = rx.recv() => if !ws::deliver(&mut socket, out, &shared.cancel).await {
                break;
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Binary(bytes))) => handle(&shared, conn, &bytes),
                Some(Ok(Message::Text(text))) => shared.update(|inner| {
                    inner.protocol_errors.push(format!("text frame on the long connection: {text}"));
                }),
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            () = shared.cancel.cancelled() => break,
        }
    }
    shared.update(|inner| inner.close_conn(conn));
}

/// Handles one frame from the client.
fn handle(shared: &Shared, conn: u64, bytes: &[u8]) {
    let frame = match Frame::decode(bytes) {
        Ok(frame) => frame,
        Err(err) => {
            shared.update(|inner| {
                inner
                    .protocol_errors
                    .push(format!("undecodable frame ({err}): {bytes:?}"));
            });
            return;
        }
    };
    match (frame.method, frame.header("type")) {
        (0, Some("ping")) => ping(shared, conn, &frame),
        (1, _) => ack(shared, conn, &frame),
        (method, kind) => shared.update(|inner| {
            inner.protocol_errors.push(format!(
                "unexpected frame from the client: method {method}, type {kind:?}"
            ));
        }),
    }
}

fn ping(shared: &Shared, conn: u64, frame: &Frame) {
    shared.update(|inner| {
        let Some(state) = inner.conns.get(&conn) else {
            return;
        };
        let (silent, service) = (state.silent, state.service);
        if frame.service != service {
            inner.protocol_errors.push(format!(
                "ping with service {} on a connection of service {service}",
                frame.service
            ));
        }
        inner.pings.push(RecordedPing {
            conn,
            service: frame.service,
            answered: !silent,
        });
        if silent {
            return;
        }
        let pong = Frame {
            seq_id: 0,
            log_id: 0,
            service,
            method: 0,
            headers: vec![Header {
                key: "type".to_owned(),
                value: "pong".to_owned(),
            }],
            payload_encoding: None,
            payload_type: None,
            payload: Some(inner.client_config().to_string().into_bytes()),
            log_id_new: None,
        };
        inner.send_to(conn, Out::Binary(encode_frame(&pong)));
    });
}

/// A data frame sent back: the ack of an event (acked for good when its code is 200).
fn ack(shared: &Shared, conn: u64, frame: &Frame) {
    let frame_id = frame.header("message_id").unwrap_or_default().to_owned();
    let code = frame
        .payload
        .as_deref()
        .and_then(|payload| serde_json::from_slice::<Value>(payload).ok())
        .and_then(|payload| payload.get("code").and_then(Value::as_i64));
    shared.update(|inner| {
        let event = inner
            .events
            .iter_mut()
            .find(|event| event.frame_id == frame_id);
        let message_id = match event {
            Some(event) => {
                if code == Some(200) {
                    event.acked = true;
                }
                event.message_id.clone()
            }
            None => {
                inner
                    .protocol_errors
                    .push(format!("ack of an unknown frame message_id {frame_id:?}"));
                None
            }
        };
        if code.is_none() {
            inner.protocol_errors.push(format!(
                "ack of {frame_id:?} without a JSON payload with a code"
            ));
        }
        inner.acks.push(RecordedAck {
            conn,
            frame_message_id: frame_id,
            message_id,
            seq_id: frame.seq_id,
            code,
            biz_rt: frame.header("biz_rt").map(str::to_owned),
            headers: frame
                .headers
                .iter()
                .map(|header| (header.key.clone(), header.value.clone()))
                .collect(),
        });
    });
}
