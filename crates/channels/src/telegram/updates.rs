//! Telegram updates as the adapter reads them: the parts of the Bot API's `Update` and
//! `Message` objects it uses, decoded leniently (unknown fields ignored, every field
//! optional that Telegram may leave out), one update at a time so that one malformed update
//! costs only itself — its `update_id` still moves the offset on, so it is never fetched
//! again.

use serde::Deserialize;
use serde_json::Value;

/// What one `getUpdates` result element turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum RawUpdate {
    /// A message (new, not edited) the adapter may take in.
    Message {
        update_id: i64,
        // Boxed: a message is large, and most batches hold a few of them at most.
        message: Box<Message>,
    },
    /// Something else (an edit, a callback, a poll, a member update) or an update that does
    /// not decode: skipped, but its id confirms it.
    Skipped { update_id: i64, why: String },
}

impl RawUpdate {
    pub fn update_id(&self) -> i64 {
        match self {
            Self::Message { update_id, .. } | Self::Skipped { update_id, .. } => *update_id,
        }
    }
}

/// Why a whole `getUpdates` answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("getUpdates answered something that is not a list of updates: {0}")]
pub struct UpdatesError(pub String);

/// Decodes `getUpdates`' `result`. Elements without an integer `update_id` cannot be
/// confirmed and are dropped (logged by the caller through the count).
pub fn decode_updates(result: &Value) -> Result<Vec<RawUpdate>, UpdatesError> {
    let Some(items) = result.as_array() else {
        return Err(UpdatesError(kind_of(result).to_owned()));
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Some(update_id) = item.get("update_id").and_then(Value::as_i64) else {
            continue;
        };
        let Some(message) = item.get("message") else {
            let kind = item
                .as_object()
                .and_then(|o| o.keys().find(|k| *k != "update_id").cloned())
                .unwrap_or_else(|| "empty".into());
            out.push(RawUpdate::Skipped {
                update_id,
                why: format!("{kind} updates are not handled"),
            });
            continue;
        };
        match Message::deserialize(message) {
            Ok(message) => out.push(RawUpdate::Message {
                update_id,
                message: Box::new(message),
            }),
            Err(e) => out.push(RawUpdate::Skipped {
                update_id,
                why: format!("malformed message: {e}"),
            }),
        }
    }
    Ok(out)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub message_id: i64,
    pub chat: Chat,
    pub from: Option<User>,
    pub text: Option<String>,
    pub caption: Option<String>,
    #[serde(default)]
    pub entities: Vec<Entity>,
    #[serde(default)]
    pub caption_entities: Vec<Entity>,
    pub message_thread_id: Option<i64>,
    #[serde(default)]
    pub is_topic_message: bool,
    pub reply_to_message: Option<Box<ReplyTo>>,
    pub document: Option<FileRef>,
    /// Sizes of one photo, smallest first.
    #[serde(default)]
    pub photo: Vec<FileRef>,
    pub voice: Option<FileRef>,
    pub audio: Option<FileRef>,
    pub video: Option<FileRef>,
}

/// The replied-to message: only who wrote it matters (a reply to the bot counts as a
/// mention in groups).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReplyTo {
    pub from: Option<User>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Chat {
    pub id: i64,
    /// `private`, `group`, `supergroup` or `channel`.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub is_forum: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct User {
    pub id: i64,
    #[serde(default)]
    pub is_bot: bool,
    #[serde(default)]
    pub first_name: String,
    pub last_name: Option<String>,
    pub username: Option<String>,
}

impl User {
    pub fn display_name(&self) -> String {
        match &self.last_name {
            Some(last) => format!("{} {last}", self.first_name),
            None => self.first_name.clone(),
        }
    }
}

/// A `MessageEntity`: offsets and lengths in UTF-16 code units, as Telegram counts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entity {
    #[serde(rename = "type")]
    pub kind: String,
    pub offset: usize,
    pub length: usize,
    pub user: Option<User>,
}

/// A document, photo size, voice, audio or video.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FileRef {
    pub file_id: String,
    pub file_size: Option<u64>,
    pub file_name: Option<String>,
    pub mime_type: Option<String>,
}

/// `getFile`'s answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TelegramFile {
    pub file_path: Option<String>,
    pub file_size: Option<u64>,
}

/// `getMe`'s answer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Me {
    pub id: i64,
    pub username: Option<String>,
}

/// The text of `text` covered by a UTF-16 range (`None` when the range is out of bounds or
/// splits a surrogate pair).
pub fn utf16_slice(text: &str, offset: usize, length: usize) -> Option<String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let end = offset.checked_add(length)?;
    let slice = units.get(offset..end)?;
    String::from_utf16(slice).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_bad_update_costs_only_itself() {
        let result = json!([
            {"update_id": 5, "message": {"message_id": 1, "chat": {"id": 9, "type": "private"}, "text": "hi"}},
            {"update_id": 6, "message": {"chat": "nonsense"}},
            {"update_id": 7, "edited_message": {}},
            {"no_id": true},
            {"update_id": 8, "message": {"message_id": 2, "chat": {"id": 9, "type": "private"}, "sticker": {}}},
        ]);
        let updates = decode_updates(&result).unwrap();
        let ids: Vec<i64> = updates.iter().map(RawUpdate::update_id).collect();
        assert_eq!(ids, [5, 6, 7, 8]);
        assert!(
            matches!(&updates[0], RawUpdate::Message { message, .. } if message.text.as_deref() == Some("hi"))
        );
        assert!(
            matches!(&updates[1], RawUpdate::Skipped { why, .. } if why.starts_with("malformed message"))
        );
        assert_eq!(
            updates[2],
            RawUpdate::Skipped {
                update_id: 7,
                why: "edited_message updates are not handled".into()
            }
        );
        assert!(
            matches!(&updates[3], RawUpdate::Message { message, .. } if message.text.is_none())
        );
        assert_eq!(
            decode_updates(&json!({"a": 1})),
            Err(UpdatesError("an object".into()))
        );
    }

    #[test]
    fn utf16_ranges() {
        let text = "😀 hi @bot";
        // The emoji is two UTF-16 units.
        assert_eq!(utf16_slice(text, 6, 4).as_deref(), Some("@bot"));
        assert_eq!(utf16_slice(text, 1, 2), None);
        assert_eq!(utf16_slice(text, 8, 10), None);
        assert_eq!(utf16_slice(text, usize::MAX, 2), None);
    }
}
