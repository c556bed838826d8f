//! The producer side of a stream: decoders call this to open, grow and close content
//! blocks; it keeps the partial message, assigns content indices and queues the events.
//! Keeping this in one place is what makes every provider emit the same event sequence.

use serde_json::Value;

use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent;
use crate::json_stream::parse_partial_json;
use crate::model::Model;
use crate::types::{
    AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    now_ms,
};

/// Builds one assistant message and the events that describe its growth.
#[derive(Debug)]
pub struct MessageBuilder {
    message: AssistantMessage,
    events: Vec<AssistantMessageEvent>,
    /// Content indices of blocks that are open, in the order they were opened.
    open: Vec<usize>,
    /// Raw argument JSON of open tool calls, by content index.
    raw_args: Vec<(usize, String)>,
    started: bool,
    finished: bool,
    cost: crate::model::ModelCost,
}

impl MessageBuilder {
    pub fn new(model: &Model) -> Self {
        Self {
            message: AssistantMessage {
                content: Vec::new(),
                api: model.api.clone(),
                provider: model.provider.clone(),
                model: model.id.clone(),
                usage: Usage::default(),
                stop_reason: StopReason::Stop,
                error_message: None,
                timestamp: now_ms(),
                response_id: None,
            },
            events: Vec::new(),
            open: Vec::new(),
            raw_args: Vec::new(),
            started: false,
            finished: false,
            cost: model.cost.clone(),
        }
    }

    /// The message as it stands.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    /// Whether `done` or `error` was emitted.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Take the events queued since the last call.
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, AssistantMessageEvent> {
        self.events.drain(..)
    }

    /// Emit `start` (once).
    pub fn start(&mut self) {
        if !self.started {
            self.started = true;
            self.events.push(AssistantMessageEvent::Start);
        }
    }

    pub fn usage_mut(&mut self) -> &mut Usage {
        &mut self.message.usage
    }

    pub fn set_response_id(&mut self, id: impl Into<String>) {
        self.message.response_id = Some(id.into());
    }

    /// Record the stop reason the provider reported; `done` uses it.
    pub fn set_stop_reason(&mut self, reason: StopReason) {
        self.message.stop_reason = reason;
    }

    pub fn stop_reason(&self) -> StopReason {
        self.message.stop_reason
    }

    pub fn is_open(&self, index: usize) -> bool {
        self.open.contains(&index)
    }

    /// Open a text block and return its content index.
    pub fn text_start(&mut self) -> usize {
        let block = ContentBlock::Text(TextContent::default());
        self.open_block(block, |content_index| AssistantMessageEvent::TextStart {
            content_index,
        })
    }

    pub fn text_delta(&mut self, index: usize, delta: &str) {
        self.grow(
            index,
            delta,
            ContentBlock::text_mut,
            |content_index, delta| AssistantMessageEvent::TextDelta {
                content_index,
                delta,
            },
        );
    }

    pub fn set_text_signature(&mut self, index: usize, signature: impl Into<String>) {
        if let Some(ContentBlock::Text(t)) = self.message.content.get_mut(index) {
            t.text_signature = Some(signature.into());
        }
    }

    /// Open a thinking block and return its content index.
    pub fn thinking_start(&mut self) -> usize {
        let block = ContentBlock::Thinking(ThinkingContent::default());
        self.open_block(block, |content_index| {
            AssistantMessageEvent::ThinkingStart { content_index }
        })
    }

    pub fn thinking_delta(&mut self, index: usize, delta: &str) {
        self.grow(
            index,
            delta,
            ContentBlock::thinking_mut,
            |content_index, delta| AssistantMessageEvent::ThinkingDelta {
                content_index,
                delta,
            },
        );
    }

    /// Append to the thinking signature (Anthropic streams it in pieces).
    pub fn thinking_signature_push(&mut self, index: usize, piece: &str) {
        if let Some(ContentBlock::Thinking(t)) = self.message.content.get_mut(index) {
            t.thinking_signature
                .get_or_insert_with(String::new)
                .push_str(piece);
        }
    }

    pub fn set_thinking_signature(&mut self, index: usize, signature: impl Into<String>) {
        if let Some(ContentBlock::Thinking(t)) = self.message.content.get_mut(index) {
            t.thinking_signature = Some(signature.into());
        }
    }

    pub fn set_redacted(&mut self, index: usize) {
        if let Some(ContentBlock::Thinking(t)) = self.message.content.get_mut(index) {
            t.redacted = Some(true);
        }
    }

    /// Open a tool call and return its content index.
    pub fn toolcall_start(&mut self, id: &str, name: &str) -> usize {
        let block = ContentBlock::ToolCall(ToolCall::opened(id, name));
        let index = self.open_block(block, |content_index| {
            AssistantMessageEvent::ToolcallStart {
                content_index,
                id: id.to_owned(),
                tool_name: name.to_owned(),
            }
        });
        self.raw_args.push((index, String::new()));
        index
    }

    /// Append argument JSON to an open tool call; the partial arguments are re-parsed.
    pub fn toolcall_delta(&mut self, index: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        let Some((_, raw)) = self.raw_args.iter_mut().find(|(i, _)| *i == index) else {
            return;
        };
        raw.push_str(delta);
        let parsed = parse_partial_json(raw);
        if let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            call.arguments = parsed;
        }
        self.events.push(AssistantMessageEvent::ToolcallDelta {
            content_index: index,
            delta: delta.to_owned(),
        });
    }

    /// Set a tool call's id or name when the provider sends it late (some OpenAI-compatible
    /// servers send the name after the first argument chunk).
    pub fn toolcall_patch(&mut self, index: usize, id: Option<&str>, name: Option<&str>) {
        if let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            if let Some(id) = id.filter(|s| !s.is_empty()) {
                id.clone_into(&mut call.id);
            }
            if let Some(name) = name.filter(|s| !s.is_empty()) {
                call.name.push_str(name);
            }
        }
    }

    pub fn set_thought_signature(&mut self, index: usize, signature: impl Into<String>) {
        if let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index) {
            call.thought_signature = Some(signature.into());
        }
    }

    /// Replace a tool call's arguments with a complete object (providers that send whole
    /// arguments at once, such as Gemini).
    pub fn toolcall_set_arguments(&mut self, index: usize, arguments: Value) {
        if let Some((_, raw)) = self.raw_args.iter_mut().find(|(i, _)| *i == index) {
            let text = arguments.to_string();
            raw.clone_from(&text);
            if let Some(ContentBlock::ToolCall(call)) = self.message.content.get_mut(index) {
                call.arguments = arguments;
            }
            self.events.push(AssistantMessageEvent::ToolcallDelta {
                content_index: index,
                delta: text,
            });
        }
    }

    /// Close a block, emitting its `*_end` event. Closing a closed block does nothing.
    pub fn end(&mut self, index: usize) {
        let Some(pos) = self.open.iter().position(|i| *i == index) else {
            return;
        };
        self.open.remove(pos);
        let event = match self.message.content.get_mut(index) {
            Some(ContentBlock::Text(t)) => AssistantMessageEvent::TextEnd {
                content_index: index,
                content: t.text.clone(),
            },
            Some(ContentBlock::Thinking(t)) => AssistantMessageEvent::ThinkingEnd {
                content_index: index,
                content: t.thinking.clone(),
            },
            Some(ContentBlock::ToolCall(call)) => {
                if let Some(pos) = self.raw_args.iter().position(|(i, _)| *i == index) {
                    let (_, raw) = self.raw_args.swap_remove(pos);
                    call.arguments = final_arguments(&raw);
                }
                AssistantMessageEvent::ToolcallEnd {
                    content_index: index,
                    tool_call: call.clone(),
                }
            }
            _ => return,
        };
        self.events.push(event);
    }

    /// Close every open block, in content order.
    pub fn end_all(&mut self) {
        let mut open = std::mem::take(&mut self.open);
        open.sort_unstable();
        for index in open {
            self.open.push(index);
            self.end(index);
        }
    }

    /// Finish normally: close open blocks, compute cost, emit `done`.
    /// A `toolUse` reason without tool calls becomes `stop`, and tool calls with a `stop`
    /// reason become `toolUse`, so callers can trust the reason.
    pub fn done(&mut self) {
        if self.finished {
            return;
        }
        self.start();
        self.end_all();
        let has_calls = self
            .message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolCall(_)));
        match (self.message.stop_reason, has_calls) {
            (StopReason::Stop, true) => self.message.stop_reason = StopReason::ToolUse,
            (StopReason::ToolUse, false) => self.message.stop_reason = StopReason::Stop,
            (StopReason::Error | StopReason::Aborted, _) => {
                self.message.stop_reason = StopReason::Stop
            }
            _ => {}
        }
        self.finalize_usage();
        self.finished = true;
        self.events.push(AssistantMessageEvent::Done {
            reason: self.message.stop_reason,
            message: self.message.clone(),
        });
    }

    /// Finish with a failure: the partial content is kept, open blocks stay unclosed
    /// (as pi does), and one `error` event carries the message.
    pub fn fail(&mut self, kind: ErrorKind, message: impl Into<String>) {
        if self.finished {
            return;
        }
        // Tool calls that never finished streaming keep whatever arguments parsed so far.
        self.raw_args.clear();
        self.open.clear();
        let reason = if kind == ErrorKind::Aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        self.message.stop_reason = reason;
        self.message.error_message = Some(message.into());
        self.finalize_usage();
        self.finished = true;
        self.events.push(AssistantMessageEvent::Error {
            reason,
            error: self.message.clone(),
            kind,
        });
    }

    fn finalize_usage(&mut self) {
        let usage = &mut self.message.usage;
        if usage.total_tokens == 0 {
            usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
        }
        self.cost.apply(usage);
    }

    /// Opens `block` (starting the message first if need be) and emits its `*_start`
    /// event, `event` of its content index; returns that index.
    fn open_block(
        &mut self,
        block: ContentBlock,
        event: impl FnOnce(usize) -> AssistantMessageEvent,
    ) -> usize {
        self.start();
        let index = self.push(block);
        self.events.push(event(index));
        index
    }

    /// Appends a non-empty `delta` to the `text` of block `index` and emits `event` for
    /// it, if that block has such a text.
    fn grow(
        &mut self,
        index: usize,
        delta: &str,
        text: fn(&mut ContentBlock) -> Option<&mut String>,
        event: fn(usize, String) -> AssistantMessageEvent,
    ) {
        if delta.is_empty() {
            return;
        }
        if let Some(t) = self.message.content.get_mut(index).and_then(text) {
            t.push_str(delta);
            self.events.push(event(index, delta.to_owned()));
        }
    }

    fn push(&mut self, block: ContentBlock) -> usize {
        let index = self.message.content.len();
        self.message.content.push(block);
        self.open.push(index);
        index
    }
}

/// Arguments of a finished tool call. Complete JSON must be an object; anything else is
/// wrapped so the model sees what it sent instead of losing it.
fn final_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => value,
        _ => match parse_partial_json(raw) {
            Value::Object(map) if !map.is_empty() => Value::Object(map),
            _ => serde_json::json!({ "_raw": raw }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{AssistantMessageEvent as E, PartialMessage};
    use crate::test_support::assert_kinds;
    use serde_json::json;

    fn model() -> Model {
        serde_json::from_value(
            json!({"id":"m","name":"M","api":"x","provider":"p","baseUrl":"u",
            "input":["text"],"cost":{"input":1,"output":2},"contextWindow":10,"maxTokens":5}),
        )
        .unwrap()
    }

    #[test]
    fn builds_blocks_in_order_and_partial_mirror_agrees() {
        let mut b = MessageBuilder::new(&model());
        let t = b.thinking_start();
        b.thinking_delta(t, "hm");
        b.end(t);
        let x = b.text_start();
        b.text_delta(x, "he");
        b.text_delta(x, "llo");
        let c = b.toolcall_start("id1", "read");
        b.toolcall_delta(c, "{\"pa");
        assert_eq!(
            b.message().content[2],
            ContentBlock::ToolCall(ToolCall {
                id: "id1".into(),
                name: "read".into(),
                arguments: json!({}),
                thought_signature: None
            })
        );
        b.toolcall_delta(c, "th\": \"a.txt\"}");
        b.usage_mut().input = 1_000_000;
        b.done();
        let events: Vec<_> = b.drain_events().collect();
        assert_kinds(
            &events,
            "start thinking_start thinking_delta thinking_end text_start text_delta text_delta \
             toolcall_start toolcall_delta toolcall_delta text_end toolcall_end done",
        );
        let E::Done { reason, message } = events.last().unwrap() else {
            panic!()
        };
        assert_eq!(*reason, StopReason::ToolUse);
        assert_eq!(message.text(), "hello");
        assert_eq!(
            message.tool_calls().next().unwrap().arguments,
            json!({"path":"a.txt"})
        );
        assert_eq!(message.usage.cost.input, 1.0);
        assert_eq!(message.usage.total_tokens, 1_000_000);

        let mut mirror = PartialMessage::default();
        for e in &events[..events.len() - 1] {
            mirror.apply(e);
        }
        assert_eq!(mirror.message().content, message.content);
    }

    #[test]
    fn fail_keeps_partial_content() {
        let mut b = MessageBuilder::new(&model());
        let x = b.text_start();
        b.text_delta(x, "partial");
        b.fail(ErrorKind::Network, "connection reset");
        b.done(); // ignored: already finished
        let events: Vec<_> = b.drain_events().collect();
        let E::Error {
            reason,
            error,
            kind,
        } = events.last().unwrap()
        else {
            panic!()
        };
        assert_eq!(*reason, StopReason::Error);
        assert_eq!(*kind, ErrorKind::Network);
        assert_eq!(error.text(), "partial");
        assert_eq!(error.error_message.as_deref(), Some("connection reset"));
        assert_eq!(events.iter().filter(|e| e.is_terminal()).count(), 1);
    }

    #[test]
    fn invalid_final_arguments_are_kept_raw() {
        assert_eq!(final_arguments("[1,2]"), json!({"_raw": "[1,2]"}));
        assert_eq!(final_arguments(""), json!({}));
        assert_eq!(final_arguments("{\"a\":1"), json!({"a": 1}));
    }
}
