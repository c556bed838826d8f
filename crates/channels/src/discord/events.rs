//! Discord gateway payloads as the adapter reads them: the `{op, d, s, t}` envelope of one
//! text frame, and the parts of the events it uses (Hello, Ready, Resumed, MESSAGE_CREATE
//! and the control opcodes), decoded leniently — unknown fields ignored, every field
//! optional that Discord may leave out — so that one odd payload costs only itself: an
//! unknown or malformed dispatch is [`GatewayEvent::Skipped`], and its `s` still counts.

use serde::Deserialize;
use serde_json::Value;

/// One decoded gateway frame: its sequence number (dispatches only) and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub seq: Option<u64>,
    pub event: GatewayEvent,
}

/// What a frame turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum GatewayEvent {
    /// op 10: heartbeat every `heartbeat_interval` ms.
    Hello { heartbeat_interval: u64 },
    /// op 11.
    HeartbeatAck,
    /// op 1: heartbeat now.
    HeartbeatRequest,
    /// op 7: reconnect and resume.
    Reconnect,
    /// op 9: the session is gone (`resumable`: it may still be resumed).
    InvalidSession { resumable: bool },
    /// op 0 `READY`.
    Ready {
        session_id: String,
        resume_gateway_url: Option<String>,
        user_id: Option<String>,
    },
    /// op 0 `RESUMED`.
    Resumed,
    /// op 0 `MESSAGE_CREATE`.
    MessageCreate(Box<Message>),
    /// Any other dispatch or opcode, or a dispatch whose data does not decode.
    Skipped { why: String },
}

pub use crate::frame_error::FrameError;

/// What a gateway frame that cannot be read is not (not JSON, not an object, no integer `op`).
const FRAME: &str = "gateway payload";

/// Decodes one text frame of the gateway.
pub fn decode_frame(text: &str) -> Result<Frame, FrameError> {
    decode_value(&crate::frame_error::parse_json(text, FRAME)?)
}

/// Decodes one gateway payload already parsed as JSON.
pub fn decode_value(value: &Value) -> Result<Frame, FrameError> {
    let object = crate::frame_error::json_object(value, FRAME)?;
    let Some(op) = object.get("op").and_then(Value::as_u64) else {
        return Err(FrameError::new(FRAME, "no integer op"));
    };
    let seq = object.get("s").and_then(Value::as_u64);
    let d = object.get("d").unwrap_or(&Value::Null);
    let event = match op {
        0 => decode_dispatch(object.get("t").and_then(Value::as_str), d),
        1 => GatewayEvent::HeartbeatRequest,
        7 => GatewayEvent::Reconnect,
        9 => GatewayEvent::InvalidSession {
            resumable: d.as_bool().unwrap_or(false),
        },
        10 => match d.get("heartbeat_interval").and_then(Value::as_u64) {
            Some(interval) if interval > 0 => GatewayEvent::Hello {
                heartbeat_interval: interval,
            },
            _ => GatewayEvent::Skipped {
                why: "a Hello without a heartbeat_interval".into(),
            },
        },
        11 => GatewayEvent::HeartbeatAck,
        other => GatewayEvent::Skipped {
            why: format!("opcode {other} is not handled"),
        },
    };
    Ok(Frame { seq, event })
}

fn decode_dispatch(t: Option<&str>, d: &Value) -> GatewayEvent {
    match t {
        Some("READY") => {
            let Some(session_id) = d.get("session_id").and_then(Value::as_str) else {
                return GatewayEvent::Skipped {
                    why: "a READY without a session_id".into(),
                };
            };
            GatewayEvent::Ready {
                session_id: session_id.to_owned(),
                resume_gateway_url: d
                    .get("resume_gateway_url")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                user_id: d
                    .pointer("/user/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            }
        }
        Some("RESUMED") => GatewayEvent::Resumed,
        Some("MESSAGE_CREATE") => match Message::deserialize(d) {
            Ok(message) => GatewayEvent::MessageCreate(Box::new(message)),
            Err(e) => GatewayEvent::Skipped {
                why: format!("malformed MESSAGE_CREATE: {e}"),
            },
        },
        Some(other) => GatewayEvent::Skipped {
            why: format!("{other} events are not handled"),
        },
        None => GatewayEvent::Skipped {
            why: "a dispatch without a type".into(),
        },
    }
}

/// Message types the adapter takes: `DEFAULT` (0) and `REPLY` (19). Joins, pins, boosts
/// and the like are not for the agent.
pub const TEXT_MESSAGE_TYPES: [u64; 2] = [0, 19];

/// A Message object (the parts the adapter uses).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub id: String,
    pub channel_id: String,
    pub guild_id: Option<String>,
    pub author: User,
    #[serde(default)]
    pub content: String,
    #[serde(default, rename = "type")]
    pub kind: u64,
    #[serde(default, deserialize_with = "crate::support::null_as_default")]
    pub mentions: Vec<User>,
    #[serde(default, deserialize_with = "crate::support::null_as_default")]
    pub attachments: Vec<Attachment>,
    /// The replied-to message (`null` when it was deleted).
    pub referenced_message: Option<Box<ReferencedMessage>>,
}

/// The replied-to message: only who wrote it matters (a reply to the bot is a mention).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReferencedMessage {
    pub author: Option<User>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct User {
    pub id: String,
    #[serde(default)]
    pub username: String,
    pub global_name: Option<String>,
    #[serde(default)]
    pub bot: bool,
}

impl User {
    pub fn display_name(&self) -> String {
        self.global_name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| self.username.clone())
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Attachment {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub filename: String,
    #[serde(default)]
    pub size: u64,
    pub url: String,
    pub content_type: Option<String>,
}

/// `GET /users/@me`'s answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Me {
    pub id: String,
    #[serde(default)]
    pub username: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> GatewayEvent {
        decode_value(&value).unwrap().event
    }

    #[test]
    fn control_opcodes() {
        assert_eq!(
            decode_frame(r#"{"op":10,"d":{"heartbeat_interval":41250},"s":null,"t":null}"#),
            Ok(Frame {
                seq: None,
                event: GatewayEvent::Hello {
                    heartbeat_interval: 41250
                }
            })
        );
        assert_eq!(event(json!({"op": 11})), GatewayEvent::HeartbeatAck);
        assert_eq!(
            event(json!({"op": 1, "d": 5})),
            GatewayEvent::HeartbeatRequest
        );
        assert_eq!(event(json!({"op": 7, "d": null})), GatewayEvent::Reconnect);
        assert_eq!(
            event(json!({"op": 9, "d": false})),
            GatewayEvent::InvalidSession { resumable: false }
        );
        assert_eq!(
            event(json!({"op": 9, "d": true})),
            GatewayEvent::InvalidSession { resumable: true }
        );
        assert_eq!(
            event(json!({"op": 10, "d": {"heartbeat_interval": 0}})),
            GatewayEvent::Skipped {
                why: "a Hello without a heartbeat_interval".into()
            }
        );
        assert_eq!(
            event(json!({"op": 42})),
            GatewayEvent::Skipped {
                why: "opcode 42 is not handled".into()
            }
        );
    }

    #[test]
    fn dispatches() {
        let ready = decode_value(&json!({
            "op": 0, "s": 1, "t": "READY",
            "d": {"session_id": "abc", "resume_gateway_url": "wss://r", "user": {"id": "9"}},
        }))
        .unwrap();
        assert_eq!(ready.seq, Some(1));
        assert_eq!(
            ready.event,
            GatewayEvent::Ready {
                session_id: "abc".into(),
                resume_gateway_url: Some("wss://r".into()),
                user_id: Some("9".into()),
            }
        );
        assert_eq!(
            event(json!({"op": 0, "s": 2, "t": "RESUMED", "d": {}})),
            GatewayEvent::Resumed
        );
        let message = event(json!({
            "op": 0, "s": 3, "t": "MESSAGE_CREATE",
            "d": {
                "id": "77", "channel_id": "500", "type": 19, "content": "hi <@9>",
                "author": {"id": "1001", "username": "ann", "global_name": "Ann"},
                "mentions": [{"id": "9", "username": "bot", "bot": true}],
                "attachments": null,
                "referenced_message": null,
                "extra": [1, 2, 3],
            },
        }));
        let GatewayEvent::MessageCreate(message) = message else {
            panic!("{message:?}");
        };
        assert_eq!(message.id, "77");
        assert_eq!(message.kind, 19);
        assert_eq!(message.guild_id, None);
        assert_eq!(message.author.display_name(), "Ann");
        assert!(message.attachments.is_empty());
        assert_eq!(message.mentions[0].id, "9");
        assert!(message.referenced_message.is_none());
    }

    #[test]
    fn unknown_and_malformed_are_skipped_with_their_seq() {
        let guild = decode_value(&json!({"op": 0, "s": 4, "t": "GUILD_CREATE", "d": {}})).unwrap();
        assert_eq!(guild.seq, Some(4));
        assert_eq!(
            guild.event,
            GatewayEvent::Skipped {
                why: "GUILD_CREATE events are not handled".into()
            }
        );
        let bad =
            decode_value(&json!({"op": 0, "s": 5, "t": "MESSAGE_CREATE", "d": {"id": 5}})).unwrap();
        assert_eq!(bad.seq, Some(5));
        assert!(
            matches!(&bad.event, GatewayEvent::Skipped { why } if why.starts_with("malformed MESSAGE_CREATE")),
            "{bad:?}"
        );
        assert!(matches!(
            event(json!({"op": 0, "t": "READY", "d": null})),
            GatewayEvent::Skipped { .. }
        ));
        assert!(matches!(
            event(json!({"op": 0, "d": {}})),
            GatewayEvent::Skipped { .. }
        ));
    }

    #[test]
    fn malformed_frames_are_errors_never_panics() {
        for text in [
            "",
            "not json",
            "[1,2]",
            "null",
            "{}",
            r#"{"op":"0"}"#,
            r#"{"op":-1}"#,
            r#"{"op":1.5}"#,
            "\u{0}",
            r#"{"op":0,"t":"MESSAGE_CREATE","d":"#,
        ] {
            assert!(decode_frame(text).is_err(), "{text:?}");
        }
        for value in [
            json!({"op": 0, "t": 5, "d": []}),
            json!({"op": 0, "t": "MESSAGE_CREATE", "d": []}),
            json!({"op": 0, "t": "MESSAGE_CREATE", "d": {"id": "1", "channel_id": "2", "author": null}}),
            json!({"op": 10, "d": "x"}),
            json!({"op": 9, "d": {"a": 1}}),
            json!({"op": 0, "s": "7", "t": "RESUMED"}),
        ] {
            let frame = decode_value(&value).unwrap();
            assert!(
                matches!(
                    frame.event,
                    GatewayEvent::Skipped { .. }
                        | GatewayEvent::InvalidSession { resumable: false }
                        | GatewayEvent::Resumed
                ),
                "{value}"
            );
        }
    }
}
