//! `google-vertex` and `google-gemini-cli` against the mock: Vertex with a service account's
//! signed assertion or gcloud's user credentials (tokens fetched from the credential file's
//! `token_uri`, reused while fresh, refreshed once when the server refuses one), express
//! mode with an API key, Vertex's error bodies as typed errors, and Cloud Code Assist's
//! envelope and wrapped stream.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use pincer_ai::env::MapEnv;
use pincer_ai::providers::google::GoogleVertex;
use pincer_ai::{
    ApiRegistry, Context, ErrorKind, LazyHttpClient, LlmClient, Message, ModelRegistry,
    StreamOptions,
};
use pincer_testkit::google_cloud::{authorized_user_json, service_account_json};
use pincer_testkit::{Fault, MockLlm, Reply, Rule, Scenario};
use serde_json::json;

const VERTEX: &str = "google-vertex/gemini-2.5-flash";
const CLI: &str = "google-gemini-cli/gemini-2.5-flash";

fn hello() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    }
}

fn scenario() -> Scenario {
    Scenario::new().default_reply(Reply::text("Hello from Google Cloud."))
}

/// A credential file with `contents` in a fresh temp dir (kept alive by the returned guard).
fn credential_file(contents: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adc.json");
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

/// The catalog re-pointed at the mock and a client whose Vertex reads `env`.
fn setup(server: &MockLlm, env: &[(&str, String)]) -> (ModelRegistry, LlmClient) {
    let env = Arc::new(MapEnv::new(env.iter().cloned()));
    let mut models = ModelRegistry::builtin().unwrap();
    models.set_base_url("google-vertex", &server.url());
    models.set_base_url("google-gemini-cli", &server.url());
    let apis = ApiRegistry::with_builtins(LazyHttpClient::new());
    apis.register(
        Arc::new(GoogleVertex::new(LazyHttpClient::new()).with_env(env.clone())),
        None,
    );
    (models, LlmClient::from_parts(Arc::new(apis), env))
}

fn adc_env(path: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", path.display().to_string()),
        ("GCLOUD_PROJECT", "proj-7".into()),
        ("GOOGLE_CLOUD_LOCATION", "us-east5".into()),
    ]
}

fn token_requests(server: &MockLlm) -> Vec<serde_json::Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/token")
        .map(|r| r.body)
        .collect()
}

#[tokio::test]
async fn a_service_account_streams_and_its_token_is_reused() {
    let server = MockLlm::start(scenario()).await.unwrap();
    let (_dir, path) = credential_file(&service_account_json(
        &format!("{}/token", server.url()),
        "sa@proj-7.iam.gserviceaccount.com",
    ));
    let (models, client) = setup(&server, &adc_env(&path));
    let model = models.resolve(VERTEX).unwrap();
    for _ in 0..2 {
        let reply = client
            .complete(model, &hello(), StreamOptions::default())
            .await
            .unwrap();
        assert_eq!(reply.text(), "Hello from Google Cloud.");
        assert_eq!(reply.api, "google-vertex");
    }
    let tokens = token_requests(&server);
    assert_eq!(tokens.len(), 1, "the token is fetched once: {tokens:?}");
    assert_eq!(
        tokens[0]["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let calls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path != "/token")
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].path,
        "/v1/projects/proj-7/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(calls[0].query.as_deref(), Some("alt=sse"));
    let bearer = calls[0].header("authorization").unwrap();
    assert!(bearer.starts_with("Bearer ya29.mock-"), "{bearer}");
    assert_eq!(calls[1].header("authorization"), Some(bearer));
    assert_eq!(calls[0].body["contents"][0]["parts"][0]["text"], "hi");
}

#[tokio::test]
async fn gcloud_user_credentials_refresh_and_a_refused_token_is_replaced_once() {
    let server = MockLlm::start(scenario().rule(Rule::any().fault(Fault::status(401)).times(1)))
        .await
        .unwrap();
    let (_dir, path) = credential_file(&authorized_user_json(&format!("{}/token", server.url())));
    let (models, client) = setup(&server, &adc_env(&path));
    let model = models.resolve(VERTEX).unwrap();
    let reply = client
        .complete(model, &hello(), StreamOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Google Cloud.");
    let tokens = token_requests(&server);
    assert_eq!(tokens.len(), 2, "refused once, fetched again: {tokens:?}");
    assert_eq!(tokens[0]["grant_type"], "refresh_token");
    assert_eq!(tokens[0]["refresh_token"], "mock-refresh-token");
    assert_eq!(tokens[0]["client_secret"], "mock-secret");
    let calls: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path != "/token")
        .collect();
    assert_eq!(calls.len(), 2);
    assert_ne!(
        calls[0].header("authorization"),
        calls[1].header("authorization")
    );
}

#[tokio::test]
async fn a_second_refusal_is_a_clear_auth_error() {
    let body = json!({"error": {"code": 403, "message": "Permission 'aiplatform.endpoints.predict' denied", "status": "PERMISSION_DENIED"}});
    let server = MockLlm::start(
        scenario().rule(
            Rule::any()
                .fault(Fault {
                    status: Some(403),
                    body: Some(body),
                    ..Fault::default()
                })
                .times(2),
        ),
    )
    .await
    .unwrap();
    let (_dir, path) = credential_file(&authorized_user_json(&format!("{}/token", server.url())));
    let (models, client) = setup(&server, &adc_env(&path));
    let error = client
        .complete(
            models.resolve(VERTEX).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error
            .message
            .contains("aiplatform.endpoints.predict' denied"),
        "{}",
        error.message
    );
    assert!(
        error
            .message
            .contains("Vertex AI refused a freshly fetched access token too"),
        "{}",
        error.message
    );
    assert_eq!(token_requests(&server).len(), 2);
}

#[tokio::test]
async fn vertex_error_bodies_and_missing_settings_are_typed_errors() {
    let body = json!({"error": {"code": 400, "message": "Unable to submit request because it has an empty text parameter.", "status": "INVALID_ARGUMENT"}});
    let server = MockLlm::start(scenario().rule(Rule::any().fault(Fault {
        status: Some(400),
        body: Some(body),
        ..Fault::default()
    })))
    .await
    .unwrap();
    let (_dir, path) = credential_file(&authorized_user_json(&format!("{}/token", server.url())));
    let (models, client) = setup(&server, &adc_env(&path));
    let model = models.resolve(VERTEX).unwrap();
    let error = client
        .complete(model, &hello(), StreamOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::BadRequest);
    assert!(
        error.message.contains("empty text parameter"),
        "{}",
        error.message
    );

    // No project; then no credential file where it should be; then a malformed one.
    let (models, client) = setup(&server, &[("GOOGLE_CLOUD_LOCATION", "global".into())]);
    let error = client
        .complete(
            models.resolve(VERTEX).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
    assert_eq!(
        error.message,
        "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT)"
    );
    let missing = path.with_file_name("absent.json");
    let (models, client) = setup(&server, &adc_env(&missing));
    let error = client
        .complete(
            models.resolve(VERTEX).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error.message.contains("no Google credentials"),
        "{}",
        error.message
    );
    assert!(error.message.contains("absent.json"), "{}", error.message);
    std::fs::write(&path, "{\"type\": \"service_account\"}").unwrap();
    let (models, client) = setup(&server, &adc_env(&path));
    let error = client
        .complete(
            models.resolve(VERTEX).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error
            .message
            .ends_with("the Google credential file is malformed: client_email is missing"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn an_api_key_uses_vertex_express_mode() {
    let server = MockLlm::start(scenario()).await.unwrap();
    let (models, client) = setup(&server, &[("GOOGLE_CLOUD_API_KEY", "vx-key".into())]);
    let reply = client
        .complete(
            models.resolve(VERTEX).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Google Cloud.");
    let request = &server.requests()[0];
    assert_eq!(
        request.path,
        "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(request.header("x-goog-api-key"), Some("vx-key"));
    assert_eq!(token_requests(&server).len(), 0);
}

#[tokio::test]
async fn cloud_code_assist_streams_through_its_envelope() {
    let server = MockLlm::start(scenario()).await.unwrap();
    let (models, client) = setup(&server, &[]);
    let key = json!({"token": "ya29.cli", "projectId": "cca-1"}).to_string();
    let options = StreamOptions {
        api_key: Some(key),
        ..StreamOptions::default()
    };
    let reply = client
        .complete(models.resolve(CLI).unwrap(), &hello(), options)
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Google Cloud.");
    assert_eq!(reply.api, "google-gemini-cli");
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1internal:streamGenerateContent");
    assert_eq!(request.header("authorization"), Some("Bearer ya29.cli"));
    assert_eq!(request.body["project"], "cca-1");
    assert_eq!(request.body["model"], "gemini-2.5-flash");
    assert_eq!(
        request.body["request"]["contents"][0]["parts"][0]["text"],
        "hi"
    );

    // Without a sign-in the call fails before any request.
    let error = client
        .complete(
            models.resolve(CLI).unwrap(),
            &hello(),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Config);
    assert!(
        error
            .message
            .contains("run `pincer auth login google-gemini-cli`"),
        "{}",
        error.message
    );
}
