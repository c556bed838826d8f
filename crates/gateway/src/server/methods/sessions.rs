//! The session methods, in OpenClaw's shapes (`src/gateway/server-methods/sessions.ts`):
//! `sessions.list`, `sessions.patch` (the fields OpenClaw lets clients change; `null` clears
//! one), `sessions.reset` (a new transcript, the session's queued system events dropped),
//! `sessions.delete` (the transcript archived; refused while a run goes on) and
//! `sessions.compact`. Scopes are checked by the dispatcher in `mod.rs`. A patch, reset or
//! delete is announced to subscribers as `sessions.changed` (see `session_events.rs`).
//!
//! `sessions.compact {key, maxLines?}` keeps the header and the last `maxLines` (default 400)
//! entries of the transcript (see `transcript_trim.rs`), clears the token counts as OpenClaw
//! does, and answers `{ok, key, compacted, kept, archived?, reason?}`. A session with a turn
//! running or queued is refused with `UNAVAILABLE` (retry once it ends).

use std::path::PathBuf;
use std::sync::Arc;

use pincer_store::{SessionEntry, SessionStore};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::transcript_trim::{Trimmed, trim_transcript};
use super::blocking;
use super::params::{NonEmpty, parse};
use super::session_events::{Change, spawn_change};
use super::{Defaults, agent_of_key};

/// `sessions.compact`'s `maxLines` when none is given (OpenClaw's).
const DEFAULT_MAX_LINES: usize = 400;

/// What `sessions.patch` may change.
const PATCH_FIELDS: &[&str] = &[
    "label",
    "thinkingLevel",
    "verboseLevel",
    "model",
    "sendPolicy",
    "groupActivation",
    "memoryEnabled",
    "pinned",
    "unread",
];

/// What `sessions.patch` may change that must be `true` or `false` (or `null`).
const FLAG_FIELDS: &[&str] = &["pinned", "unread"];

/// The thinking levels a session may have.
const LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh"];

/// Every session of `store` with its index entry (read on the blocking pool).
pub(super) async fn all_sessions(
    store: &SessionStore,
) -> Result<Vec<(String, SessionEntry)>, MethodError> {
    store
        .run(blocking::list)
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))
}

/// The params of `sessions.list`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsListParams {
    /// The default agent's when absent.
    agent_id: Option<String>,
    /// At most this many (default 50, at most 1000).
    limit: Option<u64>,
    offset: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionsListResponse {
    ts: i64,
    path: PathBuf,
    count: usize,
    total_count: usize,
    limit_applied: usize,
    next_offset: usize,
    has_more: bool,
    defaults: Defaults,
    sessions: Vec<SessionRow>,
}

/// A session's index entry with its key and kind.
#[derive(Serialize)]
pub(super) struct SessionRow {
    #[serde(flatten)]
    entry: SessionEntry,
    key: String,
    kind: &'static str,
}

pub(super) async fn list(gw: &Gateway, p: &Value) -> Result<SessionsListResponse, MethodError> {
    let params: SessionsListParams = parse(p)?;
    let agent_id = match params.agent_id {
        Some(id) => id,
        None => gw.runtime.default_agent_id(),
    };
    let limit = params.limit.unwrap_or(50).min(1000) as usize;
    let offset = params.offset.unwrap_or(0) as usize;
    let store = gw.runtime.sessions(&agent_id);
    let all = all_sessions(&store).await?;
    let total = all.len();
    let sessions: Vec<SessionRow> = all
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(key, entry)| SessionRow {
            kind: session_kind(&key),
            key,
            entry,
        })
        .collect();
    let count = sessions.len();
    Ok(SessionsListResponse {
        ts: pincer_ai::now_ms(),
        path: store.index_path(),
        count,
        total_count: total,
        limit_applied: limit,
        next_offset: offset + count,
        has_more: offset + count < total,
        defaults: Defaults::of(gw, &agent_id).await?,
        sessions,
    })
}

pub(super) fn session_kind(key: &str) -> &'static str {
    match pincer_turns::router::parse_session_key(key).map(|k| k.kind()) {
        Ok(pincer_turns::router::SessionKind::Group) => "group",
        Ok(pincer_turns::router::SessionKind::Cron) => "cron",
        _ => "direct",
    }
}

/// `sessions.patch`: `key` and any of `label`, `thinkingLevel` (off, minimal, low, medium,
/// high, xhigh), `verboseLevel`, `model`, `sendPolicy`, `groupActivation`, `memoryEnabled`,
/// `pinned`, `unread` (kept on the index entry, so `sessions.list` rows show them);
/// `null` clears a field. `agentId` may name the session's own agent (the Control UI sends
/// it), never another; `expectedMarkedUnreadAt` is OpenClaw's race guard for `unread` and
/// is not checked. Any other field is refused.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsPatchParams {
    key: NonEmpty,
}

#[derive(Serialize)]
pub(super) struct SessionsPatchResponse {
    ok: bool,
    path: PathBuf,
    key: String,
    entry: SessionEntry,
}

pub(super) async fn patch(gw: &Gateway, p: &Value) -> Result<SessionsPatchResponse, MethodError> {
    let params: SessionsPatchParams = parse(p)?;
    let key = params.key.0;
    // The patch is the request's other fields, checked in the request's (sorted) order.
    let mut patch = serde_json::Map::new();
    for (name, value) in p.as_object().into_iter().flatten() {
        if name == "key" || name == "expectedMarkedUnreadAt" {
            continue;
        }
        if name == "agentId" {
            let own = agent_of_key(gw, &key);
            if value.as_str().map(pincer_turns::router::normalize_agent_id) != Some(own.clone()) {
                return Err(MethodError::invalid(format!(
                    "sessions.patch cannot move session {key} to another agent; its agent is {own}"
                )));
            }
            continue;
        }
        if FLAG_FIELDS.contains(&name.as_str()) && !(value.is_boolean() || value.is_null()) {
            return Err(MethodError::invalid(format!("{name} must be a boolean")));
        }
        if name == "pinned" {
            // When it was pinned, so clients can order pinned sessions.
            let at = (value == &Value::Bool(true)).then(pincer_ai::now_ms);
            patch.insert("pinnedAt".into(), json!(at));
        }
        if !PATCH_FIELDS.contains(&name.as_str()) {
            return Err(MethodError::invalid(format!(
                "sessions.patch cannot change {name}; it changes {}",
                PATCH_FIELDS.join(", ")
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
        // Stored normalized (`null` clears); anything else is refused, as OpenClaw does.
        let value = match name.as_str() {
            "sendPolicy" if !value.is_null() => {
                let policy = value.as_str().unwrap_or_default();
                json!(super::super::send_policy::normalize(policy).map_err(MethodError::invalid)?)
            }
            "groupActivation" if !value.is_null() => {
                let mode = value.as_str().unwrap_or_default();
                json!(
                    super::super::group_activation::normalize(mode)
                        .map_err(MethodError::invalid)?
                )
            }
            _ => value.clone(),
        };
        patch.insert(name.clone(), value);
    }
    let agent_id = agent_of_key(gw, &key);
    let store = gw.runtime.sessions(&agent_id);
    let patch_key = key.clone();
    let entry = store
        .run(move |s| blocking::patch(s, &patch_key, &Value::Object(patch)))
        .await
        .map_err(|e| MethodError::invalid(e.to_string()))?;
    announce(gw, agent_id, &key, "patch");
    Ok(SessionsPatchResponse {
        ok: true,
        path: store.index_path(),
        key,
        entry,
    })
}

/// The params of `sessions.reset` and `sessions.delete`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionKeyParams {
    key: NonEmpty,
}

#[derive(Serialize)]
pub(super) struct SessionsResetResponse {
    ok: bool,
    key: String,
    entry: SessionEntry,
}

pub(super) async fn reset(gw: &Gateway, p: &Value) -> Result<SessionsResetResponse, MethodError> {
    let key = parse::<SessionKeyParams>(p)?.key.0;
    let agent_id = agent_of_key(gw, &key);
    let store = gw.runtime.sessions(&agent_id);
    let reset_key = key.clone();
    let session = store
        .run(move |s| blocking::reset(s, &reset_key))
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    // OpenClaw discards a session's queued system events when it starts over.
    gw.system_events.clear(&key);
    announce(gw, agent_id, &key, "reset");
    Ok(SessionsResetResponse {
        ok: true,
        key,
        entry: session.entry,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SessionsDeleteResponse {
    ok: bool,
    key: String,
    deleted: bool,
    /// `null` when the session had no transcript.
    archived_to: Option<PathBuf>,
}

pub(super) async fn delete(gw: &Gateway, p: &Value) -> Result<SessionsDeleteResponse, MethodError> {
    let key = parse::<SessionKeyParams>(p)?.key.0;
    if gw.runs.abort(&key, None) > 0 {
        return Err(MethodError::unavailable(format!(
            "session {key} has a run going; abort it first"
        )));
    }
    let agent_id = agent_of_key(gw, &key);
    let store = gw.runtime.sessions(&agent_id);
    let archive_key = key.clone();
    let archived = store
        .run(move |s| blocking::archive(s, &archive_key))
        .await
        .map_err(|e| MethodError::invalid(e.to_string()))?;
    announce(gw, agent_id, &key, "delete");
    Ok(SessionsDeleteResponse {
        ok: true,
        key,
        deleted: true,
        archived_to: archived,
    })
}

/// Tells the subscribers that a method changed session `key` (`sessions.changed`).
pub(super) fn announce(gw: &Gateway, agent_id: String, key: &str, reason: &'static str) {
    let change = Change {
        agent_id,
        key: key.to_owned(),
        reason: Some(reason),
        phase: None,
    };
    spawn_change(&gw.runtime, &gw.runs, change);
}

/// The params of `sessions.compact`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsCompactParams {
    key: NonEmpty,
    /// Transcript entries to keep (default 400, at least 1).
    max_lines: Option<u64>,
}

#[derive(Serialize)]
pub(super) struct SessionsCompactResponse {
    ok: bool,
    key: String,
    compacted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    kept: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    archived: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
}

pub(super) async fn compact(
    gw: &Arc<Gateway>,
    p: &Value,
) -> Result<SessionsCompactResponse, MethodError> {
    let params: SessionsCompactParams = parse(p)?;
    let key = params.key.0;
    let max_lines = match params.max_lines {
        None => DEFAULT_MAX_LINES,
        Some(0) => return Err(MethodError::invalid("maxLines must be at least 1")),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let store = gw.runtime.sessions(&agent_of_key(gw, &key));
    // All of it reads and rewrites files, on the blocking pool; no turn may touch the
    // transcript meanwhile (one admitted meanwhile waits for this).
    gw.runs
        .on_idle_session(&key, store, move |store, key| {
            compact_idle(store, key, max_lines)
        })
        .await
        .map_err(|e| MethodError::unavailable(format!("the compaction's task failed: {e}")))?
        .unwrap_or_else(|| {
            Err(MethodError::unavailable(format!(
                "Session {key} is still active; try again in a moment."
            ))
            .with_details(json!({ "code": "SESSION_BUSY", "retryable": true })))
        })
}

/// `sessions.compact` on an idle session.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: sessions.compact"
)]
fn compact_idle(
    store: &pincer_store::SessionStore,
    key: &str,
    max_lines: usize,
) -> Result<SessionsCompactResponse, MethodError> {
    let answer = |compacted, kept, archived, reason| SessionsCompactResponse {
        ok: true,
        key: key.to_owned(),
        compacted,
        kept,
        archived,
        reason,
    };
    let known = store
        .entry(key)
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    if known.is_none() {
        return Ok(answer(false, None, None, Some("no sessionId")));
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
        Trimmed::AlreadyShort { kept } => answer(false, Some(kept), None, None),
        Trimmed::Truncated { kept, archived } => {
            // The counts described the long transcript (OpenClaw clears them too).
            let cleared = json!({ "inputTokens": null, "outputTokens": null, "totalTokens": null });
            if let Err(e) = store.patch(key, &cleared) {
                tracing::warn!(error = %e, key, "cannot clear token counts after compaction");
            }
            let archived = archived.to_string_lossy().into_owned();
            answer(true, Some(kept), Some(archived), None)
        }
    })
}
