//! `pincer auth login anthropic --oauth` (Claude Pro/Max) against the fake OAuth server:
//! PKCE with the `code#state` paste, the JSON token exchange, then a turn in OAuth mode —
//! bearer token, Claude Code's identity headers and system prompt, and the tool names in
//! Claude Code's casing on the wire but ours in the agent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Write};

use common::{Home, Script as _};
use pincer_testkit::oauth::FakeOAuthServer;
use pincer_testkit::{MockLlm, Scenario};
use serde_json::json;

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";

/// Reads the child's output up to the printed authorize URL.
fn authorize_url(out: &mut BufReader<std::process::ChildStdout>) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "no URL printed");
        if line.starts_with("http") {
            return line.trim().to_owned();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pasted_code_signs_in_and_turns_present_as_claude_code() {
    let oauth = FakeOAuthServer::start().await.unwrap();
    oauth.set_client_id(CLIENT_ID);
    oauth.set_access_token_prefix("sk-ant-oat01-fake-");
    let home = Home::new().with_env("PINCER_ANTHROPIC_AUTH_URL", &oauth.url());
    let mut child = home.spawn_piped(&["auth", "login", "anthropic", "--oauth", "--paste"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let url = authorize_url(&mut out);
    let query: std::collections::BTreeMap<String, String> = reqwest::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .into_owned()
        .collect();
    assert!(url.starts_with(&format!("{}/oauth/authorize?code=true&", oauth.url())));
    assert_eq!(query["client_id"], CLIENT_ID);
    assert_eq!(
        query["scope"],
        "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload"
    );
    assert_eq!(query["code_challenge_method"], "S256");
    assert!(query["redirect_uri"].starts_with("http://localhost:"));
    assert!(query["redirect_uri"].ends_with("/callback"));

    // The browser signs in; the page shows `code#state`, which the user pastes.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = client.get(&url).send().await.unwrap();
    let location = reqwest::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let param = |name: &str| {
        location
            .query_pairs()
            .find(|(k, _)| k == name)
            .unwrap()
            .1
            .into_owned()
    };
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}#{}", param("code"), param("state")).unwrap();
    drop(stdin);
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let mut printed = String::new();
    std::io::Read::read_to_string(&mut out, &mut printed).unwrap();
    assert!(status.success(), "{printed}");
    assert!(
        printed.contains("Auth profile created: anthropic:default"),
        "{printed}"
    );
    let exchange = &oauth.token_requests("authorization_code")[0];
    assert_eq!(exchange.path, "/v1/oauth/token");
    assert_eq!(exchange.param("client_id"), Some(CLIENT_ID));
    // pi sends the verifier as `state`, and the state along with the code.
    assert_eq!(exchange.param("state"), Some(query["state"].as_str()));
    assert_eq!(
        exchange.param("code_verifier"),
        Some(query["state"].as_str())
    );
    assert_eq!(
        exchange.param("redirect_uri"),
        Some(query["redirect_uri"].as_str())
    );

    // A turn with the sign-in (the fake counts codes and tokens together: token 2).
    // Claude Code's `Read` comes back as our `read`.
    let llm = MockLlm::start(Scenario::new().tool_turn(
        "read my note",
        "Read",
        json!({"path": "note.txt"}),
        "It says hello.",
    ))
    .await
    .unwrap();
    home.write_config(&format!(
        "{{ models: {{ providers: {{ anthropic: {{ baseUrl: \"{}\" }} }} }} }}",
        llm.url()
    ));
    let workspace = home.path().join("agents/main/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("note.txt"), "hello\n").unwrap();
    let out = home.ask_json(&["--model", "anthropic/claude-sonnet-4-5", "read my note"]);
    assert_eq!(out["result"], "It says hello.", "{out}");
    assert_eq!(out["profileId"], "anthropic:default");
    assert_eq!(out["toolCalls"][0]["name"], "read", "{out}");

    let request = &llm.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-ant-oat01-fake-2")
    );
    assert_eq!(request.header("x-api-key"), None);
    assert_eq!(
        request.header("anthropic-beta"),
        Some(
            "claude-code-20250219,oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
        )
    );
    assert_eq!(request.header("user-agent"), Some("claude-cli/2.1.75"));
    assert_eq!(request.header("x-app"), Some("cli"));
    let system = request.body["system"].as_array().unwrap();
    assert_eq!(
        system[0]["text"],
        "You are Claude Code, Anthropic's official CLI for Claude."
    );
    assert!(system.len() >= 2, "the agent's own prompt follows");
    let names: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"Read"), "{names:?}");
    assert!(!names.contains(&"read"), "{names:?}");
    // The follow-up replays the call under Claude Code's name too.
    let follow_up = &llm.requests()[1];
    let replayed = follow_up.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "tool_use")
        .unwrap();
    assert_eq!(replayed["name"], "Read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_code_of_another_login_is_refused() {
    let home = Home::new().with_env("PINCER_ANTHROPIC_AUTH_URL", "http://127.0.0.1:9");
    let run = home.run_with_stdin(
        &["auth", "login", "anthropic", "--oauth", "--paste"],
        "somecode#not-this-login\n",
    );
    assert_eq!(run.code(), 1);
    run.assert_stderr_has(&["state mismatch"]);
    // A piped key without --oauth is still stored as an API key.
    let run = home.run_with_stdin(&["auth", "login", "anthropic"], "sk-ant-api03-key\n");
    run.assert_ok();
    assert!(
        run.stdout().contains("anthropic:default"),
        "{}",
        run.stdout()
    );
}
