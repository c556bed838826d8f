//! Agents working together. The tools here reach other sessions, other agents and the chat
//! channels through ports the gateway implements ([`PortSlot`] carries each port from the
//! running server to the tools, which are built before it starts): the session tools
//! (`sessions_list`, `sessions_history`, `sessions_send`, `session_status`, `agents_list`),
//! sub-agents (`sessions_spawn`, `subagents`, `/subagents`), `delegate_to_agent`, and the
//! `message` tool.

pub mod delegate;
mod json;
pub mod message;
pub mod policy;
pub mod port;
pub mod sessions;
pub mod settings;
mod slot;
pub mod subagents;
mod team;

pub use port::{AgentInfo, PortError, PortFuture, SessionPort, TeamTurn, TurnOutcome};
pub use settings::{AgentToAgent, DelegationSettings, SubagentSettings, TeamSettings, Visibility};
pub use slot::PortSlot;
pub use team::{SESSION_TOOL_NAMES, Team};
