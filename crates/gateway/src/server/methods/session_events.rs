//! OpenClaw's session events and who gets them: `sessions.changed` (a session was created,
//! patched, reset or deleted, or a run started or ended on it) and `session.message` (a
//! message was appended to a session's transcript). Only a connection that asked gets them:
//! `sessions.subscribe` subscribes it to both for every session, `sessions.messages.subscribe
//! {key}` to one session's `session.message` events ([`Subscriptions`], checked as the
//! connection forwards events).
//!
//! The same [`Subscriptions`] hold the sessions a connection watches, so a busy gateway does
//! not send every client every run's stream: once a connection named a session (`chat.history`,
//! `chat.startup`, `chat.send`, `agent`, `sessions.messages.subscribe`, `sessions.create` that
//! starts a run), it gets the `agent` and
//! `chat` events of the sessions it named only. One that never named any gets every session's,
//! as OpenClaw's gateway sends them, and so does one that named more than [`MAX_WATCHED`]. Every
//! other event is unaffected. `seq` stays gap-free: it counts the frames a connection is sent.
//!
//! Both carry the session as `sessions.list` shows it plus what OpenClaw adds for a live
//! session ([`LiveRow`]: `agentId`, `hasActiveRun`, `activeRunIds`, `status: "running"`
//! while one runs), as `session`, with the fields OpenClaw's clients read from the top level
//! (`sessionId`, `updatedAt`, `kind`, ...). A message carries OpenClaw's identity
//! (`__openclaw: {id, seq, runId?, idempotencyKey?}`; the entry id and its 1-based position
//! among the context's messages), the same one `chat.history` gives it (see
//! `transcript_ids.rs`).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pincer_store::{SessionEntry, SessionStore, StoreError};
use pincer_turns::turn::{AppendedMessage, MessageObserver};
use serde::Serialize;
use serde_json::{Value, json};

use super::super::runs::Runs;
use super::super::runtime::Runtime;
use super::sessions::session_kind;
use super::transcript_ids::{Identity, with_identity};

/// The events only subscribers get.
pub const SESSIONS_CHANGED: &str = "sessions.changed";
pub const SESSION_MESSAGE: &str = "session.message";

/// The run events sent only to the connections watching their session.
const RUN_EVENTS: [&str; 2] = ["agent", "chat"];

/// The most sessions a connection's watch list holds; naming more turns it back into a
/// connection that gets every session's run events (never one that misses any).
pub const MAX_WATCHED: usize = 64;

/// What one connection subscribed to.
#[derive(Debug, Default)]
pub struct Subscriptions {
    /// `sessions.subscribe`: every session's events.
    all: AtomicBool,
    /// `sessions.messages.subscribe`: these sessions' messages.
    keys: Mutex<HashSet<String>>,
    /// The sessions whose run events the connection gets.
    watched: Mutex<Watched>,
}

/// The sessions a connection named, lowercased (OpenClaw's keys are case-insensitive), in a
/// list: it is short, and matching needs no allocation per event.
#[derive(Debug, Default)]
struct Watched {
    keys: Vec<String>,
    /// It named more than [`MAX_WATCHED`]: every session's events again.
    overflowed: bool,
}

impl Watched {
    fn covers(&self, key: Option<&str>) -> bool {
        if self.keys.is_empty() || self.overflowed {
            return true;
        }
        // An event about no session in particular is everyone's.
        key.is_none_or(|key| self.keys.iter().any(|k| k.eq_ignore_ascii_case(key)))
    }
}

impl Subscriptions {
    pub(super) fn set_all(&self, on: bool) {
        self.all.store(on, Ordering::Relaxed);
    }

    fn keys(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn set_key(&self, key: &str, on: bool) {
        if on {
            self.keys().insert(key.to_owned());
        } else {
            self.keys().remove(key);
        }
    }

    fn watched(&self) -> std::sync::MutexGuard<'_, Watched> {
        self.watched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection named session `key` in a request that implies it watches it: from now
    /// on it gets the run events of the sessions it named only.
    pub fn watch(&self, key: &str) {
        let mut watched = self.watched();
        if watched.overflowed || watched.keys.iter().any(|k| k.eq_ignore_ascii_case(key)) {
            return;
        }
        if watched.keys.len() == MAX_WATCHED {
            watched.overflowed = true;
            watched.keys = Vec::new();
            return;
        }
        watched.keys.push(key.to_lowercase());
    }

    /// Whether the connection gets `event` (every other event goes to everyone).
    pub fn wants(&self, event: &str, payload: &Value) -> bool {
        if RUN_EVENTS.contains(&event) {
            let key = payload.get("sessionKey").and_then(Value::as_str);
            return self.watched().covers(key);
        }
        let all = self.all.load(Ordering::Relaxed);
        match event {
            SESSIONS_CHANGED => all,
            SESSION_MESSAGE => {
                all || payload
                    .get("sessionKey")
                    .and_then(Value::as_str)
                    .is_some_and(|key| self.keys().contains(key))
            }
            _ => true,
        }
    }
}

/// A session as `sessions.describe` and the session events show it: `sessions.list`'s row
/// (the index entry, `key`, `kind`) and what is live about it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LiveRow {
    #[serde(flatten)]
    pub entry: SessionEntry,
    pub key: String,
    pub kind: &'static str,
    pub agent_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    pub has_active_run: bool,
    pub active_run_ids: Vec<String>,
}

impl LiveRow {
    pub(super) fn new(key: &str, agent_id: &str, entry: SessionEntry, runs: &Runs) -> Self {
        let active_run_ids = runs.active_run_ids(key);
        Self {
            entry,
            key: key.to_owned(),
            kind: session_kind(key),
            agent_id: agent_id.to_owned(),
            status: (!active_run_ids.is_empty()).then_some("running"),
            has_active_run: !active_run_ids.is_empty(),
            active_run_ids,
        }
    }

    /// The fields OpenClaw's events repeat at their top level, and the row as `session`.
    fn snapshot(self) -> Value {
        let mut fields = json!({
            "sessionId": self.entry.session_id,
            "updatedAt": self.entry.updated_at,
            "kind": self.kind,
            "hasActiveRun": self.has_active_run,
            "activeRunIds": self.active_run_ids,
        });
        if let Some(status) = self.status {
            fields["status"] = json!(status);
        }
        fields["session"] = serde_json::to_value(&self).unwrap_or(Value::Null);
        fields
    }
}

/// The live row of `key`; `None` when the session does not exist.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: SessionStore::run and the turn's appends"
)]
pub(super) fn read_row(
    store: &SessionStore,
    runs: &Runs,
    agent_id: &str,
    key: &str,
) -> Result<Option<LiveRow>, StoreError> {
    Ok(store
        .entry(key)?
        .map(|entry| LiveRow::new(key, agent_id, entry, runs)))
}

/// What changed about a session.
#[derive(Debug, Clone)]
pub struct Change {
    pub agent_id: String,
    pub key: String,
    /// `create`, `new`, `reset`, `patch`, `delete` (a method's change), or `None` for a run.
    pub reason: Option<&'static str>,
    /// A run's `start`, `end` or `error`, with its id.
    pub phase: Option<(&'static str, String)>,
}

/// Sends `change` as `sessions.changed`, with the session's row read now (none after a
/// delete). Blocking: it reads the index.
pub fn broadcast_change(runtime: &dyn Runtime, runs: &Runs, change: Change) {
    let mut payload = json!({
        "sessionKey": change.key, "agentId": change.agent_id, "ts": pincer_ai::now_ms(),
    });
    if let Some(reason) = change.reason {
        payload["reason"] = json!(reason);
    }
    if let Some((phase, run_id)) = &change.phase {
        payload["phase"] = json!(phase);
        payload["runId"] = json!(run_id);
    }
    if change.reason != Some("delete") {
        let store = runtime.sessions(&change.agent_id);
        match read_row(&store, runs, &change.agent_id, &change.key) {
            Ok(Some(row)) => merge(&mut payload, row.snapshot()),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, key = change.key, "cannot read the changed session")
            }
        }
    }
    runs.broadcast(SESSIONS_CHANGED, payload);
}

/// [`broadcast_change`] from async code: the row is read on the blocking pool.
pub fn spawn_change(runtime: &Arc<dyn Runtime>, runs: &Arc<Runs>, change: Change) {
    let (runtime, runs) = (Arc::clone(runtime), Arc::clone(runs));
    tokio::task::spawn_blocking(move || broadcast_change(runtime.as_ref(), &runs, change));
}

/// The observer that sends each message a turn of `key` appends as `session.message`.
pub fn message_observer(
    runtime: &Arc<dyn Runtime>,
    runs: &Arc<Runs>,
    agent_id: &str,
    key: &str,
) -> MessageObserver {
    let store = runtime.sessions(agent_id);
    let (runs, agent_id, key) = (Arc::clone(runs), agent_id.to_owned(), key.to_owned());
    // The turn's first user message is the one its run sent.
    let user_seen = AtomicBool::new(false);
    Arc::new(move |appended: &AppendedMessage| {
        let is_user = matches!(appended.message, pincer_ai::Message::User(_));
        let sent_by_run = is_user && !user_seen.swap(true, Ordering::Relaxed);
        let identity = Identity {
            id: appended.entry_id.clone(),
            seq: Some(appended.seq),
            run_id: appended.run_id.clone(),
            sent_by_run,
        };
        broadcast_message(&store, &runs, &agent_id, &key, &appended.message, &identity);
    })
}

/// Sends `message`, appended to `key`'s transcript, as `session.message`. Blocking: it
/// reads the session's row.
pub(super) fn broadcast_message(
    store: &SessionStore,
    runs: &Runs,
    agent_id: &str,
    key: &str,
    message: &pincer_ai::Message,
    identity: &Identity,
) {
    let mut payload = json!({
        "sessionKey": key, "agentId": agent_id, "message": with_identity(message, identity),
        "messageId": identity.id,
    });
    if let Some(seq) = identity.seq {
        payload["messageSeq"] = json!(seq);
    }
    match read_row(store, runs, agent_id, key) {
        Ok(Some(row)) => merge(&mut payload, row.snapshot()),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, key, "cannot read the session of a message"),
    }
    if let Some(run_id) = &identity.run_id {
        payload["runId"] = json!(run_id);
    }
    runs.broadcast(SESSION_MESSAGE, payload);
}

fn merge(target: &mut Value, fields: Value) {
    if let (Value::Object(target), Value::Object(fields)) = (target, fields) {
        target.extend(fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_event(key: &str) -> Value {
        json!({ "runId": "r", "sessionKey": key, "seq": 1 })
    }

    #[test]
    fn a_connection_that_named_no_session_gets_every_run_s_events() {
        let subs = Subscriptions::default();
        assert!(subs.wants("agent", &run_event("agent:main:a")));
        assert!(subs.wants("chat", &run_event("agent:main:b")));
    }

    #[test]
    fn a_watching_connection_gets_its_sessions_run_events_only() {
        let subs = Subscriptions::default();
        subs.watch("agent:main:A");
        subs.watch("agent:main:c");
        assert!(subs.wants("agent", &run_event("agent:main:a")));
        assert!(subs.wants("chat", &run_event("AGENT:main:c")));
        assert!(!subs.wants("agent", &run_event("agent:main:b")));
        assert!(!subs.wants("chat", &run_event("agent:main:b")));
        // A run event about no session, and every other event, still reach it.
        assert!(subs.wants("chat", &json!({ "runId": "r" })));
        assert!(subs.wants("presence", &run_event("agent:main:b")));
        assert!(subs.wants("cron", &run_event("agent:main:b")));
        // Session events keep their own subscriptions.
        assert!(!subs.wants(SESSIONS_CHANGED, &run_event("agent:main:a")));
    }

    #[test]
    fn naming_more_than_the_bound_brings_every_session_back() {
        let subs = Subscriptions::default();
        for n in 0..MAX_WATCHED {
            subs.watch(&format!("agent:main:s{n}"));
        }
        subs.watch("agent:main:s0");
        assert!(!subs.wants("chat", &run_event("agent:main:other")));
        subs.watch("agent:main:one-more");
        assert!(subs.wants("chat", &run_event("agent:main:other")));
        assert_eq!(subs.watched().keys.len(), 0);
    }
}
