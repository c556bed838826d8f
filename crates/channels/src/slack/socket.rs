//! One Socket Mode connection: `auth.test` (once: the bot's user id), a fresh
//! `apps.connections.open` URL, the WebSocket, `hello`, then envelopes until the connection
//! ends — each handed to the gateway first and acked after (so an envelope whose message
//! was not handed over is redelivered by Slack, never lost), exactly once per frame
//! received, redeliveries included (the gateway's dedupe drops the repeat).
//!
//! A silent socket is probed: after [`Keepalive::idle`] without any frame a ping is sent,
//! and with nothing back within [`Keepalive::pong_timeout`] the connection counts as dead.
//! Pings from Slack are answered by tungstenite itself. Every way of ending but the stop
//! token is an error, and the supervisor connects again.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use pincer_channel_port::{ChannelError, InboundSink};
use serde_json::Value;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use super::events::{Event, SocketFrame, ack_frame, decode_frame};
use super::web::Token;
use super::{CHANNEL, SlackAdapter};
use crate::socket;

/// How a quiet connection is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keepalive {
    /// Silence after which a ping is sent (default 30 s).
    pub idle: Duration,
    /// How long the answer to that ping may take before the socket counts as dead
    /// (default 10 s).
    pub pong_timeout: Duration,
}

impl Default for Keepalive {
    fn default() -> Self {
        Self {
            idle: Duration::from_secs(30),
            pong_timeout: Duration::from_secs(10),
        }
    }
}

fn connection(message: impl Into<String>) -> ChannelError {
    ChannelError::Connection {
        channel: CHANNEL.into(),
        message: message.into(),
    }
}

/// What a `disconnect` frame means for the next connection.
pub fn disconnect_error(reason: &str) -> ChannelError {
    if reason == "link_disabled" {
        ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: "Socket Mode is turned off for the app (link_disabled): turn it on in the app's settings".into(),
        }
    } else {
        connection(format!("Slack asked to reconnect ({reason})"))
    }
}

impl SlackAdapter {
    /// One connection, from `apps.connections.open` until it ends.
    pub(super) async fn connect(
        &self,
        sink: &InboundSink,
        stop: &CancellationToken,
    ) -> Result<(), ChannelError> {
        self.ensure_identity().await?;
        let opened = self
            .web
            .call_form("apps.connections.open", &[], Token::App)
            .await?;
        let url = opened
            .get("url")
            .and_then(Value::as_str)
            .ok_or_else(|| connection("apps.connections.open gave no url"))?
            .to_owned();
        let Some(mut ws) = socket::open(CHANNEL, "the Socket Mode connection", &url, stop).await?
        else {
            return Ok(());
        };
        let keepalive = self.keepalive;
        let mut last_heard = Instant::now();
        let mut ping_sent: Option<Instant> = None;
        loop {
            let deadline = match ping_sent {
                Some(at) => at + keepalive.pong_timeout,
                None => last_heard + keepalive.idle,
            };
            let frame = tokio::select! {
                () = stop.cancelled() => {
                    let _ = ws.close(Some(CloseFrame { code: CloseCode::Normal, reason: "".into() })).await;
                    return Ok(());
                }
                () = tokio::time::sleep_until(deadline) => {
                    if ping_sent.is_some() {
                        return Err(connection(format!(
                            "no answer to a ping within {} s: the connection is dead",
                            keepalive.pong_timeout.as_secs_f32()
                        )));
                    }
                    ws.send(Ws::Ping(b"pincer".to_vec().into()))
                        .await
                        .map_err(|e| connection(e.to_string()))?;
                    ping_sent = Some(Instant::now());
                    continue;
                }
                frame = ws.next() => frame,
            };
            last_heard = Instant::now();
            ping_sent = None;
            // Pings and pongs are signs of life only (`last_heard` above).
            let received = socket::received(frame, sink, (CHANNEL, "Socket Mode"), decode_frame);
            let frame = match received.map_err(connection)? {
                socket::Received::Frame(frame) => frame,
                socket::Received::Closed(frame) => {
                    let (code, reason) = frame.map_or((1005, String::new()), |f| {
                        (u16::from(f.code), f.reason.as_str().to_owned())
                    });
                    return Err(connection(format!(
                        "Slack closed the connection ({code}: {reason})"
                    )));
                }
                socket::Received::Nothing => continue,
            };
            match frame {
                SocketFrame::Hello { app_id } => {
                    sink.health().connected();
                    tracing::info!(app = ?app_id, "slack: connected (Socket Mode)");
                }
                SocketFrame::Disconnect { reason } => {
                    tracing::info!(%reason, "slack: Slack asked to disconnect");
                    let _ = ws
                        .close(Some(CloseFrame {
                            code: CloseCode::Normal,
                            reason: "".into(),
                        }))
                        .await;
                    return Err(disconnect_error(&reason));
                }
                SocketFrame::Envelope(envelope) => {
                    if envelope.retry_attempt > 0 {
                        tracing::debug!(envelope = %envelope.envelope_id, attempt = envelope.retry_attempt, "slack: envelope redelivered");
                    }
                    match envelope.event {
                        Event::Message(message) => {
                            if let Some(inbound) = self.inbound(*message, envelope.team_id).await
                                && !sink.deliver(inbound).await
                            {
                                // The gateway is stopping: not acked, so Slack sends it again.
                                return Ok(());
                            }
                        }
                        Event::Skipped { why } => {
                            tracing::debug!(kind = %envelope.kind, %why, "slack: envelope skipped");
                        }
                    }
                    ws.send(Ws::text(ack_frame(&envelope.envelope_id)))
                        .await
                        .map_err(|e| connection(e.to_string()))?;
                }
                SocketFrame::Skipped { why } => {
                    tracing::debug!(%why, "slack: frame skipped");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disconnect_reasons() {
        assert!(matches!(
            disconnect_error("link_disabled"),
            ChannelError::Unauthorized { .. }
        ));
        assert_eq!(
            disconnect_error("refresh_requested").to_string(),
            "slack: connection failed: Slack asked to reconnect (refresh_requested)"
        );
        let keepalive = Keepalive::default();
        assert_eq!(keepalive.idle, Duration::from_secs(30));
        assert_eq!(keepalive.pong_timeout, Duration::from_secs(10));
    }
}
