//! The team's settings, as the composition root reads them from the configuration
//! (`tools.sessions`, `tools.agentToAgent`, `session.agentToAgent`,
//! `agents.*.subagents`, `agents.*.delegation`). Plain values with OpenClaw's and
//! pi-gateway's defaults, so this crate needs no configuration parser.

use std::collections::HashMap;
use std::time::Duration;

/// `tools.sessions.visibility`: which sessions the session tools see besides the caller's
/// own and those it spawned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Visibility {
    /// Only the calling session.
    SelfOnly,
    /// The calling session and the sub-agents it spawned.
    Tree,
    /// Every session of the calling agent.
    Agent,
    /// Every session of the calling agent, and other agents' as `tools.agentToAgent`
    /// allows (OpenClaw's default).
    #[default]
    All,
}

/// `tools.agentToAgent`: whether agents may see and message each other's sessions (off by
/// default), and which agents (`allow`: ids or `*` patterns; empty = all).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentToAgent {
    pub enabled: bool,
    pub allow: Vec<String>,
}

/// `agents.defaults.subagents` (each agent's own `subagents` wins field by field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentSettings {
    /// Sub-agent runs at once across the gateway; more wait, said so (8).
    pub max_concurrent: usize,
    /// The model sub-agents use unless the spawn names one (`provider/model`).
    pub model: Option<String>,
    /// Their thinking level unless the spawn names one.
    pub thinking: Option<String>,
    /// How long a finished sub-agent stays listed (`archiveAfterMinutes`, 60).
    pub archive_after: Duration,
    /// How deep spawns may nest: 1 = sub-agents cannot spawn their own (default).
    pub max_spawn_depth: u32,
    /// Agents a spawn may target besides the caller's own (`allowAgents`; `*` = any).
    pub allow_agents: Vec<String>,
    /// How long a sub-agent may run (`runTimeoutSeconds`; `None`: no limit).
    pub run_timeout: Option<Duration>,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        Self {
            max_concurrent: 8,
            model: None,
            thinking: None,
            archive_after: Duration::from_secs(60 * 60),
            max_spawn_depth: 1,
            allow_agents: Vec::new(),
            run_timeout: None,
        }
    }
}

/// pi-gateway's delegation (`agents.defaults.delegation`): `delegate_to_agent`'s
/// allowlist and limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DelegationSettings {
    /// Agents that may be delegated to (`*` = any); empty: delegation is off.
    pub allow_agents: Vec<String>,
    /// Delegations running at once (2).
    pub max_concurrent: usize,
    /// How deep delegations may chain: 1 = a delegate cannot delegate again (default).
    pub max_depth: u32,
    /// How long the caller waits for the delegate's reply (300 s).
    pub timeout: Duration,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        Self {
            allow_agents: Vec::new(),
            max_concurrent: 2,
            max_depth: 1,
            timeout: Duration::from_secs(300),
        }
    }
}

/// Everything the team tools are configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamSettings {
    pub visibility: Visibility,
    pub agent_to_agent: AgentToAgent,
    /// `session.agentToAgent.maxPingPongTurns`: reply-back turns after a `sessions_send`
    /// (5; 0 turns the ping-pong off).
    pub max_ping_pong_turns: u32,
    /// The defaults' sub-agent settings.
    pub subagents: SubagentSettings,
    /// Per agent id, its own sub-agent settings (already merged over the defaults).
    pub agent_subagents: HashMap<String, SubagentSettings>,
    pub delegation: DelegationSettings,
    /// Per agent id, its own delegation settings (already merged over the defaults).
    pub agent_delegation: HashMap<String, DelegationSettings>,
}

impl Default for TeamSettings {
    fn default() -> Self {
        Self {
            visibility: Visibility::default(),
            agent_to_agent: AgentToAgent::default(),
            max_ping_pong_turns: 5,
            subagents: SubagentSettings::default(),
            agent_subagents: HashMap::new(),
            delegation: DelegationSettings::default(),
            agent_delegation: HashMap::new(),
        }
    }
}

impl TeamSettings {
    /// The sub-agent settings of `agent_id`.
    pub fn subagents_of(&self, agent_id: &str) -> &SubagentSettings {
        self.agent_subagents
            .get(agent_id)
            .unwrap_or(&self.subagents)
    }

    /// The delegation settings of `agent_id`.
    pub fn delegation_of(&self, agent_id: &str) -> &DelegationSettings {
        self.agent_delegation
            .get(agent_id)
            .unwrap_or(&self.delegation)
    }
}
