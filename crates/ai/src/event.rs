//! The one streaming event model every provider produces (pi-ai's `AssistantMessageEvent`),
//! and the stream type callers consume.
//!
//! Unlike pi, events do not carry a copy of the whole partial message: cloning it on every
//! delta would make decoding quadratic. They carry the delta; block ends carry the finished
//! block; `done` / `error` carry the final message. [`PartialMessage`] rebuilds the partial
//! message from events for callers that want it (the agent, the proxy client).

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures_util::Stream;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::error::{AiError, ErrorKind};
use crate::json_stream::parse_partial_json;
use crate::types::{
    AssistantMessage, ContentBlock, StopReason, TextContent, ThinkingContent, ToolCall,
};

/// One event of a streamed assistant reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AssistantMessageEvent {
    Start,
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    TextEnd {
        content_index: usize,
        content: String,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        content: String,
    },
    ToolcallStart {
        content_index: usize,
        id: String,
        tool_name: String,
    },
    ToolcallDelta {
        content_index: usize,
        delta: String,
    },
    ToolcallEnd {
        content_index: usize,
        tool_call: ToolCall,
    },
    /// The reply finished normally (`stop`, `length` or `toolUse`).
    Done {
        reason: StopReason,
        message: AssistantMessage,
    },
    /// The reply failed (`error` or `aborted`); `error.error_message` says why and what to do.
    Error {
        reason: StopReason,
        error: AssistantMessage,
        /// Typed cause, for retry and compaction decisions (not part of pi's wire format).
        #[serde(skip, default = "default_error_kind")]
        kind: ErrorKind,
    },
}

fn default_error_kind() -> ErrorKind {
    ErrorKind::Protocol
}

impl AssistantMessageEvent {
    /// Whether this is the last event of a stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error { .. })
    }
}

/// A streamed reply. Yields events until exactly one terminal `done` or `error` event.
/// Dropping it cancels the underlying request.
pub struct AssistantStream {
    rx: mpsc::Receiver<AssistantMessageEvent>,
    task: Option<tokio::task::JoinHandle<()>>,
    finished: bool,
}

impl AssistantStream {
    /// A stream fed by a producer task. The task is aborted when the stream is dropped.
    pub fn from_task(
        rx: mpsc::Receiver<AssistantMessageEvent>,
        task: tokio::task::JoinHandle<()>,
    ) -> Self {
        Self {
            rx,
            task: Some(task),
            finished: false,
        }
    }

    /// A stream of events that are already known (used for immediate failures and tests).
    pub fn from_events(events: Vec<AssistantMessageEvent>) -> Self {
        let (tx, rx) = mpsc::channel(events.len().max(1));
        for event in events {
            // The channel has room for every event, so this cannot fail.
            let _ = tx.try_send(event);
        }
        Self {
            rx,
            task: None,
            finished: false,
        }
    }

    /// A channel pair for producers: send events into the sender, hand out the stream.
    pub fn channel() -> (
        mpsc::Sender<AssistantMessageEvent>,
        mpsc::Receiver<AssistantMessageEvent>,
    ) {
        mpsc::channel(256)
    }

    /// Drain the stream and return the final message (also for errors: check `stop_reason`).
    pub async fn result(mut self) -> AssistantMessage {
        use futures_util::StreamExt;
        let mut partial = PartialMessage::default();
        while let Some(event) = self.next().await {
            match event {
                AssistantMessageEvent::Done { message, .. } => return message,
                AssistantMessageEvent::Error { error, .. } => return error,
                other => partial.apply(&other),
            }
        }
        // Only reachable if a custom provider ended its stream without a terminal event.
        let mut message = partial.into_message();
        message.stop_reason = StopReason::Error;
        message.error_message = Some("the provider ended the stream without a final event".into());
        message
    }

    /// Drain the stream: `Ok(message)` when it finished normally, `Err` with the kind,
    /// the message and the partial reply when it failed.
    pub async fn complete(mut self) -> Result<AssistantMessage, AiError> {
        use futures_util::StreamExt;
        while let Some(event) = self.next().await {
            match event {
                AssistantMessageEvent::Done { message, .. } => return Ok(message),
                AssistantMessageEvent::Error { error, kind, .. } => {
                    return Err(AiError {
                        kind,
                        message: error.error_message.clone().unwrap_or_default(),
                        partial: Box::new(error),
                    });
                }
                _ => {}
            }
        }
        Err(AiError {
            kind: ErrorKind::Protocol,
            message: "the provider ended the stream without a final event".into(),
            partial: Box::default(),
        })
    }
}

impl Stream for AssistantStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        if self.finished {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(event)) => {
                if event.is_terminal() {
                    self.finished = true;
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                self.finished = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for AssistantStream {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Rebuilds the partial assistant message from events, as pi's `partial` field shows it:
/// text and thinking grow with each delta, tool-call arguments are re-parsed as they stream.
#[derive(Debug, Default, Clone)]
pub struct PartialMessage {
    message: AssistantMessage,
    /// Raw argument JSON per content index, for tool calls still streaming.
    raw_args: Vec<(usize, String)>,
}

impl PartialMessage {
    pub fn new(template: AssistantMessage) -> Self {
        Self {
            message: template,
            raw_args: Vec::new(),
        }
    }

    /// The message as it stands.
    pub fn message(&self) -> &AssistantMessage {
        &self.message
    }

    pub fn into_message(self) -> AssistantMessage {
        self.message
    }

    /// Apply one event. Events for an index that does not exist are ignored.
    pub fn apply(&mut self, event: &AssistantMessageEvent) {
        use AssistantMessageEvent as E;
        match event {
            E::Start => {}
            E::TextStart { content_index } => {
                self.put(*content_index, ContentBlock::Text(TextContent::default()))
            }
            E::ThinkingStart { content_index } => self.put(
                *content_index,
                ContentBlock::Thinking(ThinkingContent::default()),
            ),
            E::ToolcallStart {
                content_index,
                id,
                tool_name,
            } => {
                self.raw_args.push((*content_index, String::new()));
                let call = ToolCall::opened(id, tool_name);
                self.put(*content_index, ContentBlock::ToolCall(call))
            }
            E::TextDelta {
                content_index,
                delta,
            } => {
                if let Some(text) = self.text_of(*content_index, ContentBlock::text_mut) {
                    text.push_str(delta);
                }
            }
            E::ThinkingDelta {
                content_index,
                delta,
            } => {
                if let Some(text) = self.text_of(*content_index, ContentBlock::thinking_mut) {
                    text.push_str(delta);
                }
            }
            E::ToolcallDelta {
                content_index,
                delta,
            } => {
                let Some((_, raw)) = self.raw_args.iter_mut().find(|(i, _)| i == content_index)
                else {
                    return;
                };
                raw.push_str(delta);
                let parsed = parse_partial_json(raw);
                if let Some(ContentBlock::ToolCall(call)) =
                    self.message.content.get_mut(*content_index)
                {
                    call.arguments = parsed;
                }
            }
            E::TextEnd {
                content_index,
                content,
            } => {
                if let Some(text) = self.text_of(*content_index, ContentBlock::text_mut) {
                    text.clone_from(content);
                }
            }
            E::ThinkingEnd {
                content_index,
                content,
            } => {
                if let Some(text) = self.text_of(*content_index, ContentBlock::thinking_mut) {
                    text.clone_from(content);
                }
            }
            E::ToolcallEnd {
                content_index,
                tool_call,
            } => {
                self.raw_args.retain(|(i, _)| i != content_index);
                self.put(*content_index, ContentBlock::ToolCall(tool_call.clone()));
            }
            E::Done { message, .. } => self.message = message.clone(),
            E::Error { error, .. } => self.message = error.clone(),
        }
    }

    /// The `text` of block `index`, if there is such a block and it has such a text.
    fn text_of(
        &mut self,
        index: usize,
        text: fn(&mut ContentBlock) -> Option<&mut String>,
    ) -> Option<&mut String> {
        self.message.content.get_mut(index).and_then(text)
    }

    fn put(&mut self, index: usize, block: ContentBlock) {
        if index < self.message.content.len() {
            self.message.content[index] = block;
        } else if index == self.message.content.len() {
            self.message.content.push(block);
        }
    }
}
