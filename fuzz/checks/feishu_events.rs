//! The Feishu decoders' fuzz check, shared by `fuzz/fuzz_targets/feishu_events.rs` and
//! `crates/channels/tests/it/feishu_decoders.rs` (which runs it under proptest in every
//! `cargo test`), so the two cannot drift apart. See the fuzz target for what it checks.

use std::time::{Duration, Instant};

use pincer_channels::feishu::{
    EventKind, PartsBuffer, SignedHeaders, decode_content, decode_event, decode_frame,
    decrypt_event, encode_frame, encrypt, incoming, open_callback, resolve_mentions, signature,
};
use serde_json::Value;

pub const TYPES: [&str; 6] = ["text", "post", "image", "file", "sticker", "audio"];
const KEY: &str = "fuzz-key";
const NOW: i64 = 1_700_000_000;

/// One input: byte 0 picks the message type and whether the callback is signed; the rest
/// is the body.
pub fn check(data: &[u8]) {
    let [pick, body @ ..] = data else {
        return;
    };

    // A long-connection frame.
    if let Ok(frame) = decode_frame(body) {
        let again = decode_frame(&encode_frame(&frame)).expect("an encoded frame decodes");
        assert_eq!(again, frame);
        let mut parts = PartsBuffer::new(8, 1 << 16, Duration::from_secs(60));
        let sum = frame.header_u64("sum").unwrap_or(1);
        let seq = frame.header_u64("seq").unwrap_or(0);
        let payload = frame.payload.clone().unwrap_or_default();
        if let Ok(Some(whole)) = parts.add(
            frame.header("message_id"),
            sum,
            seq,
            payload,
            Instant::now(),
        ) {
            let _ = decode_event(&whole);
        }
    }

    // An event, as it comes out of a frame or a decrypted callback.
    if let Ok(event) = decode_event(body)
        && let EventKind::MessageReceived(message) = &event.kind
    {
        let value: Value = serde_json::from_slice(body).expect("a decoded event is JSON");
        assert_eq!(
            value
                .pointer("/event/message/message_id")
                .and_then(Value::as_str),
            Some(message.message.message_id.as_str())
        );
        if let Ok(incoming) = incoming(message, "ou_bot") {
            assert_eq!(incoming.message_id, message.message.message_id);
            assert!(!incoming.text.is_empty() || !incoming.resources.is_empty());
        }
    }

    // A callback body, plain and encrypted.
    let signed = pick & 0x80 != 0;
    let _ = open_callback(Some("vt"), None, SignedHeaders::default(), body, NOW);
    let _ = decrypt_event(KEY, body);
    let sealed = format!(r#"{{"encrypt":"{}"}}"#, encrypt(KEY, body, [7; 16]));
    let sig = signature("1700000000", "n", KEY, sealed.as_bytes());
    let headers = if signed {
        SignedHeaders {
            timestamp: Some("1700000000"),
            nonce: Some("n"),
            signature: Some(&sig),
        }
    } else {
        SignedHeaders::default()
    };
    let opened = open_callback(None, Some(KEY), headers, sealed.as_bytes(), NOW);
    if let Ok(event) = &opened
        && !matches!(event.kind, EventKind::UrlVerification { .. })
    {
        assert!(signed, "an unsigned event was accepted");
    }
    if signed && std::str::from_utf8(body).is_ok() {
        assert_eq!(
            opened.is_ok(),
            decode_event(body).is_ok(),
            "a signed, encrypted body opens exactly when its plaintext decodes"
        );
    }

    // A message's content.
    if let Ok(text) = std::str::from_utf8(body) {
        let kind = TYPES[usize::from(*pick & 0x7f) % TYPES.len()];
        if let Ok(content) = decode_content(kind, text) {
            let (resolved, _) = resolve_mentions(&content.text, &[], "ou_bot");
            assert_eq!(resolved, content.text.trim());
        }
    }
}
