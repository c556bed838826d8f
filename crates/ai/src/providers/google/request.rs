//! Building a `streamGenerateContent` request the way pi-ai's Google provider does
//! (`google-shared.ts` conversions, `streamSimpleGoogle` thinking rules), in the REST
//! shape the `@google/genai` SDK sends.

use serde_json::{Map, Value, json};

use super::gemini_schema;
use crate::model::{InputKind, Model};
use crate::options::StreamOptions;
use crate::providers::anthropic::f32_to_json;
use crate::providers::anthropic::transform::{
    Replay, ReplayAssistant, ReplayBlock, ReplayToolResult, sanitize_tool_call_id, transform,
};
use crate::providers::{common_headers, join_url};
use crate::types::texts;
use crate::types::{ContentBlock, Context, ImageContent, ThinkingLevel, UserContent};

/// pi's default output cap when the caller sets none (`buildBaseOptions`).
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Gemini 3 insists on a signature for replayed function calls; this documented sentinel
/// skips the check for calls that have none (made by another model).
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

pub(super) fn url(model: &Model) -> String {
    join_url(
        &model.base_url,
        &format!("models/{}:streamGenerateContent?alt=sse", model.id),
    )
}

/// The key travels in a header, never in the URL, so it cannot leak into logs.
pub(super) fn headers(
    model: &Model,
    options: &StreamOptions,
    api_key: Option<&str>,
) -> Vec<(String, String)> {
    let mut headers = common_headers(model, options);
    if let Some(key) = api_key
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("x-goog-api-key"))
    {
        headers.push(("x-goog-api-key".into(), key.to_owned()));
    }
    headers
}

pub(super) fn body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents(model, context)));
    if let Some(prompt) = context.system_prompt.as_deref() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": prompt}]}),
        );
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": gemini_schema(&tool.parameters),
                })
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    let mut config = Map::new();
    if let Some(t) = options.temperature {
        config.insert("temperature".into(), json!(f32_to_json(t)));
    }
    let max_tokens = options
        .max_tokens
        .filter(|n| *n > 0)
        .unwrap_or_else(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP));
    config.insert("maxOutputTokens".into(), json!(max_tokens));
    if let Some(thinking) = thinking_config(model, options) {
        config.insert("thinkingConfig".into(), thinking);
    }
    body.insert("generationConfig".into(), Value::Object(config));
    Value::Object(body)
}

/// Gemini 3 takes a thinking level, Gemini 2.5 a token budget (-1: the model decides).
fn thinking_config(model: &Model, options: &StreamOptions) -> Option<Value> {
    let level = options.reasoning.filter(|l| *l != ThinkingLevel::Off)?;
    if !model.reasoning {
        return None;
    }
    // No model takes "xhigh" here; pi clamps it to "high".
    let level = if level == ThinkingLevel::Xhigh {
        ThinkingLevel::High
    } else {
        level
    };
    let id = model.id.to_ascii_lowercase();
    let pro = is_gemini3(&id, "pro");
    if pro || is_gemini3(&id, "flash") {
        let name = match level {
            ThinkingLevel::Minimal | ThinkingLevel::Low if pro => "LOW",
            ThinkingLevel::Medium | ThinkingLevel::High if pro => "HIGH",
            ThinkingLevel::Minimal => "MINIMAL",
            ThinkingLevel::Low => "LOW",
            ThinkingLevel::Medium => "MEDIUM",
            _ => "HIGH",
        };
        return Some(json!({"includeThoughts": true, "thinkingLevel": name}));
    }
    let budget = match options.thinking_budgets.get(&level) {
        Some(custom) => i64::try_from(*custom).unwrap_or(i64::MAX),
        None => google_budget(&id, level),
    };
    Some(json!({"includeThoughts": true, "thinkingBudget": budget}))
}

/// pi's per-model defaults; Flash-Lite's floor is 512 (newer pi), other models let the
/// API decide (-1).
fn google_budget(id: &str, level: ThinkingLevel) -> i64 {
    let table: [i64; 4] = if id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal => table[0],
        ThinkingLevel::Low => table[1],
        ThinkingLevel::Medium => table[2],
        ThinkingLevel::High | ThinkingLevel::Xhigh => table[3],
    }
}

/// `gemini-3-<kind>` or `gemini-3.<n>-<kind>` anywhere in the id (pi's
/// `/gemini-3(?:\.\d+)?-kind/`).
fn is_gemini3(id: &str, kind: &str) -> bool {
    id.match_indices("gemini-3").any(|(at, m)| {
        let rest = &id[at + m.len()..];
        let rest = match rest.strip_prefix('.') {
            Some(minor) => {
                let digits = minor.bytes().take_while(u8::is_ascii_digit).count();
                if digits == 0 {
                    return false;
                }
                &minor[digits..]
            }
            None => rest,
        };
        rest.strip_prefix('-').is_some_and(|r| r.starts_with(kind))
    })
}

/// Models served through Google APIs that need call ids echoed (Claude, gpt-oss).
fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

/// Thought signatures are bytes for Google (base64 in JSON); anything else is rejected, so
/// signatures from other APIs (OpenAI item ids, say) are not replayed.
fn valid_signature(signature: &str) -> bool {
    let body = signature.trim_end_matches('=');
    !signature.is_empty()
        && signature.len().is_multiple_of(4)
        && signature.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A signature is replayed only to the model that made it, and only if Google can read it.
fn replayable_signature(same_model: bool, signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| same_model && valid_signature(s))
}

/// `part` with its `thoughtSignature`, if it has one.
fn signed(mut part: Value, signature: Option<&str>) -> Value {
    if let Some(signature) = signature {
        part["thoughtSignature"] = json!(signature);
    }
    part
}

/// pi's `convertMessages` for Gemini.
fn contents(model: &Model, context: &Context) -> Vec<Value> {
    let normalize = |id: &str| sanitize_tool_call_id(id);
    let needs_ids = requires_tool_call_id(&model.id);
    let replay = transform(
        &context.messages,
        model,
        if needs_ids {
            Some(&normalize as &dyn Fn(&str) -> String)
        } else {
            None
        },
    );
    let images = model.input.contains(&InputKind::Image);
    let gemini3 = model.id.to_ascii_lowercase().contains("gemini-3");
    let mut out: Vec<Value> = Vec::with_capacity(replay.len());
    for message in &replay {
        match message {
            Replay::User(user) => {
                let parts: Vec<Value> = match &user.content {
                    UserContent::Text(text) => vec![json!({"text": text})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(|block| match block {
                            ContentBlock::Text(t) => Some(json!({"text": t.text})),
                            ContentBlock::Image(image) if images => Some(inline_data(image)),
                            _ => None,
                        })
                        .collect(),
                };
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "parts": parts}));
                }
            }
            Replay::Assistant(assistant) => {
                let parts = model_parts(assistant, model, needs_ids, gemini3);
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Replay::ToolResult(result) => {
                push_tool_result(&mut out, result, images, gemini3, needs_ids)
            }
        }
    }
    out
}

/// The parts of a replayed assistant turn. Thinking stays thinking, and signatures are
/// kept, only for the model that wrote them.
fn model_parts(
    assistant: &ReplayAssistant<'_>,
    model: &Model,
    needs_ids: bool,
    gemini3: bool,
) -> Vec<Value> {
    let same = assistant.message.provider == model.provider && assistant.message.model == model.id;
    let signature = |s| replayable_signature(same, s);
    let mut parts = Vec::new();
    for block in &assistant.blocks {
        let part = match block {
            // Blank text and thinking are not sent.
            ReplayBlock::Text { text, .. } | ReplayBlock::Thinking { thinking: text, .. }
                if text.trim().is_empty() =>
            {
                continue;
            }
            ReplayBlock::Text {
                text,
                signature: sig,
            } => signed(json!({"text": text}), signature(*sig)),
            // Another model's thinking travels as plain text.
            ReplayBlock::Thinking { thinking, .. } if !same => json!({"text": thinking}),
            ReplayBlock::Thinking {
                thinking,
                signature: sig,
                ..
            } => signed(json!({"thought": true, "text": thinking}), signature(*sig)),
            ReplayBlock::ToolCall {
                call,
                id,
                thought_signature,
            } => {
                let args = if call.arguments.is_null() {
                    json!({})
                } else {
                    call.arguments.clone()
                };
                let mut function_call = json!({"name": call.name, "args": args});
                if needs_ids {
                    function_call["id"] = json!(id);
                }
                let part = json!({"functionCall": function_call});
                match signature(*thought_signature) {
                    None if gemini3 => signed(part, Some(SKIP_SIGNATURE)),
                    sig => signed(part, sig),
                }
            }
        };
        parts.push(part);
    }
    parts
}

fn push_tool_result(
    out: &mut Vec<Value>,
    result: &ReplayToolResult<'_>,
    images: bool,
    gemini3: bool,
    needs_ids: bool,
) {
    let text = texts(&result.content).collect::<Vec<_>>().join("\n");
    let image_parts: Vec<Value> = if images {
        result
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Image(image) => Some(inline_data(image)),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let value = if !text.is_empty() {
        text
    } else if !image_parts.is_empty() {
        "(see attached image)".to_owned()
    } else {
        String::new()
    };
    // pi's convention (from the SDK docs): `output` for success, `error` for failures.
    let mut outcome = Map::new();
    outcome.insert(
        if result.is_error { "error" } else { "output" }.into(),
        Value::String(value),
    );
    let mut response = json!({"name": result.tool_name, "response": outcome});
    // Gemini 3 takes images inside the function response; older models only in a user turn.
    if gemini3 && !image_parts.is_empty() {
        response["parts"] = Value::Array(image_parts.clone());
    }
    if needs_ids {
        response["id"] = json!(result.tool_call_id);
    }
    let part = json!({"functionResponse": response});
    // All responses to one turn's calls go back in a single user turn.
    let merge = out.last_mut().filter(|last| {
        last["role"] == "user"
            && last["parts"]
                .as_array()
                .is_some_and(|parts| parts.iter().any(|p| p.get("functionResponse").is_some()))
    });
    match merge.and_then(|last| last["parts"].as_array_mut()) {
        Some(parts) => parts.push(part),
        None => out.push(json!({"role": "user", "parts": [part]})),
    }
    if !gemini3 && !image_parts.is_empty() {
        let mut parts = vec![json!({"text": "Tool result image:"})];
        parts.extend(image_parts);
        out.push(json!({"role": "user", "parts": parts}));
    }
}

fn inline_data(image: &ImageContent) -> Value {
    json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
}
