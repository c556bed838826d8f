//! OpenClaw's WebSocket protocol against a real server on 127.0.0.1, with a Rust client:
//! the handshake, auth failures, methods, events, idempotency, abort, bad frames, and many
//! clients at once. Turns run on the mock LLM.

use crate::support;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use pincer_gateway::server::{PreauthLimits, QueueMode, ServeOptions};
use pincer_testkit::{Match, MockLlm, Reply, Rule, Scenario};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "test-token-123";

struct Server {
    url: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    llm: MockLlm,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(scenario: Scenario) -> Server {
    start_with(scenario, |_| {}).await
}

/// A server and a client connected to it with `scopes`.
async fn start_connected(scenario: Scenario, scopes: &[&str]) -> (Server, Client) {
    let server = start(scenario).await;
    let (client, _) = Client::connect(&server.url, scopes).await;
    (server, client)
}

async fn start_with(scenario: Scenario, configure: impl FnOnce(&mut ServeOptions)) -> Server {
    let running = support::start_server_with(scenario, TOKEN, configure).await;
    Server {
        url: format!("ws://{}/", running.addr),
        stop: running.stop,
        task: running.task,
        llm: running.llm,
        dir: running.dir,
    }
}

/// A server on [`hi_scenario`] that lets `per_peer` connections from one address, and
/// `total` in all, wait before `connect`.
async fn start_with_preauth(per_peer: usize, total: usize) -> Server {
    start_with(hi_scenario(), |options| {
        options.preauth_limits = PreauthLimits { per_peer, total };
    })
    .await
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Client {
    ws: Socket,
    next: u64,
}

impl Client {
    /// Connects and reads the challenge.
    async fn raw(url: &str) -> (Self, Value) {
        let (ws, _) = connect_async(url).await.unwrap();
        let mut client = Self { ws, next: 0 };
        let challenge = client.frame().await.unwrap();
        (client, challenge)
    }

    /// Connects and completes the handshake.
    async fn connect(url: &str, scopes: &[&str]) -> (Self, Value) {
        let (mut client, _) = Self::raw(url).await;
        let hello = client
            .call(
                "connect",
                json!({"minProtocol": 4, "maxProtocol": 4,
                       "client": {"id": "test", "version": "1", "platform": "linux", "mode": "test"},
                       "auth": {"token": TOKEN}, "role": "operator", "scopes": scopes}),
            )
            .await;
        (client, hello)
    }

    async fn send(&mut self, frame: Value) {
        self.ws.send(Ws::text(frame.to_string())).await.unwrap();
    }

    /// The next text frame as JSON; `None` once the server closed.
    async fn frame(&mut self) -> Option<Value> {
        loop {
            // 30 s: a hundred debug-build turns on a loaded 2-core machine can keep one
            // client waiting well past 10 s for its answer.
            match tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .ok()??
            {
                Ok(Ws::Text(t)) => return Some(serde_json::from_str(&t).unwrap()),
                Ok(Ws::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// Sends a request and returns its (first) response, skipping events.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = format!("{}:t", self.next);
        self.send(json!({"type": "req", "id": id, "method": method, "params": params}))
            .await;
        self.response(&id).await
    }

    /// The payload of a successful call of `method` (a refusal fails the test).
    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let res = self.call(method, params).await;
        assert_eq!(res["ok"], true, "{method}: {res}");
        res["payload"].clone()
    }

    async fn response(&mut self, id: &str) -> Value {
        loop {
            let frame = self.frame().await.expect("a response");
            if frame["type"] == "res" && frame["id"] == id {
                return frame;
            }
        }
    }

    /// `chat.send` of `message` to session `key` as run `run_id`; the response.
    async fn chat_send(&mut self, key: &str, message: &str, run_id: &str) -> Value {
        let params = json!({"sessionKey": key, "message": message, "idempotencyKey": run_id});
        self.call("chat.send", params).await
    }

    /// [`Self::chat_send`] asking for queue mode `mode`.
    async fn chat_send_in(&mut self, mode: &str, key: &str, message: &str, run_id: &str) -> Value {
        let params = json!({"sessionKey": key, "message": message, "idempotencyKey": run_id,
                            "queueMode": mode});
        self.call("chat.send", params).await
    }

    /// The response to `chat.history` of session `key`.
    async fn chat_history(&mut self, key: &str) -> Value {
        self.call("chat.history", json!({"sessionKey": key})).await
    }

    /// `sessions.patch` of session `key` with the fields of `patch`; the response.
    async fn patch_session(&mut self, key: &str, mut patch: Value) -> Value {
        patch["key"] = json!(key);
        self.call("sessions.patch", patch).await
    }

    /// Starts the scenario's `slow` run (a streamed reply, ten pieces) on `key` as
    /// `run_id`.
    async fn send_slow(&mut self, key: &str, run_id: &str) -> Value {
        self.chat_send(key, "slow", run_id).await
    }

    /// Frames until the first `chat` delta, so a run is known to be streaming.
    async fn until_delta(&mut self) -> Vec<Value> {
        self.until(|f| f["event"] == "chat" && f["payload"]["state"] == "delta")
            .await
    }

    /// Frames until `stop` says so, returning them all.
    async fn until(&mut self, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Some(frame) = self.frame().await {
            let done = stop(&frame);
            seen.push(frame);
            if done {
                break;
            }
        }
        seen
    }
}

/// A watcher (read scope) and a client (write scope) connected to `url`.
async fn clients(url: &str) -> (Client, Client) {
    let (watcher, _) = Client::connect(url, &["operator.read"]).await;
    let (client, _) = Client::connect(url, &["operator.write"]).await;
    (watcher, client)
}

/// A watcher and a client, the client having started a `slow` run on `key` as `run_id`
/// that the watcher saw stream: the session is busy.
async fn busy(url: &str, key: &str, run_id: &str) -> (Client, Client) {
    let (mut watcher, mut client) = clients(url).await;
    client.send_slow(key, run_id).await;
    watcher.until_delta().await;
    (watcher, client)
}

/// Whether a hello-ok payload lists `name` among its `features[kind]` (`methods` or `events`).
fn offers(hello: &Value, kind: &str, name: &str) -> bool {
    hello["features"][kind]
        .as_array()
        .is_some_and(|names| names.contains(&json!(name)))
}

fn hi_scenario() -> Scenario {
    with_hi_rules(Scenario::new())
}

/// `scenario` with replies to `ping` (at once) and `slow` (ten pieces, 100 ms apart).
fn with_hi_rules(scenario: Scenario) -> Scenario {
    scenario
        .rule(Rule::when(Match::last_user("ping")).reply(Reply::text("pong")))
        .rule(
            Rule::when(Match::last_user("slow")).reply(
                Reply::text("a b c d e f g h i j")
                    .with_chunk_size(2)
                    .with_delay_ms(100),
            ),
        )
}

#[tokio::test]
async fn the_handshake_answers_hello_ok() {
    let server = start(hi_scenario()).await;
    let (mut client, challenge) = Client::raw(&server.url).await;
    assert_eq!(challenge["type"], "event");
    assert_eq!(challenge["event"], "connect.challenge");
    assert!(challenge["payload"]["nonce"].is_string());
    let hello = client
        .call("connect", json!({"minProtocol": 3, "maxProtocol": 4, "client": {"id": "cli"}, "auth": {"token": TOKEN}}))
        .await;
    assert_eq!(hello["ok"], true, "{hello}");
    let p = &hello["payload"];
    assert_eq!(p["type"], "hello-ok");
    assert_eq!(p["protocol"], 4);
    assert!(p["server"]["connId"].is_string());
    assert!(offers(p, "methods", "chat.send"));
    assert_eq!(
        p["snapshot"]["sessionDefaults"]["mainSessionKey"],
        "agent:main:main"
    );
    assert_eq!(p["policy"]["maxPayload"], 26_214_400);
    assert_eq!(p["policy"]["tickIntervalMs"], 15_000);
    // Methods work afterwards.
    let health = client.call("health", json!({})).await;
    assert_eq!(health["payload"]["ok"], true);
    assert_eq!(health["payload"]["defaultAgentId"], "main");
    let status = client.call("status", json!({})).await;
    assert_eq!(
        status["payload"]["runtimeVersion"],
        env!("CARGO_PKG_VERSION")
    );
}

#[tokio::test]
async fn wrong_tokens_protocols_and_first_frames_are_refused() {
    let server = start(hi_scenario()).await;
    let (mut client, _) = Client::raw(&server.url).await;
    let res = client
        .call("connect", json!({"auth": {"token": "nope"}}))
        .await;
    assert_eq!(res["ok"], false);
    assert_eq!(res["error"]["code"], "FORBIDDEN");
    assert_eq!(res["error"]["details"]["code"], "AUTH_TOKEN_MISMATCH");
    assert!(
        client.frame().await.is_none(),
        "closed after a refused connect"
    );

    let (mut client, _) = Client::raw(&server.url).await;
    let res = client.call("connect", json!({})).await;
    assert_eq!(res["error"]["details"]["code"], "AUTH_TOKEN_MISSING");

    let (mut client, _) = Client::raw(&server.url).await;
    let res = client.call("health", json!({})).await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    assert_eq!(res["error"]["message"], "the first request must be connect");

    let (mut client, _) = Client::raw(&server.url).await;
    let res = client
        .call(
            "connect",
            json!({"minProtocol": 5, "maxProtocol": 6, "auth": {"token": TOKEN}}),
        )
        .await;
    assert!(
        res["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("protocol mismatch")
    );

    // Not JSON before connect: closed. Oversized pre-auth frame: closed.
    let (mut client, _) = Client::raw(&server.url).await;
    client.ws.send(Ws::text("not json")).await.unwrap();
    assert!(client.frame().await.is_none());
    let (mut client, _) = Client::raw(&server.url).await;
    client
        .ws
        .send(Ws::text(format!("{{\"pad\":\"{}\"}}", "x".repeat(70_000))))
        .await
        .unwrap();
    assert!(client.frame().await.is_none());
}

#[tokio::test]
async fn bad_frames_after_connect_get_errors_and_the_connection_stays() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    let res = client.call("no.such.method", json!({})).await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    assert_eq!(res["error"]["message"], "unknown method: no.such.method");
    client
        .send(json!({"type": "req", "id": "x1", "method": "health", "bogus": 1}))
        .await;
    let res = client.response("x1").await;
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    let res = client.chat_send("agent:main:main", "ping", "k").await;
    assert_eq!(res["error"]["code"], "FORBIDDEN", "read scope cannot send");
    assert_eq!(res["error"]["details"]["missingScope"], "operator.write");
    let res = client.call("chat.history", json!({})).await;
    assert_eq!(res["error"]["message"], "missing parameter sessionKey");
    assert_eq!(
        client.call("health", json!({})).await["ok"],
        true,
        "still serving"
    );
}

#[tokio::test]
async fn chat_send_streams_events_and_history_has_the_turn() {
    let (_server, mut client) =
        start_connected(hi_scenario(), &["operator.read", "operator.write"]).await;
    let res = client.chat_send("agent:main:main", "ping", "run-1").await;
    assert_eq!(
        res["payload"],
        json!({"runId": "run-1", "status": "started"})
    );
    let frames = client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let chat: Vec<&Value> = frames.iter().filter(|f| f["event"] == "chat").collect();
    assert!(chat.iter().any(|f| f["payload"]["state"] == "delta"));
    let last = chat.last().unwrap();
    assert_eq!(last["payload"]["runId"], "run-1");
    assert_eq!(last["payload"]["message"]["content"][0]["text"], "pong");
    assert_eq!(last["payload"]["stopReason"], "stop");
    let lifecycle: Vec<&str> = frames
        .iter()
        .filter(|f| f["event"] == "agent" && f["payload"]["stream"] == "lifecycle")
        .map(|f| f["payload"]["data"]["phase"].as_str().unwrap())
        .collect();
    assert_eq!(lifecycle, ["start", "end"]);
    // Event seq counts up per connection.
    let seqs: Vec<u64> = frames.iter().filter_map(|f| f["seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{seqs:?}");
    // The same idempotency key again does not start a second run.
    let again = client.chat_send("agent:main:main", "ping", "run-1").await;
    assert_eq!(again["payload"]["status"], "ok");
    let history = client.chat_history("agent:main:main").await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["content"][0]["text"], "pong");
    let list = client.call("sessions.list", json!({"limit": 5})).await;
    assert_eq!(list["payload"]["count"], 1);
    assert_eq!(list["payload"]["sessions"][0]["key"], "agent:main:main");
    assert_eq!(list["payload"]["defaults"]["modelProvider"], "mock");
}

#[tokio::test]
async fn agent_answers_twice_and_agent_wait_sees_the_end() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    let accepted = client
        .call(
            "agent",
            json!({"message": "ping", "idempotencyKey": "k-agent-1"}),
        )
        .await;
    assert_eq!(accepted["payload"]["status"], "accepted");
    assert_eq!(accepted["payload"]["runId"], "k-agent-1");
    let id = accepted["id"].as_str().unwrap().to_owned();
    let last = client.response(&id).await;
    assert_eq!(last["payload"]["status"], "ok");
    assert_eq!(last["payload"]["result"]["payloads"][0]["text"], "pong");
    assert_eq!(
        last["payload"]["result"]["meta"]["agentMeta"]["provider"],
        "mock"
    );
    let wait = client
        .call(
            "agent.wait",
            json!({"runId": "k-agent-1", "timeoutMs": 1000}),
        )
        .await;
    assert_eq!(wait["payload"]["status"], "ok");
    let list = client.call("sessions.list", json!({})).await;
    assert_eq!(
        list["payload"]["sessions"][0]["key"],
        "agent:main:explicit:k-agent-1"
    );
    let unknown = client.call("agent.wait", json!({"runId": "nope"})).await;
    assert_eq!(unknown["error"]["code"], "INVALID_REQUEST");
}

#[tokio::test]
async fn chat_abort_stops_a_run_and_keeps_its_partial_reply() {
    let (_server, mut client) =
        start_connected(hi_scenario(), &["operator.write", "operator.read"]).await;
    client.send_slow("agent:main:s1", "r-slow").await;
    client.until_delta().await;
    let res = client
        .call("chat.abort", json!({"sessionKey": "agent:main:s1"}))
        .await;
    assert_eq!(res["payload"]["aborted"], true);
    let frames = client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] != "delta")
        .await;
    assert_eq!(frames.last().unwrap()["payload"]["state"], "aborted");
    let wait = client.call("agent.wait", json!({"runId": "r-slow"})).await;
    assert_eq!(wait["payload"]["status"], "error");
    assert_eq!(wait["payload"]["error"], "aborted");
    let history = client.chat_history("agent:main:s1").await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["stopReason"], "aborted");
}

#[tokio::test]
async fn many_clients_on_separate_sessions_all_get_their_answers() {
    // A hundred connections from one address, most of them not yet past `connect` at the
    // same moment: above the default per-peer cap on those (16), which is not tested here.
    let server = start_with_preauth(128, 128).await;
    let mut tasks = Vec::new();
    for i in 0..100 {
        let url = server.url.clone();
        tasks.push(tokio::spawn(async move {
            let (mut client, _) = Client::connect(&url, &["operator.write"]).await;
            let res = client
                .call("agent", json!({"message": "ping", "idempotencyKey": format!("many-{i}"), "sessionKey": format!("agent:main:c{i}")}))
                .await;
            let id = res["id"].as_str().unwrap().to_owned();
            let last = client.response(&id).await;
            last["payload"]["result"]["payloads"][0]["text"].as_str().unwrap().to_owned()
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), "pong");
    }
}

#[tokio::test]
async fn shutdown_tells_clients_and_the_server_returns() {
    let (mut server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    server.stop.cancel();
    let frames = client.until(|f| f["event"] == "shutdown").await;
    assert_eq!(frames.last().unwrap()["event"], "shutdown");
    tokio::time::timeout(Duration::from_secs(5), &mut server.task)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn sessions_can_be_patched_reset_and_deleted() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    let key = "agent:main:work";
    let first = client
        .call(
            "agent",
            json!({"message": "ping", "idempotencyKey": "s-1", "sessionKey": key}),
        )
        .await;
    client.response(first["id"].as_str().unwrap()).await;
    let patched = client
        .patch_session(key, json!({"label": "Work", "thinkingLevel": "low"}))
        .await;
    assert_eq!(patched["payload"]["entry"]["label"], "Work");
    assert_eq!(patched["payload"]["entry"]["thinkingLevel"], "low");
    let cleared = client.patch_session(key, json!({"label": null})).await;
    assert!(cleared["payload"]["entry"].get("label").is_none());
    let bad = client
        .patch_session(key, json!({"thinkingLevel": "max"}))
        .await;
    assert_eq!(bad["error"]["code"], "INVALID_REQUEST");
    let bad = client.patch_session(key, json!({"sessionId": "x"})).await;
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("sessions.patch cannot change sessionId")
    );
    let before = patched["payload"]["entry"]["sessionId"].clone();
    let reset = client.call("sessions.reset", json!({"key": key})).await;
    assert_ne!(reset["payload"]["entry"]["sessionId"], before);
    assert_eq!(
        reset["payload"]["entry"]["label"],
        json!(null),
        "the cleared label stays cleared"
    );
    let deleted = client.call("sessions.delete", json!({"key": key})).await;
    assert_eq!(deleted["payload"]["deleted"], true);
    let list = client.call("sessions.list", json!({})).await;
    assert_eq!(list["payload"]["count"], 0);
}

#[tokio::test]
async fn new_in_chat_send_starts_a_new_session() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.write"]).await;
    client.chat_send("agent:main:main", "ping", "n-1").await;
    client
        .until(|f| f["event"] == "chat" && f["payload"]["state"] == "final")
        .await;
    let before = client.chat_history("agent:main:main").await;
    let res = client.chat_send("agent:main:main", "/new", "n-2").await;
    assert_eq!(res["payload"]["status"], "ok");
    assert_ne!(res["payload"]["sessionId"], before["payload"]["sessionId"]);
    let after = client.chat_history("agent:main:main").await;
    assert_eq!(after["payload"]["totalMessages"], 0);
}

#[tokio::test]
async fn models_tools_and_config_come_from_the_runtime() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    let models = client.call("models.list", json!({})).await;
    assert_eq!(models["payload"]["models"][0]["id"], "m");
    assert_eq!(models["payload"]["models"][0]["provider"], "mock");
    let tools = client.call("tools.list", json!({})).await;
    assert_eq!(tools["payload"]["tools"][0]["name"], "time.now");
    // Reading the configuration is a read (OpenClaw's scope); its secrets stay masked.
    let config = client.call("config.get", json!({})).await;
    assert_eq!(
        config["payload"]["config"]["models"]["providers"]["mock"]["apiKey"],
        "abc***xyz"
    );
    let (mut pairing, _) = Client::connect(&server.url, &["operator.pairing"]).await;
    let config = pairing.call("config.get", json!({})).await;
    assert_eq!(config["error"]["details"]["missingScope"], "operator.read");
}

#[path = "ws_protocol/attachments.rs"]
mod attachments;
#[path = "ws_protocol/chat_commands.rs"]
mod chat_commands;
#[path = "ws_protocol/client_methods.rs"]
mod client_methods;
#[path = "ws_protocol/fan_out.rs"]
mod fan_out;
#[path = "ws_protocol/limits.rs"]
mod limits;
#[path = "ws_protocol/presence.rs"]
mod presence;
#[path = "ws_protocol/queue_modes.rs"]
mod queue_modes;
#[path = "ws_protocol/session_events.rs"]
mod session_events;
#[path = "ws_protocol/session_life.rs"]
mod session_life;
#[path = "ws_protocol/transcript_methods.rs"]
mod transcript_methods;
