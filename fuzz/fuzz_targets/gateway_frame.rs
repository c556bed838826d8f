//! Arbitrary text as a WebSocket frame from a client: parsing never panics, and what it
//! accepts is a request with a non-empty id and method.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_gateway::server::frames::{MAX_PREAUTH_FRAME, parse_request};

fuzz_target!(|input: &str| {
    if let Ok(req) = parse_request(input, MAX_PREAUTH_FRAME) {
        assert!(!req.id.is_empty() && !req.method.is_empty());
        assert!(req.params.is_object() || !req.params.is_null());
    }
});
