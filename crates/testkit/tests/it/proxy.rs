//! pi's proxy stream over real HTTP: bearer auth, the exact event sequence with content
//! indexes, tool calls, `done` with pi usage, toolResult matching.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{bodies, client, concat, jsons};
use pincer_testkit::{Reply, Scenario};
use serde_json::{Value, json};

fn scenario() -> Scenario {
    common::weather_scenario(
        Reply::text("Checking.")
            .with_thinking("hmm")
            .with_tool_call_id("call_1", "get_weather", json!({"city": "Paris"})),
    )
}

#[tokio::test]
async fn requires_a_bearer_token() {
    let (_server, url) = common::start_at(scenario(), "/api/stream").await;
    for auth in [None, Some("Bearer "), Some("Basic abc")] {
        let mut request = client().post(&url).json(&bodies::proxy("hi"));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body, json!({"error": "missing token"}));
    }
}

#[tokio::test]
async fn event_sequence_and_round_trip() {
    let (_server, url) = common::start_at(scenario(), "/api/stream").await;
    let send = |body: Value| {
        let url = url.clone();
        async move {
            let response = common::post_ok_with_token(&url, "secret", &body).await;
            jsons(&common::parse_sse(&response.text().await.unwrap()))
        }
    };
    let values = send(bodies::proxy("weather?")).await;
    let kinds: Vec<&str> = values.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done",
        ]
    );
    assert_eq!(values[1]["contentIndex"], 0);
    assert_eq!(values[4]["contentIndex"], 1);
    assert_eq!(
        values[9],
        json!({"type": "toolcall_start", "contentIndex": 2,
        "id": "call_1", "toolName": "get_weather"})
    );
    let text: Vec<Value> = values
        .iter()
        .filter(|v| v["type"] == "text_delta")
        .cloned()
        .collect();
    assert_eq!(concat(&text, "/delta"), "Checking.");
    let args: Vec<Value> = values
        .iter()
        .filter(|v| v["type"] == "toolcall_delta")
        .cloned()
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&concat(&args, "/delta")).unwrap(),
        json!({"city": "Paris"})
    );
    let done = values.last().unwrap();
    assert_eq!(done["reason"], "toolUse");
    let usage = &done["usage"];
    for key in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
        assert!(usage[key].is_u64(), "{key}");
    }
    assert_eq!(usage["cost"]["total"], 0);

    let follow_up = json!({"model": "proxy-mock", "context": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": "get_weather", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "call_1", "toolName": "get_weather",
            "content": [{"type": "text", "text": "sunny"}], "isError": false}]}});
    let values = send(follow_up).await;
    assert_eq!(concat(&values, "/delta"), "Sunny.");
    assert_eq!(values.last().unwrap()["reason"], "stop");
}
