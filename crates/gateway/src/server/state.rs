//! The state every client mirrors: the presence list and the health snapshot, each with its
//! state version (OpenClaw's `stateVersion: {presence, health}`, both starting at 1 as in
//! OpenClaw's `health-state.ts`). A change bumps its version and goes out as an event whose
//! frame carries both versions: `presence {presence: [...]}` (OpenClaw's
//! `broadcastPresenceSnapshot`) or `health <payload>` (OpenClaw's `setBroadcastHealthUpdate`).
//!
//! One lock covers both, and events are sent while it is held, so frames leave in version order
//! and each carries the other version as it was. A joining connection subscribes to events
//! under the same lock as it takes its snapshot: every change is either in its `hello-ok` or in
//! an event it receives, never lost in between.
//!
//! Where OpenClaw and this differ: OpenClaw bumps the presence version when a client connects
//! but sends no `presence` event then (the others see the new row with the next event), and on
//! disconnect keeps the row as `reason: "disconnect"`; here a connect and a disconnect each send
//! the new list at once, and a closed connection's row is gone.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::frames::StateVersion;
use super::health;
use super::presence::{Presence, PresenceEntry};
use super::runs::{GatewayEvent, Runs};

/// When a health payload is sent to the clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publish {
    /// Every time (the periodic refresh, as OpenClaw's).
    Always,
    /// Only when it says something new (a `health` call).
    IfChanged,
}

/// What `hello-ok`'s `snapshot` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub presence: Value,
    pub health: Value,
    pub version: StateVersion,
}

/// A connection that joined: its snapshot and the events that come after it.
pub struct Joined {
    pub snapshot: Snapshot,
    pub events: broadcast::Receiver<Arc<GatewayEvent>>,
}

struct Inner {
    presence: Presence,
    health: Value,
    health_version: u64,
}

impl Inner {
    fn version(&self) -> StateVersion {
        StateVersion {
            presence: self.presence.version(),
            health: self.health_version,
        }
    }
}

/// Presence and health, shared by the connections.
pub struct SharedState {
    inner: Mutex<Inner>,
    runs: Arc<Runs>,
}

impl SharedState {
    /// State with only the gateway's presence row and `health` as the first snapshot; events go
    /// out through `runs`.
    pub fn new(gateway: PresenceEntry, health: Value, runs: Arc<Runs>) -> Self {
        Self {
            inner: Mutex::new(Inner {
                presence: Presence::new(gateway),
                health,
                health_version: 1,
            }),
            runs,
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Nothing under the lock can leave the data half-changed; a panic elsewhere while it
        // was held does not make it wrong.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Connection `conn_id` passed `connect` with `params`, from `peer`, granted `scopes`: adds
    /// its presence row (unless its client mode gets none) and tells the others, then takes
    /// its snapshot and subscribes it to what comes next.
    pub fn join(&self, conn_id: &str, params: &Value, peer: IpAddr, scopes: &[String]) -> Joined {
        let mut inner = self.inner();
        let now = pincer_ai::now_ms();
        let entry = PresenceEntry::client(params, peer, scopes, inner.presence.gateway_host(), now);
        if let Some(entry) = entry {
            inner.presence.add(conn_id, entry);
            self.send_presence(&inner, now);
        }
        // Subscribed after its own row's event: the snapshot already has it.
        let events = self.runs.subscribe();
        let snapshot = Snapshot {
            presence: inner.presence.list(now),
            health: inner.health.clone(),
            version: inner.version(),
        };
        Joined { snapshot, events }
    }

    /// Connection `conn_id` ended: drops its row and, when `announce`, tells the others
    /// (not while the gateway shuts down, when everyone is being disconnected anyway).
    pub fn leave(&self, conn_id: &str, announce: bool) {
        let mut inner = self.inner();
        if inner.presence.remove(conn_id).is_some() && announce {
            self.send_presence(&inner, pincer_ai::now_ms());
        }
    }

    /// The presence list (`system-presence`).
    pub fn presence(&self) -> Value {
        self.inner().presence.list(pincer_ai::now_ms())
    }

    /// The current state versions.
    #[cfg(test)]
    pub fn version(&self) -> StateVersion {
        self.inner().version()
    }

    /// Makes `payload` the health snapshot and sends it as a `health` event, bumping the
    /// health version, unless `when` is [`Publish::IfChanged`] and it says nothing new.
    /// Returns whether it was published.
    pub fn publish_health(&self, payload: Value, when: Publish) -> bool {
        let mut inner = self.inner();
        if when == Publish::IfChanged && !health::differs(&inner.health, &payload) {
            return false;
        }
        inner.health = payload;
        inner.health_version += 1;
        let event = GatewayEvent::versioned("health", inner.health.clone(), inner.version());
        self.runs.broadcast_event(event);
        true
    }

    fn send_presence(&self, inner: &Inner, now: i64) {
        let payload = json!({ "presence": inner.presence.list(now) });
        let event = GatewayEvent::versioned("presence", payload, inner.version());
        self.runs.broadcast_event(event);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn state() -> SharedState {
        SharedState::new(
            PresenceEntry::gateway("box".into(), 0),
            json!({"ok": true, "ts": 1}),
            Arc::new(Runs::new(1)),
        )
    }

    fn client(mode: &str) -> Value {
        json!({"client": {"id": "c", "mode": mode}})
    }

    #[test]
    fn joins_and_leaves_are_events_with_increasing_versions() {
        let state = state();
        let peer = "127.0.0.1".parse().unwrap();
        let first = state.join("c1", &client("ui"), peer, &[]);
        assert_eq!(
            first.snapshot.version,
            StateVersion {
                presence: 2,
                health: 1
            }
        );
        assert_eq!(first.snapshot.presence.as_array().unwrap().len(), 2);
        let mut events = first.events;
        let second = state.join("c2", &client("webchat"), peer, &[]);
        assert_eq!(second.snapshot.version.presence, 3);
        let event = events.try_recv().unwrap();
        assert_eq!(event.event, "presence");
        assert_eq!(event.state_version, Some(second.snapshot.version));
        assert_eq!(event.payload["presence"].as_array().unwrap().len(), 3);
        assert!(
            second.events.is_empty(),
            "a joining connection gets no event for its own row"
        );

        // A CLI client changes nothing.
        let cli = state.join("c3", &client("cli"), peer, &[]);
        assert_eq!(cli.snapshot.version.presence, 3);
        assert!(events.is_empty());
        state.leave("c3", true);
        assert!(events.is_empty());

        state.leave("c2", true);
        let event = events.try_recv().unwrap();
        assert_eq!(event.state_version.unwrap().presence, 4);
        assert_eq!(event.payload["presence"].as_array().unwrap().len(), 2);
        state.leave("c1", false);
        assert!(events.is_empty(), "no announcement while shutting down");
        assert_eq!(state.version().presence, 5);
        assert_eq!(state.presence().as_array().unwrap().len(), 1);
    }

    #[test]
    fn health_is_published_always_or_when_it_changed() {
        let state = state();
        let mut events = state.runs.subscribe();
        assert!(!state.publish_health(json!({"ok": true, "ts": 2}), Publish::IfChanged));
        assert!(events.is_empty());
        assert!(state.publish_health(json!({"ok": true, "ts": 3}), Publish::Always));
        assert!(state.publish_health(json!({"ok": false, "ts": 4}), Publish::IfChanged));
        let versions: Vec<u64> = (0..2)
            .map(|_| events.try_recv().unwrap().state_version.unwrap().health)
            .collect();
        assert_eq!(versions, [2, 3]);
        assert_eq!(state.version().health, 3);
    }
}
