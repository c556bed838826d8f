//! `AuthStore`: the profiles file on disk (`$PINCER_HOME/auth-profiles.json`). A missing
//! file reads as empty; a corrupt one is an error naming the file, never an empty store
//! (an empty store would make the next write destroy every credential). Writes are atomic
//! and 0600; every read-modify-write holds an exclusive lock on `auth-profiles.json.lock` so
//! two processes (the gateway and a CLI command) never lose each other's updates.

use pincer_base::HeldLock;
use std::path::{Path, PathBuf};

use pincer_store::StoreError;

use crate::edit::ProfileStatus;
use crate::error::AuthError;
use crate::file::{
    AuthProfiles, OAuthCredential, PROFILES_FILE_NAME, PROFILES_FILE_VERSION, Profile, ProfileId,
};
use crate::rotation::{CooldownPolicy, Failure, Rotation};

/// The profiles file of one Pincer home.
#[derive(Debug, Clone)]
pub struct AuthStore {
    path: PathBuf,
}

impl AuthStore {
    /// A store for the profiles file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `<home>/auth-profiles.json`.
    pub fn in_home(home: &Path) -> Self {
        Self::new(home.join(PROFILES_FILE_NAME))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file (no lock: writes are atomic, so a reader sees a whole version).
    pub fn load(&self) -> Result<AuthProfiles, AuthError> {
        let profiles: AuthProfiles = match pincer_store::read_json(&self.path) {
            Ok(profiles) => profiles,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(AuthProfiles::default());
            }
            Err(other) => return Err(other.into()),
        };
        if profiles.version != PROFILES_FILE_VERSION {
            return Err(AuthError::UnsupportedVersion {
                path: self.path.clone(),
                version: profiles.version,
            });
        }
        Ok(profiles)
    }

    /// Locks, loads, applies `edit` and saves when it succeeds; returns what `edit` returned.
    /// Nothing is written when `edit` fails.
    pub fn update<T>(
        &self,
        edit: impl FnOnce(&mut AuthProfiles) -> Result<T, AuthError>,
    ) -> Result<T, AuthError> {
        let _lock = self.lock("lock")?;
        let mut profiles = self.load()?;
        let result = edit(&mut profiles)?;
        pincer_store::write_json(&self.path, &profiles, Some(pincer_base::PRIVATE_FILE_MODE))?;
        Ok(result)
    }

    /// Takes the exclusive lock `<file>.<suffix>`, creating the directory (0700) if needed.
    /// Blocks until the lock is free.
    pub(crate) fn lock(&self, suffix: &str) -> Result<HeldLock, AuthError> {
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.exists() {
            create_private_dir(&dir)?;
        }
        let name = self
            .path
            .file_name()
            .map_or_else(|| PROFILES_FILE_NAME.into(), |n| n.to_string_lossy());
        let path = dir.join(format!("{name}.{suffix}"));
        let mut options = pincer_base::private_open_options();
        options.create(true).truncate(false).write(true);
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let file = options.open(&path).map_err(io)?;
        file.lock().map_err(io)?;
        Ok(HeldLock::new(file))
    }

    /// See [`AuthProfiles::add_api_key`].
    pub fn add_api_key(
        &self,
        provider: &str,
        name: Option<&str>,
        key: &str,
    ) -> Result<ProfileId, AuthError> {
        self.update(|p| p.add_api_key(provider, name, key))
    }

    /// See [`AuthProfiles::add_oauth`].
    pub fn add_oauth(
        &self,
        provider: &str,
        credential: OAuthCredential,
    ) -> Result<ProfileId, AuthError> {
        self.update(|p| p.add_oauth(provider, credential))
    }

    /// See [`AuthProfiles::remove`].
    pub fn remove(&self, id: &ProfileId) -> Result<Profile, AuthError> {
        self.update(|p| p.remove(id))
    }

    /// See [`AuthProfiles::remove_all`].
    pub fn remove_all(&self) -> Result<usize, AuthError> {
        self.update(|p| Ok(p.remove_all()))
    }

    /// See [`AuthProfiles::set_active`].
    pub fn set_active(&self, id: &ProfileId) -> Result<(), AuthError> {
        self.update(|p| p.set_active(id))
    }

    /// See [`AuthProfiles::status`].
    pub fn status(&self, now_ms: u64) -> Result<Vec<ProfileStatus>, AuthError> {
        Ok(self.load()?.status(now_ms))
    }

    /// See [`AuthProfiles::rotation`].
    pub fn rotation(
        &self,
        provider: &str,
        order: &std::collections::BTreeMap<String, Vec<String>>,
        now_ms: u64,
    ) -> Result<Rotation, AuthError> {
        Ok(self.load()?.rotation(provider, order, now_ms))
    }

    /// See [`AuthProfiles::mark_success`].
    pub fn mark_success(&self, id: &ProfileId, now_ms: u64) -> Result<(), AuthError> {
        self.update(|p| p.mark_success(id, now_ms))
    }

    /// See [`AuthProfiles::mark_failure`].
    pub fn mark_failure(
        &self,
        id: &ProfileId,
        failure: impl Into<Failure>,
        policy: &CooldownPolicy,
        now_ms: u64,
    ) -> Result<u64, AuthError> {
        // `update` runs the edit once: the failure moves into it unconverted.
        self.update(|p| p.mark_failure(id, failure, policy, now_ms))
    }
}

fn create_private_dir(dir: &Path) -> Result<(), AuthError> {
    pincer_base::create_private_dir_all(dir).map_err(|source| {
        AuthError::Store(StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })
    })
}
