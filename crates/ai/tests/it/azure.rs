//! `azure-openai-responses` against the mock's Azure resource: the key in `api-key`, the
//! `api-version` query, the deployment from the map, and Microsoft Entra ID tokens by
//! client credentials (fetched once, reused while fresh, a refusal as an auth error).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pincer_ai::env::MapEnv;
use pincer_ai::{Context, ErrorKind, LlmClient, Message, ModelRegistry, StreamOptions};
use pincer_testkit::{MockLlm, Reply, Scenario};

const MODEL: &str = "azure-openai-responses/gpt-4o-mini";

async fn server() -> MockLlm {
    MockLlm::start(Scenario::new().default_reply(Reply::text("Hello from the Azure deployment.")))
        .await
        .unwrap()
}

fn hello() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    }
}

/// The catalog with `env` applied and a client reading the same environment.
fn setup(env: &[(&str, String)]) -> (ModelRegistry, LlmClient) {
    let env = MapEnv::new(env.iter().cloned());
    let mut models = ModelRegistry::builtin().unwrap();
    models.apply_env_overrides(&env);
    (models, LlmClient::with_env(Arc::new(env)))
}

#[tokio::test]
async fn a_key_streams_a_reply_from_the_deployment() {
    let server = server().await;
    let (models, client) = setup(&[
        ("AZURE_OPENAI_BASE_URL", server.azure_base_url()),
        ("AZURE_OPENAI_API_KEY", "az-key-1".into()),
        ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview".into()),
        (
            "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
            "gpt-4o-mini=mini-eastus,gpt-4o=big".into(),
        ),
    ]);
    let model = models.resolve(MODEL).unwrap();
    assert_eq!(model.base_url, server.azure_base_url());
    let reply = client
        .complete(model, &hello(), StreamOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from the Azure deployment.");
    assert_eq!(
        (
            reply.api.as_str(),
            reply.provider.as_str(),
            reply.model.as_str()
        ),
        (
            "azure-openai-responses",
            "azure-openai-responses",
            "gpt-4o-mini"
        )
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/openai/v1/responses");
    assert_eq!(
        request.query.as_deref(),
        Some("api-version=2025-04-01-preview")
    );
    assert_eq!(request.header("api-key"), Some("az-key-1"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["model"], "mini-eastus");
}

#[tokio::test]
async fn the_mock_refuses_requests_azure_would_refuse() {
    let server = server().await;
    let http = reqwest::Client::new();
    let url = format!("{}/responses", server.azure_base_url());
    let body = serde_json::json!({"model": "m", "input": "hi", "stream": true});
    let no_version = http
        .post(&url)
        .header("api-key", "k")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(no_version.status().as_u16(), 404);
    let no_key = http
        .post(format!("{url}?api-version=v1"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(no_key.status().as_u16(), 401);
    assert_eq!(
        no_key.text().await.unwrap(),
        r#"{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}"#
    );
}

fn entra_env(server: &MockLlm, secret: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "AZURE_OPENAI_RESOURCE_NAME",
            "unused-when-base-url-set".into(),
        ),
        ("AZURE_OPENAI_BASE_URL", server.azure_base_url()),
        ("AZURE_TENANT_ID", "contoso.onmicrosoft.com".into()),
        ("AZURE_CLIENT_ID", "app-123".into()),
        ("AZURE_CLIENT_SECRET", secret.into()),
        ("AZURE_AUTHORITY_HOST", server.url()),
    ]
}

#[tokio::test]
async fn an_entra_token_is_fetched_once_and_sent_as_bearer() {
    let server = server().await;
    let (models, client) = setup(&entra_env(&server, "s3cr3t/+="));
    let model = models.resolve(MODEL).unwrap();
    for _ in 0..2 {
        let reply = client
            .complete(model, &hello(), StreamOptions::default())
            .await
            .unwrap();
        assert_eq!(reply.text(), "Hello from the Azure deployment.");
    }
    let requests = server.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/contoso.onmicrosoft.com/oauth2/v2.0/token",
            "/openai/v1/responses",
            "/openai/v1/responses"
        ]
    );
    assert_eq!(
        requests[0].body,
        serde_json::json!({
            "grant_type": "client_credentials",
            "client_id": "app-123",
            "client_secret": "s3cr3t/+=",
            "scope": "https://cognitiveservices.azure.com/.default",
        })
    );
    let bearer = requests[1].header("authorization").unwrap().to_owned();
    assert!(bearer.starts_with("Bearer entra-token-"), "{bearer}");
    assert_eq!(requests[2].header("authorization"), Some(bearer.as_str()));
    assert_eq!(requests[1].header("api-key"), None);
}

#[tokio::test]
async fn a_refused_token_request_is_an_auth_error() {
    let server = server().await;
    let (models, client) = setup(&entra_env(&server, "wrong"));
    let error = client
        .complete(
            models.resolve(MODEL).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(
        error.message,
        "Microsoft Entra ID refused the token request (HTTP 401): AADSTS7000215: Invalid \
         client secret provided for tenant contoso.onmicrosoft.com."
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_static_entra_token_needs_no_token_request() {
    let server = server().await;
    let (models, client) = setup(&[
        ("AZURE_OPENAI_BASE_URL", server.azure_base_url()),
        ("AZURE_OPENAI_AD_TOKEN", "ad-token-9".into()),
    ]);
    client
        .complete(
            models.resolve(MODEL).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer ad-token-9")
    );
    assert_eq!(requests[0].query.as_deref(), Some("api-version=v1"));
}
