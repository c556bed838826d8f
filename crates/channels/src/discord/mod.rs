//! Discord: the gateway WebSocket (API v10, JSON: Hello, Identify with the message
//! intents, heartbeats with a missed-ack check, Resume of the same session after a dropped
//! connection so nothing is lost) for receiving, REST for sending (`POST
//! /channels/{id}/messages` with Discord Markdown split at 2000 chars, the first chunk a
//! reply to the message answered, never pinging anyone; files as multipart; typing).
//!
//! DMs are [`ChatKind::Direct`] chats whose id is the DM channel's; guild messages are
//! [`ChatKind::Channel`] chats of the channel, with the guild id. A message mentioning the
//! bot (`<@id>` / `<@!id>`, removed from the text) or replying to one of the bot's counts
//! as a mention.
//!
//! Sending: `chat.id` is a channel id (a DM channel id works). A direct chat may also be
//! addressed by user id (pairing notices, cron / heartbeat / `pairingNotify` targets): the
//! user's DM channel is the one they wrote from, else it is opened over REST.
//!
//! A message in a thread or forum post belongs to its parent channel's thread (see
//! [`threads`]).
//!
//! Not done: embeds,
//! reactions, slash commands, edits and deletes, sharding, compression, REST rate-limit
//! buckets (a 429 is reported, not waited out per bucket).

mod events;
mod gateway;
mod rest;
mod threads;

pub use events::{
    Attachment, Frame, FrameError, GatewayEvent, Message, TEXT_MESSAGE_TYPES, User, decode_frame,
    decode_value,
};
pub use gateway::{INTENTS, Session};
pub use rest::{DiscordRest, decode_response};

use pincer_base::Secret;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use pincer_channel_port::{ChannelError, ChatRef, Inbound, InboundMedia, Outbound, SenderRef};
use pincer_channel_port::{ChatKind, ThreadRef};
use serde_json::{Value, json};

use crate::markdown::{Flavor, render_chunks};
use crate::support::{DmChannels, OutboundFile, ReceivedFiles, read_outbound_file, safe_id};
use events::Me;

const CHANNEL: &str = "discord";
/// Discord's own address (the REST API is under `/api/v10`).
pub const DEFAULT_API_BASE: &str = "https://discord.com";
/// The default limit of inbound attachments (8 MB).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// One bot. `Debug` is derived: the token is a [`Secret`] and prints as `Secret(***)`.
#[derive(Debug, Clone)]
pub struct DiscordSettings {
    pub account_id: Option<String>,
    pub token: Secret,
    /// `https://discord.com`, a proxy, or a test fake.
    pub api_base: String,
    /// Where received files are saved.
    pub media_dir: PathBuf,
    pub media_max_bytes: u64,
}

/// The Discord adapter of one bot.
pub struct DiscordAdapter {
    settings: DiscordSettings,
    rest: DiscordRest,
    /// The bot's user id.
    me: OnceLock<String>,
    /// The gateway session to resume on the next connection.
    session: Mutex<Option<Session>>,
    /// The DM channels of the users who DMed the bot.
    dm_channels: DmChannels,
    thread_parents: threads::ThreadParents,
}

impl DiscordAdapter {
    pub fn new(settings: DiscordSettings, client: reqwest::Client) -> Self {
        let rest = DiscordRest::new(client, &settings.api_base, settings.token.expose());
        Self {
            settings,
            rest,
            me: OnceLock::new(),
            session: Mutex::new(None),
            dm_channels: DmChannels::default(),
            thread_parents: threads::ThreadParents::default(),
        }
    }

    /// The gateway session kept for resuming (`None`: the next connection identifies).
    pub fn current_session(&self) -> Option<Session> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    async fn ensure_me(&self) -> Result<(), ChannelError> {
        if self.me.get().is_none() {
            let me: Me = self.rest.get("/users/@me").await?;
            let _ = self.me.set(me.id);
        }
        Ok(())
    }

    /// The gateway's view of `message`; `None` for what it does not take (bots, the bot
    /// itself, system messages, messages with neither text nor files).
    async fn inbound(&self, message: Message) -> Option<Inbound> {
        let bot_id = self.me.get().map(String::as_str);
        if message.author.bot || Some(message.author.id.as_str()) == bot_id {
            return None;
        }
        if !TEXT_MESSAGE_TYPES.contains(&message.kind) {
            return None;
        }
        if message.content.trim().is_empty() && message.attachments.is_empty() {
            return None;
        }
        let kind = if message.guild_id.is_some() {
            ChatKind::Channel
        } else {
            ChatKind::Direct
        };
        let mentioned = bot_id.is_some_and(|bot| {
            message.mentions.iter().any(|u| u.id == bot)
                || message
                    .referenced_message
                    .as_ref()
                    .and_then(|r| r.author.as_ref())
                    .is_some_and(|a| a.id == bot)
        });
        let text = match bot_id {
            Some(bot) => remove_mention(&message.content, bot),
            None => message.content.clone(),
        };
        let (media, refused_media) = self.media_of(&message).await;
        if text.trim().is_empty() && media.is_empty() && refused_media.is_none() {
            return None;
        }
        let (chat_id, thread) = match kind {
            ChatKind::Direct => (message.channel_id.clone(), None),
            _ => match self
                .thread_parents
                .parent_of(&self.rest, &message.channel_id)
                .await
            {
                Some(parent) => (parent, Some(ThreadRef::Thread(message.channel_id.clone()))),
                None => (message.channel_id.clone(), None),
            },
        };
        if kind == ChatKind::Direct {
            self.dm_channels
                .remember(message.author.id.clone(), message.channel_id.clone());
        }
        Some(Inbound {
            channel: CHANNEL.into(),
            account_id: self.settings.account_id.clone(),
            chat: ChatRef {
                kind,
                id: chat_id,
                thread,
            },
            sender: SenderRef {
                id: message.author.id.clone(),
                aliases: Vec::new(),
                name: Some(message.author.display_name()),
            },
            message_id: message.id.clone(),
            text,
            mentioned,
            media,
            refused_media,
            guild_id: message.guild_id.clone(),
            team_id: None,
        })
    }

    /// Downloads the message's attachments within the size limit; a refusal note when
    /// one is too big or cannot be fetched (the others still come through).
    async fn media_of(&self, message: &Message) -> (Vec<InboundMedia>, Option<String>) {
        let max = self.settings.media_max_bytes;
        let mut files = ReceivedFiles::new("Discord", max);
        for attachment in &message.attachments {
            if files.over_limit(attachment.size) {
                continue;
            }
            let Some(bytes) = files.fetched(self.rest.download(&attachment.url, max).await) else {
                continue;
            };
            let name = if attachment.filename.is_empty() {
                "file".to_owned()
            } else {
                attachment.filename.clone()
            };
            let safe = pincer_channel_port::file_name::safe_name(&name);
            let target = self.settings.media_dir.join(format!(
                "discord-{}-{}-{}-{safe}",
                safe_id(&message.channel_id),
                safe_id(&message.id),
                safe_id(&attachment.id)
            ));
            files
                .store(target, bytes, attachment.content_type.clone(), name)
                .await;
        }
        files.finish()
    }

    /// The channel to post to for `chat` (see the module docs): a thread's own id, a
    /// guild channel's id, or for a direct chat its DM channel. A direct chat whose id is
    /// neither a DM channel seen nor a user seen is taken for a user id and its DM channel
    /// opened (`POST /users/@me/channels`); if Discord refuses, the id is used as a channel.
    async fn channel_of(&self, chat: &ChatRef) -> String {
        if chat.kind != ChatKind::Direct {
            return match &chat.thread {
                Some(ThreadRef::Thread(thread)) => thread.clone(),
                _ => chat.id.clone(),
            };
        }
        if let Some(channel) = self.dm_channels.of(&chat.id) {
            return channel;
        }
        if self.dm_channels.is_channel(&chat.id) {
            return chat.id.clone();
        }
        let Ok(user) = path_id(&chat.id) else {
            return chat.id.clone();
        };
        let opened: Result<Value, _> = self
            .rest
            .post(
                "/users/@me/channels",
                Some(&json!({ "recipient_id": user })),
            )
            .await;
        match opened
            .ok()
            .and_then(|c| c.get("id").and_then(Value::as_str).map(str::to_owned))
        {
            Some(channel) => {
                self.dm_channels.remember(chat.id.clone(), channel.clone());
                channel
            }
            None => chat.id.clone(),
        }
    }

    async fn send_text(
        &self,
        channel: &str,
        chunk: &str,
        reply_to: Option<&str>,
    ) -> Result<String, ChannelError> {
        let mut body = json!({ "content": chunk, "allowed_mentions": { "parse": [] } });
        reply_reference(&mut body, reply_to);
        let sent: Value = self
            .rest
            .post(&messages_path(channel)?, Some(&body))
            .await?;
        Ok(message_id(&sent))
    }

    async fn send_file(
        &self,
        channel: &str,
        path: &Path,
        reply_to: Option<&str>,
    ) -> Result<String, ChannelError> {
        let OutboundFile {
            name: file_name,
            bytes,
        } = read_outbound_file(CHANNEL, path).await?;
        let mut payload = json!({
            "allowed_mentions": { "parse": [] },
            "attachments": [{ "id": 0, "filename": crate::support::safe_header_name(&file_name) }],
        });
        reply_reference(&mut payload, reply_to);
        let sent: Value = self
            .rest
            .upload(
                &messages_path(channel)?,
                &payload,
                rest::Upload {
                    file_name: &file_name,
                    bytes,
                },
            )
            .await?;
        Ok(message_id(&sent))
    }

    async fn send_message(&self, message: &Outbound) -> Result<Vec<String>, ChannelError> {
        let channel = self.channel_of(&message.chat).await;
        let mut ids = Vec::new();
        let mut reply_to = message.reply_to.as_deref();
        for chunk in render_chunks(&message.text, Flavor::DiscordMarkdown, 2000) {
            if chunk.trim().is_empty() {
                continue;
            }
            ids.push(self.send_text(&channel, &chunk, reply_to).await?);
            reply_to = None;
        }
        for path in &message.media {
            ids.push(self.send_file(&channel, path, reply_to).await?);
            reply_to = None;
        }
        Ok(ids)
    }

    async fn show_typing(&self, chat: &ChatRef) -> Result<(), ChannelError> {
        let channel = self.channel_of(chat).await;
        let _: Value = self
            .rest
            .post(&format!("/channels/{}/typing", path_id(&channel)?), None)
            .await?;
        Ok(())
    }
}

channel_adapter!(DiscordAdapter, channel: CHANNEL, settings: settings, receive: connect);

/// A snowflake as a path segment: digits only (an id from config or an agent could
/// otherwise walk the API's paths).
fn path_id(id: &str) -> Result<&str, ChannelError> {
    if !id.is_empty() && id.len() <= 32 && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(id)
    } else {
        Err(ChannelError::Api {
            channel: CHANNEL.into(),
            message: format!("{id:?} is not a Discord channel id"),
        })
    }
}

/// Where messages to `channel` are posted.
fn messages_path(channel: &str) -> Result<String, ChannelError> {
    Ok(format!("/channels/{}/messages", path_id(channel)?))
}

/// Makes `body` a reply to the message `reply_to`, if any (sent all the same when that
/// message is gone).
fn reply_reference(body: &mut Value, reply_to: Option<&str>) {
    if let Some(id) = reply_to {
        body["message_reference"] = json!({ "message_id": id, "fail_if_not_exists": false });
    }
}

fn message_id(sent: &Value) -> String {
    sent.get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `text` without the bot's mentions (`<@id>`, `<@!id>`), each with one space after it,
/// trimmed.
fn remove_mention(text: &str, bot_id: &str) -> String {
    let mut out = text.to_owned();
    for token in [format!("<@{bot_id}>"), format!("<@!{bot_id}>")] {
        out = out.replace(&format!("{token} "), "").replace(&token, "");
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_removed() {
        assert_eq!(remove_mention("<@42> hello there", "42"), "hello there");
        assert_eq!(remove_mention("hi <@!42> there", "42"), "hi there");
        assert_eq!(remove_mention("hi <@43> there", "42"), "hi <@43> there");
        assert_eq!(remove_mention("<@42>", "42"), "");
    }

    #[test]
    fn path_ids_are_snowflakes() {
        assert_eq!(path_id("123").unwrap(), "123");
        assert!(path_id("../users/@me").is_err());
        assert!(path_id("").is_err());
        assert_eq!(safe_id("12/../3"), "123");
    }
}
