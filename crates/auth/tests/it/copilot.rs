//! The github-copilot device flow and token exchange against the fake GitHub (polling
//! after `slow_down`, expiry), Copilot and Claude profiles refreshed by the resolver, a
//! refused token renewed once, and the Claude token endpoint's JSON refresh.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use pincer_ai::env::MapEnv;
use pincer_auth::oauth::OAuthError;
use pincer_auth::{
    AnthropicOAuth, AnthropicOAuthConfig, AuthError, AuthStore, CopilotOAuth, CopilotOAuthConfig,
    Credential, KeyResolver, OAuthCredential, ProfileId, Secret, now_ms,
};
use pincer_testkit::FakeOAuthServer;
use pincer_testkit::github_copilot::{FAKE_GITHUB_TOKEN, FakeGitHub, Poll};

const TOKEN_PATH: &str = "/copilot_internal/v2/token";
const POLL_PATH: &str = "/login/oauth/access_token";

fn copilot(github: &FakeGitHub) -> CopilotOAuth {
    let mut config = CopilotOAuthConfig::with_urls(&github.url(), &github.url());
    config.min_poll_interval = Duration::from_millis(20);
    CopilotOAuth::new(config)
}

fn home() -> (tempfile::TempDir, AuthStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = AuthStore::in_home(dir.path());
    (dir, store)
}

#[tokio::test]
async fn slow_down_stretches_the_polling_and_the_token_follows() {
    let github = FakeGitHub::start().await.unwrap();
    github.set_script([Poll::Pending, Poll::SlowDown(Some(1))]);
    let oauth = copilot(&github);
    let device = oauth.start_device_flow().await.unwrap();
    let started = Instant::now();
    let token = oauth.poll_for_github_token(&device).await.unwrap();
    assert_eq!(token.expose(), FAKE_GITHUB_TOKEN);
    assert_eq!(github.requests_to(POLL_PATH).len(), 3);
    // After slow_down the wait is the new interval (1 s) × 1.4.
    assert!(started.elapsed() >= Duration::from_millis(1400));
}

#[tokio::test]
async fn a_code_nobody_enters_expires() {
    let github = FakeGitHub::start().await.unwrap();
    github.set_script(vec![Poll::Pending; 1000]);
    github.set_timing(0, 1);
    let oauth = copilot(&github);
    let device = oauth.start_device_flow().await.unwrap();
    let error = oauth.poll_for_github_token(&device).await.unwrap_err();
    assert!(
        matches!(error, OAuthError::DeviceCodeExpired { slowed_down: false }),
        "{error:?}"
    );

    github.set_script([Poll::SlowDown(Some(1)), Poll::Pending]);
    let device = oauth.start_device_flow().await.unwrap();
    let error = oauth.poll_for_github_token(&device).await.unwrap_err();
    assert!(error.to_string().contains("clock drift"), "{error}");

    github.set_script([Poll::Error("access_denied".into())]);
    let device = oauth.start_device_flow().await.unwrap();
    let error = oauth.poll_for_github_token(&device).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "sign-in was refused: access_denied (the login cannot go on)"
    );
}

#[tokio::test]
async fn the_exchange_keeps_the_github_token_and_the_enterprise_domain() {
    let github = FakeGitHub::start().await.unwrap();
    let mut config = CopilotOAuthConfig::with_urls(&github.url(), &github.url());
    config.enterprise_domain = Some("company.ghe.com".into());
    let credential = CopilotOAuth::new(config)
        .exchange(&Secret::new(FAKE_GITHUB_TOKEN), now_ms())
        .await
        .unwrap();
    assert_eq!(credential.access.expose(), github.copilot_token(1));
    assert_eq!(credential.refresh.expose(), FAKE_GITHUB_TOKEN);
    assert_eq!(credential.account_id.as_deref(), Some("company.ghe.com"));
    // 30 minutes from now, less the five-minute margin (give or take the clock's second).
    let left = credential.expires.saturating_sub(now_ms());
    assert!((24 * 60_000..=25 * 60_000).contains(&left), "{left}");

    github.revoke_github_tokens();
    let error = copilot(&github)
        .exchange(&Secret::new(FAKE_GITHUB_TOKEN), now_ms())
        .await
        .unwrap_err();
    assert!(error.needs_login(), "{error:?}");
}

#[tokio::test]
async fn the_resolver_exchanges_again_when_due_and_once_after_a_refusal() {
    let github = FakeGitHub::start().await.unwrap();
    let (_dir, store) = home();
    let id = store
        .add_oauth(
            "github-copilot",
            OAuthCredential {
                access: Secret::new("tid=stale"),
                refresh: Secret::new(FAKE_GITHUB_TOKEN),
                expires: now_ms() - 1,
                account_id: None,
            },
        )
        .unwrap();
    let resolver = KeyResolver::new(store.clone()).with_copilot(copilot(&github));
    let env = MapEnv::default();
    let found = resolver
        .resolve_key("github-copilot", None, &env, now_ms())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.secret.expose(), github.copilot_token(1));
    assert_eq!(found.profile_id, Some(id.clone()));

    // A refusal of the current token renews it; a refusal of an old one does not.
    let renewed = resolver
        .renew_rejected(
            "github-copilot",
            Some(&id),
            &github.copilot_token(1),
            &env,
            now_ms(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renewed.expose(), github.copilot_token(2));
    let kept = resolver
        .renew_rejected("github-copilot", Some(&id), "tid=stale", &env, now_ms())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept.expose(), github.copilot_token(2));
    assert_eq!(github.requests_to(TOKEN_PATH).len(), 2);
    let stored = store.load().unwrap();
    match &stored.profile(&id).unwrap().credential {
        Credential::OAuth(saved) => {
            assert_eq!(saved.access.expose(), github.copilot_token(2));
            assert_eq!(saved.refresh.expose(), FAKE_GITHUB_TOKEN);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn environment_github_tokens_are_exchanged_in_priority_order_and_cached() {
    let github = FakeGitHub::start().await.unwrap();
    github.accept_github_token("gh_first");
    let (_dir, store) = home();
    let resolver = KeyResolver::new(store).with_copilot(copilot(&github));
    let env = MapEnv::new([("GH_TOKEN", "gh_first"), ("GITHUB_TOKEN", "gh_second")]);
    for _ in 0..2 {
        let token = resolver
            .copilot_env_token(&env, now_ms())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(token.expose(), github.copilot_token(1));
    }
    let exchanges = github.requests_to(TOKEN_PATH);
    assert_eq!(exchanges.len(), 1);
    assert_eq!(
        exchanges[0].header("authorization"),
        Some("Bearer gh_first")
    );
    assert!(
        resolver
            .copilot_env_token(&MapEnv::default(), now_ms())
            .await
            .unwrap()
            .is_none()
    );
    github.revoke_github_tokens();
    let env = MapEnv::new([("COPILOT_GITHUB_TOKEN", "gh_revoked")]);
    let error = resolver
        .copilot_env_token(&env, now_ms())
        .await
        .unwrap_err();
    assert!(matches!(error, AuthError::Refresh { .. }), "{error:?}");
}

#[tokio::test]
async fn claude_refreshes_post_json_and_rotate() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.set_client_id(pincer_auth::oauth::anthropic::ANTHROPIC_CLIENT_ID);
    server.set_access_token_prefix("sk-ant-oat01-");
    server.seed_refresh_token("rt-claude");
    let oauth = AnthropicOAuth::new(AnthropicOAuthConfig::with_base(&server.url()));
    let now = now_ms();
    let fresh = oauth.refresh(&Secret::new("rt-claude"), now).await.unwrap();
    assert_eq!(fresh.access.expose(), "sk-ant-oat01-1");
    assert_eq!(fresh.refresh.expose(), "rt-fake-1");
    assert_eq!(fresh.expires, now + 3_600_000 - 300_000);
    let sent = &server.token_requests("refresh_token")[0];
    assert_eq!(sent.path, "/v1/oauth/token");
    assert_eq!(sent.param("refresh_token"), Some("rt-claude"));
    // The old refresh token was rotated away.
    let error = oauth
        .refresh(&Secret::new("rt-claude"), now)
        .await
        .unwrap_err();
    assert!(error.needs_login(), "{error:?}");

    // The resolver refreshes a due Claude profile with it.
    let (_dir, store) = home();
    let id: ProfileId = store
        .add_oauth(
            "anthropic",
            OAuthCredential {
                access: Secret::new("sk-ant-oat01-old"),
                refresh: Secret::new("rt-fake-1"),
                expires: now - 1,
                account_id: None,
            },
        )
        .unwrap();
    let resolver = KeyResolver::new(store).with_anthropic(oauth);
    let found = resolver
        .resolve_key("anthropic", None, &MapEnv::default(), now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.secret.expose(), "sk-ant-oat01-2");
    assert_eq!(found.profile_id, Some(id));
}
