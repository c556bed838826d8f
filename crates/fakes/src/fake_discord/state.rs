//! The fake's state: open gateway connections, sessions with their dispatch logs, known
//! messages, users and DM channels, injected failures and the records of what the bot did.
//! One mutex; every change bumps a `watch` counter that `wait_for_*` helpers wait on.

use std::collections::HashMap;

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::FakeDiscordConfig;
pub(crate) use crate::fake_support::ws::Out;

/// An `Identify` (op 2) the fake received, whatever its token.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedIdentify {
    pub token: String,
    pub intents: Option<u64>,
    pub properties: Value,
    /// The whole `d`.
    pub payload: Value,
}

/// A `Resume` (op 6) the fake received.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedResume {
    pub token: String,
    pub session_id: String,
    /// The client's last sequence number (`None` when it sent `null`).
    pub seq: Option<u64>,
    /// Whether the session was resumed (else: op 9 or close 4004).
    pub accepted: bool,
}

/// A message the bot created with `POST /channels/{id}/messages`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentMessage {
    pub id: String,
    pub channel_id: String,
    pub content: String,
    /// `message_reference.message_id`.
    pub message_reference: Option<String>,
    pub allowed_mentions: Option<Value>,
    pub files: Vec<SentFile>,
    /// The JSON body (or `payload_json` plus other form fields) as sent.
    pub payload: Value,
}

/// A file uploaded with a message (`files[n]` part).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentFile {
    /// The part's name, e.g. `files[0]`.
    pub field: String,
    pub filename: String,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// An injected REST failure.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub status: u16,
    pub retry_after: f64,
    pub global: bool,
}

pub(crate) struct Conn {
    tx: mpsc::UnboundedSender<Out>,
    /// The session this connection identified or resumed.
    pub session: Option<String>,
}

pub(crate) struct Session {
    /// The last sequence number used.
    pub seq: u64,
    /// The last sequence number handed to a connection.
    pub sent_upto: u64,
    /// Every dispatch but READY / RESUMED, for replays.
    pub log: Vec<Value>,
    pub conn: Option<u64>,
    pub resumable: bool,
}

#[derive(Default)]
pub(crate) struct Inner {
    next_conn: u64,
    next_session: u64,
    next_id: u64,
    pub conns: HashMap<u64, Conn>,
    pub sessions: HashMap<String, Session>,
    /// The session injected events go to: the last one identified or resumed.
    pub current: Option<String>,
    /// Events injected before any session existed: `(t, d)`, sent after the next READY.
    pub pending: Vec<(String, Value)>,
    /// Message objects (injected and sent) by id.
    pub messages: HashMap<String, Value>,
    /// The `MESSAGE_CREATE` data of injected messages by id, for redelivery.
    pub events: HashMap<String, Value>,
    /// Usernames by user id (from injected messages).
    pub users: HashMap<String, String>,
    /// DM channel ids by recipient id.
    pub dm_channels: HashMap<String, String>,
    /// Guild channels seen in injected messages: channel id → guild id.
    pub guild_channels: HashMap<String, String>,
    /// Threads and forum posts: thread id → (parent channel id, guild id).
    pub threads: HashMap<String, (String, String)>,
    /// Attachment bytes by `<channel>/<id>/<filename>`.
    pub attachments: HashMap<String, (String, Bytes)>,
    pub failures: crate::fake_support::Failures<Failure>,
    pub identifies: Vec<RecordedIdentify>,
    pub resumes: Vec<RecordedResume>,
    pub heartbeats: Vec<Option<u64>>,
    pub sent_messages: Vec<SentMessage>,
    pub typing: Vec<String>,
    pub calls: Vec<String>,
    pub connections: usize,
}

/// What the handlers share: the config, the stop token, the base URL and [`Inner`].
pub(crate) type Shared = crate::fake_support::Host<FakeDiscordConfig, Inner>;

/// A payload that is not a dispatch: `{"op":…,"d":…,"s":null,"t":null}`.
pub(crate) fn op(op: u8, d: Value) -> String {
    serde_json::json!({"op": op, "d": d, "s": null, "t": null}).to_string()
}

impl Shared {
    /// `ws://127.0.0.1:PORT/gateway`.
    pub fn gateway_url(&self) -> String {
        let addr = self.base_url.trim_start_matches("http://");
        format!("ws://{addr}/gateway")
    }

    /// The bot's `User` object.
    pub fn bot_user(&self) -> Value {
        serde_json::json!({
            "id": self.config.bot_id,
            "username": self.config.bot_username,
            "discriminator": "0",
            "global_name": null,
            "avatar": null,
            "bot": true,
        })
    }
}

impl Inner {
    /// The state a fake starts with: snowflake-like ids from 1.3e18.
    pub fn new() -> Self {
        Self {
            next_id: 1_300_000_000_000_000_000,
            ..Self::default()
        }
    }

    /// The next snowflake-like id.
    pub fn take_id(&mut self) -> String {
        self.next_id += 1;
        self.next_id.to_string()
    }

    /// A user object for `id` (username from injected messages, else `user<id>`).
    pub fn user(&self, id: &str) -> Value {
        let username = self
            .users
            .get(id)
            .cloned()
            .unwrap_or_else(|| format!("user{id}"));
        serde_json::json!({
            "id": id, "username": username, "discriminator": "0",
            "global_name": null, "avatar": null, "bot": false,
        })
    }

    /// Stores a message (without its own `referenced_message`) for replies and
    /// redelivery.
    pub fn remember_message(&mut self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_str) else {
            return;
        };
        let mut stored = message.clone();
        if let Some(object) = stored.as_object_mut() {
            object.remove("referenced_message");
        }
        self.messages.insert(id.to_owned(), stored);
    }

    fn send(&self, conn: u64, out: Out) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|conn| conn.tx.send(out).is_ok())
    }

    /// Registers a new connection and queues its Hello.
    pub fn open_conn(&mut self, tx: mpsc::UnboundedSender<Out>, heartbeat_interval: u64) -> u64 {
        self.next_conn += 1;
        self.connections += 1;
        let id = self.next_conn;
        let hello = op(
            10,
            serde_json::json!({"heartbeat_interval": heartbeat_interval}),
        );
        let _ = tx.send(Out::Text(hello));
        self.conns.insert(id, Conn { tx, session: None });
        id
    }

    /// Forgets a connection that ended; a client close with 1000 or 1001 ends its session
    /// (as on Discord: such a session cannot be resumed).
    pub fn close_conn(&mut self, conn: u64, client_close: Option<u16>) {
        let Some(conn_state) = self.conns.remove(&conn) else {
            return;
        };
        if let Some(session) = conn_state
            .session
            .and_then(|id| self.sessions.get_mut(&id))
            .filter(|session| session.conn == Some(conn))
        {
            session.conn = None;
            if matches!(client_close, Some(1000 | 1001)) {
                session.resumable = false;
            }
        }
    }

    /// Detaches every connection and tells its task to drop the socket; returns how many.
    pub fn drop_all(&mut self) -> usize {
        for session in self.sessions.values_mut() {
            session.conn = None;
        }
        let conns = std::mem::take(&mut self.conns);
        for conn in conns.values() {
            let _ = conn.tx.send(Out::Drop);
        }
        conns.len()
    }

    /// The connection of the current session.
    pub fn active_conn(&self) -> Option<u64> {
        self.sessions.get(self.current.as_ref()?)?.conn
    }

    /// Sends `payload` (not a dispatch) to the active connection.
    pub fn send_active(&self, payload: String) -> bool {
        self.active_conn()
            .is_some_and(|conn| self.send(conn, Out::Text(payload)))
    }

    /// Sends op 9 (`d: false`) to the active connection, which must identify again; the
    /// session can no longer be resumed.
    pub fn invalidate_session(&mut self) -> bool {
        let Some(session_id) = self.current.clone() else {
            return false;
        };
        let Some(session) = self.sessions.get_mut(&session_id) else {
            return false;
        };
        session.resumable = false;
        let Some(conn) = session.conn.take() else {
            return false;
        };
        if let Some(conn_state) = self.conns.get_mut(&conn) {
            conn_state.session = None;
        }
        self.send(conn, Out::Text(op(9, Value::Bool(false))))
    }

    /// Sends a dispatch to the current session (logged for replays; delivered now when a
    /// connection is attached), or keeps it for the next READY when there is no session.
    /// Returns its sequence number.
    pub fn dispatch(&mut self, t: &str, d: Value) -> Option<u64> {
        let Some(session_id) = self.current.clone() else {
            self.pending.push((t.to_owned(), d));
            return None;
        };
        self.session_dispatch(&session_id, t, d, true)
    }

    fn session_dispatch(&mut self, session_id: &str, t: &str, d: Value, log: bool) -> Option<u64> {
        let session = self.sessions.get_mut(session_id)?;
        session.seq += 1;
        let seq = session.seq;
        let payload = serde_json::json!({"op": 0, "t": t, "s": seq, "d": d});
        let text = payload.to_string();
        if log {
            session.log.push(payload);
        }
        if let Some(conn) = session.conn {
            session.sent_upto = seq;
            self.send(conn, Out::Text(text));
        }
        Some(seq)
    }

    /// Handles an Identify with the right token: a new session, READY, then the events
    /// nobody received yet (those of the previous session never handed to a connection,
    /// and those injected before any session).
    pub fn identify(&mut self, conn: u64, ready: impl FnOnce(&str) -> Value) {
        if !self.conns.contains_key(&conn) {
            // Dropped meanwhile by `drop_all`.
            return;
        }
        self.next_session += 1;
        let session_id = format!("f4ke5e55{:024x}", self.next_session);
        let mut carried = std::mem::take(&mut self.pending);
        if let Some(old) = self.current.as_ref().and_then(|id| self.sessions.get(id)) {
            for event in old
                .log
                .iter()
                .filter(|event| event["s"].as_u64().is_some_and(|seq| seq > old.sent_upto))
            {
                let t = event["t"].as_str().unwrap_or_default().to_owned();
                carried.push((t, event["d"].clone()));
            }
        }
        self.detach(conn);
        self.sessions.insert(
            session_id.clone(),
            Session {
                seq: 0,
                sent_upto: 0,
                log: Vec::new(),
                conn: Some(conn),
                resumable: true,
            },
        );
        if let Some(conn_state) = self.conns.get_mut(&conn) {
            conn_state.session = Some(session_id.clone());
        }
        self.current = Some(session_id.clone());
        self.session_dispatch(&session_id, "READY", ready(&session_id), false);
        for (t, d) in carried {
            self.session_dispatch(&session_id, &t, d, true);
        }
    }

    /// Handles a Resume with the right token; `false` when the session is unknown or not
    /// resumable (the caller sends op 9).
    pub fn resume(&mut self, conn: u64, session_id: &str, seq: u64) -> bool {
        if !self.conns.contains_key(&conn)
            || !self
                .sessions
                .get(session_id)
                .is_some_and(|session| session.resumable)
        {
            return false;
        }
        self.detach(conn);
        if let Some(conn_state) = self.conns.get_mut(&conn) {
            conn_state.session = Some(session_id.to_owned());
        }
        let Some(session) = self.sessions.get_mut(session_id) else {
            return false;
        };
        session.conn = Some(conn);
        let missed: Vec<String> = session
            .log
            .iter()
            .filter(|event| event["s"].as_u64().is_some_and(|s| s > seq))
            .map(Value::to_string)
            .collect();
        session.sent_upto = session.seq;
        for text in missed {
            self.send(conn, Out::Text(text));
        }
        self.current = Some(session_id.to_owned());
        self.session_dispatch(session_id, "RESUMED", serde_json::json!({}), false);
        true
    }

    /// Unbinds `conn` from the session it had (a connection re-identifying or resuming).
    fn detach(&mut self, conn: u64) {
        if let Some(old) = self.conns.get_mut(&conn).and_then(|c| c.session.take())
            && let Some(session) = self.sessions.get_mut(&old)
            && session.conn == Some(conn)
        {
            session.conn = None;
        }
    }

    /// Whether `conn` identified or resumed.
    pub fn authenticated(&self, conn: u64) -> bool {
        self.conns
            .get(&conn)
            .is_some_and(|conn| conn.session.is_some())
    }

    pub fn send_to(&self, conn: u64, out: Out) -> bool {
        self.send(conn, out)
    }

    pub fn clear_records(&mut self) {
        self.identifies.clear();
        self.resumes.clear();
        self.heartbeats.clear();
        self.sent_messages.clear();
        self.typing.clear();
        self.calls.clear();
    }
}
