//! Telegram: Bot API long polling (`getUpdates`, the offset persisted so a restart neither
//! loses nor repeats what was already handed over), `sendMessage` in HTML parse mode (one
//! Markdown rendering split at 4096 chars; a chunk Telegram cannot parse is sent again as
//! plain text), `sendChatAction`, files both ways (`getFile` + download within the size
//! limit; `sendDocument` / `sendPhoto`), forum topics, mentions and replies to the bot;
//! reactions, edits and deletions for the `message` tool (`actions.rs`).

mod actions;
mod api;
mod updates;

pub use api::{TelegramApi, decode_envelope};
pub use updates::{RawUpdate, UpdatesError, decode_updates};

use pincer_base::Secret;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use pincer_channel_port::{
    ChannelError, ChatRef, Inbound, InboundMedia, InboundSink, Outbound, SenderRef,
};
use pincer_channel_port::{ChatKind, ThreadRef};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::markdown::{Flavor, render_chunks, telegram_html_text};
use crate::support::{OutboundFile, ReceivedFiles, read_outbound_file};
use updates::{Me, Message, TelegramFile, utf16_slice};

const CHANNEL: &str = "telegram";
/// The Bot API's own address.
pub const DEFAULT_API_BASE: &str = "https://api.telegram.org";
/// The Bot API's download limit for bots (20 MB).
pub const DEFAULT_MEDIA_MAX_BYTES: u64 = 20 * 1024 * 1024;

/// One bot. `Debug` is derived: the token is a [`Secret`] and prints as `Secret(***)`.
#[derive(Debug, Clone)]
pub struct TelegramSettings {
    pub account_id: Option<String>,
    pub bot_token: Secret,
    pub api_base: String,
    /// Where the update offset is kept (`$PINCER_HOME/channels`).
    pub state_dir: PathBuf,
    /// Where received files are saved.
    pub media_dir: PathBuf,
    pub media_max_bytes: u64,
    /// How long one `getUpdates` waits for news (30 s; tests use less).
    pub poll_timeout: Duration,
}

/// The Telegram adapter of one bot.
pub struct TelegramAdapter {
    settings: TelegramSettings,
    api: TelegramApi,
    me: OnceLock<Me>,
}

impl TelegramAdapter {
    pub fn new(settings: TelegramSettings, client: reqwest::Client) -> Self {
        let api = TelegramApi::new(client, &settings.api_base, settings.bot_token.expose());
        Self {
            settings,
            api,
            me: OnceLock::new(),
        }
    }

    fn offset_path(&self) -> PathBuf {
        let name = match &self.settings.account_id {
            Some(account) => format!("telegram-{account}.offset"),
            None => "telegram.offset".to_owned(),
        };
        self.settings.state_dir.join(name)
    }

    /// The first update id not yet handed over (0: none recorded).
    async fn load_offset(&self) -> i64 {
        let path = self.offset_path();
        #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
        let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(path)).await;
        read.ok()
            .and_then(Result::ok)
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Written and fsynced on the blocking pool, as every file the adapters keep.
    async fn save_offset(&self, offset: i64) {
        let path = self.offset_path();
        if let Err(e) = crate::support::save_file(&path, offset.to_string()).await {
            tracing::error!(path = %path.display(), error = %e, "cannot save the Telegram update offset");
        }
    }

    async fn poll(&self, sink: &InboundSink, stop: &CancellationToken) -> Result<(), ChannelError> {
        if self.me.get().is_none() {
            let me: Me = self.api.call("getMe", &json!({}), Duration::ZERO).await?;
            let _ = self.me.set(me);
        }
        let mut offset = self.load_offset().await;
        let wait = self.settings.poll_timeout;
        loop {
            let params = json!({
                "offset": offset, "timeout": wait.as_secs(), "allowed_updates": ["message"],
            });
            let result: Value = tokio::select! {
                result = self.api.call("getUpdates", &params, wait) => result?,
                () = stop.cancelled() => return Ok(()),
            };
            sink.health().connected();
            sink.health().heard();
            let batch = decode_updates(&result).map_err(|e| ChannelError::Api {
                channel: CHANNEL.into(),
                message: e.to_string(),
            })?;
            for update in batch {
                let next = update.update_id() + 1;
                match update {
                    RawUpdate::Message { message, .. } => {
                        if let Some(inbound) = self.inbound(*message).await
                            && !sink.deliver(inbound).await
                        {
                            // The gateway is stopping: this update is not confirmed.
                            return Ok(());
                        }
                    }
                    RawUpdate::Skipped { update_id, why } => {
                        tracing::debug!(update_id, %why, "telegram update skipped");
                    }
                }
                // Confirmed only once handed over: a crash before this line gets it again
                // (and the gateway's dedupe drops the repeat).
                offset = offset.max(next);
                self.save_offset(offset).await;
            }
        }
    }

    /// The gateway's view of `message`; `None` for what it does not take (bots, service
    /// messages, stickers and other types without text or a file).
    async fn inbound(&self, message: Message) -> Option<Inbound> {
        let from = message.from.as_ref()?;
        if from.is_bot {
            return None;
        }
        let kind = match message.chat.kind.as_str() {
            "private" => ChatKind::Direct,
            "group" | "supergroup" => ChatKind::Group,
            _ => return None,
        };
        let thread = match message.message_thread_id {
            Some(id) if message.is_topic_message || message.chat.is_forum => {
                Some(ThreadRef::Topic(id.to_string()))
            }
            _ => None,
        };
        let (text, entities) = match &message.text {
            Some(text) => (text.clone(), &message.entities),
            None => (
                message.caption.clone().unwrap_or_default(),
                &message.caption_entities,
            ),
        };
        let me = self.me.get();
        let handle = me
            .and_then(|m| m.username.as_deref())
            .map(|u| format!("@{u}"));
        let mentioned_by_entity = entities.iter().any(|e| match e.kind.as_str() {
            "mention" => utf16_slice(&text, e.offset, e.length)
                .zip(handle.as_deref())
                .is_some_and(|(m, h)| m.eq_ignore_ascii_case(h)),
            "text_mention" => e.user.as_ref().zip(me).is_some_and(|(u, m)| u.id == m.id),
            _ => false,
        });
        let replied_to_bot = message
            .reply_to_message
            .as_ref()
            .and_then(|r| r.from.as_ref())
            .zip(me)
            .is_some_and(|(u, m)| u.id == m.id);
        let text = match (&handle, kind) {
            (Some(handle), ChatKind::Group) if mentioned_by_entity => remove_mention(&text, handle),
            _ => text,
        };
        let (media, refused_media) = self.media_of(&message).await;
        if text.trim().is_empty() && media.is_empty() && refused_media.is_none() {
            return None;
        }
        let mut aliases = Vec::new();
        if let Some(username) = &from.username {
            aliases.push(format!("@{username}"));
        }
        Some(Inbound {
            channel: CHANNEL.into(),
            account_id: self.settings.account_id.clone(),
            chat: ChatRef {
                kind,
                id: message.chat.id.to_string(),
                thread,
            },
            sender: SenderRef {
                id: from.id.to_string(),
                aliases,
                name: Some(from.display_name()),
            },
            message_id: message.message_id.to_string(),
            text,
            mentioned: mentioned_by_entity || replied_to_bot,
            media,
            refused_media,
            guild_id: None,
            team_id: None,
        })
    }

    /// Downloads the message's file, if any, within the size limit.
    async fn media_of(&self, message: &Message) -> (Vec<InboundMedia>, Option<String>) {
        let file = message
            .document
            .as_ref()
            .or(message.photo.last())
            .or(message.voice.as_ref())
            .or(message.audio.as_ref())
            .or(message.video.as_ref());
        let Some(file) = file else {
            return (Vec::new(), None);
        };
        let max = self.settings.media_max_bytes;
        let mut files = ReceivedFiles::new("Telegram", max);
        if file.file_size.is_some_and(|size| files.over_limit(size)) {
            return files.finish();
        }
        let got: Result<TelegramFile, _> = self
            .api
            .call(
                "getFile",
                &json!({ "file_id": file.file_id }),
                Duration::ZERO,
            )
            .await;
        let path = match got {
            Ok(TelegramFile {
                file_path: Some(path),
                ..
            }) => path,
            Ok(_) | Err(_) => {
                files.failed();
                return files.finish();
            }
        };
        let Some(bytes) = files.fetched(self.api.download(&path, max).await) else {
            return files.finish();
        };
        let name = file
            .file_name
            .clone()
            .or_else(|| path.rsplit('/').next().map(str::to_owned))
            .unwrap_or_else(|| "file".into());
        let safe = pincer_channel_port::file_name::safe_name(&name);
        let target = self.settings.media_dir.join(format!(
            "telegram-{}-{}-{safe}",
            message.chat.id, message.message_id
        ));
        files
            .store(target, bytes, file.mime_type.clone(), name)
            .await;
        files.finish()
    }

    async fn send_text(
        &self,
        message: &Outbound,
        chunk: &str,
        reply: bool,
    ) -> Result<String, ChannelError> {
        let mut params = json!({
            "chat_id": message.chat.id, "text": chunk, "parse_mode": "HTML",
            "link_preview_options": { "is_disabled": true },
        });
        if let Some(ThreadRef::Topic(topic)) = &message.chat.thread
            && let Ok(topic) = topic.parse::<i64>()
        {
            params["message_thread_id"] = json!(topic);
        }
        if reply
            && let Some(id) = message
                .reply_to
                .as_deref()
                .and_then(|id| id.parse::<i64>().ok())
        {
            params["reply_parameters"] =
                json!({ "message_id": id, "allow_sending_without_reply": true });
        }
        let sent: Result<Value, _> = self.api.call("sendMessage", &params, Duration::ZERO).await;
        let sent = match sent {
            Err(ChannelError::Api { message: why, .. }) if why.contains("can't parse entities") => {
                // Never lose a reply over markup: the same text, plain.
                tracing::warn!(%why, "telegram refused the HTML; sending plain text");
                params["text"] = json!(telegram_html_text(chunk));
                if let Some(map) = params.as_object_mut() {
                    map.remove("parse_mode");
                }
                self.api
                    .call("sendMessage", &params, Duration::ZERO)
                    .await?
            }
            other => other?,
        };
        Ok(sent
            .get("message_id")
            .map(Value::to_string)
            .unwrap_or_default())
    }

    async fn send_file(&self, message: &Outbound, path: &Path) -> Result<String, ChannelError> {
        let OutboundFile {
            name: file_name,
            bytes,
        } = read_outbound_file(CHANNEL, path).await?;
        let is_photo = matches!(
            path.extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("png" | "jpg" | "jpeg" | "webp")
        );
        let (method, field) = if is_photo {
            ("sendPhoto", "photo")
        } else {
            ("sendDocument", "document")
        };
        let mut fields = vec![("chat_id", message.chat.id.clone())];
        if let Some(ThreadRef::Topic(topic)) = &message.chat.thread {
            fields.push(("message_thread_id", topic.clone()));
        }
        let sent: Value = self
            .api
            .upload(
                method,
                &fields,
                api::Upload {
                    field,
                    file_name: &file_name,
                    bytes,
                },
            )
            .await?;
        Ok(sent
            .get("message_id")
            .map(Value::to_string)
            .unwrap_or_default())
    }

    async fn send_message(&self, message: &Outbound) -> Result<Vec<String>, ChannelError> {
        let mut ids = Vec::new();
        // Telegram counts its 4096 in UTF-16 units: with characters outside the BMP
        // (emoji) a chunk of 4096 chars could be twice that.
        let limit = if message.text.chars().any(|c| c.len_utf16() > 1) {
            Flavor::TelegramHtml.limit() / 2
        } else {
            Flavor::TelegramHtml.limit()
        };
        let chunks = render_chunks(&message.text, Flavor::TelegramHtml, limit);
        for (i, chunk) in chunks.iter().enumerate() {
            ids.push(self.send_text(message, chunk, i == 0).await?);
        }
        for path in &message.media {
            ids.push(self.send_file(message, path).await?);
        }
        Ok(ids)
    }

    async fn show_typing(&self, chat: &ChatRef) -> Result<(), ChannelError> {
        let mut params = json!({ "chat_id": chat.id, "action": "typing" });
        if let Some(ThreadRef::Topic(topic)) = &chat.thread
            && let Ok(topic) = topic.parse::<i64>()
        {
            params["message_thread_id"] = json!(topic);
        }
        let _: Value = self
            .api
            .call("sendChatAction", &params, Duration::ZERO)
            .await?;
        Ok(())
    }
}

channel_adapter!(TelegramAdapter, channel: CHANNEL, settings: settings, receive: poll, more: {
    fn react<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        emoji: &'a str,
        remove: bool,
    ) -> futures_util::future::BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(self.set_reaction(chat, message_id, emoji, remove))
    }

    fn edit<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
        text: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(self.edit_text(chat, message_id, text))
    }

    fn delete<'a>(
        &'a self,
        chat: &'a ChatRef,
        message_id: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), ChannelError>> {
        Box::pin(self.delete_message(chat, message_id))
    }

    fn message_actions(&self) -> &'static [&'static str] {
        actions::ACTIONS
    }
});

/// `text` without `handle` (the bot's `@name`, matched without regard to ASCII case:
/// usernames are ASCII, and ASCII lowercasing keeps byte offsets), whitespace tidied.
fn remove_mention(text: &str, handle: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let needle = handle.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let (mut rest, mut from) = (0, 0);
    while let Some(at) = lower[from..].find(&needle) {
        out.push_str(&text[rest..from + at]);
        rest = from + at + needle.len();
        from = rest;
    }
    out.push_str(&text[rest..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_removed() {
        assert_eq!(
            remove_mention("@Pincer_Bot hello there", "@pincer_bot"),
            "hello there"
        );
        assert_eq!(
            remove_mention("hi @pincer_bot, ok", "@pincer_bot"),
            "hi , ok"
        );
        assert_eq!(remove_mention("Ünï @PINCER_bot x", "@pincer_bot"), "Ünï x");
    }
}
