//! What `pincer rpc` writes on stdout: one JSON object per line, responses and events, in
//! the order they were produced. One writer task owns stdout, so a response and an event
//! never interleave mid-line, and it flushes when it has nothing more queued (a burst of
//! deltas is one write, a lone response goes out at once).
//!
//! Agent events are written as pi writes them: `message_update` carries the partial
//! assistant message as it stands after the delta (pincer-agent leaves it out of the event so
//! that in-process subscribers do not pay for a copy per delta; a pi client reads it).

use std::io::Write as _;

use pincer_agent::AgentEvent;
use pincer_ai::{Message, PartialMessage};
use serde_json::Value;
use tokio::sync::mpsc;

/// A handle to the writer; clones share it.
#[derive(Clone)]
pub struct Output {
    tx: mpsc::UnboundedSender<String>,
}

impl Output {
    /// Starts the writer on a thread of its own (stdout is blocking); it ends when every
    /// handle is gone and the queue is written, or when stdout is closed.
    pub fn spawn() -> (Self, std::thread::JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let writer = std::thread::spawn(move || {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            while let Some(line) = rx.blocking_recv() {
                if writeln!(out, "{line}").is_err() {
                    return;
                }
                // More already queued: write it before flushing.
                while let Ok(line) = rx.try_recv() {
                    if writeln!(out, "{line}").is_err() {
                        return;
                    }
                }
                if out.flush().is_err() {
                    return;
                }
            }
        });
        (Self { tx }, writer)
    }

    /// A handle whose lines go to the returned receiver instead of stdout.
    #[cfg(test)]
    pub(crate) fn capture() -> (Self, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    /// Queues one JSON line (U+2028/U+2029 escaped, as pi writes them).
    pub fn json(&self, value: &Value) {
        self.line(crate::json_line(value));
    }

    /// Queues one line that is already JSON.
    pub fn line(&self, line: String) {
        // The writer only goes away once stdout is closed; nobody is listening then.
        let _ = self.tx.send(line);
    }
}

/// Turns agent events into pi's wire shape.
#[derive(Default)]
pub struct EventEncoder {
    /// The assistant message being streamed, rebuilt from its events.
    partial: Option<PartialMessage>,
}

impl EventEncoder {
    pub fn encode(&mut self, event: &AgentEvent) -> Value {
        let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
        match event {
            AgentEvent::MessageStart {
                message: Message::Assistant(message),
            } => self.partial = Some(PartialMessage::new(message.clone())),
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => {
                if let Some(partial) = &mut self.partial {
                    partial.apply(assistant_message_event);
                    // As a message, so it carries its `role` like pi's; pi-ai's event
                    // carries the same snapshot as its `partial`.
                    let message = Message::Assistant(partial.message().clone());
                    if let (Value::Object(map), Ok(message)) =
                        (&mut value, serde_json::to_value(&message))
                    {
                        if let Some(Value::Object(event)) = map.get_mut("assistantMessageEvent")
                            && !event.contains_key("partial")
                        {
                            event.insert("partial".into(), message.clone());
                        }
                        map.insert("message".into(), message);
                    }
                }
            }
            AgentEvent::MessageEnd {
                message: Message::Assistant(_),
            } => self.partial = None,
            _ => {}
        }
        value
    }
}
