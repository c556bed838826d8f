//! Arbitrary JSON as what the gateway sends `pincer mcp serve`: a frame of a followed run,
//! a `chat.history` answer, a `tools.invoke` answer. Reading them never panics; a run's
//! end carries the final message's text, and a history view always has a message list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_mcp::server::frames::{RunStep, history_view, run_step};
use pincer_mcp::server::tools::invoke_answer;

fuzz_target!(|input: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(input) else {
        return;
    };
    if let RunStep::Delta(delta) = run_step(&value, "1:cli", "mcp-run") {
        assert!(!delta.is_empty());
    }
    let view = history_view(&value);
    assert!(view["messages"].is_array());
    let _ = invoke_answer(&value);
});
