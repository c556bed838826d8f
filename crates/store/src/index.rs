//! The per-agent session index, `sessions.json`: a JSON object mapping each sessionKey to a
//! [`SessionEntry`] (OpenClaw's shape, camelCase). A missing file is an empty index; a
//! corrupt one is an error naming the file, never silently treated as empty (the session
//! store rebuilds it from the transcripts: see [`crate::rebuild`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Result, StoreError};

/// One indexed session. Unknown fields are kept, so a newer writer's data survives.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntry {
    pub session_id: String,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verbose_level: Option<String>,
    /// Model override, `provider/model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_policy: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_activation: Option<String>,
    /// Per-session memory (lainclaw's `--memory`): summaries of old messages go to
    /// `memory/<key>.md` in the agent's workspace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_enabled: Option<bool>,
    /// How many of the transcript's messages per-session memory has already summarised
    /// (lainclaw's), so none is summarised twice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compacted_message_count: Option<u64>,
    /// When the last pre-compaction memory flush ran, milliseconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_flush_at: Option<i64>,
    /// The `compactionCount` the last memory flush ran in: one flush per compaction cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_flush_compaction_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    #[serde(default)]
    pub compaction_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_channel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_to: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_account_id: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionEntry {
    /// A fresh entry for `session_id`, created and updated now.
    pub fn new(session_id: impl Into<String>) -> Self {
        let now = crate::ids::now_ms();
        Self {
            session_id: session_id.into(),
            created_at: now,
            updated_at: now,
            ..Self::default()
        }
    }
}

/// `sessions.json` in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionIndex {
    pub(crate) path: PathBuf,
    /// sessionKey -> entry.
    pub sessions: BTreeMap<String, SessionEntry>,
}

impl SessionIndex {
    /// Loads `path`; a missing file gives an empty index, a corrupt one an error.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let sessions = match crate::atomic::read_json(&path) {
            Ok(s) => s,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                BTreeMap::new()
            }
            Err(e) => return Err(e),
        };
        Ok(Self { path, sessions })
    }

    /// Writes the index atomically.
    pub fn save(&self) -> Result<()> {
        self.save_with(true)
    }

    /// Writes the index atomically; fsynced only when `durable`.
    pub(crate) fn save_with(&self, durable: bool) -> Result<()> {
        crate::atomic::write_json_with(&self.path, &self.sessions, Some(0o600), durable)
    }

    /// The file of this index.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry of `key`.
    pub fn get(&self, key: &str) -> Option<&SessionEntry> {
        self.sessions.get(key)
    }

    /// Inserts or replaces the entry of `key`.
    pub fn insert(&mut self, key: impl Into<String>, entry: SessionEntry) {
        self.sessions.insert(key.into(), entry);
    }

    /// The entry of `key`, to change in place; [`StoreError::UnknownSession`] if none.
    pub(crate) fn entry_mut(&mut self, key: &str) -> Result<&mut SessionEntry> {
        self.sessions
            .get_mut(key)
            .ok_or_else(|| StoreError::unknown_session(key))
    }

    /// Removes the entry of `key`.
    pub fn remove(&mut self, key: &str) -> Option<SessionEntry> {
        self.sessions.remove(key)
    }

    /// Merges the JSON object `patch` (camelCase fields) into the entry of `key`: a `null`
    /// clears the field, anything else sets it. `updatedAt` becomes now unless the patch sets
    /// it. Nothing changes if the result is invalid (for example clearing `sessionId`).
    pub fn patch(&mut self, key: &str, patch: &Value) -> Result<&SessionEntry> {
        let bad = |reason: String| StoreError::Patch {
            key: key.to_owned(),
            reason,
        };
        let Value::Object(fields) = patch else {
            return Err(bad("the patch is not a JSON object".into()));
        };
        let entry = self.entry_mut(key)?;
        let mut merged = match serde_json::to_value(&*entry) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(bad("entry is not an object".into())),
            Err(e) => return Err(bad(e.to_string())),
        };
        for (k, v) in fields {
            if v.is_null() {
                merged.remove(k);
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
        let mut next: SessionEntry =
            serde_json::from_value(Value::Object(merged)).map_err(|e| bad(e.to_string()))?;
        if !fields.contains_key("updatedAt") {
            next.updated_at = crate::ids::now_ms();
        }
        *entry = next;
        Ok(entry)
    }
}
