//! Decoding Anthropic's Messages stream (`message_start`, `content_block_*`,
//! `message_delta`, `message_stop`, `ping`, `error`) into builder calls.
//!
//! Every event is parsed into one flat struct of optional, borrowed fields rather than a
//! tagged enum or a `serde_json::Value`: internally tagged enums buffer the whole object
//! first, and text deltas are the hottest path of the LLM layer.

use serde::Deserialize;
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::error::{ErrorKind, is_context_overflow};
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, StreamDecoder};
use crate::model::Model;
use crate::providers::borrowed_str::{Str, opt_str};
use crate::types::StopReason;

/// What pi shows for thinking the provider redacted.
pub(super) const REDACTED_THINKING_TEXT: &str = "[Reasoning redacted]";

fn text<'s>(field: &'s Option<Str<'_>>) -> &'s str {
    opt_str(field).unwrap_or("")
}

#[derive(Debug, Deserialize)]
struct Frame<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    index: Option<u64>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    content_block: Option<BlockStart<'a>>,
    #[serde(borrow, default)]
    message: Option<MessageStart<'a>>,
    usage: Option<WireUsage>,
    /// A Value because proxies do not all send Anthropic's `{type, message}` shape.
    error: Option<Value>,
}

/// Both `content_block_delta.delta` and `message_delta.delta`.
#[derive(Debug, Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    text: Option<Str<'a>>,
    #[serde(borrow, default)]
    thinking: Option<Str<'a>>,
    #[serde(borrow, default)]
    partial_json: Option<Str<'a>>,
    #[serde(borrow, default)]
    signature: Option<Str<'a>>,
    #[serde(borrow, default)]
    stop_reason: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct BlockStart<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Str<'a>>,
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    #[serde(borrow, default)]
    name: Option<Str<'a>>,
    #[serde(borrow, default)]
    text: Option<Str<'a>>,
    #[serde(borrow, default)]
    thinking: Option<Str<'a>>,
    #[serde(borrow, default)]
    signature: Option<Str<'a>>,
    #[serde(borrow, default)]
    data: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow, default)]
    id: Option<Str<'a>>,
    usage: Option<WireUsage>,
}

/// Token counts; `null` and absent both mean "not reported here".
#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
}

/// Decoder state for one response.
#[derive(Debug)]
pub(super) struct AnthropicDecoder {
    /// `provider/model`, prefixed to error messages.
    label: String,
    /// Open blocks: Anthropic's `index` → the builder's content index. They differ as soon
    /// as the stream carries a block kind Pincer does not model (server tool results, …).
    open: Vec<(u64, usize)>,
    /// `message_delta` reported a stop reason: the reply is complete even if
    /// `message_stop` never arrives.
    stop_seen: bool,
    /// OAuth mode: the request's tool names, which tool calls in Claude Code's spelling
    /// (`Read`) are mapped back to (`read`).
    oauth_tools: Option<Vec<String>>,
}

impl AnthropicDecoder {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            label: model.reference(),
            open: Vec::new(),
            stop_seen: false,
            oauth_tools: None,
        }
    }

    /// A decoder for an OAuth-mode request that offered `tools`.
    pub(super) fn with_oauth_tools(model: &Model, tools: Vec<String>) -> Self {
        Self {
            oauth_tools: Some(tools),
            ..Self::new(model)
        }
    }

    /// The builder index of an open block. The block being streamed is almost always the
    /// last one opened, so search from the back.
    fn block(&self, index: Option<u64>) -> Option<usize> {
        let index = index?;
        self.open
            .iter()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| *b)
    }

    fn block_start(
        &mut self,
        index: Option<u64>,
        block: &BlockStart<'_>,
        out: &mut MessageBuilder,
    ) {
        let Some(index) = index else { return };
        let builder_index = match block.kind.as_ref().map(Str::as_str) {
            Some("text") => {
                let i = out.text_start();
                out.text_delta(i, text(&block.text));
                i
            }
            Some("thinking") => {
                let i = out.thinking_start();
                out.thinking_delta(i, text(&block.thinking));
                if let Some(sig) = block.signature.as_ref().filter(|s| !s.0.is_empty()) {
                    out.thinking_signature_push(i, sig.as_str());
                }
                i
            }
            Some("redacted_thinking") => {
                // The opaque `data` is what must be echoed back, so it is kept as the signature.
                let i = out.thinking_start();
                out.set_redacted(i);
                out.set_thinking_signature(i, text(&block.data));
                out.thinking_delta(i, REDACTED_THINKING_TEXT);
                i
            }
            Some("tool_use") => {
                let name = text(&block.name);
                let name = match &self.oauth_tools {
                    Some(tools) => super::request::from_claude_code_name(name, tools),
                    None => name,
                };
                out.toolcall_start(text(&block.id), name)
            }
            _ => return,
        };
        self.open.push((index, builder_index));
    }

    fn block_delta(&mut self, index: Option<u64>, delta: &Delta<'_>, out: &mut MessageBuilder) {
        let Some(i) = self.block(index) else { return };
        match delta.kind.as_ref().map(Str::as_str) {
            Some("text_delta") => out.text_delta(i, text(&delta.text)),
            Some("thinking_delta") => out.thinking_delta(i, text(&delta.thinking)),
            Some("input_json_delta") => out.toolcall_delta(i, text(&delta.partial_json)),
            Some("signature_delta") => out.thinking_signature_push(i, text(&delta.signature)),
            _ => {}
        }
    }

    fn block_stop(&mut self, index: Option<u64>, out: &mut MessageBuilder) {
        let Some(index) = index else { return };
        if let Some(pos) = self.open.iter().rposition(|(i, _)| *i == index) {
            let (_, builder_index) = self.open.remove(pos);
            out.end(builder_index);
        }
    }

    fn message_delta(&mut self, frame: &Frame<'_>, out: &mut MessageBuilder) {
        if let Some(usage) = &frame.usage {
            apply_usage(usage, out, false);
        }
        let Some(reason) = frame.delta.as_ref().and_then(|d| d.stop_reason.as_ref()) else {
            return;
        };
        match map_stop_reason(reason.as_str()) {
            Ok(reason) => {
                out.set_stop_reason(reason);
                self.stop_seen = true;
            }
            Err((kind, why)) => out.fail(kind, format!("{}: {why}", self.label)),
        }
    }

    fn error(&self, error: Option<&Value>, out: &mut MessageBuilder) {
        let (kind, message) = match error {
            Some(Value::Object(e)) => (
                e.get("type").and_then(Value::as_str).unwrap_or("error"),
                e.get("message").and_then(Value::as_str).unwrap_or(""),
            ),
            Some(Value::String(message)) => ("error", message.as_str()),
            _ => ("error", ""),
        };
        let error_kind = classify_error(kind, message);
        let hint = match error_kind {
            ErrorKind::ContextOverflow => {
                "; the conversation is too long for this model, compact it or start a new session"
            }
            ErrorKind::Auth => "; check the API key or log in again",
            _ if error_kind.is_retryable() => "; try again later",
            _ => "",
        };
        let message = if message.is_empty() {
            "(no message)"
        } else {
            message
        };
        out.fail(
            error_kind,
            format!("{}: {kind}: {message}{hint}", self.label),
        );
    }
}

impl StreamDecoder for AnthropicDecoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let frame: Frame<'_> = DecodeError::parse("an Anthropic event", event.data)?;
        let kind = frame.kind.as_ref().map_or(event.event, Str::as_str);
        match kind {
            "content_block_delta" => {
                if let Some(delta) = &frame.delta {
                    self.block_delta(frame.index, delta, out);
                }
            }
            "content_block_start" => {
                if let Some(block) = &frame.content_block {
                    self.block_start(frame.index, block, out);
                }
            }
            "content_block_stop" => self.block_stop(frame.index, out),
            "message_start" => {
                if let Some(message) = &frame.message {
                    if let Some(id) = &message.id {
                        out.set_response_id(id.as_str());
                    }
                    apply_usage(
                        message.usage.as_ref().unwrap_or(&WireUsage::default()),
                        out,
                        true,
                    );
                }
            }
            "message_delta" => self.message_delta(&frame, out),
            "message_stop" => out.done(),
            "error" => self.error(frame.error.as_ref(), out),
            // `ping` keeps the connection alive; unknown events are future additions.
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut MessageBuilder) -> Decoded {
        if self.stop_seen {
            // Some proxies drop `message_stop`; the stop reason already said it is complete.
            out.done();
            Ok(())
        } else {
            Err(DecodeError(
                "the stream ended before the reply was complete (no stop reason, no message_stop)"
                    .into(),
            ))
        }
    }
}

/// `message_start` reports every count (missing ones are zero); `message_delta` only
/// overwrites what it carries, so proxies that omit input counts there lose nothing.
fn apply_usage(wire: &WireUsage, out: &mut MessageBuilder, reset: bool) {
    let usage = out.usage_mut();
    let set = |slot: &mut u64, value: Option<u64>| match value {
        Some(v) => *slot = v,
        None if reset => *slot = 0,
        None => {}
    };
    set(&mut usage.input, wire.input_tokens);
    set(&mut usage.output, wire.output_tokens);
    set(&mut usage.cache_read, wire.cache_read_input_tokens);
    set(&mut usage.cache_write, wire.cache_creation_input_tokens);
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
}

fn map_stop_reason(reason: &str) -> Result<StopReason, (ErrorKind, String)> {
    match reason {
        // `pause_turn`: a server tool paused the turn; resubmitting continues it.
        // `stop_sequence`: Pincer sets none, but it is a normal end.
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Err((
            ErrorKind::Refused,
            format!(
                "the model declined to continue (stop_reason {reason}); rephrase the request or start a new session"
            ),
        )),
        other => Err((
            ErrorKind::Protocol,
            format!("unknown stop_reason {other:?}; Pincer may need an update for this API change"),
        )),
    }
}

/// Map an in-stream `error` event to a kind that drives retry and compaction.
fn classify_error(kind: &str, message: &str) -> ErrorKind {
    match kind {
        "overloaded_error" => ErrorKind::Overloaded,
        "rate_limit_error" => ErrorKind::RateLimited { retry_after: None },
        "authentication_error" | "permission_error" => ErrorKind::Auth,
        "timeout_error" => ErrorKind::Timeout,
        // "prompt is too long: 210000 tokens > 200000 maximum" arrives as a request error.
        _ if is_context_overflow(&message.to_ascii_lowercase()) => ErrorKind::ContextOverflow,
        "invalid_request_error" | "not_found_error" | "request_too_large" => ErrorKind::BadRequest,
        _ => ErrorKind::Server,
    }
}
