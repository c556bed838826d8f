//! The embedding endpoints over real HTTP: the three protocols' shapes, deterministic and
//! normalised vectors, requested dimensions, recording, 400s for bad requests, and the faults
//! (HTTP errors with Retry-After, wrong count, wrong and ragged dimensions).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{post, post_json};
use pincer_testkit::{Api, Fault, Match, MockLlm, Rule, Scenario, mock_embedding};
use serde_json::{Value, json};

fn norm(v: &[Value]) -> f64 {
    v.iter()
        .map(|x| x.as_f64().unwrap().powi(2))
        .sum::<f64>()
        .sqrt()
}

async fn start(scenario: Scenario) -> MockLlm {
    MockLlm::start(scenario).await.unwrap()
}

#[tokio::test]
async fn openai_answers_one_normalised_vector_per_input_in_order() {
    let server = start(Scenario::new()).await;
    for path in ["/v1/embeddings", "/embeddings"] {
        let response = post(
            &format!("{}{path}", server.url()),
            &json!({"model": "text-embedding-3-small", "input": ["alpha beta", "gamma"], "dimensions": 16}),
        )
        .await;
        assert_eq!(response.status(), 200);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["object"], "list");
        assert_eq!(body["model"], "text-embedding-3-small");
        let data = body["data"].as_array().unwrap();
        assert_eq!(data.len(), 2);
        for (i, item) in data.iter().enumerate() {
            assert_eq!(item["index"], i);
            let v = item["embedding"].as_array().unwrap();
            assert_eq!(v.len(), 16);
            assert!((norm(v) - 1.0).abs() < 1e-4);
        }
        let first: Vec<f32> = serde_json::from_value(data[0]["embedding"].clone()).unwrap();
        assert_eq!(first, mock_embedding("alpha beta", 16));
        assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].api, Api::OpenAiEmbeddings);
    assert_eq!(requests[1].path, "/embeddings");
    assert_eq!(requests[0].body["input"][1], "gamma");
}

#[tokio::test]
async fn gemini_and_ollama_shapes() {
    let server = start(Scenario::new()).await;
    let url = format!(
        "{}/models/gemini-embedding-001:batchEmbedContents",
        server.base_url(Api::GoogleEmbeddings)
    );
    let request = |text: &str| {
        json!({"model": "models/gemini-embedding-001", "content": {"parts": [{"text": text}]},
               "taskType": "RETRIEVAL_DOCUMENT", "outputDimensionality": 8})
    };
    let response = post(&url, &json!({"requests": [request("one"), request("two")]})).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let embeddings = body["embeddings"].as_array().unwrap();
    assert_eq!(embeddings.len(), 2);
    assert_eq!(embeddings[1]["values"].as_array().unwrap().len(), 8);
    assert_eq!(server.requests()[0].api, Api::GoogleEmbeddings);

    let url = format!("{}/api/embed", server.base_url(Api::OllamaEmbeddings));
    let response = post(
        &url,
        &json!({"model": "nomic-embed-text", "input": "just one"}),
    )
    .await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["model"], "nomic-embed-text");
    let embeddings = body["embeddings"].as_array().unwrap();
    assert_eq!(embeddings.len(), 1);
    assert_eq!(
        embeddings[0].as_array().unwrap().len(),
        pincer_testkit::DEFAULT_EMBEDDING_DIMS
    );
}

#[tokio::test]
async fn similar_texts_get_similar_vectors() {
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let q = mock_embedding("where did I park the car", 64);
    let hit = mock_embedding("I parked the car on level 3", 64);
    let miss = mock_embedding("dentist appointment on Tuesday", 64);
    assert!(cos(&q, &hit) > cos(&q, &miss));
}

#[tokio::test]
async fn bad_requests_get_the_protocols_error_shape() {
    let server = start(Scenario::new()).await;
    let refused = |path: &str, body: Value| {
        let url = format!("{}{path}", server.url());
        async move {
            let response = post(&url, &body).await;
            assert_eq!(response.status(), 400);
            response.json::<Value>().await.unwrap()
        }
    };
    let body = refused("/v1/embeddings", json!({"input": "x"})).await;
    assert!(body["error"]["message"].as_str().unwrap().contains("model"));

    let too_many: Vec<Value> = (0..101)
        .map(|_| json!({"model": "models/e", "content": {"parts": [{"text": "x"}]}}))
        .collect();
    let body = refused(
        "/v1beta/models/e:batchEmbedContents",
        json!({"requests": too_many}),
    )
    .await;
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");

    let body = refused("/api/embed", json!({"model": "m"})).await;
    assert!(body["error"].is_string());
}

#[tokio::test]
async fn faults_apply_to_embedding_requests() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains("flaky"))
                .times(1)
                .fault(Fault::status(429).retry_after("2")),
        )
        .rule(Rule::when(Match::last_user_contains("short")).fault(Fault::embed_count(1)))
        .rule(Rule::when(Match::last_user_contains("wide")).fault(Fault::embed_dims(3)))
        .rule(Rule::when(Match::last_user_contains("ragged")).fault(Fault::embed_ragged()))
        .rule(Rule::when(Match::api(Api::OllamaEmbeddings)).fault(Fault::status(500)));
    let server = start(scenario).await;
    let openai = format!("{}/v1/embeddings", server.url());
    let embed = |input: Value| json!({"model": "m", "input": input, "dimensions": 8});

    let response = post(&openai, &embed(json!(["flaky"]))).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    let response = post(&openai, &embed(json!(["flaky"]))).await;
    assert_eq!(response.status(), 200, "times(1) is used up");

    let body: Value = post_json(&openai, &embed(json!(["short", "b", "c"]))).await;
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    let body: Value = post_json(&openai, &embed(json!(["wide"]))).await;
    assert_eq!(body["data"][0]["embedding"].as_array().unwrap().len(), 3);
    let body: Value = post_json(&openai, &embed(json!(["ragged", "b"]))).await;
    assert_eq!(body["data"][0]["embedding"].as_array().unwrap().len(), 8);
    assert_eq!(body["data"][1]["embedding"].as_array().unwrap().len(), 7);

    let response = post(
        &format!("{}/api/embed", server.url()),
        &json!({"model": "m", "input": ["x"]}),
    )
    .await;
    assert_eq!(response.status(), 500);
}

#[tokio::test]
async fn scenario_json_knows_the_embedding_faults() {
    let scenario = Scenario::from_json_str(
        r#"{"rules": [{"match": {"api": "google-embeddings"}, "fault": {"embedCount": 0}},
                      {"match": {"api": "openai-embeddings"}, "fault": {"embedDims": 2, "embedRagged": true}}]}"#,
    )
    .unwrap();
    let server = start(scenario).await;
    let url = format!("{}/v1beta/models/e:batchEmbedContents", server.url());
    let body: Value = post_json(
        &url,
        &json!({"requests": [{"model": "models/e", "content": {"parts": [{"text": "x"}]}}]}),
    )
    .await;
    assert_eq!(body["embeddings"], json!([]));
    assert!(
        Scenario::from_json_str(r#"{"rules": [{"fault": {"embedDims": 100000}}]}"#).is_err()
            || MockLlm::start(
                Scenario::from_json_str(r#"{"rules": [{"fault": {"embedDims": 100000}}]}"#)
                    .unwrap()
            )
            .await
            .is_err()
    );
}
