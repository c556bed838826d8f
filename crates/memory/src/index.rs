//! `MemoryIndex`: one agent's index, its settings and the machinery every operation
//! shares — the database behind a mutex, used only from blocking tasks (rusqlite is
//! synchronous and must not stall the async runtime), the in-memory vector cache, and
//! recovery from a database found corrupt while in use. Syncing is in `sync.rs`,
//! searching in `search.rs`, status in `status.rs`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::chunk::ChunkSettings;
use crate::db::{self, Db};
use crate::embedder::Embedder;
use crate::error::MemoryError;
use crate::search::VectorCache;

/// How the index is built.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Chunk size and overlap.
    pub chunking: ChunkSettings,
    /// Files larger than this are skipped and reported (default 2 MiB).
    pub max_file_bytes: u64,
    /// Texts per embedding call (default 64).
    pub embed_batch_size: usize,
    /// How long a write waits for another process's lock before giving up (default 5 s).
    pub busy_timeout: Duration,
    /// The most a search waits on the embedder, for the query's vector and again for the
    /// sync before it (default 3 s): past it the search goes on by keyword and the chunks
    /// not embedded yet are embedded by a later sync.
    pub search_embed_timeout: Duration,
    /// After the embedder fails or times out, searches skip it (keyword-only) for this
    /// long (default 60 s), so an unreachable provider costs one turn at most one
    /// [`IndexSettings::search_embed_timeout`], not every turn. Background syncs still try.
    pub embedder_cooldown: Duration,
}

impl Default for IndexSettings {
    fn default() -> Self {
        Self {
            chunking: ChunkSettings::default(),
            max_file_bytes: 2 * 1024 * 1024,
            embed_batch_size: 64,
            busy_timeout: Duration::from_secs(5),
            search_embed_timeout: Duration::from_secs(3),
            embedder_cooldown: Duration::from_secs(60),
        }
    }
}

/// An agent's memory index. Cheap to clone (shared state); all methods are async and do
/// their database work on blocking threads.
#[derive(Clone)]
pub struct MemoryIndex {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub workspace: PathBuf,
    pub db_path: PathBuf,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub settings: IndexSettings,
    db: Mutex<Db>,
    /// One sync at a time (the watcher and a CLI `index` may ask together).
    pub sync_lock: tokio::sync::Mutex<()>,
    /// Bumped after every write this process commits; the vector cache is keyed by it
    /// (plus SQLite's `data_version` for writes by other processes).
    pub generation: AtomicU64,
    pub cache: Mutex<Option<Arc<VectorCache>>>,
    /// When and why the embedder last failed, until a call succeeds again.
    embedder_failed: Mutex<Option<(Instant, String)>>,
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("workspace", &self.inner.workspace)
            .field("db_path", &self.inner.db_path)
            .field(
                "embedder",
                &self.inner.embedder.as_ref().map(|e| e.id().to_owned()),
            )
            .finish_non_exhaustive()
    }
}

impl MemoryIndex {
    /// Opens (or creates) the index at `db_path` for the Markdown in `workspace`. A corrupt
    /// database is moved aside and replaced (see [`crate::MemoryStatus::recovered_from`]);
    /// this fails only if the index directory is unusable or the database stays locked.
    /// Call [`MemoryIndex::sync`] to bring it up to date.
    pub async fn open(
        db_path: impl Into<PathBuf>,
        workspace: impl Into<PathBuf>,
        embedder: Option<Arc<dyn Embedder>>,
        settings: IndexSettings,
    ) -> Result<Self, MemoryError> {
        let db_path = db_path.into();
        let workspace = workspace.into();
        let timeout = settings.busy_timeout;
        let path = db_path.clone();
        let db = tokio::task::spawn_blocking(move || Db::open(&path, timeout))
            .await
            .map_err(|e| MemoryError::Worker(e.to_string()))??;
        Ok(Self {
            inner: Arc::new(Inner {
                workspace,
                db_path,
                embedder,
                settings,
                db: Mutex::new(db),
                sync_lock: tokio::sync::Mutex::new(()),
                generation: AtomicU64::new(0),
                cache: Mutex::new(None),
                embedder_failed: Mutex::new(None),
            }),
        })
    }

    /// The workspace whose Markdown is indexed.
    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// The database file.
    pub fn db_path(&self) -> &Path {
        &self.inner.db_path
    }

    /// The configured embedder's id, if any.
    pub fn embedder_id(&self) -> Option<&str> {
        self.inner.embedder.as_deref().map(|e| e.id())
    }

    /// Runs `f` with the database on a blocking thread. A database found corrupt is reset
    /// (moved aside, recreated empty) and reported as [`MemoryError::Reset`].
    pub(crate) async fn with_db<T, F>(&self, f: F) -> Result<T, MemoryError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner, &mut Db) -> Result<T, DbFailure> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let mut db = inner.lock_db();
            match f(&inner, &mut db) {
                Ok(value) => Ok(value),
                Err(DbFailure::Sqlite(e)) if db::is_corrupt(&e) => {
                    let moved_to = db.reset()?;
                    tracing::warn!(moved_to = %moved_to.display(),
                        "memory index found corrupt; moved aside, rebuilt on next sync");
                    inner.bump();
                    Err(MemoryError::Reset { moved_to })
                }
                Err(DbFailure::Sqlite(e)) => Err(db.err(e)),
                Err(DbFailure::Other(e)) => Err(e),
            }
        })
        .await
        .map_err(|e| MemoryError::Worker(e.to_string()))?
    }
}

impl Inner {
    /// The database, even if a previous holder panicked (its transaction was rolled back
    /// when the guard's owner unwound, so the connection is still consistent).
    pub fn lock_db(&self) -> MutexGuard<'_, Db> {
        self.db
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Why searches skip the embedder now: it failed less than
    /// [`IndexSettings::embedder_cooldown`] ago.
    pub fn embedder_down(&self) -> Option<String> {
        let failed = self
            .embedder_failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (at, why) = failed.as_ref()?;
        let ago = at.elapsed();
        (ago < self.settings.embedder_cooldown).then(|| {
            format!(
                "the embedding provider failed {} s ago ({why}); searching by keyword until it answers again",
                ago.as_secs()
            )
        })
    }

    /// Records the outcome of an embedder call: a failure starts the cooldown, a success
    /// ends it.
    pub fn note_embedder(&self, outcome: Result<(), &str>) {
        let mut failed = self
            .embedder_failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *failed = outcome.err().map(|why| (Instant::now(), why.to_owned()));
    }

    /// Marks the vector cache stale after a write.
    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

/// An error inside a blocking database closure: SQLite's (mapped and checked for
/// corruption by [`MemoryIndex::with_db`]) or already a [`MemoryError`].
#[derive(Debug)]
pub(crate) enum DbFailure {
    Sqlite(rusqlite::Error),
    Other(MemoryError),
}

impl From<rusqlite::Error> for DbFailure {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e)
    }
}

impl From<MemoryError> for DbFailure {
    fn from(e: MemoryError) -> Self {
        Self::Other(e)
    }
}
