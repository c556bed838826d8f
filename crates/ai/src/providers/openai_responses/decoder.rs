//! The stream side of the OpenAI Responses API: typed SSE events (`response.created`,
//! `response.output_item.added`, `response.output_text.delta`, …, `response.completed`)
//! decoded into builder calls.
//!
//! Output items are tracked by `output_index` (falling back to the item id), so deltas land
//! in the right block even when a server interleaves items. When an item finishes, its
//! final content is checked against what streamed and anything missing is appended, so
//! servers that skip deltas still produce the whole reply.

use serde::Deserialize;
use serde_json::Value;

use crate::builder::MessageBuilder;
use crate::error::ErrorKind;
use crate::framing::SseEvent;
use crate::http::{DecodeError, Decoded, StreamDecoder};
use crate::model::Model;
use crate::providers::openai_shared::{Text, missing_suffix, stream_error_kind, tokens};
use crate::types::{ContentBlock, StopReason};

/// The fields of any event that Pincer reads; the rest is skipped. Deltas borrow.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Text<'a>,
    #[serde(borrow, default)]
    delta: Text<'a>,
    output_index: Option<u64>,
    #[serde(borrow, default)]
    item_id: Text<'a>,
    item: Option<Value>,
    response: Option<Value>,
    #[serde(borrow, default)]
    arguments: Text<'a>,
    code: Option<Value>,
    #[serde(borrow, default)]
    message: Text<'a>,
    /// Proxies that wrap errors as `{"error": {...}}`.
    error: Option<Value>,
}

static NULL: Value = Value::Null;

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireUsage {
    #[serde(deserialize_with = "tokens")]
    input_tokens: u64,
    #[serde(deserialize_with = "tokens")]
    output_tokens: u64,
    #[serde(deserialize_with = "tokens")]
    total_tokens: u64,
    input_tokens_details: Option<InputDetails>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct InputDetails {
    #[serde(deserialize_with = "tokens")]
    cached_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reasoning,
    Message,
    FunctionCall,
}

/// One output item of the response and the content block it fills.
#[derive(Debug)]
struct Item {
    output_index: Option<u64>,
    id: String,
    kind: Kind,
    content: usize,
    /// Reasoning summary parts seen (parts are joined by a blank line, as pi does).
    parts: u32,
    /// Argument JSON streamed so far (function calls).
    args: String,
}

/// Decodes one Responses stream.
pub(super) struct Decoder {
    label: String,
    items: Vec<Item>,
    has_response_id: bool,
}

impl Decoder {
    pub(super) fn new(model: &Model) -> Self {
        Self {
            label: model.reference(),
            items: Vec::new(),
            has_response_id: false,
        }
    }

    fn event(&mut self, kind: &str, event: &Event<'_>, out: &mut MessageBuilder) {
        let key = (event.output_index, event.item_id.non_empty());
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(response) = &event.response {
                    self.response_id(response, out);
                }
            }
            "response.output_item.added" => {
                if let Some(item) = &event.item {
                    self.open_item(event.output_index, item, out);
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(index) = self.live_item(key, Kind::Reasoning, out) {
                    let item = &mut self.items[index];
                    if item.parts > 0 {
                        out.thinking_delta(item.content, "\n\n");
                    }
                    item.parts += 1;
                }
            }
            // Summaries are what OpenAI shows; raw reasoning text comes from open-weight
            // models behind Responses-compatible servers.
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = event.delta.non_empty()
                    && let Some(index) = self.live_item(key, Kind::Reasoning, out)
                {
                    let item = &mut self.items[index];
                    item.parts = item.parts.max(1);
                    out.thinking_delta(item.content, delta);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = event.delta.non_empty()
                    && let Some(index) = self.live_item(key, Kind::Message, out)
                {
                    out.text_delta(self.items[index].content, delta);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = event.delta.non_empty()
                    && let Some(index) = self.live_item(key, Kind::FunctionCall, out)
                {
                    let item = &mut self.items[index];
                    item.args.push_str(delta);
                    out.toolcall_delta(item.content, delta);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = event.arguments.non_empty()
                    && let Some(index) = self.live_item(key, Kind::FunctionCall, out)
                {
                    complete_arguments(&mut self.items[index], arguments, out);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = &event.item {
                    self.close_item(event.output_index, item, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.complete(kind, event.response.as_ref().unwrap_or(&NULL), out);
            }
            "response.failed" => {
                let response = event.response.as_ref().unwrap_or(&NULL);
                self.response_id(response, out);
                let error = &response["error"];
                let (message, code) = match (
                    error["message"].as_str(),
                    response.pointer("/incomplete_details/reason"),
                ) {
                    (Some(message), _) => (message.to_owned(), error.get("code")),
                    (None, Some(Value::String(reason))) => (format!("incomplete: {reason}"), None),
                    _ => ("the response failed without details".to_owned(), None),
                };
                self.fail(code, &message, out);
            }
            "error" => {
                let wrapped = event.error.as_ref();
                let message = event
                    .message
                    .non_empty()
                    .or_else(|| wrapped.and_then(|e| e["message"].as_str()))
                    .unwrap_or("unknown error")
                    .to_owned();
                let code = event
                    .code
                    .as_ref()
                    .or_else(|| wrapped.and_then(|e| e.get("code")));
                self.fail(code, &message, out);
            }
            // Everything else (content_part.*, *.done texts, annotations, web search,
            // keep-alives) carries nothing the message needs.
            _ => {}
        }
    }

    fn response_id(&mut self, response: &Value, out: &mut MessageBuilder) {
        if self.has_response_id {
            return;
        }
        if let Some(id) = response["id"].as_str().filter(|id| !id.is_empty()) {
            out.set_response_id(id);
            self.has_response_id = true;
        }
    }

    /// The item an event belongs to: by output index, else item id, else the latest item of
    /// that kind; an item that never announced itself is opened on the spot.
    fn item(
        &mut self,
        (index, id): (Option<u64>, Option<&str>),
        kind: Kind,
        out: &mut MessageBuilder,
    ) -> usize {
        let found = match (index, id) {
            (Some(index), _) => self
                .items
                .iter()
                .rposition(|i| i.output_index == Some(index) && i.kind == kind),
            (None, Some(id)) => self
                .items
                .iter()
                .rposition(|i| i.id == id && i.kind == kind),
            (None, None) => self
                .items
                .iter()
                .rposition(|i| i.kind == kind && out.is_open(i.content)),
        };
        if let Some(found) = found {
            return found;
        }
        let content = match kind {
            Kind::Reasoning => out.thinking_start(),
            Kind::Message => out.text_start(),
            Kind::FunctionCall => out.toolcall_start("", ""),
        };
        let id = id.unwrap_or_default().to_owned();
        self.items.push(Item {
            output_index: index,
            id,
            kind,
            content,
            parts: 0,
            args: String::new(),
        });
        self.items.len() - 1
    }

    /// Like [`Self::item`], but `None` once the item finished: late deltas are dropped
    /// rather than growing a block that already ended.
    fn live_item(
        &mut self,
        key: (Option<u64>, Option<&str>),
        kind: Kind,
        out: &mut MessageBuilder,
    ) -> Option<usize> {
        let index = self.item(key, kind, out);
        out.is_open(self.items[index].content).then_some(index)
    }

    fn open_item(&mut self, output_index: Option<u64>, item: &Value, out: &mut MessageBuilder) {
        let id = item["id"].as_str().unwrap_or_default();
        let (kind, content) = match item["type"].as_str() {
            Some("reasoning") => (Kind::Reasoning, out.thinking_start()),
            Some("message") => (Kind::Message, out.text_start()),
            Some("function_call") => {
                let call_id = item["call_id"].as_str().unwrap_or_default();
                let name = item["name"].as_str().unwrap_or_default();
                (
                    Kind::FunctionCall,
                    out.toolcall_start(&format!("{call_id}|{id}"), name),
                )
            }
            // Built-in tool calls (web search, …) have no block of their own.
            _ => return,
        };
        self.items.push(Item {
            output_index,
            id: id.to_owned(),
            kind,
            content,
            parts: 0,
            args: String::new(),
        });
        if let Some(arguments) = item["arguments"].as_str().filter(|a| !a.is_empty())
            && let Some(last) = self.items.last_mut()
        {
            complete_arguments(last, arguments, out);
        }
    }

    fn close_item(&mut self, output_index: Option<u64>, item: &Value, out: &mut MessageBuilder) {
        let kind = match item["type"].as_str() {
            Some("reasoning") => Kind::Reasoning,
            Some("message") => Kind::Message,
            Some("function_call") => Kind::FunctionCall,
            _ => return,
        };
        let id = item["id"].as_str().filter(|id| !id.is_empty());
        let index = self.item((output_index, id), kind, out);
        let slot = &mut self.items[index];
        if !out.is_open(slot.content) {
            // Already finished (a repeated `done`): nothing may change any more.
            return;
        }
        match kind {
            Kind::Reasoning => {
                let summary = join_texts(&item["summary"], "summary_text", "text", "\n\n");
                complete_text(out, slot.content, &summary);
                // The whole item (encrypted content included) is what a later request replays.
                out.set_thinking_signature(slot.content, item.to_string());
            }
            Kind::Message => {
                let mut text = String::new();
                for part in item["content"].as_array().into_iter().flatten() {
                    match part["type"].as_str() {
                        Some("output_text") => {
                            text.push_str(part["text"].as_str().unwrap_or_default())
                        }
                        Some("refusal") => {
                            text.push_str(part["refusal"].as_str().unwrap_or_default())
                        }
                        _ => {}
                    }
                }
                complete_text(out, slot.content, &text);
                if let Some(id) = id {
                    out.set_text_signature(slot.content, id);
                }
            }
            Kind::FunctionCall => {
                if let Some(arguments) = item["arguments"].as_str() {
                    complete_arguments(slot, arguments, out);
                }
                let call_id = item["call_id"].as_str().unwrap_or_default();
                let full_id = format!("{call_id}|{}", id.unwrap_or_default());
                let name = item["name"]
                    .as_str()
                    .filter(|_| tool_name_missing(out, slot.content));
                out.toolcall_patch(
                    slot.content,
                    Some(&full_id)
                        .filter(|_| !call_id.is_empty())
                        .map(String::as_str),
                    name,
                );
            }
        }
        out.end(slot.content);
    }

    fn complete(&mut self, kind: &str, response: &Value, out: &mut MessageBuilder) {
        self.response_id(response, out);
        if let Ok(usage) = WireUsage::deserialize(&response["usage"]) {
            let cached = usage.input_tokens_details.map_or(0, |d| d.cached_tokens);
            let total = out.usage_mut();
            // Input tokens include the cached ones, which are billed at the cache price.
            total.input = usage.input_tokens.saturating_sub(cached);
            total.cache_read = cached;
            total.output = usage.output_tokens;
            total.total_tokens = if usage.total_tokens > 0 {
                usage.total_tokens
            } else {
                usage.input_tokens.saturating_add(usage.output_tokens)
            };
        }
        let default = if kind == "response.incomplete" {
            "incomplete"
        } else {
            "completed"
        };
        match response["status"].as_str().unwrap_or(default) {
            // `in_progress` / `queued` on a final event are server oddities; pi reads them as stop.
            "completed" | "in_progress" | "queued" => {
                out.set_stop_reason(StopReason::Stop);
                out.done();
            }
            "incomplete" => match response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
            {
                Some("content_filter") => out.fail(
                    ErrorKind::Refused,
                    format!(
                        "{}: the provider's content filter stopped the reply; rephrase the request",
                        self.label
                    ),
                ),
                _ => {
                    out.set_stop_reason(StopReason::Length);
                    out.done();
                }
            },
            status => {
                let error = &response["error"];
                let message = error["message"].as_str().map_or_else(
                    || format!("the response ended with status \"{status}\""),
                    str::to_owned,
                );
                self.fail(error.get("code"), &message, out);
            }
        }
    }

    fn fail(&self, code: Option<&Value>, message: &str, out: &mut MessageBuilder) {
        let code_text = match code {
            Some(Value::String(code)) => format!(" ({code})"),
            Some(Value::Number(code)) => format!(" ({code})"),
            _ => String::new(),
        };
        out.fail(
            stream_error_kind(code, message),
            format!("{}: {message}{code_text}", self.label),
        );
    }
}

/// Bring a text or thinking block up to its final content (appending what did not stream).
fn complete_text(out: &mut MessageBuilder, content: usize, full: &str) {
    let missing = match out.message().content.get(content) {
        Some(ContentBlock::Text(t)) => missing_suffix(&t.text, full).map(str::to_owned),
        Some(ContentBlock::Thinking(t)) => missing_suffix(&t.thinking, full).map(str::to_owned),
        _ => None,
    };
    match (missing, out.message().content.get(content)) {
        (Some(rest), Some(ContentBlock::Text(_))) => out.text_delta(content, &rest),
        (Some(rest), Some(ContentBlock::Thinking(_))) => out.thinking_delta(content, &rest),
        _ => {}
    }
}

/// Bring a tool call's arguments up to the final JSON the server reports. Streamed
/// arguments that disagree are kept: replacing them would contradict the deltas sent.
fn complete_arguments(item: &mut Item, full: &str, out: &mut MessageBuilder) {
    if let Some(rest) = missing_suffix(&item.args, full) {
        out.toolcall_delta(item.content, rest);
        item.args.push_str(rest);
    }
}

fn tool_name_missing(out: &MessageBuilder, content: usize) -> bool {
    matches!(out.message().content.get(content), Some(ContentBlock::ToolCall(call)) if call.name.is_empty())
}

/// `parts[].field` of the parts whose type is `kind`, joined by `separator`.
fn join_texts(parts: &Value, kind: &str, field: &str, separator: &str) -> String {
    let texts: Vec<&str> = parts
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] == kind)
        .filter_map(|p| p[field].as_str())
        .collect();
    texts.join(separator)
}

impl StreamDecoder for Decoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let data = event.data.trim();
        // Some compatible servers end with the Chat Completions marker; the end of the body
        // decides whether the reply was complete.
        if data == "[DONE]" {
            return Ok(());
        }
        let parsed: Event<'_> = DecodeError::parse("a Responses event", data)?;
        // The JSON `type` is authoritative; the SSE event name is the fallback.
        let kind = parsed.kind.non_empty().unwrap_or(event.event);
        self.event(kind, &parsed, out);
        Ok(())
    }

    fn finish(&mut self, _out: &mut MessageBuilder) -> Decoded {
        Err(DecodeError(format!(
            "{}: the stream ended before response.completed; the reply is incomplete",
            self.label
        )))
    }
}
