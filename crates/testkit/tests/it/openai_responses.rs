//! OpenAI Responses over real HTTP: the exact event sequence for reasoning, text and function
//! calls, sequence numbers, usage, incomplete status, function_call_output matching.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{bodies, concat, jsons, post_json, stream};
use pincer_testkit::{Reply, Scenario};
use serde_json::{Value, json};

fn scenario() -> Scenario {
    let checking = Reply::text("Checking.")
        .with_thinking("need a tool")
        .with_tool_call("get_weather", json!({"city": "Paris"}));
    common::long_hits_the_limit(common::weather_scenario(checking), "trunc")
}

#[tokio::test]
async fn full_event_sequence() {
    let (_server, url) = common::start_at(scenario(), "/v1/responses").await;
    let events = stream(&url, &bodies::responses("weather?")).await;
    let values = jsons(&events);
    for (event, value) in events.iter().zip(&values) {
        assert_eq!(event.event.as_deref(), value["type"].as_str());
    }
    let numbers: Vec<u64> = values
        .iter()
        .map(|v| v["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (0..values.len() as u64).collect::<Vec<_>>());
    let mut kinds: Vec<&str> = values.iter().map(|v| v["type"].as_str().unwrap()).collect();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let added: Vec<&Value> = values
        .iter()
        .filter(|v| v["type"] == "response.output_item.added")
        .map(|v| &v["item"])
        .collect();
    assert_eq!(added[0]["type"], "reasoning");
    assert!(added[0]["id"].as_str().unwrap().starts_with("rs_"));
    assert_eq!(added[1]["type"], "message");
    assert_eq!(added[1]["role"], "assistant");
    assert_eq!(added[1]["content"], json!([]));
    assert!(added[1]["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(added[2]["type"], "function_call");
    assert_eq!(added[2]["arguments"], "");
    assert!(added[2]["id"].as_str().unwrap().starts_with("fc_"));
    assert_eq!(added[2]["name"], "get_weather");

    let of = |kind: &str| -> Vec<Value> {
        values
            .iter()
            .filter(|v| v["type"] == kind)
            .cloned()
            .collect()
    };
    assert_eq!(
        concat(&of("response.reasoning_summary_text.delta"), "/delta"),
        "need a tool"
    );
    let text_deltas = of("response.output_text.delta");
    assert_eq!(concat(&text_deltas, "/delta"), "Checking.");
    assert_eq!(text_deltas[0]["item_id"], added[1]["id"]);
    assert_eq!(text_deltas[0]["output_index"], 1);
    assert_eq!(text_deltas[0]["content_index"], 0);
    let arg_deltas = of("response.function_call_arguments.delta");
    assert_eq!(arg_deltas[0]["item_id"], added[2]["id"]);
    let args = concat(&arg_deltas, "/delta");
    assert_eq!(
        of("response.function_call_arguments.done")[0]["arguments"],
        args
    );
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"city": "Paris"})
    );

    let completed = &values.last().unwrap()["response"];
    assert_eq!(completed["status"], "completed");
    let output = completed["output"].as_array().unwrap();
    assert_eq!(output.len(), 3);
    assert_eq!(output[0]["summary"][0]["text"], "need a tool");
    assert_eq!(output[1]["content"][0]["text"], "Checking.");
    assert_eq!(output[2]["arguments"], args);
    let usage = &completed["usage"];
    assert!(
        usage["output_tokens_details"]["reasoning_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 0);
    assert_eq!(
        usage["total_tokens"].as_u64().unwrap(),
        usage["input_tokens"].as_u64().unwrap() + usage["output_tokens"].as_u64().unwrap()
    );

    // Round trip: the function_call_output carries the call id only.
    let call_id = added[2]["call_id"].as_str().unwrap();
    let follow_up = json!({"model": "gpt-mock", "stream": true, "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
        {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": "sunny"}]});
    let values = jsons(&stream(&url, &follow_up).await);
    assert_eq!(concat(&values, "/delta"), "Sunny.");
}

#[tokio::test]
async fn length_is_incomplete_and_string_input_works() {
    let (_server, url) = common::start_at(scenario(), "/responses").await;
    let body = json!({"model": "m", "stream": true, "input": "long"});
    let values = jsons(&stream(&url, &body).await);
    let completed = &values.last().unwrap()["response"];
    assert_eq!(completed["status"], "incomplete");
    assert_eq!(
        completed["incomplete_details"]["reason"],
        "max_output_tokens"
    );
}

#[tokio::test]
async fn non_streaming_document() {
    let (_server, url) = common::start_at(scenario(), "/v1/responses").await;
    let body = json!({"model": "m", "input": "weather?"});
    let doc: Value = post_json(&url, &body).await;
    assert_eq!(doc["object"], "response");
    assert_eq!(doc["status"], "completed");
    assert_eq!(doc["output"].as_array().unwrap().len(), 3);
}
