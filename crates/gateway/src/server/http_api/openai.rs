//! OpenAI-compatible endpoints, shaped like OpenClaw's: the `model` field picks an agent
//! (`pincer`, `pincer/default`, `pincer/<agentId>`, and OpenClaw's `openclaw…`, `agent:<id>`
//! spellings); any other model id (such as the listed `provider/model`) goes to the default
//! agent. Only the last user message is the turn's input, because the session keeps the
//! history: `x-pincer-session-key` / `x-openclaw-session-key` names the session, else the
//! `user` field picks `agent:<id>:openai-user:<user>`, else each request gets a fresh one.
//!
//! The last user message may carry images (`image_url` parts: a `data:` URL or an
//! `http(s)://` one): they are checked and saved in the agent's workspace inbox before the
//! run starts, and the turn gets them as its media (`openai/media.rs`).
//!
//! Streaming forwards the run's `chat` delta events as `chat.completion.chunk`s. Events come
//! from the shared broadcast channel, which drops a subscriber that falls behind rather than
//! slowing the run; when that happens the rest of the reply is sent from the run's result.

pub(super) mod media;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::{authorize, count, fresh_id, known_agent_of_key, unix_secs, valid_session_key};
use crate::server::Gateway;
use crate::server::runs::{GatewayEvent, RunState, Started};
use crate::server::runtime::{TurnOrigin, TurnRequest, on_blocking_pool};
use crate::server::turn_events::{RunResult, RunStatus};

/// How long a completion may run before the request gives up (as the `agent` method).
pub(super) const RUN_WAIT: Duration = Duration::from_secs(48 * 3600);
/// Chunks buffered for a slow HTTP client before the forwarder waits.
pub(super) const CHUNK_BUFFER: usize = 64;
/// The model id that means "the default agent".
pub(super) const BASE_ID: &str = "pincer";

/// An error in OpenAI's shape: `{error: {message, type, code}}`.
pub(super) fn error(status: StatusCode, message: &str, kind: &str, code: &str) -> Response {
    let body = json!({ "error": { "message": message, "type": kind, "code": code } });
    (status, Json(body)).into_response()
}

pub(super) fn bad_request(message: &str, code: &str) -> Response {
    error(
        StatusCode::BAD_REQUEST,
        message,
        "invalid_request_error",
        code,
    )
}

/// The ids `/v1/models` lists: the agents, then the default agent's model (chosen on the
/// blocking pool: it reads the auth profiles).
async fn model_ids(gw: &Gateway) -> Vec<(String, String)> {
    let agent = gw.runtime.default_agent_id();
    let chosen_for = agent.clone();
    let defaults = on_blocking_pool(&gw.runtime, move |runtime| {
        runtime.model_defaults(&chosen_for)
    })
    .await
    .unwrap_or_default();
    let mut ids = vec![
        (BASE_ID.to_owned(), BASE_ID.to_owned()),
        (format!("{BASE_ID}/default"), BASE_ID.to_owned()),
        (format!("{BASE_ID}/{agent}"), BASE_ID.to_owned()),
    ];
    if !defaults.provider.is_empty() && !defaults.model.is_empty() {
        let id = format!("{}/{}", defaults.provider, defaults.model);
        ids.push((id, defaults.provider));
    }
    ids
}

fn model_object(id: &str, owner: &str) -> Value {
    json!({ "id": id, "object": "model", "created": 0, "owned_by": owner })
}

/// `GET /v1/models`.
pub(super) async fn models(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if let Err(denied) = authorize(&gw, &headers, &uri, peer) {
        return denied.openai();
    }
    let data: Vec<Value> = model_ids(&gw)
        .await
        .iter()
        .map(|(id, owner)| model_object(id, owner))
        .collect();
    Json(json!({ "object": "list", "data": data })).into_response()
}

/// `GET /v1/models/{id}` (ids contain `/`, hence the wildcard).
pub(super) async fn model(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(denied) = authorize(&gw, &headers, &uri, peer) {
        return denied.openai();
    }
    match model_ids(&gw)
        .await
        .into_iter()
        .find(|(known, _)| *known == id)
    {
        Some((id, owner)) => Json(model_object(&id, &owner)).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            &format!("The model '{id}' does not exist"),
            "invalid_request_error",
            "model_not_found",
        ),
    }
}

/// The agent a `model` field names: `Ok(None)` when it names none (the default agent
/// answers), `Err(id)` when it names an agent that does not exist.
pub(super) fn agent_of_model(gw: &Gateway, model: &str) -> Result<Option<String>, String> {
    let model = model.trim();
    if matches!(
        model,
        "" | BASE_ID | "pincer/default" | "openclaw" | "openclaw/default"
    ) {
        return Ok(None);
    }
    let named = ["pincer/", "pincer:", "openclaw/", "openclaw:", "agent:"]
        .iter()
        .find_map(|prefix| model.strip_prefix(prefix));
    match named {
        Some(id) if gw.runtime.is_known_agent(id) => Ok(Some(id.to_owned())),
        Some(id) => Err(id.to_owned()),
        None => Ok(None),
    }
}

/// The first non-empty value of any of `names`.
pub(super) fn header_value<'a>(headers: &'a HeaderMap, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|name| {
        headers
            .get(*name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    })
}

/// The text of a message's `content`: a string, or the text parts of an array.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text" | "input_text") => part.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The request body (the fields Pincer reads; others are ignored, as OpenClaw does).
#[derive(Debug, Deserialize)]
struct CompletionBody {
    model: Option<String>,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
    user: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

/// The JSON body of a `/v1/*` request and the media limits it was read with: room for one
/// file of the largest size, base64 encoded, and the text around it (a 413 past that, a
/// 400 for a body that is not the JSON asked for).
pub(super) async fn read_body<T: serde::de::DeserializeOwned>(
    gw: &Gateway,
    body: Body,
) -> Result<(T, pincer_turns::media_input::MediaLimits), Box<Response>> {
    let limits = gw.runtime.media_limits();
    let body_limit = usize::try_from(limits.media_max_bytes.div_ceil(3).saturating_mul(4))
        .unwrap_or(usize::MAX)
        .saturating_add(media::BODY_SLACK);
    let Ok(body) = axum::body::to_bytes(body, body_limit).await else {
        return Err(Box::new(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is over the limit of {} (one image of agents.defaults.mediaMaxMb, base64 encoded, and 1 MB of text)",
                pincer_turns::media_input::size_text(body_limit as u64)
            ),
            "invalid_request_error",
            "body_too_large",
        )));
    };
    match serde_json::from_slice(&body) {
        Ok(body) => Ok((body, limits)),
        Err(e) if e.is_syntax() || e.is_eof() => Err(Box::new(bad_request(
            &format!("invalid JSON body: {e}"),
            "invalid_json",
        ))),
        Err(e) => Err(Box::new(bad_request(
            &format!("invalid request body: {e}"),
            "invalid_body",
        ))),
    }
}

/// `POST /v1/chat/completions`.
pub(super) async fn chat_completions(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(denied) = authorize(&gw, &headers, &uri, peer) {
        return denied.openai();
    }
    let (body, limits): (CompletionBody, _) = match read_body(&gw, body).await {
        Ok(read) => read,
        Err(refused) => return *refused,
    };
    let last_user = body.messages.iter().rev().find(|m| m.role == "user");
    let image_urls = match last_user.map(|m| media::image_urls(&m.content)) {
        Some(Ok(urls)) => urls,
        Some(Err(refused)) => return refused.response(),
        None => Vec::new(),
    };
    // An image alone is a message (OpenClaw takes it too).
    let Some(input) = last_user
        .map(|m| text_of(&m.content))
        .filter(|t| !t.trim().is_empty() || !image_urls.is_empty())
    else {
        return bad_request(
            "Missing user message in `messages`.",
            "missing_user_message",
        );
    };
    let model = body.model.unwrap_or_else(|| BASE_ID.to_owned());
    let from_header = header_value(&headers, &["x-pincer-agent-id", "x-openclaw-agent-id"]);
    let agent = match from_header {
        Some(id) if gw.runtime.is_known_agent(id) => Ok(Some(id.to_owned())),
        Some(id) => Err(id.to_owned()),
        None => agent_of_model(&gw, &model),
    };
    let agent_id = match agent {
        Ok(agent) => agent.unwrap_or_else(|| gw.runtime.default_agent_id()),
        Err(id) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("unknown agent: {id}"),
                "invalid_request_error",
                "model_not_found",
            );
        }
    };
    let explicit = header_value(
        &headers,
        &["x-pincer-session-key", "x-openclaw-session-key"],
    );
    let user = body
        .user
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty());
    let (agent_id, session_key) = match (explicit, user) {
        (Some(key), _) if !valid_session_key(key) => {
            return bad_request("invalid session key header", "invalid_session_key");
        }
        (Some(key), _) => (
            known_agent_of_key(&gw, key).unwrap_or(agent_id),
            key.to_owned(),
        ),
        (None, Some(user)) if !valid_session_key(user) => {
            return bad_request("invalid `user`", "invalid_user");
        }
        (None, Some(user)) => {
            let key = format!("agent:{agent_id}:openai-user:{user}");
            (agent_id, key)
        }
        (None, None) => {
            let key = format!("agent:{agent_id}:openai:{}", fresh_id());
            (agent_id, key)
        }
    };
    // Checked (and fetched) before anything is saved; saved before the run starts.
    let media = match media::load(&image_urls, &limits).await {
        Ok(images) => media::save(&gw, &agent_id, images)
            .await
            .map_err(media::ImageError::from),
        Err(refused) => Err(refused),
    };
    let media = match media {
        Ok(media) => media,
        Err(refused) => return refused.response(),
    };
    let run_id = format!("chatcmpl-{}", fresh_id().replace('-', ""));
    let request = TurnRequest {
        agent_id,
        session_key,
        message: input,
        origin: TurnOrigin::User,
        media,
        thinking: None,
    };
    // Subscribe before the run starts so no delta is missed.
    let events = body.stream.then(|| gw.runs.subscribe());
    if !matches!(
        gw.runs.start(Arc::clone(&gw.runtime), &run_id, request),
        Started::New { .. }
    ) {
        // Run ids are fresh, so this means the generator repeated itself.
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "run id collision; retry",
            "api_error",
            "internal_error",
        );
    }
    match events {
        Some(events) => stream(gw, run_id, model, events),
        None => complete(&gw, &run_id, &model).await,
    }
}

/// Waits for the run and answers with a `chat.completion`.
async fn complete(gw: &Gateway, run_id: &str, model: &str) -> Response {
    let result = match gw.runs.wait(run_id, RUN_WAIT).await {
        Some((RunState::Done(result), _)) => result,
        _ => {
            return error(
                StatusCode::GATEWAY_TIMEOUT,
                "the run did not finish in time",
                "api_error",
                "timeout",
            );
        }
    };
    if let Some(response) = run_error(&result) {
        return response;
    }
    let usage = &result.usage;
    let prompt = count(usage, "input") + count(usage, "cacheRead") + count(usage, "cacheWrite");
    let completion = count(usage, "output");
    let total = match count(usage, "totalTokens") {
        0 => prompt + completion,
        n => n,
    };
    Json(json!({
        "id": run_id,
        "object": "chat.completion",
        "created": unix_secs(),
        "model": model,
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": result.text },
            "finish_reason": finish_reason(&result),
        }],
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total },
    }))
    .into_response()
}

fn finish_reason(result: &RunResult) -> &'static str {
    if result.stop_reason == "length" {
        "length"
    } else {
        "stop"
    }
}

/// A failed run as an error response: 502 when the model failed, 500 when the run could
/// not start (no provider was reached), 503 when it was aborted (shutdown or `chat.abort`).
fn run_error(result: &RunResult) -> Option<Response> {
    if result.status == RunStatus::Ok {
        return None;
    }
    let message = result.error.as_deref().unwrap_or("the run failed");
    Some(if result.aborted {
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            message,
            "api_error",
            "aborted",
        )
    } else if result.provider.is_empty() {
        error(
            StatusCode::INTERNAL_SERVER_ERROR,
            message,
            "api_error",
            "run_failed",
        )
    } else {
        error(
            StatusCode::BAD_GATEWAY,
            message,
            "api_error",
            "upstream_error",
        )
    })
}

/// Answers with SSE at once; a task forwards the run's deltas.
fn stream(
    gw: Arc<Gateway>,
    run_id: String,
    model: String,
    events: broadcast::Receiver<Arc<GatewayEvent>>,
) -> Response {
    let (tx, rx) = mpsc::channel::<Event>(CHUNK_BUFFER);
    tokio::spawn(forward(gw, run_id, model, events, tx));
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), rx))
    });
    Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// One `chat.completion.chunk` as an SSE event.
fn chunk(run_id: &str, model: &str, delta: Value, finish: Option<&str>) -> Event {
    let data = json!({
        "id": run_id,
        "object": "chat.completion.chunk",
        "created": unix_secs(),
        "model": model,
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    });
    Event::default().data(data.to_string())
}

/// Forwards run `run_id`'s text deltas, then the finish chunk (or an error) and `[DONE]`.
/// Returns early when the client has gone (a send fails); the run goes on and its reply is
/// kept in the session.
async fn forward(
    gw: Arc<Gateway>,
    run_id: String,
    model: String,
    mut events: broadcast::Receiver<Arc<GatewayEvent>>,
    tx: mpsc::Sender<Event>,
) {
    let role = chunk(&run_id, &model, json!({ "role": "assistant" }), None);
    if tx.send(role).await.is_err() {
        return;
    }
    // The text sent so far; once a delta was lost only the run's result is trusted.
    let mut sent = String::new();
    let mut lost = false;
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(_)) => {
                lost = true;
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let p = &event.payload;
        if event.event != "chat" || p["runId"] != run_id.as_str() {
            continue;
        }
        match p["state"].as_str() {
            Some("delta") if !lost => {
                let Some(delta) = p["deltaText"].as_str().filter(|d| !d.is_empty()) else {
                    continue;
                };
                sent.push_str(delta);
                let event = chunk(&run_id, &model, json!({ "content": delta }), None);
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            Some("final" | "error" | "aborted") => break,
            _ => {}
        }
    }
    drop(events);
    let Some((RunState::Done(result), _)) = gw.runs.wait(&run_id, RUN_WAIT).await else {
        let error = json!({ "error": { "message": "the run did not finish in time", "type": "api_error", "code": "timeout" } });
        let _ = tx.send(Event::default().data(error.to_string())).await;
        let _ = tx.send(Event::default().data("[DONE]")).await;
        return;
    };
    // Deltas this stream missed (it fell behind): the rest of the final reply.
    if let Some(rest) = result.text.strip_prefix(sent.as_str())
        && !rest.is_empty()
    {
        let event = chunk(&run_id, &model, json!({ "content": rest }), None);
        if tx.send(event).await.is_err() {
            return;
        }
    }
    let last = if result.status == RunStatus::Ok {
        chunk(&run_id, &model, json!({}), Some(finish_reason(&result)))
    } else {
        let kind = if result.aborted {
            "aborted"
        } else {
            "run_failed"
        };
        let message = result.error.as_deref().unwrap_or("the run failed");
        let error = json!({ "error": { "message": message, "type": "api_error", "code": kind } });
        Event::default().data(error.to_string())
    };
    if tx.send(last).await.is_ok() {
        let _ = tx.send(Event::default().data("[DONE]")).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_content() {
        assert_eq!(text_of(&json!("hi")), "hi");
        assert_eq!(
            text_of(
                &json!([{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "input_text", "text": "b"}])
            ),
            "a\nb"
        );
        assert_eq!(text_of(&Value::Null), "");
    }
}
