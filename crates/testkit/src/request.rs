//! Reading an incoming request body, per protocol, down to what matching and rendering need:
//! model, delivery (SSE or JSON), the last user text and the trailing tool result.

use std::collections::HashMap;

use serde_json::Value;

use crate::api::Api;

/// How the client wants the answer delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Delivery {
    /// A server-sent event stream.
    Sse,
    /// One JSON document.
    Json,
    /// Gemini `streamGenerateContent` without `alt=sse`: a JSON array of chunks.
    JsonArray,
}

/// The tool result a conversation ends with.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolResult {
    pub name: Option<String>,
    pub call_id: Option<String>,
}

impl ToolResult {
    /// The result a protocol's JSON `value` carries: the tool's name in its `name_key` field
    /// (when the protocol names it), the call's id in its `id_key` field.
    fn read(value: &Value, name_key: Option<&str>, id_key: &str) -> Self {
        Self {
            name: name_key
                .and_then(|key| str_field(value, key))
                .map(str::to_owned),
            call_id: str_field(value, id_key).map(str::to_owned),
        }
    }
}

/// What the mock needs from a request.
#[derive(Debug, Clone)]
pub(crate) struct ParsedRequest {
    pub api: Api,
    pub model: String,
    pub delivery: Delivery,
    pub include_usage: bool,
    /// Text of the most recent user message that has text.
    pub last_user: Option<String>,
    /// Set when the conversation ends with a tool result.
    pub tool_result: Option<ToolResult>,
    /// Tool-call id -> tool name, from the assistant turns in the request.
    pub call_names: HashMap<String, String>,
    /// Size of the request body, for default usage.
    pub body_bytes: usize,
}

/// A request the mock cannot make sense of (answered with 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadRequest(pub String);

type Parsed = Result<ParsedRequest, BadRequest>;

impl ParsedRequest {
    pub(crate) fn new(api: Api, model: String, delivery: Delivery, body_bytes: usize) -> Self {
        Self {
            api,
            model,
            delivery,
            include_usage: false,
            last_user: None,
            tool_result: None,
            call_names: HashMap::new(),
            body_bytes,
        }
    }

    /// Records one conversation message: user text or a tool result (`None` text and `None`
    /// result for assistant or system turns).
    pub(crate) fn push_turn(&mut self, user_text: Option<String>, result: Option<ToolResult>) {
        if result.is_some() {
            self.tool_result = result;
        } else if let Some(text) = user_text {
            self.last_user = Some(text);
            self.tool_result = None;
        } else {
            self.tool_result = None;
        }
    }

    /// Remembers the tool name of call `id`, when the request gives both.
    pub(crate) fn note_call(&mut self, id: Option<&str>, name: Option<&str>) {
        if let (Some(id), Some(name)) = (id, name) {
            self.call_names.insert(id.to_owned(), name.to_owned());
        }
    }

    /// An assistant turn whose content blocks carry its tool calls as blocks of type
    /// `call_type` (with `id` and `name`), as Anthropic's and pi's do.
    fn assistant_blocks(&mut self, blocks: Option<&Value>, call_type: &str) {
        for block in blocks.and_then(Value::as_array).into_iter().flatten() {
            if str_field(block, "type") == Some(call_type) {
                self.note_call(str_field(block, "id"), str_field(block, "name"));
            }
        }
        self.push_turn(None, None);
    }
}

fn bad(message: impl Into<String>) -> BadRequest {
    BadRequest(message.into())
}

fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn required_model(body: &Value) -> Result<String, BadRequest> {
    match body.get("model") {
        Some(Value::String(model)) if !model.is_empty() => Ok(model.clone()),
        _ => Err(bad("model: a non-empty string is required")),
    }
}

fn array<'a>(value: &'a Value, key: &str) -> Result<&'a Vec<Value>, BadRequest> {
    value
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("{key}: an array is required")))
}

fn streams(body: &Value) -> Delivery {
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        Delivery::Sse
    } else {
        Delivery::Json
    }
}

/// Joins the text parts of a content value: a string, or an array of parts whose `type` is one
/// of `kinds` (parts without a `type` but with a `text` count too).
fn text_of(content: Option<&Value>, kinds: &[&str]) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|part| match str_field(part, "type") {
                    Some(kind) => kinds.contains(&kind),
                    None => true,
                })
                .filter_map(|part| str_field(part, "text"))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Parses a request body for `api`. `google_target` is the `{model}:{method}` path segment and
/// `query` the raw query string (Gemini only).
pub(crate) fn parse(
    api: Api,
    body: &Value,
    body_bytes: usize,
    google_target: Option<&str>,
    query: Option<&str>,
) -> Parsed {
    if !body.is_object() {
        return Err(bad("the request body must be a JSON object"));
    }
    match api {
        Api::OpenAiCompletions => parse_chat(body, body_bytes),
        Api::OpenAiResponses => parse_responses(body, body_bytes),
        Api::AnthropicMessages => parse_anthropic(body, body_bytes),
        Api::GoogleGenerativeAi => parse_google(body, body_bytes, google_target, query),
        Api::Proxy => parse_proxy(body, body_bytes),
        Api::BedrockConverseStream => crate::bedrock::parse(body, body_bytes, google_target),
        Api::OpenAiEmbeddings | Api::GoogleEmbeddings | Api::OllamaEmbeddings => {
            crate::embed::parse(api, body, body_bytes, google_target)
        }
        // Answered by `crate::transcribe`, never parsed as a chat.
        Api::OpenAiTranscriptions => Err(BadRequest(
            "transcriptions are multipart, not a chat request".into(),
        )),
    }
}

fn parse_chat(body: &Value, body_bytes: usize) -> Parsed {
    let model = required_model(body)?;
    let mut req = ParsedRequest::new(Api::OpenAiCompletions, model, streams(body), body_bytes);
    req.include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for message in array(body, "messages")? {
        match str_field(message, "role") {
            Some("user") => {
                req.push_turn(text_of(message.get("content"), &["text"]), None);
            }
            Some("tool") => {
                let result = ToolResult::read(message, Some("name"), "tool_call_id");
                req.push_turn(None, Some(result));
            }
            Some("assistant") => {
                let calls = message.get("tool_calls").and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    let name = call.pointer("/function/name").and_then(Value::as_str);
                    req.note_call(str_field(call, "id"), name);
                }
                req.push_turn(None, None);
            }
            _ => {}
        }
    }
    Ok(req)
}

fn parse_responses(body: &Value, body_bytes: usize) -> Parsed {
    let model = required_model(body)?;
    let mut req = ParsedRequest::new(Api::OpenAiResponses, model, streams(body), body_bytes);
    req.include_usage = true;
    match body.get("input") {
        Some(Value::String(text)) => req.push_turn(Some(text.clone()), None),
        Some(Value::Array(items)) => {
            for item in items {
                match (str_field(item, "type"), str_field(item, "role")) {
                    (Some("function_call_output"), _) => {
                        let result = ToolResult::read(item, None, "call_id");
                        req.push_turn(None, Some(result));
                    }
                    (Some("function_call"), _) => {
                        req.note_call(str_field(item, "call_id"), str_field(item, "name"));
                        req.push_turn(None, None);
                    }
                    (None | Some("message"), Some("user")) => {
                        let text = text_of(item.get("content"), &["input_text", "text"]);
                        req.push_turn(text, None);
                    }
                    (_, Some("assistant")) | (Some("reasoning"), _) => req.push_turn(None, None),
                    _ => {}
                }
            }
        }
        _ => return Err(bad("input: a string or an array is required")),
    }
    Ok(req)
}

fn parse_anthropic(body: &Value, body_bytes: usize) -> Parsed {
    let model = required_model(body)?;
    if !body.get("max_tokens").is_some_and(Value::is_u64) {
        return Err(bad("max_tokens: Field required"));
    }
    let mut req = ParsedRequest::new(Api::AnthropicMessages, model, streams(body), body_bytes);
    for message in array(body, "messages")? {
        let content = message.get("content");
        match str_field(message, "role") {
            Some("user") => {
                let blocks = content.and_then(Value::as_array);
                let result = blocks
                    .into_iter()
                    .flatten()
                    .rfind(|block| str_field(block, "type") == Some("tool_result"))
                    .map(|block| ToolResult::read(block, None, "tool_use_id"));
                req.push_turn(text_of(content, &["text"]), result);
            }
            Some("assistant") => {
                req.assistant_blocks(content, "tool_use");
            }
            _ => {}
        }
    }
    Ok(req)
}

fn parse_google(
    body: &Value,
    body_bytes: usize,
    target: Option<&str>,
    query: Option<&str>,
) -> Parsed {
    let target = target.unwrap_or_default();
    let Some((model, method)) = target.rsplit_once(':') else {
        return Err(bad(format!(
            "expected models/{{model}}:{{method}}, got {target:?}"
        )));
    };
    let sse = query
        .unwrap_or_default()
        .split('&')
        .any(|pair| pair == "alt=sse");
    let delivery = match method {
        "streamGenerateContent" if sse => Delivery::Sse,
        "streamGenerateContent" => Delivery::JsonArray,
        "generateContent" => Delivery::Json,
        other => return Err(bad(format!("unknown method {other:?}"))),
    };
    if model.is_empty() {
        return Err(bad("the model name is empty"));
    }
    let mut req = ParsedRequest::new(
        Api::GoogleGenerativeAi,
        model.to_owned(),
        delivery,
        body_bytes,
    );
    req.include_usage = true;
    for content in array(body, "contents")? {
        let parts = content.get("parts").and_then(Value::as_array);
        let parts: Vec<&Value> = parts.into_iter().flatten().collect();
        let result = parts
            .iter()
            .filter_map(|part| part.get("functionResponse"))
            .next_back()
            .map(|response| ToolResult::read(response, Some("name"), "id"));
        for call in parts.iter().filter_map(|part| part.get("functionCall")) {
            req.note_call(str_field(call, "id"), str_field(call, "name"));
        }
        if str_field(content, "role") == Some("model") {
            req.push_turn(None, None);
            continue;
        }
        let texts: Vec<&str> = parts
            .iter()
            .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true))
            .filter_map(|part| str_field(part, "text"))
            .collect();
        let text = (!texts.is_empty()).then(|| texts.join("\n"));
        req.push_turn(text, result);
    }
    Ok(req)
}

fn parse_proxy(body: &Value, body_bytes: usize) -> Parsed {
    let model = match body.get("model") {
        Some(Value::String(id)) => id.clone(),
        Some(model @ Value::Object(_)) => str_field(model, "id")
            .ok_or_else(|| bad("model.id: a string is required"))?
            .to_owned(),
        _ => return Err(bad("model: a model object or id is required")),
    };
    let context = body
        .get("context")
        .ok_or_else(|| bad("context: an object is required"))?;
    let mut req = ParsedRequest::new(Api::Proxy, model, Delivery::Sse, body_bytes);
    req.include_usage = true;
    for message in array(context, "messages").map_err(|e| bad(format!("context.{}", e.0)))? {
        match str_field(message, "role") {
            Some("user") => req.push_turn(text_of(message.get("content"), &["text"]), None),
            Some("toolResult") => {
                let result = ToolResult::read(message, Some("toolName"), "toolCallId");
                req.push_turn(None, Some(result));
            }
            Some("assistant") => {
                req.assistant_blocks(message.get("content"), "toolCall");
            }
            _ => {}
        }
    }
    Ok(req)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_round_trip_ends_with_named_result() {
        let body = json!({"model":"m","stream":true,"stream_options":{"include_usage":true},
            "messages":[{"role":"user","content":[{"type":"text","text":"weather?"}]},
            {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":"sunny"}]});
        let req = parse(Api::OpenAiCompletions, &body, 10, None, None).unwrap();
        assert_eq!(req.last_user.as_deref(), Some("weather?"));
        assert_eq!(req.tool_result.unwrap().call_id.as_deref(), Some("c1"));
        assert_eq!(
            req.call_names.get("c1").map(String::as_str),
            Some("get_weather")
        );
        assert!(req.include_usage);
        assert_eq!(req.delivery, Delivery::Sse);
    }

    #[test]
    fn anthropic_requires_max_tokens() {
        let body = json!({"model":"m","messages":[]});
        let err = parse(Api::AnthropicMessages, &body, 1, None, None).unwrap_err();
        assert!(err.0.contains("max_tokens"));
    }

    #[test]
    fn google_target_and_alt() {
        let body = json!({"contents":[{"role":"user","parts":[{"text":"hi"}]}]});
        let req = parse(
            Api::GoogleGenerativeAi,
            &body,
            1,
            Some("gemini-x:streamGenerateContent"),
            Some("alt=sse"),
        )
        .unwrap();
        assert_eq!(req.model, "gemini-x");
        assert_eq!(req.delivery, Delivery::Sse);
        assert_eq!(req.last_user.as_deref(), Some("hi"));
        assert!(parse(Api::GoogleGenerativeAi, &body, 1, Some("nocolon"), None).is_err());
    }

    #[test]
    fn non_object_bodies_are_rejected() {
        for api in Api::ALL {
            assert!(parse(api, &json!([1, 2]), 1, None, None).is_err());
            assert!(parse(api, &json!({"model": 5}), 1, Some("m:x"), None).is_err());
        }
    }
}
