//! Anthropic Messages over real HTTP: exact event sequence, thinking + signature, redacted
//! thinking, tool_use with input_json_delta, stop reasons, usage, tool_result matching.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{bodies, concat, jsons, post, post_json, stream};
use pincer_testkit::{Match, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};

fn scenario() -> Scenario {
    Scenario::new()
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("Hello!")))
        .rule(
            Rule::when(Match::last_user_contains("weather")).reply(
                Reply::tool_call("get_weather", json!({"city": "Paris"}))
                    .with_thinking("need a tool")
                    .with_redacted_thinking("opaque==")
                    .with_signature("sig-1")
                    .with_usage(UsageSpec {
                        input: Some(10),
                        output: Some(7),
                        cache_read: Some(3),
                        cache_write: Some(2),
                    }),
            ),
        )
        .rule(Rule::when(Match::tool_result("get_weather")).reply(Reply::text("It is sunny.")))
        .chunk_size(4)
}

#[tokio::test]
async fn text_reply_exact_events() {
    let (_server, url) = common::start_at(scenario(), "/v1/messages").await;
    let events = stream(&url, &bodies::anthropic("hi")).await;
    let names: Vec<&str> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    let values = jsons(&events);
    for (event, value) in events.iter().zip(&values) {
        assert_eq!(event.event.as_deref(), value["type"].as_str());
    }
    let message = &values[0]["message"];
    assert!(message["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(message["model"], "claude-mock");
    assert_eq!(message["usage"]["output_tokens"], 1);
    assert!(message["usage"].get("cache_read_input_tokens").is_some());
    assert_eq!(
        values[2]["content_block"],
        json!({"type": "text", "text": ""})
    );
    assert_eq!(
        values[3]["delta"],
        json!({"type": "text_delta", "text": "Hell"})
    );
    assert_eq!(
        values[4]["delta"],
        json!({"type": "text_delta", "text": "o!"})
    );
    assert_eq!(values[6]["delta"]["stop_reason"], "end_turn");
    assert_eq!(values[6]["delta"]["stop_sequence"], Value::Null);
    assert!(values[6]["usage"]["output_tokens"].as_u64().unwrap() >= 1);
}

#[tokio::test]
async fn thinking_redacted_tool_use_and_round_trip() {
    let (_server, url) = common::start_at(scenario(), "/v1/messages").await;
    let values = jsons(&stream(&url, &bodies::anthropic("weather in Paris?")).await);
    let starts: Vec<&Value> = values
        .iter()
        .filter(|v| v["type"] == "content_block_start")
        .collect();
    assert_eq!(
        starts[0]["content_block"],
        json!({"type": "thinking", "thinking": "", "signature": ""})
    );
    assert_eq!(
        starts[1]["content_block"],
        json!({"type": "redacted_thinking", "data": "opaque=="})
    );
    let tool = &starts[2]["content_block"];
    assert_eq!(tool["type"], "tool_use");
    assert_eq!(tool["name"], "get_weather");
    assert_eq!(tool["input"], json!({}));
    let tool_id = tool["id"].as_str().unwrap().to_owned();
    assert!(tool_id.starts_with("toolu_"));
    let deltas = |index: u64, kind: &str| -> Vec<Value> {
        values
            .iter()
            .filter(|v| v["type"] == "content_block_delta" && v["index"] == index)
            .map(|v| v["delta"].clone())
            .filter(|d| d["type"] == kind)
            .collect()
    };
    assert_eq!(
        concat(&deltas(0, "thinking_delta"), "/thinking"),
        "need a tool"
    );
    let signature = deltas(0, "signature_delta");
    assert_eq!(
        signature,
        [json!({"type": "signature_delta", "signature": "sig-1"})]
    );
    // The signature comes after the thinking text.
    let block0: Vec<&Value> = values
        .iter()
        .filter(|v| v["type"] == "content_block_delta" && v["index"] == 0)
        .collect();
    assert_eq!(block0.last().unwrap()["delta"]["type"], "signature_delta");
    let json_text = concat(&deltas(2, "input_json_delta"), "/partial_json");
    assert_eq!(
        serde_json::from_str::<Value>(&json_text).unwrap(),
        json!({"city": "Paris"})
    );
    let start = &values[0]["message"]["usage"];
    assert_eq!(start["input_tokens"], 10);
    assert_eq!(start["cache_read_input_tokens"], 3);
    assert_eq!(start["cache_creation_input_tokens"], 2);
    let delta = values
        .iter()
        .find(|v| v["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 7);

    let follow_up = json!({"model": "claude-mock", "max_tokens": 100, "stream": true, "messages": [
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "get_weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
            "content": [{"type": "text", "text": "sunny"}]}]}]});
    let values = jsons(&stream(&url, &follow_up).await);
    assert_eq!(concat(&values, "/delta/text"), "It is sunny.");
}

#[tokio::test]
async fn non_streaming_and_validation() {
    let (_server, url) = common::start_at(scenario(), "/v1/messages").await;
    let body =
        json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let doc: Value = post_json(&url, &body).await;
    assert_eq!(doc["type"], "message");
    assert_eq!(doc["content"], json!([{"type": "text", "text": "Hello!"}]));
    assert_eq!(doc["stop_reason"], "end_turn");

    let missing = json!({"model": "m", "messages": []});
    let response = post(&url, &missing).await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "invalid_request_error");
}
