//! The `message` tool of a gateway agent: its gate from `tools.message.allowTargets` (the
//! agent's own `tools` section, else the top-level one) and the slot the server binds.

use std::sync::Arc;

use anyhow::{Context, Result};
use pincer_agent::AgentTool;
use pincer_team::PortSlot;
use pincer_team::message::{AllowTargets, MessagePort, message_tool as tool};

use crate::app::App;

/// `agent_id`'s `allowTargets`, parsed (a bad entry is an error naming it).
pub fn allow_targets(app: &App, agent_id: &str) -> Result<AllowTargets> {
    let section = app
        .agent_entry(agent_id)
        .and_then(|a| a.tools.as_ref())
        .unwrap_or(&app.config.tools);
    let entries = section
        .message
        .as_ref()
        .map(|m| m.allow_targets.as_slice())
        .unwrap_or_default();
    AllowTargets::parse(entries).with_context(|| format!("agent {agent_id}"))
}

/// The `message` tool of `agent_id`, sending through `port`.
pub fn message_tool(
    app: &App,
    agent_id: &str,
    port: PortSlot<dyn MessagePort>,
) -> Result<Arc<dyn AgentTool>> {
    Ok(tool(agent_id, allow_targets(app, agent_id)?, port))
}
