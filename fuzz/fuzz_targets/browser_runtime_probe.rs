//! Arbitrary bytes as what a local port answers the browser runtime's `GET /json/version`
//! (any process may hold a port Chromium once had), and as the `DevToolsActivePort` file it
//! reads: parsing never panics, and what it accepts has the shape the runtime relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_browser::runtime::probe::{parse_devtools_active_port, parse_json_version};

fuzz_target!(|input: &[u8]| {
    if let Ok(version) = parse_json_version(input) {
        assert!(version.ws_url.starts_with("ws://"));
    }
    if let Some((port, path)) = parse_devtools_active_port(&String::from_utf8_lossy(input)) {
        assert!(port != 0);
        assert!(path.starts_with("/devtools/browser/") && path.len() > "/devtools/browser/".len());
    }
});
