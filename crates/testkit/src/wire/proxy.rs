//! pi's proxy stream (`/api/stream`): `ProxyAssistantMessageEvent`s as `data:` lines, one
//! content index per block, ending with `done` and pi-shaped usage.

use serde_json::{Value, json};

use super::{Frame, merge, sse_typed, stop_name};
use crate::plan::Plan;

/// pi's stop reasons.
const REASONS: [&str; 3] = ["stop", "length", "toolUse"];

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
        let end = json!({"contentSignature": plan.signature});
        block(&mut out, index, "thinking", thinking, json!({}), end);
        index += 1;
    }
    if let Some(text) = &plan.text {
        block(&mut out, index, "text", text, json!({}), json!({}));
        index += 1;
    }
    for call in &plan.calls {
        let start = json!({"id": call.id, "toolName": call.name});
        block(
            &mut out,
            index,
            "toolcall",
            &call.arg_chunks,
            start,
            json!({}),
        );
        index += 1;
    }
    out.push(
        sse_typed(
            "done",
            json!({"reason": stop_name(plan.stop, REASONS), "usage": usage(plan)}),
        )
        .last(),
    );
    out
}

/// One content block at `index`: `{kind}_start` (with `start`'s fields), a `{kind}_delta`
/// per piece, then `{kind}_end` (with `end`'s fields).
fn block(
    out: &mut Vec<Frame>,
    index: usize,
    kind: &str,
    pieces: &[String],
    start: Value,
    end: Value,
) {
    let at = json!({"contentIndex": index});
    out.push(sse_typed(&format!("{kind}_start"), merge(&at, start)));
    for piece in pieces {
        let delta = merge(&at, json!({"delta": piece}));
        out.push(sse_typed(&format!("{kind}_delta"), delta));
    }
    out.push(sse_typed(&format!("{kind}_end"), merge(&at, end)));
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
        "stopReason": stop_name(plan.stop, REASONS),
        "usage": usage(plan),
    })
}
