//! Helpers shared by the integration tests: an HTTP client that ignores proxies (in
//! `serve`, shared with pincer-fakes' tests), and a small SSE splitter for asserting on the
//! exact frames the mock sends.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

mod serve;

use serde_json::Value;
pub use serve::*;

/// One SSE event as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

impl Event {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {}", self.data))
    }
}

/// POSTs `body` with bearer `token` (the proxy wants one; the others ignore it) and asserts a
/// 200 answer.
pub async fn post_ok_with_token(url: &str, token: &str, body: &Value) -> reqwest::Response {
    let request = client().post(url).bearer_auth(token).json(body);
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200, "status for {url}");
    response
}

/// Splits a whole SSE body into events (comment lines are skipped; CRLF accepted).
pub fn parse_sse(body: &str) -> Vec<Event> {
    let body = body.replace("\r\n", "\n");
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d.to_owned());
                }
            }
            (!data.is_empty()).then(|| Event {
                event,
                data: data.join("\n"),
            })
        })
        .collect()
}

/// POSTs `body` and returns the parsed SSE events, asserting a 200 event stream.
pub async fn stream(url: &str, body: &Value) -> Vec<Event> {
    let response = post(url, body).await;
    assert_eq!(response.status(), 200, "status for {url}");
    assert_eq!(content_type(&response), "text/event-stream");
    assert!(response.headers().get("content-length").is_none());
    parse_sse(&response.text().await.unwrap())
}

/// The JSON of every event (all must be JSON except `[DONE]`, which is dropped).
pub fn jsons(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .map(Event::json)
        .collect()
}

/// Concatenates the string at `pointer` over every event JSON that has it.
pub fn concat(values: &[Value], pointer: &str) -> String {
    values
        .iter()
        .filter_map(|v| v.pointer(pointer).and_then(Value::as_str))
        .collect()
}

/// Bodies for the same conversation in each protocol.
pub mod bodies {
    use serde_json::{Value, json};

    pub fn chat(user: &str) -> Value {
        json!({"model": "gpt-mock", "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": user}]})
    }

    pub fn responses(user: &str) -> Value {
        json!({"model": "gpt-mock", "stream": true,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": user}]}]})
    }

    pub fn anthropic(user: &str) -> Value {
        json!({"model": "claude-mock", "max_tokens": 1024, "stream": true,
            "messages": [{"role": "user", "content": user}]})
    }

    pub fn google(user: &str) -> Value {
        json!({"contents": [{"role": "user", "parts": [{"text": user}]}]})
    }

    pub fn proxy(user: &str) -> Value {
        json!({"model": {"id": "proxy-mock", "api": "anthropic-messages", "provider": "anthropic"},
            "context": {"messages": [{"role": "user", "content": user, "timestamp": 1}]},
            "options": {}})
    }
}

pub const GOOGLE_PATH: &str = "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse";

/// The protocol tests' script: "weather?" draws `checking` (a reply with a `get_weather`
/// call), the call's result draws "Sunny.", in chunks of 4 bytes.
pub fn weather_scenario(checking: pincer_testkit::Reply) -> pincer_testkit::Scenario {
    use pincer_testkit::{Match, Reply, Rule, Scenario};
    Scenario::new()
        .rule(Rule::when(Match::last_user("weather?")).reply(checking))
        .rule(Rule::when(Match::tool_result("get_weather")).reply(Reply::text("Sunny.")))
        .chunk_size(4)
}

/// `scenario`, where "long" draws `text` stopped by the length limit.
pub fn long_hits_the_limit(
    scenario: pincer_testkit::Scenario,
    text: &str,
) -> pincer_testkit::Scenario {
    use pincer_testkit::{Match, Reply, Rule, StopReason};
    scenario.rule(
        Rule::when(Match::last_user("long"))
            .reply(Reply::text(text).with_stop_reason(StopReason::Length)),
    )
}

/// Starts the mock with `scenario`; returns it (the test keeps it alive) and the URL of
/// `path` on it.
pub async fn start_at(
    scenario: pincer_testkit::Scenario,
    path: &str,
) -> (pincer_testkit::MockLlm, String) {
    let server = pincer_testkit::MockLlm::start(scenario).await.unwrap();
    let url = format!("{}{path}", server.url());
    (server, url)
}
