//! Rendering plans into each protocol's bytes: SSE framing helpers, per-protocol dispatch,
//! protocol-shaped error bodies and the deliberately broken frames used by faults.

mod anthropic;
mod bedrock;
mod google;
mod openai_chat;
mod openai_responses;
mod proxy;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::api::Api;
use crate::plan::Plan;
use crate::request::Delivery;
use crate::scenario::StopReason;

/// One protocol event, already framed for the wire.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub bytes: Bytes,
    /// The protocol's end-of-stream marker (dropped by the `omitDone` fault).
    pub is_final: bool,
}

impl Frame {
    fn new(bytes: Vec<u8>) -> Self {
        Self {
            bytes: Bytes::from(bytes),
            is_final: false,
        }
    }

    fn last(mut self) -> Self {
        self.is_final = true;
        self
    }
}

/// `data: {json}\n\n`.
fn sse_data(json: &Value) -> Frame {
    framed(None, json.to_string().as_bytes(), b"\n\n")
}

/// An event object serialized with its `type` key first, as the real APIs send it (serde_json
/// would otherwise sort the keys). Any `type` already in `body` is replaced.
fn typed(kind: &str, mut body: Value) -> String {
    let kind = Value::from(kind).to_string();
    if let Some(map) = body.as_object_mut() {
        map.remove("type");
        if !map.is_empty() {
            let rest = body.to_string();
            return format!("{{\"type\":{kind},{}", &rest[1..]);
        }
    }
    format!("{{\"type\":{kind}}}")
}

/// `base` with `extra`'s fields added (both JSON objects).
fn merge(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}

/// `data: {"type":kind,…}\n\n`.
fn sse_typed(kind: &str, body: Value) -> Frame {
    framed(None, typed(kind, body).as_bytes(), b"\n\n")
}

/// `event: {kind}\ndata: {"type":kind,…}\n\n`.
fn sse_event(kind: &str, body: Value) -> Frame {
    framed(Some(kind), typed(kind, body).as_bytes(), b"\n\n")
}

fn framed(event: Option<&str>, data: &[u8], end: &[u8]) -> Frame {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(event) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(event.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data);
    out.extend_from_slice(end);
    Frame::new(out)
}

/// The stream of frames for `plan`.
pub(crate) fn frames(api: Api, plan: &Plan) -> Vec<Frame> {
    match api {
        Api::OpenAiCompletions => openai_chat::frames(plan),
        Api::OpenAiResponses => openai_responses::frames(plan),
        Api::AnthropicMessages => anthropic::frames(plan),
        Api::GoogleGenerativeAi => google::frames(plan),
        Api::Proxy => proxy::frames(plan),
        Api::BedrockConverseStream => bedrock::frames(plan),
        // Embedding endpoints answer one document (crate::embed), never a stream.
        Api::OpenAiEmbeddings
        | Api::GoogleEmbeddings
        | Api::OllamaEmbeddings
        | Api::OpenAiTranscriptions => Vec::new(),
    }
}

/// The non-streaming answer for `plan`.
pub(crate) fn document(api: Api, plan: &Plan, delivery: Delivery) -> Value {
    match api {
        Api::OpenAiCompletions => openai_chat::document(plan),
        Api::OpenAiResponses => openai_responses::document(plan),
        Api::AnthropicMessages => anthropic::document(plan),
        Api::GoogleGenerativeAi if delivery == Delivery::JsonArray => google::array(plan),
        Api::GoogleGenerativeAi => google::document(plan),
        Api::Proxy => proxy::document(plan),
        // The mock answers ConverseStream only; Converse (one document) is not served.
        Api::BedrockConverseStream => json!({"message": "the mock serves converse-stream only"}),
        // Embedding answers are rendered by crate::embed from the request's texts.
        Api::OpenAiEmbeddings
        | Api::GoogleEmbeddings
        | Api::OllamaEmbeddings
        | Api::OpenAiTranscriptions => json!({}),
    }
}

/// Anthropic's error type names, which OpenAI-style bodies reuse.
fn error_type(status: u16) -> &'static str {
    match status {
        400 | 413 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn google_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 | 529 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// An error body in the shape `api`'s clients expect.
pub(crate) fn error_body(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::OpenAiCompletions
        | Api::OpenAiResponses
        | Api::OpenAiEmbeddings
        | Api::OpenAiTranscriptions => json!({
            "error": {"message": message, "type": error_type(status), "param": null, "code": null}
        }),
        Api::AnthropicMessages => json!({
            "type": "error",
            "error": {"type": error_type(status), "message": message}
        }),
        Api::GoogleGenerativeAi | Api::GoogleEmbeddings => json!({
            "error": {"code": status, "message": message, "status": google_status(status)}
        }),
        Api::Proxy | Api::OllamaEmbeddings => json!({"error": message}),
        Api::BedrockConverseStream => json!({"message": message}),
    }
}

/// The event name a broken frame pretends to be (protocols that name their events).
fn fake_event_name(api: Api) -> Option<&'static str> {
    match api {
        Api::AnthropicMessages => Some("content_block_delta"),
        Api::OpenAiResponses => Some("response.output_text.delta"),
        _ => None,
    }
}

fn frame_end(api: Api) -> &'static [u8] {
    match api {
        Api::GoogleGenerativeAi => b"\r\n\r\n",
        _ => b"\n\n",
    }
}

/// A data line that is not JSON.
pub(crate) fn malformed_frame(api: Api) -> Bytes {
    framed(fake_event_name(api), b"{not json", frame_end(api)).bytes
}

/// A data line with the bytes 0xff 0xfe inside a JSON string.
pub(crate) fn invalid_utf8_frame(api: Api) -> Bytes {
    framed(
        fake_event_name(api),
        b"{\"mock\":\"\xff\xfe\"}",
        frame_end(api),
    )
    .bytes
}

/// The line prefix of a data line (`data: `), used by the huge-line fault.
pub(crate) const DATA_PREFIX: &[u8] = b"data: ";

/// `stop` in a protocol's words: `names` are its names for a natural end, the output limit
/// and tool use, in that order.
fn stop_name(stop: StopReason, names: [&'static str; 3]) -> &'static str {
    let [end, length, tool_use] = names;
    match stop {
        StopReason::Stop => end,
        StopReason::Length => length,
        StopReason::ToolUse => tool_use,
    }
}

/// Chat Completions' `finish_reason`s.
const OPENAI_FINISH: [&str; 3] = ["stop", "length", "tool_calls"];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn typed_puts_type_first() {
        assert_eq!(typed("ping", json!({})), r#"{"type":"ping"}"#);
        assert_eq!(
            typed("a\"b", json!({"type": "x", "z": 1})),
            r#"{"type":"a\"b","z":1}"#
        );
        let value: Value = serde_json::from_str(&typed("k", json!({"a": [1]}))).unwrap();
        assert_eq!(value, json!({"type": "k", "a": [1]}));
    }
}
