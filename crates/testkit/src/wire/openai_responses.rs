//! OpenAI Responses: numbered `response.*` events (created, in_progress, reasoning summary,
//! message text, function calls, completed) and the non-streaming `response` document.

use serde_json::{Value, json};

use super::{Frame, merge, sse_event};
use crate::plan::Plan;
use crate::scenario::StopReason;

/// Collects events, numbering them.
struct Events {
    out: Vec<Frame>,
    next: u64,
}

impl Events {
    fn push(&mut self, kind: &str, mut body: Value) -> &mut Frame {
        body["sequence_number"] = json!(self.next);
        self.next += 1;
        self.out.push(sse_event(kind, body));
        let last = self.out.len() - 1;
        &mut self.out[last]
    }
}

fn usage(plan: &Plan) -> Value {
    let u = plan.usage;
    let input = u.input + u.cache_read + u.cache_write;
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": input + u.output,
    })
}

fn response(plan: &Plan, status: &str, output: Vec<Value>, usage: Value) -> Value {
    let incomplete = (status == "incomplete").then(|| json!({"reason": "max_output_tokens"}));
    json!({
        "id": format!("resp_mock_{}", plan.ctx.seq),
        "object": "response",
        "created_at": plan.ctx.created,
        "status": status,
        "model": plan.ctx.model,
        "output": output,
        "incomplete_details": incomplete,
        "error": null,
        "usage": usage,
    })
}

fn final_status(plan: &Plan) -> &'static str {
    if plan.stop == StopReason::Length {
        "incomplete"
    } else {
        "completed"
    }
}

fn reasoning_item(plan: &Plan, id: &str, text: &str) -> Value {
    json!({
        "id": id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text}],
        "encrypted_content": plan.signature,
    })
}

fn message_item(id: &str, text: &str) -> Value {
    json!({
        "id": id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

fn call_item(id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
    json!({
        "id": id,
        "type": "function_call",
        "status": status,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
    })
}

/// The output items of the finished response.
fn output_items(plan: &Plan) -> Vec<Value> {
    let seq = plan.ctx.seq;
    let mut items = Vec::new();
    if let Some(thinking) = plan.thinking_text() {
        items.push(reasoning_item(plan, &format!("rs_mock_{seq}"), &thinking));
    }
    if let Some(text) = plan.text_text() {
        items.push(message_item(&format!("msg_mock_{seq}"), &text));
    }
    for (i, call) in plan.calls.iter().enumerate() {
        let id = format!("fc_mock_{seq}_{i}");
        items.push(call_item(
            &id,
            &call.id,
            &call.name,
            &call.args_json,
            "completed",
        ));
    }
    items
}

/// How a text output item (a reasoning summary or a message's text) streams: the item
/// added, an empty part, the text's deltas and whole text, the full part, the item done.
struct TextStream {
    /// The part's index field next to `item_id` and `output_index`.
    index_field: &'static str,
    /// `{part_event}.added` / `.done`.
    part_event: &'static str,
    /// `{text_event}.delta` / `.done`.
    text_event: &'static str,
    /// The part holding a text.
    part: fn(&str) -> Value,
    /// Fields the text events add.
    text_extra: Value,
}

impl TextStream {
    fn events(
        &self,
        ev: &mut Events,
        index: usize,
        item: &Value,
        added: Value,
        pieces: &[String],
        text: &str,
    ) {
        let (part_event, text_event) = (self.part_event, self.text_event);
        let at = json!({"item_id": item["id"], "output_index": index, self.index_field: 0});
        let with = |extra: Value| merge(&at, extra);
        let text_with = |extra: Value| with(merge(&extra, self.text_extra.clone()));
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
        );
        let empty_part = (self.part)("");
        ev.push(
            &format!("{part_event}.added"),
            with(json!({"part": empty_part})),
        );
        for piece in pieces {
            ev.push(
                &format!("{text_event}.delta"),
                text_with(json!({"delta": piece})),
            );
        }
        ev.push(
            &format!("{text_event}.done"),
            text_with(json!({"text": text})),
        );
        let part = (self.part)(text);
        ev.push(&format!("{part_event}.done"), with(json!({"part": part})));
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }
}

pub(super) fn frames(plan: &Plan) -> Vec<Frame> {
    let mut ev = Events {
        out: Vec::new(),
        next: 0,
    };
    let pending = response(plan, "in_progress", Vec::new(), Value::Null);
    ev.push("response.created", json!({"response": pending}));
    ev.push("response.in_progress", json!({"response": pending}));
    let items = output_items(plan);
    let mut items_iter = items.iter();
    let mut index = 0usize;
    if let Some(pieces) = &plan.thinking
        && let Some(item) = items_iter.next()
    {
        let text = plan.thinking_text().unwrap_or_default();
        let added = json!({"id": item["id"], "type": "reasoning", "summary": []});
        let stream = TextStream {
            index_field: "summary_index",
            part_event: "response.reasoning_summary_part",
            text_event: "response.reasoning_summary_text",
            part: |text| json!({"type": "summary_text", "text": text}),
            text_extra: json!({}),
        };
        stream.events(&mut ev, index, item, added, pieces, &text);
        index += 1;
    }
    if let Some(pieces) = &plan.text
        && let Some(item) = items_iter.next()
    {
        let text = plan.text_text().unwrap_or_default();
        let added = json!({"id": item["id"], "type": "message", "status": "in_progress",
            "role": "assistant", "content": []});
        let stream = TextStream {
            index_field: "content_index",
            part_event: "response.content_part",
            text_event: "response.output_text",
            part: |text| json!({"type": "output_text", "text": text, "annotations": []}),
            text_extra: json!({"logprobs": []}),
        };
        stream.events(&mut ev, index, item, added, pieces, &text);
        index += 1;
    }
    for (call, item) in plan.calls.iter().zip(items_iter) {
        let id = &item["id"];
        let added = call_item(
            id.as_str().unwrap_or_default(),
            &call.id,
            &call.name,
            "",
            "in_progress",
        );
        ev.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
        );
        let at = json!({"item_id": id, "output_index": index});
        for piece in &call.arg_chunks {
            ev.push(
                "response.function_call_arguments.delta",
                merge(&at, json!({"delta": piece})),
            );
        }
        ev.push(
            "response.function_call_arguments.done",
            merge(&at, json!({"arguments": call.args_json, "name": call.name})),
        );
        ev.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        index += 1;
    }
    let done = response(plan, final_status(plan), items, usage(plan));
    ev.push("response.completed", json!({"response": done}))
        .is_final = true;
    ev.out
}

pub(super) fn document(plan: &Plan) -> Value {
    response(plan, final_status(plan), output_items(plan), usage(plan))
}
