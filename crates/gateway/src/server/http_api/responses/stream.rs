//! `POST /v1/responses` with `stream: true`: Server-Sent Events in OpenClaw's sequence,
//! each `event: <type>` with the event object (its `type` included) as `data`:
//! `response.created`, `response.in_progress`, `response.output_item.added`,
//! `response.content_part.added`, one `response.output_text.delta` per text delta of the
//! run, `response.output_text.done`, `response.content_part.done`,
//! `response.output_item.done`, `response.completed` (or `response.incomplete`), then
//! `data: [DONE]`. A failed run ends with `response.failed` (the failed resource) instead.
//!
//! Deltas come from the shared broadcast channel, which drops a subscriber that falls
//! behind; then the rest of the reply is sent from the run's result, as chat completions do.

use std::convert::Infallible;
use std::sync::Arc;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::super::openai::{CHUNK_BUFFER, RUN_WAIT};
use super::{Ids, done_status, failure, message_item, no_usage, resource, usage};
use crate::server::Gateway;
use crate::server::runs::{GatewayEvent, RunState};

/// Answers with SSE at once; a task forwards the run's events.
pub(super) fn respond(
    gw: Arc<Gateway>,
    ids: Ids,
    events: broadcast::Receiver<Arc<GatewayEvent>>,
) -> Response {
    let (tx, rx) = mpsc::channel::<Event>(CHUNK_BUFFER);
    tokio::spawn(forward(gw, ids, events, tx));
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|event| (Ok::<_, Infallible>(event), rx))
    });
    Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// One event: `event: <type>`, `data:` the object with its `type`.
fn event(kind: &str, mut data: Value) -> Event {
    data["type"] = json!(kind);
    Event::default().event(kind).data(data.to_string())
}

fn text_event(ids: &Ids, kind: &str, key: &str, text: &str) -> Event {
    event(
        kind,
        json!({ "item_id": ids.item, "output_index": 0, "content_index": 0, key: text }),
    )
}

/// Sends the events of run `ids.response`. Returns early when the client has gone (a
/// send fails); the run goes on and its reply is kept in the session.
async fn forward(
    gw: Arc<Gateway>,
    ids: Ids,
    mut events: broadcast::Receiver<Arc<GatewayEvent>>,
    tx: mpsc::Sender<Event>,
) {
    let started = resource(&ids, "in_progress", Vec::new(), no_usage(), None);
    let mut item = message_item(&ids, "", "in_progress");
    item["content"] = json!([]);
    let opening = [
        event("response.created", json!({ "response": started })),
        event("response.in_progress", json!({ "response": started })),
        event(
            "response.output_item.added",
            json!({ "output_index": 0, "item": item }),
        ),
        event(
            "response.content_part.added",
            json!({ "item_id": ids.item, "output_index": 0, "content_index": 0,
                    "part": { "type": "output_text", "text": "", "annotations": [] } }),
        ),
    ];
    for opened in opening {
        if tx.send(opened).await.is_err() {
            return;
        }
    }
    // The text sent so far; once a delta was lost only the run's result is trusted.
    let mut sent = String::new();
    let mut lost = false;
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(_)) => {
                lost = true;
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let p = &event.payload;
        if event.event != "chat" || p["runId"] != ids.response.as_str() {
            continue;
        }
        match p["state"].as_str() {
            Some("delta") if !lost => {
                let Some(delta) = p["deltaText"].as_str().filter(|d| !d.is_empty()) else {
                    continue;
                };
                sent.push_str(delta);
                let delta = text_event(&ids, "response.output_text.delta", "delta", delta);
                if tx.send(delta).await.is_err() {
                    return;
                }
            }
            Some("final" | "error" | "aborted") => break,
            _ => {}
        }
    }
    drop(events);
    for last in closing(&gw, &ids, &sent).await {
        if tx.send(last).await.is_err() {
            return;
        }
    }
}

/// The events after the deltas: the rest of the reply this stream missed, the `done`
/// events and the final resource, or `response.failed`; then `[DONE]`.
async fn closing(gw: &Gateway, ids: &Ids, sent: &str) -> Vec<Event> {
    let done = Event::default().data("[DONE]");
    let result = match gw.runs.wait(&ids.response, RUN_WAIT).await {
        Some((RunState::Done(result), _)) => result,
        _ => {
            let error = json!({ "code": "timeout", "message": "the run did not finish in time" });
            let failed = resource(ids, "failed", Vec::new(), no_usage(), Some(error));
            return vec![
                event("response.failed", json!({ "response": failed })),
                done,
            ];
        }
    };
    let usage = usage(&result.usage);
    if let Some((_, error)) = failure(&result) {
        let failed = resource(ids, "failed", Vec::new(), usage, Some(error));
        return vec![
            event("response.failed", json!({ "response": failed })),
            done,
        ];
    }
    let mut out = Vec::new();
    // Deltas this stream missed (it fell behind): the rest of the final reply. A reply
    // that does not continue what was sent cannot be appended; its full text still comes
    // in the `done` events.
    if let Some(rest) = result.text.strip_prefix(sent)
        && !rest.is_empty()
    {
        out.push(text_event(ids, "response.output_text.delta", "delta", rest));
    }
    let text = result.text.as_str();
    let status = done_status(&result);
    let item = message_item(ids, text, status);
    out.push(text_event(ids, "response.output_text.done", "text", text));
    out.push(event(
        "response.content_part.done",
        json!({ "item_id": ids.item, "output_index": 0, "content_index": 0,
                "part": { "type": "output_text", "text": text, "annotations": [] } }),
    ));
    out.push(event(
        "response.output_item.done",
        json!({ "output_index": 0, "item": item }),
    ));
    let finished = resource(ids, status, vec![item], usage, None);
    out.push(event(
        &format!("response.{status}"),
        json!({ "response": finished }),
    ));
    out.push(done);
    out
}
