//! pi-gateway's `delegate_to_agent {agentId, task, mode: "sync"}`: a task handed to another
//! agent in a session of its own (`delegate:<parent>:<agent>:<ts>`, which on an RPC pool
//! takes a worker of its own), the caller waiting for the answer. Limited by the
//! delegation allowlist, `maxConcurrent` (more are refused, not queued: the caller is
//! waiting) and `maxDepth`. Returns `{status: completed|timeout|error|rejected, response?}`.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Team;
use crate::policy::glob_matches;
use crate::port::TeamTurn;
use crate::sessions::Caller;
use crate::subagents::registry::{SpawnRecord, SpawnStatus};

/// How the delegation runs: only `sync` (the caller waits) exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DelegateMode {
    #[default]
    Sync,
}

/// The parameters of `delegate_to_agent`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DelegateArgs {
    /// The agent to hand the task to (agents_list shows those you may delegate to).
    pub agent_id: String,
    /// The task, complete: the other agent sees nothing of this conversation.
    pub task: String,
    /// sync (the only mode): wait for the answer.
    #[serde(default)]
    pub mode: Option<DelegateMode>,
}

struct DelegateToAgent {
    team: Arc<Team>,
    agent: Arc<str>,
}

fn answer(status: &str, response: Option<&str>) -> ToolOutput {
    let mut value = json!({ "status": status });
    if let Some(response) = response {
        value["response"] = Value::String(response.to_owned());
    }
    crate::json::output(value)
}

impl TypedTool for DelegateToAgent {
    type Args = DelegateArgs;
    const NAME: &'static str = "delegate_to_agent";
    const LABEL: &'static str = "Delegate";
    const DESCRIPTION: &'static str = "Hand a task to another agent and wait for its answer \
        (synchronous). The other agent works in a session of its own with its own workspace and \
        tools and sees nothing of this conversation: give the task in full.";

    async fn run(&self, args: DelegateArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let task = args.task.trim();
        let target = args.agent_id.trim();
        if task.is_empty() || target.is_empty() {
            return Err(ToolError::failed(
                "delegate_to_agent needs agentId and task",
            ));
        }
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let settings = self.team.settings().delegation_of(&caller.agent_id).clone();
        if settings.allow_agents.is_empty() {
            return Ok(answer(
                "rejected",
                Some("delegation is off: agents.defaults.delegation.allowAgents names no agent"),
            ));
        }
        if !settings
            .allow_agents
            .iter()
            .any(|p| glob_matches(p.trim(), target))
        {
            return Ok(answer(
                "rejected",
                Some(&format!(
                    "agent {target:?} is not in the delegation allowlist"
                )),
            ));
        }
        if target == caller.agent_id {
            return Ok(answer(
                "rejected",
                Some("an agent cannot delegate to itself"),
            ));
        }
        if !port.agents().iter().any(|a| a.id == target) {
            return Ok(answer(
                "rejected",
                Some(&format!("unknown agent {target:?}")),
            ));
        }
        let depth = self.team.registry().depth(&caller.key) + 1;
        if depth > settings.max_depth {
            return Ok(answer(
                "rejected",
                Some(&format!(
                    "delegation depth limit reached (maxDepth {})",
                    settings.max_depth
                )),
            ));
        }
        let Ok(_slot) = Arc::clone(self.team.delegate_slots()).try_acquire_owned() else {
            return Ok(answer(
                "rejected",
                Some(&format!(
                    "too many delegations running (maxConcurrent {}): try again shortly",
                    settings.max_concurrent
                )),
            ));
        };
        let now = pincer_base::now_ms();
        let key = format!("delegate:{}:{target}:{now}", caller.key);
        let run_id = format!("delegate-{}", pincer_base::id::uuid_v4());
        self.team.registry().insert(SpawnRecord {
            run_id: run_id.clone(),
            child_key: key.clone(),
            agent_id: target.to_owned(),
            requester_key: caller.key.clone(),
            requester_agent: caller.agent_id.clone(),
            label: None,
            task: task.to_owned(),
            depth,
            created_at: now,
            started_at: Some(now),
            ended_at: None,
            status: SpawnStatus::Running,
            result: None,
            delegated: true,
        });
        self.team.save().await;
        let message = format!(
            "[Delegated task from agent \"{}\" (session {})]\n{task}",
            caller.agent_id, caller.key
        );
        let started = port.start_turn(TeamTurn {
            run_id: run_id.clone(),
            agent_id: target.to_owned(),
            session_key: key.clone(),
            message,
        });
        if let Err(e) = started {
            self.finish(&key, SpawnStatus::Failed(e.to_string()), None);
            return Ok(answer("error", Some(&e.to_string())));
        }
        let waited = tokio::select! {
            waited = port.wait(&run_id, settings.timeout) => waited,
            () = ctx.cancel.cancelled() => {
                port.abort(&key);
                self.finish(&key, SpawnStatus::Stopped, None);
                return Err(ToolError::Aborted);
            }
        };
        let answered = match waited {
            None => {
                port.abort(&key);
                self.finish(&key, SpawnStatus::TimedOut, None);
                answer(
                    "timeout",
                    Some(&format!(
                        "no answer within {} s",
                        settings.timeout.as_secs()
                    )),
                )
            }
            Some(o) if o.error.is_some() && o.text.trim().is_empty() => {
                let error = o.error.unwrap_or_default();
                self.finish(&key, SpawnStatus::Failed(error.clone()), None);
                answer("error", Some(&error))
            }
            Some(o) if o.aborted => {
                self.finish(&key, SpawnStatus::Stopped, None);
                answer("error", Some("the delegate's run was aborted"))
            }
            Some(o) => {
                self.finish(&key, SpawnStatus::Done, Some(o.text.clone()));
                answer("completed", Some(&o.text))
            }
        };
        self.team.save().await;
        Ok(answered)
    }
}

impl DelegateToAgent {
    fn finish(&self, key: &str, status: SpawnStatus, result: Option<String>) {
        self.team.registry().update(key, |r| {
            r.status = status;
            r.result = result;
            r.ended_at = Some(pincer_base::now_ms());
        });
    }
}

/// The `delegate_to_agent` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(DelegateToAgent { team, agent })
}
