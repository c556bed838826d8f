//! Rebuilding a corrupt `sessions.json` from the transcripts beside it.
//!
//! An index that does not parse (a crash of a writer that was not atomic, a disk error, a
//! hand edit) is never treated as empty: that would silently start every conversation
//! afresh. Instead its bytes are kept as `sessions.json.corrupt.<ts>` and a new index is
//! made from every `<id>.jsonl` in the directory (archives are not read):
//!
//! - the key is the header's `sessionKey`; when several transcripts claim one key, the one
//!   whose last entry is newest keeps it and the others are indexed as
//!   `recovered:<sessionId>`, as are transcripts without a key — nothing is dropped;
//! - `createdAt` is the header's timestamp (else the file's modification time), `updatedAt`
//!   the last readable entry's timestamp (else `createdAt`);
//! - settings the old index held (levels, model, labels, tokens) are lost from the index
//!   but still in the corrupt copy.
//!
//! Transcripts are only read here, never repaired or migrated. The rebuild is logged with
//! `tracing::warn!` and returned as a [`RebuildReport`] to the caller.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::entry::Entry;
use crate::error::{Result, StoreError};
use crate::index::{SessionEntry, SessionIndex};
use crate::sessions::{IndexLock, SessionStore};

/// The key prefix of sessions whose transcript names no key (or lost its key to a newer
/// transcript) in a rebuilt index: `recovered:<sessionId>`.
pub const RECOVERED_KEY_PREFIX: &str = "recovered:";

/// What a rebuild of a corrupt `sessions.json` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildReport {
    /// Where the corrupt index's bytes were kept (`sessions.json.corrupt.<ts>`).
    pub corrupt_copy: PathBuf,
    /// Why the index could not be read.
    pub error: String,
    /// The sessions of the new index, by key.
    pub sessions: Vec<RebuiltSession>,
    /// Transcripts that could not be read (left where they are, not indexed).
    pub unreadable: Vec<UnreadableTranscript>,
}

/// One session of a rebuilt index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuiltSession {
    /// The key it is indexed under.
    pub key: String,
    pub session_id: String,
    /// The key its header claims, when it has one (differs from `key` when a newer
    /// transcript claimed the same key).
    pub claimed_key: Option<String>,
}

/// A transcript a rebuild could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableTranscript {
    pub path: PathBuf,
    pub error: String,
}

/// What a rebuild needs from one transcript.
struct Found {
    session_id: String,
    claimed_key: Option<String>,
    created_at: i64,
    updated_at: i64,
}

impl SessionStore {
    /// Loads the index; when `sessions.json` is corrupt, rebuilds it from the transcripts
    /// (keeping the corrupt file) and says so. A missing index is an empty one; other I/O
    /// errors are errors.
    pub fn index_or_rebuild(&self) -> Result<(SessionIndex, Option<RebuildReport>)> {
        self.read_index_or_rebuild()
    }

    /// [`SessionStore::index_or_rebuild`] for a caller that holds the index lock.
    pub(crate) fn load_index_locked(
        &self,
        lock: &IndexLock,
    ) -> Result<(SessionIndex, Option<RebuildReport>)> {
        match self.load_cached_locked(lock) {
            Ok(index) => Ok((index, None)),
            Err(StoreError::Json { source, .. }) => {
                let (index, report) = self.rebuild_index(lock, source.to_string())?;
                Ok((index, Some(report)))
            }
            Err(e) => Err(e),
        }
    }

    fn rebuild_index(
        &self,
        lock: &IndexLock,
        error: String,
    ) -> Result<(SessionIndex, RebuildReport)> {
        let index_path = self.index_path();
        let corrupt = std::fs::read(&index_path).map_err(|e| StoreError::io(&index_path, e))?;
        let corrupt_copy = crate::archive::stamped_path(self.root(), "sessions.json", "corrupt");
        // Copy first, then replace atomically: a crash in between leaves the corrupt index
        // in place to be rebuilt again, never a missing one that would read as empty.
        crate::atomic::write_atomic(&corrupt_copy, &corrupt, Some(0o600))?;

        let (found, unreadable) = scan_transcripts(self.root())?;
        let mut index = SessionIndex {
            path: index_path,
            sessions: BTreeMap::new(),
        };
        let mut sessions = Vec::new();
        // Newest first, so the first transcript to claim a key keeps it.
        let mut order: Vec<&Found> = found.iter().collect();
        order.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        let mut losers = Vec::new();
        for f in order {
            match &f.claimed_key {
                Some(key) if !index.sessions.contains_key(key) => {
                    index.insert(key.clone(), entry_of(f));
                    sessions.push(RebuiltSession {
                        key: key.clone(),
                        session_id: f.session_id.clone(),
                        claimed_key: Some(key.clone()),
                    });
                }
                _ => losers.push(f),
            }
        }
        for f in losers {
            let key = free_key(&index, &f.session_id);
            index.insert(key.clone(), entry_of(f));
            sessions.push(RebuiltSession {
                key,
                session_id: f.session_id.clone(),
                claimed_key: f.claimed_key.clone(),
            });
        }
        sessions.sort_by(|a, b| a.key.cmp(&b.key));
        self.save_index(lock, index.clone(), true)?;
        tracing::warn!(
            index = %index.path().display(),
            corrupt_copy = %corrupt_copy.display(),
            %error,
            sessions = sessions.len(),
            unreadable = unreadable.len(),
            "sessions.json was corrupt; rebuilt it from the transcripts"
        );
        Ok((
            index,
            RebuildReport {
                corrupt_copy,
                error,
                sessions,
                unreadable,
            },
        ))
    }
}

fn entry_of(f: &Found) -> SessionEntry {
    SessionEntry {
        session_id: f.session_id.clone(),
        created_at: f.created_at,
        updated_at: f.updated_at,
        ..SessionEntry::default()
    }
}

/// `recovered:<id>`, or with a counter in the unlikely case that key is taken.
fn free_key(index: &SessionIndex, session_id: &str) -> String {
    let plain = format!("{RECOVERED_KEY_PREFIX}{session_id}");
    if !index.sessions.contains_key(&plain) {
        return plain;
    }
    (2u32..)
        .map(|n| format!("{plain}:{n}"))
        .find(|k| !index.sessions.contains_key(k))
        .unwrap_or(plain)
}

/// Every `<id>.jsonl` in `dir` (not archives, not hidden files), read or reported.
fn scan_transcripts(dir: &Path) -> Result<(Vec<Found>, Vec<UnreadableTranscript>)> {
    let mut found = Vec::new();
    let mut unreadable = Vec::new();
    for item in crate::archive::dir_entries(dir)? {
        let name = item.file_name().to_string_lossy().into_owned();
        let Some(session_id) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if session_id.is_empty() || name.starts_with('.') {
            continue;
        }
        if !item.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = item.path();
        match read_transcript(&path, session_id) {
            Ok(f) => found.push(f),
            Err(e) => unreadable.push(UnreadableTranscript {
                path,
                error: e.to_string(),
            }),
        }
    }
    unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((found, unreadable))
}

/// The key, creation and last-update times of one transcript, read without changing it.
fn read_transcript(path: &Path, session_id: &str) -> Result<Found> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
    let (header, body_start) = crate::transcript::parse_header(path, &bytes)?;
    let created_at = crate::ids::ms_from_iso(&header.timestamp)
        .or_else(|| {
            std::fs::metadata(path)
                .ok()
                .and_then(|m| crate::archive::modified_ms(&m))
        })
        .unwrap_or(0);
    // The last line that reads as an entry; a torn tail is skipped.
    let updated_at = bytes[body_start..]
        .rsplit(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .find_map(|line| {
            let entry: Entry = serde_json::from_slice(line).ok()?;
            crate::ids::ms_from_iso(&entry.timestamp)
        })
        .unwrap_or(created_at);
    Ok(Found {
        // The file name, not the header's id: the index finds transcripts by file name.
        session_id: session_id.to_owned(),
        claimed_key: header.session_key,
        created_at,
        updated_at,
    })
}
