//! The Feishu inbound decoders under arbitrary input, as `fuzz/fuzz_targets/feishu_events.rs`
//! runs them (the same checks, here with proptest so every `cargo test` runs a few hundred
//! cases): frames, split payloads, events, callbacks (plain, encrypted, signed or not) and
//! message contents never panic, and what decodes keeps what the input said.

use std::time::{Duration, Instant};

use pincer_channels::feishu::{
    EventKind, Frame, Header, PartsBuffer, decode_event, decode_frame, encode_frame, incoming,
};
use proptest::prelude::*;
use serde_json::{Value, json};

#[path = "../../../../fuzz/checks/feishu_events.rs"]
mod fuzz_check;
use fuzz_check::{TYPES, check};

/// A message event with arbitrary texts in its fields.
fn event_json(text: &str, chat_type: &str, message_type: &str, key: &str) -> Vec<u8> {
    let content = match message_type {
        "text" => json!({ "text": text }).to_string(),
        "image" => json!({ "image_key": key }).to_string(),
        "post" => json!({ "zh_cn": { "title": text, "content": [[{"tag": "text", "text": text}, {"tag": "at", "user_id": key}]] } }).to_string(),
        _ => text.to_owned(),
    };
    json!({
        "schema": "2.0",
        "header": { "event_id": "e", "event_type": "im.message.receive_v1", "token": "vt" },
        "event": {
            "sender": { "sender_id": { "open_id": "ou_1" }, "sender_type": "user" },
            "message": {
                "message_id": format!("om_{key}"), "chat_id": "oc_1", "chat_type": chat_type,
                "message_type": message_type, "content": content,
                "mentions": [{ "key": key, "id": { "open_id": "ou_bot" }, "name": text }],
            },
        },
    })
    .to_string()
    .into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(&data);
    }

    #[test]
    fn arbitrary_frames(
        seq_id in any::<u64>(),
        service in any::<i32>(),
        method in 0i32..3,
        headers in proptest::collection::vec(("[a-z_]{1,10}", "[0-9a-z]{0,6}"), 0..6),
        payload in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..256)),
        pick in any::<u8>(),
    ) {
        let frame = Frame {
            seq_id,
            log_id: seq_id ^ 1,
            service,
            method,
            headers: headers.into_iter().map(|(key, value)| Header { key, value }).collect(),
            payload,
            ..Frame::default()
        };
        let mut data = vec![pick];
        data.extend(encode_frame(&frame));
        check(&data);
        prop_assert_eq!(decode_frame(&data[1..]).unwrap(), frame);
    }

    #[test]
    fn arbitrary_events(
        text in "[a-zA-Z0-9 _éü中文\\n\"{}]{0,40}",
        chat_type in prop::sample::select(vec!["p2p", "group", "topic"]),
        message_type in prop::sample::select(TYPES.to_vec()),
        key in "(@_user_[0-9]{1,2})?",
        pick in any::<u8>(),
    ) {
        let event = event_json(&text, chat_type, message_type, &key);
        let mut data = vec![pick];
        data.extend(&event);
        check(&data);
        let decoded = decode_event(&event).unwrap();
        let EventKind::MessageReceived(message) = decoded.kind else {
            panic!("{:?}", decoded.kind);
        };
        if let Ok(incoming) = incoming(&message, "ou_bot")
            && !key.is_empty()
        {
            prop_assert!(!incoming.text.contains(&key));
        }
    }
}

#[test]
fn split_frames_join() {
    let payload = event_json("hello", "p2p", "text", "k1");
    let mut parts = PartsBuffer::new(8, 1 << 16, Duration::from_secs(60));
    let chunks: Vec<&[u8]> = payload.chunks(payload.len() / 3 + 1).collect();
    let now = Instant::now();
    let mut whole = None;
    for (seq, chunk) in chunks.iter().enumerate().rev() {
        whole = parts
            .add(
                Some("f1"),
                chunks.len() as u64,
                seq as u64,
                chunk.to_vec(),
                now,
            )
            .unwrap();
    }
    let event = decode_event(&whole.unwrap()).unwrap();
    assert!(matches!(event.kind, EventKind::MessageReceived(_)));
    let _: Value = serde_json::from_slice(&payload).unwrap();
}
