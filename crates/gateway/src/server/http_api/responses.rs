//! `POST /v1/responses`, the OpenAI Responses API as OpenClaw serves it: `model` picks the
//! agent as for chat completions (`http_api/openai.rs`), `input` is a string or a list of
//! items whose last `user` message is the turn's input (the session keeps the history, as
//! for chat completions; other items and roles are not replayed). A message's `content` is
//! a string or `input_text` / `input_image` parts; an image is given as OpenAI's
//! `image_url` (a `data:` or `http(s)://` URL) or OpenResponses' `source`
//! (`{type:"url", url}` or `{type:"base64", media_type, data}`) and goes through the same
//! checks and inbox as chat completion images (`openai/media.rs`); an `input_file` is saved
//! in the inbox too and read like any received file (`responses/files.rs`).
//!
//! The session: `x-pincer-session-key` / `x-openclaw-session-key`, else `user` picks
//! `agent:<id>:openresponses-user:<user>` (OpenClaw's key), else a fresh
//! `agent:<id>:openresponses:<id>`; `previous_response_id` naming one of the gateway's
//! recent responses continues that response's session instead. Not honoured yet:
//! `instructions` (OpenClaw adds it to the system prompt; a turn has no such seam here),
//! client `tools`.
//!
//! The answer is OpenClaw's response resource; streaming (`responses/stream.rs`) sends its
//! event sequence.

mod files;
mod stream;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::openai::{
    BASE_ID, RUN_WAIT, agent_of_model, bad_request, error, header_value, media, read_body,
};
use super::{authorize, count, fresh_id, known_agent_of_key, unix_secs, valid_session_key};
use crate::server::Gateway;
use crate::server::runs::{RunState, Started};
use crate::server::runtime::{TurnOrigin, TurnRequest};
use crate::server::turn_events::{RunResult, RunStatus};

/// The request body (the fields Pincer reads; others are ignored, as for chat completions).
#[derive(Debug, Deserialize)]
struct ResponsesBody {
    model: Option<String>,
    /// Checked by [`user_input`], for errors that name the item at fault.
    #[serde(default)]
    input: Value,
    #[serde(default)]
    stream: bool,
    user: Option<String>,
    previous_response_id: Option<String>,
}

/// The turn's input found in `input`: its text and the URLs of its images.
#[derive(Debug, Default, PartialEq)]
struct UserInput {
    text: String,
    image_urls: Vec<String>,
    files: Vec<files::FileSource>,
}

/// Why `input` was refused: a message and OpenAI's error code.
#[derive(Debug, PartialEq)]
struct InputError(String, &'static str);

impl InputError {
    fn body(message: String) -> Self {
        Self(message, "invalid_body")
    }
}

/// The last user message of `input` (a string is one), checked item by item.
fn user_input(input: &Value) -> Result<UserInput, InputError> {
    let items = match input {
        Value::String(text) => {
            return Ok(UserInput {
                text: text.clone(),
                ..UserInput::default()
            });
        }
        Value::Null => return Ok(UserInput::default()),
        Value::Array(items) => items,
        _ => {
            return Err(InputError::body(
                "`input` must be a string or a list of items".to_owned(),
            ));
        }
    };
    let mut last = None;
    for (i, item) in items.iter().enumerate() {
        let Value::Object(fields) = item else {
            return Err(InputError::body(format!("`input[{i}]` must be an object")));
        };
        // A message may leave out its type (OpenAI's "easy input message").
        match fields.get("type").map(|t| t.as_str()) {
            None | Some(Some("message")) => {}
            Some(Some(_)) => continue,
            Some(None) => {
                return Err(InputError::body(format!(
                    "`input[{i}].type` must be a string"
                )));
            }
        }
        let Some(role) = fields.get("role").and_then(Value::as_str) else {
            return Err(InputError::body(format!(
                "`input[{i}].role` must be a string"
            )));
        };
        let content = fields.get("content").unwrap_or(&Value::Null);
        if !matches!(content, Value::String(_) | Value::Array(_)) {
            return Err(InputError::body(format!(
                "`input[{i}].content` must be a string or a list of content parts"
            )));
        }
        if role == "user" {
            last = Some((i, content));
        }
    }
    match last {
        Some((i, content)) => message_input(i, content),
        None => Ok(UserInput::default()),
    }
}

/// The text and images of message `input[i]`'s `content`.
fn message_input(i: usize, content: &Value) -> Result<UserInput, InputError> {
    let parts = match content {
        Value::Array(parts) => parts,
        other => {
            return Ok(UserInput {
                text: other.as_str().unwrap_or_default().to_owned(),
                ..UserInput::default()
            });
        }
    };
    let mut texts = Vec::new();
    let mut image_urls = Vec::new();
    let mut files = Vec::new();
    for (j, part) in parts.iter().enumerate() {
        let at = format!("input[{i}].content[{j}]");
        match part.get("type").and_then(Value::as_str) {
            Some("input_text" | "text") => match part.get("text").and_then(Value::as_str) {
                Some(text) => texts.push(text),
                None => return Err(InputError::body(format!("`{at}.text` must be a string"))),
            },
            Some("input_image") => image_urls.push(image_url(part).ok_or_else(|| {
                InputError(
                    format!("`{at}` needs an image_url or a source (url or base64 data)"),
                    "invalid_image_url",
                )
            })?),
            Some("input_file") => files.push(files::source(part).ok_or_else(|| {
                InputError(
                    format!("`{at}` needs file_data, a file_url or a source (url or base64 data)"),
                    "invalid_file",
                )
            })?),
            Some(other) => {
                return Err(InputError::body(format!(
                    "`{at}`: unsupported content part type `{other}`"
                )));
            }
            None => return Err(InputError::body(format!("`{at}.type` must be a string"))),
        }
    }
    if image_urls.len() > media::MAX_IMAGE_PARTS {
        return Err(InputError(
            format!(
                "too many input_image parts ({}; limit {})",
                image_urls.len(),
                media::MAX_IMAGE_PARTS
            ),
            "too_many_images",
        ));
    }
    if files.len() > media::MAX_IMAGE_PARTS {
        return Err(InputError(
            format!(
                "too many input_file parts ({}; limit {})",
                files.len(),
                media::MAX_IMAGE_PARTS
            ),
            "too_many_files",
        ));
    }
    Ok(UserInput {
        text: texts.join("\n"),
        image_urls,
        files,
    })
}

/// An `input_image` part's URL: OpenAI's `image_url` (a string, or `{url}`), or
/// OpenResponses' `source`, whose base64 form becomes a `data:` URL.
fn image_url(part: &Value) -> Option<String> {
    let trimmed = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if let Some(url) = part.get("image_url") {
        return trimmed(url.get("url").unwrap_or(url));
    }
    let source = part.get("source")?;
    match source.get("type").and_then(Value::as_str)? {
        "url" => trimmed(source.get("url")?),
        "base64" => {
            let mime = trimmed(source.get("media_type")?)?;
            let data = trimmed(source.get("data")?)?;
            Some(format!("data:{mime};base64,{data}"))
        }
        _ => None,
    }
}

/// `POST /v1/responses`.
pub(super) async fn create(
    State(gw): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if let Err(denied) = authorize(&gw, &headers, &uri, peer) {
        return denied.openai();
    }
    let (body, limits): (ResponsesBody, _) = match read_body(&gw, body).await {
        Ok(read) => read,
        Err(refused) => return *refused,
    };
    let input = match user_input(&body.input) {
        Ok(input)
            if input.text.trim().is_empty()
                && input.image_urls.is_empty()
                && input.files.is_empty() =>
        {
            return bad_request("Missing user message in `input`.", "missing_user_message");
        }
        Ok(input) => input,
        Err(InputError(message, code)) => return bad_request(&message, code),
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
        Err(id) => return bad_request(&format!("unknown agent: {id}"), "model_not_found"),
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
    let previous = body
        .previous_response_id
        .as_deref()
        .and_then(|id| previous_session(&gw, id));
    let (agent_id, session_key) = match (previous, explicit, user) {
        (Some(key), _, _) => (known_agent_of_key(&gw, &key).unwrap_or(agent_id), key),
        (None, Some(key), _) if !valid_session_key(key) => {
            return bad_request("invalid session key header", "invalid_session_key");
        }
        (None, Some(key), _) => (
            known_agent_of_key(&gw, key).unwrap_or(agent_id),
            key.to_owned(),
        ),
        (None, None, Some(user)) if !valid_session_key(user) => {
            return bad_request("invalid `user`", "invalid_user");
        }
        (None, None, Some(user)) => {
            let key = format!("agent:{agent_id}:openresponses-user:{user}");
            (agent_id, key)
        }
        (None, None, None) => {
            let key = format!("agent:{agent_id}:openresponses:{}", fresh_id());
            (agent_id, key)
        }
    };
    // Checked (and fetched) before anything is saved; saved before the run starts.
    let images = match media::load(&input.image_urls, &limits).await {
        Ok(images) => images,
        Err(refused) => return refused.response(),
    };
    let loaded = match files::load(&input.files, &limits).await {
        Ok(files) => files,
        Err(refused) => return refused.response(),
    };
    let mut media = match media::save(&gw, &agent_id, images).await {
        Ok(media) => media,
        Err(failed) => return media::ImageError::from(failed).response(),
    };
    match media::save(&gw, &agent_id, loaded).await {
        Ok(saved) => media.extend(saved),
        Err(failed) => return files::FileError::from(failed).response(),
    }
    let ids = Ids {
        response: format!("resp_{}", fresh_id().replace('-', "")),
        item: format!("msg_{}", fresh_id().replace('-', "")),
        created_at: unix_secs(),
        model,
    };
    let request = TurnRequest {
        agent_id,
        session_key,
        message: input.text,
        origin: TurnOrigin::User,
        media,
        thinking: None,
    };
    // Subscribe before the run starts so no delta is missed.
    let events = body.stream.then(|| gw.runs.subscribe());
    if !matches!(
        gw.runs
            .start(Arc::clone(&gw.runtime), &ids.response, request),
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
        Some(events) => stream::respond(gw, ids, events),
        None => complete(&gw, &ids).await,
    }
}

/// The session of an earlier response of this endpoint, while the gateway still keeps its
/// run (the last finished runs); `None` for an unknown, unfinished or other kind of run,
/// which then gets the session it would have had (as OpenClaw does with an expired id).
fn previous_session(gw: &Gateway, response_id: &str) -> Option<String> {
    if !response_id.starts_with("resp_") {
        return None;
    }
    match gw.runs.state(response_id)? {
        (RunState::Done(result), _) if !result.session_key.is_empty() => {
            Some(result.session_key.clone())
        }
        _ => None,
    }
}

/// The identity of one response: its id, its message item's id, its time and model.
#[derive(Debug, Clone)]
struct Ids {
    response: String,
    item: String,
    created_at: i64,
    model: String,
}

/// The response resource (OpenClaw's fields): `output` and `usage` as given, `error` when
/// failed, `incomplete_details` when the reply was cut at the token limit.
fn resource(
    ids: &Ids,
    status: &str,
    output: Vec<Value>,
    usage: Value,
    error: Option<Value>,
) -> Value {
    let mut resource = json!({
        "id": ids.response,
        "object": "response",
        "created_at": ids.created_at,
        "status": status,
        "model": ids.model,
        "output": output,
        "usage": usage,
    });
    if let Some(error) = error {
        resource["error"] = error;
    }
    if status == "incomplete" {
        resource["incomplete_details"] = json!({ "reason": "max_output_tokens" });
    }
    resource
}

/// The assistant's message item with `text` (`status`: `in_progress`, `completed` or
/// `incomplete`).
fn message_item(ids: &Ids, text: &str, status: &str) -> Value {
    json!({
        "type": "message",
        "id": ids.item,
        "role": "assistant",
        "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        "phase": "final_answer",
        "status": status,
    })
}

/// A run's usage in the Responses API's shape (OpenClaw's buckets: cache reads and writes
/// count as input).
fn usage(usage: &Value) -> Value {
    let cache_read = count(usage, "cacheRead");
    let cache_write = count(usage, "cacheWrite");
    let input = count(usage, "input") + cache_read + cache_write;
    let output = count(usage, "output");
    json!({
        "input_tokens": input,
        "input_tokens_details": { "cached_tokens": cache_read, "cache_write_tokens": cache_write },
        "output_tokens": output,
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": (input + output).max(count(usage, "totalTokens")),
    })
}

fn no_usage() -> Value {
    usage(&Value::Null)
}

/// `completed`, or `incomplete` when the reply stopped at the token limit.
fn done_status(result: &RunResult) -> &'static str {
    if result.stop_reason == "length" {
        "incomplete"
    } else {
        "completed"
    }
}

/// A failed run: the HTTP status (502 when the model failed, 500 when no provider was
/// reached, 503 when aborted) and the `error` object.
fn failure(result: &RunResult) -> Option<(StatusCode, Value)> {
    if result.status == RunStatus::Ok {
        return None;
    }
    let message = result.error.as_deref().unwrap_or("the run failed");
    let (status, code) = if result.aborted {
        (StatusCode::SERVICE_UNAVAILABLE, "aborted")
    } else if result.provider.is_empty() {
        (StatusCode::INTERNAL_SERVER_ERROR, "run_failed")
    } else {
        (StatusCode::BAD_GATEWAY, "upstream_error")
    };
    Some((status, json!({ "code": code, "message": message })))
}

/// Waits for the run and answers with the response resource; a failed run is the failed
/// resource (OpenClaw's answer) with an error status.
async fn complete(gw: &Gateway, ids: &Ids) -> Response {
    let Some((RunState::Done(result), _)) = gw.runs.wait(&ids.response, RUN_WAIT).await else {
        return error(
            StatusCode::GATEWAY_TIMEOUT,
            "the run did not finish in time",
            "api_error",
            "timeout",
        );
    };
    if let Some((status, error)) = failure(&result) {
        let body = resource(ids, "failed", Vec::new(), usage(&result.usage), Some(error));
        return (status, Json(body)).into_response();
    }
    let status = done_status(&result);
    let output = vec![message_item(ids, &result.text, status)];
    Json(resource(ids, status, output, usage(&result.usage), None)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, urls: &[&str]) -> Result<UserInput, InputError> {
        Ok(UserInput {
            text: text.to_owned(),
            image_urls: urls.iter().map(|u| (*u).to_owned()).collect(),
            files: Vec::new(),
        })
    }

    #[test]
    fn the_last_user_message_is_the_input() {
        assert_eq!(user_input(&json!("hi")), ok("hi", &[]));
        assert_eq!(user_input(&Value::Null), ok("", &[]));
        let items = json!([
            {"role": "user", "content": "first"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
            {"type": "function_call_output", "call_id": "c", "output": "y"},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "a"},
                {"type": "input_image", "image_url": "data:image/png;base64,AA=="},
                {"type": "input_image", "source": {"type": "base64", "media_type": "image/png", "data": "BB=="}},
                {"type": "input_image", "source": {"type": "url", "url": "https://e.x/c.png"}},
                {"type": "input_text", "text": "b"},
            ]},
        ]);
        assert_eq!(
            user_input(&items),
            ok(
                "a\nb",
                &[
                    "data:image/png;base64,AA==",
                    "data:image/png;base64,BB==",
                    "https://e.x/c.png"
                ]
            )
        );
    }

    #[test]
    fn malformed_items_are_named() {
        let err = |input: Value| user_input(&input).unwrap_err();
        assert_eq!(
            err(json!(3)),
            InputError::body("`input` must be a string or a list of items".into())
        );
        assert_eq!(
            err(json!(["x"])),
            InputError::body("`input[0]` must be an object".into())
        );
        assert_eq!(
            err(json!([{"content": "x"}])),
            InputError::body("`input[0].role` must be a string".into())
        );
        assert_eq!(
            err(json!([{"role": "user", "content": 1}])),
            InputError::body(
                "`input[0].content` must be a string or a list of content parts".into()
            )
        );
        assert_eq!(
            err(json!([{"role": "user", "content": [{"type": "audio"}]}])),
            InputError::body("`input[0].content[0]`: unsupported content part type `audio`".into())
        );
        assert_eq!(
            err(json!([{"role": "user", "content": [{"type": "input_image"}]}])).1,
            "invalid_image_url"
        );
    }
}
