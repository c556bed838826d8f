//! Scenario loading and matching over real HTTP: strict JSON errors, rule order, `times`,
//! `api` / `model` matchers, default and echo replies, request recording, instant mode, and
//! 400s for requests the mock cannot read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{GOOGLE_PATH, bodies, client, concat, get_json, jsons, post, stream};
use pincer_testkit::{Api, Match, MockLlm, Reply, Rule, Scenario, ScenarioError};
use serde_json::{Value, json};

const EXAMPLE: &str = r#"{
  "rules": [
    {"match": {"lastUser": "hi"}, "reply": {"text": "Hello!"}},
    {"match": {"lastUserContains": "weather"}, "reply": {"thinking": "need a tool", "toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}]}},
    {"match": {"toolResult": "get_weather"}, "reply": {"text": "It is sunny."}},
    {"match": {"lastUser": "flaky"}, "times": 2, "fault": {"status": 429, "retryAfter": "1", "body": {"error": {"message": "slow down", "type": "rate_limit_error"}}}}
  ],
  "default": {"text": "mock reply"},
  "chunkSize": 4,
  "delayMs": 0
}"#;

#[test]
fn the_documented_example_parses_and_round_trips() {
    let scenario = Scenario::from_json_str(EXAMPLE).unwrap();
    assert_eq!(scenario.rules.len(), 4);
    assert_eq!(scenario.rules[3].times, Some(2));
    assert_eq!(
        scenario.rules[1].reply.as_ref().unwrap().tool_calls[0].name,
        "get_weather"
    );
    let again = serde_json::to_string(&scenario).unwrap();
    assert_eq!(Scenario::from_json_str(&again).unwrap(), scenario);
}

#[test]
fn unknown_fields_are_named_with_position() {
    let err = Scenario::from_json_str("{\n  \"rules\": [{\"match\": {\"lastUsr\": \"hi\"}}]\n}")
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("unknown field `lastUsr`"), "{message}");
    assert!(
        message.contains("lastUser"),
        "suggests valid fields: {message}"
    );
    assert_eq!(err.line(), Some(2));
    assert!(err.column().is_some());

    let err = Scenario::from_json_str(r#"{"chunksize": 3}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `chunksize`"));
    let err = Scenario::from_json_str(r#"{"default": {"stopReason": "halt"}}"#).unwrap_err();
    assert!(err.to_string().contains("halt"));
    let err = Scenario::from_json_str(r#"{"rules": [{"fault": {"status": 99}}]}"#).unwrap_err();
    assert!(matches!(err, ScenarioError::Invalid { .. }));
    assert!(err.to_string().contains("rules[0].fault.status"));
    let err = Scenario::from_json_str(r#"{"chunkSize": 0}"#).unwrap_err();
    assert!(err.to_string().contains("chunkSize"));
    let err =
        Scenario::from_json_str(r#"{"default": {"toolCalls": [{"name": "f", "arguments": [1]}]}}"#)
            .unwrap_err();
    assert!(err.to_string().contains("default.toolCalls[0].arguments"));
}

#[test]
fn file_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("pincer-testkit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing.json");
    let err = Scenario::from_file(&missing).unwrap_err();
    assert!(err.to_string().contains("missing.json"));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\n\"rules\": [,]\n}").unwrap();
    let err = Scenario::from_file(&bad).unwrap_err();
    assert!(err.to_string().contains("bad.json"), "{err}");
    assert_eq!(err.line(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn example_files_load() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scenarios");
    for name in ["hello.json", "instant.json"] {
        Scenario::from_file(format!("{dir}/{name}")).unwrap();
    }
}

#[tokio::test]
async fn invalid_builder_scenario_is_refused_at_start() {
    let err = MockLlm::start(Scenario::new().chunk_size(0))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("chunkSize"));
}

#[tokio::test]
async fn rules_match_in_order_with_api_and_model() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("hi").with_api(Api::AnthropicMessages))
                .reply(Reply::text("anthropic hi")),
        )
        .rule(Rule::when(Match::model("special")).reply(Reply::text("special model")))
        .rule(
            Rule::when(Match::last_user("hi"))
                .times(1)
                .reply(Reply::text("first hi")),
        )
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("later hi")));
    let (server, chat) = common::start_at(scenario, "/v1/chat/completions").await;
    let text = |events: Vec<common::Event>| concat(&jsons(&events), "/choices/0/delta/content");
    assert_eq!(text(stream(&chat, &bodies::chat("hi")).await), "first hi");
    assert_eq!(text(stream(&chat, &bodies::chat("hi")).await), "later hi");
    let mut special = bodies::chat("hi");
    special["model"] = json!("special");
    assert_eq!(text(stream(&chat, &special).await), "special model");
    // No rule, no default: echo.
    assert_eq!(text(stream(&chat, &bodies::chat("bye")).await), "mock: bye");

    let messages = format!("{}/v1/messages", server.url());
    let values = jsons(&stream(&messages, &bodies::anthropic("hi")).await);
    assert_eq!(concat(&values, "/delta/text"), "anthropic hi");
}

#[tokio::test]
async fn last_user_does_not_match_a_trailing_tool_result() {
    let scenario = Scenario::from_json_str(EXAMPLE).unwrap();
    let (_server, url) = common::start_at(scenario, "/v1/chat/completions").await;
    let values = jsons(&stream(&url, &bodies::chat("weather in Paris")).await);
    let call = values
        .iter()
        .find_map(|v| v.pointer("/choices/0/delta/tool_calls/0/id"))
        .unwrap();
    assert_eq!(call, "call_1");
    // Still mentions weather, but now ends with the tool result.
    let follow_up = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "weather in Paris"},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]});
    let values = jsons(&stream(&url, &follow_up).await);
    assert_eq!(concat(&values, "/choices/0/delta/content"), "It is sunny.");
    let values = jsons(&stream(&url, &bodies::chat("something else")).await);
    assert_eq!(concat(&values, "/choices/0/delta/content"), "mock reply");
}

#[tokio::test]
async fn requests_are_recorded_and_listed() {
    let server = MockLlm::start(Scenario::new()).await.unwrap();
    assert_eq!(
        server.base_url(Api::OpenAiResponses),
        format!("{}/v1", server.url())
    );
    assert_eq!(
        server.base_url(Api::GoogleGenerativeAi),
        format!("{}/v1beta", server.url())
    );
    let url = format!(
        "{}/chat/completions",
        server.base_url(Api::OpenAiCompletions)
    );
    let response = client()
        .post(&url)
        .header("X-Api-Key", "k-123")
        .bearer_auth("tok")
        .json(&bodies::chat("hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap();
    post(
        &format!("{}{GOOGLE_PATH}", server.url()),
        &bodies::google("g"),
    )
    .await;

    let recorded = server.requests();
    assert_eq!(recorded.len(), 2);
    let first = &recorded[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.api, Api::OpenAiCompletions);
    assert_eq!(first.header("x-api-key"), Some("k-123"));
    assert!(
        first
            .headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer tok")
    );
    assert!(first.headers.iter().all(|(k, _)| *k == k.to_lowercase()));
    assert_eq!(first.body, bodies::chat("hello"));
    assert_eq!(recorded[1].api, Api::GoogleGenerativeAi);
    assert_eq!(recorded[1].query.as_deref(), Some("alt=sse"));

    let listed = get_json(&format!("{}/__mock/requests", server.url())).await;
    assert_eq!(listed[0]["body"], bodies::chat("hello"));
    assert_eq!(listed[1]["api"], "google-generative-ai");
    let health = client()
        .get(format!("{}/healthz", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    server.clear_requests();
    assert!(server.requests().is_empty());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_requests_get_400_json_and_are_recorded() {
    let server = MockLlm::start(Scenario::new()).await.unwrap();
    let base = server.url();
    let cases = [
        format!("{base}/v1/chat/completions"),
        format!("{base}/v1/responses"),
        format!("{base}/v1/messages"),
        format!("{base}{GOOGLE_PATH}"),
    ];
    let http = client();
    for url in &cases {
        for body in ["{not json", "[1,2]", "{\"model\": 3}", ""] {
            let response = http
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 400, "{url} {body}");
            let error: Value = response.json().await.unwrap();
            assert!(error.get("error").is_some(), "{url} {body}: {error}");
        }
    }
    assert_eq!(server.requests().len(), 16);
    assert_eq!(server.requests()[0].body, json!("{not json"));
    let response = client().get(format!("{base}/nope")).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn instant_mode_emits_n_deltas_on_every_protocol() {
    let server = MockLlm::start(Scenario::instant(50)).await.unwrap();
    let base = server.url();
    for _ in 0..2 {
        let values =
            jsons(&stream(&format!("{base}/v1/chat/completions"), &bodies::chat("x")).await);
        let deltas: Vec<&Value> = values
            .iter()
            .filter_map(|v| v.pointer("/choices/0/delta/content"))
            .filter(|c| *c != "")
            .collect();
        assert_eq!(deltas.len(), 50);
        assert!(deltas.iter().all(|d| *d == "tok "));
    }
    let values = jsons(&stream(&format!("{base}/v1/messages"), &bodies::anthropic("x")).await);
    let deltas = values
        .iter()
        .filter(|v| v["delta"]["type"] == "text_delta")
        .count();
    assert_eq!(deltas, 50);
    let values = jsons(&stream(&format!("{base}/v1/responses"), &bodies::responses("x")).await);
    let deltas = values
        .iter()
        .filter(|v| v["type"] == "response.output_text.delta")
        .count();
    assert_eq!(deltas, 50);
    let values = jsons(&stream(&format!("{base}{GOOGLE_PATH}"), &bodies::google("x")).await);
    assert_eq!(values.len(), 51);
}
