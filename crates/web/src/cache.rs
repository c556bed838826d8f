//! web_fetch's on-disk cache: one JSON file per (URL, extract mode) under the cache
//! directory, named by the SHA-256 of the key, written atomically and privately (0600),
//! valid for a TTL, the directory held under a total size by evicting the oldest entries.
//! A corrupt, expired or unreadable entry is a miss (and is removed); a failure to write is
//! logged, never the fetch's failure. File work runs on tokio's blocking pool.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A cache directory with its limits.
#[derive(Debug, Clone)]
pub struct DiskCache {
    dir: PathBuf,
    ttl: Duration,
    max_bytes: u64,
}

/// An entry as stored.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored<T> {
    /// When it was written, in milliseconds since the Unix epoch.
    stored_at_ms: u64,
    value: T,
}

/// Why an entry could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("cannot write the web cache entry {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot encode the web cache entry: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("the web cache's file work did not finish: {0}")]
    Join(String),
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl DiskCache {
    /// A cache in `dir` (created on the first write, 0700) whose entries live `ttl` and
    /// whose files together stay under `max_bytes`.
    pub fn new(dir: impl Into<PathBuf>, ttl: Duration, max_bytes: u64) -> Self {
        Self {
            dir: dir.into(),
            ttl,
            max_bytes,
        }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file name for the key made of `parts` (hex SHA-256 of the parts, each ended by a
    /// NUL so `("ab", "c")` and `("a", "bc")` differ).
    pub fn key(parts: &[&str]) -> String {
        let mut hash = Sha256::new();
        for part in parts {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        let digest = hash.finalize();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}.json")
    }

    /// The path of the entry `key` (from [`Self::key`]).
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The entry `key` if it is there, readable, within the size bound and younger than the
    /// TTL. Anything else is a miss; a corrupt or expired file is removed.
    pub async fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let path = self.path(key);
        let meta = tokio::fs::metadata(&path).await.ok()?;
        if !meta.is_file() {
            return None;
        }
        if meta.len() > self.max_bytes {
            let _ = tokio::fs::remove_file(&path).await;
            return None;
        }
        let bytes = tokio::fs::read(&path).await.ok()?;
        let Ok(stored) = serde_json::from_slice::<Stored<T>>(&bytes) else {
            tracing::debug!(path = %path.display(), "web cache: corrupt entry removed");
            let _ = tokio::fs::remove_file(&path).await;
            return None;
        };
        let age = now_ms().saturating_sub(stored.stored_at_ms);
        if u128::from(age) >= self.ttl.as_millis() {
            let _ = tokio::fs::remove_file(&path).await;
            return None;
        }
        Some(stored.value)
    }

    /// Stores `value` as `key` (replacing it atomically), then evicts the oldest entries
    /// while the directory holds more than the size bound. An entry larger than the whole
    /// bound is not stored.
    pub async fn put<T: Serialize>(&self, key: &str, value: &T) -> Result<(), CacheError> {
        let bytes = serde_json::to_vec(&Stored {
            stored_at_ms: now_ms(),
            value,
        })?;
        if bytes.len() as u64 > self.max_bytes {
            return Ok(());
        }
        let path = self.path(key);
        let dir = self.dir.clone();
        let max_bytes = self.max_bytes;
        tokio::task::spawn_blocking(move || write_and_evict(&dir, &path, &bytes, max_bytes))
            .await
            .map_err(|e| CacheError::Join(e.to_string()))?
    }
}

/// Writes the entry and trims the directory (blocking).
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: DiskCache::put"
)]
fn write_and_evict(
    dir: &Path,
    path: &Path,
    bytes: &[u8],
    max_bytes: u64,
) -> Result<(), CacheError> {
    // Not durable: a cache entry lost to a power cut is refetched.
    pincer_base::AtomicWrite::new()
        .durable(false)
        .write(path, bytes)
        .map_err(|source| CacheError::Write {
            path: path.to_owned(),
            source,
        })?;
    evict(dir, path, max_bytes);
    Ok(())
}

/// Removes the oldest entries (by modification time) until the entries together take at
/// most `max_bytes`; `keep` (the one just written) goes last.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: DiskCache::put"
)]
fn evict(dir: &Path, keep: &Path, max_bytes: u64) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(bool, SystemTime, u64, PathBuf)> = read
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_str()?;
            if name.starts_with('.') || !name.ends_with(".json") {
                return None;
            }
            let meta = entry.metadata().ok()?;
            meta.is_file().then(|| {
                let modified = meta.modified().unwrap_or(UNIX_EPOCH);
                (path == keep, modified, meta.len(), path)
            })
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.2).sum();
    // Oldest first; the new entry sorts after every other.
    entries.sort_by_key(|e| (e.0, e.1));
    for (_, _, len, path) in entries {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(len);
        }
    }
}
