//! Every fault over real HTTP: HTTP errors with Retry-After and `times`, aborted and hung
//! streams, slow first byte, omitted final markers, malformed / invalid-UTF-8 / huge lines,
//! keep-alive comments, wrong content type and byte re-chunking.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{GOOGLE_PATH, bodies, jsons, parse_sse, post, post_json, post_ok_with_token};
use futures_util::StreamExt;
use pincer_testkit::{Api, Fault, Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn one_fault(fault: Fault) -> MockLlm {
    let scenario = Scenario::new()
        .rule(Rule::any().fault(fault))
        .default_reply(Reply::text("Hello there, friend!"))
        .chunk_size(4);
    MockLlm::start(scenario).await.unwrap()
}

fn chat_url(server: &MockLlm) -> String {
    format!("{}/v1/chat/completions", server.url())
}

#[tokio::test]
async fn status_429_with_retry_after_applies_times_then_recovers() {
    let scenario = Scenario::new()
        .rule(
            Rule::when(Match::last_user("flaky")).times(2).fault(
                Fault::status(429)
                    .retry_after("1")
                    .retry_after_ms("1000")
                    .body(json!({"error": {"message": "slow down", "type": "rate_limit_error"}})),
            ),
        )
        .default_reply(Reply::text("ok now"));
    let server = MockLlm::start(scenario).await.unwrap();
    for _ in 0..2 {
        let response = post(&chat_url(&server), &bodies::chat("flaky")).await;
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()["retry-after"], "1");
        assert_eq!(response.headers()["retry-after-ms"], "1000");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["message"], "slow down");
    }
    let response = post(&chat_url(&server), &bodies::chat("flaky")).await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert_eq!(
        common::concat(&jsons(&parse_sse(&text)), "/choices/0/delta/content"),
        "ok now"
    );
}

#[tokio::test]
async fn default_error_bodies_follow_the_protocol() {
    let server = one_fault(Fault::status(529)).await;
    let url = format!("{}/v1/messages", server.url());
    let response = post(&url, &bodies::anthropic("x")).await;
    assert_eq!(response.status(), 529);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "overloaded_error");

    let url = format!("{}{GOOGLE_PATH}", server.url());
    let body: Value = post_json(&url, &bodies::google("x")).await;
    assert_eq!(body["error"]["code"], 529);

    let server = one_fault(Fault::status(500).body(json!("plain failure"))).await;
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    assert_eq!(response.status(), 500);
    assert!(common::content_type(&response).starts_with("text/plain"));
    assert_eq!(response.text().await.unwrap(), "plain failure");
}

#[tokio::test]
async fn disconnect_gives_the_client_a_body_error() {
    let server = one_fault(Fault::disconnect_after_chunks(2)).await;
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(piece) = body.next().await {
        match piece {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the stream must end with an error, not cleanly");
    let events = parse_sse(&String::from_utf8(received).unwrap());
    assert_eq!(events.len(), 2);
}

#[tokio::test]
async fn disconnect_leaves_the_chunked_body_unterminated() {
    let server = one_fault(Fault::disconnect_after_chunks(1)).await;
    let body = bodies::chat("x").to_string();
    let mut tcp = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    // The server closes the socket after aborting; a reset is also an acceptable ending.
    let _ = tcp.read_to_end(&mut raw).await;
    let raw = String::from_utf8_lossy(&raw).to_lowercase();
    assert!(raw.starts_with("http/1.1 200"));
    assert!(raw.contains("transfer-encoding: chunked"));
    assert!(raw.contains("chat.completion.chunk"));
    assert!(
        !raw.ends_with("0\r\n\r\n"),
        "chunked body must not terminate"
    );
}

#[tokio::test]
async fn hang_keeps_the_connection_silent_until_shutdown() {
    let server = one_fault(Fault::hang_after_chunks(1)).await;
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    let mut body = response.bytes_stream();
    let first = body.next().await.unwrap().unwrap();
    assert!(first.starts_with(b"data: "));
    let next = tokio::time::timeout(Duration::from_millis(300), body.next()).await;
    assert!(next.is_err(), "nothing may arrive while hanging");
    // Shutting down ends the hung stream instead of waiting forever.
    let shutdown = tokio::spawn(server.shutdown());
    let rest = body.next().await;
    assert!(matches!(rest, Some(Err(_)) | None));
    shutdown.await.unwrap().unwrap();
}

#[tokio::test]
async fn slow_first_byte_still_answers() {
    let server = one_fault(Fault::slow_first_byte_ms(50)).await;
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    assert_eq!(response.status(), 200);
    let events = parse_sse(&response.text().await.unwrap());
    assert_eq!(events.last().unwrap().data, "[DONE]");
}

async fn raw_stream(server: &MockLlm, api: Api) -> Vec<u8> {
    let base = server.url();
    let (url, body) = match api {
        Api::OpenAiCompletions => (format!("{base}/v1/chat/completions"), bodies::chat("x")),
        Api::OpenAiResponses => (format!("{base}/v1/responses"), bodies::responses("x")),
        Api::AnthropicMessages => (format!("{base}/v1/messages"), bodies::anthropic("x")),
        Api::GoogleGenerativeAi => (format!("{base}{GOOGLE_PATH}"), bodies::google("x")),
        Api::Proxy => (format!("{base}/api/stream"), bodies::proxy("x")),
        other => panic!("{other} does not stream"),
    };
    let response = post_ok_with_token(&url, "t", &body).await;
    response.bytes().await.unwrap().to_vec()
}

/// [`raw_stream`] as text (it must be UTF-8).
async fn raw_text(server: &MockLlm, api: Api) -> String {
    String::from_utf8(raw_stream(server, api).await).unwrap()
}

#[tokio::test]
async fn omit_done_drops_each_protocols_final_marker() {
    let server = one_fault(Fault::omit_done()).await;
    for api in Api::ALL {
        let text = raw_text(&server, api).await;
        let values = jsons(&parse_sse(&text));
        assert!(!values.is_empty());
        match api {
            Api::OpenAiCompletions => {
                assert!(!text.contains("[DONE]"));
                assert!(
                    values
                        .iter()
                        .any(|v| v["choices"][0]["finish_reason"] == "stop")
                );
            }
            Api::OpenAiResponses => {
                assert!(values.iter().all(|v| v["type"] != "response.completed"));
                assert!(
                    values
                        .iter()
                        .any(|v| v["type"] == "response.output_item.done")
                );
            }
            Api::AnthropicMessages => {
                assert!(values.iter().all(|v| v["type"] != "message_stop"));
                assert!(values.iter().any(|v| v["type"] == "message_delta"));
            }
            Api::GoogleGenerativeAi => {
                assert!(
                    values
                        .iter()
                        .all(|v| v["candidates"][0].get("finishReason").is_none())
                );
            }
            Api::Proxy => {
                assert!(values.iter().all(|v| v["type"] != "done"));
                assert!(values.iter().any(|v| v["type"] == "text_end"));
            }
            other => panic!("{other} does not stream"),
        }
    }
}

#[tokio::test]
async fn malformed_line_follows_the_first_chunk() {
    let server = one_fault(Fault::malformed_line()).await;
    for api in Api::ALL {
        let events = parse_sse(&raw_text(&server, api).await);
        assert!(serde_json::from_str::<Value>(&events[0].data).is_ok());
        assert_eq!(events[1].data, "{not json", "{api}");
        let named = matches!(api, Api::AnthropicMessages | Api::OpenAiResponses);
        assert_eq!(events[1].event.is_some(), named, "{api}");
        // The rest of the stream still follows.
        assert!(events.len() > 3);
    }
}

#[tokio::test]
async fn invalid_utf8_inside_a_data_line() {
    let server = one_fault(Fault::invalid_utf8()).await;
    let raw = raw_stream(&server, Api::OpenAiCompletions).await;
    assert!(String::from_utf8(raw.clone()).is_err());
    let at = raw.windows(2).position(|w| w == [0xff, 0xfe]).unwrap();
    let line_start = raw[..at].iter().rposition(|b| *b == b'\n').unwrap() + 1;
    assert!(raw[line_start..].starts_with(b"data: "));
}

#[tokio::test]
async fn keep_alive_comments_every_n_chunks() {
    let server = one_fault(Fault::keep_alive_every(2)).await;
    let text = raw_text(&server, Api::AnthropicMessages).await;
    let events = parse_sse(&text).len();
    assert_eq!(text.matches(": keep-alive\n\n").count(), events / 2);
}

#[tokio::test]
async fn content_type_fault_sends_html() {
    let server = one_fault(Fault::content_type("text/html; charset=utf-8")).await;
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"],
        "text/html; charset=utf-8"
    );
    assert!(response.text().await.unwrap().contains("<html>"));
}

#[tokio::test]
async fn huge_line_without_newline() {
    let server = one_fault(Fault::huge_line_bytes(200_000)).await;
    let raw = raw_stream(&server, Api::OpenAiCompletions).await;
    let first_end = raw.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
    let line = &raw[first_end..];
    assert_eq!(line.len(), 200_000);
    assert!(line.starts_with(b"data: "));
    assert!(!line.contains(&b'\n'));
}

#[tokio::test]
async fn byte_chunk_splits_utf8_across_http_chunks() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("héllo wörld — 日本語"))
        .byte_chunk(1);
    let server = MockLlm::start(scenario).await.unwrap();
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    let mut body = response.bytes_stream();
    let mut all = Vec::new();
    let mut split_utf8 = false;
    while let Some(piece) = body.next().await {
        let piece = piece.unwrap();
        split_utf8 |= std::str::from_utf8(&piece).is_err();
        all.extend_from_slice(&piece);
    }
    assert!(
        split_utf8,
        "some HTTP chunk must end inside a UTF-8 sequence"
    );
    let values = jsons(&parse_sse(&String::from_utf8(all).unwrap()));
    assert_eq!(
        common::concat(&values, "/choices/0/delta/content"),
        "héllo wörld — 日本語"
    );
}

#[tokio::test]
async fn delays_between_chunks_still_deliver_everything() {
    let scenario = Scenario::new()
        .default_reply(Reply::text("abcdefgh").with_delay_ms(5))
        .chunk_size(2);
    let server = MockLlm::start(scenario).await.unwrap();
    let response = post(&chat_url(&server), &bodies::chat("x")).await;
    let values = jsons(&parse_sse(&response.text().await.unwrap()));
    assert_eq!(
        common::concat(&values, "/choices/0/delta/content"),
        "abcdefgh"
    );
}
