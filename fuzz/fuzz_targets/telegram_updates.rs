//! Arbitrary bytes as a Bot API answer (the `{ok, result | error_code, description}`
//! envelope), with an arbitrary HTTP status: decoding never panics, and a `getUpdates`
//! result decodes update by update — every element with an integer `update_id` is kept
//! (a message, or a skipped update whose id still confirms it), in order.
//!
//! Input: byte 0 picks the status (200, 400, 401, 429, 502); the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_channels::telegram::{decode_envelope, decode_updates};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let [pick, body @ ..] = data else {
        return;
    };
    let status = [200, 400, 401, 429, 502][usize::from(*pick) % 5];
    if let Ok(result) = decode_envelope::<Value>(status, body) {
        if let Ok(updates) = decode_updates(&result) {
            let with_ids = result
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.get("update_id").and_then(Value::as_i64))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            let got: Vec<i64> = updates.iter().map(|u| u.update_id()).collect();
            assert_eq!(got, with_ids, "every update with an id is accounted for");
        }
    }
    // The body on its own, as a `result`.
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        let _ = decode_updates(&value);
    }
});
