//! Helpers for the OpenAI provider tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::event::AssistantMessageEvent;
use crate::model::Model;
use crate::types::{AssistantMessage, StopReason};

/// A model for tests; `extra` overrides any field.
pub fn model(api: &str, provider: &str, base_url: &str, extra: Value) -> Model {
    let mut value = json!({"id":"gpt-test","name":"GPT Test","api":api,"provider":provider,
        "baseUrl":base_url,"reasoning":false,"input":["text","image"],
        "cost":{"input":2.0,"output":8.0,"cacheRead":0.5,"cacheWrite":0.0},
        "contextWindow":128000,"maxTokens":16384});
    if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), extra) {
        target.extend(extra);
    }
    serde_json::from_value(value).unwrap()
}

/// The `type` of each event, as pi names it.
pub fn kinds(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The final message of a finished stream, with its timestamp zeroed so two runs compare.
pub fn final_message(events: &[AssistantMessageEvent]) -> (StopReason, AssistantMessage) {
    let terminal: Vec<_> = events.iter().filter(|e| e.is_terminal()).collect();
    assert_eq!(terminal.len(), 1, "exactly one terminal event: {events:?}");
    let (reason, mut message) = match terminal[0] {
        AssistantMessageEvent::Done { reason, message } => (*reason, message.clone()),
        AssistantMessageEvent::Error { reason, error, .. } => (*reason, error.clone()),
        _ => unreachable!(),
    };
    message.timestamp = 0;
    (reason, message)
}

/// The error event's kind and message.
pub fn failure(events: &[AssistantMessageEvent]) -> (crate::error::ErrorKind, String) {
    match events.last() {
        Some(AssistantMessageEvent::Error { kind, error, .. }) => (
            kind.clone(),
            error.error_message.clone().unwrap_or_default(),
        ),
        other => panic!("expected an error event, got {other:?}"),
    }
}
