//! The fake's state: the update queue, known messages, chats and files, injected failures
//! and the records of what the bot did. One mutex; every change bumps a `watch` counter
//! that long polls and `wait_for_*` helpers wait on.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};

use super::FakeTelegramConfig;
use super::inject::{ChatType, InjectMessage, RegisteredFile, detect_entities};

/// A message the bot sent with `sendMessage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentMessage {
    pub message_id: i64,
    pub chat_id: i64,
    /// The text exactly as sent (with HTML tags when `parse_mode` is HTML).
    pub text: String,
    /// The visible text: tags removed and entities decoded for HTML, else `text`.
    pub plain_text: String,
    pub parse_mode: Option<String>,
    pub message_thread_id: Option<i64>,
    /// From `reply_parameters.message_id` or the older `reply_to_message_id`.
    pub reply_to_message_id: Option<i64>,
    pub disable_notification: bool,
    /// All parameters of the call, as received.
    pub params: Value,
}

/// A file the bot sent with `sendDocument` or `sendPhoto`.
#[derive(Debug, Clone, PartialEq)]
pub struct SentFile {
    pub message_id: i64,
    /// `"sendDocument"` or `"sendPhoto"`.
    pub method: String,
    pub chat_id: i64,
    pub caption: Option<String>,
    pub parse_mode: Option<String>,
    pub message_thread_id: Option<i64>,
    pub reply_to_message_id: Option<i64>,
    /// The uploaded file name (the registered one when the bot re-sent a `file_id`).
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// A message the bot edited with `editMessageText`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EditedMessage {
    pub chat_id: i64,
    pub message_id: i64,
    /// The new text exactly as sent.
    pub text: String,
    /// The new visible text.
    pub plain_text: String,
    pub parse_mode: Option<String>,
}

/// A `setMessageReaction`: the bot's reactions on a message after the call (empty: all
/// taken back).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reaction {
    pub chat_id: i64,
    pub message_id: i64,
    pub emoji: Vec<String>,
}

/// One API call with a valid token, in arrival order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedCall {
    /// The method name (canonical case for known methods).
    pub method: String,
    /// The parameters; uploads appear as `{"upload": file_name, "size": n}`.
    pub params: Value,
}

/// An injected failure.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub status: u16,
    pub description: String,
    pub retry_after: Option<u32>,
}

/// A file the fake serves.
#[derive(Debug, Clone)]
pub(crate) struct StoredFile {
    pub info: RegisteredFile,
    pub bytes: Bytes,
}

pub(crate) struct Inner {
    next_update_id: i64,
    next_message_id: i64,
    next_file: u64,
    /// Unconfirmed updates, in injection order.
    pub queue: Vec<(i64, Value)>,
    /// Updates queued again by `redeliver`, answered on the next `getUpdates` whatever its
    /// offset.
    pub redeliveries: VecDeque<(i64, Value)>,
    /// Every update ever queued, by id.
    history: HashMap<i64, Value>,
    /// Messages by (chat id, message id), for `reply_to_message`.
    messages: HashMap<(i64, i64), Value>,
    /// Chat objects seen in injected messages.
    chats: HashMap<i64, Value>,
    files: HashMap<String, StoredFile>,
    failures: HashMap<String, VecDeque<Failure>>,
    drops: HashMap<String, u32>,
    pub calls: Vec<RecordedCall>,
    pub sent_messages: Vec<SentMessage>,
    pub chat_actions: Vec<(i64, String)>,
    pub sent_files: Vec<SentFile>,
    pub get_updates_offsets: Vec<i64>,
    pub my_commands: Option<Value>,
    pub edited_messages: Vec<EditedMessage>,
    pub reactions: Vec<Reaction>,
    /// `(chat_id, message_id)` of every `deleteMessage`.
    pub deleted_messages: Vec<(i64, i64)>,
}

/// What the handlers share: the config, the stop token, the base URL and [`Inner`].
pub(crate) type Shared = crate::fake_support::Host<FakeTelegramConfig, Inner>;

pub(crate) use pincer_base::time::now_secs as now;

/// Telegram also names its voice notes `.oga`.
fn mime_for(file_name: &str) -> &'static str {
    if file_name.to_ascii_lowercase().ends_with(".oga") {
        "audio/ogg"
    } else {
        crate::fake_support::mime_for(file_name)
    }
}

impl Inner {
    /// The state a fake with `config` starts with.
    pub fn new(config: &FakeTelegramConfig) -> Self {
        Self {
            next_update_id: config.first_update_id,
            next_message_id: 1,
            next_file: 1,
            queue: Vec::new(),
            redeliveries: VecDeque::new(),
            history: HashMap::new(),
            messages: HashMap::new(),
            chats: HashMap::new(),
            files: HashMap::new(),
            failures: HashMap::new(),
            drops: HashMap::new(),
            calls: Vec::new(),
            sent_messages: Vec::new(),
            chat_actions: Vec::new(),
            sent_files: Vec::new(),
            get_updates_offsets: Vec::new(),
            my_commands: None,
            edited_messages: Vec::new(),
            reactions: Vec::new(),
            deleted_messages: Vec::new(),
        }
    }
}

impl Shared {
    /// The bot's `User` object.
    pub fn bot_user(&self) -> Value {
        json!({
            "id": self.config.bot_id,
            "is_bot": true,
            "first_name": self.config.bot_first_name,
            "username": self.config.bot_username,
        })
    }
}

impl Inner {
    fn take_update_id(&mut self, explicit: Option<i64>) -> i64 {
        let id = explicit.unwrap_or(self.next_update_id);
        self.next_update_id = self.next_update_id.max(id.saturating_add(1));
        id
    }

    pub fn take_message_id(&mut self) -> i64 {
        let id = self.next_message_id;
        self.next_message_id += 1;
        id
    }

    fn queue_update(&mut self, update_id: i64, update: Value) {
        self.history.insert(update_id, update.clone());
        self.queue.push((update_id, update));
    }

    /// Remembers a message (injected or sent) for later `reply_to_message`.
    pub fn remember_message(&mut self, message: &Value) {
        if let (Some(chat_id), Some(message_id)) = (
            message.pointer("/chat/id").and_then(Value::as_i64),
            message.get("message_id").and_then(Value::as_i64),
        ) {
            let mut stored = message.clone();
            if let Some(object) = stored.as_object_mut() {
                object.remove("reply_to_message");
            }
            self.messages.insert((chat_id, message_id), stored);
        }
    }

    /// A message injected or sent in `chat_id`, by id.
    pub fn message(&self, chat_id: i64, message_id: i64) -> Option<&Value> {
        self.messages.get(&(chat_id, message_id))
    }

    /// A message's stored form, to change it (an edit).
    pub fn message_mut(&mut self, chat_id: i64, message_id: i64) -> Option<&mut Value> {
        self.messages.get_mut(&(chat_id, message_id))
    }

    /// Forgets a deleted message; `false` when there was none.
    pub fn forget_message(&mut self, chat_id: i64, message_id: i64) -> bool {
        self.messages.remove(&(chat_id, message_id)).is_some()
    }

    /// The `reply_to_message` for a reply to `message_id` in `chat`.
    pub fn replied_message(&self, chat: &Value, message_id: i64) -> Value {
        let chat_id = chat.get("id").and_then(Value::as_i64).unwrap_or_default();
        self.messages
            .get(&(chat_id, message_id))
            .cloned()
            .unwrap_or_else(|| json!({"message_id": message_id, "chat": chat, "date": now()}))
    }

    /// The `Chat` object for `chat_id`: the one from injected messages, else a guess.
    pub fn chat(&self, chat_id: i64) -> Value {
        if let Some(chat) = self.chats.get(&chat_id) {
            return chat.clone();
        }
        match ChatType::guess(chat_id) {
            ChatType::Private => {
                json!({"id": chat_id, "type": "private", "first_name": "Test User"})
            }
            kind => json!({"id": chat_id, "type": kind.as_str(), "title": "Test Group"}),
        }
    }

    pub fn inject_message(&mut self, message: InjectMessage) -> (i64, i64) {
        let update_id = self.take_update_id(None);
        let message_id = self.take_message_id();
        let chat = message.chat_json();
        self.chats.insert(message.chat_id, chat.clone());
        let mut json = json!({
            "message_id": message_id,
            "from": message.sender_json(),
            "chat": chat,
            "date": message.date.unwrap_or_else(now),
        });
        let has_media = message.document.is_some() || message.photo.is_some();
        let entities = message
            .entities
            .clone()
            .unwrap_or_else(|| detect_entities(&message.text));
        let (text_key, entities_key) = if has_media {
            ("caption", "caption_entities")
        } else {
            ("text", "entities")
        };
        if !(has_media && message.text.is_empty()) {
            json[text_key] = json!(message.text);
        }
        if !entities.is_empty() {
            json[entities_key] = Value::Array(entities);
        }
        if let Some(thread_id) = message.message_thread_id {
            json["message_thread_id"] = json!(thread_id);
        }
        if message.is_topic_message {
            json["is_topic_message"] = json!(true);
        }
        if let Some(reply_id) = message.reply_to_message_id {
            json["reply_to_message"] = self.replied_message(&json["chat"], reply_id);
        }
        if let Some(file) = &message.document {
            json["document"] = json!({
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_name": file.file_name,
                "mime_type": file.mime_type,
                "file_size": file.file_size,
            });
        }
        if let Some(file) = &message.photo {
            json["photo"] = json!([{
                "file_id": file.file_id,
                "file_unique_id": file.file_unique_id,
                "file_size": file.file_size,
                "width": 800,
                "height": 600,
            }]);
        }
        self.remember_message(&json);
        self.queue_update(update_id, json!({"update_id": update_id, "message": json}));
        (update_id, message_id)
    }

    pub fn inject_raw_update(&mut self, mut update: Value) -> i64 {
        let explicit = update.get("update_id").and_then(Value::as_i64);
        let update_id = self.take_update_id(explicit);
        if explicit.is_none()
            && let Some(object) = update.as_object_mut()
        {
            object.insert("update_id".to_owned(), json!(update_id));
        }
        if let Some(message) = update.get("message") {
            let message = message.clone();
            self.remember_message(&message);
        }
        self.queue_update(update_id, update);
        update_id
    }

    pub fn redeliver(&mut self, update_id: i64) -> bool {
        match self.history.get(&update_id) {
            Some(update) => {
                let update = update.clone();
                self.redeliveries.push_back((update_id, update));
                true
            }
            None => false,
        }
    }

    /// Confirms updates the way an `offset` does: positive drops every update below it,
    /// negative keeps only the last `-offset` ones.
    pub fn confirm(&mut self, offset: i64) {
        if offset > 0 {
            self.queue.retain(|(id, _)| *id >= offset);
        } else if offset < 0 {
            self.queue.sort_by_key(|(id, _)| *id);
            let keep = usize::try_from(offset.unsigned_abs()).unwrap_or(usize::MAX);
            let skip = self.queue.len().saturating_sub(keep);
            self.queue.drain(..skip);
        }
    }

    /// The updates a `getUpdates` answers now (redeliveries first, then queued updates at or
    /// above `offset`, ascending), or `None` when there are none. Redeliveries are consumed.
    pub fn take_updates(&mut self, offset: i64, limit: usize) -> Option<Vec<Value>> {
        let mut result: Vec<Value> = Vec::new();
        while result.len() < limit {
            let Some((_, update)) = self.redeliveries.pop_front() else {
                break;
            };
            result.push(update);
        }
        let mut queued: Vec<&(i64, Value)> =
            self.queue.iter().filter(|(id, _)| *id >= offset).collect();
        queued.sort_by_key(|(id, _)| *id);
        let room = limit.saturating_sub(result.len());
        result.extend(
            queued
                .into_iter()
                .take(room)
                .map(|(_, update)| update.clone()),
        );
        (!result.is_empty()).then_some(result)
    }

    pub fn register_file(&mut self, bytes: Bytes, file_name: &str, photo: bool) -> RegisteredFile {
        let n = self.next_file;
        self.next_file += 1;
        let extension = file_name
            .rsplit_once('.')
            .map(|(_, ext)| format!(".{ext}"))
            .unwrap_or_default();
        let mime_type = mime_for(file_name);
        let folder = if photo || mime_type.starts_with("image/") {
            "photos"
        } else {
            "documents"
        };
        let info = RegisteredFile {
            file_id: format!("FAKEFILE{n:06}"),
            file_unique_id: format!("FAKEUNIQ{n:06}"),
            file_name: file_name.to_owned(),
            file_size: bytes.len() as u64,
            file_path: format!("{folder}/file_{n}{extension}"),
            mime_type: mime_type.to_owned(),
        };
        self.files.insert(
            info.file_id.clone(),
            StoredFile {
                info: info.clone(),
                bytes,
            },
        );
        info
    }

    pub fn file(&self, file_id: &str) -> Option<&StoredFile> {
        self.files.get(file_id)
    }

    pub fn file_by_path(&self, file_path: &str) -> Option<&StoredFile> {
        self.files
            .values()
            .find(|file| file.info.file_path == file_path)
    }

    pub fn push_failure(&mut self, method: &str, failure: Failure) {
        self.failures
            .entry(method.to_ascii_lowercase())
            .or_default()
            .push_back(failure);
    }

    pub fn take_failure(&mut self, method: &str) -> Option<Failure> {
        self.failures
            .get_mut(&method.to_ascii_lowercase())?
            .pop_front()
    }

    pub fn add_drops(&mut self, method: &str, count: u32) {
        *self.drops.entry(method.to_ascii_lowercase()).or_default() += count;
    }

    /// Whether this call of `method` must be dropped (consumes one).
    pub fn take_drop(&mut self, method: &str) -> bool {
        match self.drops.get_mut(&method.to_ascii_lowercase()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                true
            }
            _ => false,
        }
    }

    pub fn clear_records(&mut self) {
        self.calls.clear();
        self.sent_messages.clear();
        self.chat_actions.clear();
        self.sent_files.clear();
        self.get_updates_offsets.clear();
        self.edited_messages.clear();
        self.reactions.clear();
        self.deleted_messages.clear();
    }
}
