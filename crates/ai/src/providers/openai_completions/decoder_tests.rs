//! Decoder tests on recorded Chat Completions streams, byte for byte as servers send them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::OpenAiCompletions;
use super::request_tests::{reasoning_model, served_by};
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::model::Model;
use crate::test_support::{
    assert_cut_stream_fails, assert_ending, assert_kinds, assert_protocol_error, charged_usage,
    decode, decoder_split_tests, done_message, failure, final_message, kinds, signed_thinking,
    terminal_count, tool_calls,
};
use crate::types::{ContentBlock, StopReason, ToolCall};

fn openai() -> Model {
    served_by("openai", "https://api.openai.com/v1", json!({}))
}

fn openrouter() -> Model {
    served_by("openrouter", "https://openrouter.ai/api/v1", json!({}))
}

/// Decodes a whole body from the openai() model.
fn run_body(body: &str) -> Vec<E> {
    run(&openai(), &[body.as_bytes()])
}

fn run(model: &Model, chunks: &[&[u8]]) -> Vec<E> {
    decode(&OpenAiCompletions, model, chunks)
}

/// A chunk line as OpenAI sends it, around the given `choices[0]` fields.
fn chunk(choice: &str) -> String {
    format!(
        "data: {{\"id\":\"chatcmpl-B9x\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_06737a9306\",\"choices\":[{{\"index\":0,{choice},\"logprobs\":null}}],\"usage\":null}}\n\n"
    )
}

const USAGE: &str = "data: {\"id\":\"chatcmpl-B9x\",\"object\":\"chat.completion.chunk\",\"created\":1741000000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":5,\"total_tokens\":1205,\"prompt_tokens_details\":{\"cached_tokens\":1024,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n\n";

fn text_stream() -> String {
    [
        chunk(r#""delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null"#),
        chunk(r#""delta":{"content":"Hello"},"finish_reason":null"#),
        chunk(r#""delta":{"content":" wörld\n"},"finish_reason":null"#),
        chunk(r#""delta":{},"finish_reason":"stop""#),
        USAGE.to_owned(),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

fn tool_stream() -> String {
    [
        chunk(r#""delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"read","arguments":""}}],"refusal":null},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\": \"a.txt\"}"}}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"ls","arguments":""}}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"dir\""}}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":1,"function":{"arguments":": \"/tmp\"}"}}]},"finish_reason":null"#),
        chunk(r#""delta":{},"finish_reason":"tool_calls""#),
        "data: {\"id\":\"chatcmpl-B9x\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":20,\"total_tokens\":70}}\n\n".to_owned(),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
}

#[test]
fn text_only_exact_events_and_usage() {
    let events = run_body(&text_stream());
    assert_kinds(
        &events,
        "start text_start text_delta text_delta text_end done",
    );
    assert_eq!(
        events[2],
        E::TextDelta {
            content_index: 0,
            delta: "Hello".into()
        }
    );
    assert_eq!(
        events[4],
        E::TextEnd {
            content_index: 0,
            content: "Hello wörld\n".into()
        }
    );
    let message = done_message(&events, StopReason::Stop);
    assert_eq!(message.content, [ContentBlock::text("Hello wörld\n")]);
    assert_eq!(message.response_id.as_deref(), Some("chatcmpl-B9x"));
    assert_eq!(message.usage, charged_usage(176, 5, 1024, 1205));
}

#[test]
fn reasoning_content_becomes_thinking() {
    let m = reasoning_model("deepseek", "https://api.deepseek.com/v1");
    let stream = [
        chunk(r#""delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null"#),
        chunk(r#""delta":{"content":null,"reasoning_content":"Let me"},"finish_reason":null"#),
        // chutes.ai sends the same text twice; only the first field counts.
        chunk(r#""delta":{"content":null,"reasoning_content":" think.","reasoning":" think."},"finish_reason":null"#),
        chunk(r#""delta":{"content":"42","reasoning_content":null},"finish_reason":null"#),
        chunk(r#""delta":{"content":""},"finish_reason":"stop""#),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let events = run(&m, &[stream.as_bytes()]);
    assert_kinds(
        &events,
        "start thinking_start thinking_delta thinking_delta thinking_end \
         text_start text_delta text_end done",
    );
    let (_, message) = final_message(&events);
    assert_eq!(
        message.content,
        [
            signed_thinking("Let me think.", "reasoning_content"),
            ContentBlock::text("42"),
        ]
    );
}

#[test]
fn parallel_tool_calls_split_across_chunks() {
    let m = openai();
    let stream = tool_stream();
    let bytes = stream.as_bytes();
    // Network chunks that cut lines (and the JSON) anywhere.
    let events = run(
        &m,
        &[
            &bytes[..100],
            &bytes[100..777],
            &bytes[777..1500],
            &bytes[1500..],
        ],
    );
    assert_kinds(
        &events,
        "start toolcall_start toolcall_delta toolcall_delta \
         toolcall_start toolcall_delta toolcall_delta toolcall_end toolcall_end done",
    );
    assert_eq!(
        events[1],
        E::ToolcallStart {
            content_index: 0,
            id: "call_A".into(),
            tool_name: "read".into()
        }
    );
    assert_eq!(
        events[4],
        E::ToolcallStart {
            content_index: 1,
            id: "call_B".into(),
            tool_name: "ls".into()
        }
    );
    let message = done_message(&events, StopReason::ToolUse);
    let calls: Vec<_> = message
        .tool_calls()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_A", "read", json!({"path": "a.txt"})),
            ("call_B", "ls", json!({"dir": "/tmp"})),
        ]
    );
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.total_tokens
        ),
        (50, 20, 70)
    );
}

#[test]
fn text_then_tool_call_closes_the_text_and_late_names_are_patched() {
    let stream = [
        chunk(r#""delta":{"content":"Let me look."},"finish_reason":null"#),
        // Some servers send the name after the first argument piece.
        chunk(r#""delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":0,"function":{"name":"read"}}]},"finish_reason":null"#),
        // Gemini's compat layer reuses index 0 with a new id for the next call.
        chunk(r#""delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"ls","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls""#),
    ]
    .concat();
    let events = run_body(&stream);
    assert_kinds(
        &events,
        "start text_start text_delta text_end toolcall_start toolcall_delta \
         toolcall_start toolcall_delta toolcall_end toolcall_end done",
    );
    let (_, message) = final_message(&events);
    assert_eq!(
        tool_calls(&message),
        [
            ("c1".into(), "read".into(), json!({})),
            ("c2".into(), "ls".into(), json!({"a": 1}))
        ]
    );
}

#[test]
fn openrouter_reasoning_details_sign_the_tool_call() {
    let m = openrouter();
    let stream = [
        chunk(r#""delta":{"reasoning_details":[{"type":"reasoning.encrypted","id":"tc_1","data":"Zm9v","format":"google-gemini-v1","index":0}]},"finish_reason":null"#),
        chunk(r#""delta":{"tool_calls":[{"index":0,"id":"tc_1","type":"function","function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls""#),
    ]
    .concat();
    let (_, message) = final_message(&run(&m, &[stream.as_bytes()]));
    let call: &ToolCall = message.tool_calls().next().unwrap();
    let signature: serde_json::Value =
        serde_json::from_str(call.thought_signature.as_deref().unwrap()).unwrap();
    assert_eq!(signature["data"], "Zm9v");
}

#[test]
fn every_finish_reason_maps() {
    let call = r#""delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":null"#;
    let cases: [(&str, bool, Result<StopReason, ErrorKind>); 7] = [
        ("stop", false, Ok(StopReason::Stop)),
        ("end", false, Ok(StopReason::Stop)),
        ("length", false, Ok(StopReason::Length)),
        ("tool_calls", true, Ok(StopReason::ToolUse)),
        ("function_call", true, Ok(StopReason::ToolUse)),
        ("content_filter", false, Err(ErrorKind::Refused)),
        ("something_new", false, Err(ErrorKind::Server)),
    ];
    for (reason, with_call, expected) in cases {
        let mut stream = chunk(r#""delta":{"content":"x"},"finish_reason":null"#);
        if with_call {
            stream.push_str(&chunk(call));
        }
        stream.push_str(&chunk(&format!(
            r#""delta":{{}},"finish_reason":"{reason}""#
        )));
        stream.push_str("data: [DONE]\n\n");
        let events = run_body(&stream);
        if let Some(text) = assert_ending(&events, expected, "openai/gpt-test: ", "x", reason) {
            assert!(text.contains(reason), "{text}");
        }
    }
}

#[test]
fn in_stream_error_objects_fail_with_a_kind() {
    let m = openrouter();
    let cases = [
        (
            r#"{"code":429,"message":"Rate limit exceeded: free-models-per-day"}"#,
            ErrorKind::RateLimited { retry_after: None },
        ),
        (
            r#"{"code":502,"message":"Upstream error","metadata":{"raw":"overloaded_error"}}"#,
            ErrorKind::Overloaded,
        ),
        (
            r#"{"code":400,"message":"This endpoint's maximum context length is 8192 tokens"}"#,
            ErrorKind::ContextOverflow,
        ),
        (
            r#"{"code":500,"message":"Internal Server Error"}"#,
            ErrorKind::Server,
        ),
    ];
    for (error, kind) in cases {
        let stream = [
            chunk(r#""delta":{"content":"Par"},"finish_reason":null"#),
            format!("data: {{\"id\":\"gen-1\",\"object\":\"chat.completion.chunk\",\"provider\":\"Anthropic\",\"error\":{error},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"\"}},\"finish_reason\":\"error\"}}]}}\n\n"),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat();
        let events = run(&m, &[stream.as_bytes()]);
        let (got, text) = failure(&events);
        assert_eq!(got, kind, "{error}");
        assert!(text.starts_with("openrouter/gpt-test: "), "{text}");
        assert_eq!(terminal_count(&events), 1);
    }
    let (_, text) = failure(&run(
        &m,
        &[b"event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n"],
    ));
    assert_eq!(text, "openrouter/gpt-test: boom");
}

#[test]
fn malformed_json_is_one_protocol_error() {
    let stream = chunk(r#""delta":{"content":"hi"},"finish_reason":null"#)
        + "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"hi\"}\n\n"
        + "data: [DONE]\n\n";
    let events = run_body(&stream);
    assert_protocol_error(&events, "invalid JSON in a chat completion chunk");
}

#[test]
fn stream_cut_before_finish_reason_is_an_error() {
    assert_cut_stream_fails(
        run_body,
        &chunk(r#""delta":{"content":"partial"},"finish_reason":null"#),
        "before a finish_reason",
        "partial",
    );
}

#[test]
fn finish_reason_without_done_marker_still_finishes() {
    let stream = text_stream().replace("data: [DONE]\n\n", "");
    let with_usage = run_body(&stream);
    assert_eq!(final_message(&with_usage).1.usage.output, 5);
    let stream = stream.replace(USAGE, "");
    let (reason, message) = final_message(&run_body(&stream));
    assert_eq!(
        (reason, message.text().as_str()),
        (StopReason::Stop, "Hello wörld\n")
    );
}

#[test]
fn nim_toolcall_text_leak_is_dropped() {
    let m = served_by("nim", "https://integrate.api.nvidia.com/v1", json!({}));
    let stream = [
        chunk(r#""delta":{"content":"<TOOLCALL>[{\"name\":\"f\"}]</TOOLCALL>","tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls""#),
    ]
    .concat();
    let (_, message) = final_message(&run(&m, &[stream.as_bytes()]));
    assert_eq!(message.content.len(), 1);
    assert!(matches!(message.content[0], ContentBlock::ToolCall(_)));
}

decoder_split_tests! {
    decode: |chunks: &[&[u8]]| run(&openai(), chunks),
    two_way: tool_stream() + &text_stream().replace("data: [DONE]\n\n", ""),
    two_way_view: |e: &[E]| final_message(e).1,
    split: tool_stream(),
    view: |e: &[E]| (kinds(e), final_message(e)),
    noise: tool_stream(),
}
