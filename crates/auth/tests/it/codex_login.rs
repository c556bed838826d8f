//! The openai-codex sign-in against the fake authorization server: PKCE, the authorize URL,
//! the callback listener (the test plays the browser), the paste fallback, and the parsers
//! of what comes back (token answers, JWTs, pasted text).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use pincer_auth::oauth::{
    CODEX_CLIENT_ID, JwtError, Pkce, chatgpt_account_id, decode_jwt_payload,
    parse_authorization_input, parse_token_error, parse_token_response, random_state,
};
use pincer_auth::{CodexLogin, CodexOAuth, CodexOAuthConfig, OAuthError, Secret};
use pincer_testkit::oauth::{FAKE_ACCOUNT_ID, fake_jwt};
use pincer_testkit::{FakeOAuthServer, RefreshFailure};
use serde_json::json;

use crate::common::assert_fails;

const NOW: u64 = 1_750_000_000_000;

fn codex_for(server: &FakeOAuthServer) -> CodexOAuth {
    CodexOAuth::new(CodexOAuthConfig::with_issuer(&server.url()).callback_port(0)).unwrap()
}

fn query(url: &str) -> BTreeMap<String, String> {
    let url = url::Url::parse(url).unwrap();
    url.query_pairs().into_owned().collect()
}

/// Plays the browser up to the redirect: GET the authorize URL, return where it redirects.
async fn sign_in(login: &CodexLogin) -> String {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = browser.get(login.url()).send().await.unwrap();
    assert_eq!(answer.status(), 302);
    answer.headers()["location"].to_str().unwrap().to_owned()
}

/// The browser following a redirect to the loopback listener (`localhost` → 127.0.0.1).
async fn follow(location: &str) -> (u16, String) {
    let url = location.replace("://localhost:", "://127.0.0.1:");
    let answer = reqwest::get(url).await.unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// The code `login`'s callback server was given within `wait`, if any; waiting must not fail.
async fn callback_code(login: &mut CodexLogin, wait: Duration) -> Option<Secret> {
    login.wait_for_callback(wait).await.unwrap()
}
#[test]
fn pkce_matches_rfc_7636_and_state_is_random_hex() {
    let pkce = Pkce::from_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
    assert_eq!(
        pkce.challenge(),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    assert_eq!(
        format!("{pkce:?}"),
        "Pkce { verifier: Secret(***), challenge: \"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM\" }"
    );
    let fresh = Pkce::generate().unwrap();
    assert_eq!(fresh.verifier().expose().len(), 43);
    assert_ne!(fresh.verifier(), Pkce::generate().unwrap().verifier());
    assert_eq!(format!("{fresh:?}").matches("***").count(), 1);
    let state = random_state().unwrap();
    assert_eq!(state.len(), 32);
    assert!(
        state
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_ne!(state, random_state().unwrap());
}

#[tokio::test]
async fn the_authorize_url_carries_pi_parameters() {
    let real = CodexOAuth::new(CodexOAuthConfig::default()).unwrap();
    let url = real.authorize_url("CHALLENGE", "STATE", "http://localhost:1455/auth/callback");
    assert_eq!(
        url,
        "https://auth.openai.com/oauth/authorize?response_type=code\
         &client_id=app_EMoamEEZ73f0CkXaXp7hrann\
         &redirect_uri=http%3A%2F%2Flocalhost%3A1455%2Fauth%2Fcallback\
         &scope=openid+profile+email+offline_access&code_challenge=CHALLENGE\
         &code_challenge_method=S256&state=STATE&id_token_add_organizations=true\
         &codex_cli_simplified_flow=true&originator=codex_cli_rs"
    );
    assert_eq!(
        real.config().token_url,
        "https://auth.openai.com/oauth/token"
    );
    assert_eq!(real.config().callback_port, 1455);
}

#[tokio::test]
async fn full_login_through_the_callback_listener() {
    let server = FakeOAuthServer::start().await.unwrap();
    let mut login = codex_for(&server).begin().await.unwrap();
    let start = login.start().clone();
    let port = start.listening_on.unwrap().port();
    assert_eq!(
        start.redirect_uri,
        format!("http://localhost:{port}/auth/callback")
    );
    assert_eq!(start.listener_error, None);

    let location = sign_in(&login).await;
    let (status, page) = follow(&location).await;
    assert_eq!(status, 200);
    assert!(page.contains("You can close this window"), "{page}");
    let code = callback_code(&mut login, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(code.expose(), "code-fake-1");

    let credential = login.exchange(&code, NOW).await.unwrap();
    assert_eq!(credential.account_id.as_deref(), Some(FAKE_ACCOUNT_ID));
    assert_eq!(credential.expires, NOW + 3_600_000);
    assert_eq!(credential.refresh.expose(), "rt-fake-2");
    assert_eq!(
        chatgpt_account_id(credential.access.expose()).unwrap(),
        FAKE_ACCOUNT_ID
    );

    let exchanges = server.token_requests("authorization_code");
    assert_eq!(exchanges.len(), 1);
    let form = &exchanges[0].params;
    let keys: Vec<&str> = form.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "client_id",
            "code",
            "code_verifier",
            "grant_type",
            "redirect_uri"
        ]
    );
    assert_eq!(form["client_id"], CODEX_CLIENT_ID);
    assert_eq!(form["redirect_uri"], start.redirect_uri);
    let authorize = &server.requests()[0];
    assert_eq!(
        authorize.param("redirect_uri"),
        Some(start.redirect_uri.as_str())
    );
    assert_eq!(
        Pkce::from_verifier(&form["code_verifier"]).challenge(),
        authorize.param("code_challenge").unwrap()
    );
}

#[tokio::test]
async fn a_redirect_with_another_state_is_refused_and_the_login_keeps_waiting() {
    let server = FakeOAuthServer::start().await.unwrap();
    let mut login = codex_for(&server).begin().await.unwrap();
    let location = sign_in(&login).await;
    let state = query(&location)["state"].clone();
    let forged = location.replace(&state, "not-the-state");
    assert_eq!(follow(&forged).await, (400, "State mismatch".to_owned()));
    let no_code = location.replace("code=", "nocode=");
    assert_eq!(
        follow(&no_code).await,
        (400, "Missing authorization code".to_owned())
    );
    assert!(
        callback_code(&mut login, Duration::from_millis(50))
            .await
            .is_none()
    );
    // The real redirect still completes the login.
    assert_eq!(follow(&location).await.0, 200);
    let code = callback_code(&mut login, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(login.exchange(&code, NOW).await.is_ok());
}

#[tokio::test]
async fn a_denied_sign_in_is_reported() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.deny_authorization(true);
    let mut login = codex_for(&server).begin().await.unwrap();
    let location = sign_in(&login).await;
    assert_eq!(follow(&location).await.0, 400);
    assert_fails(
        login.wait_for_callback(Duration::from_secs(5)).await,
        "sign-in was refused: access_denied (The user denied access)",
    );
}

#[tokio::test]
async fn paste_fallback_accepts_the_redirect_url_or_the_bare_code() {
    let server = FakeOAuthServer::start().await.unwrap();
    let codex = codex_for(&server);

    let mut login = codex.begin().await.unwrap();
    let location = sign_in(&login).await;
    assert!(
        callback_code(&mut login, Duration::from_millis(20))
            .await
            .is_none()
    );
    let credential = login
        .finish_with_pasted(&format!("  {location}\n"), NOW)
        .await
        .unwrap();
    assert_eq!(credential.account_id.as_deref(), Some(FAKE_ACCOUNT_ID));

    let login = codex.begin().await.unwrap();
    let code = query(&sign_in(&login).await)["code"].clone();
    assert!(login.finish_with_pasted(&code, NOW).await.is_ok());

    let login = codex.begin().await.unwrap();
    let location = sign_in(&login).await;
    let state = query(&location)["state"].clone();
    let forged = location.replace(&state, "0123");
    assert!(matches!(
        login.parse_pasted(&forged),
        Err(OAuthError::StateMismatch)
    ));
    assert!(matches!(
        login.parse_pasted("   "),
        Err(OAuthError::MissingCode)
    ));
    assert_fails(
        login.finish_with_pasted(&forged, NOW).await,
        "the sign-in response does not belong to this login (state mismatch); start again",
    );
}

#[tokio::test]
async fn a_busy_callback_port_falls_back_to_pasting() {
    let server = FakeOAuthServer::start().await.unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let config = CodexOAuthConfig::with_issuer(&server.url()).callback_port(port);
    let mut login = CodexOAuth::new(config).unwrap().begin().await.unwrap();
    assert_eq!(login.start().listening_on, None);
    assert!(
        login
            .start()
            .listener_error
            .as_ref()
            .unwrap()
            .contains(&port.to_string())
    );
    assert_eq!(
        login.start().redirect_uri,
        format!("http://localhost:{port}/auth/callback")
    );
    assert!(
        callback_code(&mut login, Duration::from_secs(5))
            .await
            .is_none()
    );
    let location = sign_in(&login).await;
    assert!(login.finish_with_pasted(&location, NOW).await.is_ok());
}

#[tokio::test]
async fn a_refused_code_exchange_names_the_server_error() {
    let server = FakeOAuthServer::start().await.unwrap();
    let login = codex_for(&server).begin().await.unwrap();
    sign_in(&login).await;
    assert_fails(
        login.exchange(&Secret::new("code-never-issued"), NOW).await,
        "the token endpoint answered HTTP 400: invalid_grant (unknown or used code)",
    );
}

#[tokio::test]
async fn refresh_rotates_tokens_and_reports_dead_refresh_tokens() {
    let server = FakeOAuthServer::start().await.unwrap();
    server.seed_refresh_token("rt-seed");
    let codex = codex_for(&server);
    let fresh = codex.refresh(&Secret::new("rt-seed"), NOW).await.unwrap();
    assert_eq!(fresh.refresh.expose(), "rt-fake-1");
    assert_eq!(fresh.expires, NOW + 3_600_000);
    let reused = assert_fails(
        codex.refresh(&Secret::new("rt-seed"), NOW).await,
        "the sign-in has expired or was revoked (refresh_token_reused); run `pincer auth login openai-codex` again",
    );
    assert!(reused.needs_login());
    server.fail_refreshes(Some(RefreshFailure::Unavailable));
    let outage = assert_fails(
        codex.refresh(&fresh.refresh, NOW).await,
        "the token endpoint answered HTTP 503",
    );
    assert!(!outage.needs_login());
    let form = &server.token_requests("refresh_token")[0].params;
    let keys: Vec<&str> = form.keys().map(String::as_str).collect();
    assert_eq!(keys, ["client_id", "grant_type", "refresh_token"]);
}

#[test]
fn token_answers_are_checked_field_by_field() {
    let ok = parse_token_response(
        br#"{"access_token":"a","refresh_token":"r","expires_in":60,"token_type":"Bearer"}"#,
        NOW,
    )
    .unwrap();
    assert_eq!((ok.access.expose(), ok.expires), ("a", NOW + 60_000));
    assert_eq!(ok.refresh.as_ref().map(Secret::expose), Some("r"));
    let kept = parse_token_response(br#"{"access_token":"a","expires_in":1.5}"#, NOW).unwrap();
    assert_eq!((kept.refresh, kept.expires), (None, NOW + 1_500));

    let bad: &[(&[u8], &str)] = &[
        (b"", "not JSON"),
        (b"<html>", "not JSON"),
        (b"[1]", "not a JSON object"),
        (
            br#"{"refresh_token":"r","expires_in":1}"#,
            "access_token is missing",
        ),
        (
            br#"{"access_token":"","expires_in":1}"#,
            "access_token is not a non-empty string",
        ),
        (
            br#"{"access_token":7,"expires_in":1}"#,
            "access_token is not a non-empty string",
        ),
        (
            br#"{"access_token":"a","refresh_token":false,"expires_in":1}"#,
            "refresh_token is not a non-empty string",
        ),
        (br#"{"access_token":"a"}"#, "expires_in is missing"),
        (
            br#"{"access_token":"a","expires_in":"3600"}"#,
            "expires_in is not a positive number",
        ),
        (
            br#"{"access_token":"a","expires_in":0}"#,
            "expires_in is not a positive number",
        ),
        (
            br#"{"access_token":"a","expires_in":-5}"#,
            "expires_in is not a positive number",
        ),
    ];
    for (body, expected) in bad {
        let error = parse_token_response(body, NOW).unwrap_err().to_string();
        assert_eq!(
            error,
            format!("the token endpoint sent a malformed response: {expected}"),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    let huge = parse_token_response(br#"{"access_token":"a","expires_in":1e300}"#, NOW).unwrap();
    assert_eq!(huge.expires, NOW + 10 * 365 * 24 * 3600 * 1000);
}

#[test]
fn token_errors_are_read_in_both_shapes() {
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        parse_token_error(br#"{"error":"invalid_grant","error_description":"expired"}"#),
        (some("invalid_grant"), some("expired"))
    );
    assert_eq!(
        parse_token_error(br#"{"error":{"code":"token_expired","message":"m","type":"t"}}"#),
        (some("token_expired"), some("m"))
    );
    assert_eq!(
        parse_token_error(br#"{"error":{"type":"server_error"}}"#),
        (some("server_error"), None)
    );
    for junk in [
        &b""[..],
        b"oops",
        b"[]",
        br#"{"error":5}"#,
        br#"{"message":"x"}"#,
    ] {
        assert_eq!(parse_token_error(junk), (None, None));
    }
    let long = format!(
        r#"{{"error":"e","error_description":"{}"}}"#,
        "x".repeat(5000)
    );
    assert_eq!(parse_token_error(long.as_bytes()).1.unwrap().len(), 200);
}

#[test]
fn jwts_are_read_defensively() {
    let token =
        fake_jwt(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-42"}}));
    assert_eq!(chatgpt_account_id(&token).unwrap(), "acct-42");
    let padded = {
        use base64::Engine as _;
        let payload = base64::engine::general_purpose::URL_SAFE
            .encode(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"p"}}"#);
        format!("h.{payload}.s")
    };
    assert_eq!(chatgpt_account_id(&padded).unwrap(), "p");
    assert_eq!(
        decode_jwt_payload(&fake_jwt(&json!({"a": 1}))).unwrap()["a"],
        1
    );

    let cases: Vec<(String, JwtError)> = vec![
        ("".into(), JwtError::NotAJwt),
        ("abc".into(), JwtError::NotAJwt),
        ("a.b".into(), JwtError::NotAJwt),
        ("a.b.c.d".into(), JwtError::NotAJwt),
        ("a..c".into(), JwtError::NotAJwt),
        ("a.!!!.c".into(), JwtError::BadBase64),
        ("a.bm90IGpzb24.c".into(), JwtError::NotAnObject),
        ("a.WzFd.c".into(), JwtError::NotAnObject),
        (fake_jwt(&json!({"sub": "x"})), JwtError::MissingAccountId),
        (
            fake_jwt(&json!({"https://api.openai.com/auth": "x"})),
            JwtError::MissingAccountId,
        ),
        (
            fake_jwt(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": ""}})),
            JwtError::MissingAccountId,
        ),
        (
            fake_jwt(&json!({"https://api.openai.com/auth": {"chatgpt_account_id": 5}})),
            JwtError::MissingAccountId,
        ),
        (format!("a.{}.c", "A".repeat(70_000)), JwtError::TooLong),
    ];
    for (token, expected) in cases {
        assert_eq!(
            chatgpt_account_id(&token).unwrap_err(),
            expected,
            "{token:.40}"
        );
    }
}

#[test]
fn pasted_answers_are_read_like_pi_reads_them() {
    let read = |input: &str| {
        let pasted = parse_authorization_input(input);
        (pasted.code.map(|c| c.expose().to_owned()), pasted.state)
    };
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        read("http://localhost:1455/auth/callback?code=C1&state=S1"),
        (some("C1"), some("S1"))
    );
    assert_eq!(
        read("http://localhost:1455/auth/callback?state=S1"),
        (None, some("S1"))
    );
    assert_eq!(
        read("https://x.invalid/cb?code=a%2Bb&scope=z"),
        (some("a+b"), None)
    );
    assert_eq!(read("C2#S2"), (some("C2"), some("S2")));
    assert_eq!(read("#S2"), (None, some("S2")));
    assert_eq!(read("code=C3&state=S3"), (some("C3"), some("S3")));
    assert_eq!(read("?code=C4"), (some("C4"), None));
    assert_eq!(read("  bare-code\n"), (some("bare-code"), None));
    assert_eq!(read(""), (None, None));
    assert_eq!(read("\t \n"), (None, None));
    assert_eq!(read("http://localhost:1455/auth/callback"), (None, None));
    assert_eq!(read("http://[broken"), (some("http://[broken"), None));
}
