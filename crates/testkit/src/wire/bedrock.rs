//! Amazon Bedrock `ConverseStream`: AWS event-stream messages (prelude, string headers
//! `:event-type` / `:content-type` / `:message-type`, JSON payload, CRC32s) carrying
//! `messageStart`, reasoning / text / tool-use content blocks, `messageStop` and `metadata`.
//! Written independently of pincer-ai's decoder, so the two cannot share a framing bug.

use serde_json::{Value, json};

use super::{Frame, stop_name};
use crate::plan::Plan;

/// Bedrock's `stopReason`s.
const STOP_REASONS: [&str; 3] = ["end_turn", "max_tokens", "tool_use"];

fn push_header(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    out.push(7); // string
    out.extend_from_slice(&(value.len() as u16).to_be_bytes());
    out.extend_from_slice(value.as_bytes());
}

/// One event-stream message.
pub(crate) fn message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        push_header(&mut head, name, value);
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn event(kind: &str, body: &Value) -> Frame {
    Frame::new(message(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        body.to_string().as_bytes(),
    ))
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    let mut out = vec![event("messageStart", &json!({"role": "assistant"}))];
    let mut index = 0;
    let delta = |index: u32, delta: Value| {
        event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": index, "delta": delta}),
        )
    };
    let stop = |index: u32| event("contentBlockStop", &json!({"contentBlockIndex": index}));
    if let Some(thinking) = &plan.thinking {
        for piece in thinking {
            out.push(delta(index, json!({"reasoningContent": {"text": piece}})));
        }
        out.push(delta(
            index,
            json!({"reasoningContent": {"signature": plan.signature}}),
        ));
        out.push(stop(index));
        index += 1;
    }
    if let Some(text) = &plan.text {
        for piece in text {
            out.push(delta(index, json!({"text": piece})));
        }
        out.push(stop(index));
        index += 1;
    }
    for call in &plan.calls {
        out.push(event(
            "contentBlockStart",
            &json!({"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call.id, "name": call.name}}}),
        ));
        for piece in &call.arg_chunks {
            out.push(delta(index, json!({"toolUse": {"input": piece}})));
        }
        out.push(stop(index));
        index += 1;
    }
    out.push(event(
        "messageStop",
        &json!({"stopReason": stop_name(plan.stop, STOP_REASONS)}),
    ));
    let u = plan.usage;
    out.push(
        event(
            "metadata",
            &json!({
                "usage": {
                    "inputTokens": u.input,
                    "outputTokens": u.output,
                    "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
                    "cacheReadInputTokens": u.cache_read,
                    "cacheWriteInputTokens": u.cache_write,
                },
                "metrics": {"latencyMs": 1},
            }),
        )
        .last(),
    );
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_published_empty_message() {
        // aws-c-event-stream's `empty_message` vector.
        assert_eq!(
            message(&[], b""),
            [
                0, 0, 0, 0x10, 0, 0, 0, 0, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff
            ]
        );
    }
}
