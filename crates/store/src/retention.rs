//! Retention of sessions, as OpenClaw's `session.maintenance {mode, pruneAfter, maxEntries}`:
//! which index entries are too old or too many, and which leftover files may go.
//!
//! [`SessionStore::prune`] picks every index entry not updated within `pruneAfter`, then,
//! of the rest, every entry beyond the `maxEntries` most recently updated. A key the caller
//! names as active is never picked: it takes its place in the ranking like any other, so
//! active sessions ranked beyond the limit keep the index above it. In `warn` mode nothing
//! changes and the report says what would go. In `enforce`
//! mode the picked entries leave the index and their transcripts are moved aside as
//! `<id>.jsonl.deleted.<ts>` — pruning a session deletes nothing. Files are deleted only
//! when they are archives older than `pruneAfter`: reset and deleted transcripts, torn
//! tails and temp files a crashed atomic write left; transcripts no index entry refers to
//! (orphans, e.g. after a crash mid-archive) are moved aside once older than `pruneAfter`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::rebuild::RebuildReport;
use crate::sessions::SessionStore;

/// Moved to pincer-base; kept here for callers that name it through the store.
pub use pincer_base::duration::parse_duration;

/// What [`SessionStore::prune`] does with what it picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetentionMode {
    /// Report only (OpenClaw's default).
    #[default]
    Warn,
    /// Prune the index and move or delete files.
    Enforce,
}

/// When sessions and archives are pruned. `None` turns a limit off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionPolicy {
    pub mode: RetentionMode,
    /// Entries not updated for this long are pruned; archives older than this are deleted.
    pub prune_after: Option<Duration>,
    /// At most this many entries are kept (the most recently updated), active ones aside.
    pub max_entries: Option<usize>,
}

impl Default for RetentionPolicy {
    /// OpenClaw's defaults: `{mode: "warn", pruneAfter: "30d", maxEntries: 500}`.
    fn default() -> Self {
        Self {
            mode: RetentionMode::Warn,
            prune_after: Some(Duration::from_secs(30 * 86_400)),
            max_entries: Some(500),
        }
    }
}

/// Why a session was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneReason {
    /// Not updated within `pruneAfter`.
    Stale,
    /// Beyond the `maxEntries` most recently updated.
    OverLimit,
}

/// A session pruned (or, in warn mode, that would be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrunedSession {
    pub key: String,
    pub session_id: String,
    /// Its `updatedAt`.
    pub updated_at: i64,
    pub reason: PruneReason,
    /// Where its transcript was moved (enforce mode, when it had one).
    pub archived_to: Option<PathBuf>,
}

/// A transcript no index entry refers to, older than `pruneAfter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanTranscript {
    pub path: PathBuf,
    /// Where it was moved (enforce mode).
    pub archived_to: Option<PathBuf>,
}

/// What [`SessionStore::prune`] did, or in warn mode would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneReport {
    pub mode: RetentionMode,
    /// Sessions removed from the index, by key.
    pub sessions: Vec<PrunedSession>,
    /// Orphan transcripts moved aside, by path.
    pub orphans: Vec<OrphanTranscript>,
    /// Archive files deleted, by path.
    pub deleted_archives: Vec<PathBuf>,
    /// Set when the index was corrupt and had to be rebuilt first.
    pub rebuilt: Option<RebuildReport>,
}

impl PruneReport {
    /// True when nothing was (or would be) pruned.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.orphans.is_empty() && self.deleted_archives.is_empty()
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl SessionStore {
    /// Applies `policy` at time `now_ms` (milliseconds since the epoch), never touching the
    /// sessions of `active_keys`. Holds the index lock throughout. See the module docs.
    pub fn prune(
        &self,
        policy: &RetentionPolicy,
        active_keys: &[&str],
        now_ms: i64,
    ) -> Result<PruneReport> {
        let lock = self.lock()?;
        let (mut index, rebuilt) = self.load_index_locked(&lock)?;
        let cutoff = policy.prune_after.map(|d| now_ms.saturating_sub(millis(d)));
        let active: HashSet<&str> = active_keys.iter().copied().collect();

        let mut sessions = Vec::new();
        let mut survivors = Vec::new();
        for (key, entry) in &index.sessions {
            let stale = cutoff.is_some_and(|c| entry.updated_at < c);
            if stale && !active.contains(key.as_str()) {
                sessions.push((key, entry, PruneReason::Stale));
            } else {
                survivors.push((key, entry));
            }
        }
        if let Some(max) = policy.max_entries {
            survivors.sort_by(|(ka, a), (kb, b)| {
                b.updated_at.cmp(&a.updated_at).then_with(|| ka.cmp(kb))
            });
            for (i, (key, entry)) in survivors.into_iter().enumerate() {
                if i >= max && !active.contains(key.as_str()) {
                    sessions.push((key, entry, PruneReason::OverLimit));
                }
            }
        }
        let mut sessions: Vec<PrunedSession> = sessions
            .into_iter()
            .map(|(key, entry, reason)| PrunedSession {
                key: key.clone(),
                session_id: entry.session_id.clone(),
                updated_at: entry.updated_at,
                reason,
                archived_to: None,
            })
            .collect();
        sessions.sort_by(|a, b| a.key.cmp(&b.key));

        let (mut orphans, deleted_archives) = match cutoff {
            Some(cutoff) => {
                let indexed: HashSet<&str> = index
                    .sessions
                    .values()
                    .map(|e| e.session_id.as_str())
                    .collect();
                self.old_leftovers(&indexed, cutoff)?
            }
            None => (Vec::new(), Vec::new()),
        };

        if policy.mode == RetentionMode::Enforce && !sessions.is_empty() {
            for s in &sessions {
                index.remove(&s.key);
            }
            // The index first: a crash after it leaves orphans, archived next time.
            self.save_index(&lock, index, true)?;
        } else {
            self.keep_index(&lock, index);
        }
        if policy.mode == RetentionMode::Enforce {
            for s in &mut sessions {
                s.archived_to = self.move_transcript_aside(&s.session_id)?;
            }
            for o in &mut orphans {
                o.archived_to = crate::archive::move_aside(&o.path, "deleted")?;
            }
            for path in &deleted_archives {
                match std::fs::remove_file(path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(StoreError::io(path, e)),
                }
            }
        }
        let report = PruneReport {
            mode: policy.mode,
            sessions,
            orphans,
            deleted_archives,
            rebuilt,
        };
        if !report.is_empty() {
            let (sessions, orphans, archives) = (
                report.sessions.len(),
                report.orphans.len(),
                report.deleted_archives.len(),
            );
            match policy.mode {
                RetentionMode::Warn => tracing::warn!(
                    root = %self.root().display(), sessions, orphans, archives,
                    "session maintenance (warn mode) would prune these; set mode to enforce to prune"
                ),
                RetentionMode::Enforce => tracing::info!(
                    root = %self.root().display(), sessions, orphans, archives,
                    "session maintenance pruned sessions and old archives"
                ),
            }
        }
        Ok(report)
    }

    /// Transcripts not in `indexed` and archives, both older than `cutoff`.
    fn old_leftovers(
        &self,
        indexed: &HashSet<&str>,
        cutoff: i64,
    ) -> Result<(Vec<OrphanTranscript>, Vec<PathBuf>)> {
        let root = self.root();
        let mut orphans = Vec::new();
        let mut archives = Vec::new();
        for item in crate::archive::dir_entries(root)? {
            let Ok(meta) = item.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let name = item.file_name().to_string_lossy().into_owned();
            if let Some(kind) = crate::archive::archive_kind(&name) {
                if crate::archive::archived_at(&name, kind, &meta).is_some_and(|t| t < cutoff) {
                    archives.push(item.path());
                }
            } else if let Some(id) = name.strip_suffix(".jsonl")
                && !id.is_empty()
                && !name.starts_with('.')
                && !indexed.contains(id)
                && crate::archive::modified_ms(&meta).is_some_and(|t| t < cutoff)
            {
                orphans.push(OrphanTranscript {
                    path: item.path(),
                    archived_to: None,
                });
            }
        }
        orphans.sort_by(|a, b| a.path.cmp(&b.path));
        archives.sort();
        Ok((orphans, archives))
    }
}
