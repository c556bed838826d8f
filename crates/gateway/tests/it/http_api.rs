//! The HTTP API against a real server on 127.0.0.1 with reqwest: OpenAI-compatible
//! `/v1/models` and `/v1/chat/completions` (plain and streamed, sessions by `user` and by
//! header, errors in OpenAI's shape), bearer auth, and `/hooks/agent`. Turns run on the
//! mock LLM.

use crate::support;

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use pincer_store::SessionStore;
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario, UsageSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "http-test-token-456";

struct Server {
    base: String,
    stop: CancellationToken,
    llm: MockLlm,
    dir: tempfile::TempDir,
    http: reqwest::Client,
    plan_threads: Arc<Mutex<Vec<ThreadId>>>,
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
        plan_threads: running.plan_threads,
    }
}

impl Server {
    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .bearer_auth(TOKEN)
    }

    /// `GET path` with the token.
    async fn get(&self, path: &str) -> reqwest::Response {
        let request = self.http.get(format!("{}{path}", self.base));
        request.bearer_auth(TOKEN).send().await.unwrap()
    }

    /// `GET path` without a token in the header (`path` may carry one in its query).
    async fn get_without_token(&self, path: &str) -> reqwest::Response {
        let request = self.http.get(format!("{}{path}", self.base));
        request.send().await.unwrap()
    }

    /// `POST path` with the token and the JSON `body`: the status and the JSON answer.
    async fn post_json(&self, path: &str, body: &Value) -> (u16, Value) {
        let res = self.post(path).json(body).send().await.unwrap();
        (res.status().as_u16(), res.json().await.unwrap())
    }

    async fn completion(&self, body: Value) -> (u16, Value) {
        self.post_json("/v1/chat/completions", &body).await
    }

    /// The messages of a session (roles and text), as its transcript has them.
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
        .rule(Rule::when(Match::last_user("my name is Ada")).reply(Reply::text("hello Ada")))
        .rule(Rule::when(Match::last_user("what is my name?")).reply(Reply::text("Ada")))
        .rule(Rule::when(Match::last_user("from a hook")).reply(Reply::text("hook done")))
}

#[tokio::test]
async fn models_lists_the_agents_and_the_default_model() {
    let server = start(scenario()).await;
    let res = server.get("/v1/models").await;
    assert_eq!(res.status(), 200);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["object"], "list");
    let data = body["data"].as_array().unwrap();
    let ids: Vec<&str> = data.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["pincer", "pincer/default", "pincer/main", "mock/m"]);
    for m in data {
        assert_eq!(m["object"], "model");
        assert!(m["created"].is_i64());
        assert!(m["owned_by"].is_string());
    }
    let one: Value = server.get("/v1/models/mock/m").await.json().await.unwrap();
    assert_eq!(one["id"], "mock/m");
    assert_eq!(one["owned_by"], "mock");
}

#[tokio::test]
async fn a_turn_is_planned_off_the_runtime_thread() {
    // This runtime has one thread, the test's: every task of the server runs on it, so a
    // `plan` (which may read the workspace, skills and the session) seen on another thread
    // ran on the blocking pool.
    let server = start(scenario()).await;
    let (status, body) = server
        .completion(json!({"model": "pincer", "messages": [{"role": "user", "content": "ping"}]}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["choices"][0]["message"]["content"], "pong");
    let threads = server.plan_threads.lock().unwrap().clone();
    assert_eq!(threads.len(), 1);
    assert_ne!(threads[0], std::thread::current().id());
}

#[tokio::test]
async fn a_completion_answers_with_the_reply_and_usage() {
    let server = start(scenario()).await;
    let (status, body) = server
        .completion(json!({
            "model": "pincer",
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "ping"}],
        }))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["object"], "chat.completion");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert_eq!(body["model"], "pincer");
    assert_eq!(body["choices"][0]["index"], 0);
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(body["choices"][0]["message"]["content"], "pong");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["prompt_tokens"], 12);
    assert_eq!(body["usage"]["completion_tokens"], 3);
    assert_eq!(body["usage"]["total_tokens"], 15);
}

/// Reads an SSE body into its `data:` payloads.
fn sse_data(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_completion_reassembles_to_the_reply() {
    let server = start(scenario()).await;
    let res = server
        .post("/v1/chat/completions")
        .json(&json!({"model": "pincer/main", "stream": true,
                      "messages": [{"role": "user", "content": [{"type": "text", "text": "stream me"}]}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = res.text().await.unwrap();
    let data = sse_data(&text);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"), "{text}");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let id = chunks[0]["id"].as_str().unwrap();
    assert!(id.starts_with("chatcmpl-"));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let mut content = String::new();
    for c in &chunks {
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["id"], id);
        if let Some(piece) = c["choices"][0]["delta"]["content"].as_str() {
            content.push_str(piece);
        }
    }
    assert_eq!(content, "one two three four five six");
    assert!(chunks.len() > 3, "the reply came in several chunks: {text}");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["choices"][0]["delta"], json!({}));
}

#[tokio::test]
async fn the_user_field_keeps_the_conversation() {
    let server = start(scenario()).await;
    let (status, first) = server
        .completion(
            json!({"user": "ada", "messages": [{"role": "user", "content": "my name is Ada"}]}),
        )
        .await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = server
        .completion(
            json!({"user": "ada", "messages": [{"role": "user", "content": "what is my name?"}]}),
        )
        .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["choices"][0]["message"]["content"], "Ada");
    // The mock saw the first exchange in the second request.
    let requests = server.llm.requests();
    let last = &requests.last().unwrap().body;
    let sent = last["messages"].to_string();
    assert!(sent.contains("my name is Ada"), "{sent}");
    assert!(sent.contains("hello Ada"), "{sent}");
    assert_eq!(
        server.session("agent:main:openai-user:ada").len(),
        4,
        "two turns in the user's session"
    );
    // Without `user` each request is a fresh session: the mock sees no history.
    server.llm.clear_requests();
    let (status, _) = server
        .completion(json!({"messages": [{"role": "user", "content": "ping"}]}))
        .await;
    assert_eq!(status, 200);
    let requests = server.llm.requests();
    let users = requests[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 1);
}

#[tokio::test]
async fn a_session_key_header_names_the_session() {
    let server = start(scenario()).await;
    let res = server
        .post("/v1/chat/completions")
        .header("x-openclaw-session-key", "agent:main:custom")
        .json(&json!({"messages": [{"role": "user", "content": "ping"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let session = server.session("agent:main:custom");
    assert_eq!(
        session,
        [
            ("user".to_owned(), "ping".to_owned()),
            ("assistant".to_owned(), "pong".to_owned())
        ]
    );
}

#[tokio::test]
async fn missing_or_wrong_tokens_get_401() {
    let server = start(scenario()).await;
    let body = json!({"messages": [{"role": "user", "content": "ping"}]});
    let url = format!("{}/v1/chat/completions", server.base);
    let cases = [
        server.http.post(&url).json(&body),
        server.http.post(&url).bearer_auth("wrong").json(&body),
        server
            .http
            .post(&url)
            .header("authorization", TOKEN)
            .json(&body),
    ];
    for request in cases {
        let res = request.send().await.unwrap();
        assert_eq!(res.status(), 401);
        let err: Value = res.json().await.unwrap();
        assert!(err["error"]["message"].is_string(), "{err}");
        assert_eq!(err["error"]["type"], "invalid_request_error");
        assert_eq!(err["error"]["code"], "invalid_api_key");
    }
    let res = server.get_without_token("/v1/models").await;
    assert_eq!(res.status(), 401);
    let res = server
        .http
        .post(format!("{}/hooks/agent", server.base))
        .json(&json!({"message": "from a hook"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["ok"], false);
    // A token in the query string is never read, even a right one.
    let res = server
        .get_without_token(&format!("/v1/models?token={TOKEN}"))
        .await;
    assert_eq!(res.status(), 400);
    // Health checks need no token.
    let res = server.get_without_token("/healthz").await;
    assert_eq!(res.status(), 200);
    assert!(server.llm.requests().is_empty(), "no run started");
}

#[tokio::test]
async fn bad_bodies_get_400_in_openai_shape() {
    let server = start(scenario()).await;
    let res = server
        .post("/v1/chat/completions")
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let err: Value = res.json().await.unwrap();
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert_eq!(err["error"]["code"], "invalid_json");
    assert!(err["error"]["message"].as_str().unwrap().contains("JSON"));
    for body in [
        json!({"messages": "ping"}),
        json!({"model": "pincer"}),
        json!({"messages": [{"role": "assistant", "content": "hi"}]}),
    ] {
        let (status, err) = server.completion(body).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(err["error"]["type"], "invalid_request_error");
        assert!(err["error"]["code"].is_string());
    }
    let (status, err) = server
        .completion(
            json!({"model": "pincer/nobody", "messages": [{"role": "user", "content": "ping"}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(err["error"]["code"], "model_not_found");
    assert!(server.llm.requests().is_empty(), "no run started");
}

#[tokio::test]
async fn a_failed_run_is_a_502() {
    let server =
        start(Scenario::new().rule(Rule::any().fault(
            pincer_testkit::Fault::status(400).body(json!({"error": {"message": "nope"}})),
        )))
        .await;
    let (status, err) = server
        .completion(json!({"messages": [{"role": "user", "content": "ping"}]}))
        .await;
    assert_eq!(status, 502, "{err}");
    assert_eq!(err["error"]["type"], "api_error");
    assert!(err["error"]["message"].is_string());
}

#[tokio::test]
async fn hooks_agent_starts_a_run_in_the_session() {
    let server = start(scenario()).await;
    let hook = json!({"message": "from a hook", "sessionKey": "agent:main:hooked", "name": "test"});
    let (status, body) = server.post_json("/hooks/agent", &hook).await;
    assert_eq!(status, 200);
    assert_eq!(body["ok"], true);
    assert!(body["runId"].is_string());
    let mut session = Vec::new();
    for _ in 0..200 {
        session = server.session("agent:main:hooked");
        if session.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(
        session,
        [
            ("user".to_owned(), "from a hook".to_owned()),
            ("assistant".to_owned(), "hook done".to_owned())
        ]
    );
    // Bad bodies and unknown agents are refused before any run.
    for body in [
        json!({}),
        json!({"message": "  "}),
        json!({"message": "x", "agentId": "nobody"}),
    ] {
        let (status, err) = server.post_json("/hooks/agent", &body).await;
        assert_eq!(status, 400);
        assert_eq!(err["ok"], false);
        assert!(err["error"].is_string());
    }
    // `/hooks/wake` is tested with the system events (tests/system_events.rs).
}
