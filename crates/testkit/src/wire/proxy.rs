//! pi's proxy stream (`/api/stream`): `ProxyAssistantMessageEvent`s as `data:` lines, one
//! content index per block, ending with `done` and pi-shaped usage.

use serde_json::{Value, json};

use super::{Frame, sse_typed};
use crate::plan::Plan;
use crate::scenario::StopReason;

fn reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop => "stop",
        StopReason::Length => "length",
        StopReason::ToolUse => "toolUse",
    }
}

fn usage(plan: &Plan) -> Value {
    let u = plan.usage;
    json!({
        "input": u.input,
        "output": u.output,
        "cacheRead": u.cache_read,
        "cacheWrite": u.cache_write,
        "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    })
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    let mut out = vec![sse_typed("start", json!({}))];
    let mut index = 0;
    if let Some(thinking) = &plan.thinking {
        out.push(sse_typed("thinking_start", json!({"contentIndex": index})));
        for piece in thinking {
            out.push(sse_typed(
                "thinking_delta",
                json!({"contentIndex": index, "delta": piece}),
            ));
        }
        out.push(sse_typed(
            "thinking_end",
            json!({"contentIndex": index,
            "contentSignature": plan.signature}),
        ));
        index += 1;
    }
    if let Some(text) = &plan.text {
        out.push(sse_typed("text_start", json!({"contentIndex": index})));
        for piece in text {
            out.push(sse_typed(
                "text_delta",
                json!({"contentIndex": index, "delta": piece}),
            ));
        }
        out.push(sse_typed("text_end", json!({"contentIndex": index})));
        index += 1;
    }
    for call in &plan.calls {
        out.push(sse_typed(
            "toolcall_start",
            json!({"contentIndex": index,
            "id": call.id, "toolName": call.name}),
        ));
        for piece in &call.arg_chunks {
            out.push(sse_typed(
                "toolcall_delta",
                json!({"contentIndex": index, "delta": piece}),
            ));
        }
        out.push(sse_typed("toolcall_end", json!({"contentIndex": index})));
        index += 1;
    }
    out.push(
        sse_typed(
            "done",
            json!({"reason": reason(plan.stop), "usage": usage(plan)}),
        )
        .last(),
    );
    out
}

/// The proxy always streams; a non-streaming request gets the final message as pi builds it.
pub(super) fn document(plan: &Plan) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = plan.thinking_text() {
        content.push(
            json!({"type": "thinking", "thinking": thinking, "thinkingSignature": plan.signature}),
        );
    }
    if let Some(text) = plan.text_text() {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &plan.calls {
        content.push(
            json!({"type": "toolCall", "id": call.id, "name": call.name, "arguments": call.args}),
        );
    }
    json!({
        "role": "assistant",
        "content": content,
        "model": plan.ctx.model,
        "stopReason": reason(plan.stop),
        "usage": usage(plan),
    })
}
