//! Faults, over real HTTP: HTTP errors with and without retry, Retry-After, malformed data,
//! invalid UTF-8, disconnects, stalls, slow first byte, keep-alives, missing end markers,
//! wrong content types, huge lines, abort mid-stream, missing keys. Every failure ends in
//! exactly one `error` event whose message a user can act on; nothing streamed is lost.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use futures_util::StreamExt;
use pincer_ai::env::MapEnv;
use pincer_ai::{
    AssistantMessageEvent, CancellationToken, ErrorKind, LlmClient, RetryPolicy, StopReason,
    StreamOptions,
};
use pincer_testkit::{Fault, Reply, Rule, Scenario};
use serde_json::json;

fn long_text() -> String {
    "word ".repeat(40)
}

/// A server that fails every request with `fault`.
fn failing(fault: Fault) -> Scenario {
    Scenario::new().rule(Rule::any().fault(fault))
}

/// A server that answers every request with `text`, and `fault`.
fn faulty_reply(text: impl Into<String>, fault: Fault) -> Scenario {
    Scenario::new().rule(Rule::any().reply(Reply::text(text)).fault(fault))
}

/// A server that answers every request with [`long_text`] in 5-byte chunks, and `fault`.
fn long_reply(fault: Fault) -> Scenario {
    faulty_reply(long_text(), fault).chunk_size(5)
}

/// Asserts that at least `millis` passed since `started` (`what` names the case).
fn assert_waited(started: Instant, millis: u64, what: &str) {
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(millis),
        "{what}: waited {waited:?}"
    );
}

/// How one API's stream failed.
struct Failure {
    api: &'static str,
    kind: ErrorKind,
    message: String,
    events: Vec<AssistantMessageEvent>,
}

/// Runs a turn with `options` on every API; each stream must end once, in an error.
async fn failures(h: &Harness, options: &StreamOptions) -> Vec<Failure> {
    let mut out = Vec::new();
    for (api, _) in APIS {
        let events = h.run(api, "x", options.clone()).await;
        assert_one_terminal(&events);
        let (kind, message) = error_of(&events);
        out.push(Failure {
            api,
            kind: kind.clone(),
            message,
            events,
        });
    }
    out
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_servers_delay() {
    for (api, _) in APIS {
        let h = Harness::start(
            Scenario::new()
                .rule(
                    Rule::any().times(1).fault(
                        Fault::status(429)
                            .retry_after_ms("400")
                            .body(json!({"error": {"message": "slow down"}})),
                    ),
                )
                .default_reply(Reply::text("made it")),
        )
        .await;
        let started = Instant::now();
        let events = h.run(api, "x", fast_retry()).await;
        assert_eq!(final_message(&events).text(), "made it", "{api}");
        assert_eq!(h.server.requests().len(), 2, "{api}: one retry");
        // The base delay is 10 ms: only honouring the server's delay explains this wait.
        assert_waited(started, 380, api);
    }
}

#[tokio::test]
async fn retry_after_in_seconds_is_honoured() {
    let h = Harness::start(
        Scenario::new()
            .rule(
                Rule::any()
                    .times(1)
                    .fault(Fault::status(503).retry_after("1")),
            )
            .default_reply(Reply::text("made it")),
    )
    .await;
    let started = Instant::now();
    let events = h.run("anthropic-messages", "x", fast_retry()).await;
    assert_eq!(final_message(&events).text(), "made it");
    assert_waited(started, 950, "Retry-After: 1");
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once_with_the_wait() {
    let h = Harness::start(failing(Fault::status(429).retry_after("120"))).await;
    let options = retrying(3, Duration::from_millis(10), Duration::from_secs(5));
    for Failure {
        api, kind, message, ..
    } in failures(&h, &options).await
    {
        assert_eq!(
            kind,
            ErrorKind::RateLimited {
                retry_after: Some(Duration::from_secs(120))
            },
            "{api}"
        );
        assert!(message.contains("HTTP 429"), "{api}: {message}");
        assert!(
            message.contains("retry after 120 s, longer than the 5 s limit"),
            "{api}: {message}"
        );
    }
    assert_eq!(h.server.requests().len(), 4, "no retries");
}

#[tokio::test]
async fn http_errors_are_retried_only_where_it_can_help() {
    let cases = [
        // A server error is retried, then reported.
        (
            500,
            "boom",
            "openai-completions",
            ErrorKind::Server,
            "deepseek/deepseek-chat: HTTP 500 Internal Server Error: boom (after 4 attempts)",
            4,
        ),
        // An auth error is not retried, and names the key.
        (
            401,
            "invalid x-api-key",
            "anthropic-messages",
            ErrorKind::Auth,
            "anthropic/claude-haiku-4-5: HTTP 401 Unauthorized: invalid x-api-key; check the API key (ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY)",
            1,
        ),
    ];
    for (status, error, api, expected, says, requests) in cases {
        let body = json!({"error": {"message": error}});
        let h = Harness::start(failing(Fault::status(status).body(body))).await;
        let events = h.run(api, "x", fast_retry()).await;
        let (kind, message) = error_of(&events);
        assert_eq!(*kind, expected, "{status}");
        assert_eq!(message, says);
        assert_eq!(h.server.requests().len(), requests, "{status}: requests");
    }
}

#[tokio::test]
async fn overloaded_is_retried_and_can_recover() {
    let h = Harness::start(
        Scenario::new()
            .rule(Rule::any().times(2).fault(Fault::status(529)))
            .default_reply(Reply::text("back")),
    )
    .await;
    let events = h.run("anthropic-messages", "x", fast_retry()).await;
    assert_eq!(final_message(&events).text(), "back");
    assert_eq!(h.server.requests().len(), 3);
}

#[tokio::test]
async fn context_overflow_is_typed() {
    let too_long = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens > 200000 maximum"}});
    let h = Harness::start(failing(Fault::status(400).body(too_long))).await;
    let events = h.run("anthropic-messages", "x", fast_retry()).await;
    assert_eq!(*error_of(&events).0, ErrorKind::ContextOverflow);
}

#[tokio::test]
async fn malformed_data_is_a_protocol_error_that_keeps_the_partial_reply() {
    let h = Harness::start(long_reply(Fault::malformed_line())).await;
    for Failure {
        api,
        kind,
        message,
        events,
    } in failures(&h, &StreamOptions::default()).await
    {
        assert_eq!(kind, ErrorKind::Protocol, "{api}: {message}");
        assert!(
            message.contains("malformed stream") || message.contains("invalid JSON"),
            "{api}: {message}"
        );
        assert_eq!(
            final_message(&events).stop_reason,
            StopReason::Error,
            "{api}"
        );
    }
}

#[tokio::test]
async fn invalid_utf8_is_a_protocol_error() {
    let h = Harness::start(faulty_reply(long_text(), Fault::invalid_utf8())).await;
    for Failure {
        api, kind, message, ..
    } in failures(&h, &StreamOptions::default()).await
    {
        assert_eq!(kind, ErrorKind::Protocol, "{api}");
        assert!(message.contains("not valid UTF-8"), "{api}: {message}");
    }
}

#[tokio::test]
async fn disconnect_mid_stream_keeps_what_arrived() {
    let h = Harness::start(long_reply(Fault::disconnect_after_chunks(8))).await;
    for Failure {
        api,
        kind,
        message,
        events,
    } in failures(&h, &fast_retry()).await
    {
        assert!(
            matches!(kind, ErrorKind::Network | ErrorKind::Protocol),
            "{api}: {kind:?} {message}"
        );
        let partial = final_message(&events).text();
        assert!(
            !partial.is_empty() && long_text().starts_with(&partial),
            "{api}: partial {partial:?}"
        );
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let h = Harness::start(long_reply(Fault::hang_after_chunks(3))).await;
    let options = StreamOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..StreamOptions::default()
    };
    for Failure {
        api, kind, message, ..
    } in failures(&h, &options).await
    {
        assert_eq!(kind, ErrorKind::Timeout, "{api}");
        assert!(message.contains("no data for 0.3 s"), "{api}: {message}");
    }
}

#[tokio::test]
async fn slow_first_byte_within_the_timeout_is_fine_and_beyond_it_is_not() {
    let h = Harness::start(faulty_reply("late", Fault::slow_first_byte_ms(400))).await;
    let patient = StreamOptions {
        idle_timeout: Some(Duration::from_secs(10)),
        ..StreamOptions::default()
    };
    assert_eq!(
        final_message(&h.run("openai-responses", "x", patient).await).text(),
        "late"
    );
    let impatient = StreamOptions {
        idle_timeout: Some(Duration::from_millis(100)),
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        ..StreamOptions::default()
    };
    let events = h.run("openai-responses", "x", impatient).await;
    assert_eq!(*error_of(&events).0, ErrorKind::Timeout);
}

#[tokio::test]
async fn keep_alive_comments_are_ignored() {
    let h = Harness::start(long_reply(Fault::keep_alive_every(1))).await;
    for (api, _) in APIS {
        let events = h.run(api, "x", StreamOptions::default()).await;
        assert_eq!(final_message(&events).text(), long_text(), "{api}");
    }
}

#[tokio::test]
async fn a_missing_end_marker_is_tolerated_only_where_the_reply_is_known_complete() {
    let h = Harness::start(faulty_reply("all here", Fault::omit_done())).await;
    for (api, _) in APIS {
        let events = h.run(api, "x", StreamOptions::default()).await;
        assert_one_terminal(&events);
        let message = final_message(&events);
        match api {
            // Chat Completions sent finish_reason; only `[DONE]` is missing. Anthropic sent
            // message_delta with its stop_reason; only message_stop is missing.
            "openai-completions" | "anthropic-messages" => {
                assert_eq!(
                    (message.stop_reason, message.text().as_str()),
                    (StopReason::Stop, "all here"),
                    "{api}"
                )
            }
            // Responses without response.completed, Gemini without a finishReason: cut short.
            _ => {
                assert_eq!(message.stop_reason, StopReason::Error, "{api}");
                assert_eq!(message.text(), "all here", "{api}: partial text kept");
            }
        }
    }
}

#[tokio::test]
async fn a_wrong_content_type_says_what_arrived() {
    let h = Harness::start(failing(Fault::content_type("text/html"))).await;
    for Failure {
        api, kind, message, ..
    } in failures(&h, &StreamOptions::default()).await
    {
        assert_eq!(kind, ErrorKind::Protocol, "{api}");
        assert!(
            message.contains("expected a text/event-stream stream but the server sent text/html"),
            "{api}: {message}"
        );
    }
}

#[tokio::test]
async fn a_huge_line_is_refused_without_unbounded_memory() {
    let h = Harness::start(failing(Fault::huge_line_bytes(17 * 1024 * 1024))).await;
    let events = h
        .run("openai-completions", "x", StreamOptions::default())
        .await;
    let (kind, message) = error_of(&events);
    assert_eq!(*kind, ErrorKind::Protocol);
    assert!(message.contains("longer than 16777216 bytes"), "{message}");
}

#[tokio::test]
async fn abort_mid_stream_ends_promptly_with_the_partial_reply() {
    let h = Harness::start(
        Scenario::new()
            .default_reply(Reply::text("word ".repeat(200)))
            .chunk_size(5)
            .delay_ms(20),
    )
    .await;
    for (api, _) in APIS {
        let cancel = CancellationToken::new();
        let options = StreamOptions {
            cancel: Some(cancel.clone()),
            ..StreamOptions::default()
        };
        let model = h.model(api);
        let mut stream = h.client.stream(&model, &user("x"), options);
        let mut seen = 0;
        let mut after_cancel = Vec::new();
        while let Some(event) = stream.next().await {
            if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                seen += 1;
                if seen == 3 {
                    cancel.cancel();
                    continue;
                }
            }
            if cancel.is_cancelled() {
                after_cancel.push(event);
            }
        }
        // Deltas already buffered may still arrive; then the aborted error, and the stream
        // ends long before the 200 words the server would have sent.
        assert!(
            after_cancel.len() < 20,
            "{api}: {} events after cancel",
            after_cancel.len()
        );
        let (kind, message) = error_of(&after_cancel);
        assert_eq!(*kind, ErrorKind::Aborted, "{api}");
        assert!(message.contains("aborted"), "{api}: {message}");
        let partial = final_message(&after_cancel);
        assert_eq!(partial.stop_reason, StopReason::Aborted, "{api}");
        assert!(
            partial.text().starts_with("word word "),
            "{api}: {:?}",
            partial.text()
        );
    }
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let h = Harness::start(Scenario::new()).await;
    let client = LlmClient::with_env(Arc::new(MapEnv::default()));
    let model = h.model("openai-responses");
    let events: Vec<_> = client
        .stream(&model, &user("x"), StreamOptions::default())
        .collect()
        .await;
    let (kind, message) = error_of(&events);
    assert_eq!(*kind, ErrorKind::Auth);
    assert_eq!(
        message,
        "no API key for provider openai: set OPENAI_API_KEY (or configure a key for it), or use the offline model stub/echo"
    );
    assert!(h.server.requests().is_empty());
}

#[tokio::test]
async fn an_unreachable_server_is_a_network_error_naming_the_url() {
    let h = Harness::start(Scenario::new()).await;
    let mut model = h.model("openai-completions");
    model.base_url = "http://127.0.0.1:9/v1".into();
    let options = retrying(1, Duration::from_millis(5), Duration::from_secs(1));
    let events: Vec<_> = h.client.stream(&model, &user("x"), options).collect().await;
    let (kind, message) = error_of(&events);
    assert_eq!(*kind, ErrorKind::Network);
    assert!(
        message.starts_with(
            "deepseek/deepseek-chat: cannot reach http://127.0.0.1:9/v1/chat/completions ("
        ),
        "{message}"
    );
    assert!(
        message.contains("check the base URL and your network (after 2 attempts)"),
        "{message}"
    );
}

#[tokio::test]
async fn a_model_without_base_url_is_a_config_error() {
    let h = Harness::start(Scenario::new()).await;
    for (api, _) in APIS {
        let mut model = h.model(api);
        model.base_url = String::new();
        let events: Vec<_> = h
            .client
            .stream(&model, &user("x"), StreamOptions::default())
            .collect()
            .await;
        let (kind, message) = error_of(&events);
        assert_eq!(*kind, ErrorKind::Config, "{api}");
        assert_eq!(
            message,
            format!(
                "{}: the model has no baseUrl; set one in the models configuration",
                model.reference()
            )
        );
    }
    assert!(h.server.requests().is_empty());
}
