//! Request shape: URL, headers and the exact body pi would send.

use serde_json::{Value, json};

use super::*;
use crate::http::HttpCall;
use crate::options::StreamOptions;
use crate::providers::google::GoogleGenerativeAi;
use crate::test_support::{
    self, png, read_call, read_result, request, signed_thinking, thinking_options, user_with_png,
};
use crate::types::*;

fn assistant(id: &str, content: Vec<ContentBlock>) -> Message {
    test_support::assistant(&model(id), content)
}

fn call(id: &str, path: &str, signature: Option<&str>) -> ContentBlock {
    read_call(id, json!({"path": path}), signature)
}

fn context(model_id: &str) -> Context {
    Context {
        system_prompt: Some("You are helpful.".into()),
        messages: vec![
            user_with_png("What is in a.txt?"),
            assistant(
                model_id,
                vec![
                    signed_thinking("I should read it.", SIG),
                    ContentBlock::text("Let me check."),
                    call("read_1", "a.txt", Some(SIG)),
                ],
            ),
            read_result("read_1", vec![ContentBlock::text("hello")], false),
        ],
        tools: vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"$schema": "x", "type": "object", "additionalProperties": false,
                "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
                "required": ["path"]}),
        }],
    }
}

fn build(model: &Model, context: &Context, options: &StreamOptions) -> HttpCall {
    request(&GoogleGenerativeAi, model, context, options, "AIza-test")
}

#[test]
fn request_body_matches_pi() {
    let options = StreamOptions {
        temperature: Some(0.7),
        ..thinking_options(ThinkingLevel::Medium)
    };
    let call = build(&model(FLASH), &context(FLASH), &options);
    assert_eq!(
        call.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(
        call.body,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "What is in a.txt?"},
                    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]},
                {"role": "model", "parts": [
                    {"thought": true, "text": "I should read it.", "thoughtSignature": SIG},
                    {"text": "Let me check."},
                    {"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": SIG}]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "read", "response": {"output": "hello"}}}]}
            ],
            "systemInstruction": {"parts": [{"text": "You are helpful."}]},
            "tools": [{"functionDeclarations": [{"name": "read", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                    "limit": {"type": "integer", "nullable": true}}, "required": ["path"]}}]}],
            "generationConfig": {"temperature": 0.7, "maxOutputTokens": 32000,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}}
        })
    );
}

#[test]
fn gemini3_levels_foreign_calls_and_multimodal_results() {
    let id = "gemini-3-pro-preview";
    let mut context = context(id);
    context.messages = vec![
        Message::user("look"),
        // Made by another model: its thinking is plain text, its signature is dropped.
        assistant(
            "claude-sonnet-4-5",
            vec![
                signed_thinking("hm", SIG),
                call("toolu_1", "a.png", Some(SIG)),
                call("toolu_2", "b", None),
            ],
        ),
        read_result("toolu_1", vec![png()], false),
        read_result("toolu_2", vec![ContentBlock::text("no such file")], true),
    ];
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::Low),
        max_tokens: Some(500),
        ..StreamOptions::default()
    };
    let call = build(&model(id), &context, &options);
    let skip = "skip_thought_signature_validator";
    assert_eq!(
        call.body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "look"}]},
            {"role": "model", "parts": [
                {"text": "hm"},
                {"functionCall": {"name": "read", "args": {"path": "a.png"}}, "thoughtSignature": skip},
                {"functionCall": {"name": "read", "args": {"path": "b"}}, "thoughtSignature": skip}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "(see attached image)"},
                    "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]}},
                {"functionResponse": {"name": "read", "response": {"error": "no such file"}}}]}
        ])
    );
    assert_eq!(
        call.body["generationConfig"],
        json!({"maxOutputTokens": 500,
        "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "LOW"}})
    );

    // Older models get tool images in a user turn of their own.
    let call = build(&model(FLASH), &context, &StreamOptions::default());
    assert_eq!(
        call.body["contents"][3],
        json!({"role": "user", "parts": [{"text": "Tool result image:"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]})
    );
    assert!(
        call.body["generationConfig"]
            .get("thinkingConfig")
            .is_none()
    );
}

#[test]
fn thinking_rules_per_model() {
    use ThinkingLevel::{High, Low, Medium, Minimal, Off, Xhigh};
    let config = |id: &str, level: ThinkingLevel| {
        build(&model(id), &context(id), &thinking_options(level)).body["generationConfig"]["thinkingConfig"].clone()
    };
    let level = |l: &str| json!({"includeThoughts": true, "thinkingLevel": l});
    let budget = |b: i64| json!({"includeThoughts": true, "thinkingBudget": b});
    for (id, thinking, expected) in [
        ("gemini-3-pro-preview", Medium, level("HIGH")),
        ("gemini-3.1-pro-preview", Minimal, level("LOW")),
        ("gemini-3-flash-preview", Minimal, level("MINIMAL")),
        ("gemini-3-flash-preview", Xhigh, level("HIGH")),
        ("gemini-2.5-pro", High, budget(32768)),
        ("gemini-2.5-flash", Minimal, budget(128)),
        ("gemini-2.5-flash-lite", Minimal, budget(512)),
        ("gemini-30-pro", Low, budget(-1)),
    ] {
        assert_eq!(config(id, thinking), expected, "{id} {thinking:?}");
    }
    assert_eq!(config(FLASH, Off), Value::Null);
    let options = StreamOptions {
        reasoning: Some(Low),
        thinking_budgets: [(Low, 999)].into(),
        ..StreamOptions::default()
    };
    assert_eq!(
        build(&model(FLASH), &context(FLASH), &options).body["generationConfig"]["thinkingConfig"],
        budget(999)
    );
}

#[test]
fn key_travels_in_a_header() {
    let call = build(&model(FLASH), &context(FLASH), &StreamOptions::default());
    assert!(
        call.headers
            .contains(&("x-goog-api-key".to_owned(), "AIza-test".to_owned()))
    );
    assert!(!call.url.contains("AIza"));
    assert!(
        call.headers
            .iter()
            .any(|(n, v)| n == "content-type" && v == "application/json")
    );
}
