//! The request side of OpenAI Chat Completions: compatibility detection for the many
//! servers that speak it (pi's `detectCompat` / `getCompat`) and the request body (pi's
//! `buildParams` + `convertMessages`).

use serde_json::{Map, Value, json};

use crate::model::{MaxTokensField, Model, ThinkingFormat};
use crate::options::StreamOptions;
use crate::providers::anthropic::transform::{Replay, ReplayAssistant, ReplayBlock, transform};
use crate::providers::openai_shared::{
    accepts_images, data_url, max_output_tokens, reasoning_effort, temperature_json,
};
use crate::types::{ContentBlock, Context, Message, Tool, UserContent, UserMessage};

/// The quirks of one OpenAI-compatible server, every field decided (pi's
/// `Required<OpenAICompletionsCompat>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCompat {
    /// Send `store: false` (OpenAI keeps completions otherwise).
    pub supports_store: bool,
    /// Reasoning models take the system prompt as role `developer`.
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    /// Ask for a usage chunk with `stream_options.include_usage`.
    pub supports_usage_in_streaming: bool,
    pub max_tokens_field: MaxTokensField,
    /// Tool results must carry the tool's `name`.
    pub requires_tool_result_name: bool,
    /// A user message may not directly follow tool results; bridge with an assistant one.
    pub requires_assistant_after_tool_result: bool,
    /// Earlier thinking is replayed as plain text.
    pub requires_thinking_as_text: bool,
    /// Tool-call ids must be exactly 9 alphanumeric characters.
    pub requires_mistral_tool_ids: bool,
    pub thinking_format: ThinkingFormat,
    /// Tools may carry `strict` (some servers reject unknown fields).
    pub supports_strict_mode: bool,
}

/// Compat detected from the provider name and base URL alone. The provider name wins
/// because it is configured explicitly; the URL catches custom entries and proxies.
pub fn detect_compat(model: &Model) -> ResolvedCompat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let is_zai = provider == "zai" || url.contains("api.z.ai");
    let is_grok = provider == "xai" || url.contains("api.x.ai");
    let is_mistral = provider == "mistral" || url.contains("mistral.ai");
    let is_chutes = url.contains("chutes.ai");
    let non_standard = is_zai
        || is_grok
        || is_mistral
        || is_chutes
        || provider == "cerebras"
        || url.contains("cerebras.ai")
        || url.contains("deepseek.com")
        || provider == "opencode"
        || url.contains("opencode.ai");
    ResolvedCompat {
        supports_store: !non_standard,
        supports_developer_role: !non_standard,
        supports_reasoning_effort: !is_grok && !is_zai,
        supports_usage_in_streaming: true,
        max_tokens_field: if is_mistral || is_chutes {
            MaxTokensField::MaxTokens
        } else {
            MaxTokensField::MaxCompletionTokens
        },
        requires_tool_result_name: is_mistral,
        // Mistral dropped this requirement in December 2024.
        requires_assistant_after_tool_result: false,
        requires_thinking_as_text: is_mistral,
        requires_mistral_tool_ids: is_mistral,
        thinking_format: if is_zai {
            ThinkingFormat::Zai
        } else {
            ThinkingFormat::Openai
        },
        supports_strict_mode: true,
    }
}

/// The compat in effect: every field set in `model.compat` overrides detection.
pub fn resolve_compat(model: &Model) -> ResolvedCompat {
    let detected = detect_compat(model);
    let Some(set) = &model.compat else {
        return detected;
    };
    // Each field: the one set, else the one detected.
    macro_rules! overlay {
        ($($field:ident),* $(,)?) => {
            ResolvedCompat {
                $($field: set.$field.unwrap_or(detected.$field),)*
            }
        };
    }
    overlay!(
        supports_store,
        supports_developer_role,
        supports_reasoning_effort,
        supports_usage_in_streaming,
        max_tokens_field,
        requires_tool_result_name,
        requires_assistant_after_tool_result,
        requires_thinking_as_text,
        requires_mistral_tool_ids,
        thinking_format,
        supports_strict_mode,
    )
}

/// The JSON body of a streamed chat completion.
pub(super) fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &ResolvedCompat,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(model, context, compat)),
    );
    body.insert("stream".into(), json!(true));
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    if let Some(limit) = max_output_tokens(model, options) {
        let field = match compat.max_tokens_field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        body.insert(field.into(), json!(limit));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), temperature_json(temperature));
    }
    if !context.tools.is_empty() {
        body.insert("tools".into(), convert_tools(&context.tools, compat));
    } else if has_tool_history(&context.messages) {
        // Anthropic behind LiteLLM-style proxies rejects tool history without `tools`.
        body.insert("tools".into(), json!([]));
    }

    let effort = reasoning_effort(model, options.reasoning);
    match compat.thinking_format {
        // Both default to thinking on, so "off" must be said explicitly.
        ThinkingFormat::Zai if model.reasoning => {
            let kind = if effort.is_some() {
                "enabled"
            } else {
                "disabled"
            };
            body.insert("thinking".into(), json!({"type": kind}));
        }
        ThinkingFormat::Qwen if model.reasoning => {
            body.insert("enable_thinking".into(), json!(effort.is_some()));
        }
        _ => {
            if let Some(effort) =
                effort.filter(|_| model.reasoning && compat.supports_reasoning_effort)
            {
                body.insert("reasoning_effort".into(), json!(effort));
            }
        }
    }

    let routing = model.compat.as_ref();
    if let Some(route) = routing.and_then(|c| c.open_router_routing.as_ref())
        && model.base_url.contains("openrouter.ai")
    {
        body.insert("provider".into(), route.clone());
    }
    if let Some(route) = routing.and_then(|c| c.vercel_gateway_routing.as_ref())
        && model.base_url.contains("ai-gateway.vercel.sh")
    {
        let mut gateway = Map::new();
        for key in ["only", "order"] {
            if let Some(value) = route.get(key) {
                gateway.insert(key.into(), value.clone());
            }
        }
        if !gateway.is_empty() {
            body.insert("providerOptions".into(), json!({"gateway": gateway}));
        }
    }
    Value::Object(body)
}

fn convert_tools(tools: &[Tool], compat: &ResolvedCompat) -> Value {
    let tools = tools.iter().map(|tool| {
        let mut function = json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": crate::schema::inline_refs(&tool.parameters),
        });
        if compat.supports_strict_mode {
            function["strict"] = json!(false);
        }
        json!({"type": "function", "function": function})
    });
    Value::Array(tools.collect())
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

/// What a user message may not directly follow on servers that need the bridge.
pub(super) const BRIDGE: &str = "I have processed the tool results.";

fn convert_messages(model: &Model, context: &Context, compat: &ResolvedCompat) -> Vec<Value> {
    let normalize = |id: &str| normalize_tool_call_id(model, compat, id);
    let turns = transform(&context.messages, model, Some(&normalize));
    let mut out = Vec::with_capacity(turns.len() + 1);
    if let Some(prompt) = context.system_prompt.as_deref().filter(|p| !p.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": prompt}));
    }

    let bridge = || json!({"role": "assistant", "content": BRIDGE});
    let mut after_tool_results = false;
    let mut turns = turns.iter().peekable();
    while let Some(turn) = turns.next() {
        match turn {
            Replay::User(user) => {
                if compat.requires_assistant_after_tool_result && after_tool_results {
                    out.push(bridge());
                }
                if let Some(message) = user_message(model, user) {
                    out.push(message);
                    after_tool_results = false;
                }
            }
            Replay::Assistant(assistant) => {
                if let Some(message) = assistant_message(model, compat, assistant) {
                    out.push(message);
                    after_tool_results = false;
                }
            }
            Replay::ToolResult(first) => {
                // A run of tool results is answered together; their images follow as one
                // user message because the `tool` role cannot carry images.
                let mut images = Vec::new();
                let mut next = Some(first);
                while let Some(result) = next {
                    let text = result.text();
                    let content = if text.is_empty() {
                        "(see attached image)"
                    } else {
                        &text
                    };
                    let mut message = json!({
                        "role": "tool",
                        "content": content,
                        "tool_call_id": result.tool_call_id,
                    });
                    if compat.requires_tool_result_name && !result.tool_name.is_empty() {
                        message["name"] = json!(result.tool_name);
                    }
                    out.push(message);
                    if accepts_images(model) {
                        images.extend(result.images().map(|image| {
                            json!({"type": "image_url", "image_url": {"url": data_url(image)}})
                        }));
                    }
                    next = match turns.peek() {
                        Some(Replay::ToolResult(r)) => {
                            turns.next();
                            Some(r)
                        }
                        _ => None,
                    };
                }
                after_tool_results = images.is_empty();
                if !images.is_empty() {
                    if compat.requires_assistant_after_tool_result {
                        out.push(bridge());
                    }
                    let mut content = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    content.extend(images);
                    out.push(json!({"role": "user", "content": content}));
                }
            }
        }
    }
    add_openrouter_cache_control(model, &mut out);
    out
}

fn user_message(model: &Model, user: &UserMessage) -> Option<Value> {
    let blocks = match &user.content {
        UserContent::Text(text) => return Some(json!({"role": "user", "content": text})),
        UserContent::Blocks(blocks) => blocks,
    };
    let images = accepts_images(model);
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
            ContentBlock::Image(image) if images => {
                Some(json!({"type": "image_url", "image_url": {"url": data_url(image)}}))
            }
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| json!({"role": "user", "content": parts}))
}

fn assistant_message(
    model: &Model,
    compat: &ResolvedCompat,
    turn: &ReplayAssistant<'_>,
) -> Option<Value> {
    let mut texts: Vec<&str> = Vec::new();
    let mut thinking = Vec::new();
    let mut calls = Vec::new();
    let mut reasoning_details = Vec::new();
    for block in &turn.blocks {
        match block {
            // Empty blocks make several servers reject the request.
            ReplayBlock::Text { text, .. } if !text.trim().is_empty() => texts.push(text),
            ReplayBlock::Thinking {
                thinking: text,
                signature,
                ..
            } if !text.trim().is_empty() => thinking.push((*text, *signature)),
            ReplayBlock::ToolCall {
                call,
                id,
                thought_signature,
            } => {
                calls.push(json!({
                    "id": id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments.to_string()},
                }));
                // OpenRouter's encrypted reasoning rides along with the calls it preceded.
                if let Some(detail) =
                    thought_signature.and_then(|s| serde_json::from_str::<Value>(s).ok())
                {
                    reasoning_details.push(detail);
                }
            }
            _ => {}
        }
    }

    let mut message = json!({"role": "assistant"});
    let thinking_text;
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            // Plain text without tags, so the model does not learn to imitate them.
            thinking_text = thinking
                .iter()
                .map(|(text, _)| *text)
                .collect::<Vec<_>>()
                .join("\n\n");
            texts.insert(0, &thinking_text);
        } else if let Some(field) = thinking[0].1.filter(|f| is_reasoning_field(f)) {
            // Echo the reasoning in the field the server streamed it in (llama.cpp, vLLM...).
            let joined = thinking
                .iter()
                .map(|(text, _)| *text)
                .collect::<Vec<_>>()
                .join("\n");
            message[field] = json!(joined);
        }
    }
    message["content"] = if texts.is_empty() {
        // Mistral-style servers reject `null` content.
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        }
    } else if matches!(model.provider.as_str(), "github-copilot" | "nim") {
        // These reject content arrays for assistants (Copilot's Claude even re-answers).
        json!(texts.concat())
    } else {
        Value::Array(
            texts
                .iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect(),
        )
    };
    let has_content = match &message["content"] {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
        if !reasoning_details.is_empty() {
            message["reasoning_details"] = Value::Array(reasoning_details);
        }
    } else if !has_content {
        // Nothing to say (an aborted turn): servers reject empty assistant messages.
        return None;
    }
    Some(message)
}

/// A thinking signature names the field to echo reasoning in; only plain identifiers that
/// cannot clobber the message's own fields qualify.
fn is_reasoning_field(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(
            name,
            "role" | "content" | "tool_calls" | "name" | "reasoning_details"
        )
}

/// Tool-call ids of other providers, made acceptable to this one.
pub(super) fn normalize_tool_call_id(model: &Model, compat: &ResolvedCompat, id: &str) -> String {
    if compat.requires_mistral_tool_ids {
        return mistral_tool_id(id);
    }
    // Responses ids are `call_id|item_id`, the item id 400+ characters of base64.
    if let Some((call_id, _)) = id.split_once('|') {
        return call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(40)
            .collect();
    }
    if model.provider == "openai" {
        return id.chars().take(40).collect();
    }
    id.to_owned()
}

/// Mistral wants exactly 9 alphanumeric characters; padding is deterministic so a call
/// and its result still match.
pub(super) fn mistral_tool_id(id: &str) -> String {
    let mut out: String = id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(9)
        .collect();
    let missing = 9 - out.len();
    out.push_str(&"ABCDEFGHI"[..missing]);
    out
}

/// OpenRouter passes Anthropic's prompt caching through only with an explicit breakpoint on
/// a text part: put one on the last user or assistant text.
fn add_openrouter_cache_control(model: &Model, messages: &mut [Value]) {
    if model.provider != "openrouter" || !model.id.starts_with("anthropic/") {
        return;
    }
    let breakpoint = json!({"type": "ephemeral"});
    for message in messages.iter_mut().rev() {
        if !matches!(message["role"].as_str(), Some("user" | "assistant")) {
            continue;
        }
        match &mut message["content"] {
            Value::String(text) => {
                let text = std::mem::take(text);
                message["content"] =
                    json!([{"type": "text", "text": text, "cache_control": breakpoint}]);
                return;
            }
            Value::Array(parts) => {
                if let Some(part) = parts.iter_mut().rev().find(|p| p["type"] == "text") {
                    part["cache_control"] = breakpoint;
                    return;
                }
            }
            _ => {}
        }
    }
}
