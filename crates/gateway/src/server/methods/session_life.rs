//! The session methods OpenClaw's own clients (the TUI, the Control UI) need besides the
//! list and its edits (`sessions.rs`), in OpenClaw's shapes
//! (`src/gateway/server-methods/sessions-*.ts`):
//!
//! - `sessions.subscribe` / `sessions.unsubscribe`: this connection gets (or stops getting)
//!   `sessions.changed` and `session.message` for every session (see `session_events.rs`).
//!   With list params, the answer also carries the list (`{subscribed, list}`).
//! - `sessions.messages.subscribe` / `.unsubscribe {key}`: one session's `session.message`.
//!   `includeApprovals` replays the session's pending exec approvals (`approvalReplay`).
//! - `sessions.describe {key}`: `{session}`, the live row, or `null` for an unknown key.
//! - `sessions.create {key?, agentId?, parentSessionKey?, label?, message?, ...}`: a new
//!   session `agent:<agentId>:<key>` (a key already `agent:`-qualified is kept; none gives
//!   `agent:<agentId>:dashboard:<uuid>`), its parent noted in the entry; with a `message`,
//!   its first turn starts (`runStarted`, `runId`, `status`). Other fields OpenClaw's clients
//!   send (`succeedsParent`, `emitCommandHooks`, ...) are accepted and have no effect here.
//! - `sessions.resolve {key | sessionId | label, agentId?, allowMissing?}`: `{ok, key,
//!   agentId}`; not found is `INVALID_REQUEST "No session found: <x>"`, or `{ok: false}` with
//!   `allowMissing`.

use std::sync::Arc;

use pincer_store::SessionEntry;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::frames::MethodError;
use super::super::runtime::{TurnOrigin, TurnRequest};
use super::super::session_keys::valid_session_key;
use super::params::{NonEmpty, parse};
use super::queue::queue_mode_or;
use super::session_events::{Change, LiveRow, Subscriptions, read_row, spawn_change};
use super::{Caller, Defaults, agent_of_key, blocking, payload, sessions};

/// The params of `sessions.subscribe`: none, or `sessions.list`'s to get the list too.
#[derive(Deserialize, JsonSchema)]
#[expect(dead_code, reason = "checked here, read by sessions.list")]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsSubscribeParams {
    agent_id: Option<String>,
    limit: Option<u64>,
    offset: Option<u64>,
}

pub(super) async fn subscribe(
    gw: &Gateway,
    caller: &Caller,
    p: &Value,
) -> Result<Value, MethodError> {
    parse::<SessionsSubscribeParams>(p)?;
    caller.sessions.set_all(true);
    let asked_for_list = p.as_object().is_some_and(|o| !o.is_empty());
    if !asked_for_list {
        return Ok(json!({ "subscribed": true }));
    }
    let list = payload(sessions::list(gw, p).await?)?;
    Ok(json!({ "subscribed": true, "list": list }))
}

pub(super) fn unsubscribe(caller: &Caller) -> Value {
    caller.sessions.set_all(false);
    json!({ "subscribed": false })
}

/// The params of `sessions.messages.subscribe` and `sessions.messages.unsubscribe`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionMessagesParams {
    key: NonEmpty,
    agent_id: Option<String>,
    /// Replay the session's pending exec approvals.
    include_approvals: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MessagesSubscribed {
    subscribed: bool,
    key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_replay: Option<Value>,
}

pub(super) fn messages_subscribe(
    gw: &Gateway,
    caller: &Caller,
    p: &Value,
    on: bool,
) -> Result<MessagesSubscribed, MethodError> {
    let params: SessionMessagesParams = parse(p)?;
    let _ = params.agent_id;
    let key = params.key.0;
    caller.sessions.set_key(&key, on);
    let approval_replay = (on && params.include_approvals == Some(true)).then(|| {
        let approvals: Vec<Value> = gw
            .approvals
            .list()
            .iter()
            .filter(|a| a.request.session_key.as_deref() == Some(key.as_str()))
            .map(|a| a.entry_json())
            .collect();
        json!({
            "sessionKey": key, "updatedAtMs": pincer_ai::now_ms(), "approvals": approvals,
            "truncated": false,
        })
    });
    Ok(MessagesSubscribed {
        subscribed: on,
        key,
        approval_replay,
    })
}

/// The params of `sessions.describe`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsDescribeParams {
    key: NonEmpty,
    agent_id: Option<String>,
}

#[derive(Serialize)]
pub(super) struct Described {
    session: Option<LiveRow>,
}

pub(super) async fn describe(gw: &Arc<Gateway>, p: &Value) -> Result<Described, MethodError> {
    let params: SessionsDescribeParams = parse(p)?;
    let key = params.key.0;
    let agent_id = match params.agent_id {
        Some(id) if gw.runtime.is_known_agent(&id) => id,
        _ => agent_of_key(gw, &key),
    };
    let store = gw.runtime.sessions(&agent_id);
    let runs = Arc::clone(&gw.runs);
    let session = store
        .run(move |s| read_row(s, &runs, &agent_id, &key))
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    Ok(Described { session })
}

/// The params of `sessions.create`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsCreateParams {
    /// The new session's key; `agent:<agentId>:dashboard:<uuid>` when absent.
    key: Option<String>,
    /// The default agent (or the parent's) when absent.
    agent_id: Option<String>,
    parent_session_key: Option<String>,
    label: Option<String>,
    /// The first message: its turn starts at once.
    message: Option<String>,
    /// The first turn's run id (a fresh one when absent).
    idempotency_key: Option<String>,
    succeeds_parent: Option<bool>,
    emit_command_hooks: Option<bool>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Created {
    ok: bool,
    key: String,
    session_id: String,
    entry: SessionEntry,
    run_started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    resolved: Resolved,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Resolved {
    model_provider: String,
    model: String,
}

pub(super) async fn create(
    gw: &Arc<Gateway>,
    p: &Value,
    watching: &Subscriptions,
) -> Result<Created, MethodError> {
    let params: SessionsCreateParams = parse(p)?;
    let _ = (params.succeeds_parent, params.emit_command_hooks);
    let parent = params.parent_session_key.filter(|k| !k.trim().is_empty());
    let agent_id = match params.agent_id {
        Some(id) if gw.runtime.is_known_agent(&id) => id,
        Some(id) => return Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        None => match &parent {
            Some(parent) => agent_of_key(gw, parent),
            None => gw.runtime.default_agent_id(),
        },
    };
    let key = match params.key.map(|k| k.trim().to_owned()) {
        Some(k) if k.starts_with("agent:") => k,
        Some(k) if !k.is_empty() => format!("agent:{agent_id}:{k}"),
        _ => format!(
            "agent:{agent_id}:dashboard:{}",
            pincer_store::ids::session_id()
        ),
    };
    if !valid_session_key(&key) {
        return Err(MethodError::invalid(format!("invalid session key: {key}")));
    }
    let store = gw.runtime.sessions(&agent_id);
    let (new_key, label) = (key.clone(), params.label);
    let entry = store
        .run(move |s| blocking::create(s, &new_key, parent.as_deref(), label.as_deref()))
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))?
        .ok_or_else(|| MethodError::invalid(format!("session already exists: {key}")))?;
    let change = Change {
        agent_id: agent_id.clone(),
        key: key.clone(),
        reason: Some("create"),
        phase: None,
    };
    spawn_change(&gw.runtime, &gw.runs, change);
    let defaults = Defaults::of(gw, &agent_id).await?;
    let first = params.message.filter(|m| !m.trim().is_empty());
    let (run_id, status) = match first {
        None => (None, None),
        Some(message) => {
            let run_id = params
                .idempotency_key
                .unwrap_or_else(pincer_store::ids::session_id);
            let request = TurnRequest {
                agent_id,
                session_key: key.clone(),
                message,
                origin: TurnOrigin::User,
                media: Vec::new(),
                thinking: None,
            };
            let mode = queue_mode_or(None, gw.runs.queue_settings().mode);
            // The caller started it: it watches the session from before its first event.
            watching.watch(&key);
            let submitted = gw
                .runs
                .submit(Arc::clone(&gw.runtime), &run_id, request, mode);
            (Some(run_id), Some(submitted.status()))
        }
    };
    Ok(Created {
        ok: true,
        session_id: entry.session_id.clone(),
        key,
        entry,
        run_started: status == Some("started"),
        run_id,
        status,
        resolved: Resolved {
            model_provider: defaults.model_provider,
            model: defaults.model,
        },
    })
}

/// The params of `sessions.resolve`: one of `key`, `sessionId`, `label`, `shortId`,
/// `reference`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionsResolveParams {
    key: Option<String>,
    session_id: Option<String>,
    label: Option<String>,
    /// The Control UI's address of a session (`/chat/<agent>/<shortId>`): 8 to 32 hex digits,
    /// the start of the UUID its key ends with, without the dashes.
    short_id: Option<String>,
    /// The title slug of that address (`<slug>-<shortId>`); needs `shortId`. Pincer's
    /// sessions have no titles to match it against, so it narrows nothing.
    slug_hint: Option<String>,
    /// A session the app linked to by its key.
    reference: Option<SessionReference>,
    agent_id: Option<String>,
    /// Answer `{ok: false}` instead of an error when nothing matches.
    allow_missing: Option<bool>,
}

/// `sessions.resolve`'s `reference`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionReference {
    key: String,
}

pub(super) async fn resolve(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let params: SessionsResolveParams = parse(p)?;
    let short_id = given(&params.short_id);
    if params.slug_hint.is_some() && short_id.is_none() {
        return Err(MethodError::invalid("slugHint requires shortId"));
    }
    // A reference names its session by key, as `key` does.
    let reference = params.reference.as_ref().map(|r| r.key.trim());
    let (key, session_id, label) = (
        given(&params.key).or(reference.filter(|k| !k.is_empty())),
        given(&params.session_id),
        given(&params.label),
    );
    let asked = [
        given(&params.key).is_some(),
        reference.is_some(),
        session_id.is_some(),
        label.is_some(),
        short_id.is_some(),
    ]
    .into_iter()
    .filter(|given| *given)
    .count();
    if asked > 1 {
        return Err(MethodError::invalid(
            "Provide either key, sessionId, label, shortId, or reference (not multiple)",
        ));
    }
    if let Some(short_id) = short_id {
        return resolve_short_id(gw, &params, short_id).await;
    }
    let Some(wanted) = key.or(session_id).or(label).map(str::to_owned) else {
        return Err(MethodError::invalid(
            "Either key, sessionId, label, shortId, or reference is required",
        ));
    };
    let agent_id = match (&params.agent_id, key) {
        (Some(id), _) if gw.runtime.is_known_agent(id) => id.clone(),
        (_, Some(key)) => agent_of_key(gw, key),
        _ => gw.runtime.default_agent_id(),
    };
    let all = sessions::all_sessions(&gw.runtime.sessions(&agent_id)).await?;
    let matches: Vec<&String> = all
        .iter()
        .filter(|(k, entry)| match (key, session_id) {
            (Some(_), _) => **k == wanted,
            (None, Some(_)) => entry.session_id == wanted,
            (None, None) => entry.label.as_deref() == Some(wanted.as_str()),
        })
        .map(|(k, _)| k)
        .collect();
    match matches.as_slice() {
        [found] => Ok(json!({ "ok": true, "key": found, "agentId": agent_id })),
        [] if params.allow_missing == Some(true) => Ok(json!({ "ok": false })),
        [] if label.is_some() => Err(MethodError::invalid(format!(
            "No session found with label: {wanted}"
        ))),
        [] => Err(MethodError::invalid(format!("No session found: {wanted}"))),
        many => {
            let keys: Vec<&str> = many.iter().map(|k| k.as_str()).collect();
            Err(MethodError::invalid(format!(
                "Multiple sessions found for {wanted} ({})",
                keys.join(", ")
            )))
        }
    }
}

/// `sessions.resolve {shortId}` (OpenClaw's): the sessions whose key ends with a UUID that,
/// without its dashes, starts with `short_id`. One is the answer; several come back as
/// `{ok, ambiguous, candidates}` (at most 10) for the app to choose from.
async fn resolve_short_id(
    gw: &Gateway,
    params: &SessionsResolveParams,
    short_id: &str,
) -> Result<Value, MethodError> {
    if !(8..=32).contains(&short_id.len()) || !short_id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(MethodError::invalid(
            "shortId must be 8-32 hexadecimal characters",
        ));
    }
    let short_id = short_id.to_ascii_lowercase();
    let agent_id = match &params.agent_id {
        Some(id) if gw.runtime.is_known_agent(id) => id.clone(),
        _ => gw.runtime.default_agent_id(),
    };
    let all = sessions::all_sessions(&gw.runtime.sessions(&agent_id)).await?;
    let matches: Vec<&String> = all
        .iter()
        .map(|(k, _)| k)
        .filter(|k| key_uuid(k).is_some_and(|uuid| uuid.starts_with(&short_id)))
        .collect();
    match matches.as_slice() {
        [found] => Ok(json!({ "ok": true, "key": found, "agentId": agent_id })),
        [] if params.allow_missing == Some(true) => Ok(json!({ "ok": false })),
        [] => Err(MethodError::invalid(format!(
            "No session found: {short_id}"
        ))),
        many => {
            let candidates: Vec<Value> = many
                .iter()
                .take(10)
                .map(|k| json!({ "key": k, "agentId": agent_id }))
                .collect();
            Ok(json!({ "ok": true, "ambiguous": true, "candidates": candidates }))
        }
    }
}

/// The UUID a session key ends with (`agent:main:dashboard:<uuid>`), without its dashes and
/// lowercased, if it ends with one.
fn key_uuid(key: &str) -> Option<String> {
    let tail = key.get(key.len().checked_sub(36)?..)?;
    let is_uuid = tail.char_indices().all(|(i, c)| {
        if [8, 13, 18, 23].contains(&i) {
            c == '-'
        } else {
            c.is_ascii_hexdigit()
        }
    });
    is_uuid.then(|| tail.replace('-', "").to_ascii_lowercase())
}

/// A selector that was given and is not blank.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|s| !s.is_empty())
}
