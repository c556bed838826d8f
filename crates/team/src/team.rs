//! [`Team`]: the state every team tool of a gateway shares — the settings, the port to the
//! running server, the spawned sessions and the sub-agent / delegation slots — and the
//! tool set it hands each agent.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolError};
use tokio::sync::Semaphore;

use crate::port::SessionPort;
use crate::settings::TeamSettings;
use crate::slot::PortSlot;
use crate::subagents::registry::SpawnRegistry;

/// The names of the tools that reach other sessions: a sub-agent gets none of them unless
/// `maxSpawnDepth` lets it spawn its own.
pub const SESSION_TOOL_NAMES: [&str; 8] = [
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "sessions_spawn",
    "session_status",
    "agents_list",
    "subagents",
    "delegate_to_agent",
];

/// What the team tools of one gateway share. Cheap to clone behind an `Arc`.
pub struct Team {
    settings: TeamSettings,
    port: PortSlot<dyn SessionPort>,
    registry: SpawnRegistry,
    subagent_slots: Arc<Semaphore>,
    delegate_slots: Arc<Semaphore>,
    /// Where the records are saved (`None`: in memory only).
    state_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("settings", &self.settings)
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl Team {
    /// A team whose records live in memory only.
    pub fn new(settings: TeamSettings) -> Arc<Self> {
        Self::with_state(settings, None)
    }

    /// A team that saves its records to `state_file` (see [`Team::recover`]).
    pub fn with_state(settings: TeamSettings, state_file: Option<std::path::PathBuf>) -> Arc<Self> {
        let subagent_slots = Arc::new(Semaphore::new(settings.subagents.max_concurrent.max(1)));
        let delegate_slots = Arc::new(Semaphore::new(settings.delegation.max_concurrent.max(1)));
        Arc::new(Self {
            settings,
            port: PortSlot::new(),
            registry: SpawnRegistry::default(),
            subagent_slots,
            delegate_slots,
            state_file,
        })
    }

    pub fn settings(&self) -> &TeamSettings {
        &self.settings
    }

    /// Where the running gateway binds its [`SessionPort`].
    pub fn slot(&self) -> &PortSlot<dyn SessionPort> {
        &self.port
    }

    /// The spawned sessions.
    pub fn registry(&self) -> &SpawnRegistry {
        &self.registry
    }

    pub(crate) fn state_file(&self) -> Option<&std::path::Path> {
        self.state_file.as_deref()
    }

    pub(crate) fn subagent_slots(&self) -> &Arc<Semaphore> {
        &self.subagent_slots
    }

    pub(crate) fn delegate_slots(&self) -> &Arc<Semaphore> {
        &self.delegate_slots
    }

    /// The bound port, or the error a tool called outside a gateway returns.
    pub(crate) fn port(&self) -> Result<Arc<dyn SessionPort>, ToolError> {
        self.port.get().ok_or_else(|| {
            ToolError::failed(
                "this tool needs the gateway (other sessions live there): run the agent \
                 through `pincer gateway`",
            )
        })
    }

    /// The team tools of agent `agent_id`.
    pub fn tools(self: &Arc<Self>, agent_id: &str) -> Vec<Arc<dyn AgentTool>> {
        let agent: Arc<str> = Arc::from(agent_id);
        vec![
            crate::sessions::list::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::sessions::history::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::sessions::send::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::sessions::status::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::sessions::agents::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::subagents::spawn::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::subagents::tool::tool(Arc::clone(self), Arc::clone(&agent)),
            crate::delegate::tool(Arc::clone(self), agent),
        ]
    }

    /// `tools` without what a turn of `session_key` may not use: a sub-agent past
    /// `maxSpawnDepth` loses the session tools, a delegate past `maxDepth` loses
    /// `delegate_to_agent`.
    pub fn tools_for_session(
        &self,
        agent_id: &str,
        session_key: &str,
        tools: Vec<Arc<dyn AgentTool>>,
    ) -> Vec<Arc<dyn AgentTool>> {
        let Some(record) = self.registry.get(session_key) else {
            return tools;
        };
        let spawn_ok = record.depth < self.settings.subagents_of(agent_id).max_spawn_depth;
        let delegate_ok = record.depth < self.settings.delegation_of(agent_id).max_depth;
        tools
            .into_iter()
            .filter(|tool| {
                let name = tool.name();
                if name == "delegate_to_agent" {
                    return delegate_ok;
                }
                spawn_ok || !SESSION_TOOL_NAMES.contains(&name)
            })
            .collect()
    }
}
