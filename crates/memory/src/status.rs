//! `status()`: what the index holds and what is wrong with it, for `pincer memory status`
//! and diagnostics — counts, embedder and dimensions, last sync, per-file problems, the
//! last embedding error, and whether a corrupt database was replaced.

use std::path::PathBuf;

use serde::Serialize;

use crate::error::MemoryError;
use crate::index::MemoryIndex;

/// The state of an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStatus {
    /// The workspace whose Markdown is indexed.
    pub workspace: PathBuf,
    /// The database file.
    pub db_path: PathBuf,
    /// Its size in bytes (without the WAL).
    pub db_bytes: u64,
    /// Memory files indexed (including ones indexed with a warning).
    pub files: usize,
    /// Chunks in the index.
    pub chunks: usize,
    /// Chunks with an embedding.
    pub embedded_chunks: usize,
    /// The configured embedder, if any.
    pub embedder: Option<String>,
    /// The embedder the stored vectors come from.
    pub index_embedder: Option<String>,
    /// Vector dimensions.
    pub dims: Option<usize>,
    /// The chunking fingerprint the index was built with.
    pub chunking: Option<String>,
    /// When the last sync finished (ms since the epoch).
    pub last_sync_ms: Option<i64>,
    /// Search mode a query would get now: `hybrid`, or `keyword-only: <why>`.
    pub search_mode: String,
    /// The last embedding error, while some chunks lack vectors because of it.
    pub embed_error: Option<String>,
    /// Files with problems: path and description.
    pub problems: Vec<FileStatus>,
    /// Where a corrupt database was moved when this one replaced it.
    pub recovered_from: Option<PathBuf>,
}

/// A file with a problem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStatus {
    /// Workspace-relative path.
    pub path: String,
    /// `skipped`, `lossy` (indexed with replacement characters) or `unreadable`.
    pub status: String,
    /// What is wrong.
    pub problem: String,
}

impl MemoryIndex {
    /// The index's state (reads the database only; does not sync).
    pub async fn status(&self) -> Result<MemoryStatus, MemoryError> {
        let workspace = self.workspace().to_path_buf();
        let embedder = self.embedder_id().map(str::to_owned);
        self.with_db(move |_inner, db| {
            let count = |sql: &str| -> Result<usize, rusqlite::Error> {
                let n: i64 = db.conn.query_row(sql, [], |r| r.get(0))?;
                Ok(usize::try_from(n).unwrap_or(0))
            };
            let files = count("SELECT count(*) FROM files WHERE status IN ('ok', 'lossy')")?;
            let chunks = count("SELECT count(*) FROM chunks")?;
            let embedded_chunks = count("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")?;
            let index_embedder = db.meta_get("embedder")?;
            let dims = db.meta_get("dims")?.and_then(|d| d.parse().ok());
            let embed_error = if embedded_chunks < chunks { db.meta_get("embed_error")? } else { None };
            let mut problems = Vec::new();
            {
                let mut stmt = db.conn.prepare(
                    "SELECT path, status, problem FROM files WHERE problem IS NOT NULL ORDER BY path",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok(FileStatus { path: r.get(0)?, status: r.get(1)?, problem: r.get(2)? })
                })?;
                for row in rows {
                    problems.push(row?);
                }
            }
            let search_mode = match (&embedder, embedded_chunks) {
                (None, _) => "keyword-only: no embedding provider is configured".to_owned(),
                (Some(id), _) if index_embedder.as_deref() != Some(id) => {
                    "keyword-only: not yet embedded with the configured model (sync pending)".to_owned()
                }
                (Some(_), 0) if chunks > 0 => "keyword-only: no chunk has an embedding yet".to_owned(),
                (Some(_), _) => "hybrid".to_owned(),
            };
            Ok(MemoryStatus {
                workspace,
                db_bytes: std::fs::metadata(&db.path).map_or(0, |m| m.len()),
                db_path: db.path.clone(),
                files,
                chunks,
                embedded_chunks,
                embedder,
                index_embedder,
                dims,
                chunking: db.meta_get("chunking")?,
                last_sync_ms: db.meta_get("last_sync_ms")?.and_then(|v| v.parse().ok()),
                search_mode,
                embed_error,
                problems,
                recovered_from: db.recovered_from.clone(),
            })
        })
        .await
    }
}
