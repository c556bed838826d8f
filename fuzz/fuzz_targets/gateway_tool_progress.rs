//! Arbitrary tool names, arguments and partial output (what a model and a tool produce) as
//! the gateway shows them: a verbose chat's tool summary is one bounded line and an `update`
//! event's partial result keeps to its text budget; neither panics (they cut text at
//! character boundaries).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_agent::ToolOutput;
use pincer_gateway::server::tool_summaries::{Verbose, summary};
use pincer_gateway::server::tool_updates::{UPDATE_TEXT_CHARS, update_data};

fuzz_target!(|input: &str| {
    let (name, rest) = input.split_once('\n').unwrap_or((input, ""));
    let args: serde_json::Value =
        serde_json::from_str(rest).unwrap_or_else(|_| serde_json::json!({ "path": rest }));
    for level in [Verbose::On, Verbose::Full] {
        let line = summary(name, &args, level);
        assert!(!line.contains('\n'), "{line:?}");
        // Emoji, title (at most the name), a detail of 121 characters and its fences.
        assert!(line.chars().count() <= name.chars().count() + 400, "{line:?}");
    }
    let data = update_data(name, "call", &ToolOutput::text(rest));
    let text = data["partialResult"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.chars().count() <= UPDATE_TEXT_CHARS);
    assert!(rest.ends_with(text));
});
