//! Injected chat messages: the [`InjectFeishuMessage`] builder and the
//! `im.message.receive_v1` event (schema 2.0) built from it, with the message's images and
//! files registered as resources the fake serves.

use bytes::Bytes;
use serde_json::{Value, json};

use super::state::{Inner, MessageInfo, Resource, Shared};

/// `p2p` or `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatType {
    P2p,
    Group,
}

/// A message a user sends to the bot, for [`FakeFeishu::inject_message`] (long
/// connection) or [`CallbackClient::post_event`] (event callbacks).
///
/// Mentions: the bot (when mentioned) is `@_user_1` and its placeholder is put before the
/// text; other mentions get `@_user_2`, `@_user_3`… in the order added (write their
/// placeholders in the text where they belong).
///
/// Content: a `file` makes a `file` message (the text is dropped: Feishu file messages have
/// none); one image without text makes an `image` message; images with text, or
/// [`post`](Self::post), make a `post` (rich text); else a `text` message.
///
/// [`FakeFeishu::inject_message`]: super::FakeFeishu::inject_message
/// [`CallbackClient::post_event`]: super::CallbackClient::post_event
#[derive(Debug, Clone, PartialEq)]
pub struct InjectFeishuMessage {
    pub chat_type: ChatType,
    /// `None` for a p2p chat: the fake's `oc_dm_<open_id>`.
    pub chat_id: Option<String>,
    pub sender_open_id: String,
    /// `user` (else e.g. `app`, which adapters must ignore).
    pub sender_type: String,
    pub text: String,
    pub mentions_bot: bool,
    /// Other mentioned users: `(open_id, name)`.
    pub mentions: Vec<(String, String)>,
    pub thread_id: Option<String>,
    /// The message replied to (`parent_id` and `root_id`).
    pub parent_id: Option<String>,
    pub images: Vec<Bytes>,
    pub file: Option<(String, Bytes)>,
    /// `Some(title)`: sent as a `post`.
    pub post_title: Option<String>,
    /// Wrap the post in this locale key (`{"zh_cn": {…}}`).
    pub post_locale: Option<String>,
    /// `(message_type, content)` as is (stickers, audio…), overriding everything else.
    pub raw: Option<(String, Value)>,
    pub message_id: Option<String>,
    pub event_id: Option<String>,
    /// Send the event as this many frames (`sum`/`seq`) on the long connection.
    pub parts: usize,
}

impl InjectFeishuMessage {
    /// A direct (p2p) message from `open_id`.
    pub fn dm(open_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            chat_type: ChatType::P2p,
            chat_id: None,
            sender_open_id: open_id.into(),
            sender_type: "user".to_owned(),
            text: text.into(),
            mentions_bot: false,
            mentions: Vec::new(),
            thread_id: None,
            parent_id: None,
            images: Vec::new(),
            file: None,
            post_title: None,
            post_locale: None,
            raw: None,
            message_id: None,
            event_id: None,
            parts: 1,
        }
    }

    /// A message from `open_id` in group chat `chat_id` (`oc_…`).
    pub fn group(
        chat_id: impl Into<String>,
        open_id: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        let mut message = Self::dm(open_id, text);
        message.chat_type = ChatType::Group;
        message.chat_id = Some(chat_id.into());
        message
    }

    pub fn mentioning_bot(mut self) -> Self {
        self.mentions_bot = true;
        self
    }

    /// Mentions another user (see the type's docs for the placeholder).
    pub fn mention(mut self, open_id: impl Into<String>, name: impl Into<String>) -> Self {
        self.mentions.push((open_id.into(), name.into()));
        self
    }

    pub fn image(mut self, bytes: impl Into<Bytes>) -> Self {
        self.images.push(bytes.into());
        self
    }

    pub fn file(mut self, name: impl Into<String>, bytes: impl Into<Bytes>) -> Self {
        self.file = Some((name.into(), bytes.into()));
        self
    }

    pub fn raw_content(mut self, message_type: impl Into<String>, content: Value) -> Self {
        self.raw = Some((message_type.into(), content));
        self
    }

    /// Sent by something other than a user (`app`: a bot).
    pub fn sender_type(mut self, sender_type: impl Into<String>) -> Self {
        self.sender_type = sender_type.into();
        self
    }

    /// Sends the event in `parts` frames on the long connection.
    pub fn split_into(mut self, parts: usize) -> Self {
        self.parts = parts.max(1);
        self
    }
}

crate::fake_support::some_setters!(InjectFeishuMessage {
    thread => thread_id,
    reply_to => parent_id,
    post => post_title,
    post_locale => post_locale,
    message_id => message_id,
    event_id => event_id,
});

/// The fake's p2p chat id for a user.
pub(crate) fn dm_chat_id(open_id: &str) -> String {
    format!("oc_dm_{}", open_id.trim_start_matches("ou_"))
}

/// Milliseconds since the epoch, as Feishu writes `create_time`.
pub(crate) fn now_millis() -> String {
    pincer_base::now_ms().to_string()
}

/// Builds the `im.message.receive_v1` event of `message` with `token` in its header,
/// registering its resources and remembering the message; returns the message id and the
/// event.
pub(crate) fn receive_event(
    shared: &Shared,
    inner: &mut Inner,
    message: &InjectFeishuMessage,
    token: &str,
) -> (String, Value) {
    let config = &shared.config;
    let message_id = message
        .message_id
        .clone()
        .unwrap_or_else(|| format!("om_fake{:x}", inner.take_id()));
    let event_id = message
        .event_id
        .clone()
        .unwrap_or_else(|| format!("ev_fake{:x}", inner.take_id()));
    let chat_id = message
        .chat_id
        .clone()
        .unwrap_or_else(|| dm_chat_id(&message.sender_open_id));
    let mut mentions = Vec::new();
    let mut text = message.text.clone();
    if message.mentions_bot {
        mentions.push((config.bot_open_id.clone(), config.bot_name.clone()));
        text = if text.is_empty() {
            "@_user_1".to_owned()
        } else {
            format!("@_user_1 {text}")
        };
    }
    mentions.extend(message.mentions.iter().cloned());
    let mentions_json: Vec<Value> = mentions
        .iter()
        .enumerate()
        .map(|(index, (open_id, name))| {
            json!({
                "key": format!("@_user_{}", index + 1),
                "id": {"union_id": format!("on_{open_id}"), "user_id": "", "open_id": open_id},
                "name": name,
                "tenant_key": config.tenant_key,
            })
        })
        .collect();
    let (message_type, content) = content(inner, message, &message_id, &text, &mentions);
    let root = message.parent_id.clone().unwrap_or_default();
    let event = json!({
        "schema": "2.0",
        "header": {
            "event_id": event_id,
            "event_type": "im.message.receive_v1",
            "create_time": now_millis(),
            "token": token,
            "app_id": config.app_id,
            "tenant_key": config.tenant_key,
        },
        "event": {
            "sender": {
                "sender_id": {
                    "union_id": format!("on_{}", message.sender_open_id),
                    "user_id": format!("u_{}", message.sender_open_id.trim_start_matches("ou_")),
                    "open_id": message.sender_open_id,
                },
                "sender_type": message.sender_type,
                "tenant_key": config.tenant_key,
            },
            "message": {
                "message_id": message_id,
                "root_id": root,
                "parent_id": root,
                "create_time": now_millis(),
                "update_time": now_millis(),
                "chat_id": chat_id,
                "thread_id": message.thread_id.clone().unwrap_or_default(),
                "chat_type": match message.chat_type {
                    ChatType::P2p => "p2p",
                    ChatType::Group => "group",
                },
                "message_type": message_type,
                "content": content.to_string(),
                "mentions": mentions_json,
                "user_agent": "Mozilla/5.0 (fake-feishu)",
            },
        },
    });
    inner.messages.insert(
        message_id.clone(),
        MessageInfo {
            chat_id,
            thread_id: message.thread_id.clone(),
        },
    );
    inner.event_json.insert(message_id.clone(), event.clone());
    (message_id, event)
}

/// The message type and content object, registering images and files.
fn content(
    inner: &mut Inner,
    message: &InjectFeishuMessage,
    message_id: &str,
    text: &str,
    mentions: &[(String, String)],
) -> (String, Value) {
    if let Some((message_type, content)) = &message.raw {
        return (message_type.clone(), content.clone());
    }
    let resource = |inner: &mut Inner, kind: &'static str, name: String, bytes: &Bytes| {
        let prefix = if kind == "image" {
            "img_v3_in"
        } else {
            "file_v3_in"
        };
        let key = format!("{prefix}{:x}", inner.take_id());
        inner.resources.insert(
            (message_id.to_owned(), key.clone()),
            Resource {
                kind,
                name,
                bytes: bytes.clone(),
            },
        );
        key
    };
    if let Some((name, bytes)) = &message.file {
        let key = resource(inner, "file", name.clone(), bytes);
        return (
            "file".to_owned(),
            json!({"file_key": key, "file_name": name}),
        );
    }
    let image_keys: Vec<String> = message
        .images
        .iter()
        .map(|bytes| resource(inner, "image", "image".to_owned(), bytes))
        .collect();
    if message.post_title.is_none() && text.is_empty() && image_keys.len() == 1 {
        return ("image".to_owned(), json!({"image_key": image_keys[0]}));
    }
    if message.post_title.is_none() && image_keys.is_empty() {
        return ("text".to_owned(), json!({"text": text}));
    }
    // A post: the text split into `text` and `at` runs, then the images.
    let mut line = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("@_user_") {
        let digits = rest[start + 7..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let key = &rest[start..start + 7 + digits];
        let name = key
            .strip_prefix("@_user_")
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| mentions.get(n.wrapping_sub(1)))
            .map(|(_, name)| name.clone())
            .unwrap_or_default();
        if start > 0 {
            line.push(json!({"tag": "text", "text": &rest[..start]}));
        }
        line.push(json!({"tag": "at", "user_id": key, "user_name": name}));
        rest = &rest[start + key.len()..];
    }
    if !rest.is_empty() {
        line.push(json!({"tag": "text", "text": rest}));
    }
    let mut lines = vec![Value::Array(line)];
    for key in image_keys {
        lines.push(json!([{"tag": "img", "image_key": key}]));
    }
    let post = json!({
        "title": message.post_title.clone().unwrap_or_default(),
        "content": lines,
    });
    let post = match &message.post_locale {
        Some(locale) => json!({ locale.as_str(): post }),
        None => post,
    };
    ("post".to_owned(), post)
}
