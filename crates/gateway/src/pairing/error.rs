//! What can go wrong with pairing state, and the rule for channel and account names (they
//! become parts of file names, so they are checked before any path is built).

use std::path::PathBuf;

/// Longest channel or account name.
pub const MAX_NAME_LEN: usize = 64;

/// What went wrong reading or changing pairing state. Errors about a file name the file.
#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    /// An I/O operation on `path` failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `path` is not a pairing or allow-from file Pincer can read. It is left as it is (no
    /// write replaces it) until someone fixes or removes it.
    #[error("{}: not a valid pairing file ({message}); fix or remove it", path.display())]
    Corrupt { path: PathBuf, message: String },
    /// No pending, unexpired request of `channel` has this code.
    #[error("no pending pairing request on {channel} with code {code}")]
    UnknownCode { channel: String, code: String },
    /// A channel name that does not match `[a-z0-9_-]{1,64}`.
    #[error("invalid channel name {name:?} (use 1 to 64 of a-z, 0-9, _ and -)")]
    InvalidChannel { name: String },
    /// An account id that does not match `[a-z0-9_-]{1,64}`.
    #[error("invalid account id {name:?} (use 1 to 64 of a-z, 0-9, _ and -)")]
    InvalidAccount { name: String },
    /// An empty sender id, or an allow-from entry that is empty or `*` (the wildcard
    /// belongs in the configuration, never in the approved-senders store).
    #[error("invalid sender id or allow-from entry {entry:?}")]
    InvalidEntry { entry: String },
    /// Another process held the channel's lock file `path` for longer than `waited`.
    #[error(transparent)]
    LockTimeout(#[from] pincer_base::LockTimeout),
    /// The OS random source failed, or no unused code was found.
    #[error("cannot generate a pairing code: {message}")]
    Random { message: String },
}

impl PairingError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Whether `name` is a usable channel or account name: 1 to 64 of `a-z`, `0-9`, `_`, `-`.
/// No dots or slashes, so it cannot leave the credentials directory.
pub fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

pub(crate) fn check_channel(name: &str) -> Result<&str, PairingError> {
    if is_valid_name(name) {
        Ok(name)
    } else {
        Err(PairingError::InvalidChannel {
            name: name.to_string(),
        })
    }
}

pub(crate) fn check_account(name: Option<&str>) -> Result<Option<&str>, PairingError> {
    match name {
        Some(n) if !is_valid_name(n) => Err(PairingError::InvalidAccount {
            name: n.to_string(),
        }),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["telegram", "a", "work_2", "my-bot", &"x".repeat(64)] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "Telegram",
            "../x",
            "a.b",
            "a/b",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }
}
