//! pi's proxy selected from the models configuration (issue 22): a provider with
//! `api: "proxy"` whose model ids name the models they stand for streams them through the
//! mock's `/api/stream`, with the provider's key as the bearer token.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::{ErrorKind, LlmClient, ModelRegistry, StopReason, StreamOptions, apis};
use pincer_testkit::{Api, MockLlm, Reply, Scenario};

/// The built-in catalog plus `config` (JSON5, pi's models.json shape).
fn registry(config: &str) -> Result<ModelRegistry, pincer_ai::CatalogError> {
    let mut models = ModelRegistry::builtin().expect("catalog loads");
    models.apply_models_config(config)?;
    Ok(models)
}

/// A client that streams `models`' proxied models, with `relay`'s configured key if any.
fn client_for(models: &ModelRegistry, provider: &str) -> LlmClient {
    let env = MapEnv::default();
    let client = LlmClient::with_env(Arc::new(env.clone()));
    client
        .apis()
        .register(models.proxy_api().expect("a proxy is configured"), None);
    if let Some(spec) = models.configured_key(provider) {
        client.set_api_key(provider, spec.resolve(provider, &env).unwrap());
    }
    client
}

#[tokio::test]
async fn a_configured_proxy_provider_streams_the_model_it_stands_for() {
    let server = MockLlm::start(Scenario::new().default_reply(Reply::text("through the relay")))
        .await
        .unwrap();
    // "zz-local" sorts after "relay": the proxy still finds its model.
    let models = registry(&format!(
        r#"{{providers: {{
            relay: {{api: "proxy", baseUrl: "{}", apiKey: "relay-token",
                     models: [{{id: "anthropic/claude-haiku-4-5"}}, {{id: "zz-local/small", name: "Small"}}]}},
            "zz-local": {{api: "openai-completions", baseUrl: "http://127.0.0.1:9/v1",
                          models: [{{id: "small", contextWindow: 4096}}]}},
        }}}}"#,
        server.base_url(Api::Proxy)
    ))
    .unwrap();

    let model = models
        .resolve("relay/anthropic/claude-haiku-4-5")
        .unwrap()
        .clone();
    let upstream = models.resolve("anthropic/claude-haiku-4-5").unwrap();
    assert_eq!(
        (model.api.as_str(), model.base_url.as_str()),
        (apis::PROXY, server.base_url(Api::Proxy).as_str())
    );
    assert_eq!(
        (model.context_window, model.max_tokens, &model.cost),
        (upstream.context_window, upstream.max_tokens, &upstream.cost)
    );
    assert_eq!(models.upstream(&model), Some(upstream));

    let client = client_for(&models, "relay");
    let events: Vec<_> = tokio::time::timeout(
        Duration::from_secs(30),
        client
            .stream(&model, &user("hello"), StreamOptions::default())
            .collect::<Vec<_>>(),
    )
    .await
    .unwrap();
    assert_one_terminal(&events);
    let message = stopped_with(&events, StopReason::Stop, "relay");
    assert_eq!(message.text(), "through the relay");
    assert_eq!(
        (message.provider.as_str(), message.model.as_str()),
        ("relay", "anthropic/claude-haiku-4-5")
    );

    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/stream");
    assert!(
        request
            .headers
            .contains(&("authorization".into(), "Bearer relay-token".into())),
        "{:?}",
        request.headers
    );
    let sent = &request.body["model"];
    assert_eq!(
        (&sent["provider"], &sent["id"], &sent["api"]),
        (
            &serde_json::json!("anthropic"),
            &serde_json::json!("claude-haiku-4-5"),
            &serde_json::json!("anthropic-messages")
        )
    );
    assert_eq!(request.body["context"]["messages"][0]["content"], "hello");

    let small = models.resolve("relay/zz-local/small").unwrap();
    assert_eq!((small.name.as_str(), small.context_window), ("Small", 4096));
}

#[tokio::test]
async fn a_proxy_without_a_token_fails_before_any_request() {
    let server = MockLlm::start(Scenario::new()).await.unwrap();
    let models = registry(&format!(
        r#"{{providers: {{relay: {{api: "proxy", baseUrl: "{}",
            models: [{{id: "anthropic/claude-haiku-4-5"}}]}}}}}}"#,
        server.base_url(Api::Proxy)
    ))
    .unwrap();
    let client = client_for(&models, "relay");
    let model = models.resolve("relay/anthropic/claude-haiku-4-5").unwrap();
    let events: Vec<_> = client
        .stream(model, &user("x"), StreamOptions::default())
        .collect()
        .await;
    let (kind, message) = error_of(&events);
    assert_eq!(*kind, ErrorKind::Auth);
    assert_eq!(
        message,
        "no token for the proxy provider relay: set models.providers.relay.apiKey"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_proxied_model_must_name_a_known_model() {
    for id in ["claude", "nobody/claude", "anthropic/no-such-model"] {
        let err = registry(&format!(
            r#"{{providers: {{relay: {{api: "proxy", baseUrl: "http://127.0.0.1:9",
                models: [{{id: "{id}"}}]}}}}}}"#
        ))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "models configuration: provider \"relay\": proxied model \"{id}\" must name \
                 the model it stands for as provider/id, a built-in model or one of a \
                 provider that is not a proxy (e.g. anthropic/claude-sonnet-4-5)"
            )
        );
    }
    let err = registry(
        r#"{providers: {relay: {api: "proxy", models: [{id: "anthropic/claude-haiku-4-5"}]}}}"#,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "models configuration: provider \"relay\": model \"anthropic/claude-haiku-4-5\" needs \
         a \"baseUrl\" (the proxy's address)"
    );
}
