//! Amazon Bedrock's `ConverseStream` on the mock: `POST /model/{modelId}/converse-stream`.
//! A request must carry a SigV4 `Authorization` (`AWS4-HMAC-SHA256 Credential=…,
//! SignedHeaders=…, Signature=…` with `x-amz-date`) or a Bedrock API key as a bearer token;
//! otherwise it is refused as AWS refuses it (403, `MissingAuthenticationTokenException`).
//! The request body is read down to the conversation like the other protocols'; the answer
//! is rendered by `wire::bedrock` as event-stream frames.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::handlers::{has_bearer_token, json_response, recorded};
use crate::request::{BadRequest, Delivery, ParsedRequest, ToolResult};
use crate::server::AppState;

/// Whether `headers` carry a well-formed SigV4 authorization for service `bedrock`. The
/// signature itself is not recomputed: the signer is tested against AWS's published
/// vectors, and the mock only checks that a signed request reaches it in the right shape.
fn sigv4_shaped(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(auth) = text("authorization") else {
        return false;
    };
    let Some(rest) = auth.strip_prefix("AWS4-HMAC-SHA256 Credential=") else {
        return false;
    };
    let scope_ok = rest
        .split(',')
        .next()
        .map(|credential| credential.split('/').collect::<Vec<_>>())
        .is_some_and(|parts| {
            parts.len() == 5
                && !parts[0].is_empty()
                && parts[1].len() == 8
                && parts[3] == "bedrock"
                && parts[4] == "aws4_request"
        });
    let signed_ok = rest.contains(", SignedHeaders=host;x-amz-date");
    let signature_ok = rest
        .rsplit_once(", Signature=")
        .is_some_and(|(_, sig)| sig.len() == 64 && sig.bytes().all(|b| b.is_ascii_hexdigit()));
    scope_ok && signed_ok && signature_ok && text("x-amz-date").is_some_and(|d| d.len() == 16)
}

/// `POST /model/{modelId}/converse-stream`.
pub(crate) async fn converse_stream(
    State(state): State<Arc<AppState>>,
    Path(model): Path<String>,
    request: Request,
) -> Response {
    if !sigv4_shaped(request.headers()) && !has_bearer_token(request.headers()) {
        let (parts, _) = request.into_parts();
        state.record(recorded(&parts, Value::Null, Api::BedrockConverseStream));
        let mut response = json_response(
            StatusCode::FORBIDDEN,
            &json!({"message": "Missing Authentication Token"}),
        );
        response.headers_mut().insert(
            "x-amzn-errortype",
            HeaderValue::from_static("MissingAuthenticationTokenException"),
        );
        return response;
    }
    crate::handlers::answer(state, Api::BedrockConverseStream, request, Some(model)).await
}

/// The conversation of a `ConverseStream` body; `model` is the path's model id.
pub(crate) fn parse(
    body: &Value,
    body_bytes: usize,
    model: Option<&str>,
) -> Result<ParsedRequest, BadRequest> {
    let model = model.filter(|m| !m.is_empty()).ok_or_else(|| {
        BadRequest("the model id in /model/{modelId}/converse-stream is empty".into())
    })?;
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| BadRequest("messages: an array is required".into()))?;
    if let Some(max) = body.pointer("/inferenceConfig/maxTokens")
        && !max.is_u64()
    {
        return Err(BadRequest(
            "inferenceConfig.maxTokens: a positive integer is required".into(),
        ));
    }
    let mut req = ParsedRequest::new(
        Api::BedrockConverseStream,
        model.to_owned(),
        Delivery::Sse,
        body_bytes,
    );
    req.include_usage = true;
    for message in messages {
        let blocks: Vec<&Value> = message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                let result = blocks
                    .iter()
                    .filter_map(|b| b.get("toolResult"))
                    .next_back()
                    .map(|r| ToolResult {
                        name: None,
                        call_id: r
                            .get("toolUseId")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    });
                let text = (!texts.is_empty()).then(|| texts.join("\n"));
                req.push_turn(text, result);
            }
            Some("assistant") => {
                for call in blocks.iter().filter_map(|b| b.get("toolUse")) {
                    req.note_call(
                        call.get("toolUseId").and_then(Value::as_str),
                        call.get("name").and_then(Value::as_str),
                    );
                }
                req.push_turn(None, None);
            }
            _ => return Err(BadRequest("messages[].role: user or assistant".into())),
        }
    }
    Ok(req)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sigv4_shape() {
        let mut headers = HeaderMap::new();
        assert!(!sigv4_shaped(&headers));
        headers.insert("x-amz-date", HeaderValue::from_static("20240101T000000Z"));
        headers.insert("authorization", HeaderValue::from_static(
            "AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ));
        assert!(sigv4_shaped(&headers));
        headers.insert("authorization", HeaderValue::from_static(
            "AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ));
        assert!(!sigv4_shaped(&headers));
    }

    #[test]
    fn conversation_with_a_tool_result() {
        let body = json!({"messages": [
            {"role": "user", "content": [{"text": "weather?"}, {"cachePoint": {"type": "default"}}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}], "status": "success"}}]},
        ], "inferenceConfig": {"maxTokens": 100}});
        let req = parse(&body, 10, Some("m")).unwrap();
        assert_eq!(req.last_user.as_deref(), Some("weather?"));
        assert_eq!(req.tool_result.unwrap().call_id.as_deref(), Some("t1"));
        assert_eq!(
            req.call_names.get("t1").map(String::as_str),
            Some("get_weather")
        );
        assert!(parse(&json!({"messages": []}), 1, Some("")).is_err());
        assert!(parse(&json!({"messages": 1}), 1, Some("m")).is_err());
        assert!(parse(&json!({"messages": [{"role": "system"}]}), 1, Some("m")).is_err());
    }
}
