//! From a received message event to the gateway's [`Inbound`]: who and where (the chat
//! mapping of the module docs), the text with mentions resolved, and the files downloaded
//! within the size limit. [`incoming`] is the pure part (fuzzed with the decoders); the
//! downloads need the API.

use pincer_channel_port::{ChatKind, ThreadRef};
use pincer_channel_port::{ChatRef, Inbound, InboundMedia, SenderRef};

use super::answers::path_segment;
use super::events::{MessageEvent, Resource, ResourceKind, decode_content, resolve_mentions};
use super::{CHANNEL, Inner};
use crate::support::ReceivedFiles;

/// A message as the gateway will see it, before its files are downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    pub chat: ChatRef,
    pub sender: SenderRef,
    pub message_id: String,
    pub text: String,
    pub mentioned: bool,
    pub resources: Vec<Resource>,
}

/// What the gateway takes from `event`, or why it takes nothing: messages from bots or
/// the app itself, unsupported or malformed contents, messages with neither text nor
/// files.
pub fn incoming(event: &MessageEvent, bot_open_id: &str) -> Result<Incoming, String> {
    let sender = &event.sender;
    let message = &event.message;
    if sender.sender_type != "user" {
        return Err(format!("sent by a {:?}", sender.sender_type));
    }
    let open_id = &sender.sender_id.open_id;
    if open_id.is_empty() {
        return Err("a sender without an open_id".into());
    }
    if !bot_open_id.is_empty() && open_id == bot_open_id {
        return Err("sent by the bot itself".into());
    }
    let content =
        decode_content(&message.message_type, &message.content).map_err(|e| e.to_string())?;
    let (text, mentioned) = resolve_mentions(&content.text, &message.mentions, bot_open_id);
    if text.is_empty() && content.resources.is_empty() {
        return Err("an empty message".into());
    }
    let chat = if message.chat_type == "p2p" {
        ChatRef {
            kind: ChatKind::Direct,
            id: open_id.clone(),
            thread: None,
        }
    } else {
        if message.chat_id.is_empty() {
            return Err("a group message without a chat_id".into());
        }
        ChatRef {
            kind: ChatKind::Group,
            id: message.chat_id.clone(),
            thread: Some(&message.thread_id)
                .filter(|t| !t.is_empty())
                .map(|t| ThreadRef::Thread(t.clone())),
        }
    };
    let aliases = [&sender.sender_id.user_id, &sender.sender_id.union_id]
        .into_iter()
        .filter(|id| !id.is_empty())
        .cloned()
        .collect();
    Ok(Incoming {
        chat,
        sender: SenderRef {
            id: open_id.clone(),
            aliases,
            name: None,
        },
        message_id: message.message_id.clone(),
        text,
        mentioned,
        resources: content.resources,
    })
}

impl Inner {
    /// The gateway's view of `event` (`None`: nothing for it; logged).
    pub(super) async fn inbound(&self, event: &MessageEvent) -> Option<Inbound> {
        if self.bot_open_id.get().is_none()
            && let Err(e) = self.ensure_bot().await
        {
            tracing::warn!(error = %e, "feishu: the bot's identity is unknown; mentions of it go unnoticed");
        }
        let bot = self.bot_open_id.get().map_or("", String::as_str);
        let mut incoming = match incoming(event, bot) {
            Ok(incoming) => incoming,
            Err(why) => {
                tracing::debug!(%why, message_id = %event.message.message_id, "feishu: message skipped");
                return None;
            }
        };
        // A reply to one of the bot's messages counts as a mention (as on Discord and
        // Telegram): answering the bot in a group needs no `@`.
        incoming.mentioned |= self.sent_by_bot(&event.message.parent_id);
        let (media, refused_media) = self
            .media_of(&incoming.message_id, &incoming.resources)
            .await;
        Some(Inbound {
            channel: CHANNEL.into(),
            account_id: self.settings.account_id.clone(),
            chat: incoming.chat,
            sender: incoming.sender,
            message_id: incoming.message_id,
            text: incoming.text,
            mentioned: incoming.mentioned,
            media,
            refused_media,
            guild_id: None,
            team_id: None,
        })
    }

    /// Downloads the message's files within the size limit; a refusal note when one is
    /// too big or cannot be fetched (the others still come through).
    async fn media_of(
        &self,
        message_id: &str,
        resources: &[Resource],
    ) -> (Vec<InboundMedia>, Option<String>) {
        let max = self.settings.media_max_bytes;
        // Feishu's limit may be under a MB: the note says KB then.
        let mut files = ReceivedFiles::new("Feishu", max).with_too_big_note(format!(
            "That file is too big for me (the limit is {}); send a smaller one or a link.",
            size_text(max)
        ));
        for resource in resources {
            let path = match (path_segment(message_id), path_segment(&resource.key)) {
                (Ok(message), Ok(key)) => format!(
                    "/open-apis/im/v1/messages/{message}/resources/{key}?type={}",
                    resource.kind.as_str()
                ),
                _ => {
                    files.failed();
                    continue;
                }
            };
            let Some(download) = files.fetched(self.api.download(&path, max).await) else {
                continue;
            };
            let name = resource
                .file_name
                .clone()
                .unwrap_or_else(|| default_name(resource, download.content_type.as_deref()));
            let target = self.settings.media_dir.join(format!(
                "feishu-{}-{}-{}",
                safe(message_id),
                safe(&resource.key),
                pincer_channel_port::file_name::safe_name(&name)
            ));
            files
                .store(target, download.bytes, download.content_type, name)
                .await;
        }
        files.finish()
    }
}

/// A size limit as people read it: whole MB, else KB.
fn size_text(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{} MB", bytes / (1024 * 1024))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// A name for a file that came without one: the key, with an extension from the type.
fn default_name(resource: &Resource, content_type: Option<&str>) -> String {
    let ext = match content_type {
        Some("image/png") => ".png",
        Some("image/jpeg") => ".jpg",
        Some("image/gif") => ".gif",
        Some("image/webp") => ".webp",
        Some("application/pdf") => ".pdf",
        _ if resource.kind == ResourceKind::Image => ".jpg",
        _ => "",
    };
    format!("{}{ext}", resource.key)
}

/// An id or key as part of a file name: letters, digits, `.-_`; at most 64 chars.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || ".-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::events::{Mention, ReceivedMessage, Sender, UserIds};
    use super::*;

    fn event(chat_type: &str, message_type: &str, content: &str) -> MessageEvent {
        MessageEvent {
            sender: Sender {
                sender_id: UserIds {
                    open_id: "ou_1".into(),
                    user_id: "u1".into(),
                    union_id: "on_1".into(),
                },
                sender_type: "user".into(),
                tenant_key: "tk".into(),
            },
            message: ReceivedMessage {
                message_id: "om_1".into(),
                chat_id: "oc_1".into(),
                chat_type: chat_type.into(),
                message_type: message_type.into(),
                content: content.into(),
                mentions: vec![Mention {
                    key: "@_user_1".into(),
                    id: UserIds {
                        open_id: "ou_bot".into(),
                        ..UserIds::default()
                    },
                    name: "Pincer".into(),
                }],
                ..ReceivedMessage::default()
            },
        }
    }

    #[test]
    fn direct_and_group() {
        let dm = incoming(&event("p2p", "text", r#"{"text":"hello"}"#), "ou_bot").unwrap();
        assert_eq!(
            dm,
            Incoming {
                chat: ChatRef {
                    kind: ChatKind::Direct,
                    id: "ou_1".into(),
                    thread: None
                },
                sender: SenderRef {
                    id: "ou_1".into(),
                    aliases: vec!["u1".into(), "on_1".into()],
                    name: None
                },
                message_id: "om_1".into(),
                text: "hello".into(),
                mentioned: false,
                resources: vec![],
            }
        );
        let mut group = event("group", "text", r#"{"text":"@_user_1 hi"}"#);
        group.message.thread_id = "omt_1".into();
        let group = incoming(&group, "ou_bot").unwrap();
        assert_eq!(
            group.chat,
            ChatRef {
                kind: ChatKind::Group,
                id: "oc_1".into(),
                thread: Some(ThreadRef::Thread("omt_1".into()))
            }
        );
        assert_eq!((group.text.as_str(), group.mentioned), ("hi", true));
    }

    #[test]
    fn skipped() {
        let mut bot = event("p2p", "text", r#"{"text":"x"}"#);
        bot.sender.sender_type = "app".into();
        assert!(incoming(&bot, "ou_bot").is_err());
        let mut me = event("p2p", "text", r#"{"text":"x"}"#);
        me.sender.sender_id.open_id = "ou_bot".into();
        assert!(incoming(&me, "ou_bot").is_err());
        assert!(incoming(&event("p2p", "sticker", "{}"), "ou_bot").is_err());
        assert!(incoming(&event("p2p", "text", r#"{"text":"@_user_1 "}"#), "ou_bot").is_err());
        let mut no_chat = event("group", "text", r#"{"text":"x"}"#);
        no_chat.message.chat_id.clear();
        assert!(incoming(&no_chat, "ou_bot").is_err());
        let image = incoming(&event("p2p", "image", r#"{"image_key":"img_1"}"#), "ou_bot");
        assert_eq!(image.unwrap().resources.len(), 1);
    }

    #[test]
    fn file_names() {
        let image = Resource {
            key: "img_1".into(),
            kind: ResourceKind::Image,
            file_name: None,
        };
        assert_eq!(default_name(&image, Some("image/png")), "img_1.png");
        assert_eq!(default_name(&image, None), "img_1.jpg");
        assert_eq!(safe("../a b.pdf"), ".._a_b.pdf");
        assert_eq!(size_text(30 * 1024 * 1024), "30 MB");
        assert_eq!(size_text(1000), "1 KB");
    }
}
