//! OpenAI Chat Completions over real HTTP: exact chunk sequence, reasoning, tool calls, usage,
//! tool-result matching and the non-streaming document.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{bodies, concat, jsons, post, stream};
use pincer_testkit::{Match, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};

#[tokio::test]
async fn text_reply_streams_exact_chunks() {
    let scenario = Scenario::new()
        .rule(Rule::when(Match::last_user("hi")).reply(Reply::text("Hello there!")))
        .chunk_size(5);
    let (_server, url) = common::start_at(scenario, "/v1/chat/completions").await;
    let events = stream(&url, &bodies::chat("hi")).await;
    assert_eq!(events.last().unwrap().data, "[DONE]");
    assert!(events.iter().all(|e| e.event.is_none()));
    let chunks = jsons(&events);
    let first = &chunks[0];
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(first["model"], "gpt-mock");
    assert!(first["id"].as_str().unwrap().starts_with("chatcmpl-mock-"));
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
    let deltas: Vec<&str> = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(deltas, ["Hello", " ther", "e!"]);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish["choices"][0]["delta"], json!({}));
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    let u = &usage["usage"];
    assert_eq!(
        u["total_tokens"].as_u64().unwrap(),
        u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
    );
    assert_eq!(u["prompt_tokens_details"]["cached_tokens"], 0);
    // All chunks share one id.
    assert!(chunks.iter().all(|c| c["id"] == first["id"]));
}

#[tokio::test]
async fn no_usage_chunk_without_include_usage() {
    let (_server, url) = common::start_at(Scenario::new(), "/chat/completions").await;
    let mut body = bodies::chat("hey");
    body.as_object_mut().unwrap().remove("stream_options");
    let events = stream(&url, &body).await;
    let chunks = jsons(&events);
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(concat(&chunks, "/choices/0/delta/content"), "mock: hey");
}

#[tokio::test]
async fn thinking_and_tool_calls_then_tool_result() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user_contains("weather")).reply(
                Reply::text("Let me check.")
                    .with_thinking("need a tool")
                    .with_tool_call("get_weather", json!({"city": "Paris"}))
                    .with_tool_call_id("call_x", "get_time", json!({}))
                    .with_usage(UsageSpec {
                        input: Some(100),
                        output: Some(20),
                        cache_read: Some(30),
                        cache_write: None,
                    }),
            ),
        )
        .rule(Rule::when(Match::tool_result("get_weather")).reply(Reply::text("It is sunny.")))
        .rule(Rule::when(Match::tool_result_id("call_x")).reply(Reply::text("It is noon.")))
        .chunk_size(3);
    let (_server, url) = common::start_at(scenario, "/v1/chat/completions").await;
    let chunks = jsons(&stream(&url, &bodies::chat("what's the weather?")).await);
    assert_eq!(
        concat(&chunks, "/choices/0/delta/reasoning_content"),
        "need a tool"
    );
    assert_eq!(concat(&chunks, "/choices/0/delta/content"), "Let me check.");
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
        .collect();
    // Header chunk carries id, type and name with empty arguments.
    assert_eq!(calls[0]["index"], 0);
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    assert_eq!(calls[0]["function"]["arguments"], "");
    let weather_id = calls[0]["id"].as_str().unwrap().to_owned();
    assert!(weather_id.starts_with("call_"));
    let args: String = calls
        .iter()
        .filter(|c| c["index"] == 0)
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"city": "Paris"})
    );
    assert!(calls.iter().filter(|c| c["index"] == 0).count() > 2);
    let second = calls.iter().find(|c| c["index"] == 1).unwrap();
    assert_eq!(second["id"], "call_x");
    let finish = chunks
        .iter()
        .find_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .filter(|f| !f.is_null())
        })
        .unwrap();
    assert_eq!(finish, "tool_calls");
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(usage["prompt_tokens"], 130);
    assert_eq!(usage["completion_tokens"], 20);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 30);

    // The result carries only the call id: the name comes from the request's history.
    let follow_up = json!({"model": "gpt-mock", "stream": true, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "what's the weather?"}]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": weather_id, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": weather_id, "content": "sunny"}]});
    let chunks = jsons(&stream(&url, &follow_up).await);
    assert_eq!(concat(&chunks, "/choices/0/delta/content"), "It is sunny.");

    // Without history the name comes from the ids this server emitted.
    let bare = json!({"model": "gpt-mock", "stream": true, "messages": [
        {"role": "tool", "tool_call_id": weather_id, "content": "sunny"}]});
    let chunks = jsons(&stream(&url, &bare).await);
    assert_eq!(concat(&chunks, "/choices/0/delta/content"), "It is sunny.");

    let by_id = json!({"model": "gpt-mock", "stream": true, "messages": [
        {"role": "tool", "tool_call_id": "call_x", "content": "12:00"}]});
    let chunks = jsons(&stream(&url, &by_id).await);
    assert_eq!(concat(&chunks, "/choices/0/delta/content"), "It is noon.");
}

#[tokio::test]
async fn non_streaming_document() {
    let scenario = Scenario::new().default_reply(Reply::text("done").with_tool_call_id(
        "call_1",
        "f",
        json!({"a": 1}),
    ));
    let (_server, url) = common::start_at(scenario, "/v1/chat/completions").await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
    let response = post(&url, &body).await;
    assert_eq!(response.status(), 200);
    let doc: Value = response.json().await.unwrap();
    assert_eq!(doc["object"], "chat.completion");
    let message = &doc["choices"][0]["message"];
    assert_eq!(message["content"], "done");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        r#"{"a":1}"#
    );
    assert_eq!(doc["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn length_stop_reason() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("cut").with_stop_reason(pincer_testkit::StopReason::Length));
    let (_server, url) = common::start_at(scenario, "/v1/chat/completions").await;
    let chunks = jsons(&stream(&url, &bodies::chat("x")).await);
    let finish: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .filter(|f| !f.is_null())
        })
        .collect();
    assert_eq!(finish, [&json!("length")]);
}
