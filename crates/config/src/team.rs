//! How agents work together: `tools.sessions` (which sessions the session tools see),
//! `tools.agentToAgent` (whether agents may reach each other), `session.agentToAgent`
//! (the reply-back ping-pong of `sessions_send`), `agents.*.subagents` (`sessions_spawn`)
//! and `agents.*.delegation` (pi-gateway's `delegate_to_agent`). OpenClaw's names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tools.sessions`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionToolsConfig {
    /// What the session tools see besides the caller's own session and the sub-agents it
    /// spawned: `self` (nothing more), `tree` (same), `agent` (every session of its agent),
    /// `all` (default: its agent's, and other agents' as `tools.agentToAgent` allows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<SessionToolsVisibility>,
}

/// `tools.sessions.visibility`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionToolsVisibility {
    #[serde(rename = "self")]
    SelfOnly,
    Tree,
    Agent,
    All,
}

/// `tools.agentToAgent`: agents reaching each other's sessions (`sessions_list`,
/// `sessions_history`, `sessions_send`). Off by default: an agent sees only its own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentToAgentConfig {
    /// Let agents reach each other (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Only these agents, on both sides (ids or `*` patterns; empty: every agent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

/// `session.agentToAgent`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionAgentToAgentConfig {
    /// Reply-back turns after a `sessions_send` reply, alternating between the two
    /// sessions (default 5; 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ping_pong_turns: Option<u32>,
}

/// `agents.defaults.subagents` / `agents.list[].subagents`: background sub-agents
/// (`sessions_spawn`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentsConfig {
    /// Sub-agents running at once across the gateway (default 8; only the defaults'
    /// value counts); more wait their turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<usize>,
    /// Their model unless the spawn names one, `provider/model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Their thinking level unless the spawn names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Minutes a finished sub-agent stays in `/subagents list` (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_after_minutes: Option<u64>,
    /// How deep spawns may nest (default 1: a sub-agent cannot spawn its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_spawn_depth: Option<u32>,
    /// Other agents a spawn may run as (ids or `*`; default none: only the agent itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_agents: Option<Vec<String>>,
    /// Seconds a sub-agent may run before it is stopped (default 0: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_timeout_seconds: Option<u64>,
}

/// `agents.defaults.delegation` / `agents.list[].delegation`: pi-gateway's
/// `delegate_to_agent`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DelegationConfig {
    /// Agents tasks may be delegated to (ids or `*`; default none: delegation off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_agents: Option<Vec<String>>,
    /// Delegations running at once (default 2; only the defaults' value counts); more
    /// are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<usize>,
    /// How deep delegations may chain (default 1: a delegate cannot delegate again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<u32>,
    /// Seconds the caller waits for the answer (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
}
