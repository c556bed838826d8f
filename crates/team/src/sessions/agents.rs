//! `agents_list`: the agents this agent may reach — itself, those `tools.agentToAgent`
//! allows (for `sessions_send` / `sessions_list`), and those its `subagents.allowAgents`
//! lets `sessions_spawn` target — with their names and models.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::Team;
use crate::policy::glob_matches;

/// `agents_list` takes no parameters.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentsArgs {}

struct AgentsList {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for AgentsList {
    type Args = AgentsArgs;
    const NAME: &'static str = "agents_list";
    const LABEL: &'static str = "Agents";
    const DESCRIPTION: &'static str = "List the agents you can reach: by sessions_send (when \
        agent-to-agent is enabled) or as a sessions_spawn / delegate_to_agent target, with their \
        models.";

    async fn run(&self, _args: AgentsArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self.team.port()?;
        let settings = self.team.settings();
        let me: &str = &self.agent;
        let spawn = &settings.subagents_of(me).allow_agents;
        let delegate = &settings.delegation_of(me).allow_agents;
        let a2a = &settings.agent_to_agent;
        let matches = |list: &[String], id: &str| list.iter().any(|p| glob_matches(p.trim(), id));
        let allow_any = (a2a.enabled && (a2a.allow.is_empty() || matches(&a2a.allow, "*")))
            || spawn.iter().any(|p| p == "*");
        let mut agents: Vec<_> = port
            .agents()
            .into_iter()
            .filter(|a| {
                a.id == me
                    || a2a.allows(me, &a.id)
                    || matches(spawn, &a.id)
                    || matches(delegate, &a.id)
            })
            .map(|a| {
                let reach: Vec<&str> = [
                    (a.id == me || a2a.allows(me, &a.id), "send"),
                    (a.id == me || matches(spawn, &a.id), "spawn"),
                    (a.id != me && matches(delegate, &a.id), "delegate"),
                ]
                .into_iter()
                .filter_map(|(ok, what)| ok.then_some(what))
                .collect();
                json!({
                    "id": a.id, "name": a.name, "configured": true, "model": a.model,
                    "reach": reach,
                })
            })
            .collect();
        // The caller first, the others by id.
        agents.sort_by_key(|a| {
            (
                a["id"] != me,
                a["id"].as_str().unwrap_or_default().to_owned(),
            )
        });
        Ok(crate::json::output(json!({
            "requester": me,
            "allowAny": allow_any,
            "agents": agents,
        })))
    }
}

/// The `agents_list` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(AgentsList { team, agent })
}
