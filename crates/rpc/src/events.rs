//! A worker's event lines read back as [`AgentEvent`]s: what lets the gateway drive an RPC
//! worker and an in-process agent through the same event consumers (`RunEmitter`, the
//! turn outcome). pi writes every agent event with its fields in camelCase; `message_update`
//! also carries the partial message, which the gateway does not need (it rebuilds it).
//!
//! Events the gateway has no use for (`queue_update`, `compaction_*`, `auto_retry_*`,
//! `extension_*`) and lines that do not parse as the event they name decode to `None`:
//! a worker newer than Pincer, or one that writes something odd, costs that one event,
//! never the turn.

use pincer_agent::{AgentEvent, ToolOutput};
use pincer_ai::{AssistantMessageEvent, ContentBlock, Message};
use serde::Deserialize;
use serde_json::Value;

/// The agent event a worker's line carries, if it is one the gateway follows.
pub fn agent_event(line: &Value) -> Option<AgentEvent> {
    let event = match PiEvent::deserialize(line) {
        Ok(event) => event,
        Err(e) => {
            // Unknown types land here too; only a known type failing is worth a note.
            let ty = line.get("type").and_then(Value::as_str).unwrap_or("");
            if KNOWN.contains(&ty) {
                tracing::warn!(event = ty, error = %e, "rpc: cannot read a worker event; skipped");
            }
            return None;
        }
    };
    Some(match event {
        PiEvent::AgentStart => AgentEvent::AgentStart,
        PiEvent::AgentEnd { messages } => AgentEvent::AgentEnd { messages },
        PiEvent::TurnStart => AgentEvent::TurnStart,
        PiEvent::TurnEnd {
            message,
            tool_results,
        } => AgentEvent::TurnEnd {
            message,
            tool_results,
        },
        PiEvent::MessageStart { message } => AgentEvent::MessageStart { message },
        PiEvent::MessageUpdate {
            assistant_message_event,
        } => AgentEvent::MessageUpdate {
            assistant_message_event,
        },
        PiEvent::MessageEnd { message } => AgentEvent::MessageEnd { message },
        PiEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        } => AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
        },
        PiEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
        } => AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result: partial_result.into(),
        },
        PiEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
        } => AgentEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result: result.into(),
            is_error,
        },
    })
}

/// The event types [`agent_event`] reads.
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

/// pi's agent events as they are on the wire (`AgentEvent` serializes to this shape).
#[derive(Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
enum PiEvent {
    AgentStart,
    AgentEnd {
        #[serde(default)]
        messages: Vec<Message>,
    },
    TurnStart,
    TurnEnd {
        message: Message,
        #[serde(default)]
        tool_results: Vec<Message>,
    },
    MessageStart {
        message: Message,
    },
    MessageUpdate {
        assistant_message_event: AssistantMessageEvent,
    },
    MessageEnd {
        message: Message,
    },
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        #[serde(default)]
        args: Value,
    },
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        #[serde(default)]
        args: Value,
        #[serde(default)]
        partial_result: PiToolResult,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        #[serde(default)]
        result: PiToolResult,
        #[serde(default)]
        is_error: bool,
    },
}

/// pi's `AgentToolResult`.
#[derive(Deserialize, Default)]
struct PiToolResult {
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(default)]
    details: Option<Value>,
}

impl From<PiToolResult> for ToolOutput {
    fn from(result: PiToolResult) -> Self {
        ToolOutput {
            content: result.content,
            details: result.details,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
