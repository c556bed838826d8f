//! What tests inject: a user's message (`MESSAGE_CREATE`) with its attachments, and the
//! ISO 8601 timestamps Discord puts on messages.

use bytes::Bytes;
use serde_json::{Value, json};

use super::state::{Inner, Shared};

/// A message a user posts, dispatched as `MESSAGE_CREATE` by
/// [`FakeDiscord::inject_message`](super::FakeDiscord::inject_message).
#[derive(Debug, Clone, PartialEq)]
pub struct InjectDiscordMessage {
    pub channel_id: String,
    /// `None` for a DM (no `guild_id` and no `member` in the event).
    pub guild_id: Option<String>,
    pub author_id: String,
    pub author_username: String,
    pub content: String,
    /// Adds the bot to `mentions` and puts `<@BOT_ID>` in front of `content` when it is
    /// not already mentioned there.
    pub mentions_bot: bool,
    /// `None`: the next id of the fake's snowflake counter.
    pub message_id: Option<String>,
    pub attachments: Vec<InjectAttachment>,
    /// Makes the message a reply (`type` 19) to this message, with `message_reference` and
    /// `referenced_message` (the stored message when the fake knows it).
    pub referenced_message_id: Option<String>,
    /// The author of the referenced message when the fake does not know it (default: the
    /// bot).
    pub referenced_author_id: Option<String>,
}

impl InjectDiscordMessage {
    /// A DM from user `author_id` (username `user<id>`) in DM channel `channel_id`.
    pub fn dm(
        channel_id: impl Into<String>,
        author_id: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let author_id = author_id.into();
        Self {
            channel_id: channel_id.into(),
            guild_id: None,
            author_username: format!("user{author_id}"),
            author_id,
            content: content.into(),
            mentions_bot: false,
            message_id: None,
            attachments: Vec::new(),
            referenced_message_id: None,
            referenced_author_id: None,
        }
    }

    /// A message in guild channel `channel_id` of `guild_id`.
    pub fn guild(
        guild_id: impl Into<String>,
        channel_id: impl Into<String>,
        author_id: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        let mut message = Self::dm(channel_id, author_id, content);
        message.guild_id = Some(guild_id.into());
        message
    }

    pub fn username(mut self, username: impl Into<String>) -> Self {
        self.author_username = username.into();
        self
    }

    /// See [`mentions_bot`](Self::mentions_bot).
    pub fn mentioning_bot(mut self) -> Self {
        self.mentions_bot = true;
        self
    }

    pub fn attachment(mut self, attachment: InjectAttachment) -> Self {
        self.attachments.push(attachment);
        self
    }
}

crate::fake_support::some_setters!(InjectDiscordMessage {
    message_id => message_id,
    reply_to => referenced_message_id,
});

/// A file attached to an injected message. The fake serves `bytes` at the attachment's
/// `url` (`<base_url>/attachments/<channel_id>/<id>/<filename>`, no auth needed).
#[derive(Debug, Clone, PartialEq)]
pub struct InjectAttachment {
    pub filename: String,
    /// `None`: guessed from the extension.
    pub content_type: Option<String>,
    pub bytes: Bytes,
}

impl InjectAttachment {
    pub fn new(filename: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        Self {
            filename: filename.into(),
            content_type: None,
            bytes: bytes.into(),
        }
    }
}

crate::fake_support::some_setters!(InjectAttachment {
    content_type => content_type,
});

/// Builds the `MESSAGE_CREATE` data of `message` (remembering the message, its author and
/// its attachments); returns its id and data.
pub(crate) fn message_create(
    shared: &Shared,
    inner: &mut Inner,
    message: InjectDiscordMessage,
) -> (String, Value) {
    let bot_id = &shared.config.bot_id;
    let id = message.message_id.unwrap_or_else(|| inner.take_id());
    let now = timestamp();
    inner
        .users
        .insert(message.author_id.clone(), message.author_username.clone());
    if let Some(guild) = &message.guild_id {
        inner
            .guild_channels
            .insert(message.channel_id.clone(), guild.clone());
    }
    let mentioned = [format!("<@{bot_id}>"), format!("<@!{bot_id}>")];
    let mut content = message.content;
    if message.mentions_bot && !mentioned.iter().any(|m| content.contains(m.as_str())) {
        content = format!("<@{bot_id}> {content}");
    }
    let mentions = if mentioned.iter().any(|m| content.contains(m.as_str())) {
        vec![shared.bot_user()]
    } else {
        Vec::new()
    };
    let attachments: Vec<Value> = message
        .attachments
        .into_iter()
        .map(|attachment| {
            let attachment_id = inner.take_id();
            let content_type = attachment
                .content_type
                .unwrap_or_else(|| mime_for(&attachment.filename).to_owned());
            let key = format!(
                "{}/{attachment_id}/{}",
                message.channel_id, attachment.filename
            );
            let url = format!("{}/attachments/{key}", shared.base_url);
            let size = attachment.bytes.len();
            inner
                .attachments
                .insert(key, (content_type.clone(), attachment.bytes));
            json!({
                "id": attachment_id, "filename": attachment.filename, "size": size,
                "url": url, "proxy_url": url, "content_type": content_type,
            })
        })
        .collect();
    let mut d = json!({
        "id": id,
        "type": 0,
        "channel_id": message.channel_id,
        "author": inner.user(&message.author_id),
        "content": content,
        "timestamp": now,
        "edited_timestamp": null,
        "tts": false,
        "mention_everyone": false,
        "mentions": mentions,
        "mention_roles": [],
        "attachments": attachments,
        "embeds": [],
        "pinned": false,
        "flags": 0,
    });
    if let Some(guild_id) = &message.guild_id {
        d["guild_id"] = json!(guild_id);
        d["member"] =
            json!({"roles": [], "joined_at": now, "nick": null, "deaf": false, "mute": false});
    }
    if let Some(reference) = message.referenced_message_id {
        d["type"] = json!(19);
        let mut reference_json =
            json!({"type": 0, "message_id": reference, "channel_id": message.channel_id});
        if let Some(guild_id) = &message.guild_id {
            reference_json["guild_id"] = json!(guild_id);
        }
        d["message_reference"] = reference_json;
        d["referenced_message"] = inner.messages.get(&reference).cloned().unwrap_or_else(|| {
            let author = match &message.referenced_author_id {
                Some(author_id) => inner.user(author_id),
                None => shared.bot_user(),
            };
            json!({
                "id": reference, "type": 0, "channel_id": message.channel_id,
                "author": author, "content": "", "timestamp": now,
                "mentions": [], "attachments": [], "embeds": [],
            })
        });
    }
    inner.remember_message(&d);
    (id, d)
}

/// A MIME type from a file name's extension; Discord names the charset of text.
pub(crate) fn mime_for(file_name: &str) -> &'static str {
    match crate::fake_support::mime_for(file_name) {
        "text/plain" => "text/plain; charset=utf-8",
        "text/markdown" => "text/markdown; charset=utf-8",
        other => other,
    }
}

/// Now as Discord writes timestamps: `2024-05-01T12:34:56.789000+00:00`.
pub(crate) fn timestamp() -> String {
    format_timestamp(jiff::Timestamp::now())
}

fn format_timestamp(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::format_timestamp;

    #[test]
    fn timestamps() {
        assert_eq!(
            format_timestamp(jiff::Timestamp::UNIX_EPOCH),
            "1970-01-01T00:00:00.000000+00:00"
        );
        let leap_day = jiff::Timestamp::new(1_709_210_096, 789_000_000).unwrap();
        assert_eq!(
            format_timestamp(leap_day),
            "2024-02-29T12:34:56.789000+00:00"
        );
        let sub_micro = jiff::Timestamp::new(1_709_210_096, 789_999).unwrap();
        assert_eq!(
            format_timestamp(sub_micro),
            "2024-02-29T12:34:56.000789+00:00"
        );
    }
}
