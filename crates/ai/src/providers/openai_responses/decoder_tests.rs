//! Decoder tests on recorded Responses streams, shaped as OpenAI sends them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use super::OpenAiResponses;
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::model::Model;
use crate::test_support::{
    assert_cut_stream_fails, assert_ending, assert_kinds, assert_protocol_error, charged_usage,
    decode, decoder_split_tests, done_message, failure, final_message, kinds, model, tool_calls,
};
use crate::types::{ContentBlock, StopReason, TextContent, ThinkingContent};

fn gpt() -> Model {
    model(
        "openai-responses",
        "openai",
        "https://api.openai.com/v1",
        json!({"reasoning": true}),
    )
}

/// Decodes a whole body from the gpt() model.
fn run_body(body: &str) -> Vec<E> {
    run(&gpt(), &[body.as_bytes()])
}

fn run(model: &Model, chunks: &[&[u8]]) -> Vec<E> {
    decode(&OpenAiResponses, model, chunks)
}

/// One SSE event: `event:` line plus the JSON with its `type` and a sequence number.
fn sse(kind: &str, seq: u64, mut fields: Value) -> String {
    fields["type"] = json!(kind);
    fields["sequence_number"] = json!(seq);
    format!("event: {kind}\ndata: {fields}\n\n")
}

fn response(status: &str, usage: Value) -> Value {
    json!({"id": "resp_67ccd2bed1ec8190", "object": "response", "created_at": 1741290958,
        "status": status, "error": null, "incomplete_details": null, "model": "gpt-5-2025-08-07",
        "output": [], "parallel_tool_calls": true, "reasoning": {"effort": "medium", "summary": "auto"},
        "store": false, "tool_choice": "auto", "tools": [], "usage": usage})
}

fn usage() -> Value {
    json!({"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 1000},
        "output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 256}, "total_tokens": 1800})
}

fn reasoning_item() -> Value {
    json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAAB",
        "summary": [{"type": "summary_text", "text": "**Planning**"}, {"type": "summary_text", "text": "Then answer."}]})
}

fn text_stream() -> String {
    [
        sse("response.created", 0, json!({"response": response("in_progress", Value::Null)})),
        sse("response.in_progress", 1, json!({"response": response("in_progress", Value::Null)})),
        sse("response.output_item.added", 2, json!({"output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}})),
        sse("response.reasoning_summary_part.added", 3, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}})),
        sse("response.reasoning_summary_text.delta", 4, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "**Planning**"})),
        sse("response.reasoning_summary_text.done", 5, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "text": "**Planning**"})),
        sse("response.reasoning_summary_part.done", 6, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": "**Planning**"}})),
        sse("response.reasoning_summary_part.added", 7, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": ""}})),
        sse("response.reasoning_summary_text.delta", 8, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 1, "delta": "Then answer."})),
        sse("response.reasoning_summary_part.done", 9, json!({"item_id": "rs_1", "output_index": 0, "summary_index": 1, "part": {"type": "summary_text", "text": "Then answer."}})),
        sse("response.output_item.done", 10, json!({"output_index": 0, "item": reasoning_item()})),
        sse("response.output_item.added", 11, json!({"output_index": 1, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}})),
        sse("response.content_part.added", 12, json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}})),
        sse("response.output_text.delta", 13, json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": "Hi", "logprobs": []})),
        sse("response.output_text.delta", 14, json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": " thére\n", "logprobs": []})),
        sse("response.output_text.done", 15, json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "text": "Hi thére\n", "logprobs": []})),
        sse("response.content_part.done", 16, json!({"item_id": "msg_1", "output_index": 1, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": "Hi thére\n"}})),
        sse("response.output_item.done", 17, json!({"output_index": 1, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Hi thére\n"}]}})),
        sse("response.completed", 18, json!({"response": response("completed", usage())})),
    ]
    .concat()
}

fn call_events(
    index: u64,
    seq: u64,
    call: &str,
    item: &str,
    name: &str,
    pieces: &[&str],
) -> String {
    let arguments: String = pieces.concat();
    let mut out = sse(
        "response.output_item.added",
        seq,
        json!({"output_index": index,
        "item": {"id": item, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call, "name": name}}),
    );
    for (i, piece) in pieces.iter().enumerate() {
        out += &sse(
            "response.function_call_arguments.delta",
            seq + 1 + i as u64,
            json!({"item_id": item, "output_index": index, "delta": piece}),
        );
    }
    out += &sse(
        "response.function_call_arguments.done",
        seq + 10,
        json!({"item_id": item, "output_index": index, "arguments": arguments}),
    );
    out += &sse(
        "response.output_item.done",
        seq + 11,
        json!({"output_index": index,
        "item": {"id": item, "type": "function_call", "status": "completed", "arguments": arguments, "call_id": call, "name": name}}),
    );
    out
}

fn tool_stream() -> String {
    [
        sse(
            "response.created",
            0,
            json!({"response": response("in_progress", Value::Null)}),
        ),
        call_events(
            0,
            1,
            "call_A",
            "fc_A",
            "read",
            &["{\"pa", "th\":\"a.txt\"}"],
        ),
        call_events(1, 20, "call_B", "fc_B", "ls", &["{\"dir\"", ":\"/tmp\"}"]),
        sse(
            "response.completed",
            40,
            json!({"response": response("completed", usage())}),
        ),
    ]
    .concat()
}

#[test]
fn reasoning_and_text_exact_events_and_message() {
    let events = run_body(&text_stream());
    assert_kinds(
        &events,
        "start thinking_start thinking_delta thinking_delta thinking_delta thinking_end \
         text_start text_delta text_delta text_end done",
    );
    assert_eq!(
        events[3],
        E::ThinkingDelta {
            content_index: 0,
            delta: "\n\n".into()
        }
    );
    let message = done_message(&events, StopReason::Stop);
    let ContentBlock::Thinking(ThinkingContent {
        thinking,
        thinking_signature,
        ..
    }) = &message.content[0]
    else {
        panic!()
    };
    assert_eq!(thinking, "**Planning**\n\nThen answer.");
    let signature: Value = serde_json::from_str(thinking_signature.as_deref().unwrap()).unwrap();
    assert_eq!(signature, reasoning_item());
    assert_eq!(
        message.content[1],
        ContentBlock::Text(TextContent {
            text: "Hi thére\n".into(),
            text_signature: Some("msg_1".into())
        })
    );
    assert_eq!(
        message.response_id.as_deref(),
        Some("resp_67ccd2bed1ec8190")
    );
    assert_eq!(message.usage, charged_usage(500, 300, 1000, 1800));
}

#[test]
fn two_function_calls_split_across_chunks() {
    let m = gpt();
    let stream = tool_stream();
    let bytes = stream.as_bytes();
    let events = run(&m, &[&bytes[..333], &bytes[333..1234], &bytes[1234..]]);
    assert_kinds(
        &events,
        "start toolcall_start toolcall_delta toolcall_delta toolcall_end \
         toolcall_start toolcall_delta toolcall_delta toolcall_end done",
    );
    assert_eq!(
        events[1],
        E::ToolcallStart {
            content_index: 0,
            id: "call_A|fc_A".into(),
            tool_name: "read".into()
        }
    );
    let message = done_message(&events, StopReason::ToolUse);
    assert_eq!(
        tool_calls(&message),
        [
            (
                "call_A|fc_A".into(),
                "read".into(),
                json!({"path": "a.txt"})
            ),
            ("call_B|fc_B".into(), "ls".into(), json!({"dir": "/tmp"})),
        ]
    );
}

#[test]
fn items_without_deltas_are_filled_in_when_done() {
    // Some compatible servers only send the finished items.
    let stream = [
        sse("response.output_item.done", 1, json!({"output_index": 0, "item": reasoning_item()})),
        sse("response.output_item.done", 2, json!({"output_index": 1, "item": {"id": "msg_9", "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "All "}, {"type": "refusal", "refusal": "done"}]}})),
        sse("response.output_item.done", 3, json!({"output_index": 2, "item": {"id": "fc_1", "type": "function_call",
            "arguments": "{\"a\":1}", "call_id": "call_1", "name": "f"}})),
        sse("response.completed", 4, json!({"response": response("completed", Value::Null)})),
    ]
    .concat();
    let message = done_message(&run_body(&stream), StopReason::ToolUse);
    assert_eq!(message.text(), "All done");
    let call = message.tool_calls().next().unwrap();
    assert_eq!(
        (call.id.as_str(), call.name.as_str(), &call.arguments),
        ("call_1|fc_1", "f", &json!({"a": 1}))
    );
    let ContentBlock::Thinking(t) = &message.content[0] else {
        panic!()
    };
    assert_eq!(t.thinking, "**Planning**\n\nThen answer.");
}

#[test]
fn every_status_maps() {
    let text = sse(
        "response.output_text.delta",
        1,
        json!({"item_id": "msg_1", "output_index": 0, "delta": "x"}),
    );
    let call = call_events(1, 2, "c", "fc", "f", &["{}"]);
    let cases: Vec<(&str, Value, bool, Result<StopReason, ErrorKind>)> = vec![
        (
            "response.completed",
            response("completed", usage()),
            false,
            Ok(StopReason::Stop),
        ),
        (
            "response.completed",
            response("completed", usage()),
            true,
            Ok(StopReason::ToolUse),
        ),
        (
            "response.completed",
            json!({"id": "r"}),
            false,
            Ok(StopReason::Stop),
        ),
        (
            "response.incomplete",
            json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}),
            false,
            Ok(StopReason::Length),
        ),
        (
            "response.incomplete",
            json!({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}),
            false,
            Err(ErrorKind::Refused),
        ),
        (
            "response.completed",
            json!({"status": "failed", "error": {"code": "server_error", "message": "The server had an error"}}),
            false,
            Err(ErrorKind::Server),
        ),
        (
            "response.completed",
            json!({"status": "cancelled"}),
            false,
            Err(ErrorKind::Server),
        ),
        (
            "response.failed",
            json!({"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"}}),
            false,
            Err(ErrorKind::RateLimited { retry_after: None }),
        ),
        (
            "response.failed",
            json!({"status": "failed", "error": null}),
            false,
            Err(ErrorKind::Server),
        ),
    ];
    for (kind, body, with_call, expected) in cases {
        let mut stream = text.clone();
        if with_call {
            stream += &call;
        }
        stream += &sse(kind, 30, json!({"response": body}));
        let events = run_body(&stream);
        let case = format!("{kind} {body}");
        assert_ending(&events, expected, "openai/gpt-test: ", "x", &case);
    }
}

#[test]
fn error_events_fail_with_their_code() {
    let stream = sse(
        "error",
        3,
        json!({"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model.", "param": "input"}),
    );
    let (kind, message) = failure(&run_body(&stream));
    assert_eq!(kind, ErrorKind::ContextOverflow);
    assert_eq!(
        message,
        "openai/gpt-test: Your input exceeds the context window of this model. (context_length_exceeded)"
    );
    let wrapped = "event: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"code\":529}}\n\n";
    assert_eq!(failure(&run_body(wrapped)).0, ErrorKind::Overloaded);
}

#[test]
fn malformed_json_is_one_protocol_error() {
    let stream = text_stream().replacen("\"delta\":\"Hi\"", "\"delta\":\"Hi\",,", 1);
    assert_ne!(stream, text_stream());
    let events = run_body(&stream);
    assert_protocol_error(&events, "invalid JSON in a Responses event");
}

#[test]
fn stream_cut_before_completed_is_an_error() {
    let full = text_stream();
    let cut = full.find("event: response.completed").unwrap();
    assert_cut_stream_fails(
        run_body,
        &full[..cut],
        "before response.completed",
        "Hi thére\n",
    );
}

decoder_split_tests! {
    decode: |chunks: &[&[u8]]| run(&gpt(), chunks),
    two_way: text_stream(),
    two_way_view: |e: &[E]| final_message(e).1,
    split: tool_stream(),
    view: |e: &[E]| (kinds(e), final_message(e)),
    noise: text_stream(),
}
