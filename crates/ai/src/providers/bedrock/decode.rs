//! Decoding `ConverseStream` events (`messageStart`, `contentBlockStart`,
//! `contentBlockDelta`, `contentBlockStop`, `messageStop`, `metadata`, and the exception
//! messages) into builder calls, as pi's `amazon-bedrock.ts` maps them. Text and reasoning
//! blocks have no start event: their first delta opens them.

use serde::Deserialize;
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::error::{ErrorKind, is_context_overflow};
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, StreamDecoder};
use crate::model::Model;
use crate::types::StopReason;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Frame {
    content_block_index: Option<u64>,
    role: Option<String>,
    start: Option<Start>,
    delta: Option<Delta>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Start {
    tool_use: Option<ToolUseStart>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseStart {
    tool_use_id: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Delta {
    text: Option<String>,
    tool_use: Option<ToolUseDelta>,
    reasoning_content: Option<ReasoningDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolUseDelta {
    input: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta {
    text: Option<String>,
    signature: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    total_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_write_input_tokens: Option<u64>,
}

/// What kind of block a Bedrock content index opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
    ToolCall,
}

/// Decoder state for one response.
#[derive(Debug)]
pub(super) struct BedrockDecoder {
    label: String,
    /// Open blocks: Bedrock's `contentBlockIndex` → (kind, the builder's content index).
    open: Vec<(u64, Kind, usize)>,
    /// `messageStop` said how the reply ended; `metadata` (usage) follows it.
    stop: Option<StopReason>,
}

impl BedrockDecoder {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            label: model.reference(),
            open: Vec::new(),
            stop: None,
        }
    }

    fn block(&self, index: u64) -> Option<(Kind, usize)> {
        self.open
            .iter()
            .rev()
            .find(|(i, ..)| *i == index)
            .map(|(_, kind, at)| (*kind, *at))
    }

    /// The block at `index`, opened as `kind` if it is not open yet.
    fn block_or_open(&mut self, index: u64, kind: Kind, out: &mut MessageBuilder) -> Option<usize> {
        match self.block(index) {
            Some((open, at)) if open == kind => Some(at),
            Some(_) => None,
            None => {
                let at = match kind {
                    Kind::Text => out.text_start(),
                    Kind::Thinking => out.thinking_start(),
                    Kind::ToolCall => return None,
                };
                self.open.push((index, kind, at));
                Some(at)
            }
        }
    }

    fn delta(&mut self, index: u64, delta: &Delta, out: &mut MessageBuilder) {
        if let Some(text) = &delta.text {
            if let Some(at) = self.block_or_open(index, Kind::Text, out) {
                out.text_delta(at, text);
            }
        } else if let Some(tool) = &delta.tool_use {
            if let Some((Kind::ToolCall, at)) = self.block(index) {
                out.toolcall_delta(at, tool.input.as_deref().unwrap_or(""));
            }
        } else if let Some(reasoning) = &delta.reasoning_content
            && let Some(at) = self.block_or_open(index, Kind::Thinking, out)
        {
            if let Some(text) = reasoning.text.as_deref().filter(|t| !t.is_empty()) {
                out.thinking_delta(at, text);
            }
            if let Some(signature) = reasoning.signature.as_deref().filter(|s| !s.is_empty()) {
                out.thinking_signature_push(at, signature);
            }
        }
    }

    fn stop(&mut self, reason: Option<&str>, out: &mut MessageBuilder) {
        match reason.unwrap_or("") {
            "end_turn" | "stop_sequence" => self.stop = Some(StopReason::Stop),
            "max_tokens" | "model_context_window_exceeded" => self.stop = Some(StopReason::Length),
            "tool_use" => self.stop = Some(StopReason::ToolUse),
            reason @ ("guardrail_intervened" | "content_filtered") => out.fail(
                ErrorKind::Refused,
                format!("{}: the model stopped ({reason}); rephrase the request", self.label),
            ),
            other => out.fail(
                ErrorKind::Protocol,
                format!("{}: unknown stopReason {other:?}; Pincer may need an update for this API change", self.label),
            ),
        }
        if let Some(reason) = self.stop {
            out.set_stop_reason(reason);
        }
    }

    /// An exception message (`:exception-type`), or an `error` message.
    fn exception(&self, name: &str, data: &str, out: &mut MessageBuilder) {
        let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
        let message = match text("message") {
            "" => text("Message"),
            m => m,
        };
        let (kind, what) = match name {
            "internalServerException" => (ErrorKind::Server, "Internal server error".to_owned()),
            "modelStreamErrorException" => (ErrorKind::Server, "Model stream error".to_owned()),
            "validationException" if is_context_overflow(&message.to_ascii_lowercase()) => {
                (ErrorKind::ContextOverflow, "Validation error".to_owned())
            }
            "validationException" => (ErrorKind::BadRequest, "Validation error".to_owned()),
            "throttlingException" => (
                ErrorKind::RateLimited { retry_after: None },
                "Throttling error".to_owned(),
            ),
            "serviceUnavailableException" => {
                (ErrorKind::Overloaded, "Service unavailable".to_owned())
            }
            "modelTimeoutException" => (ErrorKind::Timeout, "Model timeout".to_owned()),
            "error" => (
                ErrorKind::Server,
                format!("Stream error {}", text("errorCode")),
            ),
            other => (ErrorKind::Server, other.to_owned()),
        };
        let message = if message.is_empty() {
            "(no message)"
        } else {
            message
        };
        out.fail(kind, format!("{}: {what}: {message}", self.label));
    }
}

impl StreamDecoder for BedrockDecoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        if event.event == "error" || event.event.ends_with("Exception") {
            self.exception(event.event, event.data, out);
            return Ok(());
        }
        let frame: Frame = DecodeError::parse("a Bedrock event", event.data)?;
        let index = frame.content_block_index.unwrap_or(0);
        match event.event {
            "messageStart" => {
                if let Some(role) = frame.role.as_deref().filter(|r| *r != "assistant") {
                    return Err(DecodeError(format!(
                        "the reply starts a {role:?} message, not an assistant one"
                    )));
                }
            }
            "contentBlockStart" => {
                if let Some(tool) = frame.start.as_ref().and_then(|s| s.tool_use.as_ref()) {
                    let at = out.toolcall_start(
                        tool.tool_use_id.as_deref().unwrap_or(""),
                        tool.name.as_deref().unwrap_or(""),
                    );
                    self.open.push((index, Kind::ToolCall, at));
                }
            }
            "contentBlockDelta" => {
                if let Some(delta) = &frame.delta {
                    self.delta(index, delta, out);
                }
            }
            "contentBlockStop" => {
                if let Some(pos) = self.open.iter().rposition(|(i, ..)| *i == index) {
                    let (_, _, at) = self.open.remove(pos);
                    out.end(at);
                }
            }
            "messageStop" => self.stop(frame.stop_reason.as_deref(), out),
            "metadata" => {
                if let Some(usage) = &frame.usage {
                    let u = out.usage_mut();
                    u.input = usage.input_tokens.unwrap_or(0);
                    u.output = usage.output_tokens.unwrap_or(0);
                    u.cache_read = usage.cache_read_input_tokens.unwrap_or(0);
                    u.cache_write = usage.cache_write_input_tokens.unwrap_or(0);
                    u.total_tokens = usage.total_tokens.unwrap_or(u.input + u.output);
                }
                // The last event of a reply.
                if self.stop.is_some() {
                    out.done();
                }
            }
            // Events Pincer does not know yet are future additions.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded {
        if self.stop.is_some() {
            out.done();
            Ok(())
        } else {
            Err(DecodeError(
                "the stream ended before the reply was complete (no messageStop)".into(),
            ))
        }
    }
}
