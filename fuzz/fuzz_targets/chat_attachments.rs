//! Arbitrary bytes as the `attachments` of a `chat.send` or `agent` request (a JSON array,
//! or one element), and as the bytes of a file sent in one: reading them never panics, an
//! accepted attachment is within the size limit, and any file sent as padded base64 (bare
//! or as a `data:` URL) comes back byte for byte.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use pincer_gateway::server::methods::attachments::{MAX_ATTACHMENTS, decode, decode_all};
use serde_json::{Value, json};

const MAX_BYTES: u64 = 64;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let accepted = match &value {
            Value::Array(items) => decode_all(items, MAX_BYTES).ok(),
            item => decode(0, item, MAX_BYTES).ok().map(|a| vec![a]),
        };
        for attachment in accepted.iter().flatten() {
            assert!(attachment.bytes.len() as u64 <= MAX_BYTES);
            assert!(!attachment.file_name.trim().is_empty());
        }
        if let Some(accepted) = accepted {
            assert!(accepted.len() <= MAX_ATTACHMENTS);
        }
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(data);
    for content in [encoded.clone(), format!("data:image/png;base64,{encoded}")] {
        let result = decode(0, &json!({"content": content}), u64::MAX);
        if data.is_empty() {
            assert!(result.is_err());
        } else {
            assert_eq!(result.map(|a| a.bytes).ok().as_deref(), Some(data));
        }
    }
});
