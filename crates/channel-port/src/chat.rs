//! The chat a message belongs to, as channels report it and session keys name it: the
//! [`ChatKind`] of conversation and the [`ThreadRef`] inside one.

/// What kind of conversation a message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChatKind {
    /// A one-to-one chat; the peer is the sender.
    #[default]
    Direct,
    /// A group chat (Telegram group, Feishu group, …).
    Group,
    /// A channel (Discord/Slack channel).
    Channel,
    /// A room (Matrix-style).
    Room,
}

impl ChatKind {
    /// The word used in session keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Group => "group",
            Self::Channel => "channel",
            Self::Room => "room",
        }
    }

    /// The kind a session key's segment names (`group`, `channel`, `room`); a direct chat
    /// has no segment of its own.
    pub fn from_key_segment(segment: &str) -> Option<Self> {
        match segment {
            "group" => Some(Self::Group),
            "channel" => Some(Self::Channel),
            "room" => Some(Self::Room),
            _ => None,
        }
    }
}

/// A sub-conversation inside a chat, which gets its own session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadRef {
    /// A reply thread (Discord, Slack): key suffix `:thread:<id>`.
    Thread(String),
    /// A Telegram forum topic: key suffix `:topic:<n>`.
    Topic(String),
}
