//! Arbitrary bytes as one Slack Socket Mode frame, as a Web API answer with an arbitrary
//! HTTP status, and as message text: decoding never panics; a frame with a string
//! `envelope_id` is always an envelope (so it gets acked) with that id; a decoded message
//! has the channel, user and ts the payload gave; text without Slack's markup stays as it is.
//!
//! Input: byte 0 picks the status (200, 400, 429, 502); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_channels::slack::{
    Event, SocketFrame, decode_frame, decode_response, mentions, plain_text,
};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let [pick, body @ ..] = data else {
        return;
    };
    let status = [200, 400, 429, 502][usize::from(*pick) % 4];
    let _ = decode_response("chat.postMessage", status, Some(1.5), body);
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    let plain = plain_text(text, Some("U0BOT"));
    if !text.contains(['<', '>', '&']) {
        assert_eq!(plain, text.trim(), "plain text without markup is kept");
    }
    let _ = mentions(text, "U0BOT");
    let Ok(frame) = decode_frame(text) else {
        return;
    };
    let value: Value = serde_json::from_str(text).expect("a decoded frame is JSON");
    let envelope_id = value.get("envelope_id").and_then(Value::as_str);
    match &frame {
        SocketFrame::Envelope(envelope) => {
            assert_eq!(Some(envelope.envelope_id.as_str()), envelope_id);
            if let Event::Message(message) = &envelope.event {
                let event = value.pointer("/payload/event").expect("an event");
                assert_eq!(
                    event.get("channel").and_then(Value::as_str),
                    Some(message.channel.as_str())
                );
                assert_eq!(
                    event.get("user").and_then(Value::as_str),
                    Some(message.user.as_str())
                );
                assert_eq!(
                    event.get("ts").and_then(Value::as_str),
                    Some(message.ts.as_str())
                );
                assert!(event.get("bot_id").is_none_or(Value::is_null));
            }
        }
        _ => assert!(
            envelope_id.is_none(),
            "an envelope id must be acked: {text:?}"
        ),
    }
});
