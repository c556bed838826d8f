//! Auth profiles as the failover loop's credential source: each provider's ready profiles in
//! rotation order (a `--profile` pinned first for its provider), the environment when the
//! provider has no profiles, and every outcome written back (cooldowns after rate limits,
//! lastUsed after success) before the turn goes on.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Result;
use futures_util::future::BoxFuture;
use pincer_ai::ErrorKind;
use pincer_ai::env::EnvSource;
use pincer_auth::{
    AuthError, AuthStore, CooldownPolicy, KeyResolver, ProfileId, failure_from_error,
};
use pincer_turns::failover::{Credential, CredentialSource};

use crate::app::App;

/// Providers that have at least one stored profile, sorted.
pub fn profile_providers(app: &App) -> Result<Vec<String>> {
    let file = AuthStore::new(app.auth_path()).load()?;
    let mut providers: Vec<String> = file.profiles.values().map(|p| p.provider.clone()).collect();
    providers.sort();
    providers.dedup();
    Ok(providers)
}

/// The credential source of one run.
pub fn for_run(app: &App, pinned: Option<&str>) -> Result<Arc<dyn CredentialSource>> {
    let store = AuthStore::new(app.auth_path());
    if let Some(id) = pinned {
        // Fail early and clearly on a profile that does not exist.
        store.load()?.profile(&ProfileId::from(id))?;
    }
    let order = app.config.auth.order.clone();
    let policy = CooldownPolicy::default().with_cooldowns_ms(app.config.auth.cooldowns_ms.clone());
    let resolver = KeyResolver::new(store.clone())
        .with_order(order.clone())
        .with_policy(policy)
        .with_codex(pincer_auth::CodexOAuth::new(
            crate::auth_cmd::codex_config(app),
        )?);
    Ok(Arc::new(ProfileCredentials {
        resolver: Arc::new(resolver),
        store,
        order,
        env: Arc::clone(&app.env),
        pinned: pinned.map(ProfileId::from),
    }))
}

#[derive(Clone)]
struct ProfileCredentials {
    resolver: Arc<KeyResolver>,
    store: AuthStore,
    order: BTreeMap<String, Vec<String>>,
    env: Arc<dyn EnvSource>,
    pinned: Option<ProfileId>,
}

fn now() -> u64 {
    pincer_auth::now_ms()
}

impl ProfileCredentials {
    /// The profiles to try for `provider`, best first, from the auth file (blocking: it
    /// reads the file); `None` when every profile is resting.
    fn profile_ids(&self, provider: &str, now: u64) -> Result<Option<Vec<ProfileId>>, AuthError> {
        if let Some(pinned) = &self.pinned {
            let file = self.store.load()?;
            if file.profile(pinned)?.provider == provider {
                return Ok(Some(vec![pinned.clone()]));
            }
        }
        let rotation = self.store.rotation(provider, &self.order, now)?;
        if rotation.ready.is_empty() && !rotation.resting.is_empty() {
            return Ok(None);
        }
        Ok(Some(rotation.ready))
    }

    async fn list(&self, provider: &str) -> Result<Vec<Credential>, AuthError> {
        let now = now();
        // Every turn asks: the auth file is read on the blocking pool, not the runtime.
        let this = self.clone();
        let wanted = provider.to_owned();
        let ids =
            pincer_store::on_blocking_pool(move || Ok(this.profile_ids(&wanted, now))).await??;
        let Some(ids) = ids else {
            // Ask the resolver for its own explanation (when the first one frees up).
            return self
                .resolver
                .resolve_key(provider, None, self.env.as_ref(), now)
                .await
                .map(|_| Vec::new());
        };
        let mut out = Vec::new();
        let mut last_error = None;
        for id in ids {
            match self
                .resolver
                .resolve_key(provider, Some(id.as_str()), self.env.as_ref(), now)
                .await
            {
                Ok(Some(c)) => out.push(Credential {
                    profile_id: c.profile_id.map(|p| p.to_string()),
                    secret: Some(c.secret),
                }),
                Ok(None) => {}
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
