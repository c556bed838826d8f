//! Agent events, in pi's order and shape (`AgentEvent` of pi-agent-core): the run, each
//! turn, each message (with the provider's streaming events), each tool execution.
//!
//! `message_update` carries the provider event but not a copy of the partial message:
//! cloning it on every delta would make a long reply quadratic. The partial message is
//! in [`crate::AgentState::stream_message`], and writers that need pi's exact wire shape
//! rebuild it with `pincer_ai::PartialMessage`.

use pincer_ai::{AssistantMessage, AssistantMessageEvent, Message};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::compaction::{CompactionEnd, CompactionReason};
use crate::tool::ToolOutput;

/// Deserializable too, leniently (missing lists, arguments and results default), so that
/// the event lines of an RPC worker (pi or `pincer rpc`) read back as the events they
/// were written from; compaction events are the agent's own and never read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum AgentEvent {
    AgentStart,
    /// The run ended; `messages` are the ones this run added.
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
        partial_result: ToolOutput,
    },
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        #[serde(default)]
        result: ToolOutput,
        #[serde(default)]
        is_error: bool,
    },
    #[serde(skip_deserializing)]
    CompactionStart {
        reason: CompactionReason,
    },
    #[serde(skip_deserializing)]
    CompactionEnd(CompactionEnd),
}

impl AgentEvent {
    /// The `type` string, as pi names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::AgentStart => "agent_start",
            Self::AgentEnd { .. } => "agent_end",
            Self::TurnStart => "turn_start",
            Self::TurnEnd { .. } => "turn_end",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
            Self::CompactionStart { .. } => "compaction_start",
            Self::CompactionEnd(_) => "compaction_end",
        }
    }
}

/// The assistant message of a `turn_end`, if it is one.
pub fn assistant_of(message: &Message) -> Option<&AssistantMessage> {
    match message {
        Message::Assistant(a) => Some(a),
        _ => None,
    }
}
