//! Stream decoding of recorded responses: event sequences, final messages, failures, and
//! the same result however the bytes are split.

use serde_json::{Value, json};

use super::*;
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::providers::google::GoogleGenerativeAi;
use crate::test_support::{
    self, assert_bad_bodies_end_once, assert_failure, assert_kinds, assert_protocol_error,
    assert_text_reply, decoder_split_tests, done_message, failure, kinds, last_message,
    signed_thinking, terminal_count, token_usage, toolcall_deltas,
};
use crate::types::*;

fn sse(chunks: &[Value]) -> String {
    chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect()
}

fn chunk(parts: Value, finish: Option<&str>, usage: Value) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    json!({"candidates": [candidate], "usageMetadata": usage, "modelVersion": FLASH, "responseId": "resp-1"})
}

fn partial_usage() -> Value {
    json!({"promptTokenCount": 8, "totalTokenCount": 8, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}]})
}

fn final_usage() -> Value {
    json!({"promptTokenCount": 8, "candidatesTokenCount": 3, "thoughtsTokenCount": 20,
           "cachedContentTokenCount": 2, "totalTokenCount": 31})
}

fn decode_chunks(chunks: &[&[u8]]) -> Vec<E> {
    test_support::decode(&GoogleGenerativeAi, &model(FLASH), chunks)
}

fn decode(body: &str) -> Vec<E> {
    decode_chunks(&[body.as_bytes()])
}

fn text_body() -> String {
    sse(&[
        chunk(json!([{"text": "Hello"}]), None, partial_usage()),
        chunk(
            json!([{"text": ", wörld ☃\n"}]),
            Some("STOP"),
            final_usage(),
        ),
    ])
}

#[test]
fn text_only_event_sequence_usage_and_cost() {
    let usage = token_usage(6, 23, 2, 0, 31);
    let deltas = ["Hello", ", wörld ☃\n"];
    assert_text_reply(
        &decode(&text_body()),
        &model(FLASH),
        &deltas,
        usage,
        "resp-1",
    );
}

#[test]
fn thinking_then_text_keeps_signatures() {
    let events = decode(&sse(&[
        chunk(
            json!([{"text": "**Planning**\n", "thought": true, "thoughtSignature": SIG}]),
            None,
            partial_usage(),
        ),
        chunk(
            json!([{"text": "More.", "thought": true}]),
            None,
            partial_usage(),
        ),
        chunk(
            json!([{"text": "Answer"}, {"text": "", "thoughtSignature": "c2lnMg=="}]),
            Some("STOP"),
            final_usage(),
        ),
    ]));
    let message = done_message(&events, StopReason::Stop);
    assert_eq!(
        message.content,
        vec![
            signed_thinking("**Planning**\nMore.", SIG),
            ContentBlock::Text(TextContent {
                text: "Answer".into(),
                text_signature: Some("c2lnMg==".into())
            }),
        ]
    );
    assert_kinds(
        &events,
        "start thinking_start thinking_delta thinking_delta thinking_end \
         text_start text_delta text_end done",
    );
}

#[test]
fn whole_tool_calls_get_ids_and_signatures() {
    let events = decode(&sse(&[
        chunk(json!([{"text": "Reading."}]), None, partial_usage()),
        chunk(
            json!([
                {"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": SIG},
                {"functionCall": {"name": "read", "args": {"path": "b.txt", "limit": 10}}},
                {"functionCall": {"id": "given", "name": "ls"}},
                {"functionCall": {"id": "given", "name": "ls", "args": {}}}
            ]),
            Some("STOP"),
            final_usage(),
        ),
    ]));
    let message = done_message(&events, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 4);
    assert!(calls[0].id.starts_with("read_") && calls[1].id.starts_with("read_"));
    assert_ne!(calls[0].id, calls[1].id);
    assert_eq!(calls[2].id, "given");
    assert!(
        calls[3].id.starts_with("ls_"),
        "a repeated id is replaced: {}",
        calls[3].id
    );
    assert_eq!(calls[0].thought_signature.as_deref(), Some(SIG));
    assert_eq!(calls[1].arguments, json!({"path": "b.txt", "limit": 10}));
    assert_eq!(calls[2].arguments, json!({}));
    let deltas = toolcall_deltas(&events);
    assert_eq!(deltas[0], (1, "{\"path\":\"a.txt\"}"));
    // The text block closes before the first call opens.
    assert_eq!(
        kinds(&events)[..6].join(" "),
        "start text_start text_delta text_end toolcall_start toolcall_delta"
    );
}

fn ending(reason: &str) -> Vec<E> {
    let mut last = chunk(json!([{"text": "b"}]), Some(reason), final_usage());
    last["candidates"][0]["finishMessage"] = json!("details here");
    decode(&sse(&[
        chunk(json!([{"text": "a"}]), None, partial_usage()),
        last,
    ]))
}

#[test]
fn every_finish_reason() {
    done_message(&ending("STOP"), StopReason::Stop);
    done_message(&ending("MAX_TOKENS"), StopReason::Length);
    for (reason, kind) in [
        ("SAFETY", ErrorKind::Refused),
        ("RECITATION", ErrorKind::Refused),
        ("PROHIBITED_CONTENT", ErrorKind::Refused),
        ("MALFORMED_FUNCTION_CALL", ErrorKind::Server),
        ("OTHER", ErrorKind::Server),
        ("SOMETHING_NEW", ErrorKind::Server),
    ] {
        let events = ending(reason);
        // The partial reply, "ab", is kept.
        let text = assert_failure(&events, kind, "google/gemini-2.5-flash: ", "ab", reason);
        assert!(
            text.contains(reason) && text.contains("details here"),
            "{text}"
        );
        let usage = &last_message(&events).usage;
        assert_eq!(usage.output, 23, "usage of the last chunk counts");
    }
}

#[test]
fn blocked_prompts_and_in_stream_errors() {
    let events = decode(&sse(&[
        json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}}),
    ]));
    let (kind, text) = failure(&events);
    assert_eq!(kind, ErrorKind::Refused);
    assert!(text.contains("PROHIBITED_CONTENT"), "{text}");

    let body = sse(&[
        chunk(json!([{"text": "par"}]), None, partial_usage()),
        json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}),
        chunk(json!([{"text": "ignored"}]), Some("STOP"), final_usage()),
    ]);
    let events = decode(&body);
    let (kind, text) = failure(&events);
    assert_eq!(kind, ErrorKind::Overloaded);
    assert_eq!(
        text,
        "google/gemini-2.5-flash: UNAVAILABLE: The model is overloaded. Please try again later.; try again later"
    );
    assert_eq!(last_message(&events).text(), "par");
    assert_eq!(terminal_count(&events), 1);

    let events = decode(&sse(&[
        json!({"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}),
    ]));
    assert!(matches!(
        events.last(),
        Some(E::Error {
            kind: ErrorKind::ContextOverflow,
            ..
        })
    ));
}

#[test]
fn malformed_json_gives_exactly_one_error() {
    let body = sse(&[chunk(json!([{"text": "ok"}]), None, partial_usage())])
        + "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\r\n\r\n"
        + &sse(&[chunk(
            json!([{"text": "more"}]),
            Some("STOP"),
            final_usage(),
        )]);
    let events = decode(&body);
    assert_protocol_error(&events, "invalid JSON");
    assert_eq!(last_message(&events).text(), "ok");
}

#[test]
fn truncated_streams_fail() {
    let events = decode(&sse(&[chunk(
        json!([{"text": "cut"}]),
        None,
        partial_usage(),
    )]));
    assert_eq!(failure(&events).0, ErrorKind::Protocol);
    assert_eq!(last_message(&events).text(), "cut");
}

#[test]
fn garbage_never_panics() {
    let bad_events = [
        "data: {\"candidates\":5}\n\n",
        "data: {\"candidates\":[]}\n\n",
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"args\":[1]}}]}}]}\n\n",
        "data: {\"usageMetadata\":{\"promptTokenCount\":1,\"cachedContentTokenCount\":9}}\n\n",
        "data: {\"error\":\"plain\"}\n\n",
        "data: {\"error\":{}}\n\n",
    ];
    assert_bad_bodies_end_once(decode, &bad_events);
}

fn split_body() -> String {
    sse(&[
        chunk(
            json!([{"text": "Think ü", "thought": true, "thoughtSignature": SIG}]),
            None,
            partial_usage(),
        ),
        chunk(json!([{"text": "Text 🦀"}]), None, partial_usage()),
        chunk(
            json!([{"functionCall": {"id": "c1", "name": "read", "args": {"path": "ä"}}}]),
            Some("STOP"),
            final_usage(),
        ),
    ])
}

decoder_split_tests! {
    decode: decode_chunks,
    two_way: split_body(),
    two_way_view: <[E]>::to_vec,
    split: split_body(),
    view: <[E]>::to_vec,
    noise: split_body(),
}
