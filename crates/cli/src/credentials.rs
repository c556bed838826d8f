//! Auth profiles as the failover loop's credential source: each provider's ready profiles in
//! rotation order (a `--profile` pinned first for its provider), the environment when the
//! provider has no profiles, and every outcome written back (cooldowns after rate limits,
//! lastUsed after success) before the turn goes on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use futures_util::future::BoxFuture;
use pincer_ai::ErrorKind;
use pincer_ai::env::EnvSource;
use pincer_auth::{
    AuthError, AuthProfiles, AuthStore, CooldownPolicy, KeyResolver, ProfileId, failure_from_error,
};
use pincer_turns::failover::{Credential, CredentialSource};

use crate::app::App;

/// Providers that have at least one stored profile, sorted.
pub fn profile_providers(app: &App) -> Result<Vec<String>> {
    Ok(providers_of(&AuthStore::new(app.auth_path()).load()?))
}

fn providers_of(file: &AuthProfiles) -> Vec<String> {
    let mut providers: Vec<String> = file.profiles.values().map(|p| p.provider.clone()).collect();
    providers.sort();
    providers.dedup();
    providers
}

/// The auth file as one turn sees it: which providers have profiles (for choosing the
/// model) and the turn's credential source, whose first question is answered from the same
/// read. A gateway turn is planned on the blocking pool: reading the file there once saves
/// the model call a second read, and a trip to the pool, on the way to the provider.
pub struct TurnAuth {
    pub profile_providers: Vec<String>,
    pub credentials: Arc<dyn CredentialSource>,
}

/// The credential source of one run (blocking: it reads the auth file).
pub fn for_run(app: &App, pinned: Option<&str>) -> Result<TurnAuth> {
    let shared = SharedCredentials::new(app, pinned)?;
    shared.for_turn()
}

/// The credentials every turn of a process shares: one resolver, so concurrent turns wait
/// for one OAuth refresh instead of racing each other's.
#[derive(Clone)]
pub struct SharedCredentials(ProfileCredentials);

impl SharedCredentials {
    pub fn new(app: &App, pinned: Option<&str>) -> Result<Self> {
        let store = AuthStore::new(app.auth_path());
        let order = app.config.auth.order.clone();
        let policy =
            CooldownPolicy::default().with_cooldowns_ms(app.config.auth.cooldowns_ms.clone());
        let resolver = KeyResolver::new(store.clone())
            .with_order(order.clone())
            .with_policy(policy)
            .with_codex(pincer_auth::CodexOAuth::new(
                crate::auth_cmd::codex_config(app),
            )?)
            .with_copilot(pincer_auth::CopilotOAuth::new(
                crate::auth_logins::copilot_config(app, None),
            ))
            .with_anthropic(pincer_auth::AnthropicOAuth::new(
                crate::auth_logins::anthropic_config(app),
            ))
            .with_gemini_cli(pincer_auth::oauth::gemini_cli::GeminiCliOAuth::new(
                crate::auth_gemini::gemini_cli_config(app),
            ));
        Ok(Self(ProfileCredentials {
            resolver: Arc::new(resolver),
            store,
            order,
            env: Arc::clone(&app.env),
            pinned: pinned.map(ProfileId::from),
            prefetched: Arc::default(),
        }))
    }

    /// Reads the auth file for a turn (blocking: call it where file I/O may block).
    pub fn for_turn(&self) -> Result<TurnAuth> {
        let file = self.0.store.load()?;
        if let Some(pinned) = &self.0.pinned {
            // Fail early and clearly on a profile that does not exist.
            file.profile(pinned)?;
        }
        let profile_providers = providers_of(&file);
        let credentials = ProfileCredentials {
            prefetched: Arc::new(Mutex::new(Some(Prefetched {
                file,
                at: Instant::now(),
            }))),
            ..self.0.clone()
        };
        Ok(TurnAuth {
            profile_providers,
            credentials: Arc::new(credentials),
        })
    }
}

/// How long a turn's first read of the auth file stands in for a fresh one: long enough
/// for the turn to reach its model call, short enough that a queued turn does not miss a
/// cooldown another turn recorded meanwhile.
const PREFETCH_FRESH: Duration = Duration::from_secs(2);

/// The auth file as read while the turn was planned.
struct Prefetched {
    file: AuthProfiles,
    at: Instant,
}

#[derive(Clone)]
struct ProfileCredentials {
    resolver: Arc<KeyResolver>,
    store: AuthStore,
    order: BTreeMap<String, Vec<String>>,
    env: Arc<dyn EnvSource>,
    pinned: Option<ProfileId>,
    /// Used once, by the first question (later ones follow cooldowns the turn recorded).
    prefetched: Arc<Mutex<Option<Prefetched>>>,
}

fn now() -> u64 {
    pincer_auth::now_ms()
}

impl ProfileCredentials {
    /// The profiles to try for `provider`, best first; `None` when every profile is resting.
    fn profile_ids(
        &self,
        file: &AuthProfiles,
        provider: &str,
        now: u64,
    ) -> Result<Option<Vec<ProfileId>>, AuthError> {
        if let Some(pinned) = &self.pinned
            && file.profile(pinned)?.provider == provider
        {
            return Ok(Some(vec![pinned.clone()]));
        }
        let rotation = file.rotation(provider, &self.order, now);
        if rotation.ready.is_empty() && !rotation.resting.is_empty() {
            return Ok(None);
        }
        Ok(Some(rotation.ready))
    }

    /// The auth file: the turn's prefetched read when it is its first question and fresh,
    /// else read again on the blocking pool, not the runtime.
    async fn auth_file(&self) -> Result<AuthProfiles, AuthError> {
        let prefetched = self
            .prefetched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match prefetched {
            Some(read) if read.at.elapsed() < PREFETCH_FRESH => Ok(read.file),
            _ => {
                let store = self.store.clone();
                pincer_store::on_blocking_pool(move || Ok(store.load())).await?
            }
        }
    }

    async fn list(&self, provider: &str) -> Result<Vec<Credential>, AuthError> {
        let now = now();
        let file = self.auth_file().await?;
        let Some(ids) = self.profile_ids(&file, provider, now)? else {
            // Ask the resolver for its own explanation (when the first one frees up).
            return self
                .resolver
                .resolve_key(provider, None, self.env.as_ref(), now)
                .await
                .map(|_| Vec::new());
        };
        if ids.is_empty() && provider == pincer_auth::oauth::COPILOT_PROVIDER {
            // The environment's GitHub token, exchanged for a Copilot token.
            let env = self
                .resolver
                .copilot_env_token(self.env.as_ref(), now)
                .await?;
            return Ok(env
                .map(|secret| Credential {
                    profile_id: None,
                    secret: Some(secret),
                })
                .into_iter()
                .collect());
        }
        let mut out = Vec::new();
        let mut last_error = None;
        for id in ids {
            match self
                .resolver
                .resolve_profile_in(&file, provider, &id, now)
                .await
            {
                Ok(c) => out.push(Credential {
                    profile_id: c.profile_id.map(|p| p.to_string()),
                    secret: Some(c.secret),
                }),
                Err(e) => last_error = Some(e),
            }
        }
        match (out.is_empty(), last_error) {
            (true, Some(e)) => Err(e),
            _ => Ok(out),
        }
    }
}

impl CredentialSource for ProfileCredentials {
    fn candidates(&self, provider: &str) -> BoxFuture<'static, Result<Vec<Credential>, String>> {
        let this = self.clone();
        let provider = provider.to_owned();
        Box::pin(async move { this.list(&provider).await.map_err(|e| e.to_string()) })
    }

    fn succeeded(&self, _provider: &str, profile_id: &str) -> BoxFuture<'static, ()> {
        let resolver = Arc::clone(&self.resolver);
        let id = ProfileId::from(profile_id);
        Box::pin(async move {
            if let Err(e) = resolver.mark_success(&id, now()).await {
                tracing::warn!(profile = %id, error = %e, "cannot record the profile's success");
            }
        })
    }

    fn renew(
        &self,
        provider: &str,
        profile_id: Option<&str>,
        rejected: &pincer_base::Secret,
    ) -> BoxFuture<'static, Option<Credential>> {
        let this = self.clone();
        let (provider, id) = (provider.to_owned(), profile_id.map(ProfileId::from));
        let rejected = rejected.clone();
        Box::pin(async move {
            let renewed = this
                .resolver
                .renew_rejected(
                    &provider,
                    id.as_ref(),
                    rejected.expose(),
                    this.env.as_ref(),
                    now(),
                )
                .await;
            match renewed {
                Ok(secret) => secret.map(|secret| Credential {
                    profile_id: id.map(|p| p.to_string()),
                    secret: Some(secret),
                }),
                Err(e) => {
                    tracing::warn!(%provider, error = %e, "cannot renew the refused credential");
                    None
                }
            }
        })
    }

    fn failed(
        &self,
        _provider: &str,
        profile_id: &str,
        kind: &ErrorKind,
        message: &str,
    ) -> BoxFuture<'static, ()> {
        let resolver = Arc::clone(&self.resolver);
        let id = ProfileId::from(profile_id);
        let failure = failure_from_error(kind, message);
        Box::pin(async move {
            let Some(failure) = failure else { return };
            if let Err(e) = resolver.mark_failure(&id, failure, now()).await {
                tracing::warn!(profile = %id, error = %e, "cannot record the profile's failure");
            }
        })
    }
}
