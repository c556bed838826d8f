//! Queue modes: what a message does when its session already has a run going (OpenClaw's
//! `messages.queue.mode`, chosen per request by the v4 `queueMode` param), the settings
//! that go with them, and the texts the modes hand to the model.
//!
//! - `steer`: the message is injected into the running turn as a user message (pi's
//!   steering queue, read at the next tool boundary); if the turn ends first, it runs as a
//!   follow-up turn of its own.
//! - `followup`: it runs as its own turn after the current one.
//! - `collect`: messages arriving while busy are gathered and, once the session is free and
//!   a quiet window has passed (or the batch is full), run as one turn.
//! - `interrupt`: the running turn is aborted (its partial reply is kept), then the message
//!   runs.

pub use pincer_config::{QUEUE_MODE_NAMES, QueueMode, UnknownQueueMode};

/// How busy sessions treat new messages (OpenClaw's `messages.queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// The mode when a request names none.
    pub mode: QueueMode,
    /// `collect`: the quiet window after the running turn ends; each message gathered
    /// meanwhile starts it again. OpenClaw's `debounceMs` (1000 ms in the file-state
    /// releases, 500 ms later).
    pub collect_debounce_ms: u64,
    /// `collect`: most messages in one gathered turn (OpenClaw's `cap`, 20). A full batch
    /// runs without waiting for the quiet window, and later messages start a new batch.
    pub collect_cap: usize,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            mode: QueueMode::Steer,
            collect_debounce_ms: 1000,
            collect_cap: 20,
        }
    }
}

/// What a steered message looks like to the model: the running turn sees it as a user
/// message with this prefix (the OpenClaw async-tools design's `[INTERRUPT]` marker), so the
/// model can tell it arrived mid-task.
pub const STEER_PREFIX: &str = "[INTERRUPT] New message from user: ";

/// The user message a steered `text` becomes.
pub fn steer_text(text: &str) -> String {
    format!("{STEER_PREFIX}{text}")
}

/// The first line of a gathered (`collect`) turn's message, as OpenClaw writes it.
pub const COLLECT_HEADER: &str = "[Queued messages while agent was busy]";

/// One message out of several gathered while busy, in OpenClaw's shape:
///
/// ```text
/// [Queued messages while agent was busy]
///
/// ---
/// Queued #1
/// first message
///
/// ---
/// Queued #2
/// second message
/// ```
///
/// A single message is passed through unchanged (there is nothing to join).
pub fn collect_prompt(texts: &[String]) -> String {
    if let [only] = texts {
        return only.clone();
    }
    let mut out = String::from(COLLECT_HEADER);
    for (i, text) in texts.iter().enumerate() {
        out.push_str(&format!("\n\n---\nQueued #{}\n{text}", i + 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_accept_openclaw_spellings() {
        assert_eq!(QueueMode::parse("Steer"), Some(QueueMode::Steer));
        assert_eq!(QueueMode::parse("steering"), Some(QueueMode::Steer));
        assert_eq!(QueueMode::parse("follow-up"), Some(QueueMode::Followup));
        assert_eq!(QueueMode::parse("followups"), Some(QueueMode::Followup));
        assert_eq!(QueueMode::parse("coalesce"), Some(QueueMode::Collect));
        assert_eq!(QueueMode::parse("abort"), Some(QueueMode::Interrupt));
        assert_eq!(QueueMode::parse("steer-backlog"), None);
        assert_eq!(
            "nope".parse::<QueueMode>(),
            Err(UnknownQueueMode("nope".into()))
        );
        assert_eq!(QueueSettings::default().mode, QueueMode::Steer);
    }

    #[test]
    fn gathered_messages_are_numbered() {
        let joined = collect_prompt(&["one".into(), "two".into()]);
        assert_eq!(
            joined,
            "[Queued messages while agent was busy]\n\n---\nQueued #1\none\n\n---\nQueued #2\ntwo"
        );
        assert_eq!(collect_prompt(&["solo".into()]), "solo");
        assert_eq!(steer_text("hi"), "[INTERRUPT] New message from user: hi");
    }
}
