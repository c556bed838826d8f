//! A worker's event lines read back as [`AgentEvent`]s: what lets the gateway drive an RPC
//! worker and an in-process agent through the same event consumers (`RunEmitter`, the
//! turn outcome). pi writes every agent event with its fields in camelCase; `message_update`
//! also carries the partial message, which the gateway does not need (it rebuilds it).
//!
//! Events the gateway has no use for (`queue_update`, `compaction_*`, `auto_retry_*`,
//! `extension_*`) and lines that do not parse as the event they name decode to `None`:
//! a worker newer than Pincer, or one that writes something odd, costs that one event,
//! never the turn.

use pincer_agent::AgentEvent;
use serde::Deserialize;
use serde_json::Value;

/// The agent event a worker's line carries, if it is one the gateway follows.
pub fn agent_event(line: &Value) -> Option<AgentEvent> {
    match AgentEvent::deserialize(line) {
        Ok(event) => Some(event),
        Err(e) => {
            // Unknown types land here too; only a known type failing is worth a note.
            let ty = line.get("type").and_then(Value::as_str).unwrap_or("");
            if KNOWN.contains(&ty) {
                tracing::warn!(event = ty, error = %e, "rpc: cannot read a worker event; skipped");
            }
            None
        }
    }
}

/// The event types [`agent_event`] reads (`AgentEvent` reads every type it writes but the
/// compaction events, which pi shapes differently and the gateway has no use for).
const KNOWN: [&str; 10] = [
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
];

#[cfg(test)]
mod tests {
    use super::*;
    use pincer_agent::ToolOutput;
    use pincer_ai::{AssistantMessageEvent, ContentBlock, Message};
    use serde_json::json;

    /// Every event the agent writes reads back as itself.
    #[test]
    fn agent_events_round_trip() {
        let assistant = Message::Assistant(pincer_ai::AssistantMessage {
            content: vec![ContentBlock::text("hi")],
            provider: "mock".into(),
            model: "m".into(),
            ..Default::default()
        });
        let events = vec![
            AgentEvent::AgentStart,
            AgentEvent::TurnStart,
            AgentEvent::MessageStart {
                message: Message::user("hello"),
            },
            AgentEvent::MessageEnd {
                message: assistant.clone(),
            },
            AgentEvent::ToolExecutionStart {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                args: json!({"path": "a"}),
            },
            AgentEvent::ToolExecutionUpdate {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                args: json!({"path": "a"}),
                partial_result: ToolOutput::text("par"),
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                result: ToolOutput {
                    content: vec![ContentBlock::text("done")],
                    details: Some(json!({"n": 1})),
                },
                is_error: true,
            },
            AgentEvent::TurnEnd {
                message: assistant.clone(),
                tool_results: vec![],
            },
            AgentEvent::AgentEnd {
                messages: vec![assistant],
            },
        ];
        for event in events {
            let line = serde_json::to_value(&event).unwrap();
            assert_eq!(agent_event(&line), Some(event), "{line}");
        }
    }

    #[test]
    fn text_delta_with_pis_partial_message() {
        let line = json!({
            "type": "message_update",
            "message": {"role": "assistant", "content": []},
            "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "He",
                "partial": {"role": "assistant"}},
        });
        let Some(AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
        }) = agent_event(&line)
        else {
            panic!("not a text delta: {:?}", agent_event(&line));
        };
        assert_eq!(delta, "He");
    }

    #[test]
    fn other_and_malformed_lines_are_skipped() {
        for line in [
            json!({"type": "queue_update", "steering": [], "followUp": []}),
            json!({"type": "compaction_start", "reason": "threshold"}),
            json!({"type": "extension_ui_request", "id": "1", "method": "notify"}),
            json!({"type": "message_end"}),
            json!({"type": "message_end", "message": 5}),
            json!({"type": "tool_execution_start", "toolName": "x"}),
            json!({"no": "type"}),
            json!([1, 2]),
            json!("agent_start"),
        ] {
            assert_eq!(agent_event(&line), None, "{line}");
        }
    }
}
