//! Building an Anthropic Messages request the way pi-ai does: headers for API keys, OAuth
//! tokens (Claude Code identity) and GitHub Copilot, prompt caching, thinking (adaptive or
//! budget) and the message conversion.

use serde_json::{Map, Value, json};

use super::transform::{Replay, ReplayBlock, ReplayToolResult, sanitize_tool_call_id, transform};
use crate::model::{InputKind, Model};
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::{common_headers, join_url};
use crate::schema::inline_refs;
use crate::types::texts;
use crate::types::{ContentBlock, Context, ThinkingLevel, UserContent};

const API_VERSION: &str = "2023-06-01";
const FINE_GRAINED_TOOL_STREAMING: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING: &str = "interleaved-thinking-2025-05-14";
/// Claude Code version pi impersonates for OAuth (subscription) tokens.
const CLAUDE_CODE_VERSION: &str = "2.1.75";
/// Anthropic only accepts OAuth tokens on requests that present as Claude Code.
pub(super) const CLAUDE_CODE_IDENTITY: &str =
    "You are Claude Code, Anthropic's official CLI for Claude.";
/// Claude Code 2.x's tool names in their canonical casing (pi's table): in OAuth mode our
/// tools of the same names (any casing) go out spelled like this and come back as ours.
pub(super) const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `name` in Claude Code's casing when it is one of its tools (case-insensitively).
pub(crate) fn to_claude_code_name(name: &str) -> &str {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|cc| cc.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name)
}

/// The name of our tool that `name` (as the model sent it) stands for: the first of
/// `tools` equal to it ignoring case, else `name` unchanged.
pub(crate) fn from_claude_code_name<'a>(name: &'a str, tools: &'a [String]) -> &'a str {
    tools
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map_or(name, String::as_str)
}
/// pi's default output cap when the caller sets none (`buildBaseOptions`).
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Output tokens pi keeps free when a thinking budget would eat the whole cap.
const MIN_OUTPUT_TOKENS: u64 = 1024;

/// How the request authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Auth {
    ApiKey,
    /// Claude Pro/Max OAuth token (`sk-ant-oat…`): bearer auth plus Claude Code identity.
    OauthToken,
    /// GitHub Copilot's Anthropic endpoint: bearer auth, no fine-grained tool streaming.
    Copilot,
}

impl Auth {
    pub(super) fn detect(model: &Model, api_key: Option<&str>) -> Self {
        if model.provider == "github-copilot" {
            Self::Copilot
        } else if api_key.is_some_and(|k| k.contains("sk-ant-oat")) {
            Self::OauthToken
        } else {
            Self::ApiKey
        }
    }
}

/// The request headers. The model's and the caller's headers win over ours, as pi merges
/// them last.
pub(super) fn headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: Option<&str>,
    auth: Auth,
) -> Vec<(String, String)> {
    let mut headers = common_headers(model, options);
    let mut ours: Vec<(&'static str, String)> = vec![("anthropic-version", API_VERSION.to_owned())];
    let betas = match auth {
        Auth::Copilot => INTERLEAVED_THINKING.to_owned(),
        Auth::ApiKey => format!("{FINE_GRAINED_TOOL_STREAMING},{INTERLEAVED_THINKING}"),
        Auth::OauthToken => format!(
            "claude-code-20250219,oauth-2025-04-20,{FINE_GRAINED_TOOL_STREAMING},{INTERLEAVED_THINKING}"
        ),
    };
    ours.push(("anthropic-beta", betas));
    if let Some(key) = api_key {
        match auth {
            Auth::ApiKey => ours.push(("x-api-key", key.to_owned())),
            Auth::OauthToken | Auth::Copilot => {
                ours.push(("authorization", format!("Bearer {key}")))
            }
        }
    }
    if auth == Auth::OauthToken {
        ours.push(("user-agent", format!("claude-cli/{CLAUDE_CODE_VERSION}")));
        ours.push(("x-app", "cli".to_owned()));
    }
    if auth == Auth::Copilot {
        ours.extend(crate::providers::copilot::dynamic_headers(context));
    }
    for (name, value) in ours {
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            headers.push((name.to_owned(), value));
        }
    }
    headers
}

pub(super) fn url(model: &Model) -> String {
    join_url(&model.base_url, "v1/messages")
}

/// How the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thinking {
    Off,
    /// Opus/Sonnet 4.6: the model decides how much to think, steered by an effort level.
    Adaptive(&'static str),
    Budget(u64),
}

/// The request body.
pub(super) fn body(model: &Model, context: &Context, options: &StreamOptions, auth: Auth) -> Value {
    let cache_control = cache_control(&model.base_url, options.cache_retention);
    let level = options.reasoning.filter(|l| *l != ThinkingLevel::Off);
    let mut max_tokens = options
        .max_tokens
        .filter(|n| *n > 0)
        .unwrap_or_else(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP));
    let thinking = match level {
        Some(level) if model.reasoning && supports_adaptive_thinking(&model.id) => {
            Thinking::Adaptive(effort(level))
        }
        Some(level) if model.reasoning => {
            let (adjusted, budget) = adjust_for_thinking(max_tokens, model, options, level);
            max_tokens = adjusted;
            // pi falls back to the API's minimum when the budget came out as zero.
            Thinking::Budget(if budget == 0 { 1024 } else { budget })
        }
        _ => Thinking::Off,
    };

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert(
        "messages".into(),
        Value::Array(messages(model, context, cache_control.as_ref())),
    );
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), Value::Bool(true));
    let mut system = Vec::new();
    let text_block = |text: &str| {
        let mut block = json!({"type": "text", "text": text});
        if let (Some(cc), Value::Object(map)) = (&cache_control, &mut block) {
            map.insert("cache_control".into(), cc.clone());
        }
        block
    };
    if auth == Auth::OauthToken {
        system.push(text_block(CLAUDE_CODE_IDENTITY));
    }
    if let Some(prompt) = context.system_prompt.as_deref() {
        system.push(text_block(prompt));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    // Anthropic rejects a temperature other than 1 while thinking.
    if let (Some(t), Thinking::Off) = (options.temperature, thinking) {
        body.insert("temperature".into(), json!(f32_to_json(t)));
    }
    if !context.tools.is_empty() {
        let tools = context.tools.iter().map(|tool| {
            // pi copies `properties` and `required` only. Schemas derived from Rust types
            // keep nested types in `$defs`, which that would cut off, so refs are inlined
            // first.
            let schema = inline_refs(&tool.parameters);
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": {
                    "type": "object",
                    "properties": schema.get("properties").cloned().unwrap_or_else(|| json!({})),
                    "required": schema.get("required").cloned().unwrap_or_else(|| json!([])),
                },
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if auth == Auth::OauthToken {
        claude_code_tool_names(&mut body);
    }
    match thinking {
        Thinking::Off => {}
        Thinking::Adaptive(effort) => {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Budget(budget) => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
    }
    Value::Object(body)
}

/// OAuth mode: tool definitions and replayed tool calls carry Claude Code's spelling.
fn claude_code_tool_names(body: &mut Map<String, Value>) {
    let rename = |slot: Option<&mut Value>| {
        if let Some(Value::String(name)) = slot {
            let canonical = to_claude_code_name(name);
            if canonical != name {
                *name = canonical.to_owned();
            }
        }
    };
    if let Some(Value::Array(tools)) = body.get_mut("tools") {
        for tool in tools {
            rename(tool.get_mut("name"));
        }
    }
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        for message in messages {
            if let Some(Value::Array(blocks)) = message.get_mut("content") {
                for block in blocks.iter_mut().filter(|b| b["type"] == "tool_use") {
                    rename(block.get_mut("name"));
                }
            }
        }
    }
}

/// `{type: "ephemeral"}` (with a one-hour TTL for long retention on Anthropic's own API,
/// the only place that offers it), or nothing when caching is off.
fn cache_control(base_url: &str, retention: CacheRetention) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long if base_url.contains("api.anthropic.com") => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        CacheRetention::Short | CacheRetention::Long => Some(json!({"type": "ephemeral"})),
    }
}

fn supports_adaptive_thinking(model_id: &str) -> bool {
    ["opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"]
        .iter()
        .any(|m| model_id.contains(m))
}

fn effort(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "max",
    }
}

/// pi's `adjustMaxTokensForThinking`: the budget comes on top of the output cap (up to the
/// model's limit), and shrinks when the cap would leave no room for the answer.
fn adjust_for_thinking(
    base: u64,
    model: &Model,
    options: &StreamOptions,
    level: ThinkingLevel,
) -> (u64, u64) {
    // Budget providers have no "xhigh"; pi clamps it to "high" before the lookup.
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

/// JSON has no f32: going through the decimal form keeps `0.7` from becoming
/// `0.699999988079071`.
pub(crate) fn f32_to_json(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// pi's `convertMessages` for Anthropic.
fn messages(model: &Model, context: &Context, cache_control: Option<&Value>) -> Vec<Value> {
    let replay = transform(&context.messages, model, Some(&sanitize_tool_call_id));
    let images = model.input.contains(&InputKind::Image);
    let mut out: Vec<Value> = Vec::with_capacity(replay.len());
    let mut pending_results: Vec<Value> = Vec::new();
    for message in &replay {
        if !matches!(message, Replay::ToolResult(_)) && !pending_results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut pending_results)}));
        }
        match message {
            Replay::User(user) => match &user.content {
                UserContent::Text(text) if !text.trim().is_empty() => {
                    out.push(json!({"role": "user", "content": text}));
                }
                UserContent::Text(_) => {}
                UserContent::Blocks(blocks) => {
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter_map(|block| match block {
                            ContentBlock::Text(t) if !t.text.trim().is_empty() => {
                                Some(json!({"type": "text", "text": t.text}))
                            }
                            ContentBlock::Image(image) if images => Some(image_block(image)),
                            _ => None,
                        })
                        .collect();
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    }
                }
            },
            Replay::Assistant(assistant) => {
                let content: Vec<Value> = assistant
                    .blocks
                    .iter()
                    .filter_map(assistant_block)
                    .collect();
                if !content.is_empty() {
                    out.push(json!({"role": "assistant", "content": content}));
                }
            }
            // Consecutive results go back as one user message (z.ai's endpoint needs it).
            Replay::ToolResult(result) => pending_results.push(tool_result(result)),
        }
    }
    if !pending_results.is_empty() {
        out.push(json!({"role": "user", "content": pending_results}));
    }
    if let Some(cc) = cache_control {
        mark_last_user_message(&mut out, cc);
    }
    out
}

fn assistant_block(block: &ReplayBlock<'_>) -> Option<Value> {
    match block {
        ReplayBlock::Text { text, .. } if !text.trim().is_empty() => {
            Some(json!({"type": "text", "text": text}))
        }
        ReplayBlock::Text { .. } => None,
        ReplayBlock::Thinking {
            signature: Some(data),
            redacted: true,
            ..
        } => Some(json!({"type": "redacted_thinking", "data": data})),
        // Redacted thinking without its opaque data cannot be replayed at all.
        ReplayBlock::Thinking { redacted: true, .. } => None,
        ReplayBlock::Thinking { thinking, .. } if thinking.trim().is_empty() => None,
        ReplayBlock::Thinking {
            thinking,
            signature,
            ..
        } => match signature {
            Some(sig) if !sig.trim().is_empty() => {
                Some(json!({"type": "thinking", "thinking": thinking, "signature": sig}))
            }
            // Unsigned thinking (an aborted stream) would be rejected; plain text without
            // tags keeps the content and does not teach the model to write tags.
            _ => Some(json!({"type": "text", "text": thinking})),
        },
        ReplayBlock::ToolCall { call, id, .. } => Some(json!({
            "type": "tool_use",
            "id": id,
            "name": call.name,
            "input": if call.arguments.is_null() { json!({}) } else { call.arguments.clone() },
        })),
    }
}

fn tool_result(result: &ReplayToolResult<'_>) -> Value {
    let has_images = result
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image(_)));
    let content = if has_images {
        let mut blocks: Vec<Value> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(json!({"type": "text", "text": t.text})),
                ContentBlock::Image(image) => Some(image_block(image)),
                _ => None,
            })
            .collect();
        if !blocks.iter().any(|b| b["type"] == "text") {
            blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
        }
        Value::Array(blocks)
    } else {
        let texts: Vec<&str> = texts(&result.content).collect();
        Value::String(texts.join("\n"))
    };
    json!({
        "type": "tool_result",
        "tool_use_id": result.tool_call_id,
        "content": content,
        "is_error": result.is_error,
    })
}

fn image_block(image: &crate::types::ImageContent) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}})
}

/// Cache the whole conversation: a breakpoint on the last block of the last user message.
fn mark_last_user_message(messages: &mut [Value], cache_control: &Value) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    if last["role"] != "user" {
        return;
    }
    match &mut last["content"] {
        Value::Array(blocks) => {
            if let Some(Value::Object(block)) = blocks.last_mut() {
                let kind = block.get("type").and_then(Value::as_str);
                if matches!(kind, Some("text" | "image" | "tool_result")) {
                    block.insert("cache_control".into(), cache_control.clone());
                }
            }
        }
        content @ Value::String(_) => {
            let text = std::mem::take(content);
            *content = json!([{"type": "text", "text": text, "cache_control": cache_control}]);
        }
        _ => {}
    }
}
