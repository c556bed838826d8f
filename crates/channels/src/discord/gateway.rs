//! One connection to Discord's gateway: Hello, Identify (or Resume of the session kept
//! from the last connection), heartbeats with a missed-ack check, dispatches handed to the
//! adapter, and what each way of ending means for the next connection.
//!
//! The session (id, resume URL, last sequence number) outlives the connection: after a
//! drop, op 7 or a close Discord allows resuming after, the next `run` resumes and Discord
//! replays what was missed. The sequence number only moves on once a dispatch has been
//! handed over, so a message interrupted mid-delivery is replayed (and deduped upstream).

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use pincer_channel_port::{ChannelError, InboundSink};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use super::events::{GatewayEvent, decode_frame};
use super::{CHANNEL, DiscordAdapter};
use crate::socket;

/// GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT.
pub const INTENTS: u64 = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);
/// How long Discord may take to say Hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(20);

/// A gateway session that may be resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub session_id: String,
    pub resume_url: String,
    pub seq: Option<u64>,
}

/// `url` with the gateway's version and encoding.
pub fn connect_url(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}v=10&encoding=json")
}

pub fn identify_payload(token: &str) -> Value {
    json!({
        "op": 2,
        "d": {
            "token": token,
            "intents": INTENTS,
            "properties": { "os": "linux", "browser": "pincer", "device": "pincer" },
        },
    })
}

pub fn resume_payload(token: &str, session: &Session) -> Value {
    json!({
        "op": 6,
        "d": { "token": token, "session_id": session.session_id, "seq": session.seq },
    })
}

pub fn heartbeat_payload(seq: Option<u64>) -> Value {
    json!({ "op": 1, "d": seq })
}

/// What a close code from Discord means: the error to report, and whether the session
/// can still be resumed.
pub fn close_error(code: u16, reason: &str) -> (ChannelError, bool) {
    let message = format!("the gateway closed the connection ({code}: {reason})");
    match code {
        4004 => (
            ChannelError::Unauthorized {
                channel: CHANNEL.into(),
                message: format!("{message} (check channels.discord.token)"),
            },
            false,
        ),
        // Invalid shard, sharding required, API version, intents: a configuration problem.
        4010..=4014 => (
            ChannelError::Api {
                channel: CHANNEL.into(),
                message: if code == 4014 {
                    format!(
                        "{message}: enable the Message Content intent for the bot in the Developer Portal"
                    )
                } else {
                    message
                },
            },
            false,
        ),
        // Invalid seq, session timed out: identify anew.
        4007 | 4009 => (connection(message), false),
        _ => (connection(message), true),
    }
}

fn connection(message: impl Into<String>) -> ChannelError {
    ChannelError::Connection {
        channel: CHANNEL.into(),
        message: message.into(),
    }
}

fn text(value: &Value) -> Ws {
    Ws::text(value.to_string())
}

impl DiscordAdapter {
    fn session(&self) -> Option<Session> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_session(&self, session: Option<Session>) {
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = session;
    }

    fn set_seq(&self, seq: u64) {
        if let Some(session) = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            session.seq = Some(session.seq.map_or(seq, |s| s.max(seq)));
        }
    }

    /// One connection, from the WebSocket handshake until it ends.
    pub(super) async fn connect(
        &self,
        sink: &InboundSink,
        stop: &CancellationToken,
    ) -> Result<(), ChannelError> {
        self.ensure_me().await?;
        let resuming = self.session();
        let url = match &resuming {
            Some(session) => session.resume_url.clone(),
            None => {
                let bot: Value = self.rest.get("/gateway/bot").await?;
                bot.get("url")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| connection("/gateway/bot gave no url"))?
            }
        };
        let Some(mut ws) = socket::open(CHANNEL, "the gateway", &connect_url(&url), stop).await?
        else {
            return Ok(());
        };

        // Hello.
        let interval = loop {
            let frame = tokio::select! {
                frame = tokio::time::timeout(HELLO_TIMEOUT, ws.next()) => frame
                    .map_err(|_| connection("no Hello from the gateway"))?,
                () = stop.cancelled() => return Ok(()),
            };
            match frame {
                Some(Ok(Ws::Text(body))) => {
                    sink.health().heard();
                    if let Ok(frame) = decode_frame(body.as_str())
                        && let GatewayEvent::Hello { heartbeat_interval } = frame.event
                    {
                        break Duration::from_millis(heartbeat_interval);
                    }
                }
                Some(Ok(Ws::Close(frame))) => return Err(self.closed(frame)),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(connection(e.to_string())),
                None => return Err(connection("the gateway closed before Hello")),
            }
        };

        let token = self.rest.token().to_owned();
        let hello_reply = match &resuming {
            Some(session) => resume_payload(&token, session),
            None => identify_payload(&token),
        };
        ws.send(text(&hello_reply))
            .await
            .map_err(|e| connection(e.to_string()))?;

        // The first beat after a random part of the interval (so that many clients
        // reconnecting at once do not beat in step), then every interval.
        let jitter = interval.mul_f64(f64::from(jitter_fraction()));
        let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + jitter, interval);
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut awaiting_ack = false;

        loop {
            let frame = tokio::select! {
                () = stop.cancelled() => {
                    // A 1000 close ends the session: the next start identifies.
                    let _ = ws.close(Some(CloseFrame { code: CloseCode::Normal, reason: "".into() })).await;
                    self.set_session(None);
                    return Ok(());
                }
                _ = beat.tick() => {
                    if awaiting_ack {
                        // A zombie connection: drop it (not 1000, so we can resume).
                        let _ = ws.close(Some(CloseFrame { code: CloseCode::from(4000), reason: "missed heartbeat ack".into() })).await;
                        return Err(connection("no heartbeat ack from the gateway"));
                    }
                    let seq = self.session().and_then(|s| s.seq);
                    ws.send(text(&heartbeat_payload(seq))).await.map_err(|e| connection(e.to_string()))?;
                    awaiting_ack = true;
                    continue;
                }
                frame = ws.next() => frame,
            };
            let received = socket::received(frame, sink, (CHANNEL, "gateway"), decode_frame);
            let frame = match received.map_err(connection)? {
                socket::Received::Frame(frame) => frame,
                socket::Received::Closed(frame) => return Err(self.closed(frame)),
                socket::Received::Nothing => continue,
            };
            match frame.event {
                GatewayEvent::HeartbeatAck => awaiting_ack = false,
                GatewayEvent::HeartbeatRequest => {
                    let seq = self.session().and_then(|s| s.seq);
                    ws.send(text(&heartbeat_payload(seq)))
                        .await
                        .map_err(|e| connection(e.to_string()))?;
                }
                GatewayEvent::Reconnect => {
                    tracing::info!("discord: the gateway asked to reconnect");
                    let _ = ws
                        .close(Some(CloseFrame {
                            code: CloseCode::from(4000),
                            reason: "reconnecting".into(),
                        }))
                        .await;
                    return Ok(());
                }
                GatewayEvent::InvalidSession { resumable } => {
                    tracing::info!(resumable, "discord: invalid session; identifying anew");
                    if !resumable {
                        self.set_session(None);
                    }
                    // Discord asks for a short random wait before identifying again.
                    let wait = Duration::from_millis(500).mul_f32(1.0 + 2.0 * jitter_fraction());
                    tokio::time::sleep(wait).await;
                    let payload = match self.session() {
                        Some(session) => resume_payload(&token, &session),
                        None => identify_payload(&token),
                    };
                    ws.send(text(&payload))
                        .await
                        .map_err(|e| connection(e.to_string()))?;
                }
                GatewayEvent::Ready {
                    session_id,
                    resume_gateway_url,
                    ..
                } => {
                    self.set_session(Some(Session {
                        session_id,
                        resume_url: resume_gateway_url.unwrap_or_else(|| url.clone()),
                        seq: frame.seq,
                    }));
                    sink.health().connected();
                    tracing::info!("discord: connected (identified)");
                }
                GatewayEvent::Resumed => {
                    sink.health().connected();
                    tracing::info!("discord: connected (resumed)");
                }
                GatewayEvent::MessageCreate(message) => {
                    if let Some(inbound) = self.inbound(*message).await
                        && !sink.deliver(inbound).await
                    {
                        // The gateway is stopping: not confirmed (its seq stays behind).
                        return Ok(());
                    }
                }
                GatewayEvent::Hello { .. } => {}
                GatewayEvent::Skipped { why } => {
                    tracing::trace!(%why, "discord gateway payload skipped");
                }
            }
            if let Some(seq) = frame.seq {
                self.set_seq(seq);
            }
        }
    }

    /// The error for a close frame from Discord, forgetting the session when it cannot be
    /// resumed.
    fn closed(&self, frame: Option<CloseFrame>) -> ChannelError {
        let (code, reason) = frame.map_or((1005, String::new()), |f| {
            (u16::from(f.code), f.reason.as_str().to_owned())
        });
        let (error, resumable) = close_error(code, &reason);
        if !resumable {
            self.set_session(None);
        }
        error
    }
}

/// A number in [0, 1): spread, not secrecy.
fn jitter_fraction() -> f32 {
    (pincer_base::id::random_u64() % 1000) as f32 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads() {
        assert_eq!(
            connect_url("wss://gateway.discord.gg"),
            "wss://gateway.discord.gg?v=10&encoding=json"
        );
        assert_eq!(
            connect_url("ws://h/g?x=1"),
            "ws://h/g?x=1&v=10&encoding=json"
        );
        assert_eq!(
            identify_payload("t"),
            json!({"op": 2, "d": {"token": "t", "intents": 37377,
                "properties": {"os": "linux", "browser": "pincer", "device": "pincer"}}})
        );
        let session = Session {
            session_id: "s".into(),
            resume_url: "ws://r".into(),
            seq: Some(4),
        };
        assert_eq!(
            resume_payload("t", &session),
            json!({"op": 6, "d": {"token": "t", "session_id": "s", "seq": 4}})
        );
        assert_eq!(heartbeat_payload(None), json!({"op": 1, "d": null}));
    }

    #[test]
    fn close_codes() {
        assert!(matches!(
            close_error(4004, "Authentication failed."),
            (ChannelError::Unauthorized { .. }, false)
        ));
        assert!(matches!(
            close_error(4014, "Disallowed intent(s)."),
            (ChannelError::Api { .. }, false)
        ));
        assert!(matches!(
            close_error(4009, "Session timed out."),
            (ChannelError::Connection { .. }, false)
        ));
        let (error, resumable) = close_error(4000, "Unknown error.");
        assert!(resumable);
        assert_eq!(
            error.to_string(),
            "discord: connection failed: the gateway closed the connection (4000: Unknown error.)"
        );
    }
}
