//! The session store of one agent (`agents/<agentId>/sessions/`): the index plus one
//! transcript per session, and the lifecycle create → resume → reset → patch.
//!
//! Index read-modify-write cycles hold an exclusive lock on `sessions.json.lock`, so two
//! processes never lose each other's updates. Nothing here resets a session implicitly: a
//! missing transcript of an indexed session is recreated under the same sessionId.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::entry::SessionHeader;
use crate::error::{Result, StoreError};
use crate::index::{SessionEntry, SessionIndex};
use crate::transcript::{LoadReport, Transcript};

/// A session ready for use.
#[derive(Debug)]
pub struct OpenSession {
    pub key: String,
    pub entry: SessionEntry,
    pub transcript: Transcript,
    pub report: LoadReport,
    /// True when this call created the session.
    pub created: bool,
}

/// The sessions of one agent.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    cwd: String,
}

struct IndexLock(File);

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl SessionStore {
    /// A store rooted at `root` (`agents/<agentId>/sessions`); headers record the process's
    /// current directory as `cwd`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let cwd = std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self {
            root: root.into(),
            cwd,
        }
    }

    /// Sets the `cwd` recorded in new transcript headers.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = cwd.into();
        self
    }

    /// The directory of this store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `sessions.json`.
    pub fn index_path(&self) -> PathBuf {
        self.root.join("sessions.json")
    }

    /// `<sessionId>.jsonl`.
    pub fn transcript_path(&self, session_id: &str) -> PathBuf {
        self.root.join(format!("{session_id}.jsonl"))
    }

    /// Loads the index (read only; no lock).
    pub fn index(&self) -> Result<SessionIndex> {
        SessionIndex::load(self.index_path())
    }

    fn lock(&self) -> Result<IndexLock> {
        std::fs::create_dir_all(&self.root).map_err(|e| StoreError::io(&self.root, e))?;
        let path = self.root.join("sessions.json.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        file.lock().map_err(|e| StoreError::io(&path, e))?;
        Ok(IndexLock(file))
    }

    /// Opens the session of `key`, creating it (new sessionId, index entry, transcript) if
    /// the key is not indexed yet.
    pub fn get_or_create(&self, key: &str) -> Result<OpenSession> {
        let _lock = self.lock()?;
        let mut index = self.index()?;
        match index.get(key).cloned() {
            Some(entry) => self.open_entry(key, entry, false),
            None => {
                let entry = SessionEntry::new(crate::ids::session_id());
                let session = self.open_entry(key, entry, true)?;
                index.insert(key, session.entry.clone());
                index.save()?;
                Ok(session)
            }
        }
    }

    /// Opens the existing session of `key`; an error if there is none.
    pub fn resume(&self, key: &str) -> Result<OpenSession> {
        let entry = self
            .index()?
            .get(key)
            .cloned()
            .ok_or_else(|| StoreError::UnknownSession {
                key: key.to_owned(),
            })?;
        self.open_entry(key, entry, false)
    }

    /// Starts a new session under `key` (`/new`, `/reset`): a new sessionId and transcript;
    /// the old transcript is kept, renamed `<id>.jsonl.reset.<ts>`. Per-session settings
    /// (levels, model, policies, label, routing) carry over; token counts and the
    /// compaction count start again.
    pub fn reset(&self, key: &str) -> Result<OpenSession> {
        let _lock = self.lock()?;
        let mut index = self.index()?;
        let mut entry = SessionEntry::new(crate::ids::session_id());
        if let Some(old) = index.get(key) {
            let old_path = self.transcript_path(&old.session_id);
            if old_path.exists() {
                let ts = crate::ids::iso_now().replace(':', "-");
                let kept = self
                    .root
                    .join(format!("{}.jsonl.reset.{ts}", old.session_id));
                std::fs::rename(&old_path, &kept).map_err(|e| StoreError::io(&old_path, e))?;
                crate::atomic::sync_dir(&self.root)?;
            }
            entry = SessionEntry {
                session_id: entry.session_id,
                created_at: entry.created_at,
                updated_at: entry.updated_at,
                input_tokens: None,
                output_tokens: None,
                total_tokens: None,
                compaction_count: 0,
                ..old.clone()
            };
        }
        let session = self.open_entry(key, entry, true)?;
        index.insert(key, session.entry.clone());
        index.save()?;
        Ok(session)
    }

    /// Patches the index entry of `key` (see [`SessionIndex::patch`]) and saves it.
    pub fn patch(&self, key: &str, patch: &Value) -> Result<SessionEntry> {
        let _lock = self.lock()?;
        let mut index = self.index()?;
        let entry = index.patch(key, patch)?.clone();
        index.save()?;
        Ok(entry)
    }

    fn open_entry(&self, key: &str, entry: SessionEntry, created: bool) -> Result<OpenSession> {
        let path = self.transcript_path(&entry.session_id);
        let (transcript, report) = if path.exists() {
            Transcript::open(path)?
        } else {
            if !created {
                tracing::warn!(key, session_id = %entry.session_id, "transcript missing; recreating it under the same id");
            }
            let header = SessionHeader::new(entry.session_id.clone(), self.cwd.clone());
            (Transcript::create(path, header)?, LoadReport::default())
        };
        Ok(OpenSession {
            key: key.to_owned(),
            entry,
            transcript,
            report,
            created,
        })
    }
}
