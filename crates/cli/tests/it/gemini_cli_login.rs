//! `pincer auth login google-gemini-cli` against the fake OAuth server and the mock's Cloud
//! Code Assist: the browser's redirect completes the PKCE login, `loadCodeAssist` and
//! `onboardUser` provision the project, the profile is stored, and `pincer ask` with a
//! `google-gemini-cli` model streams through Code Assist with the signed-in token.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader};

use common::{Home, replies};
use pincer_testkit::google_cloud::MOCK_CODE_ASSIST_PROJECT;
use pincer_testkit::oauth::FakeOAuthServer;
use pincer_testkit::{Fault, MockLlm, Reply, Rule, Scenario};

const CLIENT_ID: &str = "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_login_stores_a_code_assist_profile_that_answers() {
    let oauth = FakeOAuthServer::start().await.unwrap();
    oauth.set_client_id(CLIENT_ID);
    // Tokens that are already due: the ask below must refresh first.
    oauth.set_expires_in(1);
    let llm = MockLlm::start(replies(&[("hi", "gemini here")]))
        .await
        .unwrap();
    let home = Home::new()
        .with_env("PINCER_GOOGLE_AUTH_URL", &oauth.url())
        .with_env("PINCER_CODE_ASSIST_URL", &llm.url())
        .with_env("PINCER_OAUTH_CALLBACK_PORT", "0");
    let mut child = home.spawn_piped(&["auth", "login", "google-gemini-cli"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "no URL printed");
        if line.starts_with("http") {
            break line.trim().to_owned();
        }
    };
    assert!(url.starts_with(&oauth.authorize_url()), "{url}");
    // Play the browser: the authorize endpoint redirects to the CLI's callback listener.
    let page = reqwest::get(&url).await.unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut out, &mut printed).unwrap();
    assert!(status.success(), "{printed}");
    let id = format!("google-gemini-cli:{MOCK_CODE_ASSIST_PROJECT}");
    assert!(
        printed.contains(&format!("Auth profile created: {id}")),
        "{printed}"
    );

    // pi's authorization request and code exchange.
    let authorize = &oauth.requests()[0];
    assert_eq!(authorize.param("access_type"), Some("offline"));
    assert_eq!(authorize.param("prompt"), Some("consent"));
    assert_eq!(
        authorize.param("scope"),
        Some(
            "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile"
        )
    );
    let exchanges = oauth.token_requests("authorization_code");
    assert_eq!(exchanges.len(), 1);
    assert_eq!(
        exchanges[0].param("client_secret"),
        Some("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")
    );
    // The project was looked up, then provisioned on the free tier.
    let setup: Vec<_> = llm.requests();
    let paths: Vec<&str> = setup.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/v1internal:loadCodeAssist", "/v1internal:onboardUser"]
    );
    assert_eq!(setup[1].body["tierId"], "free-tier");
    assert!(
        setup[0]
            .header("authorization")
            .is_some_and(|a| a.starts_with("Bearer "))
    );
    llm.clear_requests();

    // The profile answers through Cloud Code Assist.
    home.write_config(&format!(
        "{{ models: {{ providers: {{ \"google-gemini-cli\": {{ baseUrl: \"{}\" }} }} }} }}",
        llm.url()
    ));
    let answer = home.ask_json(&["--model", "google-gemini-cli/gemini-2.5-flash", "hi"]);
    assert_eq!(answer["result"], "gemini here", "{answer}");
    assert_eq!(answer["profileId"], id);
    let request = &llm.requests()[0];
    assert_eq!(request.path, "/v1internal:streamGenerateContent");
    assert_eq!(request.body["project"], MOCK_CODE_ASSIST_PROJECT);
    assert_eq!(request.body["model"], "gemini-2.5-flash");
    let bearer = request.header("authorization").unwrap();
    assert!(bearer.starts_with("Bearer ey"), "{bearer}");
    // The due token was refreshed with the installed app's client, and the project kept.
    let refreshes = oauth.token_requests("refresh_token");
    assert_eq!(refreshes.len(), 1);
    assert_eq!(refreshes[0].param("client_id"), Some(CLIENT_ID));
    assert_eq!(
        refreshes[0].param("client_secret"),
        Some("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")
    );
}

/// Logs in against `oauth` and Code Assist at `llm`; returns the profile id.
async fn login(home: &Home) -> String {
    let mut child = home.spawn_piped(&["auth", "login", "google-gemini-cli"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "no URL printed");
        if line.starts_with("http") {
            break line.trim().to_owned();
        }
    };
    assert!(reqwest::get(&url).await.unwrap().status().is_success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut out, &mut printed).unwrap();
    assert!(status.success(), "{printed}");
    format!("google-gemini-cli:{MOCK_CODE_ASSIST_PROJECT}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_refused_mid_use_is_refreshed_once_then_the_reply_streams() {
    let oauth = FakeOAuthServer::start().await.unwrap();
    oauth.set_client_id(CLIENT_ID);
    // The first streamed call is refused (rules match in order); the rest are answered.
    let scenario = Scenario::new()
        .rule(Rule::any().fault(Fault::status(401)).times(1))
        .default_reply(Reply::text("after a refresh"));
    let llm = MockLlm::start(scenario).await.unwrap();
    let home = Home::new()
        .with_env("PINCER_GOOGLE_AUTH_URL", &oauth.url())
        .with_env("PINCER_CODE_ASSIST_URL", &llm.url())
        .with_env("PINCER_OAUTH_CALLBACK_PORT", "0");
    let id = login(&home).await;
    home.write_config(&format!(
        "{{ models: {{ providers: {{ \"google-gemini-cli\": {{ baseUrl: \"{}\" }} }} }} }}",
        llm.url()
    ));
    llm.clear_requests();
    let answer = home.ask_json(&["--model", "google-gemini-cli/gemini-2.5-flash", "hi"]);
    assert_eq!(answer["result"], "after a refresh", "{answer}");
    assert_eq!(answer["profileId"], id);
    // The refused token was refreshed once; the retry carried the new one and the project.
    assert_eq!(oauth.token_requests("refresh_token").len(), 1);
    let calls = llm.requests();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_ne!(
        calls[0].header("authorization"),
        calls[1].header("authorization")
    );
    assert_eq!(calls[1].body["project"], MOCK_CODE_ASSIST_PROJECT);
}
