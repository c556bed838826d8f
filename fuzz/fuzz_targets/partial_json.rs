//! Partial JSON parsing never panics, always yields a value, and agrees with serde_json on
//! complete documents.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::json_stream::parse_partial_json;

fuzz_target!(|input: &[u8]| {
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let value = parse_partial_json(text);
    if let Ok(exact) = serde_json::from_str::<serde_json::Value>(text) {
        assert_eq!(value, exact);
    }
});
