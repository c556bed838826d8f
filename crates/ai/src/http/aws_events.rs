//! AWS event-stream messages handed to the event decoders (see [`Framing::AwsEventStream`]).
//!
//! [`Framing::AwsEventStream`]: super::Framing::AwsEventStream

use super::{DecodeError, Decoded, StreamDecoder};
use crate::builder::MessageBuilder;
use crate::framing::SseEvent;
use crate::framing::event_stream::EventMessage;

/// An event-stream message as the event decoders read it: events and exceptions by their
/// type header, with the JSON payload as data; `error` messages (their code and text in
/// headers) as an `error` event with `{"errorCode", "message"}`.
pub(super) fn deliver(
    decoder: &mut dyn StreamDecoder,
    message: &EventMessage<'_>,
    out: &mut MessageBuilder,
) -> Decoded {
    let text = |name: &str| message.header_str(name).unwrap_or("");
    let payload = std::str::from_utf8(message.payload)
        .map_err(|e| DecodeError(format!("an event-stream payload is not UTF-8: {e}")))?;
    match text(":message-type") {
        "event" => super::deliver(
            decoder,
            SseEvent {
                event: text(":event-type"),
                data: payload,
            },
            out,
        ),
        "exception" => {
            let data = if payload.trim().is_empty() {
                "{}"
            } else {
                payload
            };
            super::deliver(
                decoder,
                SseEvent {
                    event: text(":exception-type"),
                    data,
                },
                out,
            )
        }
        "error" => {
            let data = serde_json::json!({
                "errorCode": text(":error-code"),
                "message": text(":error-message"),
            })
            .to_string();
            super::deliver(
                decoder,
                SseEvent {
                    event: "error",
                    data: &data,
                },
                out,
            )
        }
        other => Err(DecodeError(format!(
            "unknown event-stream message type {other:?}"
        ))),
    }
}
