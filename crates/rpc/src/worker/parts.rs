//! The small pieces of pi's worker state: the queued texts `queue_update` reports, the user
//! messages a prompt becomes, the counts of `get_session_stats`, and pi's names of thinking
//! levels and queue modes.

use pincer_ai::{ContentBlock, ImageContent, Message, ThinkingLevel, UserContent, UserMessage};
use serde_json::{Value, json};

use crate::worker::error::WorkerError;

/// The steering and follow-up texts waiting (pi's `_steeringMessages` / `_followUpMessages`).
#[derive(Default)]
pub(crate) struct Queues {
    pub(crate) steering: Vec<String>,
    pub(crate) follow_up: Vec<String>,
}

impl Queues {
    pub(crate) fn event(&self) -> Value {
        json!({ "type": "queue_update", "steering": self.steering, "followUp": self.follow_up })
    }

    /// A user message starting: if it came from a queue, it leaves it (true).
    pub(crate) fn take(&mut self, text: &str) -> bool {
        for queue in [&mut self.steering, &mut self.follow_up] {
            if let Some(index) = queue.iter().position(|t| t == text) {
                queue.remove(index);
                return true;
            }
        }
        false
    }
}

/// The text of a user message (its text blocks joined), as pi compares queued messages.
pub(crate) fn user_text(message: &UserMessage) -> String {
    match &message.content {
        UserContent::Text(text) => text.clone(),
        UserContent::Blocks(blocks) => pincer_ai::texts(blocks).collect::<Vec<_>>().join("\n"),
    }
}

/// A prompt as pi records it: content blocks, the text first, then the images.
pub(crate) fn user_message(text: &str, images: Vec<ImageContent>) -> Message {
    let mut blocks = vec![ContentBlock::text(text)];
    blocks.extend(images.into_iter().map(ContentBlock::Image));
    Message::User(UserMessage {
        content: UserContent::Blocks(blocks),
        timestamp: pincer_ai::now_ms(),
    })
}

/// A thinking level by pi's name.
pub fn parse_thinking_level(level: &str) -> Result<ThinkingLevel, WorkerError> {
    serde_json::from_value(json!(level))
        .map_err(|_| WorkerError::UnknownThinkingLevel(level.to_owned()))
}

/// Counts for `get_session_stats`.
#[derive(Default)]
pub(crate) struct SessionStats {
    pub(crate) user: usize,
    pub(crate) assistant: usize,
    pub(crate) tool_calls: usize,
    pub(crate) tool_results: usize,
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) cache_read: u64,
    pub(crate) cache_write: u64,
    pub(crate) cost: f64,
}

impl SessionStats {
    pub(crate) fn add(&mut self, message: &Message) {
        match message {
            Message::User(_) => self.user += 1,
            Message::ToolResult(_) => self.tool_results += 1,
            Message::Assistant(a) => {
                self.assistant += 1;
                self.tool_calls += a
                    .content
                    .iter()
                    .filter(|b| matches!(b, ContentBlock::ToolCall(_)))
                    .count();
                self.input += a.usage.input;
                self.output += a.usage.output;
                self.cache_read += a.usage.cache_read;
                self.cache_write += a.usage.cache_write;
                self.cost += a.usage.cost.total;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_names_round_trip() {
        for level in [
            ThinkingLevel::Off,
            ThinkingLevel::Minimal,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
            ThinkingLevel::Xhigh,
        ] {
            assert_eq!(parse_thinking_level(level.as_str()).ok(), Some(level));
        }
    }

    #[test]
    fn an_unknown_thinking_level_is_refused_with_the_choices() {
        let error = parse_thinking_level("max").err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("unknown thinking level \"max\": use off, minimal, low, medium, high or xhigh")
        );
    }

    #[test]
    fn a_started_message_leaves_its_queue_once() {
        let mut queues = Queues {
            steering: vec!["a".into(), "b".into()],
            follow_up: vec!["b".into()],
        };
        assert!(queues.take("b"));
        assert_eq!(
            queues.event(),
            json!({"type": "queue_update", "steering": ["a"], "followUp": ["b"]})
        );
        assert!(!queues.take("c"));
    }
}
