//! The conversation data model shared by every provider: messages, content blocks, usage,
//! stop reasons and the request context. Serialises exactly like pi-ai's JSON (camelCase
//! fields, `role` / `type` tags), so transcripts and RPC frames are interchangeable with pi.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Milliseconds since the Unix epoch, as pi stores timestamps.
pub type TimestampMs = i64;

/// Current wall-clock time in milliseconds since the Unix epoch (pincer-base's clock).
pub use pincer_base::time::now_ms;

/// One piece of message content. Users and tool results carry text and images; assistants
/// carry text, thinking and tool calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    Text(TextContent),
    Thinking(ThinkingContent),
    Image(ImageContent),
    ToolCall(ToolCall),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            text_signature: None,
        })
    }

    /// The text of a text block, which deltas grow.
    pub(crate) fn text_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::Text(t) => Some(&mut t.text),
            _ => None,
        }
    }

    /// The thinking of a thinking block, which deltas grow.
    pub(crate) fn thinking_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::Thinking(t) => Some(&mut t.thinking),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    pub text: String,
    /// Provider-specific id of the text item (OpenAI Responses message id), echoed on replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    pub thinking: String,
    /// Signature that must be echoed back (Anthropic), the encrypted payload of redacted
    /// thinking, or the field name a compatible server used (`reasoning_content`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// The provider redacted this thinking; `thinking_signature` holds the opaque data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded image bytes.
    pub data: String,
    pub mime_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The parsed arguments object (`{}` while nothing parseable has arrived).
    pub arguments: Value,
    /// Opaque reasoning signature some providers attach to a call (Gemini, OpenRouter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl ToolCall {
    /// A call as it opens in a stream: no arguments yet.
    pub(crate) fn opened(id: &str, name: &str) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: Value::Object(Default::default()),
            thought_signature: None,
        }
    }
}

/// What a user said: a plain string or a list of text and image blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserContent,
    pub timestamp: TimestampMs,
}

impl UserMessage {
    /// The concatenated text of this message (images are skipped).
    pub fn text(&self) -> String {
        match &self.content {
            UserContent::Text(text) => text.clone(),
            UserContent::Blocks(blocks) => join_text(blocks),
        }
    }
}

/// Token usage of one assistant reply, with its cost in USD.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
    pub cost: UsageCost,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub total: f64,
}

/// Why an assistant reply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    #[default]
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<ContentBlock>,
    pub api: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub timestamp: TimestampMs,
    /// Id the provider gave this response, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

impl AssistantMessage {
    /// The concatenated text blocks of the reply.
    pub fn text(&self) -> String {
        join_text(&self.content)
    }

    /// The tool calls the reply asks for, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<ContentBlock>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub is_error: bool,
    pub timestamp: TimestampMs,
}

/// A message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
}

impl Message {
    /// The `role` tag as pi writes it: `user`, `assistant` or `toolResult`.
    pub fn role(&self) -> &'static str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
        }
    }

    /// A user message with plain text, stamped now.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: now_ms(),
        })
    }

    /// A successful tool result with one text block, stamped now.
    pub fn tool_result(call: &ToolCall, text: impl Into<String>, is_error: bool) -> Self {
        Self::ToolResult(ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: vec![ContentBlock::text(text)],
            details: None,
            is_error,
            timestamp: now_ms(),
        })
    }
}

/// A tool the model may call: name, description and a JSON schema of its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// Everything a provider needs to produce the next assistant reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

/// How hard a reasoning model should think.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ThinkingLevel {
    /// pi's name of the level (`--thinking`, `thinkingLevel`, the session file's, the config's).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }

    /// Token budget for providers that take one (Anthropic, Gemini), as pi's defaults.
    pub fn budget_tokens(self) -> Option<u64> {
        match self {
            Self::Off => None,
            Self::Minimal => Some(1024),
            Self::Low => Some(2048),
            Self::Medium => Some(8192),
            Self::High | Self::Xhigh => Some(16384),
        }
    }

    /// OpenAI `reasoning_effort` value.
    pub fn effort(self) -> Option<&'static str> {
        match self {
            Self::Off => None,
            Self::Minimal => Some("minimal"),
            Self::Low => Some("low"),
            Self::Medium => Some("medium"),
            Self::High | Self::Xhigh => Some("high"),
        }
    }
}

fn join_text(blocks: &[ContentBlock]) -> String {
    texts(blocks).collect()
}

/// The text of each text block, in order (images, thinking and tool calls are skipped).
pub fn texts(blocks: &[ContentBlock]) -> impl Iterator<Item = &str> {
    blocks.iter().filter_map(|block| match block {
        ContentBlock::Text(t) => Some(t.text.as_str()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::signed_thinking;
    use serde_json::json;

    #[test]
    fn messages_serialise_like_pi() {
        let msg = Message::Assistant(AssistantMessage {
            content: vec![
                signed_thinking("hm", "sig"),
                ContentBlock::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "a"}),
                    thought_signature: None,
                }),
            ],
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            model: "m".into(),
            usage: Usage::default(),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            timestamp: 5,
            response_id: None,
        });
        let value = serde_json::to_value(&msg).unwrap();
        assert_eq!(
            value,
            json!({"role":"assistant","content":[
                {"type":"thinking","thinking":"hm","thinkingSignature":"sig"},
                {"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],
              "api":"anthropic-messages","provider":"anthropic","model":"m",
              "usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
                       "cost":{"input":0.0,"output":0.0,"cacheRead":0.0,"cacheWrite":0.0,"total":0.0}},
              "stopReason":"toolUse","timestamp":5})
        );
        let back: Message = serde_json::from_value(value).unwrap();
        assert_eq!(back, msg);
    }

    #[test]
    fn user_content_accepts_string_or_blocks() {
        let a: Message =
            serde_json::from_value(json!({"role":"user","content":"hi","timestamp":1})).unwrap();
        let b: Message = serde_json::from_value(
            json!({"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","data":"AA==","mimeType":"image/png"}],"timestamp":1}),
        )
        .unwrap();
        let (Message::User(a), Message::User(b)) = (a, b) else {
            panic!("not user messages")
        };
        assert_eq!(a.text(), "hi");
        assert_eq!(b.text(), "hi");
        let tr: Message = serde_json::from_value(
            json!({"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":false,"timestamp":1}),
        )
        .unwrap();
        assert!(matches!(tr, Message::ToolResult(_)));
    }
}
