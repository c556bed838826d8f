//! What the gateway benchmark's clients share (`ws_load`, `ws_latency`): the WebSocket they
//! hold, sending one request frame on it and waiting for the next, the operator `connect`
//! they open with, and the percentiles they report.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Sends `frame` as one text message.
pub async fn send(ws: &mut Socket, frame: &Value) -> Result<(), String> {
    ws.send(Message::text(frame.to_string()))
        .await
        .map_err(|e| e.to_string())
}

/// The next frame within `wait`; `late` says what did not come in time.
pub async fn next_frame(
    ws: &mut Socket,
    wait: Duration,
    late: impl FnOnce() -> String,
) -> Result<Message, String> {
    tokio::time::timeout(wait, ws.next())
        .await
        .map_err(|_| late())?
        .ok_or("the gateway closed the connection")?
        .map_err(|e| e.to_string())
}

/// Sends the `connect` request (id `c`) of an operator that may write, with `token`.
pub async fn send_connect(ws: &mut Socket, token: &str) -> Result<(), String> {
    let connect = json!({"type": "req", "id": "c", "method": "connect", "params": {
        "minProtocol": 4, "maxProtocol": 4, "client": {"id": "test", "mode": "test"},
        "auth": {"token": token}, "role": "operator", "scopes": ["operator.write"]}});
    send(ws, &connect).await
}

/// The `p`th percentile (nearest rank) of `sorted`; 0 for none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}
