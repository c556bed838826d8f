//! The protocol's system-event methods, in OpenClaw's shapes: `system-event` queues a line for
//! a session's next turn (OpenClaw: `src/gateway/server-methods/system.ts`), `wake` queues one
//! on the default agent's main session and, with mode `now`, asks for a heartbeat (OpenClaw:
//! `cron.wake` in `src/cron/service`). Scopes are checked by the dispatcher in `methods.rs`.
//!
//! Pincer answers OpenClaw's `{ok:true}` plus `sessionKey` (where the line went) and `queued`
//! (how many lines now wait there), so a caller can see a repeated line being dropped.

use serde_json::{Value, json};

use super::Gateway;
use super::frames::{MethodError, opt_str_param};
use crate::system_events::{Injected, SystemEventError};

/// Longest session key a caller may name (as `/hooks/agent`).
const MAX_SESSION_KEY: usize = 512;

/// `system-event {text, sessionKey?, agentId?, wake?}`: queues `text` for `sessionKey`, by
/// default the main session of `agentId` (default agent). `wake: true` also asks for a
/// heartbeat of the session's agent, as OpenClaw's.
pub(super) fn system_event(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let text = text_param(p)?;
    let agent_id = match opt_str_param(p, "agentId")?.map(str::trim) {
        Some(id) if gw.runtime.is_known_agent(id) => id.to_owned(),
        Some(id) => return Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        None => gw.runtime.default_agent_id(),
    };
    let (agent_id, session_key) = match opt_str_param(p, "sessionKey")?.map(str::trim) {
        Some(key) if !valid_session_key(key) => {
            return Err(MethodError::invalid(
                "sessionKey must be 1 to 512 characters without control characters",
            ));
        }
        Some(key) => (agent_of_key(gw, key).unwrap_or(agent_id), key.to_owned()),
        None => {
            let key = gw.runtime.main_session_key(&agent_id);
            (agent_id, key)
        }
    };
    let wake = match p.get("wake") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(MethodError::invalid("wake must be a boolean")),
    };
    let injected = inject(gw, &session_key, text)?;
    if wake {
        gw.heartbeats.request_now(&agent_id, "wake");
    }
    Ok(answer(&session_key, injected))
}

/// How soon a `wake` wants the agent to look at its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WakeMode {
    /// Ask for a heartbeat now.
    Now,
    /// Leave the event for the next scheduled heartbeat (or the next turn).
    NextHeartbeat,
}

impl WakeMode {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Now => "now",
            Self::NextHeartbeat => "next-heartbeat",
        }
    }
}

/// `wake {mode: "now"|"next-heartbeat", text}`: both required, as OpenClaw's schema has them.
pub(super) fn wake(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let text = text_param(p)?;
    let mode = match p.get("mode") {
        Some(Value::String(m)) if m == "now" => WakeMode::Now,
        Some(Value::String(m)) if m == "next-heartbeat" => WakeMode::NextHeartbeat,
        None | Some(Value::Null) => {
            return Err(MethodError::invalid(
                "missing parameter mode (now or next-heartbeat)",
            ));
        }
        Some(_) => return Err(MethodError::invalid("mode must be now or next-heartbeat")),
    };
    let (session_key, injected) = wake_main(gw, text, mode, "wake", true)?;
    Ok(answer(&session_key, injected))
}

/// What `wake` and `/hooks/wake` share: queue `text` on the default agent's main session
/// (trusted or not) and, for mode `now`, ask for a heartbeat giving `reason`. Returns the
/// session key and what the queue did.
pub(super) fn wake_main(
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

/// The required `text`: a string with something besides white space.
fn text_param(p: &Value) -> Result<&str, MethodError> {
    match p.get("text") {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            Err(MethodError::invalid("text required"))
        }
        Some(_) => Err(MethodError::invalid("text must be a string")),
    }
}

fn answer(session_key: &str, injected: Injected) -> Value {
    json!({ "ok": true, "sessionKey": session_key, "queued": injected.pending })
}

/// The agent a session key belongs to (`agent:<id>:…`) when that agent exists.
fn agent_of_key(gw: &Gateway, key: &str) -> Option<String> {
    let id = key.strip_prefix("agent:")?.split(':').next()?;
    gw.runtime.is_known_agent(id).then(|| id.to_owned())
}

/// A session key a caller named: bounded and printable, so it cannot smuggle control
/// characters into the queue's map or the logs.
fn valid_session_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_SESSION_KEY && !key.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_must_be_a_non_blank_string() {
        assert_eq!(text_param(&json!({"text": " hi "})).ok(), Some(" hi "));
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
    fn session_keys_callers_may_name() {
        assert!(valid_session_key("agent:main:telegram:direct:42"));
        assert!(!valid_session_key(""));
        assert!(!valid_session_key("a\u{7}b"));
        assert!(!valid_session_key(&"k".repeat(MAX_SESSION_KEY + 1)));
    }
}
