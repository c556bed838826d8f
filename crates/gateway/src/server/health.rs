//! The gateway's health: the payload the `health` method answers, and the refresh that keeps
//! the copy `hello-ok` and `health` events carry current. OpenClaw refreshes its health
//! snapshot every `HEALTH_REFRESH_INTERVAL_MS` (60 s, `src/gateway/server-constants.ts`) and
//! broadcasts every refresh as a `health` event with the health state version bumped
//! (`startGatewayMaintenanceTimers` in `src/gateway/server-maintenance.ts`); Pincer does the
//! same, and a `health` call that finds the payload changed publishes it at once.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::MissedTickBehavior;

use super::Gateway;
use super::channel_ingress::ChannelIngress;
use super::runtime::Runtime;
use super::state::Publish;

/// OpenClaw's health refresh interval.
pub const HEALTH_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// What `health` answers (OpenClaw's shape, see `reference/openclaw-wire.md`), with each
/// running channel's accounts as their supervisors see them.
pub fn payload(runtime: &dyn Runtime, channels: Option<&ChannelIngress>) -> Value {
    let agent = runtime.default_agent_id();
    let (channels, order) = channels.map_or_else(|| (json!({}), json!([])), channel_summary);
    json!({
        "ok": true,
        "ts": pincer_ai::now_ms(),
        "durationMs": 0,
        "channels": channels,
        "channelOrder": order,
        "heartbeatSeconds": 0,
        "defaultAgentId": agent,
        "agents": [{ "agentId": agent, "isDefault": true }],
        "agentRunner": runtime.runner_status(),
    })
}

/// `channels` (per channel: running when any account is connected, and the accounts) and
/// `channelOrder`.
fn channel_summary(ingress: &ChannelIngress) -> (Value, Value) {
    let mut channels = serde_json::Map::new();
    let mut order = Vec::new();
    for row in ingress.status().as_array().into_iter().flatten() {
        let Some(name) = row["channel"].as_str() else {
            continue;
        };
        let entry = channels.entry(name.to_owned()).or_insert_with(|| {
            order.push(json!(name));
            json!({ "configured": true, "running": false, "accounts": [] })
        });
        if row["connected"] == true {
            entry["running"] = json!(true);
        }
        if let Some(accounts) = entry["accounts"].as_array_mut() {
            accounts.push(row.clone());
        }
    }
    (Value::Object(channels), Value::Array(order))
}

/// Whether two payloads say different things: when they were taken (`ts`) and how long that
/// took (`durationMs`) always differ and are no news.
pub fn differs(a: &Value, b: &Value) -> bool {
    fn content(v: &Value) -> Value {
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            map.remove("ts");
            map.remove("durationMs");
        }
        v
    }
    content(a) != content(b)
}

/// Publishes a fresh payload every `every` until the gateway shuts down.
pub async fn refresh_every(gw: Arc<Gateway>, every: Duration) {
    // A zero period would make the timer panic.
    let every = every.max(Duration::from_millis(1));
    // The first tick one period from now: the startup snapshot is already published.
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    // After a stall, one refresh, not a burst of catch-up events.
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {
                let channels = gw.channels.get().map(|c| &**c);
                gw.state.publish_health(payload(&*gw.runtime, channels), Publish::Always);
            }
            () = gw.shutdown.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_content_changes_count() {
        let a = json!({"ok": true, "ts": 1, "durationMs": 3, "agents": []});
        assert!(!differs(
            &a,
            &json!({"ok": true, "ts": 9, "durationMs": 0, "agents": []})
        ));
        assert!(differs(
            &a,
            &json!({"ok": false, "ts": 1, "durationMs": 3, "agents": []})
        ));
    }
}
