//! pi's session JSONL entries, format version 3: the `session` header line and the tree
//! entries (`{type, id, parentId, timestamp, …}`) with pi's exact field names.
//!
//! An entry of an unknown `type`, or of a known type whose fields this crate cannot read
//! (for example a pi-only message role), is kept as [`EntryBody::Unknown`] with its raw JSON,
//! never dropped; it takes part in the tree but not in the context.

use pincer_ai::{Message, UserContent};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The session format version this crate writes.
pub const CURRENT_VERSION: u32 = 3;

/// The first line of a transcript: `{"type":"session","version":3,"id","timestamp","cwd",
/// "parentSession"?, "sessionKey"?, …}`.
///
/// `sessionKey` is Pincer's addition (pi ignores header fields it does not know): the index
/// key the session was created under, so a lost `sessions.json` can be rebuilt from the
/// transcripts. Any other field is kept in `extra` and written back, so a header written
/// by a newer pi (or an old v1 one with `provider`/`modelId`) survives a rewrite.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionHeader {
    /// Format version; files without one are version 1.
    pub version: u32,
    pub id: String,
    /// ISO-8601 creation time.
    pub timestamp: String,
    /// The working directory; empty for old sessions that did not record one.
    pub cwd: String,
    pub parent_session: Option<String>,
    /// The index key of this session (`"sessionKey"`), when the writer recorded one. A
    /// `sessionKey` that is not a non-empty string is not read here but kept in `extra`.
    pub session_key: Option<String>,
    /// Fields this version does not know, kept verbatim.
    pub extra: Map<String, Value>,
}

impl SessionHeader {
    /// A version-3 header stamped now.
    pub fn new(id: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self {
            version: CURRENT_VERSION,
            id: id.into(),
            timestamp: crate::ids::iso_now(),
            cwd: cwd.into(),
            parent_session: None,
            session_key: None,
            extra: Map::new(),
        }
    }

    /// This header recording `key` as its session key.
    pub fn with_session_key(mut self, key: impl Into<String>) -> Self {
        self.session_key = Some(key.into());
        self
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeaderOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u32,
    id: &'a str,
    timestamp: &'a str,
    cwd: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_session: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_key: &'a Option<String>,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
}

impl Serialize for SessionHeader {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A known name in `extra` (a caller filled it by hand) would be written twice. An
        // unreadable `sessionKey` lives in `extra` and is written from there.
        let written_twice = |k: &str| {
            HEADER_FIELDS.contains(&k) && (k != "sessionKey" || self.session_key.is_some())
        };
        let extra;
        let extra = if self.extra.keys().any(|k| written_twice(k)) {
            extra = self
                .extra
                .iter()
                .filter(|(k, _)| !written_twice(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            &extra
        } else {
            &self.extra
        };
        HeaderOut {
            kind: "session",
            version: self.version,
            id: &self.id,
            timestamp: &self.timestamp,
            cwd: &self.cwd,
            parent_session: &self.parent_session,
            session_key: &self.session_key,
            extra,
        }
        .serialize(s)
    }
}

/// The header fields this crate reads itself (`sessionKey` too, unless it is unreadable),
/// in the order pi writes them.
pub(crate) const HEADER_FIELDS: &[&str] = &[
    "type",
    "version",
    "id",
    "timestamp",
    "cwd",
    "parentSession",
    "sessionKey",
];

impl<'de> Deserialize<'de> for SessionHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(d)?;
        match map.remove("type") {
            Some(Value::String(t)) if t == "session" => {}
            _ => return Err(D::Error::custom("header `type` is not \"session\"")),
        }
        let version = match map.remove("version") {
            // pi's v1 files have no version.
            None => 1,
            Some(v) => v
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| D::Error::custom("header `version` is not a small whole number"))?,
        };
        let id = match map.remove("id") {
            Some(Value::String(id)) => id,
            _ => return Err(D::Error::custom("header without a string `id`")),
        };
        let timestamp = match map.remove("timestamp") {
            Some(Value::String(t)) => t,
            _ => return Err(D::Error::custom("header without a string `timestamp`")),
        };
        let cwd = match map.remove("cwd") {
            None => String::new(),
            Some(Value::String(c)) => c,
            Some(_) => return Err(D::Error::custom("header `cwd` is not a string")),
        };
        let parent_session = match map.remove("parentSession") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p),
            Some(_) => return Err(D::Error::custom("header `parentSession` is not a string")),
        };
        // Pincer's own field: one that is unusable stays in `extra` rather than making the
        // whole transcript unreadable.
        let session_key = match map.get("sessionKey") {
            Some(Value::String(k)) if !k.is_empty() => {
                let key = k.clone();
                map.remove("sessionKey");
                Some(key)
            }
            _ => None,
        };
        Ok(Self {
            version,
            id,
            timestamp,
            cwd,
            parent_session,
            session_key,
            extra: map,
        })
    }
}

/// One tree entry: `{type, id, parentId, timestamp}` plus the fields of its [`EntryBody`].
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 8 hex chars.
    pub id: String,
    /// The entry this one follows; `None` for a root.
    pub parent_id: Option<String>,
    /// ISO-8601 time of the entry.
    pub timestamp: String,
    pub body: EntryBody,
}

impl Entry {
    /// An entry with a fresh id, stamped now.
    pub fn new(parent_id: Option<String>, body: EntryBody) -> Self {
        Self {
            id: crate::ids::entry_id(),
            parent_id,
            timestamp: crate::ids::iso_now(),
            body,
        }
    }

    /// The `type` tag of this entry.
    pub fn kind(&self) -> &str {
        self.body.kind()
    }
}

/// What an entry holds, by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryBody {
    Message(MessageEntry),
    ModelChange(ModelChangeEntry),
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    Compaction(CompactionEntry),
    BranchSummary(BranchSummaryEntry),
    Custom(CustomEntry),
    CustomMessage(CustomMessageEntry),
    Label(LabelEntry),
    SessionInfo(SessionInfoEntry),
    /// An entry this crate does not understand: its `type` and remaining fields, verbatim.
    Unknown {
        kind: String,
        fields: Map<String, Value>,
    },
}

impl EntryBody {
    /// The `type` tag.
    pub fn kind(&self) -> &str {
        match self {
            Self::Message(_) => "message",
            Self::ModelChange(_) => "model_change",
            Self::ThinkingLevelChange(_) => "thinking_level_change",
            Self::Compaction(_) => "compaction",
            Self::BranchSummary(_) => "branch_summary",
            Self::Custom(_) => "custom",
            Self::CustomMessage(_) => "custom_message",
            Self::Label(_) => "label",
            Self::SessionInfo(_) => "session_info",
            Self::Unknown { kind, .. } => kind,
        }
    }
}

/// `message{message}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageEntry {
    pub message: Message,
}

/// `model_change{provider, modelId}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelChangeEntry {
    pub provider: String,
    pub model_id: String,
}

/// `thinking_level_change{thinkingLevel}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelChangeEntry {
    pub thinking_level: String,
}

/// `compaction{summary, firstKeptEntryId, tokensBefore, details?, fromHook?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// `branch_summary{fromId, summary, details?, fromHook?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    pub from_id: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// `custom{customType, data?}`: extension state, never in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub custom_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `custom_message{customType, content, details?, display}`: enters the context as a user
/// message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    pub custom_type: String,
    pub content: UserContent,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub display: bool,
}

/// `label{targetId, label?}`: a bookmark on an entry; no label clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    pub target_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `session_info{name?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfoEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Out<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: &'a str,
    parent_id: &'a Option<String>,
    timestamp: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn out<'a, T: Serialize, S: Serializer>(
            e: &'a Entry,
            body: &'a T,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            Out {
                kind: e.kind(),
                id: &e.id,
                parent_id: &e.parent_id,
                timestamp: &e.timestamp,
                body,
            }
            .serialize(s)
        }
        match &self.body {
            EntryBody::Message(b) => out(self, b, s),
            EntryBody::ModelChange(b) => out(self, b, s),
            EntryBody::ThinkingLevelChange(b) => out(self, b, s),
            EntryBody::Compaction(b) => out(self, b, s),
            EntryBody::BranchSummary(b) => out(self, b, s),
            EntryBody::Custom(b) => out(self, b, s),
            EntryBody::CustomMessage(b) => out(self, b, s),
            EntryBody::Label(b) => out(self, b, s),
            EntryBody::SessionInfo(b) => out(self, b, s),
            EntryBody::Unknown { fields, .. } => out(self, fields, s),
        }
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(d)?;
        let kind = match map.remove("type") {
            Some(Value::String(k)) => k,
            _ => return Err(D::Error::custom("entry without a string `type`")),
        };
        if kind == "session" {
            return Err(D::Error::custom("a session header is not a tree entry"));
        }
        let id = match map.remove("id") {
            Some(Value::String(id)) => id,
            _ => return Err(D::Error::custom("entry without a string `id`")),
        };
        let parent_id = match map.remove("parentId") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) => Some(p),
            Some(_) => return Err(D::Error::custom("`parentId` is neither a string nor null")),
        };
        let timestamp = match map.remove("timestamp") {
            Some(Value::String(t)) => t,
            _ => return Err(D::Error::custom("entry without a string `timestamp`")),
        };
        // Read from a borrowed value: cloning every entry's fields to try one type would
        // double the cost of opening a long transcript.
        let fields = Value::Object(map);
        let body = match parse_body(&kind, &fields) {
            Some(body) => body,
            None => EntryBody::Unknown {
                kind,
                fields: match fields {
                    Value::Object(map) => map,
                    _ => Map::new(),
                },
            },
        };
        Ok(Entry {
            id,
            parent_id,
            timestamp,
            body,
        })
    }
}

fn parse_body(kind: &str, map: &Value) -> Option<EntryBody> {
    fn from<T: serde::de::DeserializeOwned>(fields: &Value) -> Option<T> {
        T::deserialize(fields).ok()
    }
    Some(match kind {
        "message" => EntryBody::Message(from(map)?),
        "model_change" => EntryBody::ModelChange(from(map)?),
        "thinking_level_change" => EntryBody::ThinkingLevelChange(from(map)?),
        "compaction" => EntryBody::Compaction(from(map)?),
        "branch_summary" => EntryBody::BranchSummary(from(map)?),
        "custom" => EntryBody::Custom(from(map)?),
        "custom_message" => EntryBody::CustomMessage(from(map)?),
        "label" => EntryBody::Label(from(map)?),
        "session_info" => EntryBody::SessionInfo(from(map)?),
        _ => return None,
    })
}

/// The common case read straight from the line's bytes: a `message` entry whose message the
/// model layer understands. Anything else fails here and takes the general path, which
/// gives the same result for every line this accepts.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FastMessageLine {
    #[serde(rename = "type")]
    _kind: MessageTag,
    id: String,
    parent_id: Option<String>,
    timestamp: String,
    message: Message,
}

#[derive(Deserialize)]
enum MessageTag {
    #[serde(rename = "message")]
    Message,
}

/// Parses one transcript line as an entry, as `serde_json::from_slice::<Entry>` does but
/// faster for message entries.
pub(crate) fn parse_line(line: &[u8]) -> serde_json::Result<Entry> {
    if let Ok(fast) = serde_json::from_slice::<FastMessageLine>(line) {
        return Ok(Entry {
            id: fast.id,
            parent_id: fast.parent_id,
            timestamp: fast.timestamp,
            body: EntryBody::Message(MessageEntry {
                message: fast.message,
            }),
        });
    }
    serde_json::from_slice(line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The fast path accepts only what the general path reads the same way.
    #[test]
    fn fast_path_agrees_with_the_general_one() {
        for line in [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","timestamp":"t","message":{"role":"user","content":"hi","timestamp":1},"extra":1}"#,
            r#"{"message":{"role":"user","content":"hi","timestamp":1},"timestamp":"t","parentId":"p","id":"a","type":"message"}"#,
            r#"{"type":"message","type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"x","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","id":"b","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":7,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"bashExecution","command":"ls"}}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"x"}"#,
        ] {
            let general = serde_json::from_str::<Entry>(line).map_err(|e| e.to_string());
            let fast = parse_line(line.as_bytes()).map_err(|e| e.to_string());
            assert_eq!(fast, general, "{line}");
        }
    }
}
