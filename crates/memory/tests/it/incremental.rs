//! Incremental indexing (edit, rename, delete), rebuilds (model, chunking, corrupt
//! database), bad input (binary, huge, invalid UTF-8, failing or wrong-dimension
//! embedders, a locked database) — and the Markdown is never modified.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use pincer_memory::{
    ChunkSettings, IndexSettings, MemoryError, SearchMode, SearchOptions, SyncReport,
    chunk_markdown,
};

/// Asserts that a sync says it rebuilt the index because `why`.
fn assert_rebuilt_because(report: &SyncReport, why: &str) {
    let reason = report.rebuilt.as_deref().unwrap_or("");
    assert!(reason.contains(why), "{report:?}");
}

fn opts() -> SearchOptions {
    SearchOptions {
        min_score: 0.0,
        ..SearchOptions::default()
    }
}

fn hashes(text: &str, settings: &ChunkSettings) -> HashSet<String> {
    chunk_markdown(text, settings)
        .iter()
        .map(|c| c.hash())
        .collect()
}

#[tokio::test]
async fn edit_rename_delete_reembed_only_what_changed() {
    let env = Env::with_corpus();
    let (index, embedder) = env.open_behaving(Behaviour::Ok).await;
    let first = index.sync().await.unwrap();
    let status = index.status().await.unwrap();
    assert_eq!(first.texts_embedded, embedder.texts());
    assert_eq!(status.embedded_chunks, status.chunks);
    assert_eq!(status.files, 5);

    // Nothing changed: nothing embedded, nothing written.
    let again = index.sync().await.unwrap();
    assert_eq!(
        (
            again.files_indexed,
            again.texts_embedded,
            again.chunks_written
        ),
        (0, 0, 0)
    );

    // Edit one section of one file: only its changed chunks are embedded.
    let edited = PROJECTS_MD.replace(
        "Monthly budget tracking",
        "Weekly budget tracking with a shared ledger",
    );
    let chunking = settings().chunking;
    let expected: HashSet<_> = hashes(&edited, &chunking)
        .difference(&hashes(PROJECTS_MD, &chunking))
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < chunk_markdown(&edited, &chunking).len());
    write(&env.ws(), "memory/projects.md", &edited);
    let before = embedder.texts();
    let report = index.sync().await.unwrap();
    assert_eq!(report.files_indexed, 1);
    assert_eq!(embedder.texts() - before, expected.len(), "{report:?}");
    assert_eq!(report.texts_embedded, expected.len());
    let hit = index.search("shared ledger", &opts()).await.unwrap();
    assert_eq!(hit.results[0].path, "memory/projects.md");

    // Rename: same chunk texts, no embedding at all; the old path is gone.
    std::fs::create_dir_all(env.ws().join("memory/archive")).unwrap();
    std::fs::rename(
        env.ws().join("memory/garden.md"),
        env.ws().join("memory/archive/garden.md"),
    )
    .unwrap();
    let before = embedder.texts();
    let report = index.sync().await.unwrap();
    assert_eq!(
        embedder.texts(),
        before,
        "rename must not re-embed: {report:?}"
    );
    assert_eq!((report.files_indexed, report.files_removed), (1, 1));
    assert!(report.embeddings_reused > 0);
    let results = index.search("tomatoes basil", &opts()).await.unwrap();
    assert_eq!(results.mode, SearchMode::Hybrid);
    assert_eq!(results.results[0].path, "memory/archive/garden.md");
    assert!(results.results.iter().all(|h| h.path != "memory/garden.md"));

    // Delete: gone from search and status.
    let snapshot = env.snapshot();
    std::fs::remove_file(env.ws().join("memory/2026-01-10.md")).unwrap();
    let report = index.sync().await.unwrap();
    assert_eq!(report.files_removed, 1);
    let results = index.search("Lisbon", &opts()).await.unwrap();
    assert!(
        results
            .results
            .iter()
            .all(|h| h.path != "memory/2026-01-10.md"),
        "{results:#?}"
    );
    assert_eq!(index.status().await.unwrap().files, 4);
    let mut snapshot = snapshot;
    snapshot.retain(|p, _| !p.ends_with("2026-01-10.md"));
    assert_eq!(env.snapshot(), snapshot, "the Markdown must not change");
}

#[tokio::test]
async fn model_change_reembeds_everything_and_chunking_change_rebuilds() {
    let env = Env::with_corpus();
    let (index, _) = env.open_behaving(Behaviour::Ok).await;
    index.sync().await.unwrap();
    let chunks = index.status().await.unwrap().chunks;
    drop(index);

    let second = TestEmbedder::new("test/hash-256-v2", Behaviour::Ok);
    let index = env.open(Some(second.clone()), settings()).await;
    // Before the sync, the stored vectors belong to another model: keyword-only.
    let results = index.search("Lisbon", &opts()).await.unwrap();
    assert!(
        matches!(results.mode, SearchMode::KeywordOnly { .. }),
        "{results:?}"
    );
    let report = index.sync().await.unwrap();
    assert_rebuilt_because(&report, "embedding model changed");
    let unique: HashSet<String> = index_texts(&env).into_iter().collect();
    assert_eq!(
        second.texts(),
        unique.len() + 1,
        "every chunk text once, plus the query"
    );
    let status = index.status().await.unwrap();
    assert_eq!((status.chunks, status.embedded_chunks), (chunks, chunks));
    assert_eq!(status.index_embedder.as_deref(), Some("test/hash-256-v2"));
    drop(index);

    let bigger = IndexSettings {
        chunking: ChunkSettings {
            max_tokens: 400,
            overlap_tokens: 80,
        },
        ..settings()
    };
    let index = env.open(Some(second.clone()), bigger).await;
    let report = index.sync().await.unwrap();
    assert_rebuilt_because(&report, "chunking changed");
    let status = index.status().await.unwrap();
    assert_eq!(status.chunks, 5, "one chunk per small file now");
    assert_eq!(status.embedded_chunks, 5);
    assert_eq!(
        index.search("Lisbon", &opts()).await.unwrap().results[0].path,
        "memory/2026-01-10.md"
    );
}

/// The embedding inputs of the corpus (for counting unique texts).
fn index_texts(env: &Env) -> Vec<String> {
    let chunking = settings().chunking;
    let mut out = Vec::new();
    for (_, bytes) in env.snapshot() {
        let text = String::from_utf8(bytes).unwrap();
        out.extend(chunk_markdown(&text, &chunking).iter().map(|c| c.hash()));
    }
    out
}

#[tokio::test]
async fn corrupt_database_is_moved_aside_and_rebuilt() {
    let env = Env::with_corpus();
    std::fs::create_dir_all(env.db().parent().unwrap()).unwrap();
    std::fs::write(env.db(), vec![0x5a; 8192]).unwrap();
    let index = env.open_hashed(settings()).await;
    let status = index.status().await.unwrap();
    let moved = status.recovered_from.expect("recovered");
    assert!(moved.to_string_lossy().contains(".corrupt."));
    assert_eq!(
        std::fs::read(&moved).unwrap(),
        vec![0x5a; 8192],
        "the old file is kept"
    );
    index.sync().await.unwrap();
    let results = index.search("马拉松", &opts()).await.unwrap();
    assert_eq!(results.results[0].path, "memory/zh/家庭与工作.md");
}

#[tokio::test]
async fn bad_files_are_reported_and_the_rest_indexed() {
    let env = Env::with_corpus();
    write(&env.ws(), "memory/blob.md", b"PNG\0\0\x01binary stuff");
    write(
        &env.ws(),
        "memory/huge.md",
        "huge notes about zeppelins\n".repeat(400),
    );
    write(
        &env.ws(),
        "memory/latin1.md",
        b"# Breakfast\ncaf\xe9 au lait with a croissant\n",
    );
    write(&env.ws(), "memory/notes.txt", "not markdown: zeppelins");
    #[cfg(unix)]
    {
        let outside = env.dir.path().join("secret.md");
        std::fs::write(&outside, "secret zeppelins").unwrap();
        std::os::unix::fs::symlink(&outside, env.ws().join("memory/link.md")).unwrap();
    }
    let before = env.snapshot();
    let small = IndexSettings {
        max_file_bytes: 4096,
        ..settings()
    };
    let index = env.open_hashed(small).await;
    let report = index.sync().await.unwrap();
    let status = index.status().await.unwrap();
    let problem = |p: &str| {
        status
            .problems
            .iter()
            .find(|f| f.path == p)
            .map(|f| (f.status.as_str(), f.problem.as_str()))
    };
    assert!(
        matches!(problem("memory/blob.md"), Some(("skipped", p)) if p.contains("binary")),
        "{status:#?}"
    );
    assert!(
        matches!(problem("memory/huge.md"), Some(("skipped", p)) if p.contains("too large")),
        "{status:#?}"
    );
    assert!(
        matches!(problem("memory/latin1.md"), Some(("lossy", p)) if p.contains("UTF-8")),
        "{status:#?}"
    );
    #[cfg(unix)]
    assert!(
        matches!(problem("memory/link.md"), Some(("skipped", p)) if p.contains("outside")),
        "{status:#?}"
    );
    assert_eq!(status.files, 6, "5 good files + the lossy one: {report:?}");
    let results = index.search("croissant", &opts()).await.unwrap();
    assert_eq!(results.results[0].path, "memory/latin1.md");
    assert!(results.results[0].snippet.contains("caf\u{fffd} au lait"));
    let results = index.search("zeppelins", &opts()).await.unwrap();
    assert!(results.results.is_empty(), "{results:#?}");
    assert!(
        !index
            .search("Lisbon", &opts())
            .await
            .unwrap()
            .results
            .is_empty()
    );
    assert_eq!(env.snapshot(), before, "the Markdown must not change");
}

#[tokio::test]
async fn failing_embedder_leaves_keyword_search_working() {
    let env = Env::with_corpus();
    let (index, _) = env.open_behaving(Behaviour::Fail).await;
    let report = index.sync().await.unwrap();
    assert!(report.embed_failures > 0);
    let status = index.status().await.unwrap();
    assert_eq!(status.embedded_chunks, 0);
    assert!(
        status
            .embed_error
            .as_deref()
            .unwrap_or("")
            .contains("connection refused"),
        "{status:#?}"
    );
    assert!(
        status.search_mode.starts_with("keyword-only"),
        "{}",
        status.search_mode
    );
    let results = index.search("Lisbon", &opts()).await.unwrap();
    assert!(
        matches!(&results.mode, SearchMode::KeywordOnly { reason } if reason.contains("could not be embedded"))
    );
    assert_eq!(results.results[0].path, "memory/2026-01-10.md");
    drop(index);

    // A working provider later fills the gaps on the next sync.
    let (index, _) = env.open_behaving(Behaviour::Ok).await;
    let report = index.sync().await.unwrap();
    assert!(report.texts_embedded > 0);
    let status = index.status().await.unwrap();
    assert_eq!(status.embedded_chunks, status.chunks);
    assert_eq!(status.embed_error, None);
}

#[tokio::test]
async fn wrong_dimensions_leave_those_chunks_keyword_only() {
    let env = Env::with_corpus();
    let (index, _) = env.open_behaving(Behaviour::WrongDimsFor("tomatoes")).await;
    index.sync().await.unwrap();
    let status = index.status().await.unwrap();
    assert_eq!(status.embedded_chunks + 1, status.chunks, "{status:#?}");
    assert!(
        status
            .embed_error
            .as_deref()
            .unwrap_or("")
            .contains("dimension"),
        "{status:#?}"
    );
    assert_eq!(status.search_mode, "hybrid");
    let results = index.search("basil planted", &opts()).await.unwrap();
    assert_eq!(results.mode, SearchMode::Hybrid);
    assert_eq!(
        results.results[0].path, "memory/garden.md",
        "text score carries it"
    );
}

#[tokio::test]
async fn locked_database_fails_sync_clearly_and_search_still_answers() {
    let env = Env::with_corpus();
    let quick = IndexSettings {
        busy_timeout: Duration::from_millis(200),
        ..settings()
    };
    let index = env.open(None, quick).await;
    index.sync().await.unwrap();
    write(
        &env.ws(),
        "memory/new.md",
        "# New\nfresh note about kayaks\n",
    );
    let other = rusqlite::Connection::open(env.db()).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; DELETE FROM meta WHERE key = 'nothing';")
        .unwrap();
    let err = index.sync().await.unwrap_err();
    assert!(matches!(err, MemoryError::Locked { .. }), "{err:?}");
    assert!(err.to_string().contains("locked"));
    let results = index.search("Lisbon", &opts()).await.unwrap();
    assert_eq!(results.results[0].path, "memory/2026-01-10.md");
    other.execute_batch("ROLLBACK").unwrap();
    index.sync().await.unwrap();
    assert_eq!(
        index.search("kayaks", &opts()).await.unwrap().results[0].path,
        "memory/new.md"
    );
}

/// Finding 8 of the security review: the index holds the memory's text, so the database
/// and SQLite's `-wal` / `-shm` files beside it are the owner's alone (0600), and the
/// directories the index creates are 0700, whatever the umask.
#[cfg(unix)]
#[tokio::test]
async fn the_index_files_and_directories_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let env = Env::with_corpus();
    let index = env.open_hashed(settings()).await;
    index.sync().await.unwrap();
    let db = env.db();
    let mut modes = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = std::path::PathBuf::from(format!("{}{suffix}", db.display()));
        modes.push((suffix, mode(&path)));
    }
    modes.push(("dir", mode(db.parent().unwrap())));
    assert_eq!(
        modes,
        vec![
            ("", 0o600),
            ("-wal", 0o600),
            ("-shm", 0o600),
            ("dir", 0o700)
        ]
    );
}

#[tokio::test]
async fn a_failing_embedder_is_called_once_per_sync_and_skipped_by_searches_for_a_while() {
    let env = Env::with_corpus();
    let embedder = TestEmbedder::new("test/hash-256", Behaviour::Fail);
    let one_per_batch = IndexSettings {
        embed_batch_size: 1,
        ..settings()
    };
    let index = env.open(Some(embedder.clone()), one_per_batch).await;
    let report = index.sync().await.unwrap();
    let chunks = index.status().await.unwrap().chunks;
    assert!(chunks > 1, "the corpus has several chunks");
    assert_eq!(report.embed_failures, chunks, "every chunk is marked");
    assert_eq!(
        embedder.calls.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "after one failed batch the rest are not sent"
    );

    // Searches and the syncs before them skip the embedder while it cools down.
    assert!(index.sync_for_search().await.unwrap().is_some());
    let results = index.search("Lisbon", &opts()).await.unwrap();
    assert_eq!(embedder.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let SearchMode::KeywordOnly { reason } = &results.mode else {
        panic!("{results:?}");
    };
    assert_eq!(
        reason,
        "the query could not be embedded: the embedding provider failed 0 s ago (embedding provider failed: connection refused (test)); searching by keyword until it answers again"
    );
    assert_eq!(results.results[0].path, "memory/2026-01-10.md");

    // A background sync still tries.
    index.sync().await.unwrap();
    assert_eq!(embedder.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_search_syncs_without_retrying_a_failing_embedder_and_stops_skipping_it_later() {
    let env = Env::with_corpus();
    let embedder = TestEmbedder::new("test/hash-256", Behaviour::Fail);
    let short = IndexSettings {
        embedder_cooldown: Duration::ZERO,
        ..settings()
    };
    let index = env.open(Some(embedder.clone()), short).await;
    let report = index.sync_for_search().await.unwrap().unwrap();
    assert!(report.embed_failures > 0);
    // No cooldown: the query is tried (and fails) again.
    let results = index.search("Lisbon", &opts()).await.unwrap();
    let SearchMode::KeywordOnly { reason } = &results.mode else {
        panic!("{results:?}");
    };
    assert_eq!(
        reason,
        "the query could not be embedded: embedding provider failed: connection refused (test)"
    );
    assert_eq!(embedder.calls.load(std::sync::atomic::Ordering::SeqCst), 2);
}
