//! `POST /v1/responses` (the OpenAI Responses API, shaped as OpenClaw serves it) against a
//! real server on 127.0.0.1 with the mock LLM: the exact response resource, the exact SSE
//! event sequence of a streamed reply, a failed run (plain and streamed), an `input_image`
//! reaching the model as its image part, an `input_file` read into the message, sessions
//! by `user` and `previous_response_id`, and refusals (bad input, unknown model, missing or
//! wrong token) that start no run.

use crate::support;

use base64::Engine as _;
use pincer_store::SessionStore;
use pincer_testkit::{Fault, Match, MockLlm, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "http-responses-token-321";

struct Server {
    base: String,
    stop: CancellationToken,
    llm: MockLlm,
    dir: tempfile::TempDir,
    http: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(scenario: Scenario) -> Server {
    let running = support::start_server(scenario, TOKEN).await;
    Server {
        base: format!("http://{}", running.addr),
        stop: running.stop,
        llm: running.llm,
        dir: running.dir,
        http: reqwest::Client::new(),
    }
}

fn scenario() -> Scenario {
    Scenario::new()
        .rule(
            Rule::when(Match::last_user("ping")).reply(Reply::text("pong").with_usage(UsageSpec {
                input: Some(12),
                output: Some(3),
                ..UsageSpec::default()
            })),
        )
        .rule(
            Rule::when(Match::last_user("stream me"))
                .reply(Reply::text("one two three four five six").with_chunk_size(3)),
        )
        .rule(Rule::any().reply(Reply::text("a cat")))
}

impl Server {
    fn url(&self) -> String {
        format!("{}/v1/responses", self.base)
    }

    /// `POST /v1/responses` with the token: the status and the JSON answer.
    async fn respond(&self, body: Value) -> (u16, Value) {
        let res = self
            .http
            .post(self.url())
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.json().await.unwrap())
    }

    /// A streamed response: its `(event, data)` pairs.
    async fn stream(&self, body: Value) -> Vec<(String, String)> {
        let res = self
            .http
            .post(self.url())
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let content_type = res.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );
        sse_events(&res.text().await.unwrap())
    }

    /// The user message the model got in its only request.
    fn user_content_sent(&self) -> Value {
        let requests = self.llm.requests();
        assert_eq!(requests.len(), 1, "one model call");
        let messages = requests[0].body["messages"].as_array().unwrap().clone();
        let user = messages.iter().rfind(|m| m["role"] == "user").unwrap();
        user["content"].clone()
    }

    /// The roles and texts of a session's transcript.
    fn session(&self, key: &str) -> Vec<(String, String)> {
        let store = SessionStore::new(self.dir.path().join("main"));
        let Ok(session) = store.resume(key) else {
            return Vec::new();
        };
        session
            .transcript
            .context()
            .iter()
            .map(|m| {
                let v = serde_json::to_value(m).unwrap();
                let text = crate::support::client::content_text(&v["content"]);
                (v["role"].as_str().unwrap_or_default().to_owned(), text)
            })
            .collect()
    }
}

/// An SSE body as `(event, data)` pairs (`event` empty when the frame has none); comments
/// (keep-alives) are skipped.
fn sse_events(text: &str) -> Vec<(String, String)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let mut kind = String::new();
            let mut data = Vec::new();
            for line in frame.lines() {
                if let Some(k) = line.strip_prefix("event:") {
                    kind = k.trim().to_owned();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push(d.strip_prefix(' ').unwrap_or(d));
                }
            }
            (!data.is_empty()).then(|| (kind, data.join("\n")))
        })
        .collect()
}

/// Replaces the generated id and time with placeholders, after checking their form.
fn normalized(mut v: Value, response_id: &str, item_id: &str) -> Value {
    fn walk(v: &mut Value, response_id: &str, item_id: &str) {
        match v {
            Value::String(s) if s == response_id => *s = "resp_ID".to_owned(),
            Value::String(s) if s == item_id => *s = "msg_ID".to_owned(),
            Value::Object(map) => {
                if let Some(t) = map.get_mut("created_at") {
                    assert!(t.as_i64().unwrap() > 1_700_000_000, "{t}");
                    *t = json!(0);
                }
                for value in map.values_mut() {
                    walk(value, response_id, item_id);
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| walk(item, response_id, item_id)),
            _ => {}
        }
    }
    assert!(response_id.starts_with("resp_") && response_id.len() > 10);
    assert!(item_id.starts_with("msg_") && item_id.len() > 10);
    walk(&mut v, response_id, item_id);
    v
}

fn usage(input: u64, output: u64) -> Value {
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + output,
    })
}

fn item(text: &str, status: &str) -> Value {
    json!({
        "type": "message", "id": "msg_ID", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
        "phase": "final_answer", "status": status,
    })
}

#[tokio::test]
async fn a_response_answers_with_the_reply_and_usage() {
    let server = start(scenario()).await;
    let (status, body) = server
        .respond(json!({"model": "pincer", "input": "ping"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let (id, item_id) = (
        body["id"].as_str().unwrap().to_owned(),
        body["output"][0]["id"].as_str().unwrap().to_owned(),
    );
    assert_eq!(
        normalized(body, &id, &item_id),
        json!({
            "id": "resp_ID", "object": "response", "created_at": 0, "status": "completed",
            "model": "pincer", "output": [item("pong", "completed")], "usage": usage(12, 3),
        })
    );
}

#[tokio::test]
async fn a_streamed_response_sends_openclaws_event_sequence() {
    let server = start(scenario()).await;
    let events = server
        .stream(json!({"model": "pincer/main", "stream": true,
                       "input": [{"role": "user", "content": [{"type": "input_text", "text": "stream me"}]}]}))
        .await;
    let (done, events) = events.split_last().unwrap();
    assert_eq!(done, &(String::new(), "[DONE]".to_owned()));
    let events: Vec<(String, Value)> = events
        .iter()
        .map(|(kind, data)| (kind.clone(), serde_json::from_str(data).unwrap()))
        .collect();
    let id = events[0].1["response"]["id"].as_str().unwrap().to_owned();
    let item_id = events[2].1["item"]["id"].as_str().unwrap().to_owned();
    let mut text = String::new();
    let mut kinds = Vec::new();
    let mut rest = Vec::new();
    for (kind, data) in events {
        assert_eq!(data["type"], kind.as_str(), "each event names its type");
        let data = normalized(data, &id, &item_id);
        if kind == "response.output_text.delta" {
            text.push_str(data["delta"].as_str().unwrap());
            let mut shape = data.clone();
            shape["delta"] = json!("…");
            assert_eq!(
                shape,
                json!({"type": kind, "item_id": "msg_ID", "output_index": 0, "content_index": 0, "delta": "…"})
            );
            // Consecutive deltas are one step of the sequence.
            if kinds.last() != Some(&kind) {
                kinds.push(kind);
            }
            continue;
        }
        kinds.push(kind);
        rest.push(data);
    }
    assert_eq!(text, "one two three four five six");
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let reply = "one two three four five six";
    let started = json!({
        "id": "resp_ID", "object": "response", "created_at": 0, "status": "in_progress",
        "model": "pincer/main", "output": [], "usage": usage(0, 0),
    });
    let mut opened = item("", "in_progress");
    opened["content"] = json!([]);
    let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
    let at = json!({"item_id": "msg_ID", "output_index": 0, "content_index": 0});
    let with = |kind: &str, extra: Value| {
        let mut v = at.clone();
        v["type"] = json!(kind);
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    let finished = rest.last().unwrap()["response"].clone();
    assert!(finished["usage"]["output_tokens"].as_u64().is_some());
    assert_eq!(
        rest,
        [
            json!({"type": "response.created", "response": started}),
            json!({"type": "response.in_progress", "response": started}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": opened}),
            with("response.content_part.added", json!({"part": part("")})),
            with("response.output_text.done", json!({"text": reply})),
            with("response.content_part.done", json!({"part": part(reply)})),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item(reply, "completed")}),
            json!({"type": "response.completed", "response": {
                "id": "resp_ID", "object": "response", "created_at": 0, "status": "completed",
                "model": "pincer/main", "output": [item(reply, "completed")],
                "usage": finished["usage"],
            }}),
        ]
    );
}

fn failing() -> Scenario {
    Scenario::new()
        .rule(Rule::any().fault(Fault::status(400).body(json!({"error": {"message": "nope"}}))))
}

#[tokio::test]
async fn a_failed_run_is_a_failed_response() {
    let server = start(failing()).await;
    let (status, body) = server.respond(json!({"input": "ping"})).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "failed");
    assert_eq!(body["output"], json!([]));
    assert_eq!(body["error"]["code"], "upstream_error");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("nope"),
        "{body}"
    );

    let events = server
        .stream(json!({"input": "ping", "stream": true}))
        .await;
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.failed",
            "",
        ]
    );
    let failed: Value = serde_json::from_str(&events[4].1).unwrap();
    assert_eq!(failed["response"]["status"], "failed");
    assert_eq!(failed["response"]["error"]["code"], "upstream_error");
    assert_eq!(events[5].1, "[DONE]");
}

#[tokio::test]
async fn an_input_image_reaches_the_model_as_its_image_part() {
    let server = start(scenario()).await;
    let png = pincer_testkit::files::PIXEL_PNG;
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    let url = format!("data:image/png;base64,{data}");
    let (status, body) = server
        .respond(
            json!({"model": "pincer", "input": [{"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "image_url": url, "detail": "auto"},
            ]}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["output"][0]["content"][0]["text"], "a cat");
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let path = format!("inbox/{today}/image.png");
    assert_eq!(
        server.user_content_sent(),
        json!([
            {"type": "text", "text": format!("[media attached: {path} (image/png)]\nwhat is this?")},
            {"type": "image_url", "image_url": {"url": url}},
        ])
    );
    let saved = std::fs::read(server.dir.path().join("workspace").join(path)).unwrap();
    assert_eq!(saved, png);
}

#[tokio::test]
async fn an_openresponses_base64_source_is_an_image_too() {
    let server = start(scenario()).await;
    let data = base64::engine::general_purpose::STANDARD.encode(pincer_testkit::files::PIXEL_PNG);
    let (status, body) = server
        .respond(json!({"input": [{"role": "user", "content": [
            {"type": "input_image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
        ]}]}))
        .await;
    assert_eq!(status, 200, "{body}");
    let sent = server.user_content_sent();
    assert_eq!(
        sent[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
    );
}

#[tokio::test]
async fn an_input_file_is_saved_and_read_into_the_message() {
    let server = start(scenario()).await;
    let data = base64::engine::general_purpose::STANDARD.encode("remember the milk\n");
    let (status, body) = server
        .respond(json!({"input": [{"role": "user", "content": [
            {"type": "input_text", "text": "summarize"},
            {"type": "input_file", "file_data": format!("data:text/plain;base64,{data}"), "filename": "notes.txt"},
        ]}]}))
        .await;
    assert_eq!(status, 200, "{body}");
    let today = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let path = format!("inbox/{today}/notes.txt");
    let file = format!("<file name=\"{path}\" mime=\"text/plain\">\nremember the milk\n</file>\n");
    assert_eq!(
        server.user_content_sent(),
        json!([{"type": "text", "text": format!("[media attached: {path} (text/plain)]\n{file}summarize")}])
    );
    let saved = std::fs::read(server.dir.path().join("workspace").join(path)).unwrap();
    assert_eq!(saved, b"remember the milk\n");
}

#[tokio::test]
async fn the_user_field_keeps_the_conversation() {
    let server = start(scenario()).await;
    for input in ["ping", "stream me"] {
        let (status, body) = server.respond(json!({"input": input, "user": "ada"})).await;
        assert_eq!(status, 200, "{body}");
    }
    let pairs = |items: &[(&str, &str)]| -> Vec<(String, String)> {
        items
            .iter()
            .map(|(r, t)| ((*r).to_owned(), (*t).to_owned()))
            .collect()
    };
    assert_eq!(
        server.session("agent:main:openresponses-user:ada"),
        pairs(&[
            ("user", "ping"),
            ("assistant", "pong"),
            ("user", "stream me"),
            ("assistant", "one two three four five six"),
        ])
    );
}

#[tokio::test]
async fn previous_response_id_continues_its_session() {
    let server = start(scenario()).await;
    let (status, first) = server.respond(json!({"input": "ping"})).await;
    assert_eq!(status, 200, "{first}");
    let (status, body) = server
        .respond(json!({"input": "stream me", "previous_response_id": first["id"]}))
        .await;
    assert_eq!(status, 200, "{body}");
    // An unknown id starts a fresh session, as OpenClaw does with an expired one.
    let (status, body) = server
        .respond(json!({"input": "again", "previous_response_id": "resp_unknown"}))
        .await;
    assert_eq!(status, 200, "{body}");
    let texts = |i: usize| -> Vec<String> {
        let requests = server.llm.requests();
        requests[i].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| crate::support::client::content_text(&m["content"]))
            .collect()
    };
    assert_eq!(texts(1), ["ping", "pong", "stream me"]);
    assert_eq!(texts(2), ["again"]);
}

#[tokio::test]
async fn bad_input_is_a_400_that_starts_no_run() {
    let server = start(scenario()).await;
    let error = |message: &str, code: &str| json!({"error": {"message": message, "type": "invalid_request_error", "code": code}});
    let missing = error("Missing user message in `input`.", "missing_user_message");
    let cases = [
        (json!({"model": "pincer"}), missing.clone()),
        (json!({"input": "  "}), missing.clone()),
        (
            json!({"input": [{"role": "assistant", "content": "hi"}]}),
            missing.clone(),
        ),
        (
            json!({"input": 42}),
            error(
                "`input` must be a string or a list of items",
                "invalid_body",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": {"text": "hi"}}]}),
            error(
                "`input[0].content` must be a string or a list of content parts",
                "invalid_body",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": [{"type": "input_audio", "data": "x"}]}]}),
            error(
                "`input[0].content[0]`: unsupported content part type `input_audio`",
                "invalid_body",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": [{"type": "input_image"}]}]}),
            error(
                "`input[0].content[0]` needs an image_url or a source (url or base64 data)",
                "invalid_image_url",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": [
                {"type": "input_image", "image_url": "data:image/png;base64,@@"}]}]}),
            error(
                "image_url data URL is not valid base64",
                "invalid_image_url",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]}),
            error(
                "`input[0].content[0]` needs file_data, a file_url or a source (url or base64 data)",
                "invalid_file",
            ),
        ),
        (
            json!({"input": [{"role": "user", "content": [
                {"type": "input_file", "file_data": "data:text/plain;base64,@@", "filename": "a.txt"}]}]}),
            error("input_file is not valid base64", "invalid_file"),
        ),
        (
            json!({"input": "ping", "stream": "yes"}),
            error(
                "invalid request body: invalid type: string \"yes\", expected a boolean at line 1 column 30",
                "invalid_body",
            ),
        ),
        (
            json!({"model": "pincer/nobody", "input": "ping"}),
            error("unknown agent: nobody", "model_not_found"),
        ),
    ];
    for (body, expected) in cases {
        let (status, got) = server.respond(body.clone()).await;
        assert_eq!((status, got), (400, expected), "for {body}");
    }
    assert!(server.llm.requests().is_empty(), "no run started");
    let inbox = server.dir.path().join("workspace/inbox");
    assert!(!inbox.exists(), "nothing saved");
}

#[tokio::test]
async fn missing_or_wrong_tokens_get_401() {
    let server = start(scenario()).await;
    let body = json!({"input": "ping"});
    let url = server.url();
    let cases = [
        (
            server.http.post(&url).json(&body),
            "this gateway needs a token: send Authorization: Bearer <token>",
        ),
        (
            server.http.post(&url).bearer_auth("wrong").json(&body),
            "the token does not match this gateway's",
        ),
    ];
    for (request, message) in cases {
        let res = request.send().await.unwrap();
        assert_eq!(res.status(), 401);
        let err: Value = res.json().await.unwrap();
        assert_eq!(
            err,
            json!({"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}})
        );
    }
    assert!(server.llm.requests().is_empty(), "no run started");
}
