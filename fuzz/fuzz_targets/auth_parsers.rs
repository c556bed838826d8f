//! Arbitrary bytes through every parser of outside input in pincer-auth: the profiles file,
//! an OAuth token endpoint's answer (success and error), a pasted redirect, a JWT. None of
//! them may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_auth::oauth::{
    chatgpt_account_id, decode_jwt_payload, parse_authorization_input, parse_token_error,
    parse_token_response,
};
use pincer_auth::{AuthProfiles, AuthStore};

fuzz_target!(|input: &[u8]| {
    let _ = parse_token_response(input, 1_700_000_000_000);
    let _ = parse_token_error(input);
    let _ = serde_json::from_slice::<AuthProfiles>(input);
    if let Ok(text) = std::str::from_utf8(input) {
        let _ = parse_authorization_input(text);
        let _ = decode_jwt_payload(text);
        let _ = chatgpt_account_id(text);
    }
    let path = std::env::temp_dir().join(format!("pincer-fuzz-auth-{}.json", std::process::id()));
    if std::fs::write(&path, input).is_ok() {
        let _ = AuthStore::new(&path).load();
    }
});
