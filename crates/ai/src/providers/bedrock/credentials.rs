//! AWS credentials for Bedrock: the standard provider chain — environment
//! (`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`), the shared profile
//! files (`profile`), web identity, container and instance metadata (`remote`) — behind
//! [`CredentialSource`] so tests inject their own, and [`CachedCredentials`], which keeps
//! what the chain found until shortly before it expires.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pincer_base::Secret;

use super::profile::{self, ProfileFiles};
use super::remote;
use crate::env::EnvSource;

/// Temporary credentials this close to expiry are fetched again before signing (the AWS
/// SDKs use five minutes too), so a signature never carries a token about to lapse.
pub const REFRESH_MARGIN_MS: i64 = 5 * 60 * 1000;

/// One set of AWS credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: Secret,
    pub session_token: Option<Secret>,
    /// When temporary credentials expire (ms since the epoch); None for long-term keys.
    pub expires_at_ms: Option<i64>,
    /// Where they came from (`environment`, `profile default`, …), for messages.
    pub source: String,
}

impl AwsCredentials {
    pub fn new(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<String>,
    ) -> Self {
        Self {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: Secret::new(secret_access_key),
            session_token: session_token.map(Secret::new),
            expires_at_ms: None,
            source: "static".to_owned(),
        }
    }

    fn fresh_at(&self, now_ms: i64) -> bool {
        self.expires_at_ms
            .is_none_or(|at| at.saturating_sub(REFRESH_MARGIN_MS) > now_ms)
    }
}

/// Why no credentials could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// No source in the chain had credentials; `tried` says what each one found.
    #[error(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE (a profile in ~/.aws/credentials or ~/.aws/config), AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN; or run where container or instance credentials are available ({tried})"
    )]
    NotFound { tried: String },
    /// A source that applies failed (a malformed profile file, STS refused the token, …).
    #[error("AWS credentials from {source_name}: {message}")]
    Source {
        source_name: String,
        message: String,
    },
}

impl CredentialError {
    pub(crate) fn source(source_name: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Source {
            source_name: source_name.into(),
            message: message.into(),
        }
    }
}

/// Something that produces AWS credentials.
pub trait CredentialSource: Send + Sync + std::fmt::Debug {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, CredentialError>>;
}

/// What one link of the chain found.
#[derive(Debug)]
pub(crate) enum Found {
    Credentials(AwsCredentials),
    /// This source does not apply here; the text says why (for the final message).
    Skip(String),
}

/// The standard chain, in the AWS SDKs' order: environment, shared profile files, web
/// identity, container, instance metadata. The first source that applies decides: one that
/// applies and fails is an error, not a reason to try the next.
#[derive(Clone)]
pub struct DefaultChain {
    env: Arc<dyn EnvSource>,
    http: crate::client::LazyHttpClient,
}

impl std::fmt::Debug for DefaultChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DefaultChain")
    }
}

impl DefaultChain {
    pub fn new(env: Arc<dyn EnvSource>, http: crate::client::LazyHttpClient) -> Self {
        Self { env, http }
    }

    async fn resolve(&self) -> Result<AwsCredentials, CredentialError> {
        let env = self.env.as_ref();
        let mut tried = Vec::new();
        let mut note = |found: Found| match found {
            Found::Credentials(c) => Some(c),
            Found::Skip(why) => {
                tried.push(why);
                None
            }
        };
        if let Some(c) = note(from_env(env)) {
            return Ok(c);
        }
        let files = ProfileFiles::locate(env);
        let selected = files.load().await?;
        if let Some(c) = note(profile::credentials(&selected, env, self.http.get()).await?) {
            return Ok(c);
        }
        if let Some(c) = note(remote::web_identity(env, self.http.get(), None).await?) {
            return Ok(c);
        }
        if let Some(c) = note(remote::container(env, self.http.get()).await?) {
            return Ok(c);
        }
        if let Some(c) = note(remote::instance_metadata(env, self.http.get()).await?) {
            return Ok(c);
        }
        Err(CredentialError::NotFound {
            tried: tried.join("; "),
        })
    }
}

impl CredentialSource for DefaultChain {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, CredentialError>> {
        Box::pin(self.resolve())
    }
}

/// `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`).
fn from_env(env: &dyn EnvSource) -> Found {
    match (
        env.var("AWS_ACCESS_KEY_ID"),
        env.var("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(id), Some(secret)) => Found::Credentials(AwsCredentials {
            source: "environment".into(),
            ..AwsCredentials::new(&id, &secret, env.var("AWS_SESSION_TOKEN"))
        }),
        (Some(_), None) => {
            Found::Skip("AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY".into())
        }
        _ => Found::Skip("no AWS_ACCESS_KEY_ID".into()),
    }
}

/// Credentials kept until [`REFRESH_MARGIN_MS`] before they expire; concurrent callers
/// share one fetch.
#[derive(Debug)]
pub struct CachedCredentials {
    inner: Arc<dyn CredentialSource>,
    cached: tokio::sync::Mutex<Option<AwsCredentials>>,
    now_ms: fn() -> i64,
}

impl CachedCredentials {
    pub fn new(inner: Arc<dyn CredentialSource>) -> Self {
        Self::with_clock(inner, pincer_base::time::now_ms)
    }

    /// With an injected clock (tests).
    pub fn with_clock(inner: Arc<dyn CredentialSource>, now_ms: fn() -> i64) -> Self {
        Self {
            inner,
            cached: tokio::sync::Mutex::new(None),
            now_ms,
        }
    }

    /// Cached credentials while fresh, else fetched anew.
    pub async fn get(&self) -> Result<AwsCredentials, CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| c.fresh_at((self.now_ms)())) {
            return Ok(c.clone());
        }
        let fresh = self.inner.credentials().await?;
        *cached = Some(fresh.clone());
        Ok(fresh)
    }

    /// The server refused `refused`: fetch again. `Ok(None)` when the source gives the same
    /// credentials back (static keys), so sending again is pointless.
    pub async fn refresh(
        &self,
        refused: &AwsCredentials,
    ) -> Result<Option<AwsCredentials>, CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(current) = cached.as_ref().filter(|c| *c != refused) {
            // Another caller refreshed meanwhile.
            return Ok(Some(current.clone()));
        }
        *cached = None;
        let fresh = self.inner.credentials().await?;
        *cached = Some(fresh.clone());
        Ok((fresh.access_key_id != refused.access_key_id
            || fresh.secret_access_key != refused.secret_access_key
            || fresh.session_token != refused.session_token)
            .then_some(fresh))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Hands out `key-1`, `key-2`, … each expiring at `expires`.
    #[derive(Debug)]
    struct Counting {
        calls: AtomicU32,
        expires: Option<i64>,
    }

    impl CredentialSource for Counting {
        fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, CredentialError>> {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let mut c = AwsCredentials::new(&format!("key-{n}"), "s", None);
            c.expires_at_ms = self.expires;
            Box::pin(async move { Ok(c) })
        }
    }

    fn counting(expires: Option<i64>) -> Arc<Counting> {
        Arc::new(Counting {
            calls: AtomicU32::new(0),
            expires,
        })
    }

    #[tokio::test]
    async fn cached_until_close_to_expiry() {
        let long = counting(Some(1_000_000_000));
        let cache = CachedCredentials::with_clock(long.clone(), || 0);
        assert_eq!(cache.get().await.unwrap().access_key_id, "key-1");
        assert_eq!(cache.get().await.unwrap().access_key_id, "key-1");
        // Expiring within the margin: every use fetches anew.
        let short = counting(Some(REFRESH_MARGIN_MS - 1));
        let cache = CachedCredentials::with_clock(short.clone(), || 0);
        assert_eq!(cache.get().await.unwrap().access_key_id, "key-1");
        assert_eq!(cache.get().await.unwrap().access_key_id, "key-2");
    }

    #[tokio::test]
    async fn refresh_says_whether_anything_changed() {
        let rotating = counting(None);
        let cache = CachedCredentials::with_clock(rotating, || 0);
        let first = cache.get().await.unwrap();
        let fresh = cache.refresh(&first).await.unwrap().unwrap();
        assert_eq!(fresh.access_key_id, "key-2");
        assert_eq!(cache.get().await.unwrap().access_key_id, "key-2");

        #[derive(Debug)]
        struct Static;
        impl CredentialSource for Static {
            fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, CredentialError>> {
                Box::pin(async { Ok(AwsCredentials::new("same", "s", None)) })
            }
        }
        let cache = CachedCredentials::new(Arc::new(Static));
        let first = cache.get().await.unwrap();
        assert_eq!(cache.refresh(&first).await.unwrap(), None);
    }

    #[test]
    fn environment_keys() {
        let env = crate::env::MapEnv::new([
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "SECRET"),
            ("AWS_SESSION_TOKEN", "TOKEN"),
        ]);
        let Found::Credentials(c) = from_env(&env) else {
            panic!("no credentials")
        };
        assert_eq!(c.access_key_id, "AKID");
        assert_eq!(c.secret_access_key.expose(), "SECRET");
        assert_eq!(c.session_token.as_ref().map(Secret::expose), Some("TOKEN"));
        let half = crate::env::MapEnv::new([("AWS_ACCESS_KEY_ID", "AKID")]);
        assert!(
            matches!(from_env(&half), Found::Skip(why) if why.contains("without AWS_SECRET_ACCESS_KEY"))
        );
    }
}
