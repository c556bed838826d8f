//! The `subagents` tool: the calling session's sub-agents — `list` them, `wait` up to 60 s
//! for some to finish, `cancel` one (OpenClaw's actions), or read one's `log`.

use std::sync::Arc;
use std::time::Duration;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::control::{self, Scope};
use crate::Team;
use crate::sessions::Caller;

/// What to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SubagentsAction {
    #[default]
    List,
    Wait,
    Cancel,
    Log,
}

/// The parameters of `subagents`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentsArgs {
    /// list (default), wait, cancel or log.
    #[serde(default)]
    pub action: Option<SubagentsAction>,
    /// The sub-agent: its runId, childSessionKey, label or #n from list.
    #[serde(default)]
    pub task_id: Option<String>,
    /// wait: seconds to wait for it (or all) to finish, at most 60.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

struct Subagents {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for Subagents {
    type Args = SubagentsArgs;
    const NAME: &'static str = "subagents";
    const LABEL: &'static str = "Sub-agents";
    const DESCRIPTION: &'static str = "Your sub-agents (from sessions_spawn): list them with their \
        status, wait up to 60 s for one (taskId) or all to finish, cancel one, or read one's log. \
        Their results are announced to you anyway when they finish.";

    async fn run(&self, args: SubagentsArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let mine = control::list(&self.team, Scope::Session(&caller.key));
        let picked = match args
            .task_id
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            Some(which) => Some(
                control::pick(&mine, which)
                    .map_err(ToolError::failed)?
                    .clone(),
            ),
            None => None,
        };
        match args.action.unwrap_or_default() {
            SubagentsAction::List => {}
            SubagentsAction::Cancel => {
                let record = picked.ok_or_else(|| ToolError::failed("cancel needs taskId"))?;
                let stopped = control::stop(&self.team, &port, &record);
                return Ok(crate::json::output(json!({
                    "status": if stopped { "cancelled" } else { "already-finished" },
                    "runId": record.run_id,
                })));
            }
            SubagentsAction::Log => {
                let record = picked.ok_or_else(|| ToolError::failed("log needs taskId"))?;
                let messages = control::log(&port, &record, 20)
                    .await
                    .map_err(ToolError::failed)?;
                return Ok(crate::json::output(json!({
                    "runId": record.run_id, "status": record.status.as_str(), "messages": messages,
                })));
            }
            SubagentsAction::Wait => {
                let limit = Duration::from_secs(args.timeout_seconds.unwrap_or(30).min(60));
                let deadline = tokio::time::Instant::now() + limit;
                let wanted: Vec<String> = match &picked {
                    Some(r) => vec![r.child_key.clone()],
                    None => mine.iter().map(|r| r.child_key.clone()).collect(),
                };
                loop {
                    let done = wanted.iter().all(|k| {
                        self.team
                            .registry()
                            .get(k)
                            .is_none_or(|r| r.status.is_finished())
                    });
                    if done || tokio::time::Instant::now() >= deadline {
                        break;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(250)) => {}
                        () = ctx.cancel.cancelled() => return Err(ToolError::Aborted),
                    }
                }
            }
        }
        let now = control::list(&self.team, Scope::Session(&caller.key));
        let list: Vec<_> = now
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let mut row = control::record_json(r, i + 1);
                if let Some(result) = r.result.as_deref().filter(|_| r.status.is_finished()) {
                    row["result"] = json!(super::registry::shorten(result.trim(), 4000));
                }
                row
            })
            .collect();
        Ok(crate::json::output(
            json!({ "count": list.len(), "subagents": list }),
        ))
    }
}

/// The `subagents` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(Subagents { team, agent })
}
