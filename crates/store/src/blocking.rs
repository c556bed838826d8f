//! The store's async face: the one seam through which async code (the gateway's server,
//! turns, channels) reaches the store. Every store call does file I/O — appends, fsyncs,
//! atomic renames, the index lock — so [`SessionStore::run`] runs it on tokio's blocking
//! pool, never on a runtime worker thread, and [`on_blocking_pool`] does the same for other
//! file work. The synchronous API stays for code that is already off the runtime (the CLI's
//! commands, work inside these seams).

use crate::error::{Result, StoreError};
use crate::sessions::SessionStore;

impl SessionStore {
    /// Runs `work` on this store on the blocking pool and waits for it without blocking the
    /// runtime. `work` gets its own clone of the store (clones share the index cache).
    pub async fn run<T, F>(&self, work: F) -> Result<T>
    where
        F: FnOnce(&SessionStore) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let store = self.clone();
        on_blocking_pool(move || work(&store)).await
    }
}

/// Runs `work` (blocking file work returning a store result) on tokio's blocking pool.
pub async fn on_blocking_pool<T, F>(work: F) -> Result<T>
where
    F: FnOnce() -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
}
