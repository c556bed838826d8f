//! `pincer auth login github-copilot` against the fake GitHub (device flow, Copilot token
//! exchange), then turns through Copilot's models on the mock LLM with Copilot's headers;
//! environment GitHub tokens exchanged the same way; a token refused mid-use renewed once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, replies};
use pincer_testkit::github_copilot::{
    FAKE_COPILOT_CLIENT_ID, FAKE_GITHUB_TOKEN, FAKE_USER_CODE, FakeGitHub, Poll,
};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};

const TOKEN_PATH: &str = "/copilot_internal/v2/token";

/// A home whose github-copilot models live on `llm` and whose GitHub is `github`.
fn copilot_home(github: &FakeGitHub, llm: &MockLlm) -> Home {
    let home = Home::new().with_env("PINCER_GITHUB_URL", &github.url());
    home.write_config(&format!(
        "{{ models: {{ providers: {{ \"github-copilot\": {{ baseUrl: \"{}\" }} }} }} }}",
        llm.url()
    ));
    home
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_flow_signs_in_and_copilot_models_answer_with_its_headers() {
    let github = FakeGitHub::start().await.unwrap();
    let llm = MockLlm::start(replies(&[("hi", "copilot here")]))
        .await
        .unwrap();
    let home = copilot_home(&github, &llm);

    let run = home.run(&["auth", "login", "github-copilot"]);
    let out = run.stdout();
    assert_eq!(run.code(), 0, "{out}{}", run.stderr());
    assert!(
        out.contains(&format!(
            "Open https://github.com/login/device in your browser and enter the code: {FAKE_USER_CODE}"
        )),
        "{out}"
    );
    assert!(
        out.contains("Auth profile created: github-copilot:default"),
        "{out}"
    );
    let device = &github.requests_to("/login/device/code")[0];
    assert_eq!(device.param("client_id"), Some(FAKE_COPILOT_CLIENT_ID));
    assert_eq!(device.param("scope"), Some("read:user"));
    // One `authorization_pending`, then the token.
    assert_eq!(github.requests_to("/login/oauth/access_token").len(), 2);
    let exchange = &github.requests_to(TOKEN_PATH)[0];
    assert_eq!(
        exchange.header("authorization"),
        Some(format!("Bearer {FAKE_GITHUB_TOKEN}").as_str())
    );
    assert_eq!(exchange.header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(
        exchange.header("editor-plugin-version"),
        Some("copilot-chat/0.35.0")
    );
    assert_eq!(
        exchange.header("copilot-integration-id"),
        Some("vscode-chat")
    );
    assert_eq!(
        exchange.header("user-agent"),
        Some("GitHubCopilotChat/0.35.0")
    );

    // A Chat Completions model of Copilot's answers with the Copilot token and headers.
    let out = home.ask_json(&["--model", "github-copilot/gpt-4o", "hi"]);
    assert_eq!(out["result"], "copilot here");
    assert_eq!(out["profileId"], "github-copilot:default");
    let request = &llm.requests()[0];
    assert_eq!(request.path, "/chat/completions");
    let copilot_token = github.copilot_token(1);
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {copilot_token}").as_str())
    );
    for (name, value) in [
        ("x-initiator", "user"),
        ("openai-intent", "conversation-edits"),
        ("editor-version", "vscode/1.107.0"),
        ("editor-plugin-version", "copilot-chat/0.35.0"),
        ("copilot-integration-id", "vscode-chat"),
        ("user-agent", "GitHubCopilotChat/0.35.0"),
    ] {
        assert_eq!(request.header(name), Some(value), "{name}");
    }
    assert_eq!(request.header("copilot-vision-request"), None);

    // Its Claude models speak Anthropic Messages, with the same credential.
    let out = home.ask_json(&["--model", "github-copilot/claude-sonnet-4.5", "hi"]);
    assert_eq!(out["result"], "copilot here");
    let request = &llm.requests()[1];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {copilot_token}").as_str())
    );
    assert_eq!(request.header("x-initiator"), Some("user"));
    assert_eq!(request.header("x-api-key"), None);
    // The stored token was still fresh: no second exchange.
    assert_eq!(github.requests_to(TOKEN_PATH).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_environment_github_token_is_exchanged_and_renewed_once_when_refused() {
    let github = FakeGitHub::start().await.unwrap();
    github.accept_github_token("gho_from_env");
    // The first request is refused (a Copilot token revoked early), the retry answers.
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("hi"))
                .times(1)
                .fault(Fault::status(401)),
        )
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("renewed")));
    let llm = MockLlm::start(scenario).await.unwrap();
    let home = copilot_home(&github, &llm)
        .with_env("COPILOT_GITHUB_TOKEN", "gho_from_env")
        .with_env("GITHUB_TOKEN", "gho_not_this_one");
    let out = home.ask_json(&["--model", "github-copilot/gpt-5-mini", "hi"]);
    assert_eq!(out["result"], "renewed");
    let exchanges = github.requests_to(TOKEN_PATH);
    assert_eq!(exchanges.len(), 2);
    for exchange in &exchanges {
        assert_eq!(
            exchange.header("authorization"),
            Some("Bearer gho_from_env")
        );
    }
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/responses");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {}", github.copilot_token(1)).as_str())
    );
    assert_eq!(
        requests[1].header("authorization"),
        Some(format!("Bearer {}", github.copilot_token(2)).as_str())
    );

    // A GitHub token Copilot refuses is a clear error, not a raw GitHub token sent on.
    github.revoke_github_tokens();
    let run = home.run(&["ask", "--model", "github-copilot/gpt-4o", "hi"]);
    assert_eq!(run.code(), 1, "{}", run.stdout());
    common::assert_contains(
        &run.stderr(),
        &["pincer auth login github-copilot", "HTTP 401"],
    );
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_code_that_expires_ends_the_login_with_why() {
    let github = FakeGitHub::start().await.unwrap();
    github.set_script([Poll::Error("expired_token".into())]);
    let home = Home::new().with_env("PINCER_GITHUB_URL", &github.url());
    let run = home.run(&["auth", "login", "github-copilot"]);
    assert_eq!(run.code(), 1);
    run.assert_stderr_has(&["expired_token"]);
    assert!(github.requests_to(TOKEN_PATH).is_empty());
    let status = home.run(&["auth", "status"]).stdout();
    assert!(status.contains("No auth profiles"), "{status}");

    // An enterprise domain that is not one is refused before anything is sent.
    let run = home.run(&[
        "auth",
        "login",
        "github-copilot",
        "--enterprise",
        "https://",
    ]);
    assert_eq!(run.code(), 1);
    run.assert_stderr_has(&["invalid GitHub Enterprise domain"]);
}
