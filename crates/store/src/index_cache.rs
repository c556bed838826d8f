//! The parsed `sessions.json` kept in memory between operations of one [`SessionStore`]
//! (a gateway runs every turn through the same store; parsing the index on every turn
//! was most of a turn's store cost).
//!
//! A cached copy is used only while the file provably has not changed, in this process or
//! any other. Two checks, both needed:
//! - a **generation** counter in `sessions.json.lock`, bumped under the lock by every
//!   writer of this code base *before and after* it replaces the index (an odd value means
//!   a write is in progress; a reader that raced one holds a generation that no longer
//!   matches);
//! - a **stamp** of the file (device, inode, size, mtime and ctime in ns), which catches
//!   writers that do not know about the counter (a hand edit, another tool).
//!
//! Either alone has a hole: the stamp's clock is coarse and inode numbers are reused, and
//! the counter misses foreign writers. Off Unix there is no stamp and nothing is cached.
//!
//! [`SessionStore`]: crate::SessionStore

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::index::SessionIndex;

/// Which version of the index file a reader saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexVersion {
    generation: u64,
    stamp: Stamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// The last index this store read or wrote, with its version.
#[derive(Debug, Default)]
pub(crate) struct IndexCache(Mutex<Option<(IndexVersion, Arc<SessionIndex>)>>);

impl IndexCache {
    /// The cached index if `version` is what was cached.
    pub(crate) fn get(&self, version: Option<IndexVersion>) -> Option<Arc<SessionIndex>> {
        let version = version?;
        let cached = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &*cached {
            Some((v, index)) if *v == version => Some(Arc::clone(index)),
            _ => None,
        }
    }

    /// Takes the cached index out if `version` is what was cached (a writer under the lock
    /// changes it in place instead of copying it, and puts it back when done).
    pub(crate) fn take(&self, version: Option<IndexVersion>) -> Option<SessionIndex> {
        let version = version?;
        let mut cached = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match cached.take() {
            Some((v, index)) if v == version => Some(Arc::unwrap_or_clone(index)),
            _ => None,
        }
    }

    /// Remembers `index` as the content of `version` (nothing when it is unknown, or a
    /// write was in progress when it was taken).
    pub(crate) fn put(&self, version: Option<IndexVersion>, index: SessionIndex) {
        let mut cached = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *cached = match version {
            Some(v) if v.generation % 2 == 0 => Some((v, Arc::new(index))),
            _ => None,
        };
    }

    /// Forgets the cached index (after a failed write, whose outcome is unknown).
    pub(crate) fn clear(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The version of `index_path` now, with the generation read from `lock_file`.
pub(crate) fn version_of(lock_file: &File, index_path: &Path) -> Option<IndexVersion> {
    let generation = read_generation(lock_file)?;
    Some(IndexVersion {
        generation,
        stamp: stamp(index_path)?,
    })
}

/// [`version_of`] for a reader without the lock (opens the lock file itself).
pub(crate) fn version_unlocked(lock_path: &Path, index_path: &Path) -> Option<IndexVersion> {
    let file = File::open(lock_path).ok()?;
    version_of(&file, index_path)
}

/// The generation in the lock file: its text as a number, 0 when it is empty.
pub(crate) fn read_generation(mut file: &File) -> Option<u64> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    let text = text.trim();
    if text.is_empty() {
        Some(0)
    } else {
        text.parse().ok()
    }
}

/// Writes `generation` into the lock file (held by the caller).
pub(crate) fn write_generation(mut file: &File, generation: u64) -> std::io::Result<()> {
    let text = format!("{generation}\n");
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.set_len(text.len() as u64)
}

#[cfg(unix)]
fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
    Some(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns: ns(m.mtime(), m.mtime_nsec()),
        ctime_ns: ns(m.ctime(), m.ctime_nsec()),
    })
}

#[cfg(not(unix))]
fn stamp(_path: &Path) -> Option<Stamp> {
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn generation_round_trips_and_defaults_to_zero() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert_eq!(read_generation(&file), Some(0));
        write_generation(&file, 12345).unwrap();
        write_generation(&file, 7).unwrap();
        assert_eq!(read_generation(&file), Some(7));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "7\n");
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(
            read_generation(&file),
            None,
            "unknown content: never cached"
        );
    }

    #[test]
    fn a_version_in_the_middle_of_a_write_is_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let index_path = dir.path().join("sessions.json");
        std::fs::write(&index_path, "{}").unwrap();
        let index = SessionIndex::load(&index_path).unwrap();
        let cache = IndexCache::default();
        let odd = Some(IndexVersion {
            generation: 3,
            stamp: stamp(&index_path).unwrap(),
        });
        cache.put(odd, index.clone());
        assert!(cache.get(odd).is_none());
        let even = Some(IndexVersion {
            generation: 4,
            stamp: stamp(&index_path).unwrap(),
        });
        cache.put(even, index);
        assert!(cache.get(even).is_some());
        assert!(cache.take(even).is_some());
        assert!(cache.get(even).is_none(), "taken out");
        assert!(cache.get(None).is_none());
    }
}
