//! The crate's typed errors: what can go wrong opening, syncing, searching and reading
//! memory, each with enough context (paths, causes) for a user to act on.

use std::path::PathBuf;

/// An error of the memory index or of `memory_get`.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A file or directory could not be read or created.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done (e.g. "cannot create the index directory").
        what: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The index database answered with an error.
    #[error("memory index {path}: {source}")]
    Db {
        /// The database file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// Another process holds the index's write lock longer than the busy timeout.
    /// Searching still works (WAL readers are not blocked); syncing can be retried.
    #[error("memory index {path} is locked by another process (retry later)")]
    Locked {
        /// The database file.
        path: PathBuf,
    },
    /// The index was found corrupt while in use; it has been moved aside and an empty one
    /// created: the next sync rebuilds it from the Markdown.
    #[error(
        "memory index was corrupt and has been reset (old file kept as {moved_to}); it is rebuilt on the next sync"
    )]
    Reset {
        /// Where the corrupt file was moved.
        moved_to: PathBuf,
    },
    /// `memory_get` refused a path (outside the memory files, `..`, absolute, symlink out).
    #[error("refused path {path:?}: {reason}")]
    PathRefused {
        /// The path as asked for.
        path: String,
        /// Why.
        reason: String,
    },
    /// `memory_get` asked for a memory file that does not exist.
    #[error("no such memory file: {0}")]
    NotFound(String),
    /// A blocking task died (a bug, reported instead of a panic).
    #[error("memory worker failed: {0}")]
    Worker(String),
}

impl MemoryError {
    /// Wraps an I/O error with what was being done and where.
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            what,
            path: path.into(),
            source,
        }
    }
}
