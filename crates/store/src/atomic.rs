//! Atomic state files: pincer-base's atomic write (temp file in the same directory, fsync,
//! rename over the target, fsync the directory) with the store's typed errors, and JSON
//! read/write on top. Readers see the old or the new content, never a mix.

use std::fs;
use std::path::Path;

use pincer_base::{AtomicWrite, FileMode};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Result, StoreError};

/// Replaces `path` with `bytes` atomically ([`pincer_base::AtomicWrite`]). `mode` sets Unix
/// permissions on the new file; `None` means private (0600), like everything Pincer keeps
/// under its home. The mode is applied before any byte is written. Missing parent
/// directories are created 0700.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    write_atomic_with(path, bytes, mode, true)
}

/// [`write_atomic`], with the fsyncs only when `durable`. Without them the replacement is
/// still atomic for every reader and survives a crash of the process, but a power loss
/// may bring back the previous content: for data that is cheap to lose and written often.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    durable: bool,
) -> Result<()> {
    let mode = mode.map_or(FileMode::Private, FileMode::Exact);
    AtomicWrite::new()
        .mode(mode)
        .durable(durable)
        .write(path, bytes)
        .map_err(|e| StoreError::io(path, e))
}

/// Fsyncs a directory so a rename or a new file in it survives a crash (no-op off Unix).
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    pincer_base::atomic::sync_dir(dir).map_err(|e| StoreError::io(dir, e))
}

/// Reads and parses a JSON file; errors name the file. A missing file is an `Io` error
/// with kind `NotFound`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = fs::read(path).map_err(|e| StoreError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|source| StoreError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Serialises `value` as pretty JSON (with a trailing newline) and writes it atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T, mode: Option<u32>) -> Result<()> {
    write_json_with(path, value, mode, true)
}

/// [`write_json`] with [`write_atomic_with`]'s durability choice.
pub(crate) fn write_json_with<T: Serialize + ?Sized>(
    path: &Path,
    value: &T,
    mode: Option<u32>,
    durable: bool,
) -> Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StoreError::Serialize {
        path: path.to_path_buf(),
        source,
    })?;
    bytes.push(b'\n');
    write_atomic_with(path, &bytes, mode, durable)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn writes_replaces_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.json");
        write_json(&p, &serde_json::json!({"a": 1}), Some(0o600)).unwrap();
        write_json(&p, &serde_json::json!({"a": 2}), Some(0o600)).unwrap();
        let v: serde_json::Value = read_json(&p).unwrap();
        assert_eq!(v, serde_json::json!({"a": 2}));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let leftovers = fs::read_dir(p.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temp files left behind");
    }

    #[test]
    fn read_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.json");
        fs::write(&p, "{oops").unwrap();
        let err = read_json::<serde_json::Value>(&p).unwrap_err().to_string();
        assert!(
            err.contains("bad.json") && err.contains("invalid JSON"),
            "{err}"
        );
    }
}
