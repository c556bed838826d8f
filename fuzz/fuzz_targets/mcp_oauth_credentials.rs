//! Arbitrary bytes as an MCP server's OAuth credentials file (`$PINCER_HOME/mcp-auth/
//! <server>.json`, which a user may edit or a crash may cut). Never panics; what parses
//! serializes back and parses again to the same client.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_mcp::client::auth::parse_credentials;

fuzz_target!(|input: &[u8]| {
    if let Ok(credentials) = parse_credentials(input) {
        let bytes = serde_json::to_vec(&credentials).expect("serializes");
        let again = parse_credentials(&bytes).expect("parses again");
        assert_eq!(again.client_id, credentials.client_id);
    }
});
