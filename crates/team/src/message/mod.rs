//! The `message` tool and the port it sends through: an agent writes to a chat on its own
//! initiative (`send`), and where the platform can, reacts to, edits or deletes a message.
//! The gateway implements [`MessagePort`] over its running channels (the same rendering,
//! chunking and retries as replies); the tool checks each target against
//! `tools.message.allowTargets` first ([`AllowTargets`]), so an agent writes only to chats
//! that have talked to it unless the owner names more.

mod gate;
mod tool;

use crate::PortFuture;

pub use gate::{AllowTargets, InvalidRule, TargetRule, bare_chat_id};
pub use tool::{Media, MessageAction, MessageArgs, MessageTool, message_tool};

/// A chat on a channel account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTarget {
    /// `telegram`, `discord`, `slack`, `feishu`.
    pub channel: String,
    /// The bot account (`None`: the channel's only or default one).
    pub account_id: Option<String>,
    /// The platform's chat id, optionally prefixed `user:`, `channel:` or `group:` to say
    /// what kind of chat it is (OpenClaw's target forms).
    pub to: String,
    /// A forum topic (Telegram) or reply thread (Discord, Slack, Feishu) inside the chat.
    pub thread_id: Option<String>,
}

/// `send`: Markdown text and files to a chat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendRequest {
    pub target: ChatTarget,
    /// The agent whose workspace `media` (and `MEDIA:` lines in `text`) are read from.
    pub agent_id: String,
    /// Markdown; the adapter renders it for the platform and splits it at its limit.
    pub text: String,
    /// Files to attach, as the agent names them (relative to its workspace or absolute
    /// inside it).
    pub media: Vec<String>,
    /// The message this answers, when the platform threads replies.
    pub reply_to: Option<String>,
}

/// What a `send` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendReceipt {
    /// The channel and account it went out on (the account resolved when none was named).
    pub channel: String,
    pub account_id: Option<String>,
    /// The ids of the messages sent (a long text is several; each file one more).
    pub message_ids: Vec<String>,
}

/// `react`: an emoji on a message, or with `remove` the bot's reaction taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactRequest {
    pub target: ChatTarget,
    pub message_id: String,
    pub emoji: String,
    pub remove: bool,
}

/// `edit`: new Markdown text for a message the bot sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    pub target: ChatTarget,
    pub message_id: String,
    pub text: String,
}

/// `delete`: a message taken down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteRequest {
    pub target: ChatTarget,
    pub message_id: String,
}

/// Why a message action failed; said to the agent (or the operator) as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// No such channel (or account) runs on this gateway.
    #[error("channel {channel:?} is not running on this gateway (running: {running})")]
    UnknownChannel { channel: String, running: String },
    /// The platform (or Pincer's adapter for it) cannot do this.
    #[error("{channel} does not support {action} (supported there: {supported})")]
    Unsupported {
        channel: String,
        action: String,
        supported: String,
    },
    /// `tools.message.allowTargets` does not let this agent write to the chat.
    #[error(
        "not allowed to message {channel}:{to}: this agent may message only chats that have \
         talked to it, or targets listed in tools.message.allowTargets (e.g. \
         \"{channel}:{to}\", \"{channel}:*\" or \"*\")"
    )]
    NotAllowed { channel: String, to: String },
    /// The request itself is wrong (empty text, a file outside the workspace, …).
    #[error("{0}")]
    Invalid(String),
    /// The platform refused or could not be reached, after retries.
    #[error("{0}")]
    Failed(String),
    /// No gateway runs in this process (`pincer ask`), or it is stopping.
    #[error(
        "the message tool works only inside a running gateway (`pincer gateway`), where the \
         channels are connected"
    )]
    NoGateway,
}

/// What the `message` tool needs from the running gateway: implemented over its channels.
pub trait MessagePort: Send + Sync {
    /// The running channels, as `channel` or `channel:account` (sorted).
    fn channels(&self) -> Vec<String>;

    /// The chat session `session_key` last heard from, if it came from a channel.
    fn current_chat(&self, session_key: &str) -> Option<ChatTarget>;

    /// Whether chat `to` of `channel` has talked to agent `agent_id`: a session of that
    /// agent last heard from it.
    fn has_talked(
        &self,
        agent_id: &str,
        channel: &str,
        to: &str,
    ) -> PortFuture<'_, Result<bool, MessageError>>;

    /// Sends text and files, rendered and split as replies are, with the same retries.
    fn send(&self, request: SendRequest) -> PortFuture<'_, Result<SendReceipt, MessageError>>;

    /// Adds or removes a reaction.
    fn react(&self, request: ReactRequest) -> PortFuture<'_, Result<(), MessageError>>;

    /// Replaces the text of a message the bot sent.
    fn edit(&self, request: EditRequest) -> PortFuture<'_, Result<(), MessageError>>;

    /// Deletes a message.
    fn delete(&self, request: DeleteRequest) -> PortFuture<'_, Result<(), MessageError>>;
}
