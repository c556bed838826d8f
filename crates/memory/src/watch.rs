//! Keeping the index fresh: a file watcher over `MEMORY.md` and `memory/` with a 1.5 s
//! debounce (OpenClaw's) that syncs after changes, plus a sync when it starts. Editors
//! save by rename and events get coalesced or lost (inotify limits), so events only say
//! "something changed": the sync rescans and compares hashes. If no watcher can be
//! created the same task falls back to periodic rescans. Dropping [`MemoryWatcher`] stops
//! the task and the watcher thread; nothing outlives it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify_debouncer_full::notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::index::MemoryIndex;

/// Watcher settings.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// Quiet time after the last change before syncing (default 1.5 s).
    pub debounce: Duration,
    /// Rescan interval when no file watcher is available (default 60 s).
    pub poll_interval: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(1500),
            poll_interval: Duration::from_secs(60),
        }
    }
}

/// A running watcher; stops when dropped.
#[derive(Debug)]
pub struct MemoryWatcher {
    task: JoinHandle<()>,
    polling: bool,
}

impl MemoryWatcher {
    /// Starts watching `index`'s workspace: an initial sync, then a sync after every burst
    /// of changes. Must be called inside a Tokio runtime.
    pub fn start(index: MemoryIndex, settings: WatchSettings) -> Self {
        let (tx, rx) = mpsc::unbounded_channel::<()>();
        let debouncer = new_debouncer(
            settings.debounce,
            None,
            move |result: DebounceEventResult| {
                let relevant = match &result {
                    Ok(events) => events
                        .iter()
                        .any(|e| e.paths.iter().any(|p| is_memory_path(p))),
                    Err(_) => true, // lost events: rescan to be safe
                };
                if relevant {
                    // The receiver is gone only when the watcher is stopping.
                    tx.send(()).ok();
                }
            },
        );
        let polling = debouncer.is_err();
        let task = match debouncer {
            Ok(debouncer) => tokio::spawn(run_watched(index, debouncer, rx)),
            Err(e) => {
                tracing::warn!(error = %e, "no file watcher for memory; rescanning periodically");
                tokio::spawn(run_polling(index, settings.poll_interval))
            }
        };
        Self { task, polling }
    }

    /// Whether this fell back to periodic rescans.
    pub fn is_polling(&self) -> bool {
        self.polling
    }
}

impl Drop for MemoryWatcher {
    fn drop(&mut self) {
        // Aborting drops the debouncer the task owns, which stops its thread. A sync in
        // progress is cut at an await point; its database work is one transaction.
        self.task.abort();
    }
}

/// How often a workspace that cannot be watched is rescanned.
const POLL_WHEN_UNWATCHABLE: Duration = Duration::from_secs(60);

type Debouncer = notify_debouncer_full::Debouncer<
    notify_debouncer_full::notify::RecommendedWatcher,
    notify_debouncer_full::RecommendedCache,
>;

async fn run_watched(
    index: MemoryIndex,
    mut debouncer: Debouncer,
    mut rx: mpsc::UnboundedReceiver<()>,
) {
    let root = index.workspace().to_path_buf();
    // The root non-recursively (MEMORY.md, memory/ appearing), memory/ recursively once it
    // exists: watching the whole workspace could exhaust inotify watches on big trees.
    if let Err(e) = debouncer.watch(&root, RecursiveMode::NonRecursive) {
        // (e.g. the workspace does not exist yet): rescans still find what appears.
        tracing::warn!(error = %e, root = %root.display(), "cannot watch the memory workspace; rescanning periodically");
        drop(debouncer);
        return run_polling(index, POLL_WHEN_UNWATCHABLE).await;
    }
    let mut watching_dir = watch_memory_dir(&mut debouncer, &root, false);
    sync(&index).await;
    while rx.recv().await.is_some() {
        while rx.try_recv().is_ok() {} // one sync covers a burst
        watching_dir = watch_memory_dir(&mut debouncer, &root, watching_dir);
        sync(&index).await;
    }
}

/// Adds the recursive watch on `memory/` when it exists and is not yet watched.
fn watch_memory_dir(debouncer: &mut Debouncer, root: &Path, watching: bool) -> bool {
    let dir: PathBuf = root.join("memory");
    if !dir.is_dir() {
        return false;
    }
    if watching {
        return true;
    }
    match debouncer.watch(&dir, RecursiveMode::Recursive) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, dir = %dir.display(), "cannot watch memory/");
            false
        }
    }
}

async fn run_polling(index: MemoryIndex, every: Duration) {
    loop {
        sync(&index).await;
        tokio::time::sleep(every.max(Duration::from_millis(100))).await;
    }
}

async fn sync(index: &MemoryIndex) {
    match index.sync().await {
        Ok(report) => tracing::debug!(?report, "memory synced"),
        Err(e) => tracing::warn!(error = %e, "memory sync failed; retried on the next change"),
    }
}

/// Whether a changed path can affect memory (`MEMORY.md`, `memory.md`, `memory/...`).
fn is_memory_path(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "memory")
        || path
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("memory.md"))
}
