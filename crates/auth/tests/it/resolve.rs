//! Which credential a call gets (`KeyResolver::resolve_key`), and OAuth refresh: rotated
//! tokens persisted, one refresh at a time per profile, actionable failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use pincer_ai::env::MapEnv;
use pincer_auth::{
    AuthError, AuthStore, CodexOAuth, CodexOAuthConfig, CooldownPolicy, CredentialKind,
    FailureKind, KeyResolver, OAuthCredential, ProfileId, ResolvedCredential, Secret,
};
use pincer_testkit::oauth::{FAKE_ACCOUNT_ID, fake_access_token};
use pincer_testkit::{FakeOAuthServer, RefreshFailure};

use crate::common::assert_fails;

const NOW: u64 = 1_750_000_000_000;
const HOUR: u64 = 3_600_000;

fn no_env() -> MapEnv {
    MapEnv::default()
}

fn home() -> (tempfile::TempDir, AuthStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = AuthStore::in_home(dir.path());
    (dir, store)
}

/// API keys for openai in profiles `openai:a` (`sk-aaaaaaaaaaaa`) and `openai:b`
/// (`sk-bbbbbbbbbbbb`).
fn two_openai_keys(store: &AuthStore) -> (ProfileId, ProfileId) {
    let key = |name: &str, secret: &str| store.add_api_key("openai", Some(name), secret).unwrap();
    (key("a", "sk-aaaaaaaaaaaa"), key("b", "sk-bbbbbbbbbbbb"))
}

/// An openai-codex profile whose access token expired a minute ago.
fn expired_codex_profile(store: &AuthStore, refresh: &str) -> ProfileId {
    store
        .add_oauth(
            "openai-codex",
            OAuthCredential {
                access: Secret::new(fake_access_token(FAKE_ACCOUNT_ID, 0, 1)),
                refresh: Secret::new(refresh),
                expires: NOW - 60_000,
                account_id: Some(FAKE_ACCOUNT_ID.into()),
            },
        )
        .unwrap()
}

/// The key for openai-codex at `NOW`, with no environment.
async fn codex_key_now(resolver: &KeyResolver) -> Result<Option<ResolvedCredential>, AuthError> {
    resolver
        .resolve_key("openai-codex", None, &no_env(), NOW)
        .await
}

/// What `resolver` answers for `provider` (pinned to `profile` if given) under `env` at
/// `now`; an answer must name a credential.
async fn resolve(
    resolver: &KeyResolver,
    provider: &str,
    profile: Option<&str>,
    env: &MapEnv,
    now: u64,
) -> Result<ResolvedCredential, AuthError> {
    let answer = resolver.resolve_key(provider, profile, env, now).await;
    answer.map(|found| found.expect("a credential"))
}

fn resolver_with(server: &FakeOAuthServer, store: &AuthStore) -> KeyResolver {
    let codex = CodexOAuth::new(CodexOAuthConfig::with_issuer(&server.url())).unwrap();
    KeyResolver::new(store.clone()).with_codex(codex)
}

#[tokio::test]
async fn without_profiles_the_environment_answers() {
    let (_dir, store) = home();
    let resolver = KeyResolver::new(store.clone());
    let env = MapEnv::new([("OPENAI_API_KEY", "sk-env-key")]);
    let resolved = resolve(&resolver, "openai", None, &env, NOW).await.unwrap();
    assert_eq!(
        (resolved.profile_id, resolved.secret.expose(), resolved.kind),
        (None, "sk-env-key", CredentialKind::ApiKey)
    );
    assert_eq!(
        resolver
            .resolve_key("openai", None, &no_env(), NOW)
            .await
            .unwrap(),
        None
    );

    store.add_api_key("openai", None, "sk-profile-key").unwrap();
    let resolved = resolve(&resolver, "openai", None, &env, NOW).await.unwrap();
    assert_eq!(resolved.profile_id, Some("openai:default".into()));
    assert_eq!(resolved.secret.expose(), "sk-profile-key");
}

#[tokio::test]
async fn an_explicit_profile_wins_even_while_resting() {
    let (_dir, store) = home();
    let (_, b) = two_openai_keys(&store);
    store
        .mark_failure(&b, FailureKind::RateLimit, &CooldownPolicy::default(), NOW)
        .unwrap();
    let resolver = KeyResolver::new(store.clone());
    let env = MapEnv::new([("OPENAI_API_KEY", "sk-env")]);
    let rotated = resolve(&resolver, "openai", None, &env, NOW).await.unwrap();
    assert_eq!(rotated.profile_id, Some("openai:a".into()));
    let pinned = resolve(&resolver, "openai", Some("openai:b"), &env, NOW)
        .await
        .unwrap();
    assert_eq!(pinned.secret.expose(), "sk-bbbbbbbbbbbb");

    let refusals = [
        (
            "openai",
            "openai:zzz",
            "no auth profile \"openai:zzz\"; `pincer auth status` lists them",
        ),
        (
            "anthropic",
            "openai:a",
            "auth profile \"openai:a\" is for provider \"openai\", not \"anthropic\"",
        ),
    ];
    for (provider, profile, says) in refusals {
        let error = resolve(&resolver, provider, Some(profile), &env, NOW).await;
        assert_eq!(error.unwrap_err().to_string(), says);
    }
}

#[tokio::test]
async fn when_every_profile_rests_the_caller_learns_until_when() {
    let (_dir, store) = home();
    let (a, b) = two_openai_keys(&store);
    let resolver = KeyResolver::new(store.clone());
    resolver
        .mark_failure(&a, FailureKind::RateLimit, NOW)
        .await
        .unwrap();
    resolver
        .mark_failure(&b, FailureKind::Billing, NOW)
        .await
        .unwrap();
    let env = MapEnv::new([("OPENAI_API_KEY", "sk-env")]);
    let error = resolve(&resolver, "openai", None, &env, NOW + 30_000)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "every openai auth profile is rate limited or disabled (openai:a, openai:b); the first is usable again in 30s"
    );
    assert!(
        matches!(error, AuthError::AllCoolingDown { until_ms, .. } if until_ms == NOW + 60_000)
    );
    resolver.mark_success(&a, NOW + HOUR).await.unwrap();
    let back = resolve(&resolver, "openai", None, &env, NOW + HOUR)
        .await
        .unwrap();
    assert_eq!(back.profile_id, Some(a));
}

#[tokio::test]
async fn a_fresh_oauth_token_is_used_without_refreshing() {
    let server = FakeOAuthServer::start().await.unwrap();
    let (_dir, store) = home();
    let access = fake_access_token(FAKE_ACCOUNT_ID, 7, 3600);
    store
        .add_oauth(
            "openai-codex",
            OAuthCredential {
                access: Secret::new(access.clone()),
                refresh: Secret::new("rt-unused"),
                expires: NOW + HOUR,
                account_id: Some(FAKE_ACCOUNT_ID.into()),
            },
        )
        .unwrap();
    let resolver = resolver_with(&server, &store);
    let resolved = codex_key_now(&resolver).await.unwrap().unwrap();
    assert_eq!(resolved.secret.expose(), access);
    assert_eq!(resolved.kind, CredentialKind::OAuth);
    assert_eq!(resolved.account_id.as_deref(), Some(FAKE_ACCOUNT_ID));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn an_expired_token_is_refreshed_and_the_rotated_tokens_are_saved_first() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.seed_refresh_token("rt-seed");
    let (_dir, store) = home();
    let id = expired_codex_profile(&store, "rt-seed");
    let resolver = resolver_with(&server, &store);
    let resolved = codex_key_now(&resolver).await.unwrap().unwrap();
    assert_eq!(resolved.profile_id, Some(id.clone()));

    let saved = match &store.load().unwrap().profiles[&id].credential {
        pincer_auth::Credential::OAuth(oauth) => oauth.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(saved.access, resolved.secret);
    assert_eq!(saved.refresh.expose(), "rt-fake-1");
    assert_eq!(saved.expires, NOW + HOUR);
    let refreshes = server.token_requests("refresh_token");
    assert_eq!(refreshes.len(), 1);
    assert_eq!(refreshes[0].param("refresh_token"), Some("rt-seed"));

    // Within the margin before expiry the token is refreshed again, with the new one.
    let later = NOW + HOUR - 30_000;
    resolver
        .resolve_key("openai-codex", None, &no_env(), later)
        .await
        .unwrap();
    let refreshes = server.token_requests("refresh_token");
    assert_eq!(refreshes[1].param("refresh_token"), Some("rt-fake-1"));
}

#[tokio::test]
async fn concurrent_resolves_share_one_refresh() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.seed_refresh_token("rt-seed");
    server.set_refresh_delay(Duration::from_millis(200));
    let (_dir, store) = home();
    expired_codex_profile(&store, "rt-seed");
    let resolver = Arc::new(resolver_with(&server, &store));
    // A second resolver on the same file stands in for another process.
    let other_process = Arc::new(resolver_with(&server, &store));
    let tasks: Vec<_> = [&resolver, &resolver, &other_process, &resolver]
        .into_iter()
        .map(|r| {
            let r = Arc::clone(r);
            tokio::spawn(async move {
                r.resolve_key("openai-codex", None, &MapEnv::default(), NOW)
                    .await
                    .unwrap()
                    .unwrap()
                    .secret
            })
        })
        .collect();
    let mut secrets = Vec::new();
    for task in tasks {
        secrets.push(task.await.unwrap());
    }
    assert_eq!(server.token_requests("refresh_token").len(), 1);
    assert!(secrets.iter().all(|s| *s == secrets[0]));
}

#[tokio::test]
async fn a_refused_refresh_says_to_log_in_again_and_disables_the_profile() {
    for (failure, code) in [
        (RefreshFailure::InvalidGrant, "invalid_grant"),
        (
            RefreshFailure::RefreshTokenInvalidated,
            "refresh_token_invalidated",
        ),
    ] {
        let server = FakeOAuthServer::start().await.unwrap();
        server.fail_refreshes(Some(failure));
        let (_dir, store) = home();
        let id = expired_codex_profile(&store, "rt-dead");
        let resolver = resolver_with(&server, &store);
        let error = assert_fails(
            codex_key_now(&resolver).await,
            &format!(
                "auth profile openai-codex:{FAKE_ACCOUNT_ID}: the sign-in has expired or was revoked ({code}); run `pincer auth login openai-codex` again"
            ),
        );
        assert!(error.needs_login());
        let status = store.status(NOW).unwrap();
        assert_eq!(status[0].disabled_reason.as_deref(), Some("auth"));
        assert_eq!(status[0].disabled_until, Some(NOW + 24 * HOUR));
        // Explicitly asking for it tries again and says the same.
        let pinned = resolve(&resolver, "openai-codex", Some(id.as_str()), &no_env(), NOW)
            .await
            .unwrap_err();
        assert!(pinned.needs_login(), "{pinned}");
    }
}

#[tokio::test]
async fn an_outage_during_refresh_is_not_a_reason_to_log_in_again() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.seed_refresh_token("rt-seed");
    server.fail_refreshes(Some(RefreshFailure::Unavailable));
    let (_dir, store) = home();
    expired_codex_profile(&store, "rt-seed");
    let resolver = resolver_with(&server, &store);
    let error = assert_fails(
        codex_key_now(&resolver).await,
        &format!(
            "auth profile openai-codex:{FAKE_ACCOUNT_ID}: the token endpoint answered HTTP 503"
        ),
    );
    assert!(!error.needs_login());
    assert_eq!(store.status(NOW).unwrap()[0].disabled_until, None);
    server.fail_refreshes(None);
    assert!(codex_key_now(&resolver).await.is_ok());
}

#[tokio::test]
async fn a_dead_oauth_profile_gives_way_to_the_next_profile() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.fail_refreshes(Some(RefreshFailure::InvalidGrant));
    let (_dir, store) = home();
    expired_codex_profile(&store, "rt-dead");
    store
        .add_api_key("openai-codex", Some("key"), "sk-fallback-key")
        .unwrap();
    let resolver = resolver_with(&server, &store)
        .with_order(BTreeMap::new())
        .with_policy(CooldownPolicy::default());
    let resolved = codex_key_now(&resolver).await.unwrap().unwrap();
    assert_eq!(resolved.secret.expose(), "sk-fallback-key");
}

#[tokio::test]
async fn without_a_refresher_an_expired_login_asks_for_a_new_one() {
    let (_dir, store) = home();
    expired_codex_profile(&store, "rt");
    let resolver = KeyResolver::new(store.clone());
    assert_fails(
        codex_key_now(&resolver).await,
        &format!(
            "auth profile openai-codex:{FAKE_ACCOUNT_ID}: refreshing openai-codex sign-ins is not supported; run `pincer auth login openai-codex` again"
        ),
    );
}

#[tokio::test]
async fn resolved_credentials_and_errors_never_show_secrets() {
    let (_dir, store) = home();
    store
        .add_api_key("openai", None, "sk-TOPSECRET-0000")
        .unwrap();
    let resolver = KeyResolver::new(store.clone());
    let resolved = resolve(&resolver, "openai", None, &no_env(), NOW)
        .await
        .unwrap();
    let shown = format!("{resolved:?} {resolver:?}");
    assert!(!shown.contains("TOPSECRET"), "{shown}");
}
