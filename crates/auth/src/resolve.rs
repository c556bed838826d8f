//! Which credential a call uses: an explicit `--profile` wins; else the first ready profile
//! of the provider's rotation; else, when the provider has no profiles at all, the
//! environment (`OPENAI_API_KEY`, …). When every profile is resting the answer is
//! [`AuthError::AllCoolingDown`] (with when the first frees up), not the environment: the
//! user chose profiles, and the caller's next step is the model fallback.
//!
//! Expired OAuth access tokens are refreshed here, once per profile at a time: concurrent
//! callers in this process wait on a per-profile gate, other processes on the lock file
//! `auth-profiles.json.refresh`, and whoever gets through second re-reads the file and finds
//! the fresh tokens. Refresh tokens rotate, so a second refresh with the old one would be
//! refused and could revoke the sign-in. The rotated tokens are saved before the access
//! token is returned. A refresh the server refuses disables the profile (auth) and, when no
//! other profile works, surfaces as "run `pincer auth login <provider>` again".

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use pincer_ai::env::{EnvSource, env_api_key};

use crate::error::AuthError;
use crate::file::{AuthProfiles, Credential, CredentialKind, OAuthCredential, ProfileId};
use crate::oauth::gemini_cli::{GEMINI_CLI_PROVIDER, GeminiCliOAuth};
use crate::oauth::{
    ANTHROPIC_PROVIDER, AnthropicOAuth, CODEX_PROVIDER, COPILOT_PROVIDER, CodexOAuth, CopilotOAuth,
    OAuthError,
};
use crate::rotation::{CooldownPolicy, Failure, FailureKind};
use crate::secret::Secret;
use crate::store::AuthStore;

/// Access tokens this close to expiry are refreshed first, so they do not expire mid-call.
pub const REFRESH_MARGIN_MS: u64 = 60_000;

/// The credential a call should use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCredential {
    /// The profile it came from; `None` when it came from the environment.
    pub profile_id: Option<ProfileId>,
    pub kind: CredentialKind,
    /// The API key or access token.
    pub secret: Secret,
    /// The account of an OAuth profile (openai-codex: the `chatgpt-account-id` header).
    pub account_id: Option<String>,
}

/// Resolves credentials for calls and records how they went. Share it (`Arc`) across tasks:
/// its refresh gates only work within one resolver.
pub struct KeyResolver {
    store: AuthStore,
    order: BTreeMap<String, Vec<String>>,
    policy: CooldownPolicy,
    codex: Option<CodexOAuth>,
    gemini_cli: Option<GeminiCliOAuth>,
    copilot: Option<CopilotOAuth>,
    anthropic: Option<AnthropicOAuth>,
    refresh_gates: Mutex<HashMap<ProfileId, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for KeyResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyResolver")
            .field("store", &self.store)
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl KeyResolver {
    /// A resolver over `store` with no configured order, the default cooldowns and no OAuth
    /// refresher (add one with [`Self::with_codex`]).
    pub fn new(store: AuthStore) -> Self {
        Self {
            store,
            order: BTreeMap::new(),
            policy: CooldownPolicy::default(),
            codex: None,
            gemini_cli: None,
            copilot: None,
            anthropic: None,
            refresh_gates: Mutex::new(HashMap::new()),
        }
    }

    /// The config's `auth.order`.
    pub fn with_order(mut self, order: BTreeMap<String, Vec<String>>) -> Self {
        self.order = order;
        self
    }

    pub fn with_policy(mut self, policy: CooldownPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Refreshes expired openai-codex profiles with `codex`.
    pub fn with_codex(mut self, codex: CodexOAuth) -> Self {
        self.codex = Some(codex);
        self
    }

    /// Refreshes expired google-gemini-cli (Cloud Code Assist) sign-ins with `gemini_cli`.
    pub fn with_gemini_cli(mut self, gemini_cli: GeminiCliOAuth) -> Self {
        self.gemini_cli = Some(gemini_cli);
        self
    }

    /// Exchanges github-copilot profiles' GitHub tokens (and the environment's) for
    /// Copilot tokens with `copilot`.
    pub fn with_copilot(mut self, copilot: CopilotOAuth) -> Self {
        self.copilot = Some(copilot);
        self
    }

    /// Refreshes expired anthropic (Claude Pro/Max) sign-ins with `anthropic`.
    pub fn with_anthropic(mut self, anthropic: AnthropicOAuth) -> Self {
        self.anthropic = Some(anthropic);
        self
    }

    /// The Copilot token for the environment's GitHub token (`COPILOT_GITHUB_TOKEN`,
    /// `GH_TOKEN`, `GITHUB_TOKEN`), exchanged once and reused until it is due; `Ok(None)`
    /// when the environment has none or no Copilot client is configured.
    pub async fn copilot_env_token(
        &self,
        env: &dyn EnvSource,
        now_ms: u64,
    ) -> Result<Option<Secret>, AuthError> {
        let (Some(copilot), Some(github)) = (&self.copilot, env_api_key(env, COPILOT_PROVIDER))
        else {
            return Ok(None);
        };
        copilot
            .exchange_cached(&Secret::new(github), now_ms, REFRESH_MARGIN_MS)
            .await
            .map(|c| Some(c.access))
            .map_err(|source| AuthError::Refresh {
                id: ProfileId::from("github-copilot:env"),
                source,
            })
    }

    /// After the provider refused `rejected` (a 401 mid-use): forget it and fetch a new
    /// one, once. For an OAuth profile the stored tokens are refreshed (unless someone
    /// already did); for the environment's Copilot exchange the cache is dropped.
    pub async fn renew_rejected(
        &self,
        provider: &str,
        profile: Option<&ProfileId>,
        rejected: &str,
        env: &dyn EnvSource,
        now_ms: u64,
    ) -> Result<Option<Secret>, AuthError> {
        match profile {
            None if provider == COPILOT_PROVIDER => {
                if let Some(copilot) = &self.copilot {
                    copilot.forget_cached(rejected);
                }
                self.copilot_env_token(env, now_ms).await
            }
            None => Ok(None),
            Some(id) => {
                let file = self.load().await?;
                if !matches!(file.profile(id)?.credential, Credential::OAuth(_)) {
                    return Ok(None);
                }
                // A gemini-cli call presented {token, projectId}; the token is what was refused.
                let rejected = match provider {
                    GEMINI_CLI_PROVIDER => crate::oauth::gemini_cli::access_of_key(rejected)
                        .unwrap_or_else(|| rejected.to_owned()),
                    _ => rejected.to_owned(),
                };
                let fresh = self
                    .refresh_single_flight_inner(id, provider, now_ms, Some(&rejected))
                    .await?;
                Ok(Some(present(
                    provider,
                    &fresh.access,
                    fresh.account_id.as_deref(),
                )))
            }
        }
    }

    pub fn store(&self) -> &AuthStore {
        &self.store
    }

    pub fn policy(&self) -> &CooldownPolicy {
        &self.policy
    }

    /// The credential for a call to `provider` (see the module docs). `Ok(None)`: the
    /// provider has no profiles and the environment has no key.
    pub async fn resolve_key(
        &self,
        provider: &str,
        profile: Option<&str>,
        env: &dyn EnvSource,
        now_ms: u64,
    ) -> Result<Option<ResolvedCredential>, AuthError> {
        let file = self.load().await?;
        if let Some(id) = profile {
            return self
                .resolve_profile_in(&file, provider, &ProfileId::from(id), now_ms)
                .await
                .map(Some);
        }

        let rotation = file.rotation(provider, &self.order, now_ms);
        if rotation.is_empty() && provider == COPILOT_PROVIDER && self.copilot.is_some() {
            // An environment GitHub token is not what Copilot's API takes: exchange it.
            return Ok(self.copilot_env_token(env, now_ms).await?.map(|secret| {
                ResolvedCredential {
                    profile_id: None,
                    kind: CredentialKind::Token,
                    secret,
                    account_id: None,
                }
            }));
        }
        if rotation.is_empty() {
            return Ok(env_api_key(env, provider).map(|key| ResolvedCredential {
                profile_id: None,
                kind: CredentialKind::ApiKey,
                secret: Secret::new(key),
                account_id: None,
            }));
        }
        let mut refresh_failure = None;
        for id in &rotation.ready {
            match self.credential_of(&file, id, now_ms).await {
                Ok(credential) => return Ok(Some(credential)),
                Err(error @ AuthError::Refresh { .. }) => {
                    tracing::warn!(profile = %id, %error, "skipping auth profile");
                    refresh_failure = Some(error);
                }
                Err(other) => return Err(other),
            }
        }
        if let Some(error) = refresh_failure {
            return Err(error);
        }
        let until_ms = rotation.all_resting_until().unwrap_or(now_ms);
        Err(AuthError::AllCoolingDown {
            provider: provider.to_owned(),
            until_ms,
            now_ms,
            profiles: rotation.resting.iter().map(|r| r.id.to_string()).collect(),
        })
    }

    /// The credential of profile `id` for a call to `provider`, from `file` as the caller
    /// already read it (an OAuth profile due for refresh is refreshed and saved).
    pub async fn resolve_profile_in(
        &self,
        file: &AuthProfiles,
        provider: &str,
        id: &ProfileId,
        now_ms: u64,
    ) -> Result<ResolvedCredential, AuthError> {
        let found = file.profile(id)?;
        if found.provider != provider {
            return Err(AuthError::ProviderMismatch {
                id: id.to_string(),
                expected: provider.to_owned(),
                actual: found.provider.clone(),
            });
        }
        self.credential_of(file, id, now_ms).await
    }

    /// Records a successful call with profile `id`.
    pub async fn mark_success(&self, id: &ProfileId, now_ms: u64) -> Result<(), AuthError> {
        let (store, id) = (self.store.clone(), id.clone());
        blocking(move || store.mark_success(&id, now_ms)).await
    }

    /// Records a failed call with profile `id`; returns until when it rests.
    pub async fn mark_failure(
        &self,
        id: &ProfileId,
        failure: impl Into<Failure>,
        now_ms: u64,
    ) -> Result<u64, AuthError> {
        let (store, id, policy) = (self.store.clone(), id.clone(), self.policy.clone());
        let failure = failure.into();
        blocking(move || store.mark_failure(&id, failure, &policy, now_ms)).await
    }

    async fn load(&self) -> Result<AuthProfiles, AuthError> {
        let store = self.store.clone();
        blocking(move || store.load()).await
    }

    async fn credential_of(
        &self,
        file: &AuthProfiles,
        id: &ProfileId,
        now_ms: u64,
    ) -> Result<ResolvedCredential, AuthError> {
        let profile = file.profile(id)?;
        let resolved = |secret: &Secret, account_id: Option<String>| ResolvedCredential {
            profile_id: Some(id.clone()),
            kind: profile.kind(),
            secret: present(&profile.provider, secret, account_id.as_deref()),
            account_id,
        };
        match &profile.credential {
            Credential::ApiKey { key } => Ok(resolved(key, None)),
            Credential::Token { token, expires } => match expires {
                Some(at) if *at <= now_ms => Err(AuthError::Unusable {
                    id: id.to_string(),
                    reason: "its token has expired".into(),
                }),
                _ => Ok(resolved(token, None)),
            },
            Credential::OAuth(oauth) if !needs_refresh(oauth, now_ms) => {
                Ok(resolved(&oauth.access, oauth.account_id.clone()))
            }
            Credential::OAuth(_) => {
                let fresh = self
                    .refresh_single_flight(id, &profile.provider, now_ms)
                    .await?;
                Ok(resolved(&fresh.access, fresh.account_id))
            }
            Credential::Unknown { kind } => Err(AuthError::Unusable {
                id: id.to_string(),
                reason: format!("this Pincer does not know credentials of type {kind:?}"),
            }),
        }
    }

    /// Refreshes profile `id` unless someone else just did; returns the current tokens.
    async fn refresh_single_flight(
        &self,
        id: &ProfileId,
        provider: &str,
        now_ms: u64,
    ) -> Result<OAuthCredential, AuthError> {
        self.refresh_single_flight_inner(id, provider, now_ms, None)
            .await
    }

    /// [`Self::refresh_single_flight`]; with `rejected`, the stored access token was
    /// refused by the provider: refresh it even though it has not expired, unless it has
    /// already been replaced.
    async fn refresh_single_flight_inner(
        &self,
        id: &ProfileId,
        provider: &str,
        now_ms: u64,
        rejected: Option<&str>,
    ) -> Result<OAuthCredential, AuthError> {
        let gate = self.gate(id);
        let _in_process = gate.lock().await;
        let store = self.store.clone();
        let _cross_process = blocking(move || store.lock("refresh")).await?;

        // Whoever held the gates before us may have refreshed already.
        let current = match self.load().await?.profile(id)?.credential.clone() {
            Credential::OAuth(oauth) => oauth,
            _ => {
                return Err(AuthError::Unusable {
                    id: id.to_string(),
                    reason: "it is no longer an OAuth profile".into(),
                });
            }
        };
        let replaced = rejected.is_some_and(|r| current.access.expose() != r);
        if replaced || (rejected.is_none() && !needs_refresh(&current, now_ms)) {
            return Ok(current);
        }
        let refreshed = match (provider, &self.codex, &self.copilot, &self.anthropic) {
            (CODEX_PROVIDER, Some(codex), _, _) => codex.refresh(&current.refresh, now_ms).await,
            (COPILOT_PROVIDER, _, Some(copilot), _) => {
                // A Copilot profile's account id is its GitHub Enterprise domain.
                let domain = current.account_id.as_deref();
                copilot.refresh(&current.refresh, domain, now_ms).await
            }
            (ANTHROPIC_PROVIDER, _, _, Some(anthropic)) => {
                anthropic.refresh(&current.refresh, now_ms).await
            }
            (GEMINI_CLI_PROVIDER, ..) => match &self.gemini_cli {
                Some(gemini_cli) => gemini_cli.refresh(&current, now_ms).await,
                None => Err(OAuthError::RefreshUnsupported {
                    provider: provider.to_owned(),
                }),
            },
            _ => Err(OAuthError::RefreshUnsupported {
                provider: provider.to_owned(),
            }),
        };
        let fresh = match refreshed {
            Ok(fresh) => fresh,
            Err(source) => {
                if matches!(source, OAuthError::LoginRequired { .. }) {
                    // The server refused the refresh token: rest the profile until the user
                    // logs in again, so rotation stops offering it.
                    self.mark_failure(id, FailureKind::Auth, now_ms).await?;
                }
                return Err(AuthError::Refresh {
                    id: id.clone(),
                    source,
                });
            }
        };
        let (store, saved_id, saved) = (self.store.clone(), id.clone(), fresh.clone());
        blocking(move || store.update(|file| file.replace_oauth_tokens(&saved_id, saved))).await?;
        tracing::info!(profile = %id, "refreshed OAuth tokens");
        Ok(fresh)
    }

    fn gate(&self, id: &ProfileId) -> Arc<tokio::sync::Mutex<()>> {
        let mut gates = self
            .refresh_gates
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        gates.entry(id.clone()).or_default().clone()
    }
}

/// What a call presents: the secret itself, except for google-gemini-cli sign-ins, whose
/// calls need the Cloud Code Assist project too (pi's `{"token", "projectId"}`).
fn present(provider: &str, secret: &Secret, account_id: Option<&str>) -> Secret {
    match account_id {
        Some(project) if provider == GEMINI_CLI_PROVIDER => {
            Secret::new(crate::oauth::gemini_cli::api_key(secret.expose(), project))
        }
        _ => secret.clone(),
    }
}

fn needs_refresh(oauth: &OAuthCredential, now_ms: u64) -> bool {
    now_ms.saturating_add(REFRESH_MARGIN_MS) >= oauth.expires
}

/// Runs blocking file work (locks, fsync) off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
) -> Result<T, AuthError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AuthError::Task(e.to_string()))?
}
