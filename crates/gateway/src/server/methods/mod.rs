//! The protocol's methods: what each request does and the payload it answers with, in
//! OpenClaw's shapes (see `reference/openclaw-wire.md`). Side effects need the
//! `operator.write` scope; reads need `operator.read`.

use std::sync::Arc;
use std::time::Duration;

use pincer_ai::Message;
use serde_json::{Value, json};

use super::Gateway;
use super::frames::{
    MethodError, Request, codes, ok_frame, opt_str_param, opt_u64_param, str_param,
};
use super::methods_queue::{queue_fields, queue_mode_param, with_fields};
use super::runs::{RunState, Submitted, final_payload};
use super::runtime::{TurnOrigin, TurnRequest};
use crate::turn::{SessionCommand, session_command};

/// The methods this server answers (the `features.methods` of `hello-ok`).
pub const METHODS: &[&str] = &[
    "health",
    "status",
    "agent",
    "agent.wait",
    "chat.send",
    "chat.history",
    "chat.abort",
    "chat.inject",
    "sessions.list",
    "sessions.patch",
    "sessions.reset",
    "sessions.delete",
    "sessions.compact",
    "models.list",
    "tools.list",
    "config.get",
    "system-event",
    "system-presence",
    "wake",
    "last-heartbeat",
    "cron.status",
    "cron.list",
    "cron.add",
    "cron.update",
    "cron.remove",
    "cron.run",
    "cron.runs",
    "extension_ui_response",
    "channels.status",
    "pairing.list",
    "pairing.approve",
    "pairing.revoke",
];

/// The events this server sends.
pub const EVENTS: &[&str] = &[
    "connect.challenge",
    "agent",
    "chat",
    "presence",
    "tick",
    "shutdown",
    "health",
    "heartbeat",
    "cron",
    "extension_ui_request",
];

/// What a connection is allowed to do.
#[derive(Debug, Clone)]
pub struct Caller {
    pub scopes: Vec<String>,
}

impl Caller {
    /// Whether the caller has `scope` (see [`Caller::require`]).
    pub fn may(&self, scope: &str) -> bool {
        self.require(scope).is_ok()
    }

    /// `operator.admin` grants everything, `operator.write` also grants reading.
    fn require(&self, scope: &str) -> Result<(), MethodError> {
        let granted = |s: &String| {
            s == scope
                || s == "operator.admin"
                || (scope == "operator.read" && s == "operator.write")
        };
        if self.scopes.iter().any(granted) {
            return Ok(());
        }
        Err(MethodError {
            code: codes::FORBIDDEN,
            message: format!("missing scope: {scope}"),
            details: Some(json!({
                "code": "MISSING_SCOPE", "missingScope": scope, "requiredScopes": [scope],
            })),
        })
    }
}

/// Sends frames on the caller's connection (for interim responses).
pub type FrameSender = Arc<dyn Fn(String) + Send + Sync>;

/// Answers one request (after `connect`).
pub async fn call(
    gw: &Arc<Gateway>,
    caller: &Caller,
    req: &Request,
    send: &FrameSender,
) -> Result<Value, MethodError> {
    let p = &req.params;
    match req.method.as_str() {
        "health" => {
            caller.require("operator.read")?;
            let payload = super::health::payload(&*gw.runtime, gw.channels.get().map(|c| &**c));
            // Every client's copy follows: a health that changed goes out as an event now.
            gw.state
                .publish_health(payload.clone(), super::state::Publish::IfChanged);
            Ok(payload)
        }
        "system-presence" => {
            caller.require("operator.read")?;
            // OpenClaw answers the bare list.
            Ok(gw.state.presence())
        }
        "status" => {
            caller.require("operator.read")?;
            let agent = gw.runtime.default_agent_id();
            Ok(json!({
                "runtimeVersion": env!("CARGO_PKG_VERSION"),
                "uptimeMs": gw.started.elapsed().as_millis() as u64,
                "runningRuns": gw.runs.running(),
                "heartbeat": { "defaultAgentId": agent, "agents": [] },
                "channelSummary": [],
                "queuedSystemEvents": gw.system_events.peek_texts(&gw.runtime.main_session_key(&agent)),
            }))
        }
        "sessions.list" => {
            caller.require("operator.read")?;
            sessions_list(gw, p)
        }
        "chat.history" => {
            caller.require("operator.read")?;
            chat_history(gw, p)
        }
        "chat.send" => {
            caller.require("operator.write")?;
            let key = str_param(p, "sessionKey")?.to_owned();
            let mut message = str_param(p, "message")?.to_owned();
            let run_id = str_param(p, "idempotencyKey")?.to_owned();
            let mode = queue_mode_param(p, gw.runs.queue_settings().mode)?;
            let agent_id = agent_of_key(gw, &key);
            if let Some(SessionCommand::NewSession { rest }) = session_command(&message) {
                let session = gw
                    .runtime
                    .sessions(&agent_id)
                    .reset(&key)
                    .map_err(|e| MethodError::unavailable(e.to_string()))?;
                gw.system_events.clear(&key);
                let text = format!(
                    "New session started. sessionId={}",
                    session.entry.session_id
                );
                match rest {
                    None => {
                        gw.runs.broadcast(
                            "chat",
                            json!({
                                "runId": run_id, "sessionKey": key, "seq": 1, "state": "final",
                                "stopReason": "stop",
                                "message": { "role": "assistant", "content": [{ "type": "text", "text": text }] },
                            }),
                        );
                        return Ok(
                            json!({ "runId": run_id, "status": "ok", "sessionId": session.entry.session_id }),
                        );
                    }
                    Some(rest) => message = rest,
                }
            }
            let request = TurnRequest {
                agent_id,
                session_key: key,
                message,
                origin: TurnOrigin::User,
            };
            let submitted = gw
                .runs
                .submit(Arc::clone(&gw.runtime), &run_id, request, mode);
            Ok(with_fields(
                json!({ "runId": run_id, "status": submitted.status() }),
                queue_fields(&submitted, mode),
            ))
        }
        "chat.abort" => {
            caller.require("operator.write")?;
            let key = str_param(p, "sessionKey")?;
            let aborted = gw.runs.abort(key, opt_str_param(p, "runId")?);
            Ok(json!({ "ok": true, "aborted": aborted > 0, "count": aborted }))
        }
        "chat.inject" => {
            caller.require("operator.write")?;
            let agent_id = agent_of_key(gw, str_param(p, "sessionKey")?);
            super::methods_sessions::chat_inject(gw, &agent_id, p)
        }
        "agent" => {
            caller.require("operator.write")?;
            agent(gw, req, send).await
        }
        "sessions.patch" => {
            caller.require("operator.write")?;
            sessions_patch(gw, p)
        }
        "sessions.reset" => {
            caller.require("operator.write")?;
            let key = str_param(p, "key")?;
            let store = gw.runtime.sessions(&agent_of_key(gw, key));
            let session = store
                .reset(key)
                .map_err(|e| MethodError::unavailable(e.to_string()))?;
            // OpenClaw discards a session's queued system events when it starts over.
            gw.system_events.clear(key);
            Ok(json!({ "ok": true, "key": key, "entry": session.entry }))
        }
        "sessions.delete" => {
            caller.require("operator.write")?;
            let key = str_param(p, "key")?;
            if gw.runs.abort(key, None) > 0 {
                return Err(MethodError::unavailable(format!(
                    "session {key} has a run going; abort it first"
                )));
            }
            let store = gw.runtime.sessions(&agent_of_key(gw, key));
            let archived = store
                .archive(key)
                .map_err(|e| MethodError::invalid(e.to_string()))?;
            Ok(json!({ "ok": true, "key": key, "deleted": true, "archivedTo": archived }))
        }
        "sessions.compact" => {
            caller.require("operator.write")?;
            let agent_id = agent_of_key(gw, str_param(p, "key")?);
            super::methods_sessions::sessions_compact(gw, &agent_id, p)
        }
        "models.list" => {
            caller.require("operator.read")?;
            Ok(json!({ "models": gw.runtime.models() }))
        }
        "tools.list" => {
            caller.require("operator.read")?;
            let agent_id = match opt_str_param(p, "agentId")? {
                Some(id) => id.to_owned(),
                None => gw.runtime.default_agent_id(),
            };
            Ok(json!({ "agentId": agent_id, "tools": gw.runtime.tools(&agent_id) }))
        }
        "config.get" => {
            caller.require("operator.admin")?;
            let (path, config) = gw.runtime.config_redacted();
            Ok(json!({ "path": path, "exists": true, "valid": true, "config": config }))
        }
        "system-event" => {
            caller.require("operator.admin")?;
            super::methods_system::system_event(gw, p)
        }
        "wake" => {
            caller.require("operator.write")?;
            super::methods_system::wake(gw, p)
        }
        "cron.status" | "cron.list" | "cron.runs" => {
            caller.require("operator.read")?;
            super::methods_cron::call(gw, &req.method, p).await
        }
        "cron.add" | "cron.update" | "cron.remove" | "cron.run" => {
            // A job runs agent turns and may POST to any URL: admins only.
            caller.require("operator.admin")?;
            super::methods_cron::call(gw, &req.method, p).await
        }
        "channels.status" | "pairing.list" => {
            caller.require("operator.read")?;
            super::methods_channels::call(gw, &req.method, p).await
        }
        "pairing.approve" | "pairing.revoke" => {
            // Letting a stranger talk to the agent is an owner's decision.
            caller.require("operator.admin")?;
            super::methods_channels::call(gw, &req.method, p).await
        }
        "extension_ui_response" => {
            caller.require("operator.write")?;
            let id = str_param(p, "id")?;
            let value = opt_str_param(p, "value")?.map(str::to_owned);
            let flag = |name: &str| -> Result<Option<bool>, MethodError> {
                match p.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::Bool(b)) => Ok(Some(*b)),
                    Some(_) => Err(MethodError::invalid(format!("{name} must be a boolean"))),
                }
            };
            let (confirmed, cancelled) = (flag("confirmed")?, flag("cancelled")?);
            if value.is_none() && confirmed.is_none() && cancelled.is_none() {
                return Err(MethodError::invalid(
                    "an answer needs value, confirmed or cancelled",
                ));
            }
            gw.runs
                .dialogs()
                .answer(id, value, confirmed, cancelled)
                .map_err(|e| MethodError::invalid(e.to_string()))?;
            Ok(json!({ "id": id, "answered": true }))
        }
        "last-heartbeat" => {
            caller.require("operator.read")?;
            Ok(gw.heartbeats.last_event().unwrap_or(Value::Null))
        }
        "agent.wait" => {
            caller.require("operator.read")?;
            let run_id = str_param(p, "runId")?;
            let timeout = opt_u64_param(p, "timeoutMs")?.unwrap_or(30_000);
            let Some((state, started_at)) =
                gw.runs.wait(run_id, Duration::from_millis(timeout)).await
            else {
                return Err(MethodError::invalid(format!("unknown runId: {run_id}")));
            };
            Ok(match state {
                RunState::Running => json!({ "status": "timeout", "startedAt": started_at }),
                RunState::Done(r) => {
                    let mut out = json!({
                        "status": r.status.as_str(), "startedAt": r.started_at, "endedAt": r.ended_at,
                    });
                    if let Some(e) = &r.error {
                        out["error"] = json!(e);
                    }
                    out
                }
            })
        }
        other => Err(MethodError::invalid(format!("unknown method: {other}"))
            .with_details(json!({ "methods": METHODS }))),
    }
}

/// `sessions.patch`: the fields OpenClaw lets clients change; `null` clears one.
fn sessions_patch(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    const FIELDS: &[&str] = &[
        "label",
        "thinkingLevel",
        "verboseLevel",
        "model",
        "sendPolicy",
        "groupActivation",
        "memoryEnabled",
    ];
    const LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh"];
    let key = str_param(p, "key")?;
    let mut patch = serde_json::Map::new();
    for (name, value) in p.as_object().into_iter().flatten() {
        if name == "key" {
            continue;
        }
        if !FIELDS.contains(&name.as_str()) {
            return Err(MethodError::invalid(format!(
                "sessions.patch cannot change {name}; it changes {}",
                FIELDS.join(", ")
            )));
        }
        if name == "thinkingLevel"
            && let Some(level) = value.as_str()
            && !LEVELS.contains(&level)
        {
            return Err(MethodError::invalid(format!(
                "thinkingLevel {level:?} is not one of {}",
                LEVELS.join(", ")
            )));
        }
        patch.insert(name.clone(), value.clone());
    }
    let store = gw.runtime.sessions(&agent_of_key(gw, key));
    let entry = store
        .patch(key, &Value::Object(patch))
        .map_err(|e| MethodError::invalid(e.to_string()))?;
    Ok(json!({ "ok": true, "path": store.index_path(), "key": key, "entry": entry }))
}

/// The agent a session key belongs to (`agent:<id>:…`), else the default agent.
fn agent_of_key(gw: &Gateway, key: &str) -> String {
    match key
        .strip_prefix("agent:")
        .and_then(|rest| rest.split(':').next())
    {
        Some(id) if gw.runtime.is_known_agent(id) => id.to_owned(),
        _ => gw.runtime.default_agent_id(),
    }
}

/// `agent`: accepted at once, then a second response with the same id once the run ends.
async fn agent(gw: &Arc<Gateway>, req: &Request, send: &FrameSender) -> Result<Value, MethodError> {
    let p = &req.params;
    let message = str_param(p, "message")?.to_owned();
    let run_id = str_param(p, "idempotencyKey")?.to_owned();
    let mode = queue_mode_param(p, gw.runs.queue_settings().mode)?;
    let agent_id = match opt_str_param(p, "agentId")? {
        Some(id) if gw.runtime.is_known_agent(id) => id.to_owned(),
        Some(id) => return Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        None => gw.runtime.default_agent_id(),
    };
    let session_key = match opt_str_param(p, "sessionKey")? {
        Some(key) => key.to_owned(),
        None => format!("agent:{agent_id}:explicit:{}", run_id.to_lowercase()),
    };
    let request = TurnRequest {
        agent_id: agent_id.clone(),
        session_key,
        message,
        origin: TurnOrigin::User,
    };
    let submitted = gw
        .runs
        .submit(Arc::clone(&gw.runtime), &run_id, request, mode);
    if let Submitted::Finished(result) = &submitted {
        return Ok(final_payload(&run_id, result));
    }
    let accepted_at = submitted.accepted_at().unwrap_or_else(pincer_ai::now_ms);
    // The interim answer stays `accepted` (the CLI's `--expect-final` waits past it); a busy
    // session's handling goes in `queueStatus` and the fields of `queue_fields`.
    let mut busy = queue_fields(&submitted, mode);
    if !busy.is_empty() {
        busy.insert("queueStatus".into(), json!(submitted.status()));
    }
    send(ok_frame(
        &req.id,
        with_fields(
            json!({ "runId": run_id, "agentId": agent_id, "status": "accepted", "acceptedAt": accepted_at }),
            busy,
        ),
    ));
    match gw.runs.wait(&run_id, Duration::from_secs(48 * 3600)).await {
        Some((RunState::Done(result), _)) => Ok(final_payload(&run_id, &result)),
        _ => Err(MethodError {
            code: codes::AGENT_TIMEOUT,
            message: format!("run {run_id} did not finish"),
            details: None,
        }),
    }
}

fn sessions_list(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let agent_id = match opt_str_param(p, "agentId")? {
        Some(id) => id.to_owned(),
        None => gw.runtime.default_agent_id(),
    };
    let limit = opt_u64_param(p, "limit")?.unwrap_or(50).min(1000) as usize;
    let offset = opt_u64_param(p, "offset")?.unwrap_or(0) as usize;
    let store = gw.runtime.sessions(&agent_id);
    let all = store
        .list()
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let total = all.len();
    let sessions: Vec<Value> = all
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(key, entry)| {
            let mut v = serde_json::to_value(&entry).unwrap_or_else(|_| json!({}));
            v["key"] = json!(key);
            v["kind"] = json!(session_kind(&key));
            v
        })
        .collect();
    let count = sessions.len();
    let defaults = gw.runtime.model_defaults(&agent_id);
    Ok(json!({
        "ts": pincer_ai::now_ms(),
        "path": store.index_path(),
        "count": count,
        "totalCount": total,
        "limitApplied": limit,
        "nextOffset": offset + count,
        "hasMore": offset + count < total,
        "defaults": {
            "modelProvider": defaults.provider, "model": defaults.model,
            "contextTokens": defaults.context_tokens,
        },
        "sessions": sessions,
    }))
}

fn session_kind(key: &str) -> &'static str {
    match crate::router::parse_session_key(key).map(|k| k.kind()) {
        Ok(crate::router::SessionKind::Group) => "group",
        Ok(crate::router::SessionKind::Cron) => "cron",
        _ => "direct",
    }
}

fn chat_history(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let key = str_param(p, "sessionKey")?;
    let limit = opt_u64_param(p, "limit")?.unwrap_or(200).min(1000) as usize;
    let agent_id = agent_of_key(gw, key);
    let store = gw.runtime.sessions(&agent_id);
    let entry = store
        .entry(key)
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let defaults = gw.runtime.model_defaults(&agent_id);
    let defaults = json!({
        "modelProvider": defaults.provider, "model": defaults.model,
        "contextTokens": defaults.context_tokens,
    });
    let Some(entry) = entry else {
        return Ok(json!({
            "sessionKey": key, "messages": [], "hasMore": false, "totalMessages": 0,
            "defaults": defaults,
        }));
    };
    let session = store
        .resume(key)
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let messages: Vec<Message> = session.transcript.context();
    let total = messages.len();
    let shown = &messages[total.saturating_sub(limit)..];
    Ok(json!({
        "sessionKey": key,
        "sessionId": entry.session_id,
        "messages": shown,
        "hasMore": shown.len() < total,
        "totalMessages": total,
        "thinkingLevel": entry.thinking_level,
        "defaults": defaults,
    }))
}
