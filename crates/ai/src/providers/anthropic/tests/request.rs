//! Request shape: URL, headers and the exact body pi would send.

use serde_json::json;

use super::*;
use crate::http::HttpCall;
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::anthropic::AnthropicMessages;
use crate::test_support::{
    self, read_call, read_result, request, signed_thinking, thinking_options, user_with_png,
};
use crate::types::*;

fn assistant(id: &str, content: Vec<ContentBlock>) -> Message {
    test_support::assistant(&model(id), content)
}

fn tool_call(id: &str, path: &str) -> ContentBlock {
    read_call(id, json!({"path": path}), None)
}

fn result(id: &str, text: &str) -> Message {
    read_result(id, vec![ContentBlock::text(text)], false)
}

fn context() -> Context {
    Context {
        system_prompt: Some("You are helpful.".into()),
        messages: vec![
            user_with_png("What is in a.txt?"),
            assistant(
                MODEL,
                vec![
                    signed_thinking("I should read it.", "EqQBCgIYAhIM"),
                    ContentBlock::text("Let me check."),
                    tool_call("toolu_01", "a.txt"),
                ],
            ),
            result("toolu_01", "hello"),
        ],
        tools: vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"$schema": "x", "type": "object",
                "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }],
    }
}

fn build(model: &Model, context: &Context, options: &StreamOptions, key: &str) -> HttpCall {
    request(&AnthropicMessages, model, context, options, key)
}

fn header<'a>(call: &'a HttpCall, name: &str) -> Option<&'a str> {
    call.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn request_body_matches_pi() {
    let options = StreamOptions {
        temperature: Some(0.5),
        ..thinking_options(ThinkingLevel::Medium)
    };
    let call = build(&model(MODEL), &context(), &options, "sk-ant-api03-x");
    assert_eq!(call.url, "https://api.anthropic.com/v1/messages");
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(
        call.body,
        json!({
            "model": MODEL,
            // 32000 (pi's default cap) + the medium budget, within the model's 64000.
            "max_tokens": 40192,
            "stream": true,
            "system": [{"type": "text", "text": "You are helpful.", "cache_control": ephemeral}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "What is in a.txt?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I should read it.", "signature": "EqQBCgIYAhIM"},
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.txt"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "hello", "is_error": false,
                     "cache_control": ephemeral}]}
            ],
            "tools": [{"name": "read", "description": "Read a file", "input_schema":
                {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}],
            "thinking": {"type": "enabled", "budget_tokens": 8192}
        })
    );
}

#[test]
fn oauth_cross_model_replay_and_long_cache() {
    let mut context = context();
    // Another model's turn: thinking becomes text, ids are made Anthropic-safe, results merge,
    // and a call that never got a result is answered.
    context.messages = vec![
        Message::user("go"),
        assistant(
            "gpt-5",
            vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    ..Default::default()
                }),
                tool_call("call_1|fc_1", "a"),
                tool_call("call_2|fc_2", "b"),
                tool_call("call_3", "c"),
            ],
        ),
        result("call_1|fc_1", "A"),
        result("call_2|fc_2", "B"),
        Message::user("thanks"),
    ];
    context.tools.clear();
    let options = StreamOptions {
        cache_retention: CacheRetention::Long,
        temperature: Some(0.7),
        ..StreamOptions::default()
    };
    let call = build(&model(MODEL), &context, &options, "sk-ant-oat01-token");
    let long = json!({"type": "ephemeral", "ttl": "1h"});
    let res = |id: &str, text: &str, err: bool| json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": err});
    assert_eq!(
        call.body["system"],
        json!([
        {"type": "text", "text": crate::providers::anthropic::request::CLAUDE_CODE_IDENTITY, "cache_control": long},
        {"type": "text", "text": "You are helpful.", "cache_control": long}])
    );
    assert_eq!(call.body["temperature"], json!(0.7));
    assert_eq!(call.body["max_tokens"], json!(32000));
    assert_eq!(
        call.body["messages"],
        json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [ // OAuth: Claude Code's tool names
                {"type": "text", "text": "hmm"},
                {"type": "tool_use", "id": "call_1_fc_1", "name": "Read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "call_2_fc_2", "name": "Read", "input": {"path": "b"}},
                {"type": "tool_use", "id": "call_3", "name": "Read", "input": {"path": "c"}}]},
            {"role": "user", "content": [res("call_1_fc_1", "A", false), res("call_2_fc_2", "B", false),
                                         res("call_3", "No result provided", true)]},
            {"role": "user", "content": [{"type": "text", "text": "thanks", "cache_control": long}]}
        ])
    );
    assert!(call.body.get("thinking").is_none() && call.body.get("tools").is_none());
}

#[test]
fn adaptive_thinking_and_no_cache() {
    let options = StreamOptions {
        reasoning: Some(ThinkingLevel::Xhigh),
        cache_retention: CacheRetention::None,
        max_tokens: Some(1000),
        ..StreamOptions::default()
    };
    let call = build(&model("claude-opus-4-6"), &context(), &options, "k");
    assert_eq!(call.body["thinking"], json!({"type": "adaptive"}));
    assert_eq!(call.body["output_config"], json!({"effort": "max"}));
    assert_eq!(call.body["max_tokens"], json!(1000));
    assert!(!call.body.to_string().contains("cache_control"));
    // A budget larger than the cap leaves 1024 tokens for the answer.
    let options = thinking_options(ThinkingLevel::High);
    let mut small = model(MODEL);
    small.max_tokens = 8000;
    let call = build(&small, &context(), &options, "k");
    assert_eq!(call.body["max_tokens"], json!(8000));
    assert_eq!(
        call.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 6976})
    );
}

#[test]
fn api_key_and_oauth_headers() {
    let options = StreamOptions::default();
    let call = build(&model(MODEL), &context(), &options, "sk-ant-api03-x");
    assert_eq!(header(&call, "x-api-key"), Some("sk-ant-api03-x"));
    assert_eq!(header(&call, "authorization"), None);
    assert_eq!(header(&call, "anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        header(&call, "anthropic-beta"),
        Some("fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14")
    );
    assert_eq!(header(&call, "content-type"), Some("application/json"));

    let call = build(&model(MODEL), &context(), &options, "sk-ant-oat01-t");
    assert_eq!(header(&call, "x-api-key"), None);
    assert_eq!(
        header(&call, "authorization"),
        Some("Bearer sk-ant-oat01-t")
    );
    assert_eq!(
        header(&call, "anthropic-beta"),
        Some(
            "claude-code-20250219,oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
        )
    );
    assert_eq!(header(&call, "user-agent"), Some("claude-cli/2.1.75"));
    assert_eq!(header(&call, "x-app"), Some("cli"));

    // The caller's headers win, as pi merges them last.
    let options = StreamOptions {
        headers: [("Anthropic-Beta".to_owned(), "custom".to_owned())].into(),
        ..StreamOptions::default()
    };
    let call = build(&model(MODEL), &context(), &options, "k");
    assert_eq!(header(&call, "anthropic-beta"), Some("custom"));
    assert_eq!(
        call.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("anthropic-beta"))
            .count(),
        1
    );
}

#[test]
fn tool_schema_refs_are_inlined() {
    let mut context = context();
    context.tools[0].parameters = json!({"type": "object",
        "properties": {"mode": {"$ref": "#/$defs/Mode"}}, "$defs": {"Mode": {"type": "string", "enum": ["a"]}}});
    let call = build(&model(MODEL), &context, &StreamOptions::default(), "k");
    assert_eq!(
        call.body["tools"][0]["input_schema"],
        json!({"type": "object",
        "properties": {"mode": {"type": "string", "enum": ["a"]}}, "required": []})
    );
}

#[test]
fn oauth_mode_presents_as_claude_code_with_its_tool_names() {
    let mut context = context();
    context.tools.push(Tool {
        name: "memory_search".into(),
        description: "Search memory".into(),
        parameters: json!({"type": "object", "properties": {}}),
    });
    let options = StreamOptions {
        cache_retention: CacheRetention::None,
        ..StreamOptions::default()
    };
    let call = build(&model(MODEL), &context, &options, "sk-ant-oat01-t");
    assert_eq!(
        call.body["system"],
        json!([
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
            {"type": "text", "text": "You are helpful."}
        ])
    );
    let names: Vec<&str> = call.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Read", "memory_search"]);
    // The replayed call to our `read` goes out as Claude Code's `Read` too.
    assert_eq!(
        call.body["messages"][1]["content"][2],
        json!({"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"path": "a.txt"}})
    );

    // With an API key nothing is renamed and there is no identity prefix.
    let call = build(&model(MODEL), &context, &options, "sk-ant-api03-x");
    assert_eq!(call.body["tools"][0]["name"], json!("read"));
    assert_eq!(
        call.body["system"],
        json!([{"type": "text", "text": "You are helpful."}])
    );
}

#[test]
fn claude_code_names_map_both_ways() {
    use crate::providers::anthropic::request::{from_claude_code_name, to_claude_code_name};
    assert_eq!(to_claude_code_name("read"), "Read");
    assert_eq!(to_claude_code_name("WEBFETCH"), "WebFetch");
    assert_eq!(to_claude_code_name("todowrite"), "TodoWrite");
    assert_eq!(to_claude_code_name("exec"), "exec");
    let tools = ["read".to_owned(), "bash".to_owned()];
    assert_eq!(from_claude_code_name("Read", &tools), "read");
    assert_eq!(from_claude_code_name("Bash", &tools), "bash");
    assert_eq!(from_claude_code_name("Grep", &tools), "Grep");
}

#[test]
fn copilot_anthropic_requests_carry_the_dynamic_headers() {
    let copilot = test_support::model(
        "anthropic-messages",
        "github-copilot",
        "https://api.individual.githubcopilot.com",
        json!({"id": "claude-sonnet-4.5", "name": "Claude", "reasoning": true,
        "input": ["text", "image"], "contextWindow": 128000, "maxTokens": 32000}),
    );
    // The context ends with a tool result holding no image, but the user sent one.
    let call = build(
        &copilot,
        &context(),
        &StreamOptions::default(),
        "tid=1;exp=2",
    );
    assert_eq!(header(&call, "authorization"), Some("Bearer tid=1;exp=2"));
    assert_eq!(header(&call, "x-initiator"), Some("agent"));
    assert_eq!(header(&call, "openai-intent"), Some("conversation-edits"));
    assert_eq!(header(&call, "copilot-vision-request"), Some("true"));
    assert_eq!(
        header(&call, "anthropic-beta"),
        Some("interleaved-thinking-2025-05-14")
    );
}
