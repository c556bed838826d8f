//! A protocol client for server tests that keeps every event it reads, and readers of what
//! the mock model was sent.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as Ws;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

pub struct Client {
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    pub next: u64,
    /// Every event frame read so far.
    pub events: Vec<Value>,
}

impl Client {
    /// Connects as an `operator.admin` operator.
    pub async fn connect(running: &super::Running, token: &str) -> Self {
        Self::connect_scoped(running, token, &["operator.admin"]).await
    }

    /// Connects and completes the handshake with `scopes`.
    pub async fn connect_scoped(running: &super::Running, token: &str, scopes: &[&str]) -> Self {
        let mut client = Self::open(running).await;
        let hello = client
            .call(
                "connect",
                json!({"minProtocol": 3, "maxProtocol": 4, "client": {"id": "test"},
                       "auth": {"token": token}, "role": "operator", "scopes": scopes}),
            )
            .await;
        assert_eq!(hello["ok"], true, "{hello}");
        client
    }

    /// Connects and reads the challenge, leaving the handshake to the test.
    pub async fn open(running: &super::Running) -> Self {
        let (ws, _) = connect_async(format!("ws://{}/", running.addr))
            .await
            .unwrap();
        let mut client = Self {
            ws,
            next: 0,
            events: Vec::new(),
        };
        let challenge = client.frame().await;
        assert_eq!(challenge["event"], "connect.challenge");
        client
    }

    pub async fn frame(&mut self) -> Value {
        loop {
            let next = tokio::time::timeout(Duration::from_secs(10), self.ws.next())
                .await
                .expect("a frame within 10 s")
                .expect("an open socket")
                .unwrap();
            if let Ws::Text(text) = next {
                let frame: Value = serde_json::from_str(&text).unwrap();
                if frame["type"] == "event" {
                    self.events.push(frame.clone());
                }
                return frame;
            }
        }
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = format!("{}:c", self.next);
        let req = json!({"type": "req", "id": id, "method": method, "params": params});
        self.ws.send(Ws::text(req.to_string())).await.unwrap();
        loop {
            let frame = self.frame().await;
            if frame["type"] == "res" && frame["id"] == id {
                return frame;
            }
        }
    }

    /// The payload of a successful call.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let res = self.call(method, params).await;
        assert_eq!(res["ok"], true, "{method}: {res}");
        res["payload"].clone()
    }

    /// The payload of a successful `chat.send` of `message` to session `key` as run `run_id`.
    pub async fn chat_send(&mut self, key: &str, message: &str, run_id: &str) -> Value {
        let params = json!({"sessionKey": key, "message": message, "idempotencyKey": run_id});
        self.ok("chat.send", params).await
    }

    /// The `(code, message)` of a failed call.
    pub async fn err(&mut self, method: &str, params: Value) -> (String, String) {
        let res = self.call(method, params).await;
        assert_eq!(res["ok"], false, "{method}: {res}");
        let e = &res["error"];
        (
            e["code"].as_str().unwrap().to_owned(),
            e["message"].as_str().unwrap().to_owned(),
        )
    }

    /// Runs `agent` and returns its final payload (the second response to the request).
    pub async fn agent(&mut self, params: Value) -> Value {
        let accepted = self.call("agent", params).await;
        assert_eq!(accepted["payload"]["status"], "accepted", "{accepted}");
        let id = accepted["id"].clone();
        loop {
            let frame = self.frame().await;
            if frame["type"] == "res" && frame["id"] == id {
                assert_eq!(frame["ok"], true, "{frame}");
                return frame["payload"].clone();
            }
        }
    }

    /// Reads until the next `heartbeat` event; returns its payload.
    pub async fn heartbeat(&mut self) -> Value {
        loop {
            let frame = self.frame().await;
            if frame["event"] == "heartbeat" {
                return frame["payload"].clone();
            }
        }
    }

    /// The `chat` and `agent` events of heartbeat runs seen so far.
    pub fn heartbeat_run_events(&self, event: &str) -> Vec<Value> {
        self.events
            .iter()
            .filter(|f| {
                f["event"] == event
                    && f["payload"]["runId"]
                        .as_str()
                        .is_some_and(|id| id.starts_with("heartbeat-"))
            })
            .map(|f| f["payload"].clone())
            .collect()
    }
}

pub fn text_of(message: &Value) -> String {
    message["content"][0]["text"].as_str().unwrap().to_owned()
}

/// The last user message the model was sent.
pub fn last_prompt(running: &super::Running) -> String {
    let requests = running.llm.requests();
    let body = &requests.last().expect("a model request").body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    content_text(&user["content"])
}

/// The text of a message's content in either shape (a string, or blocks whose texts are
/// joined); empty for anything else.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

impl Client {
    /// The payloads of the `event` events read so far.
    pub fn events_named(&self, event: &str) -> Vec<Value> {
        self.events
            .iter()
            .filter(|f| f["event"] == event)
            .map(|f| f["payload"].clone())
            .collect()
    }
}
