//! A running tool's partial results (`exec`'s output so far, …) as OpenClaw's `agent` events
//! (`stream: "tool"`, `data: {phase: "update", name, toolCallId, partialResult}`): at most one
//! per call every [`TOOL_UPDATE_INTERVAL`] (OpenClaw's 250 ms for live exec output), each
//! bounded, so a command printing fast cannot flood every connected client.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use pincer_agent::ToolOutput;
use pincer_ai::ContentBlock;
use serde_json::{Value, json};

/// The least time between two update events of one tool call.
pub const TOOL_UPDATE_INTERVAL: Duration = Duration::from_millis(250);

/// How much text of a partial result goes out (its end: the latest output).
pub const UPDATE_TEXT_CHARS: usize = 4_000;

/// The largest `details` (as JSON text) an update carries; larger ones are left out.
pub const UPDATE_DETAILS_BYTES: usize = 4_096;

/// When each running call of a run last sent an update.
#[derive(Debug, Default)]
pub struct ToolUpdates {
    last: HashMap<String, Instant>,
}

impl ToolUpdates {
    /// Whether an update of call `id` may go out now (and, if so, notes that it did).
    pub fn due(&mut self, id: &str) -> bool {
        let now = Instant::now();
        match self.last.get(id) {
            Some(at) if now.duration_since(*at) < TOOL_UPDATE_INTERVAL => false,
            _ => {
                self.last.insert(id.to_owned(), now);
                true
            }
        }
    }

    /// Call `id` ended: forgets it (the map holds only running calls).
    pub fn ended(&mut self, id: &str) {
        self.last.remove(id);
    }
}

/// The `data` of an update event.
pub fn update_data(name: &str, id: &str, partial: &ToolOutput) -> Value {
    json!({
        "phase": "update", "name": name, "toolCallId": id,
        "partialResult": bounded(partial),
    })
}

/// `partial` as pi's result object (`{content, details?}`), bounded: text blocks keep their
/// last [`UPDATE_TEXT_CHARS`] characters (together), images are left out (a screenshot in
/// progress is no progress text), `details` only when small.
fn bounded(partial: &ToolOutput) -> Value {
    let mut budget = UPDATE_TEXT_CHARS;
    let mut content = Vec::new();
    for block in partial.content.iter().rev() {
        if budget == 0 {
            break;
        }
        if let ContentBlock::Text(text) = block {
            let tail = tail_chars(&text.text, budget);
            budget -= tail.chars().count();
            content.push(json!({ "type": "text", "text": tail }));
        }
    }
    content.reverse();
    let mut result = json!({ "content": content });
    if let Some(details) = &partial.details
        && details.to_string().len() <= UPDATE_DETAILS_BYTES
    {
        result["details"] = details.clone();
    }
    result
}

/// The last `max` characters of `text`.
fn tail_chars(text: &str, max: usize) -> &str {
    let count = text.chars().count();
    if count <= max {
        return text;
    }
    match text.char_indices().nth(count - max) {
        Some((at, _)) => &text[at..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_of_one_call_are_throttled_and_calls_are_independent() {
        let mut updates = ToolUpdates::default();
        assert!(updates.due("a"));
        assert!(!updates.due("a"));
        assert!(updates.due("b"));
        updates.ended("a");
        assert!(updates.due("a"));
    }

    #[test]
    fn a_partial_result_is_bounded() {
        let long = "é".repeat(UPDATE_TEXT_CHARS + 10) + "end";
        let partial = ToolOutput {
            content: vec![
                ContentBlock::text("first"),
                ContentBlock::Image(pincer_ai::ImageContent {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                }),
                ContentBlock::text(long),
            ],
            details: Some(json!({ "big": "x".repeat(UPDATE_DETAILS_BYTES) })),
        };
        let data = update_data("exec", "call-1", &partial);
        let content = data["partialResult"]["content"].as_array().unwrap();
        assert_eq!(content.len(), 1);
        let text = content[0]["text"].as_str().unwrap();
        assert_eq!(text.chars().count(), UPDATE_TEXT_CHARS);
        assert!(text.ends_with("éend"));
        assert!(data["partialResult"].get("details").is_none());
        assert_eq!(data["phase"], "update");

        let small = ToolOutput::text("so far").with_details(json!({ "status": "running" }));
        assert_eq!(
            update_data("exec", "c", &small),
            json!({
                "phase": "update", "name": "exec", "toolCallId": "c",
                "partialResult": {
                    "content": [{ "type": "text", "text": "so far" }],
                    "details": { "status": "running" },
                },
            })
        );
    }
}
