//! Advisory file locks with a deadline. `flock` waits forever, so a process stopped while it
//! holds a lock (a suspended or hung pincer) would hang every other writer; [`lock_within`]
//! polls instead and gives up after a timeout, and callers turn that into an error naming
//! the lock file. A taken lock is kept as a [`HeldLock`], released when dropped.

use std::fs::{File, TryLockError};
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a lock is waited for by default: far longer than any holder keeps one
/// (milliseconds), short enough that a stuck holder is reported instead of hanging a turn.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// Takes the exclusive lock on `file`, polling (1 ms, doubling up to 50 ms) until `timeout`
/// has passed; then an error of kind [`io::ErrorKind::TimedOut`]. Other errors (a file
/// system without advisory locks: [`io::ErrorKind::Unsupported`]) pass through. Blocking:
/// call it off the async runtime.
pub fn lock_within(file: &File, timeout: Duration) -> io::Result<()> {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "still locked by another process",
                ));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Another process held the lock file `path` for longer than `waited`: the error the stores
/// give when [`lock_within`] times out, naming the file and how to find its holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockTimeout {
    pub path: PathBuf,
    pub waited: Duration,
}

impl std::fmt::Display for LockTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: still locked by another process after {:.1} s (a stopped or hung pincer holds it; `fuser {}` names it)",
            self.path.display(),
            self.waited.as_secs_f64(),
            self.path.display()
        )
    }
}

impl std::error::Error for LockTimeout {}

/// An open lock file holding its exclusive lock: dropping it (or the process dying)
/// releases the lock.
#[derive(Debug)]
pub struct HeldLock(File);

impl HeldLock {
    /// Holds the lock already taken on `file` until dropped.
    pub fn new(file: File) -> Self {
        Self(file)
    }

    /// The lock file (some locks keep a little state in it).
    pub fn file(&self) -> &File {
        &self.0
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_lock_is_taken_and_a_held_one_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = File::create(&path).unwrap();
        lock_within(&first, Duration::from_millis(50)).unwrap();
        // A second open file description conflicts with the first, even in this process.
        let second = File::open(&path).unwrap();
        let err = lock_within(&second, Duration::from_millis(30)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        first.unlock().unwrap();
        lock_within(&second, Duration::from_millis(30)).unwrap();
    }

    #[test]
    fn a_timeout_names_the_lock_file_and_its_holder() {
        let timeout = LockTimeout {
            path: PathBuf::from("/h/sessions/sessions.json.lock"),
            waited: Duration::from_millis(10_000),
        };
        assert_eq!(
            timeout.to_string(),
            "/h/sessions/sessions.json.lock: still locked by another process after 10.0 s (a stopped or hung pincer holds it; `fuser /h/sessions/sessions.json.lock` names it)"
        );
    }
}
