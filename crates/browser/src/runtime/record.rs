//! The profile's shared files: `runtime.json` (the running browser, written atomically and
//! 0600, read by every process that wants to reuse it), the `lock` file taken around
//! check-or-start and stop, and `last-used`, whose modification time is the idle clock.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pincer_base::lock::HeldLock;

use crate::RuntimeError;

/// The most `runtime.json` may be; a bigger file is not ours and is treated as stale.
const MAX_RECORD: u64 = 64 * 1024;

/// What `runtime.json` holds about the running browser.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeRecord {
    /// Chromium's browser process (also its process group).
    pub pid: u32,
    /// Its start time (`/proc/<pid>/stat`), telling it from a later process with its pid.
    #[serde(default)]
    pub pid_start: Option<u64>,
    /// The supervisor that started it; `None` when it is a direct child of a long-running
    /// process (a gateway without a supervisor).
    #[serde(default)]
    pub supervisor_pid: Option<u32>,
    #[serde(default)]
    pub supervisor_start: Option<u64>,
    pub ws_url: String,
    pub http_base: String,
    pub executable: String,
    pub headless: bool,
    /// ISO 8601 UTC.
    pub started_at: String,
}

fn state_error(path: &Path, reason: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::State {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Creates the profile directory (0700) if missing.
pub(crate) async fn ensure_dir(dir: &Path) -> Result<(), RuntimeError> {
    let owned = dir.to_path_buf();
    #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
    let made = tokio::task::spawn_blocking(move || pincer_base::create_private_dir_all(&owned))
        .await
        .map_err(|e| state_error(dir, e))?;
    made.map_err(|e| state_error(dir, e))
}

/// The record, if there is a readable one. A missing file is `None`; so is a malformed or
/// oversized one (whatever wrote it, it describes no browser we can use).
pub(crate) async fn read(path: &Path) -> Result<Option<RuntimeRecord>, RuntimeError> {
    let file = match tokio::fs::File::open(path).await {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(state_error(path, e)),
    };
    let mut bytes = Vec::new();
    use tokio::io::AsyncReadExt as _;
    file.take(MAX_RECORD + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| state_error(path, e))?;
    if bytes.len() as u64 > MAX_RECORD {
        return Ok(None);
    }
    Ok(serde_json::from_slice(&bytes).ok())
}

/// Replaces the record atomically (temp file + rename, 0600).
pub(crate) async fn write(path: &Path, record: &RuntimeRecord) -> Result<(), RuntimeError> {
    let bytes = serde_json::to_vec_pretty(record).map_err(|e| state_error(path, e))?;
    let owned = path.to_path_buf();
    #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
    let written = tokio::task::spawn_blocking(move || {
        pincer_base::AtomicWrite::new()
            .durable(false)
            .write(&owned, &bytes)
    })
    .await
    .map_err(|e| state_error(path, e))?;
    written.map_err(|e| state_error(path, e))
}

/// Removes the record; a missing one is fine.
pub(crate) async fn remove(path: &Path) -> Result<(), RuntimeError> {
    match tokio::fs::remove_file(path).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(state_error(path, e)),
    }
}

/// Removes the record only if it still names browser `pid` (another process may have
/// replaced it with a newer browser's).
pub(crate) async fn remove_if_pid(path: &Path, pid: u32) {
    if let Ok(Some(record)) = read(path).await
        && record.pid == pid
    {
        let _ = remove(path).await;
    }
}

/// Takes the profile's lock file, waiting at most `timeout` for another process to release
/// it. Held until the returned guard drops (or this process dies).
pub(crate) async fn lock(path: &Path, timeout: Duration) -> Result<HeldLock, RuntimeError> {
    let owned: PathBuf = path.to_path_buf();
    #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
    let taken = tokio::task::spawn_blocking(move || -> std::io::Result<HeldLock> {
        let file = pincer_base::private_open_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&owned)?;
        pincer_base::lock::lock_within(&file, timeout)?;
        Ok(HeldLock::new(file))
    })
    .await
    .map_err(|e| state_error(path, e))?;
    taken.map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            state_error(
                path,
                pincer_base::lock::LockTimeout {
                    path: path.to_path_buf(),
                    waited: timeout,
                },
            )
        } else {
            state_error(path, e)
        }
    })
}

/// Sets `last-used`'s modification time to now (creating it). Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: touch_now and ProfileRuntime::touch"
)]
pub(crate) fn touch_blocking(path: &Path) -> std::io::Result<()> {
    let file = pincer_base::private_open_options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    file.set_modified(SystemTime::now())
}

/// [`touch_blocking`] on the blocking pool.
pub(crate) async fn touch_now(path: &Path) {
    let owned = path.to_path_buf();
    let _ = tokio::task::spawn_blocking(move || touch_blocking(&owned)).await;
}

/// How long ago `last-used` was touched; `None` when it is missing or unreadable.
pub(crate) async fn idle_for(path: &Path) -> Option<Duration> {
    let modified = tokio::fs::metadata(path).await.ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn records_round_trip_and_junk_is_no_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runtime.json");
        assert_eq!(read(&path).await.unwrap(), None);
        let record = RuntimeRecord {
            pid: 42,
            pid_start: Some(7),
            supervisor_pid: None,
            supervisor_start: None,
            ws_url: "ws://127.0.0.1:1/devtools/browser/x".into(),
            http_base: "http://127.0.0.1:1".into(),
            executable: "/usr/bin/chromium".into(),
            headless: true,
            started_at: "2026-11-27T19:00:00Z".into(),
        };
        write(&path, &record).await.unwrap();
        assert_eq!(read(&path).await.unwrap(), Some(record));
        remove_if_pid(&path, 43).await;
        assert!(read(&path).await.unwrap().is_some());
        remove_if_pid(&path, 42).await;
        assert_eq!(read(&path).await.unwrap(), None);
        for junk in [&b"{"[..], b"[]", b"{\"pid\":\"x\"}", &vec![b' '; 70_000]] {
            tokio::fs::write(&path, junk).await.unwrap();
            assert_eq!(read(&path).await.unwrap(), None);
        }
    }
}
