//! The session store of one agent (`agents/<agentId>/sessions/`): the index plus one
//! transcript per session, and the lifecycle create → resume → reset → patch → archive.
//!
//! Index read-modify-write cycles hold an exclusive lock on `sessions.json.lock`, so two
//! processes never lose each other's updates. Nothing here resets a session implicitly: a
//! missing transcript of an indexed session is recreated under the same sessionId, and a
//! corrupt index is rebuilt from the transcripts (see [`crate::rebuild`]), never treated as
//! empty. New transcripts record their session key in the header (`sessionKey`) so that
//! rebuild can find it.
//!
//! A turn runner uses the store like this: [`SessionStore::get_or_create`] →
//! [`Transcript::set_sync_each_append`]`(false)` → [`Transcript::append_message`] for each
//! message as it completes → [`SessionStore::finish_turn`] (fsync, then tokens and routing
//! into the index) — see [`crate::turns`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::entry::SessionHeader;
use crate::error::{Result, StoreError};
use crate::group::{Commit, CommitStats};
use crate::index::{SessionEntry, SessionIndex};
use crate::index_cache::{
    IndexCache, read_generation, version_of, version_unlocked, write_generation,
};
use crate::rebuild::RebuildReport;
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
    /// Set when this call found `sessions.json` corrupt and rebuilt it from the transcripts.
    pub rebuilt: Option<RebuildReport>,
}

/// The sessions of one agent. Clones share one in-memory copy of the index (see
/// [`crate::index_cache`]): keep one store per agent for the life of a process.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
    cwd: String,
    cache: Arc<IndexCache>,
    /// Group commit of transcript syncs and index updates (see [`crate::group`]).
    pub(crate) commit: Arc<Commit>,
    lock_timeout: Duration,
}

/// The exclusive lock on `sessions.json.lock`, released on drop. The file also holds the
/// index's generation counter.
pub(crate) type IndexLock = pincer_base::HeldLock;

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
            cache: Arc::default(),
            commit: Arc::default(),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// Sets the `cwd` recorded in new transcript headers.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = cwd.into();
        self
    }

    /// How much the store's group commit batched so far (all clones of this store).
    pub fn commit_stats(&self) -> CommitStats {
        self.commit.stats()
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

    /// Loads the index (read only; no lock). A corrupt index is an error here; see
    /// [`SessionStore::index_or_rebuild`].
    pub fn index(&self) -> Result<SessionIndex> {
        let version = version_unlocked(&self.lock_path(), &self.index_path());
        if let Some(index) = self.cache.get(version) {
            return Ok((*index).clone());
        }
        let index = SessionIndex::load(self.index_path())?;
        self.cache.put(version, index.clone());
        Ok(index)
    }

    /// The index entry of `key` (no lock; a corrupt index is rebuilt first, as
    /// [`SessionStore::index_or_rebuild`] does), read from the cached index without copying
    /// all of it: a turn needs one entry, and the index holds every session.
    pub fn entry(&self, key: &str) -> Result<Option<SessionEntry>> {
        let version = version_unlocked(&self.lock_path(), &self.index_path());
        if let Some(index) = self.cache.get(version) {
            return Ok(index.get(key).cloned());
        }
        let (index, _) = self.read_index_or_rebuild()?;
        Ok(index.get(key).cloned())
    }

    /// The index under the lock: the cached copy (taken out of the cache) when the file has
    /// not changed. Give it back with [`SessionStore::save_index`] or, unchanged,
    /// [`SessionStore::keep_index`].
    pub(crate) fn load_cached_locked(&self, lock: &IndexLock) -> Result<SessionIndex> {
        let version = version_of(lock.file(), &self.index_path());
        match self.cache.take(version) {
            Some(index) => Ok(index),
            None => SessionIndex::load(self.index_path()),
        }
    }

    /// Puts an index read under the lock and not changed back into the cache.
    pub(crate) fn keep_index(&self, lock: &IndexLock, index: SessionIndex) {
        self.cache
            .put(version_of(lock.file(), &self.index_path()), index);
    }

    /// Replaces the index file under the lock, bumping the generation around the write (see
    /// [`crate::index_cache`]). `durable` fsyncs it: everything but per-turn counters.
    pub(crate) fn save_index(
        &self,
        lock: &IndexLock,
        index: SessionIndex,
        durable: bool,
    ) -> Result<()> {
        let lock_path = self.lock_path();
        let generation = read_generation(lock.file()).unwrap_or(0);
        // Odd while the file is being replaced: no reader caches what it reads then.
        let writing = generation + 1 + generation % 2;
        write_generation(lock.file(), writing).map_err(|e| StoreError::io(&lock_path, e))?;
        if let Err(e) = index.save_with(durable) {
            self.cache.clear();
            return Err(e);
        }
        write_generation(lock.file(), writing + 1).map_err(|e| StoreError::io(&lock_path, e))?;
        self.cache
            .put(version_of(lock.file(), &self.index_path()), index);
        Ok(())
    }

    fn lock_path(&self) -> PathBuf {
        self.root.join("sessions.json.lock")
    }

    pub(crate) fn lock(&self) -> Result<IndexLock> {
        pincer_base::create_private_dir_all(&self.root)
            .map_err(|e| StoreError::io(&self.root, e))?;
        let path = self.lock_path();
        let file = pincer_base::private_open_options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| StoreError::io(&path, e))?;
        lock_within(&file, &path, self.lock_timeout)?;
        Ok(IndexLock::new(file))
    }

    /// How long an index update waits for another process's lock before failing with
    /// [`StoreError::LockTimeout`] (default [`DEFAULT_LOCK_TIMEOUT`]).
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// Opens the session of `key`, creating it (new sessionId, index entry, transcript) if
    /// the key is not indexed yet.
    pub fn get_or_create(&self, key: &str) -> Result<OpenSession> {
        let lock = self.lock()?;
        let (mut index, rebuilt) = self.load_index_locked(&lock)?;
        let mut session = match index.get(key).cloned() {
            Some(entry) => {
                self.keep_index(&lock, index);
                self.open_entry(key, entry, false)?
            }
            None => {
                let entry = SessionEntry::new(crate::ids::session_id());
                let session = self.open_entry(key, entry, true)?;
                index.insert(key, session.entry.clone());
                self.save_index(&lock, index, true)?;
                session
            }
        };
        session.rebuilt = rebuilt;
        Ok(session)
    }

    /// Opens the existing session of `key`; an error if there is none.
    pub fn resume(&self, key: &str) -> Result<OpenSession> {
        let (index, rebuilt) = self.read_index_or_rebuild()?;
        let entry = index
            .get(key)
            .cloned()
            .ok_or_else(|| StoreError::unknown_session(key))?;
        let mut session = self.open_entry(key, entry, false)?;
        session.rebuilt = rebuilt;
        Ok(session)
    }

    /// Starts a new session under `key` (`/new`, `/reset`): a new sessionId and transcript;
    /// the old transcript is kept, renamed `<id>.jsonl.reset.<ts>`. Per-session settings
    /// (levels, model, policies, label, routing) carry over; token counts and the
    /// compaction count start again.
    pub fn reset(&self, key: &str) -> Result<OpenSession> {
        let lock = self.lock()?;
        let (mut index, rebuilt) = self.load_index_locked(&lock)?;
        let mut entry = SessionEntry::new(crate::ids::session_id());
        if let Some(old) = index.get(key) {
            if is_plain_session_id(&old.session_id) {
                crate::archive::move_aside(&self.transcript_path(&old.session_id), "reset")?;
            }
            entry = SessionEntry {
                session_id: entry.session_id,
                created_at: entry.created_at,
                updated_at: entry.updated_at,
                input_tokens: None,
                output_tokens: None,
                total_tokens: None,
                compaction_count: 0,
                // What these count belongs to the old transcript.
                compacted_message_count: None,
                memory_flush_at: None,
                memory_flush_compaction_count: None,
                ..old.clone()
            };
        }
        let mut session = self.open_entry(key, entry, true)?;
        index.insert(key, session.entry.clone());
        self.save_index(&lock, index, true)?;
        session.rebuilt = rebuilt;
        Ok(session)
    }

    /// Patches the index entry of `key` (see [`SessionIndex::patch`]) and saves it.
    pub fn patch(&self, key: &str, patch: &Value) -> Result<SessionEntry> {
        let lock = self.lock()?;
        let (mut index, _) = self.load_index_locked(&lock)?;
        let entry = index.patch(key, patch)?.clone();
        self.save_index(&lock, index, true)?;
        Ok(entry)
    }

    /// Every indexed session, most recently updated first (ties by key). A corrupt index
    /// is rebuilt first (with a warning in the log).
    pub fn list(&self) -> Result<Vec<(String, SessionEntry)>> {
        let (index, _) = self.read_index_or_rebuild()?;
        let mut all: Vec<_> = index.sessions.into_iter().collect();
        all.sort_by(|(ka, a), (kb, b)| b.updated_at.cmp(&a.updated_at).then_with(|| ka.cmp(kb)));
        Ok(all)
    }

    /// Removes the session of `key` from the index and moves its transcript aside as
    /// `<id>.jsonl.deleted.<ts>` (deleted for good only by retention, once old enough).
    /// Returns where the transcript went (`None` if it had none).
    pub fn archive(&self, key: &str) -> Result<Option<PathBuf>> {
        let lock = self.lock()?;
        let (mut index, _) = self.load_index_locked(&lock)?;
        let entry = index
            .remove(key)
            .ok_or_else(|| StoreError::unknown_session(key))?;
        // The index first: a crash after it leaves an orphan transcript, which retention
        // archives later, rather than an entry whose transcript vanished.
        self.save_index(&lock, index, true)?;
        self.move_transcript_aside(&entry.session_id)
    }

    /// Moves `<id>.jsonl` to `<id>.jsonl.deleted.<ts>`; `None` when there is no such file
    /// or the id is not a plain file name (nothing outside the store is ever touched).
    pub(crate) fn move_transcript_aside(&self, session_id: &str) -> Result<Option<PathBuf>> {
        if !is_plain_session_id(session_id) {
            return Ok(None);
        }
        crate::archive::move_aside(&self.transcript_path(session_id), "deleted")
    }

    /// The index without a lock when it reads fine; when it is corrupt, the rebuild under
    /// the lock (another process may have rebuilt it meanwhile).
    pub(crate) fn read_index_or_rebuild(&self) -> Result<(SessionIndex, Option<RebuildReport>)> {
        match self.index() {
            Ok(index) => Ok((index, None)),
            Err(StoreError::Json { .. }) => {
                let lock = self.lock()?;
                self.load_index_locked(&lock)
            }
            Err(e) => Err(e),
        }
    }

    fn open_entry(&self, key: &str, entry: SessionEntry, created: bool) -> Result<OpenSession> {
        if !is_plain_session_id(&entry.session_id) {
            return Err(StoreError::InvalidSessionId {
                key: key.to_owned(),
                session_id: entry.session_id,
            });
        }
        let path = self.transcript_path(&entry.session_id);
        let (transcript, report) = if path.exists() {
            Transcript::open(path)?
        } else {
            if !created {
                tracing::warn!(key, session_id = %entry.session_id, "transcript missing; recreating it under the same id");
            }
            let header = SessionHeader::new(entry.session_id.clone(), self.cwd.clone())
                .with_session_key(key);
            let report = LoadReport {
                recreated_missing: !created,
                ..LoadReport::default()
            };
            (Transcript::create(path, header)?, report)
        };
        Ok(OpenSession {
            key: key.to_owned(),
            entry,
            transcript,
            report,
            created,
            rebuilt: None,
        })
    }
}

/// Whether `id` can name a transcript in the store's directory: not empty, not `.` or `..`,
/// no path separator or NUL. The index is outside input; its ids must not reach elsewhere.
pub(crate) fn is_plain_session_id(id: &str) -> bool {
    !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\\', '\0'])
}

/// The index lock's deadline when none is set: pincer-base's default.
pub const DEFAULT_LOCK_TIMEOUT: Duration = pincer_base::DEFAULT_LOCK_TIMEOUT;

/// Takes the exclusive lock on `file` within `timeout` ([`pincer_base::lock_within`]).
pub(crate) fn lock_within(file: &std::fs::File, path: &Path, timeout: Duration) -> Result<()> {
    pincer_base::lock_within(file, timeout).map_err(|e| match e.kind() {
        std::io::ErrorKind::TimedOut => StoreError::LockTimeout(pincer_base::LockTimeout {
            path: path.to_path_buf(),
            waited: timeout,
        }),
        _ => StoreError::io(path, e),
    })
}
