//! Atomic file replacement: write a temporary file in the target's directory, fsync it,
//! rename it over the target, fsync the directory. Readers see the old or the new content,
//! never a mix, and after a crash the file is one or the other.
//!
//! The temporary file is `.<name>.tmp.<8 hex>` (the store's retention recognises and
//! deletes the ones a crash left) and is removed when any step fails. Missing parent
//! directories are created 0700. Blocking: call it from `spawn_blocking` in async code.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// The permissions the new file gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// 0600, like everything under `$PINCER_HOME` (the umask can only narrow it).
    Private,
    /// Exactly this Unix mode, whatever the umask.
    Exact(u32),
    /// The replaced file's permissions; a new file gets the umask's default. For files
    /// that are the user's own (a tool editing a project file).
    KeepExisting,
}

/// How to replace a file; [`AtomicWrite::new`] is private and durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicWrite {
    mode: FileMode,
    durable: bool,
}

impl Default for AtomicWrite {
    fn default() -> Self {
        Self::new()
    }
}

impl AtomicWrite {
    /// Private (0600) and durable.
    pub const fn new() -> Self {
        Self {
            mode: FileMode::Private,
            durable: true,
        }
    }

    /// The new file's permissions.
    pub const fn mode(mut self, mode: FileMode) -> Self {
        self.mode = mode;
        self
    }

    /// With `false`, no fsyncs: the replacement is still atomic for every reader and
    /// survives a crash of the process, but a power loss may bring back the previous
    /// content. For data that is cheap to lose and written often.
    pub const fn durable(mut self, durable: bool) -> Self {
        self.durable = durable;
        self
    }

    /// Replaces `path` with `bytes`. Errors are the failing step's, unannotated.
    pub fn write(self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name")
        })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        crate::create_private_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.tmp.{}",
            name.to_string_lossy(),
            crate::id::hex_id8()
        ));
        let result = self.write_tmp(&tmp, path, bytes).and_then(|()| {
            fs::rename(&tmp, path)?;
            if self.durable { sync_dir(dir) } else { Ok(()) }
        });
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    fn write_tmp(self, tmp: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut opts = match self.mode {
            FileMode::Private => crate::private_open_options(),
            FileMode::Exact(_mode) => {
                #[allow(unused_mut)]
                let mut opts = OpenOptions::new();
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    opts.mode(_mode);
                }
                opts
            }
            FileMode::KeepExisting => OpenOptions::new(),
        };
        let mut file = opts.write(true).create_new(true).open(tmp)?;
        match self.mode {
            FileMode::Private => {}
            FileMode::Exact(_mode) => {
                // The umask may have narrowed the mode at creation; state it exactly.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    file.set_permissions(fs::Permissions::from_mode(_mode))?;
                }
            }
            FileMode::KeepExisting => {
                if let Ok(meta) = fs::metadata(target) {
                    file.set_permissions(meta.permissions())?;
                }
            }
        }
        file.write_all(bytes)?;
        if self.durable {
            file.sync_all()?;
        }
        Ok(())
    }
}

/// Replaces `path` with `bytes`, private (0600) and durable: [`AtomicWrite::new`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    AtomicWrite::new().write(path, bytes)
}

/// Fsyncs a directory so a rename or a new file in it survives a crash (no-op off Unix).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_replaces_and_leaves_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(names(path.parent().unwrap()), ["state.json"]);
        #[cfg(unix)]
        {
            assert_eq!(mode_of(&path), 0o600);
            assert_eq!(mode_of(&tmp.path().join("a")), 0o700);
            assert_eq!(mode_of(&tmp.path().join("a/b")), 0o700);
        }
    }

    #[test]
    fn not_durable_writes_the_same() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cache");
        AtomicWrite::new()
            .durable(false)
            .write(&path, b"x")
            .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"x");
        assert_eq!(names(tmp.path()), ["cache"]);
    }

    #[cfg(unix)]
    #[test]
    fn exact_and_kept_modes() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let exact = tmp.path().join("exact");
        AtomicWrite::new()
            .mode(FileMode::Exact(0o640))
            .write(&exact, b"x")
            .unwrap();
        assert_eq!(mode_of(&exact), 0o640);

        let kept = tmp.path().join("script.sh");
        fs::write(&kept, b"old").unwrap();
        fs::set_permissions(&kept, fs::Permissions::from_mode(0o751)).unwrap();
        AtomicWrite::new()
            .mode(FileMode::KeepExisting)
            .write(&kept, b"new")
            .unwrap();
        assert_eq!(fs::read(&kept).unwrap(), b"new");
        assert_eq!(mode_of(&kept), 0o751);
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temp_file() {
        let tmp = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the rename fails after the temp file exists.
        let target = tmp.path().join("taken");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), b"keep").unwrap();
        assert!(write_atomic(&target, b"x").is_err());
        assert_eq!(names(tmp.path()), ["taken"]);
        assert_eq!(fs::read(target.join("inside")).unwrap(), b"keep");
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let err = write_atomic(Path::new("/"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = write_atomic(Path::new("a/.."), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
