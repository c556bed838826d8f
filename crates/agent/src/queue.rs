//! Steering and follow-up queues. Steering messages are delivered after the current tool
//! batch; follow-ups when the agent would otherwise stop. `one-at-a-time` (pi's default)
//! delivers one message per poll, `all` drains the queue.

use std::collections::VecDeque;

use pincer_ai::Message;
use serde::{Deserialize, Serialize};

/// How a queue (steering, follow-up) delivers: one message per poll, or all waiting. The
/// names are pi's (its agent and RPC protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueueMode {
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
    #[serde(rename = "all")]
    All,
}

impl QueueMode {
    /// pi's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OneAtATime => "one-at-a-time",
            Self::All => "all",
        }
    }
}

#[derive(Debug, Default)]
pub struct MessageQueue {
    pub mode: QueueMode,
    items: VecDeque<Message>,
}

impl MessageQueue {
    pub fn new(mode: QueueMode) -> Self {
        Self {
            mode,
            items: VecDeque::new(),
        }
    }

    pub fn push(&mut self, message: Message) {
        self.items.push_back(message);
    }

    /// Take what one poll delivers under the queue's mode.
    pub fn poll(&mut self) -> Vec<Message> {
        match self.mode {
            QueueMode::OneAtATime => self.items.pop_front().into_iter().collect(),
            QueueMode::All => self.items.drain(..).collect(),
        }
    }

    pub fn clear(&mut self) -> Vec<Message> {
        self.items.drain(..).collect()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The queued messages, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Message> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_deliver_one_or_all() {
        let mut q = MessageQueue::new(QueueMode::OneAtATime);
        q.push(Message::user("a"));
        q.push(Message::user("b"));
        assert_eq!(q.poll().len(), 1);
        assert_eq!(q.len(), 1);
        q.mode = QueueMode::All;
        q.push(Message::user("c"));
        assert_eq!(q.poll().len(), 2);
        assert!(q.poll().is_empty());
        assert_eq!(
            serde_json::to_value(QueueMode::OneAtATime).unwrap(),
            "one-at-a-time"
        );
    }
}
