//! `sessions_spawn`: checks the target agent and the nesting depth, creates the child
//! session (its model, thinking level and label set), records it, and starts its run in
//! the background; returns `{status: "accepted", runId, childSessionKey}` at once.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::registry::{SpawnRecord, SpawnStatus};
use crate::Team;
use crate::policy::glob_matches;
use crate::sessions::Caller;

/// What happens to the child session once its result is announced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Cleanup {
    /// Kept (and listed until `archiveAfterMinutes`).
    #[default]
    Keep,
    /// Archived right after the announcement.
    Delete,
}

/// The parameters of `sessions_spawn`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpawnArgs {
    /// The task, complete: the sub-agent sees nothing of this conversation.
    pub task: String,
    /// A short title for lists (name the work, not the agent).
    #[serde(default)]
    pub label: Option<String>,
    /// Run it as this agent (default: yourself; others need subagents.allowAgents).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// Model override, provider/model.
    #[serde(default)]
    pub model: Option<String>,
    /// Thinking level: off, minimal, low, medium, high, xhigh.
    #[serde(default)]
    pub thinking: Option<String>,
    /// Stop it after this many seconds (0: no limit; default from the config).
    #[serde(default)]
    pub run_timeout_seconds: Option<u64>,
    /// keep (default) or delete the child session after its result is announced.
    #[serde(default)]
    pub cleanup: Option<Cleanup>,
}

const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

struct SessionsSpawn {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for SessionsSpawn {
    type Args = SpawnArgs;
    const NAME: &'static str = "sessions_spawn";
    const LABEL: &'static str = "Sessions";
    const DESCRIPTION: &'static str = "Start a sub-agent: it works on `task` in the background in \
        a session of its own while you keep talking, and its result is announced back to this \
        session (and its chat) when done. Returns at once with runId and childSessionKey. Give the \
        task in full: the sub-agent sees nothing of this conversation. Use `subagents` to list, \
        steer or stop them.";

    async fn run(&self, args: SpawnArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let task = args.task.trim();
        if task.is_empty() {
            return Err(ToolError::failed(
                "task is empty: say what the sub-agent should do",
            ));
        }
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let settings = self.team.settings().subagents_of(&caller.agent_id).clone();
        let target = args
            .agent_id
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .unwrap_or(&caller.agent_id)
            .to_owned();
        if target != caller.agent_id {
            if !port.agents().iter().any(|a| a.id == target) {
                return Err(ToolError::failed(format!(
                    "unknown agent {target:?}: agents_list shows the agents you can spawn"
                )));
            }
            if !settings
                .allow_agents
                .iter()
                .any(|p| glob_matches(p.trim(), &target))
            {
                return Err(ToolError::failed(format!(
                    "agentId {target:?} is not allowed for sessions_spawn: \
                     agents.defaults.subagents.allowAgents (or this agent's subagents.allowAgents) \
                     must name it"
                )));
            }
        }
        let depth = self.team.registry().depth(&caller.key) + 1;
        if depth > settings.max_spawn_depth {
            return Err(ToolError::failed(format!(
                "sessions_spawn is not allowed at this depth (maxSpawnDepth {}): do the task yourself",
                settings.max_spawn_depth
            )));
        }
        let thinking = args
            .thinking
            .as_deref()
            .or(settings.thinking.as_deref())
            .map(str::trim);
        if let Some(level) = thinking
            && !THINKING_LEVELS.contains(&level)
        {
            return Err(ToolError::failed(format!(
                "unknown thinking level {level:?}: use one of {}",
                THINKING_LEVELS.join(", ")
            )));
        }
        let model = match args
            .model
            .as_deref()
            .or(settings.model.as_deref())
            .map(str::trim)
        {
            Some(m) if !m.is_empty() => {
                Some(port.resolve_model(&target, m).map_err(ToolError::failed)?)
            }
            _ => None,
        };
        let id = pincer_base::id::uuid_v4();
        let child_key = format!("agent:{target}:subagent:{id}");
        let run_id = format!("subagent-{id}");
        let label = args
            .label
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned);
        // The child's session exists (with its overrides) before its turn plans.
        let mut patch = Map::new();
        patch.insert("spawnedBy".into(), json!(caller.key));
        if let Some(label) = &label {
            patch.insert("label".into(), json!(label));
        }
        if let Some(model) = &model {
            patch.insert("model".into(), json!(model));
        }
        if let Some(level) = thinking {
            patch.insert("thinkingLevel".into(), json!(level));
        }
        let store = port.store(&target);
        let key = child_key.clone();
        store
            .run(move |store| {
                store.get_or_create(&key)?;
                store.patch(&key, &Value::Object(patch))
            })
            .await
            .map_err(|e| {
                ToolError::failed(format!("cannot create the sub-agent's session: {e}"))
            })?;
        let timeout = match args.run_timeout_seconds {
            Some(0) => None,
            Some(secs) => Some(std::time::Duration::from_secs(secs)),
            None => settings.run_timeout,
        };
        self.team.registry().sweep(settings.archive_after);
        let queued = self.team.subagent_slots().available_permits() == 0;
        self.team.registry().insert(SpawnRecord {
            run_id: run_id.clone(),
            child_key: child_key.clone(),
            agent_id: target,
            requester_key: caller.key.clone(),
            requester_agent: caller.agent_id.clone(),
            label,
            task: task.to_owned(),
            depth,
            created_at: pincer_base::now_ms(),
            started_at: None,
            ended_at: None,
            status: SpawnStatus::Queued,
            result: None,
            delegated: false,
        });
        self.team.save().await;
        tokio::spawn(super::run::run(
            Arc::clone(&self.team),
            port,
            child_key.clone(),
            timeout,
            args.cleanup.unwrap_or_default(),
        ));
        let mut result = json!({
            "status": "accepted", "runId": run_id, "childSessionKey": child_key,
        });
        if queued {
            result["queued"] = json!(true);
            result["note"] = json!(format!(
                "{} sub-agents are already running (maxConcurrent {}): this one starts when one finishes",
                self.team.registry().active().saturating_sub(1),
                self.team.settings().subagents.max_concurrent
            ));
        }
        Ok(crate::json::output(result))
    }
}

/// The `sessions_spawn` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(SessionsSpawn { team, agent })
}
