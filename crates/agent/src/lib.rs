//! pincer-agent: the agent core. An [`Agent`] holds a conversation, streams replies through
//! a stream function (pincer-ai by default), runs tool calls (parallel by default, results
//! in call order), delivers steering and follow-up messages, and reports everything as
//! pi-shaped [`AgentEvent`]s. It knows nothing of sessions on disk, channels or the gateway.

pub mod agent;
pub mod compaction;
pub mod event;
pub mod hooks;
pub mod queue;
mod run;
pub use run::wire_name;
pub mod tool;

pub use agent::{Agent, AgentConfig, AgentError, AgentState, StreamFn, llm_stream_fn};
pub use event::AgentEvent;
pub use hooks::{AfterToolCall, BeforeToolCall, Hooks, ToolCallInfo};
pub use queue::{MessageQueue, QueueMode};
pub use tool::{AgentTool, ExecutionMode, ToolContext, ToolError, ToolOutput, TypedTool, typed};
