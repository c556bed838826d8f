//! Arbitrary bytes as one Discord gateway frame, and as a REST answer with an arbitrary
//! HTTP status: decoding never panics; a frame that decodes keeps its `s`, and a
//! `MESSAGE_CREATE` that decodes has the ids the payload gave.
//!
//! Input: byte 0 picks the status (200, 204, 400, 401, 429, 502); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_channels::discord::{GatewayEvent, decode_frame, decode_response};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let [pick, body @ ..] = data else {
        return;
    };
    let status = [200, 204, 400, 401, 429, 502][usize::from(*pick) % 6];
    let _ = decode_response::<Value>(status, Some(1.5), body);
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    if let Ok(frame) = decode_frame(text) {
        let value: Value = serde_json::from_str(text).expect("a decoded frame is JSON");
        assert_eq!(frame.seq, value.get("s").and_then(Value::as_u64));
        if let GatewayEvent::MessageCreate(message) = &frame.event {
            assert_eq!(
                value.pointer("/d/id").and_then(Value::as_str),
                Some(message.id.as_str())
            );
            assert_eq!(
                value.pointer("/d/channel_id").and_then(Value::as_str),
                Some(message.channel_id.as_str())
            );
        }
    }
});
