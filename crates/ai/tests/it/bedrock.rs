//! `bedrock-converse-stream` against the mock's Bedrock route: a reply streamed in AWS's
//! event stream, SigV4-signed with credentials from the environment (the mock refuses
//! unsigned requests), a Bedrock API key as a bearer token instead, and credentials the
//! server calls expired: refreshed once, then a clear error.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::future::BoxFuture;
use pincer_ai::env::{EnvSource, MapEnv};
use pincer_ai::providers::bedrock::BedrockProvider;
use pincer_ai::providers::bedrock::credentials::{
    AwsCredentials, CredentialError, CredentialSource,
};
use pincer_ai::{
    ApiRegistry, Context, ErrorKind, LazyHttpClient, LlmClient, Message, ModelRegistry, StopReason,
    StreamOptions,
};
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::json;

const MODEL: &str = "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0";

fn hello(text: &str) -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::user(text)],
        tools: vec![],
    }
}

async fn server() -> MockLlm {
    let expired = json!({"message": "The security token included in the request is expired"});
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("expire once"))
                .times(1)
                .fault(Fault::status(403).body(expired.clone())),
        )
        .rule(
            Rule::when(Match::last_user("expire twice"))
                .times(2)
                .fault(Fault::status(403).body(expired)),
        )
        .default_reply(Reply::text("Hello from Bedrock.").with_thinking("Greet them."))
        .chunk_size(5);
    MockLlm::start(scenario).await.unwrap()
}

fn setup(env: &[(&str, String)]) -> (ModelRegistry, LlmClient) {
    let env = MapEnv::new(env.iter().cloned());
    let mut models = ModelRegistry::builtin().unwrap();
    models.apply_env_overrides(&env);
    (models, LlmClient::with_env(Arc::new(env)))
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn signed_with_environment_keys_streams_a_reply() {
    let server = server().await;
    let (models, client) = setup(&[
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url()),
        ("AWS_ACCESS_KEY_ID", "AKIDMOCK".into()),
        ("AWS_SECRET_ACCESS_KEY", "mock-secret".into()),
        ("AWS_SESSION_TOKEN", "mock-session".into()),
        ("AWS_REGION", "eu-central-1".into()),
    ]);
    let model = models.resolve(MODEL).unwrap();
    assert_eq!(model.base_url, server.url());
    let reply = client
        .complete(model, &hello("hi"), StreamOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Bedrock.");
    assert_eq!(reply.stop_reason, StopReason::Stop);
    assert_eq!(reply.api, "bedrock-converse-stream");
    assert!(
        reply.usage.input > 0 && reply.usage.output > 0,
        "{:?}",
        reply.usage
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        request.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let auth = header(&request.headers, "authorization").unwrap();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDMOCK/")
            && auth.contains("/eu-central-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="),
        "{auth}"
    );
    assert_eq!(
        header(&request.headers, "x-amz-security-token"),
        Some("mock-session")
    );
    assert_eq!(
        request.body["messages"],
        json!([{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}])
    );
}

#[tokio::test]
async fn a_bedrock_api_key_is_a_bearer_token() {
    let server = server().await;
    let (models, client) = setup(&[
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url()),
        ("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key".into()),
    ]);
    let reply = client
        .complete(
            models.resolve(MODEL).unwrap(),
            &hello("hi"),
            StreamOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Bedrock.");
    let request = &server.requests()[0];
    assert_eq!(
        header(&request.headers, "authorization"),
        Some("Bearer bedrock-api-key")
    );
    assert_eq!(header(&request.headers, "x-amz-date"), None);
}

#[tokio::test]
async fn without_credentials_the_error_says_what_to_set() {
    let server = server().await;
    let (models, client) = setup(&[
        ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url()),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
    ]);
    let error = client
        .complete(
            models.resolve(MODEL).unwrap(),
            &hello("hi"),
            StreamOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error.message.contains(
            ": no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE"
        ),
        "{}",
        error.message
    );
    assert!(server.requests().is_empty());
}

/// Hands out `AKID1`, `AKID2`, … (each fetch is a new temporary credential).
#[derive(Debug, Default)]
struct Rotating(AtomicU32);

impl CredentialSource for Rotating {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, CredentialError>> {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        Box::pin(async move {
            Ok(AwsCredentials::new(
                &format!("AKID{n}"),
                "s",
                Some(format!("t{n}")),
            ))
        })
    }
}

fn rotating_client(server: &MockLlm) -> (ModelRegistry, LlmClient) {
    let env: Arc<dyn EnvSource> = Arc::new(MapEnv::new([("AWS_REGION", "us-west-2")]));
    let apis = Arc::new(ApiRegistry::new());
    apis.register(
        Arc::new(BedrockProvider::with_credentials(
            LazyHttpClient::new(),
            Arc::clone(&env),
            Arc::new(Rotating::default()),
        )),
        None,
    );
    let mut models = ModelRegistry::builtin().unwrap();
    models.set_base_url("amazon-bedrock", &server.url());
    (models, LlmClient::from_parts(apis, env))
}

#[tokio::test]
async fn expired_credentials_are_refreshed_once() {
    let server = server().await;
    let (models, client) = rotating_client(&server);
    let model = models.resolve(MODEL).unwrap();
    let reply = client
        .complete(model, &hello("expire once"), StreamOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Bedrock.");
    let keys: Vec<String> = server
        .requests()
        .iter()
        .map(|r| header(&r.headers, "authorization").unwrap()[28..33].to_owned())
        .collect();
    assert_eq!(keys, ["AKID1", "AKID2"]);

    server.clear_requests();
    let error = client
        .complete(model, &hello("expire twice"), StreamOptions::default())
        .await
        .unwrap_err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(
        error.message.contains("The security token included in the request is expired (refused again after refreshing the credentials once)"),
        "{}",
        error.message
    );
    assert!(
        error.message.ends_with("; check the AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, …) and the model's access in the Bedrock console, or set AWS_BEARER_TOKEN_BEDROCK"),
        "{}",
        error.message
    );
    assert_eq!(server.requests().len(), 2);
}

/// The access key id the mock's single recorded Bedrock request was signed with.
fn signing_key(server: &MockLlm) -> String {
    let requests = server.requests();
    let bedrock: Vec<_> = requests
        .iter()
        .filter(|r| r.path.starts_with("/model/"))
        .collect();
    assert_eq!(bedrock.len(), 1, "{requests:?}");
    let auth = header(&bedrock[0].headers, "authorization").unwrap();
    auth["AWS4-HMAC-SHA256 Credential=".len()..]
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

async fn reply_with(env: &[(&str, String)]) -> (MockLlm, String) {
    let server = server().await;
    let mut vars = vec![("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url())];
    vars.extend(
        env.iter()
            .map(|(k, v)| (*k, v.replace("{url}", &server.url()))),
    );
    let (models, client) = setup(&vars);
    let reply = client
        .complete(
            models.resolve(MODEL).unwrap(),
            &hello("hi"),
            StreamOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(reply.text(), "Hello from Bedrock.");
    let key = signing_key(&server);
    (server, key)
}

#[tokio::test]
async fn instance_metadata_credentials() {
    let (_server, key) = reply_with(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", "{url}".into())]).await;
    assert_eq!(key, pincer_testkit::aws_credentials::IMDS_ACCESS_KEY);
}

#[tokio::test]
async fn container_credentials() {
    let (_server, key) = reply_with(&[
        (
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "{url}/aws/container-credentials".into(),
        ),
        (
            "AWS_CONTAINER_AUTHORIZATION_TOKEN",
            pincer_testkit::aws_credentials::MOCK_CONTAINER_TOKEN.into(),
        ),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
    ])
    .await;
    assert_eq!(key, pincer_testkit::aws_credentials::CONTAINER_ACCESS_KEY);
}

#[tokio::test]
async fn web_identity_credentials() {
    let dir = std::env::temp_dir().join(format!("pincer-bedrock-wi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, "eyJ.mock.jwt\n").unwrap();
    let (_server, key) = reply_with(&[
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token.display().to_string()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/mock".into()),
        ("AWS_ENDPOINT_URL_STS", "{url}/sts".into()),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
    ])
    .await;
    assert_eq!(key, pincer_testkit::aws_credentials::STS_ACCESS_KEY);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_profile_from_the_shared_files() {
    let dir = std::env::temp_dir().join(format!("pincer-bedrock-profile-{}", std::process::id()));
    std::fs::create_dir_all(dir.join(".aws")).unwrap();
    std::fs::write(
        dir.join(".aws/credentials"),
        "[work]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = s\n",
    )
    .unwrap();
    std::fs::write(
        dir.join(".aws/config"),
        "[profile work]\nregion = ap-northeast-1\n",
    )
    .unwrap();
    let (server, key) = reply_with(&[
        ("HOME", dir.display().to_string()),
        ("AWS_PROFILE", "work".into()),
    ])
    .await;
    assert_eq!(key, "AKIDPROFILE");
    let auth = header(&server.requests()[0].headers, "authorization")
        .unwrap()
        .to_owned();
    assert!(
        auth.contains("/ap-northeast-1/bedrock/aws4_request"),
        "{auth}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
