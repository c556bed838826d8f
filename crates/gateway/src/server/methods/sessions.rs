//! Session methods that write a transcript without a turn, in OpenClaw's shapes
//! (`src/gateway/server-methods/chat.ts`, `sessions.ts`). Scopes are checked by the
//! dispatcher in `methods.rs`.
//!
//! - `chat.inject {sessionKey, message, label?}` appends a note as an assistant message
//!   marked the way OpenClaw marks gateway-injected ones (`provider: "openclaw"`, `model:
//!   "gateway-injected"`, zero usage, `stopReason: "stop"`, text `[label]\n\n<message>`), so
//!   it shows in `chat.history` and stays in the conversation's chain, then broadcasts it as
//!   a `chat` event (`runId: "inject-<entryId>"`, `state: "final"`, `seq: 0`). It answers
//!   `{ok: true, messageId}`; an unknown session is `INVALID_REQUEST` "session not found".
//! - `sessions.compact {key, maxLines?}` keeps the header and the last `maxLines` (default
//!   400) entries of the transcript (see `transcript_trim.rs`), clears the token counts as
//!   OpenClaw does, and answers `{ok, key, compacted, kept, archived?, reason?}`. A session
//!   with a turn running or queued is refused with `UNAVAILABLE` (retry once it ends).

use pincer_ai::{AssistantMessage, ContentBlock, Message, StopReason};
use serde_json::{Value, json};

use super::Gateway;
use super::frames::{MethodError, opt_str_param, opt_u64_param, str_param};
use super::transcript_trim::{Trimmed, trim_transcript};

/// `sessions.compact`'s `maxLines` when none is given (OpenClaw's).
const DEFAULT_MAX_LINES: usize = 400;

/// How OpenClaw marks an assistant message the gateway wrote (not model output).
const INJECTED_API: &str = "openai-responses";
const INJECTED_PROVIDER: &str = "openclaw";
const INJECTED_MODEL: &str = "gateway-injected";

/// `chat.inject`.
pub(super) fn chat_inject(gw: &Gateway, agent_id: &str, p: &Value) -> Result<Value, MethodError> {
    let key = str_param(p, "sessionKey")?;
    let text = str_param(p, "message")?;
    let label = opt_str_param(p, "label")?
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let store = gw.runtime.sessions(agent_id);
    let known = store
        .entry(key)
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    if known.is_none() {
        return Err(MethodError::invalid("session not found"));
    }
    let mut session = store
        .resume(key)
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let message = Message::Assistant(injected_message(text, label));
    let entry = session
        .transcript
        .append_message(message.clone())
        .map_err(|e| MethodError::unavailable(format!("failed to write transcript: {e}")))?;
    let message_id = entry.id.clone();
    gw.runs.broadcast(
        "chat",
        json!({
            "runId": format!("inject-{message_id}"), "sessionKey": key, "seq": 0,
            "state": "final", "message": message,
        }),
    );
    Ok(json!({ "ok": true, "messageId": message_id }))
}

/// The note as OpenClaw stores it: an assistant message, the label as a bracketed first line.
pub(super) fn injected_message(text: &str, label: Option<&str>) -> AssistantMessage {
    let text = match label {
        Some(label) => format!("[{label}]\n\n{text}"),
        None => text.to_owned(),
    };
    AssistantMessage {
        content: vec![ContentBlock::text(text)],
        api: INJECTED_API.into(),
        provider: INJECTED_PROVIDER.into(),
        model: INJECTED_MODEL.into(),
        stop_reason: StopReason::Stop,
        timestamp: pincer_ai::now_ms(),
        ..AssistantMessage::default()
    }
}

/// `sessions.compact`.
pub(super) fn sessions_compact(
    gw: &Gateway,
    agent_id: &str,
    p: &Value,
) -> Result<Value, MethodError> {
    let key = str_param(p, "key")?;
    let max_lines = match opt_u64_param(p, "maxLines")? {
        None => DEFAULT_MAX_LINES,
        Some(0) => return Err(MethodError::invalid("maxLines must be at least 1")),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let store = gw.runtime.sessions(agent_id);
    let compact = || -> Result<Value, MethodError> {
        let known = store
            .entry(key)
            .map_err(|e| MethodError::unavailable(e.to_string()))?;
        if known.is_none() {
            return Ok(
                json!({ "ok": true, "key": key, "compacted": false, "reason": "no sessionId" }),
            );
        }
        // Opening repairs a torn tail first, so only whole lines are counted and kept.
        let session = store
            .resume(key)
            .map_err(|e| MethodError::unavailable(e.to_string()))?;
        let path = session.transcript.path().to_path_buf();
        drop(session);
        let trimmed = trim_transcript(&path, max_lines, pincer_ai::now_ms())
            .map_err(|e| MethodError::unavailable(e.to_string()))?;
        Ok(match trimmed {
            Trimmed::AlreadyShort { kept } => {
                json!({ "ok": true, "key": key, "compacted": false, "kept": kept })
            }
            Trimmed::Truncated { kept, archived } => {
                // The counts described the long transcript (OpenClaw clears them too).
                let cleared =
                    json!({ "inputTokens": null, "outputTokens": null, "totalTokens": null });
                if let Err(e) = store.patch(key, &cleared) {
                    tracing::warn!(error = %e, key, "cannot clear token counts after compaction");
                }
                json!({
                    "ok": true, "key": key, "compacted": true, "kept": kept,
                    "archived": archived.to_string_lossy(),
                })
            }
        })
    };
    // No turn may touch the transcript meanwhile; one that is admitted waits for this.
    gw.runs.with_idle_session(key, compact).unwrap_or_else(|| {
        Err(MethodError::unavailable(format!(
            "Session {key} is still active; try again in a moment."
        ))
        .with_details(json!({ "code": "SESSION_BUSY", "retryable": true })))
    })
}
