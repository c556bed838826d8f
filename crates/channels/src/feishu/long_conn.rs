//! One long connection: the tenant token and bot identity, a fresh endpoint (a new ticket
//! each time), the WebSocket, then pings every `PingInterval`, data frames decoded (split
//! events joined), handed to the gateway, and only then acked — so an event the gateway
//! never got is redelivered by Feishu, and dedupe upstream drops what comes twice.
//!
//! A connection that hears nothing (no pong, no frame at all) for a ping interval plus
//! [`DEAD_AFTER_SILENCE`] is dead and is reported as such (the supervisor reconnects):
//! a gateway whose status says "connected" while its socket silently died is the most
//! common complaint about Feishu bots.

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use pincer_channel_port::{ChannelError, InboundSink};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_util::sync::CancellationToken;

use super::events::{EventKind, decode_event};
use super::frame::{
    Frame, METHOD_CONTROL, METHOD_DATA, PartsBuffer, ack_frame, decode_frame, encode_frame,
    ping_frame, service_id,
};
use super::{CHANNEL, Inner};
use crate::socket;

/// How long past a ping interval silence is tolerated.
pub const DEAD_AFTER_SILENCE: Duration = Duration::from_secs(10);
/// Feishu's default ping interval (seconds), when the endpoint gives none.
const DEFAULT_PING_SECS: u64 = 120;

fn connection(message: impl Into<String>) -> ChannelError {
    ChannelError::Connection {
        channel: CHANNEL.into(),
        message: message.into(),
    }
}

/// A ping interval in seconds as a duration, within 1 s – 1 h (a silly value from the
/// server must neither spin nor disable the liveness check).
pub fn ping_interval(secs: Option<u64>) -> Duration {
    Duration::from_secs(secs.unwrap_or(DEFAULT_PING_SECS).clamp(1, 3600))
}

/// The `PingInterval` of a pong's ClientConfig payload, if it has one.
pub fn pong_ping_interval(frame: &Frame) -> Option<u64> {
    let payload = frame.payload.as_deref().filter(|p| !p.is_empty())?;
    serde_json::from_slice::<Value>(payload)
        .ok()?
        .get("PingInterval")?
        .as_u64()
}

fn binary(frame: &Frame) -> Ws {
    Ws::Binary(encode_frame(frame).into())
}

impl Inner {
    /// One long connection, from the endpoint call until it ends (`Err`) or `stop` (`Ok`).
    pub(super) async fn long_connection(
        &self,
        sink: &InboundSink,
        stop: &CancellationToken,
    ) -> Result<(), ChannelError> {
        self.ensure_bot().await?;
        let endpoint = self.api.ws_endpoint().await?;
        let service = service_id(&endpoint.url);
        let mut ping_every = ping_interval(endpoint.ping_interval);
        let Some(mut ws) =
            socket::open(CHANNEL, "the long connection", &endpoint.url, stop).await?
        else {
            return Ok(());
        };
        sink.health().connected();
        tracing::info!("feishu: long connection open");
        let mut next_ping = tokio::time::Instant::now();
        let mut deadline = tokio::time::Instant::now() + ping_every + DEAD_AFTER_SILENCE;
        let mut parts = PartsBuffer::default();
        loop {
            let message = tokio::select! {
                () = stop.cancelled() => {
                    let _ = ws.close(None).await;
                    return Ok(());
                }
                () = tokio::time::sleep_until(next_ping) => {
                    ws.send(binary(&ping_frame(service)))
                        .await
                        .map_err(|e| connection(format!("cannot send a ping: {e}")))?;
                    next_ping = tokio::time::Instant::now() + ping_every;
                    continue;
                }
                () = tokio::time::sleep_until(deadline) => {
                    let _ = ws.close(None).await;
                    return Err(connection(format!(
                        "nothing heard on the long connection for {} s",
                        (ping_every + DEAD_AFTER_SILENCE).as_secs()
                    )));
                }
                message = ws.next() => message,
            };
            let bytes = match message {
                Some(Ok(Ws::Binary(bytes))) => bytes,
                Some(Ok(Ws::Close(frame))) => {
                    let why = frame.map_or_else(String::new, |f| {
                        format!(" ({}: {})", u16::from(f.code), f.reason)
                    });
                    return Err(connection(format!(
                        "Feishu closed the long connection{why}"
                    )));
                }
                Some(Ok(_)) => {
                    // WebSocket pings and stray text still prove the socket alive.
                    deadline = tokio::time::Instant::now() + ping_every + DEAD_AFTER_SILENCE;
                    continue;
                }
                Some(Err(e)) => return Err(connection(e.to_string())),
                None => return Err(connection("the long connection ended")),
            };
            sink.health().heard();
            let frame = match decode_frame(&bytes) {
                Ok(frame) => frame,
                Err(e) => {
                    tracing::warn!(error = %e, "feishu: undecodable frame ignored");
                    deadline = tokio::time::Instant::now() + ping_every + DEAD_AFTER_SILENCE;
                    continue;
                }
            };
            match frame.method {
                METHOD_CONTROL => {
                    if frame.kind() == Some("pong")
                        && let Some(secs) = pong_ping_interval(&frame)
                    {
                        let asked = ping_interval(Some(secs));
                        if asked != ping_every {
                            tracing::debug!(secs, "feishu: ping interval changed");
                            ping_every = asked;
                            next_ping = next_ping.min(tokio::time::Instant::now() + asked);
                        }
                    }
                }
                METHOD_DATA => {
                    let Some(ack) = self.data_frame(frame, &mut parts, sink).await else {
                        // The gateway is stopping: not acked, so Feishu redelivers.
                        return Ok(());
                    };
                    if let Some(ack) = ack {
                        ws.send(binary(&ack))
                            .await
                            .map_err(|e| connection(format!("cannot ack an event: {e}")))?;
                    }
                }
                other => tracing::debug!(method = other, "feishu: frame of unknown method ignored"),
            }
            // Handling (downloads, a busy gateway) took time that was not silence.
            deadline = tokio::time::Instant::now() + ping_every + DEAD_AFTER_SILENCE;
        }
    }

    /// Handles one data frame: `None` when the gateway is stopping (no ack), else the ack
    /// to send (`Some(None)`: none yet, the event's other parts are still to come).
    async fn data_frame(
        &self,
        frame: Frame,
        parts: &mut PartsBuffer,
        sink: &InboundSink,
    ) -> Option<Option<Frame>> {
        let started = Instant::now();
        let sum = frame.header_u64("sum").unwrap_or(1);
        let seq = frame.header_u64("seq").unwrap_or(0);
        let payload = frame.payload.clone().unwrap_or_default();
        let whole = match parts.add(frame.header("message_id"), sum, seq, payload, started) {
            // Acked once whole, as Feishu's own SDKs do.
            Ok(None) => return Some(None),
            Ok(Some(whole)) => Some(whole),
            Err(e) => {
                // Resending the same parts would fail the same way: acked and dropped.
                tracing::warn!(error = %e, "feishu: split event dropped");
                None
            }
        };
        if let Some(payload) = whole {
            match frame.kind() {
                Some("event") => match decode_event(&payload) {
                    Ok(event) => match event.kind {
                        EventKind::MessageReceived(message) => {
                            if let Some(inbound) = self.inbound(&message).await
                                && !sink.deliver(inbound).await
                            {
                                return None;
                            }
                        }
                        EventKind::Skipped { why } => {
                            tracing::trace!(%why, "feishu: event skipped");
                        }
                        EventKind::UrlVerification { .. } => {}
                    },
                    Err(e) => {
                        tracing::warn!(error = %e, "feishu: undecodable event acked and dropped")
                    }
                },
                Some("card") => tracing::debug!("feishu: card action acked and ignored"),
                other => tracing::debug!(kind = ?other, "feishu: data frame acked and ignored"),
            }
        }
        let handled_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Some(Some(ack_frame(&frame, handled_ms)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feishu::frame::Header;

    #[test]
    fn intervals() {
        assert_eq!(ping_interval(None), Duration::from_secs(120));
        assert_eq!(ping_interval(Some(0)), Duration::from_secs(1));
        assert_eq!(ping_interval(Some(u64::MAX)), Duration::from_secs(3600));
        let pong = |payload: Option<&[u8]>| Frame {
            method: METHOD_CONTROL,
            headers: vec![Header {
                key: "type".into(),
                value: "pong".into(),
            }],
            payload: payload.map(<[u8]>::to_vec),
            ..Frame::default()
        };
        assert_eq!(
            pong_ping_interval(&pong(Some(br#"{"PingInterval":5,"ReconnectCount":-1}"#))),
            Some(5)
        );
        assert_eq!(pong_ping_interval(&pong(None)), None);
        assert_eq!(pong_ping_interval(&pong(Some(b"\xff"))), None);
    }
}
