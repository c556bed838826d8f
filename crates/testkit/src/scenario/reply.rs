//! `Reply`: what the mock model answers (thinking, text, tool calls, stop reason, usage) and
//! how it is paced (chunk size, delay).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::builder::builder;

/// Why the model stopped, in pi's vocabulary; each protocol maps it to its own value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Natural end (`stop`, `end_turn`, `STOP`, `completed`).
    Stop,
    /// Output limit hit (`length`, `max_tokens`, `MAX_TOKENS`, `incomplete`).
    Length,
    /// The model wants tool results (`tool_calls`, `tool_use`).
    ToolUse,
}

/// One tool call the model makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Call id; generated per protocol convention (`call_…`, `toolu_…`) when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments, a JSON object.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// Token usage to report; each absent field gets a rough default (chars / 4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct UsageSpec {
    /// Uncached input tokens (default: request body bytes / 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output tokens (default: reply chars / 4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Input tokens read from the prompt cache (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Input tokens written to the prompt cache (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
}

/// What the model answers. Blocks are emitted in the order thinking, redacted thinking, text,
/// tool calls; empty strings emit no block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Reply {
    /// Reasoning text (Anthropic thinking, OpenAI `reasoning_content`, Responses reasoning
    /// summary, Gemini thought parts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Opaque `redacted_thinking` data (Anthropic only; other protocols drop it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted_thinking: Option<String>,
    /// Answer text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool calls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSpec>,
    /// Stop reason; default `toolUse` when there are tool calls, else `stop`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// Reported usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    /// Characters per delta; overrides the scenario's `chunkSize`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<usize>,
    /// Milliseconds between chunks; overrides the scenario's `delayMs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Thinking signature (Anthropic `signature_delta`, Gemini `thoughtSignature`, Responses
    /// `encrypted_content`, proxy `contentSignature`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Reply {
    /// A reply with no content yet.
    pub fn empty() -> Self {
        Self::default()
    }

    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::empty().with_text(text)
    }

    /// A reply that only calls `name` with `arguments`.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::empty().with_tool_call(name, arguments)
    }

    /// Adds a tool call with a generated id.
    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ToolCallSpec {
            id: None,
            name: name.into(),
            arguments,
        });
        self
    }

    /// Adds a tool call with a fixed id.
    pub fn with_tool_call_id(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.tool_calls.push(ToolCallSpec {
            id: Some(id.into()),
            name: name.into(),
            arguments,
        });
        self
    }
}

builder!(Reply {
    /// Sets the answer text.
    set with_text(text: into String);
    /// Sets the reasoning text.
    set with_thinking(thinking: into String);
    /// Sets Anthropic `redacted_thinking` data.
    set with_redacted_thinking(redacted_thinking: into String);
    /// Sets the stop reason.
    set with_stop_reason(stop_reason: StopReason);
    /// Sets the reported usage.
    set with_usage(usage: UsageSpec);
    /// Sets characters per delta.
    set with_chunk_size(chunk_size: usize);
    /// Sets the delay between chunks.
    set with_delay_ms(delay_ms: u64);
    /// Sets the thinking signature.
    set with_signature(signature: into String);
});
