//! pi's `transformMessages`: how a conversation is prepared for replay to a model, whatever
//! model produced it. Shared by the Anthropic, Google and OpenAI request builders.
//!
//! - Thinking is replayed as thinking only to the model that wrote it (provider, API and
//!   model id all equal); to any other model it becomes plain text, and redacted thinking
//!   (opaque, model-bound) is dropped.
//! - Tool call ids from other models are normalised by the caller's function, and the
//!   matching tool results follow the new id.
//! - Errored and aborted assistant turns are skipped: they may end mid-reasoning or
//!   mid-call, which APIs reject, and the model should retry from the last good state.
//! - Tool calls left without a result get a synthetic error result before the next turn,
//!   because every API insists each call is answered.
//!
//! The output borrows from the input: contexts carry base64 images and are replayed on
//! every turn, so nothing is cloned that does not change.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::model::Model;
use crate::types::{
    AssistantMessage, ContentBlock, ImageContent, Message, StopReason, ToolCall, UserMessage, texts,
};

/// One message ready for a request builder.
#[derive(Debug)]
pub(crate) enum Replay<'a> {
    User(&'a UserMessage),
    Assistant(ReplayAssistant<'a>),
    ToolResult(ReplayToolResult<'a>),
}

#[derive(Debug)]
pub(crate) struct ReplayAssistant<'a> {
    pub message: &'a AssistantMessage,
    pub blocks: Vec<ReplayBlock<'a>>,
}

#[derive(Debug)]
pub(crate) enum ReplayBlock<'a> {
    /// `signature` is kept only for the model that produced the block.
    Text {
        text: &'a str,
        signature: Option<&'a str>,
    },
    Thinking {
        thinking: &'a str,
        signature: Option<&'a str>,
        redacted: bool,
    },
    ToolCall {
        call: &'a ToolCall,
        id: Cow<'a, str>,
        thought_signature: Option<&'a str>,
    },
}

#[derive(Debug)]
pub(crate) struct ReplayToolResult<'a> {
    pub tool_call_id: Cow<'a, str>,
    pub tool_name: &'a str,
    /// Borrowed from the message, or the synthetic "No result provided" text.
    pub content: Cow<'a, [ContentBlock]>,
    pub is_error: bool,
}

impl ReplayToolResult<'_> {
    /// The text blocks joined by newlines (pi's `textResult`).
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = texts(&self.content);
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(only), None) => Cow::Borrowed(only),
            (Some(first), Some(second)) => {
                let mut joined = format!("{first}\n{second}");
                for text in texts {
                    joined.push('\n');
                    joined.push_str(text);
                }
                Cow::Owned(joined)
            }
        }
    }

    pub fn images(&self) -> impl Iterator<Item = &ImageContent> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::Image(image) => Some(image),
            _ => None,
        })
    }
}

/// Text pi sends in place of a tool result that never arrived.
pub(crate) const MISSING_RESULT: &str = "No result provided";

/// Prepare `messages` for `model`. `normalize_id` rewrites ids of tool calls made by other
/// models (None: keep them).
pub(crate) fn transform<'a>(
    messages: &'a [Message],
    model: &Model,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<Replay<'a>> {
    let mut out = Vec::with_capacity(messages.len());
    let mut renamed: HashMap<&'a str, String> = HashMap::new();
    // Calls of the last replayed assistant turn, and the ids answered since.
    let mut pending: Vec<(Cow<'a, str>, &'a str)> = Vec::new();
    let mut answered: Vec<Cow<'a, str>> = Vec::new();

    for message in messages {
        match message {
            Message::User(user) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                out.push(Replay::User(user));
            }
            Message::ToolResult(result) => {
                let id = match renamed.get(result.tool_call_id.as_str()) {
                    Some(new_id) => Cow::Owned(new_id.clone()),
                    None => Cow::Borrowed(result.tool_call_id.as_str()),
                };
                answered.push(id.clone());
                out.push(Replay::ToolResult(ReplayToolResult {
                    tool_call_id: id,
                    tool_name: &result.tool_name,
                    content: Cow::Borrowed(&result.content),
                    is_error: result.is_error,
                }));
            }
            Message::Assistant(assistant) => {
                flush_orphans(&mut out, &mut pending, &mut answered);
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    continue;
                }
                let same_model = assistant.provider == model.provider
                    && assistant.api == model.api
                    && assistant.model == model.id;
                let blocks = replay_blocks(assistant, same_model, normalize_id, &mut renamed);
                pending = blocks
                    .iter()
                    .filter_map(|block| match block {
                        ReplayBlock::ToolCall { call, id, .. } => {
                            Some((id.clone(), call.name.as_str()))
                        }
                        _ => None,
                    })
                    .collect();
                answered.clear();
                out.push(Replay::Assistant(ReplayAssistant {
                    message: assistant,
                    blocks,
                }));
            }
        }
    }
    out
}

fn replay_blocks<'a>(
    assistant: &'a AssistantMessage,
    same_model: bool,
    normalize_id: Option<&dyn Fn(&str) -> String>,
    renamed: &mut HashMap<&'a str, String>,
) -> Vec<ReplayBlock<'a>> {
    let mut blocks = Vec::with_capacity(assistant.content.len());
    for block in &assistant.content {
        match block {
            ContentBlock::Thinking(t) => {
                let redacted = t.redacted.unwrap_or(false);
                if same_model {
                    blocks.push(ReplayBlock::Thinking {
                        thinking: &t.thinking,
                        signature: t.thinking_signature.as_deref(),
                        redacted,
                    });
                } else if !redacted && !t.thinking.trim().is_empty() {
                    blocks.push(ReplayBlock::Text {
                        text: &t.thinking,
                        signature: None,
                    });
                }
            }
            ContentBlock::Text(t) => blocks.push(ReplayBlock::Text {
                text: &t.text,
                signature: if same_model {
                    t.text_signature.as_deref()
                } else {
                    None
                },
            }),
            ContentBlock::ToolCall(call) => {
                let mut id = Cow::Borrowed(call.id.as_str());
                if let (false, Some(normalize)) = (same_model, normalize_id) {
                    let new_id = normalize(&call.id);
                    if new_id != call.id {
                        renamed.insert(&call.id, new_id.clone());
                        id = Cow::Owned(new_id);
                    }
                }
                blocks.push(ReplayBlock::ToolCall {
                    call,
                    id,
                    thought_signature: if same_model {
                        call.thought_signature.as_deref()
                    } else {
                        None
                    },
                });
            }
            // Images never appear in assistant content; nothing to replay.
            ContentBlock::Image(_) => {}
        }
    }
    blocks
}

/// Answer every call of the previous assistant turn that got no result.
fn flush_orphans<'a>(
    out: &mut Vec<Replay<'a>>,
    pending: &mut Vec<(Cow<'a, str>, &'a str)>,
    answered: &mut Vec<Cow<'a, str>>,
) {
    for (id, name) in pending.drain(..) {
        if !answered.contains(&id) {
            out.push(Replay::ToolResult(ReplayToolResult {
                tool_call_id: id,
                tool_name: name,
                content: Cow::Owned(vec![ContentBlock::text(MISSING_RESULT)]),
                is_error: true,
            }));
        }
    }
    answered.clear();
}

/// Anthropic's rule for tool call ids (`^[a-zA-Z0-9_-]+$`, at most 64 characters), which
/// some Google-hosted models share.
pub(crate) fn sanitize_tool_call_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::{assistant_of, read_call};
    use crate::types::{ThinkingContent, ToolResultMessage};
    use serde_json::json;

    fn model() -> Model {
        serde_json::from_value(json!({"id":"m1","name":"M","api":"anthropic-messages",
            "provider":"anthropic","baseUrl":"u","input":["text"],"cost":{"input":1,"output":1},
            "contextWindow":10,"maxTokens":5}))
        .unwrap()
    }

    fn assistant(model: &str, content: Vec<ContentBlock>, stop: StopReason) -> Message {
        assistant_of("anthropic-messages", "anthropic", model, content, stop)
    }

    fn call(id: &str) -> ContentBlock {
        read_call(id, json!({}), Some("sig"))
    }

    fn thinking(text: &str, redacted: bool) -> ContentBlock {
        ContentBlock::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: Some("s".into()),
            redacted: redacted.then_some(true),
        })
    }

    #[test]
    fn cross_model_thinking_becomes_text_and_ids_are_normalised() {
        let messages = vec![
            assistant(
                "other",
                vec![thinking("hm", false), thinking("x", true), call("call|1")],
                StopReason::ToolUse,
            ),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call|1".into(),
                tool_name: "read".into(),
                content: vec![],
                details: None,
                is_error: false,
                timestamp: 0,
            }),
        ];
        let out = transform(&messages, &model(), Some(&sanitize_tool_call_id));
        let Replay::Assistant(a) = &out[0] else {
            panic!()
        };
        assert!(matches!(
            a.blocks[0],
            ReplayBlock::Text {
                text: "hm",
                signature: None
            }
        ));
        let ReplayBlock::ToolCall {
            id,
            thought_signature,
            ..
        } = &a.blocks[1]
        else {
            panic!()
        };
        assert_eq!((id.as_ref(), *thought_signature), ("call_1", None));
        let Replay::ToolResult(r) = &out[1] else {
            panic!()
        };
        assert_eq!(r.tool_call_id, "call_1");
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn errored_turns_are_skipped_and_orphans_answered() {
        let messages = vec![
            assistant("m1", vec![call("a"), call("b")], StopReason::ToolUse),
            assistant("m1", vec![ContentBlock::text("half")], StopReason::Error),
            Message::user("go on"),
        ];
        let out = transform(&messages, &model(), None);
        let kinds: Vec<_> = out
            .iter()
            .map(|r| match r {
                Replay::User(_) => "user".to_owned(),
                Replay::Assistant(_) => "assistant".to_owned(),
                Replay::ToolResult(t) => format!("result:{}:{}", t.tool_call_id, t.is_error),
            })
            .collect();
        assert_eq!(
            kinds,
            ["assistant", "result:a:true", "result:b:true", "user"]
        );
        let Replay::Assistant(a) = &out[0] else {
            panic!()
        };
        assert!(matches!(
            a.blocks[0],
            ReplayBlock::ToolCall {
                thought_signature: Some("sig"),
                ..
            }
        ));
    }

    #[test]
    fn sanitizes_ids() {
        assert_eq!(sanitize_tool_call_id("fc_1|x.y"), "fc_1_x_y");
        assert_eq!(sanitize_tool_call_id(&"a".repeat(100)).len(), 64);
    }
}
