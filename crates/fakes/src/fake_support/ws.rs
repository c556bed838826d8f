//! What the fakes with a WebSocket share (Discord's gateway, Slack's Socket Mode, Feishu's
//! long connection): what the state queues for a connection, and how the task that owns the
//! socket carries it out. Each connection task writes what arrives on its channel (queued
//! under the state lock, so it keeps its order) and reads the client's frames itself.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

/// What a connection task must do next.
#[derive(Debug)]
pub(crate) enum Out {
    Text(String),
    Binary(Vec<u8>),
    /// Send a close frame (with this code and reason, if any), then end.
    Close(Option<(u16, &'static str)>),
    /// Stop reading and writing until the fake stops (a dead peer: pings go unanswered).
    Stall,
    /// Drop the socket without a close frame (a network failure).
    Drop,
}

/// Carries out `out` (`None`: the state forgot the connection); `false` when the
/// connection is over.
pub(crate) async fn deliver(
    socket: &mut WebSocket,
    out: Option<Out>,
    stop: &CancellationToken,
) -> bool {
    match out {
        Some(Out::Text(text)) => socket.send(Message::Text(text.into())).await.is_ok(),
        Some(Out::Binary(bytes)) => socket.send(Message::Binary(bytes.into())).await.is_ok(),
        Some(Out::Close(frame)) => {
            close(socket, frame).await;
            false
        }
        Some(Out::Stall) => {
            // The connection is already forgotten; hold the socket, silent.
            stop.cancelled().await;
            false
        }
        // Dropping the socket closes the TCP connection without a close frame.
        Some(Out::Drop) | None => false,
    }
}

/// Sends a close frame, then waits (a second at most) for the client's, for a clean
/// closing handshake.
pub(crate) async fn close(socket: &mut WebSocket, frame: Option<(u16, &'static str)>) {
    let frame = frame.map(|(code, reason)| CloseFrame {
        code,
        reason: reason.into(),
    });
    if socket.send(Message::Close(frame)).await.is_ok() {
        let _ = timeout(Duration::from_secs(1), async {
            while let Some(Ok(message)) = socket.recv().await {
                if matches!(message, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
    }
}
