//! Editing a loaded profiles file: adding API keys and OAuth logins, removing profiles,
//! pinning one per provider, and the status listing (`pincer auth status`). Pure functions
//! over [`AuthProfiles`]; [`crate::AuthStore`] runs them under the file lock.
//!
//! Naming: a profile is `<provider>:<name>`; `name` defaults to `default` for API keys and to
//! the account id (else `default`) for OAuth logins. When the id is taken by a different
//! credential the next free `<name>#2`, `<name>#3`, … is used (lainclaw's rule). Adding the
//! very same API key again, or logging in again to the same OAuth account, updates that
//! profile in place and clears its failure state: logging in again is how a profile disabled
//! by an auth failure is brought back.

use crate::error::AuthError;
use crate::file::{AuthProfiles, Credential, CredentialKind, OAuthCredential, Profile, ProfileId};
use crate::secret::{Secret, mask_secret};

/// The name a profile gets when none is given.
pub const DEFAULT_PROFILE_NAME: &str = "default";
const MAX_NAME_CHARS: usize = 128;

/// One line of `pincer auth status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileStatus {
    pub id: ProfileId,
    pub provider: String,
    pub kind: CredentialKind,
    /// The secret as a user may see it (`abc***xyz`; the access token for OAuth).
    pub masked_secret: String,
    pub account_id: Option<String>,
    /// When the credential expires (OAuth access token, static token), epoch ms.
    pub expires_at: Option<u64>,
    /// `expires_at - now`; negative once expired.
    pub expires_in_ms: Option<i64>,
    pub cooldown_until: Option<u64>,
    pub disabled_until: Option<u64>,
    pub disabled_reason: Option<String>,
    pub error_count: u32,
    pub last_used: Option<u64>,
    /// Pinned for its provider (`pincer auth use`).
    pub active: bool,
}

impl AuthProfiles {
    /// Adds an API key for `provider` under `name` (default `default`) and returns its id.
    /// The key is trimmed; an empty key or one with inner whitespace is refused.
    pub fn add_api_key(
        &mut self,
        provider: &str,
        name: Option<&str>,
        key: &str,
    ) -> Result<ProfileId, AuthError> {
        validate_provider(provider)?;
        let name = name.unwrap_or(DEFAULT_PROFILE_NAME);
        validate_name(name)?;
        let key = key.trim();
        if key.is_empty() || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(AuthError::InvalidSecret);
        }
        let id = self.free_id(provider, name, |profile| {
            matches!(&profile.credential, Credential::ApiKey { key: k } if k.expose() == key)
        });
        self.put(id.clone(), provider, Credential::ApiKey { key: key.into() });
        Ok(id)
    }

    /// Stores an OAuth login for `provider`, named after its account id (else `default`),
    /// and returns its id. A login to an account already stored replaces its tokens.
    pub fn add_oauth(
        &mut self,
        provider: &str,
        credential: OAuthCredential,
    ) -> Result<ProfileId, AuthError> {
        validate_provider(provider)?;
        let name = credential
            .account_id
            .clone()
            .filter(|account| validate_name(account).is_ok())
            .unwrap_or_else(|| DEFAULT_PROFILE_NAME.to_owned());
        let account = credential.account_id.clone();
        let id = self.free_id(provider, &name, |profile| {
            matches!(&profile.credential, Credential::OAuth(old) if old.account_id == account)
        });
        self.put(id.clone(), provider, Credential::OAuth(credential));
        Ok(id)
    }

    /// Replaces the tokens of OAuth profile `id` (after a refresh), keeping its other fields.
    pub fn replace_oauth_tokens(
        &mut self,
        id: &ProfileId,
        credential: OAuthCredential,
    ) -> Result<(), AuthError> {
        let profile = self.profile_mut(id)?;
        if profile.kind() != CredentialKind::OAuth {
            return Err(AuthError::Unusable {
                id: id.to_string(),
                reason: "it is not an OAuth profile".into(),
            });
        }
        profile.credential = Credential::OAuth(credential);
        Ok(())
    }

    /// Removes a profile, its usage statistics and any pin on it.
    pub fn remove(&mut self, id: &ProfileId) -> Result<Profile, AuthError> {
        let profile = self
            .profiles
            .remove(id)
            .ok_or_else(|| AuthError::ProfileNotFound { id: id.to_string() })?;
        self.usage_stats.remove(id);
        self.active.retain(|_, pinned| pinned != id);
        Ok(profile)
    }

    /// Removes every profile (`pincer auth logout --all`); returns how many there were.
    pub fn remove_all(&mut self) -> usize {
        let count = self.profiles.len();
        self.profiles.clear();
        self.usage_stats.clear();
        self.active.clear();
        count
    }

    /// Pins `id` for its provider (`pincer auth use`): rotation tries it first.
    pub fn set_active(&mut self, id: &ProfileId) -> Result<(), AuthError> {
        let provider = self.profile(id)?.provider.clone();
        self.active.insert(provider, id.clone());
        Ok(())
    }

    /// Unpins whatever profile is pinned for `provider`; returns it.
    pub fn clear_active(&mut self, provider: &str) -> Option<ProfileId> {
        self.active.remove(provider)
    }

    /// The profile with this id.
    pub fn profile(&self, id: &ProfileId) -> Result<&Profile, AuthError> {
        self.profiles
            .get(id)
            .ok_or_else(|| AuthError::ProfileNotFound { id: id.to_string() })
    }

    fn profile_mut(&mut self, id: &ProfileId) -> Result<&mut Profile, AuthError> {
        self.profiles
            .get_mut(id)
            .ok_or_else(|| AuthError::ProfileNotFound { id: id.to_string() })
    }

    /// Every profile, sorted by id, as `pincer auth status` shows it.
    pub fn status(&self, now_ms: u64) -> Vec<ProfileStatus> {
        self.profiles
            .iter()
            .map(|(id, profile)| {
                let stats = self.usage_stats.get(id).cloned().unwrap_or_default();
                let (secret, expires_at, account_id) = match &profile.credential {
                    Credential::ApiKey { key } => (Some(key), None, None),
                    Credential::Token { token, expires } => (Some(token), *expires, None),
                    Credential::OAuth(oauth) => (
                        Some(&oauth.access),
                        Some(oauth.expires),
                        oauth.account_id.clone(),
                    ),
                    Credential::Unknown { .. } => (None, None, None),
                };
                ProfileStatus {
                    id: id.clone(),
                    provider: profile.provider.clone(),
                    kind: profile.kind(),
                    masked_secret: secret.map_or_else(|| mask_secret(""), Secret::masked),
                    account_id,
                    expires_at,
                    expires_in_ms: expires_at.map(|at| signed_diff(at, now_ms)),
                    cooldown_until: stats.cooldown_until,
                    disabled_until: stats.disabled_until,
                    disabled_reason: stats.disabled_reason,
                    error_count: stats.error_count,
                    last_used: stats.last_used,
                    active: self.active.get(&profile.provider) == Some(id),
                }
            })
            .collect()
    }

    /// `<provider>:<name>`, or the first `<name>#N` that is free or already holds the same
    /// credential (`same`).
    fn free_id(&self, provider: &str, name: &str, same: impl Fn(&Profile) -> bool) -> ProfileId {
        let mut n = 1u32;
        loop {
            let candidate = if n == 1 {
                ProfileId::new(provider, name)
            } else {
                ProfileId::new(provider, &format!("{name}#{n}"))
            };
            match self.profiles.get(&candidate) {
                None => return candidate,
                Some(existing) if existing.provider == provider && same(existing) => {
                    return candidate;
                }
                Some(_) => n += 1,
            }
        }
    }

    /// Stores `credential` under `id`, keeping unknown fields of a profile it replaces, and
    /// clears the profile's failure state (a fresh credential starts with a clean slate).
    fn put(&mut self, id: ProfileId, provider: &str, credential: Credential) {
        match self.profiles.get_mut(&id) {
            Some(existing) => existing.credential = credential,
            None => {
                self.profiles
                    .insert(id.clone(), Profile::new(provider, credential));
            }
        }
        if let Some(stats) = self.usage_stats.get_mut(&id) {
            stats.clear_failures();
        }
    }
}

fn signed_diff(at: u64, now: u64) -> i64 {
    if at >= now {
        i64::try_from(at - now).unwrap_or(i64::MAX)
    } else {
        i64::try_from(now - at).map_or(i64::MIN, |d| -d)
    }
}

/// Provider names go into ids and file keys: ASCII letters, digits, `-`, `_`, `.`.
pub(crate) fn validate_provider(provider: &str) -> Result<(), AuthError> {
    let ok = !provider.is_empty()
        && provider.len() <= MAX_NAME_CHARS
        && provider
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(AuthError::InvalidProvider(provider.to_owned()))
    }
}

fn validate_name(name: &str) -> Result<(), AuthError> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == ':');
    if ok {
        Ok(())
    } else {
        Err(AuthError::InvalidName(name.to_owned()))
    }
}
