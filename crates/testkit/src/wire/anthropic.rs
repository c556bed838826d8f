//! Anthropic Messages: `message_start`, `ping`, content blocks (thinking + signature,
//! redacted thinking, text, tool_use with `input_json_delta`), `message_delta`,
//! `message_stop`; and the non-streaming `message` document.

use serde_json::{Value, json};

use super::{Frame, sse_event, stop_name};
use crate::plan::Plan;

/// Anthropic's `stop_reason`s.
const STOP_REASONS: [&str; 3] = ["end_turn", "max_tokens", "tool_use"];

fn id(plan: &Plan) -> String {
    format!("msg_mock_{}", plan.ctx.seq)
}

fn usage(plan: &Plan, output: u64) -> Value {
    json!({
        "input_tokens": plan.usage.input,
        "cache_creation_input_tokens": plan.usage.cache_write,
        "cache_read_input_tokens": plan.usage.cache_read,
        "output_tokens": output,
    })
}

fn event(name: &str, body: Value) -> Frame {
    sse_event(name, body)
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    let mut out = vec![
        event(
            "message_start",
            json!({"message": {
                "id": id(plan),
                "type": "message",
                "role": "assistant",
                "model": plan.ctx.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage(plan, 1),
            }}),
        ),
        event("ping", json!({})),
    ];
    let mut index = 0;
    let mut block = |out: &mut Vec<Frame>, start: Value, deltas: Vec<Value>| {
        out.push(event(
            "content_block_start",
            json!({"index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push(event(
                "content_block_delta",
                json!({"index": index, "delta": delta}),
            ));
        }
        out.push(event("content_block_stop", json!({"index": index})));
        index += 1;
    };
    if let Some(thinking) = &plan.thinking {
        let mut deltas: Vec<Value> = thinking
            .iter()
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": plan.signature}));
        block(
            &mut out,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if let Some(data) = &plan.redacted {
        block(
            &mut out,
            json!({"type": "redacted_thinking", "data": data}),
            Vec::new(),
        );
    }
    if let Some(text) = &plan.text {
        let deltas = text
            .iter()
            .map(|piece| json!({"type": "text_delta", "text": piece}))
            .collect();
        block(&mut out, json!({"type": "text", "text": ""}), deltas);
    }
    for call in &plan.calls {
        let deltas = call
            .arg_chunks
            .iter()
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        block(
            &mut out,
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            deltas,
        );
    }
    out.push(event(
        "message_delta",
        json!({
            "delta": {"stop_reason": stop_name(plan.stop, STOP_REASONS), "stop_sequence": null},
            "usage": {"output_tokens": plan.usage.output},
        }),
    ));
    out.push(event("message_stop", json!({})).last());
    out
}

pub(super) fn document(plan: &Plan) -> Value {
    let mut content = Vec::new();
    if let Some(thinking) = plan.thinking_text() {
        content
            .push(json!({"type": "thinking", "thinking": thinking, "signature": plan.signature}));
    }
    if let Some(data) = &plan.redacted {
        content.push(json!({"type": "redacted_thinking", "data": data}));
    }
    if let Some(text) = plan.text_text() {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &plan.calls {
        content.push(
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args}),
        );
    }
    json!({
        "id": id(plan),
        "type": "message",
        "role": "assistant",
        "model": plan.ctx.model,
        "content": content,
        "stop_reason": stop_name(plan.stop, STOP_REASONS),
        "stop_sequence": null,
        "usage": usage(plan, plan.usage.output),
    })
}
