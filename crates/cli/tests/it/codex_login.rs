//! `pincer auth login openai-codex` against the fake OAuth server: the browser's redirect
//! to the callback listener, the paste fallback, then a turn answered with the signed-in
//! profile through ChatGPT's Codex backend (the mock LLM).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Write};

use common::{Home, replies};
use pincer_testkit::MockLlm;
use pincer_testkit::oauth::{FAKE_ACCOUNT_ID, FakeOAuthServer};

/// Starts the login and returns the child and the authorize URL it printed. The caller
/// waits on the child (the lint cannot see through the return).
#[allow(clippy::zombie_processes)]
fn start_login(
    home: &Home,
    args: &[&str],
) -> (
    std::process::Child,
    String,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = home.spawn_piped(args);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the login printed no URL"
        );
        if line.starts_with("http") {
            return (child, line.trim().to_owned(), out);
        }
    }
}

fn rest(mut out: BufReader<std::process::ChildStdout>) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut out, &mut text).unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_redirect_completes_the_login_and_the_profile_answers() {
    let oauth = FakeOAuthServer::start().await.unwrap();
    let home = Home::new()
        .with_env("PINCER_OPENAI_AUTH_ISSUER", &oauth.url())
        .with_env("PINCER_OAUTH_CALLBACK_PORT", "0");
    let (mut child, url, out) = start_login(&home, &["auth", "login", "openai-codex"]);
    assert!(url.starts_with(&oauth.authorize_url()), "{url}");
    // Play the browser: the authorize endpoint redirects to the CLI's callback listener.
    let page = reqwest::get(&url).await.unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let printed = rest(out);
    assert!(status.success(), "{printed}");
    let id = format!("openai-codex:{FAKE_ACCOUNT_ID}");
    assert!(
        printed.contains(&format!("Auth profile created: {id}")),
        "{printed}"
    );
    assert!(printed.contains("Credential expires: "), "{printed}");
    assert_eq!(oauth.token_requests("authorization_code").len(), 1);

    // The signed-in profile answers through ChatGPT's Codex backend.
    let llm = MockLlm::start(replies(&[("hi", "codex here")]))
        .await
        .unwrap();
    home.write_config(&format!(
        "{{ models: {{ providers: {{ \"openai-codex\": {{ baseUrl: \"{}\" }} }} }} }}",
        llm.url()
    ));
    let out = home.ask_json(&["hi"]);
    assert_eq!(out["result"], "codex here");
    assert_eq!(
        (out["provider"].as_str(), out["model"].as_str()),
        (Some("openai-codex"), Some("gpt-5.4"))
    );
    assert_eq!(out["profileId"], id);
    let request = &llm.requests()[0];
    assert_eq!(request.path, "/codex/responses");
    assert_eq!(request.header("chatgpt-account-id"), Some(FAKE_ACCOUNT_ID));
    assert!(
        request
            .header("authorization")
            .unwrap()
            .starts_with("Bearer ")
    );
    let status = home.run(&["auth", "status"]).stdout();
    common::assert_contains(
        &status,
        &[
            &format!("{id} provider=openai-codex type=oauth"),
            &format!("account={FAKE_ACCOUNT_ID}"),
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redirect_url_can_be_pasted_instead() {
    let oauth = FakeOAuthServer::start().await.unwrap();
    let home = Home::new().with_env("PINCER_OPENAI_AUTH_ISSUER", &oauth.url());
    let (mut child, url, out) = start_login(&home, &["auth", "login", "openai-codex", "--paste"]);
    // The browser would be sent here; nothing listens, so the user copies the address.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = client.get(&url).send().await.unwrap();
    let location = answer.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.contains("code="), "{location}");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{location}").unwrap();
    drop(stdin);
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let printed = rest(out);
    assert!(status.success(), "{printed}");
    assert!(
        printed.contains("Auth profile created: openai-codex:"),
        "{printed}"
    );

    // A pasted answer of another login (wrong state) is refused.
    let (mut child, _url, _out) = start_login(&home, &["auth", "login", "openai-codex", "--paste"]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "http://localhost:1455/auth/callback?code=x&state=not-this-one"
    )
    .unwrap();
    drop(stdin);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("state"), "{stderr}");
}
