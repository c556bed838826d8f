//! The channel ports: what the gateway needs from a chat app's adapter (Telegram, Discord,
//! Slack, Feishu/Lark, in `pincer-channels`) and what it gives one. An adapter receives
//! messages and hands each to an [`InboundSink`] as an [`Inbound`]; it sends what the
//! gateway asks ([`Outbound`]: replies, and proactive messages of the heartbeat and cron);
//! it shows "typing…". It knows nothing about agents, sessions or access rules: those are
//! the gateway's (`pincer-gateway`'s `server::channel_ingress`).
//!
//! Every adapter runs under a [`supervisor`]: a connection that ends or fails is made again,
//! forever, with exponential backoff and jitter, and [`ChannelHealth`] says truthfully
//! whether it is connected, when it last heard anything and what last went wrong.

pub mod chat;
pub mod file_name;
pub mod supervisor;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use chat::{ChatKind, ThreadRef};

/// A chat a message came from or goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRef {
    pub kind: ChatKind,
    /// The platform's chat id (for a direct chat on most platforms, the chat with the
    /// sender; Slack and Discord DMs have ids of their own).
    pub id: String,
    /// A forum topic or reply thread inside the chat.
    pub thread: Option<ThreadRef>,
}

/// Who sent a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderRef {
    /// The platform's stable user id (what allowlists hold).
    pub id: String,
    /// Other names allowlists may use for the same sender (e.g. Telegram's `@username`).
    pub aliases: Vec<String>,
    /// A display name, for logs and the owner's pairing notice.
    pub name: Option<String>,
}

/// A file that came with a message, already downloaded (within the channel's size limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundMedia {
    pub path: PathBuf,
    pub mime: Option<String>,
    pub file_name: Option<String>,
    pub size: u64,
}

/// One message received by an adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound {
    /// `telegram`, `discord`, `slack`, `feishu`.
    pub channel: String,
    /// The bot account that received it (`None`: the channel's only one).
    pub account_id: Option<String>,
    pub chat: ChatRef,
    pub sender: SenderRef,
    /// The platform's message id (unique within the chat): what dedupe keys on.
    pub message_id: String,
    pub text: String,
    /// The bot was mentioned, or the message replies to one of the bot's.
    pub mentioned: bool,
    pub media: Vec<InboundMedia>,
    /// A file the adapter refused (too big, unsupported): the sender is told, and the
    /// text (if any) still goes through.
    pub refused_media: Option<String>,
    /// Discord guild / Slack team, for bindings.
    pub guild_id: Option<String>,
    pub team_id: Option<String>,
}

/// A message the gateway sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outbound {
    pub chat: ChatRef,
    /// Markdown, as the agent wrote it: the adapter renders it for its platform and splits
    /// it at the platform's limit.
    pub text: String,
    /// Files to attach (`MEDIA:<path>` lines of a reply).
    pub media: Vec<PathBuf>,
    /// The message this answers, when the platform threads replies.
    pub reply_to: Option<String>,
}

/// Why an adapter failed.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The platform refused our credentials: reconnecting will not help until the config
    /// changes (the supervisor still retries, slowly).
    #[error("{channel}: the platform refused the credentials: {message}")]
    Unauthorized { channel: String, message: String },
    /// Rate limited: retry after the given seconds.
    #[error("{channel}: rate limited; retry after {retry_after_secs} s")]
    RateLimited {
        channel: String,
        retry_after_secs: u64,
    },
    /// The platform answered with an error about this request.
    #[error("{channel}: {message}")]
    Api { channel: String, message: String },
    /// The connection failed or dropped.
    #[error("{channel}: connection failed: {message}")]
    Connection { channel: String, message: String },
    /// The adapter cannot do this (`react`, `edit`, `delete` on a platform without them).
    #[error("{channel} does not support {action}")]
    Unsupported {
        channel: String,
        action: &'static str,
    },
}

/// What the gateway needs from a chat app's adapter.
pub trait ChannelAdapter: Send + Sync + 'static {
    /// `telegram`, `discord`, `slack`, `feishu`.
    fn channel(&self) -> &str;
    /// The account (`None`: the channel's only one).
    fn account_id(&self) -> Option<&str>;
    /// Connects and receives until `stop` (then `Ok`) or until the connection ends or
    /// fails (`Err`: the supervisor connects again). Each message goes to `inbound`.
    fn run<'a>(
        &'a self,
        inbound: &'a InboundSink,
        stop: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<(), ChannelError>>;
    /// Sends `message`, rendered and split for the platform; returns the ids of the
    /// messages sent.
    fn send<'a>(
        &'a self,
        message: &'a Outbound,
    ) -> BoxFuture<'a, Result<Vec<String>, ChannelError>>;
    /// Shows "typing…" in `chat` once (platforms keep it a few seconds; the gateway
    /// repeats it for the whole turn).
    fn typing<'a>(&'a self, chat: &'a ChatRef) -> BoxFuture<'a, Result<(), ChannelError>>;
    /// Adds the bot's reaction `emoji` to message `message_id` of `chat`, or with `remove`
    /// takes the bot's reactions there back (the `message` tool's `react`). Default:
    /// [`ChannelError::Unsupported`].
    fn react<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        emoji: &'a str,
        remove: bool,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        let _ = (chat, message_id, emoji, remove);
        Box::pin(std::future::ready(Err(self.unsupported("react"))))
    }
    /// Replaces the text of message `message_id` (one the bot sent) with `text`, Markdown
    /// rendered for the platform and within one message's limit. Default: unsupported.
    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        let _ = (chat, message_id, text);
        Box::pin(std::future::ready(Err(self.unsupported("edit"))))
    }
    /// Deletes message `message_id` of `chat`. Default: unsupported.
    fn delete<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
    ) -> BoxFuture<'a, Result<(), ChannelError>> {
        let _ = (chat, message_id);
        Box::pin(std::future::ready(Err(self.unsupported("delete"))))
    }
    /// The actions besides `send` this adapter supports (`react`, `edit`, `delete`), for
    /// error messages. Default: none.
    fn message_actions(&self) -> &'static [&'static str] {
        &[]
    }
    /// [`ChannelError::Unsupported`] for `action` on this adapter's channel.
    fn unsupported(&self, action: &'static str) -> ChannelError {
        ChannelError::Unsupported {
            channel: self.channel().to_owned(),
            action,
        }
    }
}

/// The truth about one adapter's connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HealthState {
    pub connected: bool,
    /// When it last connected, last received anything, last failed (ms since the epoch).
    pub connected_at: Option<i64>,
    pub last_event_at: Option<i64>,
    pub last_error_at: Option<i64>,
    pub last_error: Option<String>,
    /// Connections made after the first.
    pub reconnects: u64,
}

/// An adapter's health, shared by its supervisor, its sink and `status` / `health`.
#[derive(Debug, Clone, Default)]
pub struct ChannelHealth(Arc<Mutex<HealthState>>);

impl ChannelHealth {
    fn state(&self) -> MutexGuard<'_, HealthState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn snapshot(&self) -> HealthState {
        self.state().clone()
    }

    /// The adapter is connected (a poll answered, a socket's handshake done).
    pub fn connected(&self) {
        let mut state = self.state();
        if !state.connected {
            state.connected = true;
            state.connected_at = Some(pincer_base::now_ms());
        }
    }

    /// Something arrived (a message, a heartbeat ack, an empty poll).
    pub fn heard(&self) {
        self.state().last_event_at = Some(pincer_base::now_ms());
    }

    /// The connection ended, with `error` when it failed.
    pub fn disconnected(&self, error: Option<&str>) {
        let mut state = self.state();
        state.connected = false;
        if let Some(error) = error {
            state.last_error = Some(error.to_owned());
            state.last_error_at = Some(pincer_base::now_ms());
        }
    }

    fn reconnecting(&self) {
        self.state().reconnects += 1;
    }

    /// As `channels.status` and `health` show it.
    pub fn to_json(&self) -> Value {
        let s = self.snapshot();
        json!({
            "connected": s.connected, "connectedAt": s.connected_at,
            "lastEventAt": s.last_event_at, "lastErrorAt": s.last_error_at,
            "lastError": s.last_error, "reconnects": s.reconnects,
        })
    }
}

/// Where an adapter puts what it receives.
#[derive(Clone)]
pub struct InboundSink {
    tx: mpsc::Sender<Inbound>,
    health: ChannelHealth,
}

impl InboundSink {
    /// A sink feeding `tx`, noting activity in `health`.
    pub fn new(tx: mpsc::Sender<Inbound>, health: ChannelHealth) -> Self {
        Self { tx, health }
    }

    pub fn health(&self) -> &ChannelHealth {
        &self.health
    }

    /// Hands `message` to the gateway; waits while the gateway is behind (so a poller
    /// does not confirm updates it could not hand over). `false` once the gateway is
    /// shutting down: the adapter stops and does not confirm the message.
    pub async fn deliver(&self, message: Inbound) -> bool {
        self.health.heard();
        self.tx.send(message).await.is_ok()
    }
}
