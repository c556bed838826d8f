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

fn v1() -> u32 {
    1
}

/// The first line of a transcript: `{"type":"session","version":3,"id","timestamp","cwd",
/// "parentSession"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "session", rename_all = "camelCase")]
pub struct SessionHeader {
    /// Format version; files without one are version 1.
    #[serde(default = "v1")]
    pub version: u32,
    pub id: String,
    /// ISO-8601 creation time.
    pub timestamp: String,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
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
        }
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// `branch_summary{fromId, summary, details?, fromHook?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryEntry {
    pub from_id: String,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_hook: Option<bool>,
}

/// `custom{customType, data?}`: extension state, never in the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomEntry {
    pub custom_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// `custom_message{customType, content, details?, display}`: enters the context as a user
/// message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageEntry {
    pub custom_type: String,
    pub content: UserContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub display: bool,
}

/// `label{targetId, label?}`: a bookmark on an entry; no label clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelEntry {
    pub target_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// `session_info{name?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfoEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        let body = parse_body(&kind, &map).unwrap_or(EntryBody::Unknown { kind, fields: map });
        Ok(Entry {
            id,
            parent_id,
            timestamp,
            body,
        })
    }
}

fn parse_body(kind: &str, map: &Map<String, Value>) -> Option<EntryBody> {
    fn from<T: serde::de::DeserializeOwned>(map: &Map<String, Value>) -> Option<T> {
        serde_json::from_value(Value::Object(map.clone())).ok()
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
