//! Arbitrary JSON as what an MCP server answers the client: a `tools/call` result mapped to
//! tool output (capped text, images, errors), a `tools/list` page read leniently, and the
//! server's tool names made into agent tool names. Never panics; the text stays within its
//! cap plus the truncation note; names are `[a-zA-Z0-9_-]{1,64}`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_mcp::client::names::{MAX_TOOL_NAME, tool_name, unique};
use pincer_mcp::client::{map_call_result, parse_tools_page};

const CAP: usize = 256;

fuzz_target!(|input: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(input) else {
        return;
    };
    if let Ok(result) = serde_json::from_value(value.clone()) {
        if let Ok(output) = map_call_result(result, CAP) {
            let text = output.text_content();
            assert!(text.len() <= CAP + 200, "{} bytes", text.len());
        }
    }
    let (tools, _) = parse_tools_page(&value);
    let mut taken = std::collections::HashSet::new();
    for tool in &tools {
        let name = unique(tool_name("server-1", &tool.name), &mut taken);
        assert!(!name.is_empty() && name.len() <= MAX_TOOL_NAME, "{name}");
        assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    }
});
