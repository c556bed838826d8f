//! The daemon's log file, capped in size: `gateway.log` grows to `max_bytes`, then becomes
//! `gateway.log.1` (older ones shift to `.2`, `.3`; the oldest is dropped). A daemon that
//! logs every connection must never fill the disk, and `tracing-appender` rotates by time
//! only. A registered secret (the gateway token) is written as `***` should it ever reach
//! a log line.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Cap of `gateway.log` before it is rotated.
pub const MAX_LOG_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept: `gateway.log.1` … `gateway.log.3`.
pub const KEEP_LOGS: usize = 3;

/// A size-capped, rotating log file; `Arc<RotatingLog>` is a `tracing-subscriber` writer.
pub struct RotatingLog {
    path: PathBuf,
    max_bytes: u64,
    keep: usize,
    redirect_std: bool,
    secret: OnceLock<String>,
    state: Mutex<State>,
}

struct State {
    file: File,
    len: u64,
}

impl RotatingLog {
    /// Opens (appends to) `path`, 0600, creating its directory.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> io::Result<Self> {
        if let Some(dir) = path.parent() {
            pincer_base::create_private_dir_all(dir)?;
        }
        let file = open_append(path)?;
        let len = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            max_bytes,
            keep: keep.max(1),
            redirect_std: false,
            secret: OnceLock::new(),
            state: Mutex::new(State { file, len }),
        })
    }

    /// After each rotation, point stdout and stderr at the new file too. The daemon's
    /// stdout/stderr are the log file (a panic message lands there); without this they
    /// would keep writing into the renamed, and finally deleted, old file.
    pub fn redirect_std(mut self) -> Self {
        self.redirect_std = true;
        self
    }

    /// Replace `secret` with `***` in every line from now on. Short values are ignored:
    /// masking every "a" would make the log unreadable, and they are not secrets anyway.
    pub fn redact(&self, secret: &str) {
        if secret.len() >= 8 {
            let _ = self.secret.set(secret.to_owned());
        }
    }

    fn redacted<'a>(&self, buf: &'a [u8]) -> Cow<'a, [u8]> {
        let Some(secret) = self.secret.get() else {
            return Cow::Borrowed(buf);
        };
        match std::str::from_utf8(buf) {
            Ok(text) if text.contains(secret.as_str()) => {
                Cow::Owned(text.replace(secret.as_str(), "***").into_bytes())
            }
            _ => Cow::Borrowed(buf),
        }
    }

    fn rotated(&self, n: usize) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(format!(".{n}"));
        PathBuf::from(name)
    }

    fn rotate(&self, state: &mut State) -> io::Result<()> {
        // `rename` replaces its target, so the oldest file simply drops off the end.
        for n in (1..self.keep).rev() {
            match std::fs::rename(self.rotated(n), self.rotated(n + 1)) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&self.path, self.rotated(1))?;
        state.file = open_append(&self.path)?;
        state.len = 0;
        if self.redirect_std {
            nix::unistd::dup2_stdout(&state.file)?;
            nix::unistd::dup2_stderr(&state.file)?;
        }
        Ok(())
    }
}

impl Write for &RotatingLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let bytes = self.redacted(buf);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.len > 0 && state.len + bytes.len() as u64 > self.max_bytes {
            // A failed rotation (e.g. a full disk) keeps logging into the current file:
            // losing the lines would be worse than a larger file.
            let _ = self.rotate(&mut state);
        }
        state.file.write_all(&bytes)?;
        state.len += bytes.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .file
            .flush()
    }
}

/// Opens `path` for appending, created 0600 (a log may quote what users said).
pub fn open_append(path: &Path) -> io::Result<File> {
    pincer_base::private_open_options()
        .create(true)
        .append(true)
        .open(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn rotates_at_the_cap_and_keeps_three_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.log");
        let log = RotatingLog::open(&path, 100, 3).unwrap();
        for i in 0..10 {
            (&log)
                .write_all(format!("{i}{}\n", "x".repeat(58)).as_bytes())
                .unwrap();
        }
        // 60-byte lines, 100-byte cap: one line per file, the newest in gateway.log.
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        assert!(read(&path).starts_with('9'));
        assert!(read(&log.rotated(1)).starts_with('8'));
        assert!(read(&log.rotated(3)).starts_with('6'));
        assert!(!log.rotated(4).exists());
        for n in 1..=3 {
            assert!(std::fs::metadata(log.rotated(n)).unwrap().len() <= 100);
        }
    }

    #[test]
    fn appends_to_an_existing_file_and_counts_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.log");
        std::fs::write(&path, "x".repeat(90)).unwrap();
        let log = RotatingLog::open(&path, 100, 3).unwrap();
        (&log).write_all(b"0123456789abcdef\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "0123456789abcdef\n"
        );
        assert_eq!(std::fs::read(log.rotated(1)).unwrap().len(), 90);
    }

    #[test]
    fn secrets_are_masked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.log");
        let log = RotatingLog::open(&path, 1000, 3).unwrap();
        log.redact("s3cr3t-t0ken");
        (&log)
            .write_all(b"auth with s3cr3t-t0ken failed\n")
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "auth with *** failed\n"
        );
    }

    #[test]
    fn the_file_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/gateway.log");
        let _log = RotatingLog::open(&path, 1000, 3).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
