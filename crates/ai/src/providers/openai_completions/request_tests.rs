//! Request-body and compat tests for Chat Completions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::request::{
    BRIDGE, ResolvedCompat, build_body, detect_compat, mistral_tool_id, normalize_tool_call_id,
    resolve_compat,
};
use crate::model::{MaxTokensField, Model, ThinkingFormat};
use crate::options::StreamOptions;
use crate::test_support::{assistant, model, read_turn, thinking_options};
use crate::types::{
    AssistantMessage, ContentBlock, Context, ImageContent, Message, StopReason, ThinkingLevel,
    ToolCall, ToolResultMessage, UserContent, UserMessage,
};

/// A model of `provider`, served over Chat Completions at `base_url`; `extra` overrides any
/// field.
pub(super) fn served_by(provider: &str, base_url: &str, extra: Value) -> Model {
    model("openai-completions", provider, base_url, extra)
}

/// A reasoning model of `provider`, served over Chat Completions at `base_url`.
pub(super) fn reasoning_model(provider: &str, base_url: &str) -> Model {
    served_by(provider, base_url, json!({"reasoning": true}))
}

fn openai(extra: Value) -> Model {
    served_by("openai", "https://api.openai.com/v1", extra)
}

fn context(model: &Model) -> Context {
    read_turn(model, "reasoning_content", None, "call_1")
}

#[test]
fn body_for_a_full_turn_is_exact() {
    let m = openai(json!({"reasoning": true}));
    let options = StreamOptions {
        temperature: Some(0.2),
        ..thinking_options(ThinkingLevel::Medium)
    };
    let body = build_body(&m, &context(&m), &options, &resolve_compat(&m));
    assert_eq!(
        body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": "Read a.txt"},
                {"role": "assistant",
                 "content": [{"type": "text", "text": "Reading it."}],
                 "reasoning_content": "Need the file.",
                 "tool_calls": [{"id": "call_1", "type": "function",
                                 "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]},
                {"role": "tool", "content": "hello", "tool_call_id": "call_1"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 16384,
            "temperature": 0.2,
            "tools": [{"type": "function", "function": {
                "name": "read", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                "strict": false}}],
            "reasoning_effort": "medium",
        })
    );
}

#[test]
fn mistral_quirks() {
    let m = reasoning_model("mistral", "https://api.mistral.ai/v1");
    let mut ctx = context(&m);
    // A call from another provider gets a Mistral id; its result follows it.
    ctx.messages[1] = Message::Assistant(AssistantMessage {
        provider: "anthropic".into(),
        ..match &ctx.messages[1] {
            Message::Assistant(a) => a.clone(),
            _ => unreachable!(),
        }
    });
    ctx.messages.push(Message::user("thanks"));
    let compat = ResolvedCompat {
        requires_assistant_after_tool_result: true,
        ..resolve_compat(&m)
    };
    let body = build_body(&m, &ctx, &StreamOptions::default(), &compat);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    // Cross-model thinking became text.
    assert_eq!(
        messages[2]["content"],
        json!([
        {"type": "text", "text": "Need the file."}, {"type": "text", "text": "Reading it."}])
    );
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call1ABCD");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "content": "hello", "tool_call_id": "call1ABCD", "name": "read"})
    );
    assert_eq!(messages[4], json!({"role": "assistant", "content": BRIDGE}));
    assert_eq!(messages[5], json!({"role": "user", "content": "thanks"}));
    assert_eq!(body["max_tokens"], 16384);
    assert!(body.get("store").is_none() && body.get("reasoning_effort").is_none());
}

#[test]
fn compat_detection_table() {
    use MaxTokensField::{MaxCompletionTokens, MaxTokens};
    // store, developer role, reasoning effort, max_tokens field, Mistral ids
    let standard = (true, true, true, MaxCompletionTokens, false);
    let non_standard = (false, false, true, MaxCompletionTokens, false);
    let without_effort = (false, false, false, MaxCompletionTokens, false);
    let cases = [
        ("openai", "https://api.openai.com/v1", standard),
        ("xai", "https://api.x.ai/v1", without_effort),
        ("custom", "https://api.x.ai/v1", without_effort),
        ("zai", "https://api.z.ai/api/paas/v4", without_effort),
        (
            "mistral",
            "https://api.mistral.ai/v1",
            (false, false, true, MaxTokens, true),
        ),
        (
            "chutes",
            "https://llm.chutes.ai/v1",
            (false, false, true, MaxTokens, false),
        ),
        ("cerebras", "https://api.cerebras.ai/v1", non_standard),
        ("deepseek", "https://api.deepseek.com/v1", non_standard),
        ("opencode", "https://opencode.ai/zen/v1", non_standard),
        ("groq", "https://api.groq.com/openai/v1", standard),
        ("ollama", "http://127.0.0.1:11434/v1", standard),
    ];
    for (provider, url, expected) in cases {
        let (_, _, _, _, mistral) = expected;
        let c = detect_compat(&served_by(provider, url, json!({})));
        assert_eq!(
            (
                c.supports_store,
                c.supports_developer_role,
                c.supports_reasoning_effort,
                c.max_tokens_field,
                c.requires_mistral_tool_ids
            ),
            expected,
            "{provider} {url}"
        );
        assert_eq!(c.requires_tool_result_name, mistral);
        assert_eq!(c.requires_thinking_as_text, mistral);
        assert_eq!(c.thinking_format == ThinkingFormat::Zai, provider == "zai");
        assert!(
            c.supports_usage_in_streaming
                && c.supports_strict_mode
                && !c.requires_assistant_after_tool_result
        );
    }
    let m = openai(
        json!({"compat": {"supportsStore": false, "maxTokensField": "max_tokens", "supportsUsageInStreaming": false, "supportsStrictMode": false, "thinkingFormat": "qwen"}}),
    );
    let c = resolve_compat(&m);
    assert_eq!(
        c,
        ResolvedCompat {
            supports_store: false,
            max_tokens_field: MaxTokensField::MaxTokens,
            supports_usage_in_streaming: false,
            supports_strict_mode: false,
            thinking_format: ThinkingFormat::Qwen,
            ..detect_compat(&m)
        }
    );
    let body = build_body(&m, &context(&m), &StreamOptions::default(), &c);
    assert!(body.get("stream_options").is_none() && body.get("store").is_none());
    assert!(body["tools"][0]["function"].get("strict").is_none());
}

#[test]
fn thinking_formats() {
    let options = thinking_options(ThinkingLevel::High);
    let zai = reasoning_model("zai", "https://api.z.ai/api/paas/v4");
    let body = build_body(&zai, &Context::default(), &options, &resolve_compat(&zai));
    assert_eq!(body["thinking"], json!({"type": "enabled"}));
    let body = build_body(
        &zai,
        &Context::default(),
        &StreamOptions::default(),
        &resolve_compat(&zai),
    );
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    let qwen = openai(json!({"reasoning": true, "compat": {"thinkingFormat": "qwen"}}));
    let body = build_body(&qwen, &Context::default(), &options, &resolve_compat(&qwen));
    assert_eq!(body["enable_thinking"], json!(true));
    assert!(body.get("reasoning_effort").is_none());
    // Non-reasoning models never get an effort.
    let plain = openai(json!({}));
    let body = build_body(
        &plain,
        &Context::default(),
        &options,
        &resolve_compat(&plain),
    );
    assert!(body.get("reasoning_effort").is_none());
}

#[test]
fn images_history_and_skips() {
    let m = openai(json!({}));
    let image = ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    };
    let mut failed = match assistant(&m, vec![ContentBlock::text("half")]) {
        Message::Assistant(a) => a,
        _ => unreachable!(),
    };
    failed.stop_reason = StopReason::Aborted;
    let ctx = Context {
        system_prompt: None,
        messages: vec![
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::text("look"),
                    ContentBlock::Image(image.clone()),
                ]),
                timestamp: 1,
            }),
            Message::Assistant(failed),
            assistant(
                &m,
                vec![ContentBlock::ToolCall(ToolCall {
                    id: "c".into(),
                    name: "shot".into(),
                    arguments: json!({}),
                    thought_signature: None,
                })],
            ),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c".into(),
                tool_name: "shot".into(),
                content: vec![ContentBlock::Image(image)],
                details: None,
                is_error: false,
                timestamp: 2,
            }),
        ],
        tools: vec![],
    };
    let body = build_body(&m, &ctx, &StreamOptions::default(), &resolve_compat(&m));
    let url = json!({"url": "data:image/png;base64,AAAA"});
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": url}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
            {"role": "tool", "content": "(see attached image)", "tool_call_id": "c"},
            {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"},
                                         {"type": "image_url", "image_url": url}]},
        ])
    );
    // Tool history without tools still declares (empty) tools.
    assert_eq!(body["tools"], json!([]));
}

#[test]
fn openrouter_anthropic_gets_a_cache_breakpoint() {
    let m = served_by(
        "openrouter",
        "https://openrouter.ai/api/v1",
        json!({"id": "anthropic/claude-sonnet-4", "compat": {"openRouterRouting": {"only": ["anthropic"]}}}),
    );
    let ctx = Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    };
    let body = build_body(&m, &ctx, &StreamOptions::default(), &resolve_compat(&m));
    assert_eq!(
        body["messages"][0]["content"],
        json!([
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["provider"], json!({"only": ["anthropic"]}));
}

#[test]
fn tool_ids_are_normalized() {
    let m = openai(json!({}));
    let c = resolve_compat(&m);
    assert_eq!(
        normalize_tool_call_id(&m, &c, "call_a+b|fc_123"),
        "call_a_b"
    );
    assert_eq!(normalize_tool_call_id(&m, &c, &"x".repeat(50)).len(), 40);
    assert_eq!(mistral_tool_id("toolu_01AbCdEfGhIjK"), "toolu01Ab");
    assert_eq!(mistral_tool_id("a-b"), "abABCDEFG");
}
