//! The `ConverseStream` request as pi's `amazon-bedrock.ts` builds it: messages (tool
//! results merged into one user message, assistant thinking replayed with its signature to
//! Claude), system prompt, cache points for Claude models that cache, `inferenceConfig`,
//! `toolConfig`, and Claude's thinking through `additionalModelRequestFields`.

use serde_json::{Map, Value, json};

use crate::model::{InputKind, Model};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::anthropic::transform::{
    Replay, ReplayBlock, ReplayToolResult, sanitize_tool_call_id, transform,
};
use crate::types::{ContentBlock, Context, ImageContent, ThinkingLevel, UserContent};

/// pi's cap on the default output limit.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// What pi keeps for the answer when a thinking budget would eat the whole limit.
const MIN_OUTPUT_TOKENS: u64 = 1024;

/// Claude on Bedrock (`anthropic.claude…`, with or without a region prefix).
fn is_claude(model: &Model) -> bool {
    model.id.contains("anthropic.claude") || model.id.contains("anthropic/claude")
}

fn supports_adaptive_thinking(id: &str) -> bool {
    ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"]
        .iter()
        .any(|m| id.contains(m))
}

/// pi's `supportsPromptCaching`: Claude 4.x, 3.7 Sonnet and 3.5 Haiku.
fn supports_prompt_caching(model: &Model) -> bool {
    let id = model.id.to_ascii_lowercase();
    id.contains("claude")
        && (id.contains("-4-")
            || id.contains("-4.")
            || id.contains("claude-3-7-sonnet")
            || id.contains("claude-3-5-haiku"))
}

fn cache_point(retention: CacheRetention) -> Value {
    match retention {
        CacheRetention::Long => json!({"cachePoint": {"type": "default", "ttl": "1h"}}),
        _ => json!({"cachePoint": {"type": "default"}}),
    }
}

/// `modelId` as one URL path segment (`:` and `/` encoded, as the SDK sends it).
pub(super) fn url(base_url: &str, model_id: &str) -> String {
    format!(
        "{}/model/{}/converse-stream",
        base_url.trim_end_matches('/'),
        super::sigv4::uri_encode(model_id, false)
    )
}

/// The request body. Errors are images of a type Bedrock does not take.
pub(super) fn body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Value, String> {
    let caching = options.cache_retention != CacheRetention::None && supports_prompt_caching(model);
    let mut body = Map::new();
    body.insert(
        "messages".into(),
        Value::Array(messages(
            model,
            context,
            caching.then_some(options.cache_retention),
        )?),
    );
    if let Some(prompt) = context.system_prompt.as_deref().filter(|p| !p.is_empty()) {
        let mut system = vec![json!({"text": prompt})];
        if caching {
            system.push(cache_point(options.cache_retention));
        }
        body.insert("system".into(), Value::Array(system));
    }
    let level = options
        .reasoning
        .filter(|l| *l != ThinkingLevel::Off && model.reasoning);
    let mut max_tokens = options
        .max_tokens
        .filter(|n| *n > 0)
        .unwrap_or_else(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP));
    let mut additional = None;
    if let Some(level) = level.filter(|_| is_claude(model)) {
        additional = Some(if supports_adaptive_thinking(&model.id) {
            json!({"thinking": {"type": "adaptive"}, "output_config": {"effort": effort(level, &model.id)}})
        } else {
            let (adjusted, budget) = adjust_for_thinking(max_tokens, model, options, level);
            max_tokens = adjusted;
            json!({
                "thinking": {"type": "enabled", "budget_tokens": budget},
                "anthropic_beta": ["interleaved-thinking-2025-05-14"],
            })
        });
    }
    let mut inference = Map::new();
    inference.insert("maxTokens".into(), json!(max_tokens));
    if let Some(t) = options.temperature {
        inference.insert(
            "temperature".into(),
            json!(crate::providers::anthropic::f32_to_json(t)),
        );
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({"toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": {"json": tool.parameters},
                }})
            })
            .collect();
        body.insert("toolConfig".into(), json!({"tools": tools}));
    }
    if let Some(additional) = additional {
        body.insert("additionalModelRequestFields".into(), additional);
    }
    Ok(Value::Object(body))
}

/// pi's `mapThinkingLevelToEffort`.
fn effort(level: ThinkingLevel, id: &str) -> &'static str {
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh if id.contains("opus-4-6") || id.contains("opus-4.6") => "max",
        ThinkingLevel::Xhigh => "high",
    }
}

/// pi's `adjustMaxTokensForThinking` (xhigh counts as high).
fn adjust_for_thinking(
    base: u64,
    model: &Model,
    options: &StreamOptions,
    level: ThinkingLevel,
) -> (u64, u64) {
    let level = if level == ThinkingLevel::Xhigh {
        ThinkingLevel::High
    } else {
        level
    };
    let mut budget = options
        .thinking_budgets
        .get(&level)
        .copied()
        .or_else(|| level.budget_tokens())
        .unwrap_or(0);
    let max_tokens = base.saturating_add(budget).min(model.max_tokens);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT_TOKENS);
    }
    (max_tokens, budget)
}

fn image(image: &ImageContent) -> Result<Value, String> {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Bedrock does not take images of type {other}")),
    };
    // The JSON protocol carries blob members as base64, which the image already is.
    Ok(json!({"image": {"format": format, "source": {"bytes": image.data}}}))
}

fn tool_result(result: &ReplayToolResult<'_>, images: bool) -> Result<Value, String> {
    let mut content = Vec::new();
    for block in result.content.iter() {
        match block {
            ContentBlock::Text(t) => content.push(json!({"text": t.text})),
            ContentBlock::Image(i) if images => content.push(image(i)?),
            _ => {}
        }
    }
    Ok(json!({"toolResult": {
        "toolUseId": result.tool_call_id,
        "content": content,
        "status": if result.is_error { "error" } else { "success" },
    }}))
}

/// pi's `convertMessages`; `cache`: where the last user message gets a cache point.
fn messages(
    model: &Model,
    context: &Context,
    cache: Option<CacheRetention>,
) -> Result<Vec<Value>, String> {
    let replay = transform(&context.messages, model, Some(&sanitize_tool_call_id));
    let images = model.input.contains(&InputKind::Image);
    let signatures = is_claude(model);
    let mut out: Vec<Value> = Vec::with_capacity(replay.len());
    // Consecutive tool results travel as one user message, as Bedrock requires.
    let mut results: Vec<Value> = Vec::new();
    for message in &replay {
        if !matches!(message, Replay::ToolResult(_)) && !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        match message {
            Replay::User(user) => {
                let content = match &user.content {
                    UserContent::Text(text) => vec![json!({"text": text})],
                    UserContent::Blocks(blocks) => {
                        let mut content = Vec::new();
                        for block in blocks {
                            match block {
                                ContentBlock::Text(t) => content.push(json!({"text": t.text})),
                                ContentBlock::Image(i) if images => content.push(image(i)?),
                                _ => {}
                            }
                        }
                        content
                    }
                };
                if !content.is_empty() {
                    out.push(json!({"role": "user", "content": content}));
                }
            }
            Replay::Assistant(assistant) => {
                let mut content = Vec::new();
                for block in &assistant.blocks {
                    match block {
                        ReplayBlock::Text { text, .. } if !text.trim().is_empty() => {
                            content.push(json!({"text": text}));
                        }
                        ReplayBlock::Thinking {
                            thinking,
                            signature,
                            redacted: false,
                        } if !thinking.trim().is_empty() => {
                            let signature = signature.filter(|s| !s.trim().is_empty());
                            content.push(match (signatures, signature) {
                                (true, Some(signature)) => json!({"reasoningContent": {
                                    "reasoningText": {"text": thinking, "signature": signature}
                                }}),
                                // Bedrock refuses Claude's reasoning without its signature.
                                (true, None) => json!({"text": thinking}),
                                (false, _) => json!({"reasoningContent": {"reasoningText": {"text": thinking}}}),
                            });
                        }
                        ReplayBlock::ToolCall { call, id, .. } => content.push(json!({"toolUse": {
                            "toolUseId": id,
                            "name": call.name,
                            "input": call.arguments,
                        }})),
                        _ => {}
                    }
                }
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            Replay::ToolResult(result) => results.push(tool_result(result, images)?),
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    if let (Some(retention), Some(last)) = (cache, out.last_mut())
        && last["role"] == "user"
        && let Some(content) = last["content"].as_array_mut()
    {
        content.push(cache_point(retention));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
