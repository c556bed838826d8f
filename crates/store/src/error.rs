//! Typed errors of the store. Every error about a file names the file.

use std::path::PathBuf;

/// Result alias of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// What can go wrong reading or writing state.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An I/O operation on `path` failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `path` holds invalid JSON (or JSON of the wrong shape).
    #[error("{}: invalid JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A value could not be serialised for `path`.
    #[error("{}: cannot serialise: {source}", path.display())]
    Serialize {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// `path` is not a session transcript (missing or invalid header line).
    #[error("{}: not a session transcript: {reason}", path.display())]
    BadHeader { path: PathBuf, reason: String },
    /// Creating `path` would overwrite an existing file.
    #[error("{}: already exists", path.display())]
    Exists { path: PathBuf },
    /// No session is indexed under `key`.
    #[error("no session with key {key:?}")]
    UnknownSession { key: String },
    /// The index entry of `key` is no longer session `expected` (it was reset, or archived
    /// and created again, while the caller had `expected` open).
    #[error("session {key:?} is now {found:?}, no longer {expected:?}")]
    SessionChanged {
        key: String,
        expected: String,
        found: String,
    },
    /// The index gives `key` a sessionId that is not a plain file name (it has a path
    /// separator, is empty, `.` or `..`): its transcript would lie outside the store.
    #[error("session {key:?} has an invalid sessionId {session_id:?}")]
    InvalidSessionId { key: String, session_id: String },
    /// Another process held the index lock `path` for longer than `waited`.
    #[error(transparent)]
    LockTimeout(#[from] pincer_base::LockTimeout),
    /// The blocking task running a store call failed (it panicked or the runtime is
    /// shutting down).
    #[error("a session store task failed: {0}")]
    Task(String),
    /// A patch of session `key` is not valid.
    #[error("invalid patch of session {key:?}: {reason}")]
    Patch { key: String, reason: String },
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn unknown_session(key: &str) -> Self {
        Self::UnknownSession {
            key: key.to_owned(),
        }
    }
}
