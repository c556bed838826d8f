//! The fake Slack's state: Socket Mode connections and tickets, every envelope with
//! whether it was acked (what is not is sent again on the next connection, as Slack does),
//! the records tests read, injected failures, and the async waiting on changes.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::FakeSlackConfig;
pub(crate) use crate::fake_support::ws::Out;

/// A message the bot posted with `chat.postMessage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentSlackMessage {
    pub channel: String,
    pub text: String,
    pub thread_ts: Option<String>,
    /// The `ts` the fake gave it.
    pub ts: String,
    /// The body as sent (JSON, or the form fields as strings).
    pub payload: Value,
}

/// A file the bot shared with `files.completeUploadExternal`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UploadedSlackFile {
    pub file_id: String,
    pub channel: String,
    /// The `filename` given to `files.getUploadURLExternal`.
    pub name: String,
    pub title: Option<String>,
    pub bytes: Vec<u8>,
    pub thread_ts: Option<String>,
}

/// An injected Web API failure.
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// HTTP `status` (429 with `Retry-After` when given).
    Status {
        status: u16,
        retry_after: Option<u64>,
    },
    /// HTTP 200 `{"ok": false, "error": …}`.
    OkFalse(String),
}

/// One envelope the fake made.
pub(crate) struct StoredEnvelope {
    pub id: String,
    /// The envelope frame (its `retry_*` fields are set per delivery).
    pub frame: Value,
    /// How often it was sent.
    pub attempts: u64,
    pub acked: bool,
}

/// A file started with `files.getUploadURLExternal`.
pub(crate) struct PendingUpload {
    pub name: String,
    pub bytes: Option<Vec<u8>>,
}

#[derive(Default)]
pub(crate) struct Inner {
    next_id: u64,
    next_ts: u64,
    next_conn: u64,
    pub tickets: HashSet<String>,
    pub conns: BTreeMap<u64, mpsc::UnboundedSender<Out>>,
    /// The connection envelopes go to (the newest).
    pub current: Option<u64>,
    pub envelopes: Vec<StoredEnvelope>,
    pub acks: Vec<String>,
    pub failures: Vec<(String, Failure)>,
    pub sent_messages: Vec<SentSlackMessage>,
    pub uploaded_files: Vec<UploadedSlackFile>,
    pub calls: Vec<String>,
    /// DM channel by user id (from injected DMs and `conversations.open`).
    pub dm_channels: HashMap<String, String>,
    /// Inbound files by id: (mime, bytes).
    pub files: HashMap<String, (String, Bytes)>,
    pub uploads: HashMap<String, PendingUpload>,
    pub connections: usize,
}

/// What the handlers share: the config, the stop token, the base URL and [`Inner`].
pub(crate) type Shared = crate::fake_support::Host<FakeSlackConfig, Inner>;

impl Inner {
    /// A fresh id with Slack's look: `prefix` then 10 uppercase alphanumerics.
    pub fn take_id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{:010X}", self.next_id)
    }

    /// A fresh message timestamp, `1700000000.000001` and up (unique, increasing).
    pub fn take_ts(&mut self) -> String {
        self.next_ts += 1;
        format!(
            "{}.{:06}",
            1_700_000_000 + self.next_ts / 1_000_000,
            self.next_ts % 1_000_000
        )
    }

    pub fn take_ticket(&mut self) -> String {
        let ticket = self.take_id("tk");
        self.tickets.insert(ticket.clone());
        ticket
    }

    /// Registers a new connection: hello first, then every envelope not acked yet.
    pub fn open_conn(&mut self, tx: mpsc::UnboundedSender<Out>, hello: Value) -> u64 {
        self.next_conn += 1;
        self.connections += 1;
        let id = self.next_conn;
        let _ = tx.send(Out::Text(hello.to_string()));
        self.conns.insert(id, tx);
        self.current = Some(id);
        let pending: Vec<usize> = (0..self.envelopes.len())
            .filter(|i| !self.envelopes[*i].acked)
            .collect();
        for index in pending {
            self.send_envelope(index);
        }
        id
    }

    pub fn close_conn(&mut self, conn: u64) {
        self.conns.remove(&conn);
        if self.current == Some(conn) {
            self.current = self.conns.keys().next_back().copied();
        }
    }

    /// Tells every connection's task `out` (drop or stall) and forgets them all.
    pub fn end_all(&mut self, out: impl Fn() -> Out) -> usize {
        let conns = std::mem::take(&mut self.conns);
        self.current = None;
        for tx in conns.values() {
            let _ = tx.send(out());
        }
        conns.len()
    }

    /// Sends `text` to the current connection.
    pub fn send_current(&self, text: String) -> bool {
        self.current
            .and_then(|conn| self.conns.get(&conn))
            .is_some_and(|tx| tx.send(Out::Text(text)).is_ok())
    }

    /// Stores an envelope and sends it when a connection is open; returns its id.
    pub fn add_envelope(&mut self, id: String, frame: Value) -> String {
        self.envelopes.push(StoredEnvelope {
            id: id.clone(),
            frame,
            attempts: 0,
            acked: false,
        });
        self.send_envelope(self.envelopes.len() - 1);
        id
    }

    /// Sends envelope `index` to the current connection (a retry when it was sent
    /// before); `false` when no connection is open.
    pub fn send_envelope(&mut self, index: usize) -> bool {
        if self.current.is_none() {
            return false;
        }
        let Some(stored) = self.envelopes.get_mut(index) else {
            return false;
        };
        let mut frame = stored.frame.clone();
        frame["retry_attempt"] = stored.attempts.into();
        frame["retry_reason"] = if stored.attempts > 0 { "timeout" } else { "" }.into();
        stored.attempts += 1;
        let text = frame.to_string();
        self.send_current(text)
    }

    /// A client's `{"envelope_id": …}`.
    pub fn ack(&mut self, envelope_id: &str) {
        self.acks.push(envelope_id.to_owned());
        if let Some(stored) = self.envelopes.iter_mut().find(|e| e.id == envelope_id) {
            stored.acked = true;
        }
    }

    /// The first queued failure for `method` (consumed).
    pub fn take_failure(&mut self, method: &str) -> Option<Failure> {
        let index = self.failures.iter().position(|(m, _)| m == method)?;
        Some(self.failures.remove(index).1)
    }

    /// The DM channel of `user` (a stable new one when none is known).
    pub fn dm_channel(&mut self, user: &str) -> String {
        if let Some(channel) = self.dm_channels.get(user) {
            return channel.clone();
        }
        let channel = self.take_id("D");
        self.dm_channels.insert(user.to_owned(), channel.clone());
        channel
    }
}
