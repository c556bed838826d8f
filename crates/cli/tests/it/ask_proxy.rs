//! pi's proxy selected from the config (issue 22): `agents.defaults.model:
//! "relay/mock/primary"`, where `relay` is a provider of `api: "proxy"`, answers through
//! the proxy's `/api/stream` with the relay's token, asking it for `mock/primary`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, mock, replies};
use pincer_testkit::Api;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_provider_in_the_config_answers_the_agents_turns() {
    let server = mock(replies(&[("hello relay", "Hello from behind the relay.")])).await;
    let home = Home::new();
    home.write_config(&format!(
        r#"{{
  models: {{ providers: {{
    mock: {{ baseUrl: "{}", api: "openai-completions", apiKey: "mock-key",
             models: [{{ id: "primary" }}] }},
    relay: {{ baseUrl: "{}", api: "proxy", apiKey: "relay-token",
              models: [{{ id: "mock/primary" }}] }},
  }} }},
  agents: {{ defaults: {{ model: "relay/mock/primary" }} }},
}}"#,
        server.base_url(Api::OpenAiCompletions),
        server.base_url(Api::Proxy),
    ));
    let out = home.ask_json(&["hello relay"]);
    assert_eq!(out["result"], "Hello from behind the relay.", "{out}");
    assert_eq!(
        (out["provider"].as_str(), out["model"].as_str()),
        (Some("relay"), Some("mock/primary"))
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/api/stream");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer relay-token")
    );
    assert_eq!(
        (
            requests[0].body["model"]["provider"].as_str(),
            requests[0].body["model"]["id"].as_str()
        ),
        (Some("mock"), Some("primary"))
    );
}
