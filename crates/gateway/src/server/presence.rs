//! Who is connected, in OpenClaw's "system presence" shape (`src/infra/system-presence.ts`,
//! `PresenceEntrySchema` in the protocol's `schema/snapshot.ts`): an entry for the gateway
//! itself (`mode: "gateway"`, `reason: "self"`) and one per connection that passed `connect`,
//! built from its `client` params as OpenClaw's connect handler builds it. CLI, backend and
//! probe clients get none (OpenClaw's `isEphemeralGatewayClient`): every one-off
//! `openclaw gateway call` would otherwise add and drop a row.
//!
//! Entries are keyed by connection id (what OpenClaw does for user clients since it moved to one
//! row per connection). Unlike OpenClaw, which keeps a closed connection's row, marked
//! `reason: "disconnect"`, until a 5-minute TTL prunes it, a row here lives exactly as long as
//! its connection: the list says who is connected now, and its size is bounded by the open
//! connections, so no TTL or entry cap is needed.
//!
//! This is plain data: the lock, the version bumps' broadcasts and the snapshot consistency
//! live in `state.rs`.

use std::net::IpAddr;

use serde::Serialize;
use serde_json::Value;

/// Longest string kept from a client's `connect` params: an entry goes to every client in
/// every `presence` event, so one client must not be able to make them all large.
const MAX_FIELD_CHARS: usize = 256;

/// Client modes that get no entry (OpenClaw's ephemeral control-plane connections).
const EPHEMERAL_MODES: &[&str] = &["cli", "backend", "probe"];

/// One row of the presence list. The field set is OpenClaw's `PresenceEntrySchema`, which
/// allows no other properties, so Pincer adds none (the connection id stays internal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PresenceEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_family: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_identifier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    pub text: String,
    /// When the entry was last updated, ms since the epoch.
    pub ts: i64,
}

impl PresenceEntry {
    /// The gateway's own row (OpenClaw's `initSelfPresence`), without `ip`: OpenClaw's
    /// best-effort LAN address would need an interface listing this crate does not have.
    pub fn gateway(host: String, ts: i64) -> Self {
        let version = env!("CARGO_PKG_VERSION");
        Self {
            text: format!("Gateway: {host} · app {version} · mode gateway · reason self"),
            host: Some(host),
            ip: None,
            version: Some(version.to_owned()),
            platform: Some(platform()),
            device_family: Some(device_family().to_owned()),
            model_identifier: Some(arch().to_owned()),
            mode: Some("gateway".to_owned()),
            reason: Some("self".to_owned()),
            roles: Vec::new(),
            scopes: Vec::new(),
            instance_id: None,
            ts,
        }
    }

    /// The row of a connection whose `connect` params are `params`, from `peer`, granted
    /// `scopes`; `None` for clients that get no row. `default_host` names a client that gives
    /// neither `displayName` nor `id` (OpenClaw falls back on the gateway's host name).
    pub fn client(
        params: &Value,
        peer: IpAddr,
        scopes: &[String],
        default_host: &str,
        ts: i64,
    ) -> Option<Self> {
        let client = params.get("client");
        let field = |name: &str| {
            client
                .and_then(|c| c.get(name))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(bounded)
        };
        let mode = field("mode");
        if let Some(mode) = &mode
            && EPHEMERAL_MODES.iter().any(|m| m.eq_ignore_ascii_case(mode))
        {
            return None;
        }
        let host = field("displayName")
            .or_else(|| field("id"))
            .unwrap_or_else(|| default_host.to_owned());
        // A loopback peer is dropped: through an SSH tunnel every client looks like 127.0.0.1,
        // which says nothing (OpenClaw ignores local addresses the same way).
        let ip = peer.to_canonical();
        Some(Self {
            text: format!(
                "Node: {host} · mode {}",
                mode.as_deref().unwrap_or("unknown")
            ),
            host: Some(host),
            ip: (!ip.is_loopback()).then(|| ip.to_string()),
            version: field("version"),
            platform: field("platform"),
            device_family: field("deviceFamily"),
            model_identifier: field("modelIdentifier"),
            mode,
            reason: Some("connect".to_owned()),
            // `connect` refuses every role but operator.
            roles: vec!["operator".to_owned()],
            scopes: scopes.to_vec(),
            instance_id: field("instanceId"),
            ts,
        })
    }
}

/// The gateway's row and the connected clients' rows, with the presence state version.
#[derive(Debug, Clone)]
pub struct Presence {
    gateway: PresenceEntry,
    /// (connection id, row), oldest first.
    clients: Vec<(String, PresenceEntry)>,
    version: u64,
}

impl Presence {
    /// A list with only the gateway's row, at version 1 (OpenClaw's starting value).
    pub fn new(gateway: PresenceEntry) -> Self {
        Self {
            gateway,
            clients: Vec::new(),
            version: 1,
        }
    }

    /// The current state version.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The gateway's host name (the default `host` of a client row).
    pub fn gateway_host(&self) -> &str {
        self.gateway.host.as_deref().unwrap_or("gateway")
    }

    /// Adds (or replaces) connection `conn_id`'s row; returns the new version.
    pub fn add(&mut self, conn_id: &str, entry: PresenceEntry) -> u64 {
        self.clients.retain(|(id, _)| id != conn_id);
        self.clients.push((conn_id.to_owned(), entry));
        self.version += 1;
        self.version
    }

    /// Drops connection `conn_id`'s row; the new version, or `None` when it had none.
    pub fn remove(&mut self, conn_id: &str) -> Option<u64> {
        let before = self.clients.len();
        self.clients.retain(|(id, _)| id != conn_id);
        if self.clients.len() == before {
            return None;
        }
        self.version += 1;
        Some(self.version)
    }

    /// The list as clients get it: newest first, as OpenClaw sorts it by `ts`. The gateway's
    /// row leads with `ts` = `now`, as OpenClaw touches it on every listing; that is not a
    /// change, so the version stays.
    pub fn list(&self, now: i64) -> Value {
        let gateway = PresenceEntry {
            ts: now,
            ..self.gateway.clone()
        };
        let rows: Vec<&PresenceEntry> = std::iter::once(&gateway)
            .chain(self.clients.iter().rev().map(|(_, entry)| entry))
            .collect();
        serde_json::to_value(rows).unwrap_or_else(|_| Value::Array(Vec::new()))
    }
}

/// `s` cut to [`MAX_FIELD_CHARS`] characters.
fn bounded(s: &str) -> String {
    s.chars().take(MAX_FIELD_CHARS).collect()
}

/// This machine's name (Node's `os.hostname()`, which OpenClaw uses). Read once at startup.
#[expect(
    clippy::disallowed_methods,
    reason = "a procfs file, answered from kernel memory (never waits on a disk), read once at server start"
)]
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// OpenClaw's self `platform`: `linux <kernel release>`, else the OS's name.
#[expect(
    clippy::disallowed_methods,
    reason = "a procfs file, answered from kernel memory (never waits on a disk), read once at server start"
)]
fn platform() -> String {
    let os = std::env::consts::OS;
    match std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        Ok(release) if !release.trim().is_empty() => format!("{os} {}", release.trim()),
        _ => os.to_owned(),
    }
}

/// OpenClaw's self `deviceFamily`.
fn device_family() -> &'static str {
    match std::env::consts::OS {
        "macos" => "Mac",
        "windows" => "Windows",
        "linux" => "Linux",
        other => other,
    }
}

/// OpenClaw's self `modelIdentifier` off macOS: Node's `os.arch()` names.
fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn connect(client: Value) -> Value {
        json!({ "client": client, "auth": { "token": "t" } })
    }

    #[test]
    fn a_client_row_has_openclaws_fields() {
        let params = connect(json!({
            "id": "webchat", "displayName": "  Kitchen iPad ", "version": "2.1",
            "platform": "ios", "deviceFamily": "iPad", "modelIdentifier": "iPad13,1",
            "mode": "webchat", "instanceId": "inst-1",
        }));
        let scopes = vec!["operator.read".to_owned()];
        let entry =
            PresenceEntry::client(&params, "10.0.0.7".parse().unwrap(), &scopes, "gw", 42).unwrap();
        assert_eq!(
            serde_json::to_value(&entry).unwrap(),
            json!({
                "host": "Kitchen iPad", "ip": "10.0.0.7", "version": "2.1", "platform": "ios",
                "deviceFamily": "iPad", "modelIdentifier": "iPad13,1", "mode": "webchat",
                "reason": "connect", "roles": ["operator"], "scopes": ["operator.read"],
                "instanceId": "inst-1", "text": "Node: Kitchen iPad · mode webchat", "ts": 42,
            })
        );
    }

    #[test]
    fn loopback_peers_and_missing_fields_are_left_out() {
        let loopback: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        let entry = PresenceEntry::client(&connect(json!({})), loopback, &[], "gw", 1).unwrap();
        assert_eq!(
            serde_json::to_value(&entry).unwrap(),
            json!({"host": "gw", "reason": "connect", "roles": ["operator"],
                   "text": "Node: gw · mode unknown", "ts": 1})
        );
        let long = "x".repeat(1000);
        let entry = PresenceEntry::client(
            &connect(json!({"id": long})),
            "::1".parse().unwrap(),
            &[],
            "gw",
            1,
        )
        .unwrap();
        assert_eq!(entry.host.unwrap().len(), MAX_FIELD_CHARS);
    }

    #[test]
    fn cli_backend_and_probe_clients_get_no_row() {
        for mode in ["cli", "backend", "PROBE"] {
            let params = connect(json!({"id": "cli", "mode": mode}));
            let peer = "127.0.0.1".parse().unwrap();
            assert_eq!(PresenceEntry::client(&params, peer, &[], "gw", 1), None);
        }
    }

    #[test]
    fn the_list_is_the_gateway_then_clients_newest_first_and_changes_bump_the_version() {
        let mut presence = Presence::new(PresenceEntry::gateway("box".into(), 5));
        assert_eq!(presence.version(), 1);
        let peer = "127.0.0.1".parse().unwrap();
        let row = |id: &str, ts| {
            PresenceEntry::client(&connect(json!({"id": id})), peer, &[], "box", ts).unwrap()
        };
        assert_eq!(presence.add("c1", row("a", 10)), 2);
        assert_eq!(presence.add("c2", row("b", 11)), 3);
        let hosts = |list: Value| -> Vec<String> {
            list.as_array()
                .unwrap()
                .iter()
                .map(|e| e["host"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(hosts(presence.list(99)), ["box", "b", "a"]);
        assert_eq!(presence.list(99)[0]["ts"], 99);
        assert_eq!(presence.list(99)[0]["reason"], "self");
        assert_eq!(presence.remove("c1"), Some(4));
        assert_eq!(presence.remove("c1"), None, "a second removal is no change");
        assert_eq!(presence.version(), 4);
        assert_eq!(hosts(presence.list(99)), ["box", "b"]);
    }

    #[test]
    fn the_gateway_row_names_this_machine() {
        let entry = serde_json::to_value(PresenceEntry::gateway("box".into(), 7)).unwrap();
        assert_eq!(entry["mode"], "gateway");
        assert_eq!(entry["reason"], "self");
        assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(
            entry["text"],
            format!(
                "Gateway: box · app {} · mode gateway · reason self",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(
            entry["platform"]
                .as_str()
                .unwrap()
                .starts_with(std::env::consts::OS)
        );
        assert!(!host_name().is_empty());
    }
}
