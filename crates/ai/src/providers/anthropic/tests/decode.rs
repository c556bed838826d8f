//! Stream decoding of recorded responses: event sequences, final messages, failures, and
//! the same result however the bytes are split.

use serde_json::{Value, json};

use super::*;
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::providers::WireApi as _;
use crate::providers::anthropic::AnthropicMessages;
use crate::test_support::{
    self, assert_bad_bodies_end_once, assert_ending, assert_protocol_error, assert_text_reply,
    decoder_split_tests, done_message, failure, final_message, last_message, signed_thinking,
    terminal_count, token_usage, toolcall_deltas,
};
use crate::types::*;

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

fn start(input: u64, cache_read: u64, cache_write: u64) -> (&'static str, Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_01XF", "type": "message",
        "role": "assistant", "content": [], "model": MODEL, "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "cache_creation_input_tokens": cache_write,
                  "cache_read_input_tokens": cache_read, "output_tokens": 1}}}),
    )
}

fn block_start(index: u64, block: Value) -> (&'static str, Value) {
    (
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn delta(index: u64, delta: Value) -> (&'static str, Value) {
    (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn text_delta(index: u64, text: &str) -> (&'static str, Value) {
    delta(index, json!({"type": "text_delta", "text": text}))
}

fn json_delta(index: u64, part: &str) -> (&'static str, Value) {
    delta(
        index,
        json!({"type": "input_json_delta", "partial_json": part}),
    )
}

fn stop(index: u64) -> (&'static str, Value) {
    (
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_delta(reason: &str, output: u64) -> (&'static str, Value) {
    (
        "message_delta",
        json!({"type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": output}}),
    )
}

fn message_stop() -> (&'static str, Value) {
    ("message_stop", json!({"type": "message_stop"}))
}

fn decode_chunks(chunks: &[&[u8]]) -> Vec<E> {
    test_support::decode(&AnthropicMessages, &model(MODEL), chunks)
}

fn decode(body: &str) -> Vec<E> {
    decode_chunks(&[body.as_bytes()])
}

fn text_body() -> String {
    let mut body = sse(&[
        start(25, 100, 10),
        block_start(0, json!({"type": "text", "text": ""})),
    ]);
    body.push_str("event: ping\ndata: {\"type\": \"ping\"}\n\n");
    body + &sse(&[
        text_delta(0, "Hello"),
        text_delta(0, "!\n\"Hi\" ☃"),
        stop(0),
        message_delta("end_turn", 15),
        message_stop(),
    ])
}

#[test]
fn text_only_event_sequence_usage_and_cost() {
    let usage = token_usage(25, 15, 100, 10, 150);
    let deltas = ["Hello", "!\n\"Hi\" ☃"];
    assert_text_reply(
        &decode(&text_body()),
        &model(MODEL),
        &deltas,
        usage,
        "msg_01XF",
    );
}

fn tools_body() -> String {
    sse(&[
        start(500, 0, 0),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "Let me think"}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": " about it."}),
        ),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "EqQBCgIYAhIM"}),
        ),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "1gbcDa9GJwZA=="}),
        ),
        stop(0),
        // A server tool block Pincer does not model: indices stop matching from here on.
        block_start(
            1,
            json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
        ),
        json_delta(1, "{\"query\":\"x\"}"),
        stop(1),
        block_start(2, json!({"type": "text", "text": ""})),
        text_delta(2, "Reading both."),
        stop(2),
        block_start(
            3,
            json!({"type": "tool_use", "id": "toolu_01A", "name": "read", "input": {}}),
        ),
        json_delta(3, ""),
        json_delta(3, "{\"path\": \"a"),
        json_delta(3, ".txt\"}"),
        stop(3),
        block_start(
            4,
            json!({"type": "tool_use", "id": "toolu_01B", "name": "read", "input": {}}),
        ),
        json_delta(4, "{\"path\":"),
        json_delta(4, " \"b.txt\", \"limit\": 10}"),
        stop(4),
        message_delta("tool_use", 89),
        message_stop(),
    ])
}

#[test]
fn thinking_signature_and_two_tool_calls_in_pieces() {
    let events = decode(&tools_body());
    let message = done_message(&events, StopReason::ToolUse);
    assert_eq!(
        message.content,
        vec![
            signed_thinking("Let me think about it.", "EqQBCgIYAhIM1gbcDa9GJwZA=="),
            ContentBlock::text("Reading both."),
            ContentBlock::ToolCall(ToolCall {
                id: "toolu_01A".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                thought_signature: None
            }),
            ContentBlock::ToolCall(ToolCall {
                id: "toolu_01B".into(),
                name: "read".into(),
                arguments: json!({"path": "b.txt", "limit": 10}),
                thought_signature: None
            }),
        ]
    );
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.total_tokens
        ),
        (500, 89, 589)
    );
    let deltas = toolcall_deltas(&events);
    assert_eq!(
        deltas,
        [
            (2, "{\"path\": \"a"),
            (2, ".txt\"}"),
            (3, "{\"path\":"),
            (3, " \"b.txt\", \"limit\": 10}")
        ]
    );
    assert!(events.contains(&E::ToolcallStart {
        content_index: 3,
        id: "toolu_01B".into(),
        tool_name: "read".into()
    }));
}

#[test]
fn redacted_thinking_keeps_its_data() {
    let events = decode(&sse(&[
        start(10, 0, 0),
        block_start(
            0,
            json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        ),
        stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        text_delta(1, "Done."),
        stop(1),
        message_delta("end_turn", 5),
        message_stop(),
    ]));
    assert_eq!(
        last_message(&events).content[0],
        ContentBlock::Thinking(ThinkingContent {
            thinking: "[Reasoning redacted]".into(),
            thinking_signature: Some("EmwKAhgBEgy3va3pzix/LafPsn4a".into()),
            redacted: Some(true),
        })
    );
    assert_eq!(last_message(&events).text(), "Done.");
}

fn short(reason: &str) -> Vec<E> {
    decode(&sse(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "x"),
        stop(0),
        message_delta(reason, 2),
        message_stop(),
    ]))
}

#[test]
fn every_stop_reason() {
    let label = "anthropic/claude-sonnet-4-5: ";
    for (reason, expected) in [
        ("end_turn", Ok(StopReason::Stop)),
        ("pause_turn", Ok(StopReason::Stop)),
        ("stop_sequence", Ok(StopReason::Stop)),
        ("max_tokens", Ok(StopReason::Length)),
        // No tool call in the reply: the builder reports a plain stop.
        ("tool_use", Ok(StopReason::Stop)),
        ("refusal", Err(ErrorKind::Refused)),
        ("sensitive", Err(ErrorKind::Refused)),
        ("model_context_window_exceeded_v9", Err(ErrorKind::Protocol)),
    ] {
        // A failure keeps the partial reply.
        if let Some(text) = assert_ending(&short(reason), expected, label, "x", reason) {
            assert!(text.contains(reason), "{reason}");
        }
    }
}

#[test]
fn in_stream_errors_are_typed() {
    let cases = [
        (
            "overloaded_error",
            "Overloaded",
            ErrorKind::Overloaded,
            "anthropic/claude-sonnet-4-5: overloaded_error: Overloaded; try again later",
        ),
        (
            "rate_limit_error",
            "slow down",
            ErrorKind::RateLimited { retry_after: None },
            "anthropic/claude-sonnet-4-5: rate_limit_error: slow down; try again later",
        ),
        (
            "api_error",
            "Internal server error",
            ErrorKind::Server,
            "anthropic/claude-sonnet-4-5: api_error: Internal server error; try again later",
        ),
        (
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
            ErrorKind::ContextOverflow,
            "anthropic/claude-sonnet-4-5: invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum; the conversation is too long for this model, compact it or start a new session",
        ),
    ];
    for (kind, text, expected, message) in cases {
        let mut body = sse(&[
            start(1, 0, 0),
            block_start(0, json!({"type": "text", "text": ""})),
            text_delta(0, "par"),
        ]);
        body.push_str(&format!("event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"{kind}\",\"message\":\"{text}\"}}}}\n\n"));
        body.push_str(&sse(&[text_delta(0, "ignored"), message_stop()]));
        let events = decode(&body);
        let (k, text) = failure(&events);
        let (reason, error) = final_message(&events);
        assert_eq!((k, reason), (expected, StopReason::Error));
        assert_eq!(text, message);
        assert_eq!(error.text(), "par");
        assert_eq!(terminal_count(&events), 1);
    }
}

#[test]
fn malformed_json_gives_exactly_one_error() {
    let mut body = sse(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "ok"),
    ]);
    body.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_\n\n");
    body.push_str(&sse(&[
        text_delta(0, "more"),
        message_delta("end_turn", 1),
        message_stop(),
    ]));
    let events = decode(&body);
    assert_protocol_error(&events, "invalid JSON");
    assert_eq!(last_message(&events).text(), "ok");
    assert!(events.last().unwrap().is_terminal());
}

#[test]
fn truncated_streams() {
    let body = sse(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "cut"),
    ]);
    assert_eq!(failure(&decode(&body)).0, ErrorKind::Protocol);
    // Cut after the stop reason: the reply is complete, only message_stop is missing.
    let body = sse(&[
        start(1, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        text_delta(0, "whole"),
        message_delta("max_tokens", 3),
    ]);
    let message = done_message(&decode(&body), StopReason::Length);
    assert_eq!(message.text(), "whole");
}

#[test]
fn garbage_never_panics() {
    let bad_events = [
        "data: {\"type\":5}\n\n",
        "data: \"x\"\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{}}\n\n",
        "data: {\"type\":\"content_block_stop\",\"index\":99}\n\n",
        "data: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
        "data: {\"type\":\"error\",\"error\":\"plain\"}\n\n",
        "data: {\"type\":\"error\"}\n\n",
        "data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":null}}}\n\n",
    ];
    assert_bad_bodies_end_once(decode, &bad_events);
}

decoder_split_tests! {
    decode: decode_chunks,
    two_way: tools_body(),
    two_way_view: |e: &[E]| (last_message(e).clone(), e.len()),
    split: text_body(),
    view: <[E]>::to_vec,
    noise: text_body(),
}

#[test]
fn oauth_mode_maps_claude_code_tool_names_back() {
    let body = sse(&[
        start(10, 0, 0),
        block_start(
            0,
            json!({"type": "tool_use", "id": "toolu_01A", "name": "Read", "input": {}}),
        ),
        json_delta(0, "{\"path\": \"a.txt\"}"),
        stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_01B", "name": "Grep", "input": {}}),
        ),
        json_delta(1, "{}"),
        stop(1),
        message_delta("tool_use", 9),
        message_stop(),
    ]);
    let model = model(MODEL);
    let context = Context {
        tools: vec![Tool {
            name: "read".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }],
        ..Context::default()
    };
    let options = crate::options::StreamOptions::default();
    let input = |key| crate::providers::RequestInput {
        model: &model,
        context: &context,
        options: &options,
        api_key: Some(key),
    };
    let names = |key: &'static str| {
        let mut decoder = AnthropicMessages.decoder_for(&input(key));
        let events = test_support::decode_with(&model, decoder.as_mut(), &[body.as_bytes()]);
        test_support::tool_calls(&done_message(&events, StopReason::ToolUse))
            .into_iter()
            .map(|(_, name, _)| name)
            .collect::<Vec<_>>()
    };
    // `Grep` is no tool of ours: it stays as the model spelled it.
    assert_eq!(names("sk-ant-oat01-t"), ["read", "Grep"]);
    assert_eq!(names("sk-ant-api03-k"), ["Read", "Grep"]);
}
