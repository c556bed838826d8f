#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;
use crate::test_support::{
    model as test_model, png, read_call, read_result, read_turn, thinking_options, user_with_png,
};
use crate::types::Message;

const BASE: &str = "https://bedrock-runtime.us-east-1.amazonaws.com";

fn claude() -> Model {
    test_model(
        "bedrock-converse-stream",
        "amazon-bedrock",
        BASE,
        json!({"id": "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "reasoning": true, "maxTokens": 64000}),
    )
}

fn nova() -> Model {
    test_model(
        "bedrock-converse-stream",
        "amazon-bedrock",
        BASE,
        json!({"id": "amazon.nova-pro-v1:0", "maxTokens": 8192}),
    )
}

#[test]
fn url_encodes_the_model_id() {
    assert_eq!(
        url(
            "http://127.0.0.1:9/",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ),
        "http://127.0.0.1:9/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
}

#[test]
fn a_whole_turn_as_pi_sends_it() {
    let model = claude();
    let context = read_turn(&model, "sig-1", None, "call|1");
    let body = body(&model, &context, &StreamOptions::default()).unwrap();
    assert_eq!(
        body,
        json!({
            "messages": [
                {"role": "user", "content": [{"text": "Read a.txt"}]},
                {"role": "assistant", "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Need the file.", "signature": "sig-1"}}},
                    {"text": "Reading it."},
                    {"toolUse": {"toolUseId": "call|1", "name": "read", "input": {"path": "a.txt"}}},
                ]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "call|1", "content": [{"text": "hello"}], "status": "success"}},
                    {"cachePoint": {"type": "default"}},
                ]},
            ],
            "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
            "inferenceConfig": {"maxTokens": 32000},
            "toolConfig": {"tools": [{"toolSpec": {
                "name": "read",
                "description": "Read a file",
                "inputSchema": {"json": {"type": "object", "properties": {"path": {"type": "string"}}}},
            }}]},
        })
    );
}

#[test]
fn other_models_get_no_signatures_and_no_cache_points() {
    let model = nova();
    let context = read_turn(&model, "sig-1", None, "c1");
    let options = StreamOptions {
        temperature: Some(0.7),
        max_tokens: Some(100),
        cache_retention: CacheRetention::Long,
        ..StreamOptions::default()
    };
    let body = body(&model, &context, &options).unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "Need the file."}}})
    );
    assert_eq!(body["messages"][2]["content"].as_array().unwrap().len(), 1);
    assert_eq!(body["system"], json!([{"text": "Be brief."}]));
    assert_eq!(
        body["inferenceConfig"],
        json!({"maxTokens": 100, "temperature": 0.7})
    );
}

#[test]
fn claude_thinking_without_a_signature_is_replayed_as_text_and_long_caching_has_a_ttl() {
    let model = claude();
    let mut context = read_turn(&model, "", None, "c1");
    context.messages.push(Message::user("next"));
    let options = StreamOptions {
        cache_retention: CacheRetention::Long,
        ..StreamOptions::default()
    };
    let body = body(&model, &context, &options).unwrap();
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"text": "Need the file."})
    );
    assert_eq!(
        body["messages"][3]["content"],
        json!([{"text": "next"}, {"cachePoint": {"type": "default", "ttl": "1h"}}])
    );
}

#[test]
fn consecutive_tool_results_share_one_user_message_with_images() {
    let model = nova();
    let context = Context {
        system_prompt: None,
        messages: vec![
            user_with_png("look"),
            crate::test_support::assistant(
                &model,
                vec![
                    read_call("a", json!({}), None),
                    read_call("b", json!({}), None),
                ],
            ),
            read_result(
                "a",
                vec![crate::types::ContentBlock::text("A"), png()],
                false,
            ),
            read_result("b", vec![crate::types::ContentBlock::text("B")], true),
        ],
        tools: vec![],
    };
    let body = body(&model, &context, &StreamOptions::default()).unwrap();
    let image = json!({"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}});
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"text": "look"}, image])
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": "A"}, image], "status": "success"}},
            {"toolResult": {"toolUseId": "b", "content": [{"text": "B"}], "status": "error"}},
        ]})
    );
    assert_eq!(body.get("system"), None);
    assert_eq!(body.get("toolConfig"), None);
}

#[test]
fn unknown_image_types_are_refused() {
    let model = nova();
    let context = Context {
        system_prompt: None,
        messages: vec![Message::User(crate::types::UserMessage {
            content: UserContent::Blocks(vec![crate::types::ContentBlock::Image(ImageContent {
                data: "AA==".into(),
                mime_type: "image/bmp".into(),
            })]),
            timestamp: 1,
        })],
        tools: vec![],
    };
    assert_eq!(
        body(&model, &context, &StreamOptions::default()).unwrap_err(),
        "Bedrock does not take images of type image/bmp"
    );
}

#[test]
fn thinking_goes_in_additional_model_request_fields() {
    let context = Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    };
    // Budgeted: the budget comes on top of the output limit, with the interleaved beta.
    let body_of = |model: &Model, level| body(model, &context, &thinking_options(level)).unwrap();
    let budgeted = body_of(&claude(), ThinkingLevel::Medium);
    assert_eq!(
        budgeted["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 8192}, "anthropic_beta": ["interleaved-thinking-2025-05-14"]})
    );
    assert_eq!(budgeted["inferenceConfig"]["maxTokens"], 40192);
    // Adaptive for the 4.6 models, with pi's effort names.
    let mut opus = claude();
    opus.id = "global.anthropic.claude-opus-4-6-v1".into();
    let adaptive = body_of(&opus, ThinkingLevel::Xhigh);
    assert_eq!(
        adaptive["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive"}, "output_config": {"effort": "max"}})
    );
    assert_eq!(adaptive["inferenceConfig"]["maxTokens"], 32000);
    // Models without reasoning, and non-Claude models, get nothing.
    assert_eq!(
        body_of(&nova(), ThinkingLevel::High).get("additionalModelRequestFields"),
        None
    );
    let mut plain = claude();
    plain.reasoning = false;
    assert_eq!(
        body_of(&plain, ThinkingLevel::High).get("additionalModelRequestFields"),
        None
    );
}
