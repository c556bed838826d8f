//! The conversation methods, in OpenClaw's shapes (`src/gateway/server-methods/chat.ts`,
//! `agent.ts`): `chat.send` (a turn on a session; `/new` starts the session over),
//! `chat.abort`, `chat.history`, `chat.inject`, `agent` (accepted at once, the final answer
//! once the run ends), `agent.wait` and `extension_ui_response` (a client's answer to a
//! run's dialog). Scopes are checked by the dispatcher in `mod.rs`.
//!
//! `chat.send` and `agent` take OpenClaw's `attachments` (`attachments.rs`): the files are
//! written into the agent's workspace inbox and the turn gets them. `chat.send` may then
//! have an empty `message` (OpenClaw's rule: a message or an attachment); `agent` needs one.
//!
//! `chat.inject {sessionKey, message, label?}` appends a note as an assistant message marked
//! the way OpenClaw marks gateway-injected ones (`provider: "openclaw"`, `model:
//! "gateway-injected"`, zero usage, `stopReason: "stop"`, text `[label]\n\n<message>`), so it
//! shows in `chat.history` and stays in the conversation's chain, then broadcasts it as a
//! `chat` event (`runId: "inject-<entryId>"`, `state: "final"`, `seq: 0`). It answers
//! `{ok: true, messageId}`; an unknown session is `INVALID_REQUEST` "session not found".

use std::sync::Arc;
use std::time::Duration;

use pincer_ai::{AssistantMessage, ContentBlock, Message, StopReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::frames::{MethodError, codes, ok_frame};
use super::super::runs::{RunState, Submitted, final_payload};
use super::super::runtime::{TurnOrigin, TurnRequest};
use super::answer_command;
use super::attachments::{self, Attachments};
use super::blocking;
use super::params::{Later, NonEmpty, parse};
use super::queue::{QueueFields, QueueModeParam, queue_fields, queue_mode_or};
use super::queue_mode_of;
use super::session_events::broadcast_message;
use super::sessions::announce;
use super::transcript_ids::with_identity;
use super::{Defaults, FrameSender, agent_of_key, payload};
use pincer_turns::commands::{self, Command};

/// How OpenClaw marks an assistant message the gateway wrote (not model output).
const INJECTED_API: &str = "openai-responses";
const INJECTED_PROVIDER: &str = "openclaw";
const INJECTED_MODEL: &str = "gateway-injected";

/// How long `agent.wait` waits when the request does not say.
const DEFAULT_WAIT_MS: u64 = 30_000;

/// The params of `chat.send`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatSendParams {
    session_key: NonEmpty,
    /// May be empty when `attachments` has something.
    message: String,
    /// The run's id; a retry with the same key finds the same run.
    idempotency_key: NonEmpty,
    queue_mode: Option<QueueModeParam>,
    /// Files sent with the message (see `attachments.rs`).
    attachments: Option<Attachments>,
    /// This turn's thinking level (`off|minimal|low|medium|high|xhigh`), above the
    /// session's `/think`.
    thinking: Option<String>,
}

/// `chat.send`'s answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatSendResponse {
    run_id: String,
    status: &'static str,
    /// Only when `/new` started the session over and nothing else was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(flatten)]
    queue: QueueFields,
}

pub(super) async fn send(gw: &Arc<Gateway>, p: &Value) -> Result<ChatSendResponse, MethodError> {
    let params: ChatSendParams = parse(p)?;
    let thinking = thinking_param(params.thinking.as_deref())?;
    let attached = params.attachments.unwrap_or_default();
    if params.message.trim().is_empty() && attached.is_empty() {
        return Err(MethodError::invalid("message or attachment required"));
    }
    let key = params.session_key.0;
    let mut message = params.message;
    let run_id = params.idempotency_key.0;
    let asked = params.queue_mode.is_some();
    let mode = queue_mode_or(params.queue_mode, gw.runs.queue_settings().mode);
    let agent_id = agent_of_key(gw, &key);
    match commands::parse(&message) {
        Some(Command::NewSession { rest }) => {
            let reset_key = key.clone();
            let session = gw
                .runtime
                .sessions(&agent_id)
                .run(move |s| blocking::reset(s, &reset_key))
                .await
                .map_err(|e| MethodError::unavailable(e.to_string()))?;
            gw.system_events.clear(&key);
            announce(gw, agent_id.clone(), &key, "new");
            match rest {
                None => {
                    let text = format!(
                        "New session started. sessionId={}",
                        session.entry.session_id
                    );
                    let mut answered = command_answered(gw, run_id, &key, &text);
                    answered.session_id = Some(session.entry.session_id);
                    return Ok(answered);
                }
                Some(rest) => message = rest,
            }
        }
        Some(command) => {
            let text = answer_command(gw, &agent_id, &key, &run_id, &message, command).await;
            return Ok(command_answered(gw, run_id, &key, &text));
        }
        None => {}
    }
    // A mode the request names wins; else the session's own (`/queue`), else the config's.
    let mode = if asked {
        mode
    } else {
        queue_mode_of(gw, &agent_id, &key, mode).await
    };
    let media = attachments::receive(gw, &run_id, &agent_id, attached).await?;
    let request = TurnRequest {
        agent_id,
        session_key: key,
        message,
        origin: TurnOrigin::User,
        media,
        thinking,
    };
    let submitted = gw
        .runs
        .submit(Arc::clone(&gw.runtime), &run_id, request, mode);
    Ok(ChatSendResponse {
        status: submitted.status(),
        queue: queue_fields(&submitted, mode),
        run_id,
        session_id: None,
    })
}

/// A chat command's answer as the run's `chat` final, and `chat.send`'s answer: settled
/// (`ok`), so the client reads the exchange back from the history.
fn command_answered(gw: &Gateway, run_id: String, key: &str, text: &str) -> ChatSendResponse {
    gw.runs.broadcast(
        "chat",
        json!({
            "runId": run_id, "sessionKey": key, "seq": 1, "state": "final",
            "stopReason": "stop",
            "message": { "role": "assistant", "content": [{ "type": "text", "text": text }] },
        }),
    );
    ChatSendResponse {
        run_id,
        status: "ok",
        session_id: None,
        queue: QueueFields::default(),
    }
}

/// The params of `chat.abort`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatAbortParams {
    session_key: NonEmpty,
    /// Only this run; all of the session's when absent.
    run_id: Option<String>,
}

#[derive(Serialize)]
pub(super) struct ChatAbortResponse {
    ok: bool,
    aborted: bool,
    count: usize,
}

pub(super) fn abort(gw: &Gateway, p: &Value) -> Result<ChatAbortResponse, MethodError> {
    let params: ChatAbortParams = parse(p)?;
    let count = gw.runs.abort(&params.session_key, params.run_id.as_deref());
    Ok(ChatAbortResponse {
        ok: true,
        aborted: count > 0,
        count,
    })
}

/// The params of `chat.history`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatHistoryParams {
    session_key: NonEmpty,
    /// The last this many messages (default 200, at most 1000).
    limit: Option<u64>,
}

/// `chat.history`'s answer; a session that does not exist yet has no `sessionId` and no
/// `thinkingLevel` (an existing one without a level says `null`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatHistoryResponse {
    session_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    /// Each with its identity (`__openclaw`, see `transcript_ids.rs`).
    messages: Vec<Value>,
    has_more: bool,
    total_messages: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: Option<Option<String>>,
    defaults: Defaults,
}

pub(super) async fn history(gw: &Gateway, p: &Value) -> Result<ChatHistoryResponse, MethodError> {
    let params: ChatHistoryParams = parse(p)?;
    let key = params.session_key.0;
    let limit = params.limit.unwrap_or(200).min(1000) as usize;
    let agent_id = agent_of_key(gw, &key);
    let store = gw.runtime.sessions(&agent_id);
    let read_key = key.clone();
    let read = store
        .run(move |s| blocking::history(s, &read_key))
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let defaults = Defaults::of(gw, &agent_id).await?;
    let Some((entry, mut messages)) = read else {
        return Ok(ChatHistoryResponse {
            session_key: key,
            session_id: None,
            messages: Vec::new(),
            has_more: false,
            total_messages: 0,
            thinking_level: None,
            defaults,
        });
    };
    let total = messages.len();
    let shown: Vec<Value> = messages
        .split_off(total.saturating_sub(limit))
        .into_iter()
        .map(|(message, identity)| match identity {
            Some(identity) => with_identity(&message, &identity),
            None => serde_json::to_value(&message).unwrap_or(Value::Null),
        })
        .collect();
    Ok(ChatHistoryResponse {
        session_key: key,
        session_id: Some(entry.session_id),
        has_more: shown.len() < total,
        messages: shown,
        total_messages: total,
        thinking_level: Some(entry.thinking_level),
        defaults,
    })
}

/// The params of `chat.inject`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChatInjectParams {
    session_key: NonEmpty,
    message: NonEmpty,
    /// Shown as a bracketed first line.
    label: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatInjectResponse {
    ok: bool,
    message_id: String,
}

pub(super) async fn inject(gw: &Gateway, p: &Value) -> Result<ChatInjectResponse, MethodError> {
    let params: ChatInjectParams = parse(p)?;
    let key = params.session_key.as_str();
    let label = params
        .label
        .as_deref()
        .map(str::trim)
        .filter(|l| !l.is_empty());
    let message = Message::Assistant(injected_message(&params.message, label));
    let agent_id = agent_of_key(gw, key);
    let (owned_key, appended, runs) = (key.to_owned(), message.clone(), Arc::clone(&gw.runs));
    // The session must exist; the append's own failure is told apart from the lookup's.
    let written = gw
        .runtime
        .sessions(&agent_id)
        .run(move |s| {
            let written = blocking::append(s, &owned_key, appended.clone())?;
            if let Some(Ok(identity)) = &written {
                broadcast_message(s, &runs, &agent_id, &owned_key, &appended, identity);
            }
            Ok::<_, pincer_store::StoreError>(written)
        })
        .await
        .map_err(|e| MethodError::unavailable(e.to_string()))?;
    let message_id = match written {
        None => return Err(MethodError::invalid("session not found")),
        Some(Err(e)) => {
            return Err(MethodError::unavailable(format!(
                "failed to write transcript: {e}"
            )));
        }
        Some(Ok(identity)) => identity.id,
    };
    gw.runs.broadcast(
        "chat",
        json!({
            "runId": format!("inject-{message_id}"), "sessionKey": key, "seq": 0,
            "state": "final", "message": message,
        }),
    );
    Ok(ChatInjectResponse {
        ok: true,
        message_id,
    })
}

/// A request's `thinking`: absent or blank is no override; an unknown level is refused.
fn thinking_param(level: Option<&str>) -> Result<Option<pincer_ai::ThinkingLevel>, MethodError> {
    match level.map(str::trim).filter(|l| !l.is_empty()) {
        None => Ok(None),
        Some(level) => super::super::runtime::parse_thinking(level)
            .map(Some)
            .map_err(MethodError::invalid),
    }
}

/// The note as OpenClaw stores it: an assistant message, the label as a bracketed first line.
pub(crate) fn injected_message(text: &str, label: Option<&str>) -> AssistantMessage {
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

/// The params of `agent`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentParams {
    message: NonEmpty,
    idempotency_key: NonEmpty,
    queue_mode: Option<QueueModeParam>,
    /// A configured agent; the default agent when absent.
    agent_id: Option<String>,
    /// `agent:<agentId>:explicit:<idempotencyKey>` when absent.
    #[serde(default)]
    session_key: Later<String>,
    /// Files sent with the message (see `attachments.rs`).
    attachments: Option<Attachments>,
    /// This turn's thinking level, as `chat.send`'s.
    thinking: Option<String>,
}

/// `agent`'s interim answer (the final one is the run's [`final_payload`]).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentAccepted<'a> {
    run_id: &'a str,
    agent_id: &'a str,
    status: &'static str,
    accepted_at: i64,
    /// What the busy session did (see `queue.rs`); absent when it ran at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    queue_status: Option<&'static str>,
    #[serde(flatten)]
    queue: QueueFields,
}

/// `agent`: accepted at once, then a second response with the same id once the run ends.
pub(super) async fn agent(
    gw: &Arc<Gateway>,
    request_id: &str,
    p: &Value,
    send: &FrameSender,
    watching: &super::Subscriptions,
) -> Result<Value, MethodError> {
    let params: AgentParams = parse(p)?;
    let thinking = thinking_param(params.thinking.as_deref())?;
    let message = params.message.0;
    let run_id = params.idempotency_key.0;
    let mode = queue_mode_or(params.queue_mode, gw.runs.queue_settings().mode);
    let agent_id = match params.agent_id {
        Some(id) if gw.runtime.is_known_agent(&id) => id,
        Some(id) => return Err(MethodError::invalid(format!("unknown agentId: {id}"))),
        None => gw.runtime.default_agent_id(),
    };
    let session_key = match params.session_key.read("sessionKey")? {
        Some(key) => key,
        None => format!("agent:{agent_id}:explicit:{}", run_id.to_lowercase()),
    };
    // Before the run starts, so none of its events is missed.
    watching.watch(&session_key);
    let attached = params.attachments.unwrap_or_default();
    let media = attachments::receive(gw, &run_id, &agent_id, attached).await?;
    let request = TurnRequest {
        agent_id: agent_id.clone(),
        session_key,
        message,
        origin: TurnOrigin::User,
        media,
        thinking,
    };
    let submitted = gw
        .runs
        .submit(Arc::clone(&gw.runtime), &run_id, request, mode);
    if let Submitted::Finished(result) = &submitted {
        return Ok(final_payload(&run_id, result));
    }
    // The interim answer stays `accepted` (the CLI's `--expect-final` waits past it); a busy
    // session's handling goes in `queueStatus` and the fields of `queue_fields`.
    let queue = queue_fields(&submitted, mode);
    let accepted = AgentAccepted {
        run_id: &run_id,
        agent_id: &agent_id,
        status: "accepted",
        accepted_at: submitted.accepted_at().unwrap_or_else(pincer_ai::now_ms),
        queue_status: (!queue.is_empty()).then(|| submitted.status()),
        queue,
    };
    send(ok_frame(request_id, payload(accepted)?));
    match gw.runs.wait(&run_id, Duration::from_secs(48 * 3600)).await {
        Some((RunState::Done(result), _)) => Ok(final_payload(&run_id, &result)),
        _ => Err(MethodError {
            code: codes::AGENT_TIMEOUT,
            message: format!("run {run_id} did not finish"),
            details: None,
        }),
    }
}

/// The params of `agent.wait`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentWaitParams {
    run_id: NonEmpty,
    /// How long to wait (default 30000).
    timeout_ms: Option<u64>,
}

/// `agent.wait`'s answer: `timeout` while the run goes on, else how it ended.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AgentWaitResponse {
    status: &'static str,
    started_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ended_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub(super) async fn wait(gw: &Gateway, p: &Value) -> Result<AgentWaitResponse, MethodError> {
    let params: AgentWaitParams = parse(p)?;
    let run_id = params.run_id.as_str();
    let timeout = Duration::from_millis(params.timeout_ms.unwrap_or(DEFAULT_WAIT_MS));
    let Some((state, started_at)) = gw.runs.wait(run_id, timeout).await else {
        return Err(MethodError::invalid(format!("unknown runId: {run_id}")));
    };
    Ok(match state {
        RunState::Running => AgentWaitResponse {
            status: "timeout",
            started_at,
            ended_at: None,
            error: None,
        },
        RunState::Done(r) => AgentWaitResponse {
            status: r.status.as_str(),
            started_at: r.started_at,
            ended_at: Some(r.ended_at),
            error: r.error.clone(),
        },
    })
}

/// `extension_ui_response`: one of `value`, `confirmed`, `cancelled` answers the dialog.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExtensionUiResponseParams {
    /// The dialog's id (from `extension_ui_request`).
    id: NonEmpty,
    value: Option<String>,
    confirmed: Option<bool>,
    cancelled: Option<bool>,
}

#[derive(Serialize)]
pub(super) struct ExtensionUiAnswered {
    id: String,
    answered: bool,
}

pub(super) fn extension_ui_response(
    gw: &Gateway,
    p: &Value,
) -> Result<ExtensionUiAnswered, MethodError> {
    let params: ExtensionUiResponseParams = parse(p)?;
    let (value, confirmed, cancelled) = (params.value, params.confirmed, params.cancelled);
    if value.is_none() && confirmed.is_none() && cancelled.is_none() {
        return Err(MethodError::invalid(
            "an answer needs value, confirmed or cancelled",
        ));
    }
    gw.runs
        .dialogs()
        .answer(&params.id, value, confirmed, cancelled)
        .map_err(|e| MethodError::invalid(e.to_string()))?;
    Ok(ExtensionUiAnswered {
        id: params.id.0,
        answered: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire<T: Serialize>(response: T) -> String {
        payload(response).map(|v| v.to_string()).unwrap_or_default()
    }

    fn defaults() -> Defaults {
        Defaults {
            model_provider: "p".into(),
            model: "m".into(),
            context_tokens: 7,
        }
    }

    #[test]
    fn answers_keep_their_wire_bytes_absent_and_null_fields() {
        let queue = QueueFields {
            queue_mode: Some("steer"),
            active_run_id: Some("r0".into()),
            ..QueueFields::default()
        };
        let sent = ChatSendResponse {
            run_id: "r1".into(),
            status: "steered",
            session_id: None,
            queue,
        };
        assert_eq!(
            wire(sent),
            r#"{"activeRunId":"r0","queueMode":"steer","runId":"r1","status":"steered"}"#
        );
        let waited = AgentWaitResponse {
            status: "timeout",
            started_at: 5,
            ended_at: None,
            error: None,
        };
        assert_eq!(wire(waited), r#"{"startedAt":5,"status":"timeout"}"#);
        let unknown = ChatHistoryResponse {
            session_key: "k".into(),
            session_id: None,
            messages: Vec::new(),
            has_more: false,
            total_messages: 0,
            thinking_level: None,
            defaults: defaults(),
        };
        assert_eq!(
            wire(unknown),
            r#"{"defaults":{"contextTokens":7,"model":"m","modelProvider":"p"},"hasMore":false,"messages":[],"sessionKey":"k","totalMessages":0}"#
        );
        let known = ChatHistoryResponse {
            session_key: "k".into(),
            session_id: Some("s".into()),
            messages: Vec::new(),
            has_more: false,
            total_messages: 0,
            thinking_level: Some(None),
            defaults: defaults(),
        };
        assert_eq!(
            wire(known),
            r#"{"defaults":{"contextTokens":7,"model":"m","modelProvider":"p"},"hasMore":false,"messages":[],"sessionId":"s","sessionKey":"k","thinkingLevel":null,"totalMessages":0}"#
        );
    }
}
