//! Arbitrary bytes through the github-copilot sign-in's parsers of outside input: GitHub's
//! device-code answer, its access-token poll answers, Copilot's token answer, the API host
//! named in a Copilot token, and a typed GitHub Enterprise domain. None may panic; a parsed
//! token's expiry never exceeds what the answer said.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::copilot::base_url_from_token;
use pincer_auth::oauth::copilot::{
    normalize_domain, parse_copilot_token, parse_device_code, parse_device_poll,
};

fuzz_target!(|input: &[u8]| {
    let _ = parse_device_code(input);
    let _ = parse_device_poll(input);
    if let Ok(token) = parse_copilot_token(input) {
        assert!(!token.token.expose().is_empty());
    }
    if let Ok(text) = std::str::from_utf8(input) {
        if let Some(url) = base_url_from_token(text) {
            assert!(url.starts_with("https://"));
            assert!(!url["https://".len()..].contains('/'));
        }
        let _ = normalize_domain(text);
    }
});
