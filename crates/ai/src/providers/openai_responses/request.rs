//! The request side of the OpenAI Responses API: the transcript as `input` items (pi's
//! `convertResponsesMessages`) and the request body (pi's `buildParams`).
//!
//! Reasoning items are replayed verbatim from the thinking signature (the JSON of the item,
//! encrypted content included) because requests are `store: false`: the server keeps
//! nothing, so the chain of thought must travel with every request.

use serde_json::{Map, Value, json};

use crate::model::Model;
use crate::options::{CacheRetention, StreamOptions};
use crate::providers::anthropic::transform::{
    Replay, ReplayAssistant, ReplayBlock, sanitize_tool_call_id, transform,
};
use crate::providers::openai_shared::{
    accepts_images, data_url, max_output_tokens, reasoning_effort, temperature_json,
};
use crate::types::{ContentBlock, Context, UserContent, UserMessage};

/// Providers whose `call_id|item_id` tool ids are OpenAI's own and need their rules.
const OPENAI_TOOL_CALL_PROVIDERS: [&str; 4] = [
    "openai",
    "openai-codex",
    "opencode",
    "azure-openai-responses",
];

/// OpenAI rejects `max_output_tokens` below 16.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// The JSON body of a streamed Responses request.
pub(super) fn build_body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
    let mut input = convert_messages(model, context);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("stream".into(), json!(true));
    // Nothing is kept server-side; reasoning travels encrypted instead (see `include`).
    body.insert("store".into(), json!(false));
    if options.cache_retention != CacheRetention::None
        && let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty())
    {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    if options.cache_retention == CacheRetention::Long && model.base_url.contains("api.openai.com")
    {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if let Some(limit) = max_output_tokens(model, options) {
        body.insert(
            "max_output_tokens".into(),
            json!(limit.max(MIN_OUTPUT_TOKENS)),
        );
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), temperature_json(temperature));
    }
    if !context.tools.is_empty() {
        let tools = context.tools.iter().map(|tool| {
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": crate::schema::inline_refs(&tool.parameters),
                "strict": false,
            })
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if model.reasoning {
        if let Some(effort) = reasoning_effort(model, options.reasoning) {
            body.insert(
                "reasoning".into(),
                json!({"effort": effort, "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        } else if model.name.starts_with("gpt-5") {
            // GPT-5 has no "reasoning off"; this developer note is the known way to get
            // (almost) none, as pi does.
            input.push(json!({"role": "developer", "content": [{"type": "input_text", "text": "# Juice: 0 !important"}]}));
        }
    }
    body.insert("input".into(), Value::Array(input));
    Value::Object(body)
}

fn convert_messages(model: &Model, context: &Context) -> Vec<Value> {
    let normalize = |id: &str| normalize_tool_call_id(model, id);
    let turns = transform(&context.messages, model, Some(&normalize));
    let mut input = Vec::with_capacity(turns.len() + 1);
    if let Some(prompt) = context.system_prompt.as_deref().filter(|p| !p.is_empty()) {
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        input.push(json!({"role": role, "content": prompt}));
    }
    for (index, turn) in turns.iter().enumerate() {
        match turn {
            Replay::User(user) => input.extend(user_message(model, user)),
            Replay::Assistant(assistant) => assistant_items(model, assistant, index, &mut input),
            Replay::ToolResult(result) => {
                let text = result.text();
                let output = if text.is_empty() {
                    "(see attached image)"
                } else {
                    &text
                };
                let call_id = result.tool_call_id.split('|').next().unwrap_or_default();
                input.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
                // Tool outputs are text only: images follow as a user message.
                if accepts_images(model) {
                    let images: Vec<Value> = result.images().map(input_image).collect();
                    if !images.is_empty() {
                        let mut content = vec![
                            json!({"type": "input_text", "text": "Attached image(s) from tool result:"}),
                        ];
                        content.extend(images);
                        input.push(json!({"role": "user", "content": content}));
                    }
                }
            }
        }
    }
    input
}

fn input_image(image: &crate::types::ImageContent) -> Value {
    json!({"type": "input_image", "detail": "auto", "image_url": data_url(image)})
}

fn user_message(model: &Model, user: &UserMessage) -> Option<Value> {
    let content: Vec<Value> = match &user.content {
        UserContent::Text(text) => vec![json!({"type": "input_text", "text": text})],
        UserContent::Blocks(blocks) => {
            let images = accepts_images(model);
            blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(t) => Some(json!({"type": "input_text", "text": t.text})),
                    ContentBlock::Image(image) if images => Some(input_image(image)),
                    _ => None,
                })
                .collect()
        }
    };
    (!content.is_empty()).then(|| json!({"role": "user", "content": content}))
}

fn assistant_items(
    model: &Model,
    turn: &ReplayAssistant<'_>,
    index: usize,
    input: &mut Vec<Value>,
) {
    let message = turn.message;
    // Same provider and API, other model: its function-call item ids were paired with
    // reasoning this model cannot see, which OpenAI would reject.
    let other_model =
        message.model != model.id && message.provider == model.provider && message.api == model.api;
    let mut skipped_thinking = false;
    for block in &turn.blocks {
        match block {
            ReplayBlock::Thinking { signature, .. } => {
                match signature.and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                    Some(item @ Value::Object(_)) => input.push(item),
                    _ => skipped_thinking = true,
                }
            }
            ReplayBlock::Text { text, signature } => {
                let (id, phase) = parse_text_signature(*signature);
                let id = match id {
                    None => format!("msg_{index}"),
                    // OpenAI caps item ids at 64 characters.
                    Some(id) if id.chars().count() > 64 => format!("msg_{}", short_hash(&id)),
                    Some(id) => id,
                };
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                    "status": "completed",
                    "id": id,
                });
                if let Some(phase) = phase {
                    item["phase"] = json!(phase);
                }
                input.push(item);
            }
            ReplayBlock::ToolCall { call, id, .. } => {
                let (call_id, item_id) = match id.split_once('|') {
                    Some((call_id, item_id)) => (call_id, Some(item_id)),
                    None => (id.as_ref(), None),
                };
                // Without its reasoning item, an `fc_` id fails OpenAI's pairing check.
                let item_id = item_id
                    .filter(|i| !((other_model || skipped_thinking) && i.starts_with("fc_")));
                let mut item = json!({
                    "type": "function_call",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": call.arguments.to_string(),
                });
                if let Some(item_id) = item_id {
                    item["id"] = json!(item_id);
                }
                input.push(item);
            }
        }
    }
}

/// A text signature is the message item id, plain (Pincer, older pi) or as pi's
/// `{"v":1,"id":…,"phase":…}`.
fn parse_text_signature(signature: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(signature) = signature.filter(|s| !s.is_empty()) else {
        return (None, None);
    };
    if signature.starts_with('{')
        && let Ok(parsed) = serde_json::from_str::<Value>(signature)
        && let (Some(1), Some(id)) = (parsed["v"].as_u64(), parsed["id"].as_str())
    {
        let phase = parsed["phase"]
            .as_str()
            .filter(|p| matches!(*p, "commentary" | "final_answer"));
        return (Some(id.to_owned()), phase.map(str::to_owned));
    }
    (Some(signature.to_owned()), None)
}

/// Tool-call ids from another model, made valid for OpenAI: safe characters, the item id
/// starting with `fc`, at most 64 characters each, no trailing underscores.
fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if !OPENAI_TOOL_CALL_PROVIDERS.contains(&model.provider.as_str()) {
        return id.to_owned();
    }
    let Some((call_id, item_id)) = id.split_once('|') else {
        return id.to_owned();
    };
    // Both parts follow Anthropic's id rule; each is cut to 64 characters below anyway.
    let sanitize = sanitize_tool_call_id;
    let mut item_id = sanitize(item_id.split('|').next().unwrap_or_default());
    if !item_id.starts_with("fc") {
        item_id.insert_str(0, "fc_");
    }
    let finish = |mut s: String| {
        s.truncate(64);
        s.trim_end_matches('_').to_owned()
    };
    format!("{}|{}", finish(sanitize(call_id)), finish(item_id))
}

/// pi's `shortHash` (a 53-bit cyrb-style hash in base 36), so shortened ids match pi's.
fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        h1 = (h1 ^ u32::from(unit)).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ u32::from(unit)).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_support::{assistant, model, read_turn};
    use crate::types::{ImageContent, Message, ThinkingLevel, ToolCall, ToolResultMessage};

    fn gpt(extra: Value) -> Model {
        model(
            "openai-responses",
            "openai",
            "https://api.openai.com/v1",
            extra,
        )
    }

    const REASONING: &str = r#"{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"Need the file."}]}"#;

    fn context(m: &Model) -> Context {
        read_turn(m, REASONING, Some("msg_abc"), "call_1|fc_1")
    }

    #[test]
    fn body_for_a_full_turn_is_exact() {
        let m = gpt(json!({"reasoning": true}));
        let options = StreamOptions {
            temperature: Some(1.0),
            max_tokens: Some(4096),
            reasoning: Some(ThinkingLevel::High),
            session_id: Some("sess-1".into()),
            ..StreamOptions::default()
        };
        let body = build_body(&m, &context(&m), &options);
        assert_eq!(
            body,
            json!({
                "model": "gpt-test",
                "input": [
                    {"role": "developer", "content": "Be brief."},
                    {"role": "user", "content": [{"type": "input_text", "text": "Read a.txt"}]},
                    serde_json::from_str::<Value>(REASONING).unwrap(),
                    {"type": "message", "role": "assistant", "status": "completed", "id": "msg_abc",
                     "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}]},
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
                     "arguments": "{\"path\":\"a.txt\"}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
                ],
                "stream": true,
                "store": false,
                "prompt_cache_key": "sess-1",
                "max_output_tokens": 4096,
                "temperature": 1.0,
                "tools": [{"type": "function", "name": "read", "description": "Read a file",
                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                           "strict": false}],
                "reasoning": {"effort": "high", "summary": "auto"},
                "include": ["reasoning.encrypted_content"],
            })
        );
    }

    #[test]
    fn other_models_and_missing_reasoning_drop_item_ids() {
        let m = gpt(json!({"reasoning": true, "name": "gpt-5 mini"}));
        let mut ctx = context(&m);
        // Same provider and API, another model: the fc_ id must go.
        if let Message::Assistant(a) = &mut ctx.messages[1] {
            a.model = "gpt-4.1".into();
        }
        let body = build_body(&m, &ctx, &StreamOptions::default());
        let input = body["input"].as_array().unwrap();
        let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
        assert!(call.get("id").is_none(), "{call}");
        // Text from another model loses its signature and gets a positional id.
        assert_eq!(
            input.iter().find(|i| i["type"] == "message").unwrap()["id"],
            "msg_1"
        );
        // No effort on a GPT-5: the "juice" note asks for no reasoning.
        assert_eq!(
            input.last().unwrap(),
            &json!({"role": "developer", "content": [{"type": "input_text", "text": "# Juice: 0 !important"}]})
        );
        assert!(body.get("reasoning").is_none());
        assert_eq!(body["max_output_tokens"], 16384);
    }

    #[test]
    fn foreign_tool_ids_are_normalized_and_images_follow_results() {
        let m = gpt(json!({}));
        let other = model(
            "openai-responses",
            "opencode",
            "https://opencode.ai/zen/v1",
            json!({"id": "x"}),
        );
        let long_item = format!("{}+/=", "A".repeat(80));
        let ctx = Context {
            system_prompt: None,
            messages: vec![
                assistant(
                    &other,
                    vec![ContentBlock::ToolCall(ToolCall {
                        id: format!("call 9|{long_item}"),
                        name: "shot".into(),
                        arguments: json!({}),
                        thought_signature: None,
                    })],
                ),
                Message::ToolResult(ToolResultMessage {
                    tool_call_id: format!("call 9|{long_item}"),
                    tool_name: "shot".into(),
                    content: vec![ContentBlock::Image(ImageContent {
                        data: "AAAA".into(),
                        mime_type: "image/png".into(),
                    })],
                    details: None,
                    is_error: false,
                    timestamp: 2,
                }),
            ],
            tools: vec![],
        };
        let body = build_body(
            &m,
            &ctx,
            &StreamOptions {
                max_tokens: Some(3),
                ..StreamOptions::default()
            },
        );
        let fc = format!("fc_{}", "A".repeat(61));
        assert_eq!(
            body["input"],
            json!([
                {"type": "function_call", "call_id": "call_9", "id": fc, "name": "shot", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_9", "output": "(see attached image)"},
                {"role": "user", "content": [
                    {"type": "input_text", "text": "Attached image(s) from tool result:"},
                    {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"}]},
            ])
        );
        assert_eq!(body["max_output_tokens"], 16);
    }

    #[test]
    fn a_user_image_is_an_input_image_only_for_a_model_that_takes_images() {
        let ctx = Context {
            system_prompt: None,
            messages: vec![Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::text("what is this?"),
                    ContentBlock::Image(ImageContent {
                        data: "iVBORw0KGgo=".into(),
                        mime_type: "image/png".into(),
                    }),
                ]),
                timestamp: 1,
            })],
            tools: vec![],
        };
        let vision = gpt(json!({}));
        let body = build_body(&vision, &ctx, &StreamOptions::default());
        assert_eq!(
            body["input"],
            json!([{"role": "user", "content": [
                {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}])
        );
        // A text-only model never gets the image (the API would refuse the request).
        let text_only = gpt(json!({"input": ["text"]}));
        let body = build_body(&text_only, &ctx, &StreamOptions::default());
        assert_eq!(
            body["input"],
            json!([{"role": "user", "content": [{"type": "input_text", "text": "what is this?"}]}])
        );
    }

    #[test]
    fn text_signatures_and_hash() {
        assert_eq!(
            parse_text_signature(Some("msg_1")),
            (Some("msg_1".into()), None)
        );
        assert_eq!(
            parse_text_signature(Some(r#"{"v":1,"id":"msg_2","phase":"commentary"}"#)),
            (Some("msg_2".into()), Some("commentary".into()))
        );
        assert_eq!(parse_text_signature(None), (None, None));
        assert_eq!(base36(0), "0");
        assert_eq!(base36(35), "z");
        assert_eq!(base36(36), "10");
        let h = short_hash("x".repeat(100).as_str());
        assert_eq!(h, short_hash("x".repeat(100).as_str()));
        assert!(h.len() <= 14 && h.bytes().all(|b| b.is_ascii_alphanumeric()));
    }
}
