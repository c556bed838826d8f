//! Typed errors of this crate. Errors about the profiles file name the file; no error ever
//! carries a secret (values are described, never quoted).

use std::path::PathBuf;

use crate::file::ProfileId;
use crate::oauth::OAuthError;
use crate::time::format_duration_ms;

/// What can go wrong with stored credentials.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Reading, parsing or writing the profiles file failed (the error names the file).
    #[error(transparent)]
    Store(#[from] pincer_store::StoreError),
    /// The profiles file is of a version this Pincer cannot read.
    #[error("{}: unsupported version {version} (this Pincer reads version 1)", path.display())]
    UnsupportedVersion { path: PathBuf, version: u32 },
    /// No profile has this id.
    #[error("no auth profile {id:?}; `pincer auth status` lists them")]
    ProfileNotFound { id: String },
    /// The profile exists but is for another provider.
    #[error("auth profile {id:?} is for provider {actual:?}, not {expected:?}")]
    ProviderMismatch {
        id: String,
        expected: String,
        actual: String,
    },
    /// The profile's credential cannot be used (unknown type, expired static token).
    #[error("auth profile {id:?} cannot be used: {reason}")]
    Unusable { id: String, reason: String },
    /// A provider name that cannot be part of a profile id.
    #[error(
        "invalid provider {0:?}: use letters, digits, '-', '_' or '.' (for example openai-codex)"
    )]
    InvalidProvider(String),
    /// A profile name that cannot be part of a profile id.
    #[error(
        "invalid profile name {0:?}: it must be 1-128 characters without spaces, control characters or ':'"
    )]
    InvalidName(String),
    /// An API key that is empty or holds control characters (a pasted newline, say).
    #[error("the key is empty or contains spaces or control characters")]
    InvalidSecret,
    /// Every profile of the provider is cooling down or disabled.
    #[error(
        "every {provider} auth profile is rate limited or disabled ({}); the first is usable again in {}",
        .profiles.join(", "),
        format_duration_ms(.until_ms.saturating_sub(*.now_ms))
    )]
    AllCoolingDown {
        provider: String,
        /// When the first of them is usable again, epoch ms.
        until_ms: u64,
        now_ms: u64,
        profiles: Vec<String>,
    },
    /// An OAuth login or refresh failed.
    #[error("auth profile {id}: {source}")]
    Refresh {
        id: ProfileId,
        #[source]
        source: OAuthError,
    },
    /// A blocking file operation could not be run.
    #[error("auth store task failed: {0}")]
    Task(String),
}

impl AuthError {
    /// True when the user must log in again (`pincer auth login <provider>`) to fix this.
    pub fn needs_login(&self) -> bool {
        matches!(self, Self::Refresh { source, .. } if source.needs_login())
    }
}
