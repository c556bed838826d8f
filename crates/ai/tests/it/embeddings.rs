//! The embedding client against the mock server: the three providers' requests and answers,
//! batching at each provider's limit, dimensions, 429 with Retry-After then success, 401,
//! wrong counts, wrong and ragged dimensions, malformed answers, keys kept out of errors and
//! Debug output; and a fuzz-style check that the decoders never panic on any JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use pincer_ai::embeddings::wire::decode;
use pincer_ai::embeddings::{EmbeddingClient, EmbeddingConfig, EmbeddingProvider};
use pincer_ai::{ErrorKind, RetryPolicy};
use pincer_testkit::{Api, Fault, Match, MockLlm, Rule, Scenario, mock_embedding};
use proptest::prelude::*;
use serde_json::{Value, json};

const KEY: &str = "sk-test-secret-key-123";

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn config(server: &MockLlm, provider: EmbeddingProvider, model: &str) -> EmbeddingConfig {
    let api = match provider {
        EmbeddingProvider::OpenAi => Api::OpenAiEmbeddings,
        EmbeddingProvider::Gemini => Api::GoogleEmbeddings,
        EmbeddingProvider::Ollama => Api::OllamaEmbeddings,
    };
    let mut config = EmbeddingConfig::new(provider, model);
    config.base_url = Some(server.base_url(api));
    config.api_key = Some(KEY.into());
    config.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(5),
    };
    config
}

fn client(config: EmbeddingConfig) -> EmbeddingClient {
    EmbeddingClient::new(http(), config).unwrap()
}

/// The vectors `provider` (model `model`, served by `server`) gives for `input`.
async fn embed(
    server: &MockLlm,
    provider: EmbeddingProvider,
    model: &str,
    input: &[String],
) -> Vec<Vec<f32>> {
    client(config(server, provider, model))
        .embed(input)
        .await
        .unwrap()
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn each_provider_round_trips_in_order() {
    let server = MockLlm::start(Scenario::new()).await.unwrap();
    let input = texts(&["the cat sat", "stock prices fell", "我喜欢猫"]);
    for provider in [
        EmbeddingProvider::OpenAi,
        EmbeddingProvider::Gemini,
        EmbeddingProvider::Ollama,
    ] {
        let mut config = config(&server, provider, "embed-model");
        config.dimensions = Some(32);
        config.task_type = Some("RETRIEVAL_DOCUMENT".into());
        let client = client(config);
        assert_eq!(client.id(), format!("{}/embed-model@32", provider.name()));
        let vectors = client.embed(&input).await.unwrap();
        assert_eq!(vectors.len(), 3);
        for (vector, text) in vectors.iter().zip(&input) {
            assert_eq!(vector, &mock_embedding(text, 32), "{provider:?}");
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path, "/v1/embeddings");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(requests[0].body["dimensions"], 32);
    assert_eq!(
        requests[1].path,
        "/v1beta/models/embed-model:batchEmbedContents"
    );
    assert_eq!(requests[1].header("x-goog-api-key"), Some(KEY));
    assert!(
        requests[1].query.is_none(),
        "the key never travels in the URL"
    );
    assert_eq!(
        requests[1].body["requests"][0]["taskType"],
        "RETRIEVAL_DOCUMENT"
    );
    assert_eq!(requests[1].body["requests"][2]["outputDimensionality"], 32);
    assert_eq!(requests[2].path, "/api/embed");
    assert_eq!(requests[2].body["input"][2], "我喜欢猫");
}

/// How many texts each request carried in its `field` array.
fn batch_sizes(server: &MockLlm, field: &str) -> Vec<usize> {
    let requests = server.requests();
    requests
        .iter()
        .map(|r| r.body[field].as_array().unwrap().len())
        .collect()
}

#[tokio::test]
async fn batches_are_split_at_the_provider_limit() {
    let server = MockLlm::start(Scenario::new()).await.unwrap();
    let input: Vec<String> = (0..250).map(|i| format!("note number {i}")).collect();
    let vectors = embed(&server, EmbeddingProvider::Gemini, "g", &input).await;
    assert_eq!(vectors.len(), 250);
    assert_eq!(vectors[249], mock_embedding("note number 249", 64));
    assert_eq!(batch_sizes(&server, "requests"), vec![100, 100, 50]);

    server.clear_requests();
    let input: Vec<String> = (0..2100).map(|i| format!("t{i}")).collect();
    let vectors = embed(&server, EmbeddingProvider::OpenAi, "o", &input).await;
    assert_eq!(vectors.len(), 2100);
    assert_eq!(batch_sizes(&server, "input"), vec![2048, 52]);

    let mut small = config(&server, EmbeddingProvider::Ollama, "n");
    small.batch_size = Some(2);
    server.clear_requests();
    client(small).embed(&texts(&["a", "b", "c"])).await.unwrap();
    assert_eq!(server.requests().len(), 2);
    assert!(
        embed(&server, EmbeddingProvider::Ollama, "n", &[])
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_waited_out() {
    let scenario = Scenario::new().rule(
        Rule::when(Match::last_user_contains("busy"))
            .times(1)
            .fault(Fault::status(429).retry_after("1")),
    );
    let server = MockLlm::start(scenario).await.unwrap();
    let started = Instant::now();
    let vectors = embed(
        &server,
        EmbeddingProvider::OpenAi,
        "o",
        &texts(&["busy day"]),
    )
    .await;
    assert_eq!(vectors.len(), 1);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After honoured"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn errors_are_classified_and_never_show_the_key() {
    let scenario =
        Scenario::new()
            .rule(Rule::when(Match::last_user_contains("auth")).fault(
                Fault::status(401).body(
                    json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}}),
                ),
            ))
            .rule(
                Rule::when(Match::last_user_contains("limit"))
                    .fault(Fault::status(429).retry_after("600")),
            )
            .rule(Rule::when(Match::last_user_contains("down")).fault(Fault::status(503)))
            .rule(Rule::when(Match::last_user_contains("teapot")).fault(Fault::status(400)));
    let server = MockLlm::start(scenario).await.unwrap();
    let c = client(config(&server, EmbeddingProvider::OpenAi, "o"));

    let err = c.embed(&texts(&["auth"])).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
    assert!(err.message.contains("HTTP 401"), "{err}");
    assert!(err.message.contains("OPENAI_API_KEY"), "{err}");
    assert!(!err.message.contains(KEY), "{err}");
    assert!(!format!("{c:?}").contains(KEY));
    assert!(!format!("{:?}", c.config()).contains(KEY));
    assert!(
        format!("{:?}", c.config()).contains("api_key: Some(Secret(***))"),
        "{:?}",
        c.config()
    );

    let err = c.embed(&texts(&["limit"])).await.unwrap_err();
    assert!(matches!(err.kind, ErrorKind::RateLimited { .. }), "{err}");
    assert!(err.message.contains("600 s"), "{err}");

    server.clear_requests();
    let err = c.embed(&texts(&["down"])).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Server);
    assert!(err.message.contains("after 3 attempts"), "{err}");
    assert_eq!(server.requests().len(), 3);

    let err = c.embed(&texts(&["teapot"])).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);

    let mut gone = config(&server, EmbeddingProvider::Ollama, "n");
    gone.base_url = Some("http://127.0.0.1:9".into());
    gone.retry.max_retries = 0;
    let err = client(gone).embed(&texts(&["x"])).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::Network, "{err}");
}

#[tokio::test]
async fn wrong_answers_are_clear_errors() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user_contains("count")).fault(Fault::embed_count(1)))
        .rule(Rule::when(Match::last_user_contains("dims")).fault(Fault::embed_dims(5)))
        .rule(Rule::when(Match::last_user_contains("ragged")).fault(Fault::embed_ragged()))
        .rule(
            Rule::when(Match::last_user_contains("garbage")).fault(
                Fault::status(200).body(json!({"data": [{"index": 0, "embedding": ["x"]}]})),
            ),
        )
        .rule(
            Rule::when(Match::last_user_contains("html")).fault(Fault::content_type("text/html")),
        );
    let server = MockLlm::start(scenario).await.unwrap();
    for provider in [
        EmbeddingProvider::OpenAi,
        EmbeddingProvider::Gemini,
        EmbeddingProvider::Ollama,
    ] {
        let c = client(config(&server, provider, "m"));
        let err = c.embed(&texts(&["count", "b"])).await.unwrap_err();
        assert!(
            err.is_wrong_answer() && err.message.contains("asked for 2 embeddings, got 1"),
            "{err}"
        );
        let err = c.embed(&texts(&["ragged", "b"])).await.unwrap_err();
        assert!(err.message.contains("dimensions"), "{err}");
        let err = c.embed(&texts(&["html"])).await.unwrap_err();
        assert!(err.is_wrong_answer(), "{err}");
        let mut sized = config(&server, provider, "m");
        sized.dimensions = Some(16);
        let err = client(sized).embed(&texts(&["dims"])).await.unwrap_err();
        assert!(
            err.message.contains("has 5 dimensions, expected 16"),
            "{err}"
        );
    }
    let err = client(config(&server, EmbeddingProvider::OpenAi, "m"))
        .embed(&texts(&["garbage"]))
        .await
        .unwrap_err();
    assert!(err.is_wrong_answer(), "{err}");
}

#[tokio::test]
async fn dimensions_must_agree_across_batches() {
    // The second batch answers 5 dimensions where the first had 64.
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user_contains("second")).fault(Fault::embed_dims(5)));
    let server = MockLlm::start(scenario).await.unwrap();
    let mut config = config(&server, EmbeddingProvider::Ollama, "n");
    config.batch_size = Some(1);
    let err = client(config)
        .embed(&texts(&["first", "second"]))
        .await
        .unwrap_err();
    assert!(err.message.contains("expected 64"), "{err}");
}

#[test]
fn bad_configurations_are_refused() {
    let no_key = EmbeddingConfig::new(EmbeddingProvider::OpenAi, "text-embedding-3-small");
    let err = EmbeddingClient::new(http(), no_key).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Config);
    assert!(err.message.contains("OPENAI_API_KEY"));
    assert!(
        EmbeddingClient::new(http(), EmbeddingConfig::new(EmbeddingProvider::Ollama, " ")).is_err()
    );
    let mut bad_url = EmbeddingConfig::new(EmbeddingProvider::Ollama, "n");
    bad_url.base_url = Some("localhost:11434".into());
    assert!(EmbeddingClient::new(http(), bad_url).is_err());
    let ok =
        EmbeddingClient::new(http(), EmbeddingConfig::new(EmbeddingProvider::Ollama, "n")).unwrap();
    assert_eq!(ok.config().base_url(), "http://127.0.0.1:11434");
    assert_eq!(ok.id(), "ollama/n");
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        any::<i64>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("data".to_owned()),
                    Just("index".to_owned()),
                    Just("embedding".to_owned()),
                    Just("embeddings".to_owned()),
                    Just("values".to_owned()),
                    "[a-z]{1,4}",
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn decoders_never_panic(value in arb_json(), expected in 0usize..4, dims in proptest::option::of(0usize..4)) {
        let body = serde_json::to_vec(&value).unwrap();
        for provider in [EmbeddingProvider::OpenAi, EmbeddingProvider::Gemini, EmbeddingProvider::Ollama] {
            if let Ok(vectors) = decode(provider, &body, expected, dims) {
                prop_assert_eq!(vectors.len(), expected);
                let first = vectors.first().map(Vec::len);
                prop_assert!(vectors.iter().all(|v| Some(v.len()) == first && v.iter().all(|x| x.is_finite())));
            }
        }
    }

    #[test]
    fn decoders_never_panic_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for provider in [EmbeddingProvider::OpenAi, EmbeddingProvider::Gemini, EmbeddingProvider::Ollama] {
            let _ = decode(provider, &bytes, 1, None);
        }
    }
}
