//! What a test injects: [`InjectMessage`] (an incoming user message), the chat types, the
//! files it registers, and the entities Telegram computes for incoming text (`mention`,
//! `bot_command`) with UTF-16 offsets.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The type of a chat, as in `Chat.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatType {
    Private,
    Group,
    Supergroup,
    Channel,
}

impl ChatType {
    /// `"private"`, `"group"`, `"supergroup"` or `"channel"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Group => "group",
            Self::Supergroup => "supergroup",
            Self::Channel => "channel",
        }
    }

    /// What Telegram's id ranges suggest: positive ids are users (private chats), `-100…`
    /// ids supergroups and channels, other negative ids basic groups.
    pub fn guess(chat_id: i64) -> Self {
        if chat_id > 0 {
            Self::Private
        } else if chat_id <= -1_000_000_000_000 {
            Self::Supergroup
        } else {
            Self::Group
        }
    }
}

/// A file the fake can serve (`getFile` + download) and put into injected messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredFile {
    pub file_id: String,
    pub file_unique_id: String,
    pub file_name: String,
    pub file_size: u64,
    /// The path `getFile` answers, e.g. `documents/file_1.txt`.
    pub file_path: String,
    pub mime_type: String,
}

/// An incoming message from a user, turned into a `message` update by
/// [`FakeTelegram::inject_message`](super::FakeTelegram::inject_message).
///
/// Start from [`InjectMessage::private`], [`InjectMessage::group`] or
/// [`InjectMessage::supergroup`] and adjust with the builder methods or the public fields.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectMessage {
    pub chat_id: i64,
    pub chat_type: ChatType,
    /// Title of a group chat (default "Test Group").
    pub chat_title: Option<String>,
    pub from_id: i64,
    pub from_username: Option<String>,
    pub from_first_name: String,
    pub from_is_bot: bool,
    /// The text; for a document or photo it becomes the caption (omitted when empty).
    pub text: String,
    pub message_thread_id: Option<i64>,
    pub is_topic_message: bool,
    /// Explicit entities; `None` computes `mention` and `bot_command` entities from the text.
    pub entities: Option<Vec<Value>>,
    /// The message this one replies to (in the same chat). A message the fake knows (injected
    /// or sent by the bot) is embedded as Telegram does; an unknown id gets a minimal one.
    pub reply_to_message_id: Option<i64>,
    pub document: Option<RegisteredFile>,
    pub photo: Option<RegisteredFile>,
    /// Unix time; `None` is now.
    pub date: Option<i64>,
}

impl InjectMessage {
    /// A private chat with user `chat_id` (user id = chat id), first name "Test User",
    /// username `user<chat_id>`.
    pub fn private(chat_id: i64, text: impl Into<String>) -> Self {
        Self {
            chat_id,
            chat_type: ChatType::Private,
            chat_title: None,
            from_id: chat_id,
            from_username: Some(format!("user{chat_id}")),
            from_first_name: "Test User".to_owned(),
            from_is_bot: false,
            text: text.into(),
            message_thread_id: None,
            is_topic_message: false,
            entities: None,
            reply_to_message_id: None,
            document: None,
            photo: None,
            date: None,
        }
    }

    /// A basic group `chat_id` (negative), message from user `from_id`.
    pub fn group(chat_id: i64, from_id: i64, text: impl Into<String>) -> Self {
        Self {
            chat_type: ChatType::Group,
            chat_title: Some("Test Group".to_owned()),
            from_id,
            from_username: Some(format!("user{from_id}")),
            ..Self::private(chat_id, text)
        }
    }

    /// A supergroup `chat_id` (`-100…`), message from user `from_id`.
    pub fn supergroup(chat_id: i64, from_id: i64, text: impl Into<String>) -> Self {
        Self {
            chat_type: ChatType::Supergroup,
            ..Self::group(chat_id, from_id, text)
        }
    }

    /// Posts into forum topic `thread_id` (sets `message_thread_id` and `is_topic_message`).
    pub fn in_topic(mut self, thread_id: i64) -> Self {
        self.message_thread_id = Some(thread_id);
        self.is_topic_message = true;
        self
    }

    /// Sets the sender.
    pub fn from_user(mut self, from_id: i64, first_name: &str, username: Option<&str>) -> Self {
        self.from_id = from_id;
        self.from_first_name = first_name.to_owned();
        self.from_username = username.map(str::to_owned);
        self
    }

    /// Replies to message `message_id` of the same chat.
    pub fn reply_to(mut self, message_id: i64) -> Self {
        self.reply_to_message_id = Some(message_id);
        self
    }

    /// Attaches a registered file as a document (the text becomes its caption).
    pub fn with_document(mut self, file: RegisteredFile) -> Self {
        self.document = Some(file);
        self
    }

    /// Attaches a registered file as a photo (the text becomes its caption).
    pub fn with_photo(mut self, file: RegisteredFile) -> Self {
        self.photo = Some(file);
        self
    }

    /// Uses these entities instead of the computed ones.
    pub fn with_entities(mut self, entities: Vec<Value>) -> Self {
        self.entities = Some(entities);
        self
    }

    /// The `from` user object.
    pub(crate) fn sender_json(&self) -> Value {
        let mut user = json!({
            "id": self.from_id,
            "is_bot": self.from_is_bot,
            "first_name": self.from_first_name,
            "language_code": "en",
        });
        if let Some(username) = &self.from_username {
            user["username"] = json!(username);
        }
        user
    }

    /// The `chat` object.
    pub(crate) fn chat_json(&self) -> Value {
        let mut chat = json!({"id": self.chat_id, "type": self.chat_type.as_str()});
        match self.chat_type {
            ChatType::Private => {
                chat["first_name"] = json!(self.from_first_name);
                if let Some(username) = &self.from_username {
                    chat["username"] = json!(username);
                }
            }
            _ => {
                let title = self.chat_title.as_deref().unwrap_or("Test Group");
                chat["title"] = json!(title);
                if self.chat_type == ChatType::Supergroup && self.is_topic_message {
                    chat["is_forum"] = json!(true);
                }
            }
        }
        chat
    }
}

fn is_username_char(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || ch == '_'
}

fn is_word_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// The entities Telegram detects in incoming text: `mention` for every `@username` (5-32
/// username characters, not preceded by a word character) and `bot_command` for `/command`
/// or `/command@bot` (not preceded by a word character or `/`). Offsets and lengths are in
/// UTF-16 code units, as Telegram counts them.
pub fn detect_entities(text: &str) -> Vec<Value> {
    // (char, utf-16 offset of the char)
    let mut chars = Vec::with_capacity(text.len());
    let mut offset = 0usize;
    for ch in text.chars() {
        chars.push((ch, offset));
        offset += ch.len_utf16();
    }
    let end_offset = offset;
    let utf16_at = |index: usize| chars.get(index).map_or(end_offset, |(_, off)| *off);
    let char_at = |index: usize| chars.get(index).map(|(ch, _)| *ch);
    let run_end = |from: usize| {
        let mut end = from;
        while char_at(end).is_some_and(is_username_char) {
            end += 1;
        }
        end
    };

    let mut entities = Vec::new();
    let mut index = 0;
    while let Some(ch) = char_at(index) {
        let previous = index.checked_sub(1).and_then(char_at);
        match ch {
            '@' if !previous.is_some_and(is_word_char) => {
                let end = run_end(index + 1);
                let len = end - index - 1;
                if (5..=32).contains(&len) {
                    entities.push(entity("mention", utf16_at(index), utf16_at(end)));
                    index = end;
                    continue;
                }
            }
            '/' if !previous.is_some_and(|p| is_word_char(p) || p == '/') => {
                let mut end = run_end(index + 1);
                let len = end - index - 1;
                if (1..=64).contains(&len) {
                    if char_at(end) == Some('@') {
                        let bot_end = run_end(end + 1);
                        if (5..=32).contains(&(bot_end - end - 1)) {
                            end = bot_end;
                        }
                    }
                    entities.push(entity("bot_command", utf16_at(index), utf16_at(end)));
                    index = end;
                    continue;
                }
            }
            _ => {}
        }
        index += 1;
    }
    entities
}

fn entity(kind: &str, start: usize, end: usize) -> Value {
    json!({"type": kind, "offset": start, "length": end - start})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_and_commands() {
        let entities =
            detect_entities("😀 hi @pincer_test_bot, mail a@b_c_d_e /start@pincer_test_bot /x");
        assert_eq!(
            entities,
            vec![
                json!({"type": "mention", "offset": 6, "length": 16}),
                json!({"type": "bot_command", "offset": 39, "length": 22}),
                json!({"type": "bot_command", "offset": 62, "length": 2}),
            ]
        );
        assert!(detect_entities("@abc and/or path/x").is_empty());
    }

    #[test]
    fn chat_type_guess() {
        assert_eq!(ChatType::guess(5), ChatType::Private);
        assert_eq!(ChatType::guess(-5), ChatType::Group);
        assert_eq!(ChatType::guess(-1_001_234_567_890), ChatType::Supergroup);
    }
}
