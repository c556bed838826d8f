//! The `status` method's heartbeat and channel summaries, in OpenClaw's shapes
//! (`src/commands/status.summary.ts`, `src/infra/channel-summary.ts`):
//! - `heartbeat.agents`: every known agent as `{agentId, enabled, every, everyMs,
//!   waitingForRoute}` from its running heartbeat clock (`every: "disabled"`, `everyMs: null`
//!   without one); `waitingForRoute` when its replies go to the chat its main session last
//!   heard from and it has heard from none yet;
//! - `channelSummary`: text lines, per running channel `"<Label>: configured"` and per
//!   account `"  - <account> (dm:<policy>, allow:<first two senders>)"`.

use std::collections::BTreeMap;

use pincer_automation::heartbeat::HeartbeatTarget;
use serde_json::{Value, json};

use super::Gateway;

/// `heartbeat.agents`.
pub(super) fn heartbeat_agents(gw: &Gateway) -> Vec<Value> {
    let mut ids = pincer_turns::router::known_agent_ids(gw.runtime.config());
    for (id, _) in gw.heartbeats.statuses() {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids.into_iter()
        .map(|agent_id| {
            let every_ms = gw
                .heartbeats
                .status(&agent_id)
                .map(|s| s.every_ms)
                .filter(|ms| *ms > 0);
            let Some(every_ms) = every_ms else {
                return json!({
                    "agentId": agent_id, "enabled": false, "every": "disabled",
                    "everyMs": null, "waitingForRoute": false,
                });
            };
            let waiting = waiting_for_route(gw, &agent_id);
            json!({
                "agentId": agent_id, "enabled": true, "every": every_text(every_ms),
                "everyMs": every_ms, "waitingForRoute": waiting,
            })
        })
        .collect()
}

/// Whether the agent's heartbeat would reply to "the chat it last heard from" and there is
/// none yet.
fn waiting_for_route(gw: &Gateway, agent_id: &str) -> bool {
    let key = gw.runtime.main_session_key(agent_id);
    let last = gw.channels.get().and_then(|c| c.last_route(&key));
    match gw.heartbeats.target(agent_id) {
        Some(HeartbeatTarget::Last) => last.is_none(),
        Some(HeartbeatTarget::Channel { channel, to: None }) => {
            last.is_none_or(|(c, ..)| c != channel)
        }
        _ => false,
    }
}

/// A period as the config writes it: `30m`, `1h`, `45s`.
pub fn every_text(ms: u64) -> String {
    const HOUR: u64 = 3_600_000;
    const MINUTE: u64 = 60_000;
    if ms.is_multiple_of(HOUR) {
        format!("{}h", ms / HOUR)
    } else if ms.is_multiple_of(MINUTE) {
        format!("{}m", ms / MINUTE)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// `channelSummary`: the running channels and their accounts, sorted.
pub(super) fn channel_summary(gw: &Gateway) -> Vec<Value> {
    let Some(channels) = gw.channels.get() else {
        return Vec::new();
    };
    let mut by_channel: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (channel, account) in channels.accounts() {
        let Some(access) = channels.access(&channel, account.as_deref()) else {
            continue;
        };
        let mut details = vec![format!("dm:{}", access.dm_policy.as_str())];
        let allow: Vec<&str> = access
            .allow_from
            .iter()
            .take(2)
            .map(String::as_str)
            .collect();
        if !allow.is_empty() {
            details.push(format!("allow:{}", allow.join(",")));
        }
        let label = account.as_deref().unwrap_or("default");
        by_channel
            .entry(channel)
            .or_default()
            .push(format!("  - {label} ({})", details.join(", ")));
    }
    by_channel
        .into_iter()
        .flat_map(|(channel, accounts)| {
            std::iter::once(format!("{}: configured", label_of(&channel))).chain(accounts)
        })
        .map(Value::String)
        .collect()
}

/// A channel's name as OpenClaw shows it.
fn label_of(channel: &str) -> String {
    match channel {
        "telegram" => "Telegram".to_owned(),
        "discord" => "Discord".to_owned(),
        "slack" => "Slack".to_owned(),
        "feishu" => "Feishu".to_owned(),
        other => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_read_as_the_config_writes_them() {
        assert_eq!(every_text(30 * 60_000), "30m");
        assert_eq!(every_text(24 * 3_600_000), "24h");
        assert_eq!(every_text(90_000), "90s");
        assert_eq!(every_text(1500), "1500ms");
    }
}
