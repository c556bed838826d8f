//! Google Generative AI over real HTTP: CRLF-framed chunks, thought parts, whole functionCall
//! parts, the finishReason chunk with usageMetadata, functionResponse matching, and the
//! JSON-array / generateContent forms.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{GOOGLE_PATH, bodies, concat, jsons, post, post_json};
use pincer_testkit::{Reply, Scenario};
use serde_json::{Value, json};

fn scenario() -> Scenario {
    let checking = Reply::text("Checking.")
        .with_thinking("need a tool")
        .with_signature("c2ln")
        .with_tool_call("get_weather", json!({"city": "Paris"}));
    common::long_hits_the_limit(common::weather_scenario(checking), "cut")
}

#[tokio::test]
async fn stream_chunks_are_crlf_framed_and_complete() {
    let (_server, url) = common::start_at(scenario(), GOOGLE_PATH).await;
    let response = post(&url, &bodies::google("weather?")).await;
    assert_eq!(response.status(), 200);
    let raw = response.text().await.unwrap();
    assert!(raw.starts_with("data: {"));
    assert!(raw.ends_with("}\r\n\r\n"));
    assert_eq!(
        raw.matches("\r\n\r\n").count(),
        raw.matches("data: ").count()
    );
    let values = jsons(&common::parse_sse(&raw));
    let parts: Vec<Value> = values
        .iter()
        .filter_map(|v| v.pointer("/candidates/0/content/parts"))
        .flat_map(|p| p.as_array().unwrap().clone())
        .collect();
    let thoughts: Vec<Value> = parts
        .iter()
        .filter(|p| p["thought"] == true)
        .cloned()
        .collect();
    assert_eq!(concat(&thoughts, "/text"), "need a tool");
    let texts: Vec<Value> = parts
        .iter()
        .filter(|p| p.get("thought").is_none() && p.get("text").is_some())
        .cloned()
        .collect();
    assert_eq!(concat(&texts, "/text"), "Checking.");
    let call = parts
        .iter()
        .find(|p| p.get("functionCall").is_some())
        .unwrap();
    assert_eq!(
        call["functionCall"],
        json!({"name": "get_weather", "args": {"city": "Paris"}})
    );
    assert_eq!(call["thoughtSignature"], "c2ln");
    for value in &values {
        assert_eq!(value["modelVersion"], "gemini-mock");
        assert_eq!(value["candidates"][0]["index"], 0);
    }
    let last = values.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    let usage = &last["usageMetadata"];
    let total = usage["totalTokenCount"].as_u64().unwrap();
    let sum = usage["promptTokenCount"].as_u64().unwrap()
        + usage["candidatesTokenCount"].as_u64().unwrap()
        + usage["thoughtsTokenCount"].as_u64().unwrap();
    assert_eq!(total, sum);
    assert!(usage["thoughtsTokenCount"].as_u64().unwrap() > 0);
    assert_eq!(usage["cachedContentTokenCount"], 0);
    // Only the last chunk finishes.
    assert!(
        values[..values.len() - 1]
            .iter()
            .all(|v| v["candidates"][0].get("finishReason").is_none())
    );

    let follow_up = json!({"contents": [
        {"role": "user", "parts": [{"text": "weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}}]}]});
    let values = jsons(&common::parse_sse(
        &post(&url, &follow_up).await.text().await.unwrap(),
    ));
    assert_eq!(
        concat(&values, "/candidates/0/content/parts/0/text"),
        "Sunny."
    );
}

#[tokio::test]
async fn max_tokens_and_other_deliveries() {
    let (_server, base) = common::start_at(scenario(), "/v1beta/models/gemini-mock").await;
    let sse = format!("{base}:streamGenerateContent?alt=sse");
    let values = jsons(&common::parse_sse(
        &post(&sse, &bodies::google("long"))
            .await
            .text()
            .await
            .unwrap(),
    ));
    assert_eq!(
        values.last().unwrap()["candidates"][0]["finishReason"],
        "MAX_TOKENS"
    );

    let array: Value = post_json(
        &format!("{base}:streamGenerateContent"),
        &bodies::google("hi"),
    )
    .await;
    let chunks = array.as_array().unwrap();
    assert_eq!(
        concat(chunks, "/candidates/0/content/parts/0/text"),
        "mock: hi"
    );

    let doc: Value = post_json(
        &format!("{base}:generateContent"),
        &bodies::google("weather?"),
    )
    .await;
    let parts = doc["candidates"][0]["content"]["parts"].as_array().unwrap();
    assert_eq!(parts[0], json!({"text": "need a tool", "thought": true}));
    assert_eq!(parts[1], json!({"text": "Checking."}));
    assert_eq!(parts[2]["functionCall"]["name"], "get_weather");
    assert_eq!(doc["candidates"][0]["finishReason"], "STOP");

    let bad = post(&format!("{base}:countTokens"), &bodies::google("x")).await;
    assert_eq!(bad.status(), 400);
    let error: Value = bad.json().await.unwrap();
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
}
