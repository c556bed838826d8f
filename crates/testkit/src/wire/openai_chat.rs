//! OpenAI Chat Completions: `chat.completion.chunk` SSE frames ending in `data: [DONE]`, and
//! the non-streaming `chat.completion` document. Reasoning goes in `reasoning_content`, as
//! DeepSeek and other OpenAI-compatible servers do.

use serde_json::{Value, json};

use super::{Frame, OPENAI_FINISH, sse_data, stop_name};
use crate::plan::Plan;

fn usage(plan: &Plan) -> Value {
    let u = plan.usage;
    let prompt = u.input + u.cache_read + u.cache_write;
    let mut details = json!({"cached_tokens": u.cache_read});
    if u.cache_write > 0 {
        details["cache_write_tokens"] = json!(u.cache_write);
    }
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": u.output,
        "total_tokens": prompt + u.output,
        "prompt_tokens_details": details,
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
    })
}

fn id(plan: &Plan) -> String {
    format!("chatcmpl-mock-{}", plan.ctx.seq)
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    let id = id(plan);
    let chunk = |delta: Value, finish: Value| {
        sse_data(&json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": plan.ctx.created,
            "model": plan.ctx.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    for piece in plan.thinking.iter().flatten() {
        out.push(chunk(json!({"reasoning_content": piece}), Value::Null));
    }
    for piece in plan.text.iter().flatten() {
        out.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (index, call) in plan.calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }]}),
            Value::Null,
        ));
        for piece in &call.arg_chunks {
            out.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    out.push(chunk(json!({}), json!(stop_name(plan.stop, OPENAI_FINISH))));
    if plan.ctx.include_usage {
        out.push(sse_data(&json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": plan.ctx.created,
            "model": plan.ctx.model,
            "choices": [],
            "usage": usage(plan),
        })));
    }
    out.push(Frame::new(b"data: [DONE]\n\n".to_vec()).last());
    out
}

pub(super) fn document(plan: &Plan) -> Value {
    let mut message = json!({"role": "assistant", "content": plan.text_text()});
    if let Some(thinking) = plan.thinking_text() {
        message["reasoning_content"] = json!(thinking);
    }
    if !plan.calls.is_empty() {
        let calls: Vec<Value> = plan
            .calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.args_json},
                })
            })
            .collect();
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": id(plan),
        "object": "chat.completion",
        "created": plan.ctx.created,
        "model": plan.ctx.model,
        "choices": [{"index": 0, "message": message, "finish_reason": stop_name(plan.stop, OPENAI_FINISH)}],
        "usage": usage(plan),
    })
}
