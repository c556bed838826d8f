//! Incremental indexing: bringing the index in line with the Markdown. A sync
//! 1. rebuilds what a settings change invalidates (chunking fingerprint → all chunks;
//!    embedder id → all embeddings),
//! 2. scans the workspace and reads files whose size or mtime changed, or whose mtime is
//!    too recent to trust ("racily clean", as git calls it), comparing content hashes,
//! 3. re-chunks changed files and embeds only chunk texts the index does not already have
//!    a vector for (an unchanged chunk, a renamed file and a moved paragraph reuse theirs),
//!    in batches, outside any database lock,
//! 4. writes everything in one transaction.
//!
//! Embedding failures never fail a sync: those chunks stay keyword-only, the error is
//! recorded (per chunk and in `meta`), and the next sync retries them.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::chunk::{Chunk, chunk_markdown, embed_input};
use crate::db::{self, Db};
use crate::error::MemoryError;
use crate::index::{DbFailure, Inner, MemoryIndex};
use crate::scan::{self, Content, FileProblem};

/// Files whose mtime is within this of the moment they were last read are re-hashed
/// even when size and mtime look unchanged (timestamps are coarse; a quick second write
/// can keep both).
const RACY_NS: i64 = 2_000_000_000;

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Why everything was rebuilt, if it was.
    pub rebuilt: Option<String>,
    /// Memory files found.
    pub files_scanned: usize,
    /// Files (re)chunked because new or changed.
    pub files_indexed: usize,
    /// Files gone from the workspace, removed from the index.
    pub files_removed: usize,
    /// Chunks written.
    pub chunks_written: usize,
    /// Texts sent to the embedder and stored.
    pub texts_embedded: usize,
    /// Chunks whose embedding was reused (same text already embedded).
    pub embeddings_reused: usize,
    /// Texts the embedder failed on (left keyword-only).
    pub embed_failures: usize,
    /// Problems with files: path and description.
    pub problems: Vec<(String, String)>,
}

/// A file to (re)write in the index.
struct FileWrite {
    path: String,
    sha256: Option<String>,
    size: u64,
    mtime_ns: i64,
    read_at_ns: i64,
    problem: Option<FileProblem>,
    /// `None`: keep the chunks as they are (unchanged content or unreadable).
    chunks: Option<Vec<(Chunk, String)>>,
}

/// What step 2 decided.
struct Plan {
    writes: Vec<FileWrite>,
    deleted: Vec<String>,
    /// Hash → embedding input, for texts with no stored vector.
    to_embed: Vec<(String, String)>,
    reused: usize,
    expected_dims: Option<usize>,
    report: SyncReport,
}

/// An embedding result per text hash.
type Embedded = HashMap<String, Result<Vec<f32>, String>>;

/// How a sync may use the embedder.
#[derive(Debug, Clone, Copy)]
struct EmbedPolicy {
    /// A search is waiting: skip the embedder while it is cooling down after a failure,
    /// and call it without retries ([`crate::Embedder::embed_now`]).
    waiting: bool,
    /// Batches not answered by then stay keyword-only until a later sync.
    deadline: Option<tokio::time::Instant>,
}

impl MemoryIndex {
    /// Brings the index up to date with the Markdown (see the module doc). A database
    /// found corrupt is reset and rebuilt within the same call.
    pub async fn sync(&self) -> Result<SyncReport, MemoryError> {
        let _one_at_a_time = self.inner.sync_lock.lock().await;
        self.sync_locked(EmbedPolicy {
            waiting: false,
            deadline: None,
        })
        .await
    }

    /// [`Self::sync`] for a search that is waiting for it: the files are indexed as
    /// usual, but the embedder gets at most [`crate::IndexSettings::search_embed_timeout`]
    /// (one attempt per batch, none while it is cooling down after a failure); chunks it
    /// did not embed in time are found by keyword until a later sync embeds them. `None`
    /// when another sync held the index for that long (what is indexed can be searched).
    pub async fn sync_for_search(&self) -> Result<Option<SyncReport>, MemoryError> {
        let deadline = tokio::time::Instant::now() + self.inner.settings.search_embed_timeout;
        let Ok(_one_at_a_time) =
            tokio::time::timeout_at(deadline, self.inner.sync_lock.lock()).await
        else {
            return Ok(None);
        };
        self.sync_locked(EmbedPolicy {
            waiting: true,
            deadline: Some(deadline),
        })
        .await
        .map(Some)
    }

    async fn sync_locked(&self, policy: EmbedPolicy) -> Result<SyncReport, MemoryError> {
        match self.sync_once(policy).await {
            Err(MemoryError::Reset { moved_to }) => {
                let mut report = self.sync_once(policy).await?;
                report.rebuilt = Some(format!(
                    "the index was corrupt (moved to {}); rebuilt from the Markdown",
                    moved_to.display()
                ));
                Ok(report)
            }
            other => other,
        }
    }

    async fn sync_once(&self, policy: EmbedPolicy) -> Result<SyncReport, MemoryError> {
        let plan = self.with_db(plan).await?;
        let embedded = match &self.inner.embedder {
            Some(embedder) if !plan.to_embed.is_empty() => {
                embed_all(&self.inner, embedder.as_ref(), &plan, policy).await
            }
            _ => HashMap::new(),
        };
        self.with_db(move |inner, db| apply(inner, db, plan, embedded))
            .await
    }
}

/// Steps 1 and 2: settings changes, scan, read, chunk, find what needs embedding.
fn plan(inner: &Inner, db: &mut Db) -> Result<Plan, DbFailure> {
    let mut report = SyncReport::default();
    let fingerprint = inner.settings.chunking.fingerprint();
    if db.meta_get("chunking")?.as_deref() != Some(&fingerprint) {
        let had = db.meta_get("chunking")?.is_some();
        let tx = db.conn.transaction()?;
        tx.execute("DELETE FROM chunks", [])?;
        tx.execute("DELETE FROM files", [])?;
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('chunking', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [&fingerprint],
        )?;
        tx.commit()?;
        inner.bump();
        if had {
            report.rebuilt = Some(format!("chunking changed to {fingerprint}"));
        }
    }
    if let Some(embedder) = &inner.embedder {
        let stored = db.meta_get("embedder")?;
        if stored.as_deref() != Some(embedder.id()) {
            let tx = db.conn.transaction()?;
            tx.execute(
                "UPDATE chunks SET embedding = NULL, dims = NULL, embed_error = NULL",
                [],
            )?;
            tx.execute("DELETE FROM meta WHERE key IN ('dims', 'embed_error')", [])?;
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('embedder', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [embedder.id()],
            )?;
            tx.commit()?;
            inner.bump();
            if let Some(old) = stored {
                report.rebuilt.get_or_insert(format!(
                    "embedding model changed from {old} to {}; re-embedding",
                    embedder.id()
                ));
            }
        }
    }
    let expected_dims = db.meta_get("dims")?.and_then(|d| d.parse().ok());

    // Known files: path → (sha, size, mtime, read_at, status).
    let mut known: HashMap<String, (Option<String>, i64, i64, i64, String)> = HashMap::new();
    {
        let mut stmt = db
            .conn
            .prepare("SELECT path, sha256, size, mtime_ns, read_at_ns, status FROM files")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?),
            ))
        })?;
        for row in rows {
            let (path, info) = row?;
            known.insert(path, info);
        }
    }

    let found = scan::scan(&inner.workspace);
    report.files_scanned = found.files.len();
    let mut present: HashSet<String> = HashSet::new();
    let mut writes = Vec::new();
    for (rel, problem) in found.refused {
        present.insert(rel.clone());
        report.problems.push((rel.clone(), problem.describe()));
        let keep = matches!(problem, FileProblem::Unreadable(_));
        let (sha, size, mtime, read_at) = known
            .get(&rel)
            .map_or((None, 0, 0, 0), |k| (k.0.clone(), k.1, k.2, k.3));
        let chunks = if keep { None } else { Some(Vec::new()) };
        let size = u64::try_from(size).unwrap_or(0);
        writes.push(FileWrite {
            path: rel,
            sha256: sha,
            size,
            mtime_ns: mtime,
            read_at_ns: read_at,
            problem: Some(problem),
            chunks,
        });
    }
    for file in found.files {
        present.insert(file.rel.clone());
        let size = i64::try_from(file.size).unwrap_or(i64::MAX);
        let old = known.get(&file.rel);
        if let Some((_, old_size, old_mtime, read_at, status)) = old {
            let trusted = *old_mtime < read_at - RACY_NS;
            if *old_size == size && *old_mtime == file.mtime_ns && trusted && status == "ok" {
                continue;
            }
        }
        let read_at_ns = db::now_ns();
        match scan::read(&file.abs, inner.settings.max_file_bytes) {
            Content::Skipped(problem) => {
                report.problems.push((file.rel.clone(), problem.describe()));
                let keep = matches!(problem, FileProblem::Unreadable(_));
                writes.push(FileWrite {
                    path: file.rel,
                    sha256: old.and_then(|o| o.0.clone()),
                    size: file.size,
                    mtime_ns: file.mtime_ns,
                    read_at_ns,
                    problem: Some(problem),
                    chunks: if keep { None } else { Some(Vec::new()) },
                });
            }
            Content::Text {
                text,
                sha256,
                problem,
            } => {
                if let Some(p) = &problem {
                    report.problems.push((file.rel.clone(), p.describe()));
                }
                let same = old
                    .is_some_and(|o| o.0.as_deref() == Some(sha256.as_str()) && o.4 != "skipped");
                let chunks = (!same).then(|| {
                    chunk_markdown(&text, &inner.settings.chunking)
                        .into_iter()
                        .map(|c| {
                            let hash = c.hash();
                            (c, hash)
                        })
                        .collect::<Vec<_>>()
                });
                if chunks.is_some() {
                    report.files_indexed += 1;
                }
                writes.push(FileWrite {
                    path: file.rel,
                    sha256: Some(sha256),
                    size: file.size,
                    mtime_ns: file.mtime_ns,
                    read_at_ns,
                    problem,
                    chunks,
                });
            }
        }
    }
    let deleted: Vec<String> = known.into_keys().filter(|p| !present.contains(p)).collect();
    report.files_removed = deleted.len();

    // Which texts need a vector: new chunks without a stored one, and stored chunks left
    // without one by an earlier failure or a model change.
    let mut to_embed = Vec::new();
    let mut reused = 0;
    if inner.embedder.is_some() {
        let mut queued = HashSet::new();
        let mut has_vector = db
            .conn
            .prepare("SELECT 1 FROM chunks WHERE sha256 = ?1 AND embedding IS NOT NULL LIMIT 1")?;
        for write in &writes {
            for (chunk, hash) in write.chunks.iter().flatten() {
                if queued.contains(hash) {
                    continue;
                }
                if has_vector
                    .query_row([hash], |_| Ok(()))
                    .optional()?
                    .is_some()
                {
                    reused += 1;
                } else {
                    queued.insert(hash.clone());
                    to_embed.push((hash.clone(), chunk.embed_input()));
                }
            }
        }
        let mut pending = db.conn.prepare(
            "SELECT sha256, heading, text FROM chunks WHERE embedding IS NULL GROUP BY sha256",
        )?;
        let rows = pending.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        for row in rows {
            let (hash, heading, text) = row?;
            if queued.insert(hash.clone()) {
                to_embed.push((hash, embed_input(&heading, &text)));
            }
        }
    }
    Ok(Plan {
        writes,
        deleted,
        to_embed,
        reused,
        expected_dims,
        report,
    })
}

/// Step 3: embeds in batches; every text ends with a vector (normalised, of the index's
/// dimension), an error message, or — past the policy's deadline or while the embedder
/// cools down — no entry (it stays keyword-only; the next sync tries again). After a
/// failed batch the rest are not sent: each would only wait out the same retries.
async fn embed_all(
    inner: &Inner,
    embedder: &dyn crate::Embedder,
    plan: &Plan,
    policy: EmbedPolicy,
) -> Embedded {
    let mut out = HashMap::new();
    if policy.waiting
        && let Some(why) = inner.embedder_down()
    {
        tracing::debug!(%why, "memory sync for a search: not embedding");
        return out;
    }
    let mut dims = plan.expected_dims;
    let mut batches = plan.to_embed.chunks(inner.settings.embed_batch_size.max(1));
    while let Some(batch) = batches.next() {
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let call = if policy.waiting {
            embedder.embed_now(&texts)
        } else {
            embedder.embed(&texts)
        };
        let answer = match policy.deadline {
            Some(deadline) => match tokio::time::timeout_at(deadline, call).await {
                Ok(answer) => answer,
                Err(_) => {
                    let why = format!(
                        "no answer within {} s",
                        inner.settings.search_embed_timeout.as_secs_f64()
                    );
                    tracing::warn!(%why, "memory embedding cut short; chunks stay keyword-only for now");
                    inner.note_embedder(Err(&why));
                    break;
                }
            },
            None => call.await,
        };
        match answer {
            Err(e) => {
                tracing::warn!(error = %e, "memory embedding failed; chunks stay keyword-only");
                let why = e.to_string();
                inner.note_embedder(Err(&why));
                for (hash, _) in batch.iter().chain(batches.by_ref().flatten()) {
                    out.insert(hash.clone(), Err(why.clone()));
                }
                break;
            }
            Ok(vectors) if vectors.len() != batch.len() => {
                let msg = format!(
                    "embedding provider gave a wrong answer: {} vectors for {} texts",
                    vectors.len(),
                    batch.len()
                );
                for (hash, _) in batch {
                    out.insert(hash.clone(), Err(msg.clone()));
                }
            }
            Ok(vectors) => {
                inner.note_embedder(Ok(()));
                for ((hash, _), vector) in batch.iter().zip(vectors) {
                    let want = *dims.get_or_insert(vector.len());
                    let result = if vector.len() != want {
                        Err(format!(
                            "embedding has the wrong dimension: {} (index has {want})",
                            vector.len()
                        ))
                    } else {
                        db::normalise(vector)
                            .ok_or_else(|| "embedding is zero or not finite".to_owned())
                    };
                    out.insert(hash.clone(), result);
                }
            }
        }
    }
    out
}

/// Step 4: one transaction with every change.
fn apply(
    inner: &Inner,
    db: &mut Db,
    plan: Plan,
    embedded: Embedded,
) -> Result<SyncReport, DbFailure> {
    let Plan {
        writes,
        deleted,
        reused,
        mut report,
        ..
    } = plan;
    let mut dims_seen = None;
    let mut last_error = None;
    let tx = db.conn.transaction()?;
    {
        let mut stored_vector = tx.prepare(
            "SELECT embedding, dims FROM chunks WHERE sha256 = ?1 AND embedding IS NOT NULL LIMIT 1",
        )?;
        let mut insert = tx.prepare(
            "INSERT INTO chunks(path, start_line, end_line, heading, text, sha256, embedding, dims, embed_error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        // New chunks are collected first: the old rows of a renamed or edited file must
        // still be there while their vectors are looked up for reuse.
        let mut rows = Vec::new();
        for write in &writes {
            for (chunk, hash) in write.chunks.iter().flatten() {
                let (blob, dims, error) = match embedded.get(hash) {
                    Some(Ok(v)) => (Some(db::vec_to_blob(v)), Some(v.len() as i64), None),
                    Some(Err(e)) => (None, None, Some(e.clone())),
                    None => {
                        let found: Option<(Vec<u8>, i64)> = stored_vector
                            .query_row([hash], |r| Ok((r.get(0)?, r.get(1)?)))
                            .optional()?;
                        match found {
                            Some((blob, dims)) => (Some(blob), Some(dims), None),
                            None => (None, None, None),
                        }
                    }
                };
                rows.push((write.path.clone(), chunk, hash, blob, dims, error));
            }
        }
        for write in &writes {
            if write.chunks.is_some() {
                tx.execute("DELETE FROM chunks WHERE path = ?1", [&write.path])?;
            }
        }
        for path in &deleted {
            tx.execute("DELETE FROM chunks WHERE path = ?1", [path])?;
            tx.execute("DELETE FROM files WHERE path = ?1", [path])?;
        }
        for (path, chunk, hash, blob, dims, error) in rows {
            if let Some(e) = &error {
                last_error = Some(e.clone());
            }
            if dims.is_some() {
                dims_seen = dims;
            }
            insert.execute(params![
                path,
                chunk.start_line as i64,
                chunk.end_line as i64,
                chunk.heading,
                chunk.text,
                hash,
                blob,
                dims,
                error
            ])?;
            report.chunks_written += 1;
        }
        // Stored chunks that were waiting for a vector.
        let mut fill = tx.prepare(
            "UPDATE chunks SET embedding = ?1, dims = ?2, embed_error = NULL
             WHERE sha256 = ?3 AND embedding IS NULL",
        )?;
        let mut fail = tx.prepare(
            "UPDATE chunks SET embed_error = ?1 WHERE sha256 = ?2 AND embedding IS NULL",
        )?;
        for (hash, result) in &embedded {
            match result {
                Ok(v) => {
                    dims_seen = Some(v.len() as i64);
                    fill.execute(params![db::vec_to_blob(v), v.len() as i64, hash])?;
                    report.texts_embedded += 1;
                }
                Err(e) => {
                    last_error = Some(e.clone());
                    fail.execute(params![e, hash])?;
                    report.embed_failures += 1;
                }
            }
        }
        let mut upsert = tx.prepare(
            "INSERT INTO files(path, sha256, size, mtime_ns, read_at_ns, status, problem)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,
                 mtime_ns = excluded.mtime_ns, read_at_ns = excluded.read_at_ns,
                 status = excluded.status, problem = excluded.problem",
        )?;
        for write in &writes {
            let status = match &write.problem {
                None => "ok",
                Some(p) if !p.skips() => "lossy",
                Some(FileProblem::Unreadable(_)) => "unreadable",
                Some(_) => "skipped",
            };
            let size = i64::try_from(write.size).unwrap_or(i64::MAX);
            upsert.execute(params![
                write.path,
                write.sha256,
                size,
                write.mtime_ns,
                write.read_at_ns,
                status,
                write.problem.as_ref().map(FileProblem::describe)
            ])?;
        }
    }
    if let Some(dims) = dims_seen {
        tx.execute(
            "INSERT INTO meta(key, value) VALUES ('dims', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [dims.to_string()],
        )?;
    }
    match &last_error {
        Some(e) => {
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('embed_error', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [e],
            )?;
        }
        None if !embedded.is_empty() => {
            tx.execute("DELETE FROM meta WHERE key = 'embed_error'", [])?;
        }
        None => {}
    }
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('last_sync_ms', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [db::now_ms().to_string()],
    )?;
    tx.commit()?;
    inner.bump();
    report.embeddings_reused = reused;
    Ok(report)
}
