//! pi's proxy stream against the mock's `/api/stream`, run-time API registration, and the
//! offline stub through the public client.

use crate::common;

use std::sync::Arc;

use common::*;
use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::providers::proxy::ProxyProvider;
use pincer_ai::{
    ApiProvider, ApiRegistry, AssistantStream, ErrorKind, LlmClient, Model, ModelRegistry,
    StopReason, StreamOptions,
};
use pincer_testkit::{Reply, Scenario};
use serde_json::json;

#[tokio::test]
async fn proxy_stream_rebuilds_the_reply() {
    let h = Harness::start(
        Scenario::new()
            .default_reply(
                Reply::text("via proxy")
                    .with_thinking("hm")
                    .with_tool_call("ls", json!({"path": "."})),
            )
            .chunk_size(2),
    )
    .await;
    let proxy = ProxyProvider::new(h.server.url(), "proxy-token", reqwest::Client::new());
    let model = h.model("anthropic-messages");
    let events: Vec<_> = proxy
        .stream(&model, &user("x"), StreamOptions::default())
        .collect()
        .await;
    assert_one_terminal(&events);
    let message = stopped_with(&events, StopReason::ToolUse, "proxy");
    assert_eq!(message.text(), "via proxy");
    assert_eq!(
        message.tool_calls().next().map(|c| c.arguments.clone()),
        Some(json!({"path": "."}))
    );
    let request = &h.server.requests()[0];
    assert_eq!(request.path, "/api/stream");
    assert!(
        request
            .headers
            .contains(&("authorization".into(), "Bearer proxy-token".into()))
    );
    assert_eq!(request.body["model"]["id"], "claude-haiku-4-5");
    assert_eq!(request.body["context"]["messages"][0]["content"], "x");
}

#[tokio::test]
async fn proxy_without_token_reports_the_proxys_error() {
    let h = Harness::start(Scenario::new()).await;
    let proxy = ProxyProvider::new(h.server.url(), "", reqwest::Client::new());
    let events: Vec<_> = proxy
        .stream(
            &h.model("openai-responses"),
            &user("x"),
            StreamOptions::default(),
        )
        .collect()
        .await;
    let (kind, message) = error_of(&events);
    assert_eq!(*kind, ErrorKind::Auth);
    assert!(message.contains("HTTP 401"), "{message}");
}

/// A provider registered at run time, as an extension would.
struct Canned;

impl ApiProvider for Canned {
    fn api(&self) -> &str {
        "canned"
    }
    fn stream(&self, model: &Model, _: &pincer_ai::Context, _: StreamOptions) -> AssistantStream {
        let mut b = pincer_ai::MessageBuilder::new(model);
        let i = b.text_start();
        b.text_delta(i, "canned");
        b.done();
        AssistantStream::from_events(b.drain_events().collect())
    }
}

#[tokio::test]
async fn apis_can_be_registered_and_removed_at_run_time() {
    let registry = Arc::new(ApiRegistry::with_builtins(reqwest::Client::new()));
    registry.register(Arc::new(Canned), Some("my-extension"));
    let client = LlmClient::from_parts(registry.clone(), Arc::new(MapEnv::default()));
    let mut model = pincer_ai::providers::stub::model();
    model.api = "canned".into();
    assert_eq!(
        client
            .complete(&model, &user("x"), StreamOptions::default())
            .await
            .unwrap()
            .text(),
        "canned"
    );
    registry.unregister_source("my-extension");
    let err = client
        .complete(&model, &user("x"), StreamOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    // Every registered API is named (the built-ins grow, so the list is the registry's).
    let known = registry.apis().join(", ");
    assert!(
        known.contains("anthropic-messages, azure-openai-responses, "),
        "{known}"
    );
    assert!(
        err.message.ends_with(&format!(
            "uses API \"canned\", which Pincer does not know; known APIs: {known}"
        )),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn the_offline_stub_works_with_no_key_and_no_network() {
    let client = LlmClient::with_env(Arc::new(MapEnv::default()));
    let models = ModelRegistry::builtin().unwrap();
    let model = models.resolve("stub/echo").unwrap();
    let reply = client
        .complete(model, &user("ping"), StreamOptions::default())
        .await
        .unwrap();
    assert!(reply.text().starts_with(
        "[offline stub] You said: ping\n\n(This reply comes from Pincer's offline stub model"
    ));
    assert!(reply.text().contains("set an API key"));
    assert_eq!(reply.usage.cost.total, 0.0);
}
