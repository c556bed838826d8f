//! Slack: Socket Mode for receiving (no public URL needed: `apps.connections.open` with the
//! app-level token, then a WebSocket of envelopes, each acked after it was handed to the
//! gateway), the Web API with the bot token for sending (`chat.postMessage` in mrkdwn split
//! at 4000 chars, files through `files.getUploadURLExternal` +
//! `files.completeUploadExternal`, DMs opened with `conversations.open`). Hand-rolled over
//! reqwest and tokio-tungstenite: an SDK would bring ~130 crates and a second TLS crypto
//! provider for a handful of calls.
//!
//! Chats: a DM (`channel_type` `im`) is a [`ChatKind::Direct`] chat whose id is the DM
//! channel (`D…`) and whose sender is the user; a group DM (`mpim`) is a
//! [`ChatKind::Group`]; public and private channels are [`ChatKind::Channel`]s. A post in
//! a thread has [`ThreadRef::Thread`] with the thread's `ts`. The message id is the post's
//! `ts`: in a channel Slack sends both `message` and `app_mention` for one post mentioning
//! the bot, with the same `ts`, and the gateway's dedupe keeps one. A post mentions the bot
//! when it is an `app_mention` or its text has `<@BOT>` (removed from the text). The text
//! is turned into plain text (entities, links, mentions). The workspace is `team_id`.
//!
//! Replies: a post in a thread is answered in that thread; any other post (DM or channel)
//! is answered in the conversation itself, not in a new thread — the router gives a thread
//! its own session, so answering a channel post in a thread would split one conversation in
//! two sessions the moment the user follows up there. `Outbound::reply_to` is therefore
//! not used. A direct chat may be addressed by user id (`U…`/`W…`: pairing notices, cron
//! and heartbeat targets): its DM is opened with `conversations.open` (and remembered).
//!
//! Slack has no typing indicator for bots in the Web API (only the legacy RTM API had
//! one), so [`ChannelAdapter::typing`](pincer_channel_port::ChannelAdapter::typing) does nothing.
//!
//! Not done: slash commands and interactivity (acked and ignored), Block Kit, reactions,
//! edits and deletes, users' display names (`users.info`), more than one Socket Mode
//! connection per app, Events API over HTTP.

mod events;
mod socket;
mod web;

pub use events::{
    Envelope, Event, FrameError, MessageEvent, MessageKind, POST_SUBTYPES, SlackFile, SocketFrame,
    ack_frame, decode_frame, decode_value, mentions, plain_text,
};
pub use socket::{Keepalive, disconnect_error};
pub use web::{DownloadError, SlackWeb, Token, decode_response, form_encode};

use pincer_base::Secret;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pincer_channel_port::file_name::safe_name;
use pincer_channel_port::{ChannelError, ChatRef, Inbound, InboundMedia, Outbound, SenderRef};
use pincer_channel_port::{ChatKind, ThreadRef};
use serde_json::{Value, json};

use crate::markdown::{Flavor, render_chunks};
use crate::support::{DmChannels, OutboundFile, ReceivedFiles, read_outbound_file, safe_id};

const CHANNEL: &str = "slack";
/// Slack's Web API.
pub const DEFAULT_API_BASE: &str = "https://slack.com/api";
/// The default limit of inbound files (20 MB).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 20 * 1024 * 1024;
/// Chars per message (Slack's recommended limit for `chat.postMessage` text).
const MESSAGE_LIMIT: usize = 4000;

/// One Slack app (bot). `Debug` is derived: the tokens are [`Secret`]s (`Secret(***)`).
#[derive(Debug, Clone)]
pub struct SlackSettings {
    pub account_id: Option<String>,
    /// `xoxb-…`: every Web API call.
    pub bot_token: Secret,
    /// `xapp-…` (scope `connections:write`): only `apps.connections.open`.
    pub app_token: Secret,
    /// The Web API base including `/api` (`https://slack.com/api`, a proxy, a test fake).
    pub api_base: String,
    /// Where received files are saved.
    pub media_dir: PathBuf,
    pub media_max_bytes: u64,
}

/// The Slack adapter of one app.
pub struct SlackAdapter {
    settings: SlackSettings,
    web: SlackWeb,
    keepalive: Keepalive,
    /// The bot's user id (`auth.test`).
    bot_user: OnceLock<String>,
    dm_channels: DmChannels,
}

impl SlackAdapter {
    pub fn new(settings: SlackSettings, client: reqwest::Client) -> Self {
        let web = SlackWeb::new(
            client,
            &settings.api_base,
            settings.bot_token.expose(),
            settings.app_token.expose(),
        );
        Self {
            settings,
            web,
            keepalive: Keepalive::default(),
            bot_user: OnceLock::new(),
            dm_channels: DmChannels::default(),
        }
    }

    /// Other keepalive timings than Slack's usual 30 s / 10 s (tests of dead sockets).
    pub fn with_keepalive(mut self, keepalive: Keepalive) -> Self {
        self.keepalive = keepalive;
        self
    }

    /// The bot's user id, once `auth.test` answered.
    pub fn bot_user_id(&self) -> Option<&str> {
        self.bot_user.get().map(String::as_str)
    }

    async fn ensure_identity(&self) -> Result<(), ChannelError> {
        if self.bot_user.get().is_none() {
            let me = self.web.call_form("auth.test", &[], Token::Bot).await?;
            let user = me
                .get("user_id")
                .and_then(Value::as_str)
                .filter(|u| !u.is_empty())
                .ok_or_else(|| ChannelError::Api {
                    channel: CHANNEL.into(),
                    message: "auth.test gave no user_id (is botToken a bot token?)".into(),
                })?;
            let _ = self.bot_user.set(user.to_owned());
        }
        Ok(())
    }

    /// The gateway's view of `message`; `None` for the bot's own posts and posts with
    /// neither text nor files.
    async fn inbound(&self, message: MessageEvent, team_id: Option<String>) -> Option<Inbound> {
        let bot = self.bot_user_id().unwrap_or_default();
        if message.user == bot {
            return None;
        }
        let kind = match message.channel_type.as_deref() {
            Some("im") => ChatKind::Direct,
            Some("mpim") => ChatKind::Group,
            Some(_) => ChatKind::Channel,
            // `app_mention` has no channel_type: DM ids start with D.
            None if message.channel.starts_with('D') => ChatKind::Direct,
            None => ChatKind::Channel,
        };
        let mentioned = message.kind == MessageKind::AppMention
            || (!bot.is_empty() && mentions(&message.text, bot));
        let text = plain_text(&message.text, Some(bot).filter(|b| !b.is_empty()));
        let (media, refused_media) = self.media_of(&message).await;
        if text.is_empty() && media.is_empty() && refused_media.is_none() {
            return None;
        }
        if kind == ChatKind::Direct {
            self.dm_channels
                .remember(message.user.clone(), message.channel.clone());
        }
        Some(Inbound {
            channel: CHANNEL.into(),
            account_id: self.settings.account_id.clone(),
            chat: ChatRef {
                kind,
                id: message.channel,
                thread: message.thread_ts.map(ThreadRef::Thread),
            },
            sender: SenderRef {
                id: message.user,
                aliases: Vec::new(),
                name: None,
            },
            message_id: message.ts,
            text,
            mentioned,
            media,
            refused_media,
            guild_id: None,
            // The workspace the app is installed in (the sender's own team may differ in
            // a shared channel).
            team_id: team_id.or(message.team),
        })
    }

    /// Downloads the message's files within the size limit; a refusal note when one is
    /// too big or cannot be fetched (the others still come through).
    async fn media_of(&self, message: &MessageEvent) -> (Vec<InboundMedia>, Option<String>) {
        let max = self.settings.media_max_bytes;
        let mut files = ReceivedFiles::new("Slack", max);
        for file in &message.files {
            if files.over_limit(file.size) {
                continue;
            }
            let Some(url) = file.url() else {
                files.failed();
                continue;
            };
            let Some(bytes) = files.fetched(self.web.download(url, max).await) else {
                continue;
            };
            let name = file
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "file".into());
            let target = self.settings.media_dir.join(format!(
                "slack-{}-{}-{}-{}",
                safe_id(&message.channel),
                safe_id(&message.ts),
                safe_id(&file.id),
                safe_name(&name)
            ));
            files
                .store(target, bytes, file.mimetype.clone(), name)
                .await;
        }
        files.finish()
    }

    /// The conversation to post to for `chat` (see the module docs).
    async fn channel_of(&self, chat: &ChatRef) -> Result<String, ChannelError> {
        let is_user = chat.id.starts_with('U') || chat.id.starts_with('W');
        if chat.kind != ChatKind::Direct || !is_user {
            return Ok(chat.id.clone());
        }
        if let Some(channel) = self.dm_channels.of(&chat.id) {
            return Ok(channel);
        }
        let opened = self
            .web
            .call("conversations.open", &json!({ "users": chat.id }))
            .await?;
        let channel = opened
            .pointer("/channel/id")
            .and_then(Value::as_str)
            .ok_or_else(|| ChannelError::Api {
                channel: CHANNEL.into(),
                message: "conversations.open gave no channel id".into(),
            })?
            .to_owned();
        self.dm_channels.remember(chat.id.clone(), channel.clone());
        Ok(channel)
    }

    async fn post(
        &self,
        channel: &str,
        text: &str,
        thread_ts: Option<&str>,
    ) -> Result<String, ChannelError> {
        let mut body = json!({ "channel": channel, "text": text, "mrkdwn": true });
        in_thread(&mut body, thread_ts);
        let sent = self.web.call("chat.postMessage", &body).await?;
        Ok(sent
            .get("ts")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }

    /// Uploads one file into `channel`: an upload URL, the bytes, then the completion
    /// that shares it. Returns the file id.
    async fn upload(
        &self,
        channel: &str,
        path: &Path,
        thread_ts: Option<&str>,
    ) -> Result<String, ChannelError> {
        let OutboundFile { name, bytes } = read_outbound_file(CHANNEL, path).await?;
        let length = bytes.len().to_string();
        let target = self
            .web
            .call_form(
                "files.getUploadURLExternal",
                &[("filename", &name), ("length", &length)],
                Token::Bot,
            )
            .await?;
        let field = |key: &str| {
            target
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ChannelError::Api {
                    channel: CHANNEL.into(),
                    message: format!("files.getUploadURLExternal gave no {key}"),
                })
        };
        let (upload_url, file_id) = (field("upload_url")?, field("file_id")?);
        self.web.upload(&upload_url, bytes).await?;
        let mut body = json!({
            "files": [{ "id": file_id, "title": name }],
            "channel_id": channel,
        });
        in_thread(&mut body, thread_ts);
        self.web.call("files.completeUploadExternal", &body).await?;
        Ok(file_id)
    }

    async fn send_message(&self, message: &Outbound) -> Result<Vec<String>, ChannelError> {
        let channel = self.channel_of(&message.chat).await?;
        let thread_ts = match &message.chat.thread {
            Some(ThreadRef::Thread(ts)) => Some(ts.as_str()),
            _ => None,
        };
        let mut ids = Vec::new();
        for chunk in render_chunks(&message.text, Flavor::SlackMrkdwn, MESSAGE_LIMIT) {
            ids.push(self.post(&channel, &chunk, thread_ts).await?);
        }
        for path in &message.media {
            ids.push(self.upload(&channel, path, thread_ts).await?);
        }
        Ok(ids)
    }

    async fn show_typing(&self, _chat: &ChatRef) -> Result<(), ChannelError> {
        // No typing indicator for bots in Slack's Web API (see the module docs).
        Ok(())
    }
}

/// Makes `body` a post in the thread `thread_ts`, if any.
fn in_thread(body: &mut Value, thread_ts: Option<&str>) {
    if let Some(ts) = thread_ts {
        body["thread_ts"] = json!(ts);
    }
}

channel_adapter!(SlackAdapter, channel: CHANNEL, settings: settings, receive: connect);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(safe_id("1700000000.000100"), "1700000000000100");
        for (name, safe) in [
            ("../../etc/passwd", "passwd"),
            (".hidden.txt", "hidden.txt"),
            ("réport 1.pdf", "réport_1.pdf"),
        ] {
            assert_eq!(safe_name(name), safe);
        }
    }
}
