//! The protocol's system-event methods, in OpenClaw's shapes: `system-event` queues a line for
//! a session's next turn (OpenClaw: `src/gateway/server-methods/system.ts`), `wake` queues one
//! on the default agent's main session and, with mode `now`, asks for a heartbeat (OpenClaw:
//! `cron.wake` in `src/cron/service`). Scopes are checked by the dispatcher in `mod.rs`.
//! Also the gateway's read-only facts: `health`, `status`, `tools.list` and `config.get`
//! (secrets masked by the runtime).
//!
//! Pincer answers OpenClaw's `{ok:true}` plus `sessionKey` (where the line went) and `queued`
//! (how many lines now wait there), so a caller can see a repeated line being dropped.

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::on_blocking_pool;
use super::super::session_keys::{known_agent_of_key, valid_session_key};
use super::params::{Later, one_of, parse};
use pincer_automation::system_events::{Injected, SystemEventError};

/// `system-event {text, sessionKey?, agentId?, wake?}`: queues `text` for `sessionKey`, by
/// default the main session of `agentId` (default agent). `wake: true` also asks for a
/// heartbeat of the session's agent, as OpenClaw's.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SystemEventParams {
    text: Text,
    agent_id: Option<String>,
    /// 1 to 512 characters without control characters.
    #[serde(default)]
    session_key: Later<String>,
    #[serde(default)]
    wake: Later<bool>,
}

/// What `system-event` and `wake` answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Queued {
    ok: bool,
    session_key: String,
    queued: usize,
}

pub(super) fn system_event(gw: &Gateway, p: &Value) -> Result<Queued, MethodError> {
    let params: SystemEventParams = parse(p)?;
    let agent_id = match params.agent_id.as_deref().map(str::trim) {
        Some(id) if gw.runtime.is_known_agent(id) => id.to_owned(),
        Some(id) => return Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        None => gw.runtime.default_agent_id(),
    };
    let session_key = params.session_key.read("sessionKey")?;
    let (agent_id, session_key) = match session_key.as_deref().map(str::trim) {
        Some(key) if !valid_session_key(key) => {
            return Err(MethodError::invalid(
                "sessionKey must be 1 to 512 characters without control characters",
            ));
        }
        Some(key) => (
            known_agent_of_key(gw, key).unwrap_or(agent_id),
            key.to_owned(),
        ),
        None => {
            let key = gw.runtime.main_session_key(&agent_id);
            (agent_id, key)
        }
    };
    let wake = params.wake.read("wake")?.unwrap_or(false);
    let injected = inject(gw, &session_key, &params.text.0)?;
    if wake {
        gw.heartbeats.request_now(&agent_id, "wake");
    }
    Ok(answer(session_key, injected))
}

/// How soon a `wake` wants the agent to look at its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeMode {
    /// Ask for a heartbeat now.
    Now,
    /// Leave the event for the next scheduled heartbeat (or the next turn).
    NextHeartbeat,
}

impl WakeMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Now => "now",
            Self::NextHeartbeat => "next-heartbeat",
        }
    }
}

impl<'de> Deserialize<'de> for WakeMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        one_of(deserializer, "now or next-heartbeat", |m| match m {
            "now" => Some(Self::Now),
            "next-heartbeat" => Some(Self::NextHeartbeat),
            _ => None,
        })
    }
}

impl JsonSchema for WakeMode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WakeMode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "enum": ["now", "next-heartbeat"] })
    }
}

/// `wake {mode: "now"|"next-heartbeat", text}`: both required, as OpenClaw's schema has them.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WakeParams {
    text: Text,
    /// Required (absent is `missing parameter mode (now or next-heartbeat)`).
    mode: Option<WakeMode>,
}

pub(super) fn wake(gw: &Gateway, p: &Value) -> Result<Queued, MethodError> {
    let params: WakeParams = parse(p)?;
    let Some(mode) = params.mode else {
        return Err(MethodError::invalid(
            "missing parameter mode (now or next-heartbeat)",
        ));
    };
    let (session_key, injected) = wake_main(gw, &params.text.0, mode, "wake", true)?;
    Ok(answer(session_key, injected))
}

/// What `wake` and `/hooks/wake` share: queue `text` on the default agent's main session
/// (trusted or not) and, for mode `now`, ask for a heartbeat giving `reason`. Returns the
/// session key and what the queue did.
pub(crate) fn wake_main(
    gw: &Gateway,
    text: &str,
    mode: WakeMode,
    reason: &str,
    trusted: bool,
) -> Result<(String, Injected), MethodError> {
    let agent_id = gw.runtime.default_agent_id();
    let session_key = gw.runtime.main_session_key(&agent_id);
    let ts = gw.system_events.now_ms();
    let injected = if trusted {
        gw.system_events.inject(&session_key, text, ts)
    } else {
        gw.system_events.inject_untrusted(&session_key, text, ts)
    }
    .map_err(refused)?;
    if mode == WakeMode::Now {
        gw.heartbeats.request_now(&agent_id, reason);
    }
    Ok((session_key, injected))
}

fn inject(gw: &Gateway, session_key: &str, text: &str) -> Result<Injected, MethodError> {
    let ts = gw.system_events.now_ms();
    gw.system_events
        .inject(session_key, text, ts)
        .map_err(refused)
}

fn refused(e: SystemEventError) -> MethodError {
    match e {
        // OpenClaw's wording for a blank text.
        SystemEventError::EmptyText => MethodError::invalid("text required"),
        SystemEventError::MissingSessionKey => MethodError::invalid(e.to_string()),
    }
}

/// The required `text`: a string with something besides white space (OpenClaw's wording
/// when it is absent, `null` or blank).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_none<E: de::Error>(self) -> Result<Text, E> {
                Err(E::custom("text required"))
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Text, D::Error> {
                d.deserialize_str(self)
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                if v.trim().is_empty() {
                    return Err(E::custom("text required"));
                }
                Ok(Text(v.to_owned()))
            }
        }

        deserializer.deserialize_option(TextVisitor)
    }
}

impl JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Text".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "minLength": 1, "pattern": "\\S" })
    }
}

fn answer(session_key: String, injected: Injected) -> Queued {
    Queued {
        ok: true,
        session_key,
        queued: injected.pending,
    }
}

/// `health`: the payload, which also goes out as an event when it changed, so every
/// client's copy follows.
pub(super) fn health(gw: &Gateway) -> Value {
    let payload = super::super::health::payload(&*gw.runtime, gw.channels.get().map(|c| &**c));
    gw.state
        .publish_health(payload.clone(), super::super::state::Publish::IfChanged);
    payload
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StatusResponse {
    runtime_version: &'static str,
    uptime_ms: u64,
    running_runs: usize,
    heartbeat: HeartbeatStatus,
    channel_summary: Vec<Value>,
    queued_system_events: Vec<String>,
    /// Sections the runtime adds (see `Runtime::status_extras`).
    #[serde(flatten)]
    extras: serde_json::Map<String, Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct HeartbeatStatus {
    default_agent_id: String,
    agents: Vec<Value>,
}

/// `status`.
pub(super) fn status(gw: &Gateway) -> StatusResponse {
    let agent = gw.runtime.default_agent_id();
    StatusResponse {
        runtime_version: env!("CARGO_PKG_VERSION"),
        uptime_ms: gw.started.elapsed().as_millis() as u64,
        running_runs: gw.runs.running(),
        queued_system_events: gw
            .system_events
            .peek_texts(&gw.runtime.main_session_key(&agent)),
        heartbeat: HeartbeatStatus {
            default_agent_id: agent,
            agents: super::super::status_summary::heartbeat_agents(gw),
        },
        channel_summary: super::super::status_summary::channel_summary(gw),
        extras: gw.runtime.status_extras(),
    }
}

/// The params of `tools.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsListParams {
    /// The default agent's when absent.
    agent_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ToolsResponse {
    agent_id: String,
    tools: Vec<Value>,
}

pub(super) async fn tools(gw: &Gateway, p: &Value) -> Result<ToolsResponse, MethodError> {
    let params: ToolsListParams = parse(p)?;
    let agent_id = match params.agent_id {
        Some(id) => id,
        None => gw.runtime.default_agent_id(),
    };
    // Building an agent's tools may create its workspace: on the blocking pool.
    let agent = agent_id.clone();
    let tools = on_blocking_pool(&gw.runtime, move |runtime| runtime.tools(&agent))
        .await
        .map_err(|e| MethodError::unavailable(format!("the tools task failed: {e}")))?;
    Ok(ToolsResponse { tools, agent_id })
}

#[derive(Serialize)]
pub(super) struct ConfigResponse {
    path: String,
    exists: bool,
    valid: bool,
    config: Value,
}

/// `config.get` (the file is read on the blocking pool).
pub(super) async fn config(gw: &Gateway) -> Result<ConfigResponse, MethodError> {
    let (path, config) = on_blocking_pool(&gw.runtime, |runtime| runtime.config_redacted())
        .await
        .map_err(|e| MethodError::unavailable(format!("the config task failed: {e}")))?;
    Ok(ConfigResponse {
        path,
        exists: true,
        valid: true,
        config,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text_param(p: &Value) -> Result<String, MethodError> {
        parse::<WakeParams>(p).map(|w| w.text.0)
    }

    #[test]
    fn text_must_be_a_non_blank_string() {
        assert_eq!(
            text_param(&json!({"text": " hi "})).ok().as_deref(),
            Some(" hi ")
        );
        for bad in [json!({}), json!({"text": "  "}), json!({"text": null})] {
            assert_eq!(
                text_param(&bad).map_err(|e| e.message),
                Err("text required".to_owned())
            );
        }
        assert_eq!(
            text_param(&json!({"text": 5})).map_err(|e| e.message),
            Err("text must be a string".to_owned())
        );
    }

    #[test]
    fn wake_modes_are_now_or_next_heartbeat() {
        let mode = |p: Value| {
            parse::<WakeParams>(&p)
                .map(|w| w.mode)
                .map_err(|e| e.message)
        };
        assert_eq!(
            mode(json!({"text": "x", "mode": "now"})),
            Ok(Some(WakeMode::Now))
        );
        assert_eq!(mode(json!({"text": "x", "mode": null})), Ok(None));
        for bad in [json!("later"), json!(1)] {
            assert_eq!(
                mode(json!({"text": "x", "mode": bad})),
                Err("mode must be now or next-heartbeat".to_owned())
            );
        }
    }
}
