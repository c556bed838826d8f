//! Arbitrary text as a session key and as a user's `--session`: parsing never panics, and a
//! key that parses keeps parsing the same way after normalisation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_config::SessionConfig;
use pincer_turns::router::{normalize_cli_session_key, parse_session_key};

fuzz_target!(|input: &str| {
    if let Ok(parsed) = parse_session_key(input) {
        let _ = parsed.kind();
    }
    let session = SessionConfig::default();
    if let Ok(key) = normalize_cli_session_key("main", input, &session) {
        // What the CLI produces is a key the router reads back.
        assert!(parse_session_key(&key).is_ok(), "{key:?} from {input:?}");
    }
});
