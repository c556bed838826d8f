//! Google Generative AI: `GenerateContentResponse` chunks framed as `data: …\r\n\r\n` (thought
//! parts, text parts, whole `functionCall` parts, then a chunk with `finishReason` and full
//! `usageMetadata`), the JSON-array form, and the `generateContent` document.

use serde_json::{Value, json};

use super::{Frame, framed, stop_name};
use crate::plan::Plan;

/// Gemini's `finishReason`s (a tool call ends with `STOP` too).
const FINISH_REASONS: [&str; 3] = ["STOP", "MAX_TOKENS", "STOP"];

fn prompt_tokens(plan: &Plan) -> u64 {
    plan.usage.input + plan.usage.cache_read + plan.usage.cache_write
}

fn full_usage(plan: &Plan) -> Value {
    let u = plan.usage;
    let prompt = prompt_tokens(plan);
    let candidates = u.output - u.reasoning;
    json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "thoughtsTokenCount": u.reasoning,
        "cachedContentTokenCount": u.cache_read,
        "totalTokenCount": prompt + u.output,
    })
}

fn chunk(plan: &Plan, candidate: Value, usage: Value) -> Value {
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": plan.ctx.model,
        "responseId": format!("mock-{}", plan.ctx.seq),
    })
}

/// Every part of the answer, in order, each a separate streamed part.
fn parts(plan: &Plan) -> Vec<Value> {
    let mut parts = Vec::new();
    let thinking = plan.thinking.as_deref().unwrap_or_default();
    for (i, piece) in thinking.iter().enumerate() {
        let mut part = json!({"text": piece, "thought": true});
        if i + 1 == thinking.len() && plan.calls.is_empty() {
            part["thoughtSignature"] = json!(plan.signature);
        }
        parts.push(part);
    }
    for piece in plan.text.iter().flatten() {
        parts.push(json!({"text": piece}));
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let mut function_call = json!({"name": call.name, "args": call.args});
        if call.id_explicit {
            function_call["id"] = json!(call.id);
        }
        let mut part = json!({"functionCall": function_call});
        if i == 0 && !thinking.is_empty() {
            part["thoughtSignature"] = json!(plan.signature);
        }
        parts.push(part);
    }
    parts
}

/// Streamed chunks with their "is the final marker" flag.
fn chunks(plan: &Plan) -> Vec<(Value, bool)> {
    let prompt = prompt_tokens(plan);
    let running = json!({"promptTokenCount": prompt, "totalTokenCount": prompt});
    let mut out: Vec<(Value, bool)> = parts(plan)
        .into_iter()
        .map(|part| {
            let candidate = json!({"content": {"role": "model", "parts": [part]}, "index": 0});
            (chunk(plan, candidate, running.clone()), false)
        })
        .collect();
    let last = json!({"finishReason": stop_name(plan.stop, FINISH_REASONS), "index": 0});
    out.push((chunk(plan, last, full_usage(plan)), true));
    out
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    chunks(plan)
        .into_iter()
        .map(|(value, is_final)| {
            let mut frame = framed(None, value.to_string().as_bytes(), b"\r\n\r\n");
            frame.is_final = is_final;
            frame
        })
        .collect()
}

pub(super) fn array(plan: &Plan) -> Value {
    Value::Array(chunks(plan).into_iter().map(|(value, _)| value).collect())
}

pub(super) fn document(plan: &Plan) -> Value {
    let mut merged: Vec<Value> = Vec::new();
    for part in parts(plan) {
        // Consecutive text pieces of the same kind become one part, as in a real response.
        let is_thought = part.get("thought").is_some();
        if let (Some(Value::String(text)), Some(prev)) = (part.get("text"), merged.last_mut())
            && prev.get("thought").is_some() == is_thought
            && let Some(Value::String(prev_text)) = prev.get_mut("text")
        {
            prev_text.push_str(text);
            if let Some(signature) = part.get("thoughtSignature") {
                prev["thoughtSignature"] = signature.clone();
            }
            continue;
        }
        merged.push(part);
    }
    let candidate = json!({
        "content": {"role": "model", "parts": merged},
        "finishReason": stop_name(plan.stop, FINISH_REASONS),
        "index": 0,
    });
    chunk(plan, candidate, full_usage(plan))
}
