//! Agents working together. The tools here reach other sessions, other agents and the chat
//! channels through ports the gateway implements ([`PortSlot`] carries each port from the
//! running server to the tools, which are built before it starts): the session tools
//! (`sessions_list`, `sessions_history`, `sessions_send`, `session_status`, `agents_list`),
//! sub-agents (`sessions_spawn`, `/subagents`), `delegate_to_agent`, and the `message` tool.

mod slot;

pub use slot::PortSlot;
