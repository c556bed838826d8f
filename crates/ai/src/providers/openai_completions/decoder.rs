//! The stream side of OpenAI Chat Completions: `data:` chunks of `chat.completion.chunk`
//! JSON until `data: [DONE]`, decoded into builder calls.
//!
//! This is the hottest decoder of Pincer (most local and hosted servers speak it), so chunks
//! are parsed into borrowed structs that skip everything unused; a text delta costs one
//! JSON scan and no allocation beyond the event itself.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::error::ErrorKind;
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, StreamDecoder};
use crate::model::Model;
use crate::providers::openai_shared::{Text, stream_error_kind, tokens};
use crate::types::StopReason;

/// Reasoning fields of compatible servers, in priority order: llama.cpp and DeepSeek use
/// `reasoning_content`, OpenRouter and Ollama `reasoning`, some gateways `reasoning_text`.
/// Some send the same text in two of them, so only the first non-empty one counts.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Text<'a>,
    #[serde(borrow, default)]
    choices: FirstChoice<'a>,
    usage: Option<Box<WireUsage>>,
    /// OpenRouter and others report upstream failures mid-stream this way.
    error: Option<Value>,
}

/// Only the first choice matters (Pincer never asks for `n > 1`); the rest is skipped
/// without being built, and `null` reads as no choice.
#[derive(Default)]
struct FirstChoice<'a>(Option<Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FirstVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for FirstVisitor<'a> {
            type Value = FirstChoice<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(FirstChoice(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<Choice<'a>>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first))
            }
        }
        deserializer.deserialize_any(FirstVisitor(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Text<'a>,
    /// Moonshot and a few others put usage on the choice instead of the chunk.
    usage: Option<Box<WireUsage>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Text<'a>,
    #[serde(borrow, default)]
    reasoning_content: Text<'a>,
    #[serde(borrow, default)]
    reasoning: Text<'a>,
    #[serde(borrow, default)]
    reasoning_text: Text<'a>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<WireToolCall<'a>>>,
    /// OpenRouter's encrypted reasoning, tied to tool calls by id.
    reasoning_details: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct WireToolCall<'a> {
    index: Option<u64>,
    #[serde(borrow, default)]
    id: Text<'a>,
    #[serde(borrow, default)]
    function: Option<WireFunction<'a>>,
}

#[derive(Deserialize)]
struct WireFunction<'a> {
    #[serde(borrow, default)]
    name: Text<'a>,
    #[serde(borrow, default)]
    arguments: Text<'a>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireUsage {
    #[serde(deserialize_with = "tokens")]
    prompt_tokens: u64,
    #[serde(deserialize_with = "tokens")]
    completion_tokens: u64,
    #[serde(deserialize_with = "tokens")]
    total_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(deserialize_with = "tokens")]
    cache_write_tokens: u64,
    /// DeepSeek's name for cached prompt tokens.
    #[serde(deserialize_with = "tokens")]
    prompt_cache_hit_tokens: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PromptDetails {
    #[serde(deserialize_with = "tokens")]
    cached_tokens: u64,
    #[serde(deserialize_with = "tokens")]
    cache_write_tokens: u64,
}

/// How the reply ended, as reported by `finish_reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Finish {
    Reason(StopReason),
    ContentFilter,
    Other(String),
}

/// The block text and thinking deltas go to (tool calls are tracked separately).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    Text(usize),
    Thinking(usize),
}

/// One tool call of the reply.
#[derive(Debug)]
struct ToolSlot {
    /// `tool_calls[].index`, the key parallel calls are told apart by.
    index: Option<u64>,
    id: String,
    content: usize,
}

/// Decodes one Chat Completions stream.
pub(super) struct Decoder {
    label: String,
    /// NVIDIA NIM repeats tool calls as `<TOOLCALL>` text next to the structured ones.
    drop_toolcall_text: bool,
    open: Open,
    tools: Vec<ToolSlot>,
    /// Reasoning details that arrived before the tool call they belong to: (id, JSON).
    pending_signatures: Vec<(String, String)>,
    finish: Option<Finish>,
    has_response_id: bool,
}

impl Decoder {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            label: model.reference(),
            drop_toolcall_text: model.provider == "nim",
            open: Open::Nothing,
            tools: Vec::new(),
            pending_signatures: Vec::new(),
            finish: None,
            has_response_id: false,
        }
    }

    fn chunk(&mut self, chunk: Chunk<'_>, out: &mut MessageBuilder) {
        if let Some(error) = chunk.error {
            self.fail_with(&error, out);
            return;
        }
        if !self.has_response_id
            && let Some(id) = chunk.id.non_empty()
        {
            out.set_response_id(id);
            self.has_response_id = true;
        }
        if let Some(usage) = &chunk.usage {
            apply_usage(usage, out);
        }
        let Some(choice) = chunk.choices.0 else {
            return;
        };
        if chunk.usage.is_none()
            && let Some(usage) = &choice.usage
        {
            apply_usage(usage, out);
        }
        if let Some(delta) = &choice.delta {
            self.delta(delta, out);
        }
        if let Some(reason) = choice.finish_reason.non_empty() {
            // Recorded, not acted on: the usage chunk comes after the finish reason.
            self.finish = Some(map_finish_reason(reason));
        }
    }

    fn delta(&mut self, delta: &Delta<'_>, out: &mut MessageBuilder) {
        if let Some(text) = delta.content.non_empty()
            && !(self.drop_toolcall_text && text.contains("<TOOLCALL"))
        {
            let index = match self.open {
                Open::Text(index) => index,
                _ => {
                    self.close_open(out);
                    let index = out.text_start();
                    self.open = Open::Text(index);
                    index
                }
            };
            out.text_delta(index, text);
        }

        let reasoning = [
            &delta.reasoning_content,
            &delta.reasoning,
            &delta.reasoning_text,
        ]
        .into_iter()
        .zip(REASONING_FIELDS)
        .find_map(|(value, field)| value.non_empty().map(|text| (text, field)));
        if let Some((text, field)) = reasoning {
            let index = match self.open {
                Open::Thinking(index) => index,
                _ => {
                    self.close_open(out);
                    let index = out.thinking_start();
                    // The field name is what replay echoes the reasoning back in.
                    out.set_thinking_signature(index, field);
                    self.open = Open::Thinking(index);
                    index
                }
            };
            out.thinking_delta(index, text);
        }

        for call in delta.tool_calls.iter().flatten() {
            self.tool_call(call, out);
        }

        for detail in delta.reasoning_details.iter().flatten() {
            let encrypted = detail["type"] == "reasoning.encrypted" && !detail["data"].is_null();
            if let (true, Some(id)) = (encrypted, detail["id"].as_str()) {
                self.pending_signatures
                    .push((id.to_owned(), detail.to_string()));
            }
        }
        if !self.pending_signatures.is_empty() {
            self.attach_signatures(out);
        }
    }

    fn tool_call(&mut self, call: &WireToolCall<'_>, out: &mut MessageBuilder) {
        let id = call.id.non_empty();
        let function = call.function.as_ref();
        let name = function.and_then(|f| f.name.non_empty());
        let slot = match self.find_tool(call.index, id) {
            Some(slot) => {
                let slot = &mut self.tools[slot];
                let patch_id = id.filter(|id| slot.id != *id);
                // The builder appends names; only fill one that is still missing.
                let patch_name = name.filter(|_| tool_name_missing(out, slot.content));
                if patch_id.is_some() || patch_name.is_some() {
                    out.toolcall_patch(slot.content, patch_id, patch_name);
                    if let Some(id) = patch_id {
                        id.clone_into(&mut slot.id);
                    }
                }
                slot.content
            }
            None => {
                // A tool call ends any text or thinking before it.
                self.close_open(out);
                let content = out.toolcall_start(id.unwrap_or(""), name.unwrap_or(""));
                let id = id.unwrap_or("").to_owned();
                self.tools.push(ToolSlot {
                    index: call.index,
                    id,
                    content,
                });
                content
            }
        };
        if let Some(arguments) = function.and_then(|f| f.arguments.non_empty()) {
            out.toolcall_delta(slot, arguments);
        }
    }

    /// The tool call a delta continues, if any. Calls stay open until the reply ends, so
    /// servers that interleave parallel calls lose nothing.
    fn find_tool(&self, index: Option<u64>, id: Option<&str>) -> Option<usize> {
        let position = match (index, id) {
            (Some(index), _) => self.tools.iter().rposition(|t| t.index == Some(index)),
            (None, Some(id)) => self.tools.iter().rposition(|t| t.id == id),
            (None, None) => self.tools.len().checked_sub(1),
        }?;
        // Some servers (Gemini's compat layer) reuse index 0 for every call: a different
        // id under a known index is a new call.
        let known = &self.tools[position].id;
        match id {
            Some(id) if !known.is_empty() && known != id => None,
            _ => Some(position),
        }
    }

    fn attach_signatures(&mut self, out: &mut MessageBuilder) {
        let tools = &self.tools;
        self.pending_signatures.retain(|(id, signature)| {
            match tools.iter().find(|t| t.id == *id) {
                Some(slot) => {
                    out.set_thought_signature(slot.content, signature.clone());
                    false
                }
                None => true,
            }
        });
    }

    fn close_open(&mut self, out: &mut MessageBuilder) {
        match std::mem::replace(&mut self.open, Open::Nothing) {
            Open::Text(index) | Open::Thinking(index) => out.end(index),
            Open::Nothing => {}
        }
    }

    /// The reply is over: finish it as its finish reason says.
    fn complete(&mut self, out: &mut MessageBuilder) -> Decoded {
        match self.finish.take() {
            None => Err(DecodeError(format!(
                "{}: the stream ended before a finish_reason; the reply is incomplete",
                self.label
            ))),
            Some(Finish::Reason(reason)) => {
                out.set_stop_reason(reason);
                out.done();
                Ok(())
            }
            Some(Finish::ContentFilter) => {
                out.fail(
                    ErrorKind::Refused,
                    format!(
                        "{}: the provider's content filter stopped the reply (finish_reason \"content_filter\"); rephrase the request",
                        self.label
                    ),
                );
                Ok(())
            }
            Some(Finish::Other(reason)) => {
                out.fail(
                    ErrorKind::Server,
                    format!(
                        "{}: the reply ended with finish_reason \"{reason}\"",
                        self.label
                    ),
                );
                Ok(())
            }
        }
    }

    fn fail_with(&mut self, error: &Value, out: &mut MessageBuilder) {
        let message = match error {
            Value::String(text) => text.clone(),
            Value::Object(_) => match error["message"].as_str() {
                Some(text) => text.to_owned(),
                None => error.to_string(),
            },
            other => other.to_string(),
        };
        let mut text = format!("{}: {message}", self.label);
        // OpenRouter puts the upstream provider's own words here.
        if let Some(raw) = error.pointer("/metadata/raw").and_then(Value::as_str) {
            text.push('\n');
            text.push_str(raw);
        }
        let code = error.get("code").or_else(|| error.get("type"));
        out.fail(stream_error_kind(code, &text), text);
    }
}

fn tool_name_missing(out: &MessageBuilder, content: usize) -> bool {
    matches!(out.message().content.get(content),
        Some(crate::types::ContentBlock::ToolCall(call)) if call.name.is_empty())
}

fn map_finish_reason(reason: &str) -> Finish {
    match reason {
        "stop" | "end" => Finish::Reason(StopReason::Stop),
        "length" => Finish::Reason(StopReason::Length),
        "tool_calls" | "function_call" => Finish::Reason(StopReason::ToolUse),
        "content_filter" => Finish::ContentFilter,
        other => Finish::Other(other.to_owned()),
    }
}

fn apply_usage(wire: &WireUsage, out: &mut MessageBuilder) {
    let details = wire.prompt_tokens_details.as_ref();
    let cached = details
        .map_or(0, |d| d.cached_tokens)
        .max(wire.prompt_cache_hit_tokens);
    let written = details
        .map_or(0, |d| d.cache_write_tokens)
        .max(wire.cache_write_tokens);
    let usage = out.usage_mut();
    // Prompt tokens include cache reads and writes; each is billed at its own price.
    usage.input = wire
        .prompt_tokens
        .saturating_sub(cached)
        .saturating_sub(written);
    usage.cache_read = cached;
    usage.cache_write = written;
    usage.output = wire.completion_tokens;
    let sum = wire.prompt_tokens.saturating_add(wire.completion_tokens);
    usage.total_tokens = if sum > 0 { sum } else { wire.total_tokens };
}

impl StreamDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let data = event.data.trim();
        if data == "[DONE]" {
            return self.complete(out);
        }
        if event.event == "error" {
            // An SSE `error` event: JSON if we are lucky, else the text itself.
            let error = serde_json::from_str::<Value>(data)
                .unwrap_or_else(|_| Value::String(data.to_owned()));
            let error = match error.get("error") {
                Some(inner) => inner.clone(),
                None => error,
            };
            self.fail_with(&error, out);
            return Ok(());
        }
        let chunk: Chunk<'_> = DecodeError::parse("a chat completion chunk", data)?;
        self.chunk(chunk, out);
        Ok(())
    }

    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded {
        // Servers that never send `[DONE]` still end properly once a finish reason came.
        self.complete(out)
    }
}
