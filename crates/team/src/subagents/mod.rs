//! Sub-agents: `sessions_spawn` runs a task in the background in a session of its own
//! (`agent:<id>:subagent:<uuid>`, on the sub-agent slots: `maxConcurrent`), then announces
//! the result to the session that asked; `subagents` (the tool, `/subagents` and the WS
//! methods) lists, inspects, messages and stops them.

pub mod announce;
pub mod control;
pub mod persist;
pub mod registry;
pub mod run;
pub mod spawn;
pub mod tool;
