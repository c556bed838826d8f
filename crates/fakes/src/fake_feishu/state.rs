//! The fake Feishu's shared state: tenant tokens and long-connection tickets, open
//! connections, the event queue (un-acked events are redelivered on the next connection),
//! stored messages and resources, injected failures, and every record the tests read.
//! One mutex guards it all; every change wakes the async `wait_for` helpers.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::FakeFeishuConfig;
use super::long_conn::{Frame, Header, encode_frame};
pub(crate) use crate::fake_support::ws::Out;

/// An injected REST failure.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub status: u16,
    pub code: i64,
    /// `x-ogw-ratelimit-reset`, for rate limits.
    pub reset_secs: u64,
}

/// A data frame the client acknowledged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedAck {
    /// The connection it came on (1 for the first one).
    pub conn: u64,
    /// The frame's `message_id` header (the fake's frame id, not the chat message's).
    pub frame_message_id: String,
    /// The chat message (`om_…`) the acknowledged event carried, when it was one.
    pub message_id: Option<String>,
    pub seq_id: u64,
    /// The `code` of the ack's JSON payload (200 = handled); `None` when unreadable.
    pub code: Option<i64>,
    /// The `biz_rt` header.
    pub biz_rt: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// A ping the client sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordedPing {
    pub conn: u64,
    pub service: i32,
    /// Whether the fake answered it (not while silent).
    pub answered: bool,
}

/// A `tenant_access_token/internal` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenRequest {
    pub app_id: String,
    /// The token issued; `None` when the credentials were refused.
    pub token: Option<String>,
}

/// A `/callback/ws/endpoint` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointRequest {
    pub app_id: String,
    /// The `locale` header.
    pub locale: Option<String>,
    /// The URL handed out; `None` when refused.
    pub url: Option<String>,
}

/// A message the bot sent (`POST /im/v1/messages`) or replied (`…/{id}/reply`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentMessage {
    pub message_id: String,
    /// `None` for replies.
    pub receive_id: Option<String>,
    /// The `receive_id_type` query parameter; `None` for replies.
    pub receive_id_type: Option<String>,
    /// The chat it landed in (for an open_id, the fake's p2p chat `oc_dm_<open_id>`).
    pub chat_id: String,
    pub msg_type: String,
    /// `content` (a JSON string on the wire), parsed.
    pub content: Value,
    /// The message replied to.
    pub reply_to: Option<String>,
    pub reply_in_thread: bool,
    /// The thread it landed in (the replied-to message's, or a new one for
    /// `reply_in_thread`).
    pub thread_id: Option<String>,
    pub uuid: Option<String>,
    /// The JSON body as sent.
    pub body: Value,
}

impl SentMessage {
    /// The readable text: an interactive card's `markdown` / `div` texts (joined with
    /// `\n`), a `text` message's text, a `post`'s text and link runs; empty otherwise.
    pub fn text(&self) -> String {
        match self.msg_type.as_str() {
            "text" => self.content["text"].as_str().unwrap_or_default().to_owned(),
            "interactive" => {
                let elements = self.content["body"]["elements"]
                    .as_array()
                    .or_else(|| self.content["elements"].as_array());
                elements
                    .into_iter()
                    .flatten()
                    .filter_map(|element| {
                        element["content"]
                            .as_str()
                            .or_else(|| element["text"]["content"].as_str())
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            "post" => {
                let post = if self.content.get("content").is_some() {
                    &self.content
                } else {
                    self.content
                        .as_object()
                        .and_then(|locales| locales.values().next())
                        .unwrap_or(&Value::Null)
                };
                post["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|line| {
                        line.as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|run| run["text"].as_str())
                            .collect::<String>()
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            _ => String::new(),
        }
    }
}

/// What an upload was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UploadKind {
    /// `POST /open-apis/im/v1/images`.
    Image,
    /// `POST /open-apis/im/v1/files`.
    File,
}

/// An image or file the bot uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Upload {
    pub kind: UploadKind,
    /// The `image_key` / `file_key` handed out.
    pub key: String,
    /// `file_name` (files), else the file part's file name.
    pub name: String,
    /// `image_type` (images) or `file_type` (files).
    pub type_field: String,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// A resource served at `/open-apis/im/v1/messages/{message_id}/resources/{key}`.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// `image` or `file` (the `type` query parameter it must be fetched with).
    pub kind: &'static str,
    pub name: String,
    pub bytes: bytes::Bytes,
}

/// Where a message lives (for replies).
#[derive(Debug, Clone)]
pub(crate) struct MessageInfo {
    pub chat_id: String,
    pub thread_id: Option<String>,
}

/// An event waiting for its ack.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    /// The frames' `message_id` header.
    pub frame_id: String,
    /// The chat message it carries.
    pub message_id: Option<String>,
    pub kind: &'static str,
    pub payload: Vec<u8>,
    pub parts: usize,
    pub acked: bool,
}

pub(crate) struct Conn {
    tx: mpsc::UnboundedSender<Out>,
    pub service: i32,
    pub silent: bool,
}

#[derive(Default)]
pub(crate) struct Inner {
    next_id: u64,
    next_seq: u64,
    pub ping_interval: u64,
    pub tokens: HashSet<String>,
    pub tickets: HashSet<String>,
    pub conns: BTreeMap<u64, Conn>,
    next_conn: u64,
    /// The connection events go to: the last one opened.
    pub active: Option<u64>,
    pub events: Vec<Event>,
    /// The event JSON of injected messages by message id, for redelivery.
    pub event_json: HashMap<String, Value>,
    pub messages: HashMap<String, MessageInfo>,
    /// By `(message_id, key)`.
    pub resources: HashMap<(String, String), Resource>,
    pub failures: crate::fake_support::Failures<Failure>,
    pub acks: Vec<RecordedAck>,
    pub pings: Vec<RecordedPing>,
    pub token_requests: Vec<TokenRequest>,
    pub endpoint_requests: Vec<EndpointRequest>,
    pub sent_messages: Vec<SentMessage>,
    pub uploads: Vec<Upload>,
    pub calls: Vec<String>,
    pub protocol_errors: Vec<String>,
    pub connections: usize,
}

/// What the handlers share: the config, the stop token, the base URL and [`Inner`].
pub(crate) type Shared = crate::fake_support::Host<FakeFeishuConfig, Inner>;

impl Inner {
    /// The state a fake with `config` starts with.
    pub fn new(config: &FakeFeishuConfig) -> Self {
        Self {
            ping_interval: config.ping_interval_secs,
            next_id: 0x7f00_0000,
            ..Self::default()
        }
    }
}

impl Inner {
    /// A fresh number for ids.
    pub fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The ClientConfig JSON (endpoint answers and pongs).
    pub fn client_config(&self) -> Value {
        serde_json::json!({
            "ReconnectCount": -1,
            "ReconnectInterval": 3,
            "ReconnectNonce": 0,
            "PingInterval": self.ping_interval,
        })
    }

    /// Registers a new connection (it becomes the active one) and sends it every event
    /// not acknowledged yet.
    pub fn open_conn(&mut self, tx: mpsc::UnboundedSender<Out>, service: i32) -> u64 {
        self.next_conn += 1;
        self.connections += 1;
        let id = self.next_conn;
        self.conns.insert(
            id,
            Conn {
                tx,
                service,
                silent: false,
            },
        );
        self.active = Some(id);
        let pending: Vec<usize> = (0..self.events.len())
            .filter(|index| self.events.get(*index).is_some_and(|event| !event.acked))
            .collect();
        for index in pending {
            self.deliver(index);
        }
        id
    }

    pub fn close_conn(&mut self, conn: u64) {
        self.conns.remove(&conn);
        if self.active == Some(conn) {
            self.active = None;
        }
    }

    /// Tells every connection's task to drop its socket; returns how many.
    pub fn drop_all(&mut self, out: fn() -> Out) -> usize {
        let conns = std::mem::take(&mut self.conns);
        for conn in conns.values() {
            let _ = conn.tx.send(out());
        }
        self.active = None;
        conns.len()
    }

    pub fn send_to(&self, conn: u64, out: Out) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|conn| conn.tx.send(out).is_ok())
    }

    /// The active connection, unless it went silent.
    fn live_active(&self) -> Option<u64> {
        self.active
            .filter(|id| self.conns.get(id).is_some_and(|conn| !conn.silent))
    }

    /// Queues an event under a new frame id (returned) and sends it to the active connection
    /// (when there is one).
    pub fn push_event(
        &mut self,
        message_id: Option<String>,
        kind: &'static str,
        payload: Vec<u8>,
        parts: usize,
    ) -> String {
        let frame_id = format!("fmsg{:x}", self.take_id());
        self.events.push(Event {
            frame_id: frame_id.clone(),
            message_id,
            kind,
            payload,
            parts,
            acked: false,
        });
        self.deliver(self.events.len() - 1);
        frame_id
    }

    /// Sends event `index` to the active connection as `parts` data frames.
    fn deliver(&mut self, index: usize) {
        let Some(conn) = self.live_active() else {
            return;
        };
        let Some(event) = self.events.get(index).cloned() else {
            return;
        };
        let service = self.conns.get(&conn).map_or(0, |conn| conn.service);
        let parts = event.parts.clamp(1, event.payload.len().max(1));
        let chunk = event.payload.len().div_ceil(parts).max(1);
        let chunks: Vec<Vec<u8>> = if event.payload.is_empty() {
            vec![Vec::new()]
        } else {
            event.payload.chunks(chunk).map(<[u8]>::to_vec).collect()
        };
        let sum = chunks.len();
        for (seq, payload) in chunks.into_iter().enumerate() {
            self.next_seq += 1;
            let header = |key: &str, value: String| Header {
                key: key.to_owned(),
                value,
            };
            let frame = Frame {
                seq_id: self.next_seq,
                log_id: 0x1000_0000 + self.next_seq,
                service,
                method: 1,
                headers: vec![
                    header("type", event.kind.to_owned()),
                    header("message_id", event.frame_id.clone()),
                    header("sum", sum.to_string()),
                    header("seq", seq.to_string()),
                    header("trace_id", format!("trace-{}", event.frame_id)),
                ],
                payload_encoding: None,
                payload_type: None,
                payload: Some(payload),
                log_id_new: Some(format!("log-{}", self.next_seq)),
            };
            self.send_to(conn, Out::Binary(encode_frame(&frame)));
        }
    }

    /// Marks every connection silent: no more pongs or events on them.
    pub fn silence(&mut self) -> usize {
        for conn in self.conns.values_mut() {
            conn.silent = true;
        }
        self.conns.len()
    }

    pub fn clear_records(&mut self) {
        self.acks.clear();
        self.pings.clear();
        self.token_requests.clear();
        self.endpoint_requests.clear();
        self.sent_messages.clear();
        self.uploads.clear();
        self.calls.clear();
        self.protocol_errors.clear();
    }
}
