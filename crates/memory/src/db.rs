//! The index database: schema, opening (WAL, busy timeout), recovery and error mapping.
//! The index is derived data, so there are no step-by-step migrations: a database with
//! another schema version is wiped and rebuilt from the Markdown, and one SQLite reports
//! as corrupt (or that is not a database at all) is renamed aside
//! (`<name>.corrupt.<unix-ms>`, with its `-wal`/`-shm`) and replaced by an empty one.
//!
//! Tables: `meta` (key/value: schema version, embedder id, dims, chunking fingerprint,
//! last sync, last embedding error), `files` (one row per memory file seen, with its hash
//! and problem), `chunks` (text, lines, heading, hash, embedding as little-endian f32 BLOB,
//! normalised) and `chunks_fts`, an external-content FTS5 table over `text` and `heading`
//! with the trigram tokenizer, kept in step by triggers.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

use crate::error::MemoryError;

/// Bump when the schema changes: older indexes are then rebuilt.
pub const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    sha256 TEXT,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    read_at_ns INTEGER NOT NULL,
    status TEXT NOT NULL,
    problem TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    embedding BLOB,
    dims INTEGER,
    embed_error TEXT
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_sha ON chunks(sha256);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, heading, content='chunks', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, heading) VALUES (new.id, new.text, new.heading);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, heading)
        VALUES ('delete', old.id, old.text, old.heading);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE OF text, heading ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, heading)
        VALUES ('delete', old.id, old.text, old.heading);
    INSERT INTO chunks_fts(rowid, text, heading) VALUES (new.id, new.text, new.heading);
END;
";

const DROP_ALL: &str = "
DROP TRIGGER IF EXISTS chunks_ai; DROP TRIGGER IF EXISTS chunks_ad;
DROP TRIGGER IF EXISTS chunks_au; DROP TABLE IF EXISTS chunks_fts;
DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;
";

/// An open index database.
pub struct Db {
    /// The connection.
    pub conn: Connection,
    /// Its file.
    pub path: PathBuf,
    /// Where a corrupt predecessor was moved when this one was created, if it was.
    pub recovered_from: Option<PathBuf>,
    busy_timeout: Duration,
}

/// Creates the database file 0600 if it is missing. SQLite would create it with the
/// umask's mode (0644), and it gives the `-wal` and `-shm` files it creates later the
/// database file's mode, so creating it private first keeps all three private.
fn create_private_file(path: &Path) -> Result<(), MemoryError> {
    pincer_base::private_open_options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(drop)
        .map_err(|e| MemoryError::io("cannot create the index file", path, e))
}

impl Db {
    /// Opens (creating if needed) the database, recovering from corruption by moving the
    /// file aside. Fails only when the directory is unusable or the file is locked.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Self, MemoryError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            pincer_base::create_private_dir_all(dir)
                .map_err(|e| MemoryError::io("cannot create the index directory", dir, e))?;
        }
        create_private_file(path)?;
        match Self::try_open(path, busy_timeout) {
            Ok(db) => Ok(db),
            Err(e) if is_corrupt(&e) => {
                let moved_to = move_aside(path)?;
                tracing::warn!(path = %path.display(), moved_to = %moved_to.display(),
                    "memory index was corrupt; moved aside, rebuilding");
                create_private_file(path)?;
                let mut db = Self::try_open(path, busy_timeout).map_err(|e| db_error(path, e))?;
                db.recovered_from = Some(moved_to);
                Ok(db)
            }
            Err(e) => Err(db_error(path, e)),
        }
    }

    fn try_open(path: &Path, busy_timeout: Duration) -> Result<Self, rusqlite::Error> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(busy_timeout)?;
        // WAL: searches (readers) are never blocked by a sync (the writer), even across
        // processes. `journal_mode` answers a row, so it goes through query_row.
        let _mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;")?;
        let db = Self {
            conn,
            path: path.to_path_buf(),
            recovered_from: None,
            busy_timeout,
        };
        db.ensure_schema()?;
        Ok(db)
    }

    /// Creates the schema, or wipes and recreates it when its version differs.
    fn ensure_schema(&self) -> Result<(), rusqlite::Error> {
        let has_meta: bool = self.conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type='table' AND name='meta'",
            [],
            |r| r.get(0),
        )?;
        let version = if has_meta {
            self.meta_get("schema_version")?
        } else {
            None
        };
        if version.as_deref() != Some(&SCHEMA_VERSION.to_string()) {
            if version.is_some() {
                tracing::info!(path = %self.path.display(), "memory index schema changed; rebuilding");
            }
            self.conn
                .execute_batch(&format!("BEGIN; {DROP_ALL} {SCHEMA} COMMIT;"))?;
            self.meta_set("schema_version", &SCHEMA_VERSION.to_string())?;
        } else {
            self.conn.execute_batch(SCHEMA)?;
        }
        Ok(())
    }

    /// Replaces a database found corrupt while in use: moves it aside and opens a fresh
    /// one in its place. Returns where the old one went.
    pub fn reset(&mut self) -> Result<PathBuf, MemoryError> {
        // Close first: the file is renamed, and a new connection must not see old pages.
        let placeholder = Connection::open_in_memory().map_err(|e| db_error(&self.path, e))?;
        let old = std::mem::replace(&mut self.conn, placeholder);
        drop(old.close());
        let moved_to = move_aside(&self.path)?;
        let fresh = Self::try_open(&self.path, self.busy_timeout).map_err(|e| self.err(e))?;
        self.conn = fresh.conn;
        self.recovered_from = Some(moved_to.clone());
        Ok(moved_to)
    }

    /// A meta value.
    pub fn meta_get(&self, key: &str) -> Result<Option<String>, rusqlite::Error> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
    }

    /// Sets a meta value.
    pub fn meta_set(&self, key: &str, value: &str) -> Result<(), rusqlite::Error> {
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// Maps a rusqlite error on this database to a [`MemoryError`].
    pub fn err(&self, e: rusqlite::Error) -> MemoryError {
        db_error(&self.path, e)
    }
}

/// Whether an error means the file is not a usable database.
pub fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

/// Maps errors: busy/locked become [`MemoryError::Locked`].
pub fn db_error(path: &Path, e: rusqlite::Error) -> MemoryError {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => MemoryError::Locked {
            path: path.to_path_buf(),
        },
        _ => MemoryError::Db {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// Renames the database (and its WAL and shared-memory files) to `<name>.corrupt.<ms>`.
fn move_aside(path: &Path) -> Result<PathBuf, MemoryError> {
    let stamp = now_ms();
    let with_suffix = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    let target = with_suffix(&format!(".corrupt.{stamp}"));
    std::fs::rename(path, &target)
        .map_err(|e| MemoryError::io("cannot move the corrupt index aside", path, e))?;
    for side in ["-wal", "-shm"] {
        let from = with_suffix(side);
        if from.exists() {
            // Best effort: a stale WAL next to a fresh database would be replayed into it.
            if std::fs::rename(&from, with_suffix(&format!(".corrupt.{stamp}{side}"))).is_err() {
                drop(std::fs::remove_file(&from));
            }
        }
    }
    Ok(target)
}

/// Milliseconds since the epoch (pincer-base's clock).
pub use pincer_base::time::now_ms;

/// Nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

/// A vector as a BLOB: little-endian f32s.
pub fn vec_to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Scales a vector to unit length, so cosine is a dot product. `None` for a vector with
/// non-finite values or zero length (unusable for similarity).
pub fn normalise(mut v: Vec<f32>) -> Option<Vec<f32>> {
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm <= f32::EPSILON || !norm.is_finite() {
        return None;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    Some(v)
}
