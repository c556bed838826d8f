//! `sessions_list`: the sessions the caller may reach — its agent's, the sub-agents it
//! spawned, and other agents' when `tools.agentToAgent` allows — newest first, with their
//! kind, channel, model and token counts, and optionally their last messages.

use std::sync::Arc;

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use pincer_store::SessionEntry;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Caller, channel_of, kind_of};
use crate::Team;
use crate::policy::{self, Action, Target};
use crate::settings::Visibility;

/// Rows at most (OpenClaw's cap).
const MAX_LIMIT: usize = 200;
/// Rows when the call names no limit.
const DEFAULT_LIMIT: usize = 50;
/// Messages per row at most.
const MAX_MESSAGES: usize = 20;

/// The parameters of `sessions_list`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListArgs {
    /// Only these kinds: main, group, cron, hook, node, other.
    #[serde(default)]
    pub kinds: Option<Vec<String>>,
    /// Most sessions to return (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only sessions active within this many minutes.
    #[serde(default)]
    pub active_minutes: Option<u64>,
    /// Include each session's last N messages (at most 20; tool calls left out).
    #[serde(default)]
    pub message_limit: Option<u32>,
    /// Only this agent's sessions (another agent's need tools.agentToAgent).
    #[serde(default)]
    pub agent_id: Option<String>,
}

struct SessionsList {
    team: Arc<Team>,
    agent: Arc<str>,
}

impl TypedTool for SessionsList {
    type Args = ListArgs;
    const NAME: &'static str = "sessions_list";
    const LABEL: &'static str = "Sessions";
    const DESCRIPTION: &'static str = "List the sessions you can reach (yours, the sub-agents you \
        spawned, and other agents' when agent-to-agent is enabled), newest first: key, kind, \
        channel, last activity, model, token counts; messageLimit adds each one's last messages. \
        Use a key with sessions_history or sessions_send.";

    async fn run(&self, args: ListArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let port = self.team.port()?;
        let caller = Caller::of(port.as_ref(), &self.agent, &ctx);
        let agents = agents_to_scan(
            &self.team,
            &caller,
            port.agents().iter().map(|a| a.id.clone()),
            args.agent_id.as_deref(),
        )?;
        let kinds: Option<Vec<String>> = args
            .kinds
            .map(|k| k.iter().map(|s| s.trim().to_lowercase()).collect());
        let cutoff = args.active_minutes.map(|m| {
            pincer_base::now_ms() - i64::try_from(m.saturating_mul(60_000)).unwrap_or(i64::MAX)
        });
        let limit = args
            .limit
            .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
        let message_limit = args
            .message_limit
            .map_or(0, |m| (m as usize).min(MAX_MESSAGES));

        let mut rows: Vec<(i64, Value)> = Vec::new();
        for agent_id in agents {
            let main_key = port.main_session_key(&agent_id);
            let store = port.store(&agent_id);
            let listed = store.run(|store| store.list()).await.map_err(|e| {
                ToolError::failed(format!("cannot read {agent_id}'s sessions: {e}"))
            })?;
            for (key, entry) in listed {
                let target = Target {
                    key: &key,
                    agent_id: &agent_id,
                    spawned_by_requester: self.team.registry().descends_from(&key, &caller.key),
                };
                if policy::check(
                    self.team.settings(),
                    Action::List,
                    caller.requester(),
                    target,
                )
                .is_err()
                {
                    continue;
                }
                if cutoff.is_some_and(|c| entry.updated_at < c) {
                    continue;
                }
                let kind = kind_of(&key, Some(&entry), &main_key);
                if kinds.as_ref().is_some_and(|k| !k.iter().any(|w| w == kind)) {
                    continue;
                }
                let active = !port.active_runs(&key).is_empty();
                let row = row(&self.team, &agent_id, &key, &entry, kind, active);
                rows.push((entry.updated_at, row));
            }
        }
        rows.sort_by_key(|row| std::cmp::Reverse(row.0));
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        let mut sessions: Vec<Value> = rows.into_iter().map(|(_, row)| row).collect();
        if message_limit > 0 {
            for row in &mut sessions {
                let (Some(key), Some(agent)) = (row["key"].as_str(), row["agentId"].as_str())
                else {
                    continue;
                };
                let messages =
                    super::history::last_messages(&port, agent, key, message_limit, false)
                        .await
                        .unwrap_or_default();
                row["messages"] = Value::Array(messages);
            }
        }
        Ok(crate::json::output(json!({
            "count": sessions.len(),
            "sessions": sessions,
            "hasMore": has_more,
            "limitApplied": limit,
        })))
    }
}

/// The agents whose stores are read: the one asked for (if the caller may list it), else
/// the caller's and — with `visibility: all` and agent-to-agent on — every agent it may
/// reach.
fn agents_to_scan(
    team: &Team,
    caller: &Caller,
    configured: impl Iterator<Item = String>,
    asked: Option<&str>,
) -> Result<Vec<String>, ToolError> {
    let settings = team.settings();
    if let Some(asked) = asked.map(str::trim).filter(|a| !a.is_empty()) {
        if asked != caller.agent_id {
            if settings.visibility != Visibility::All {
                return policy::check(
                    settings,
                    Action::List,
                    caller.requester(),
                    Target {
                        key: "",
                        agent_id: asked,
                        spawned_by_requester: false,
                    },
                )
                .map(|()| vec![asked.to_owned()])
                .map_err(ToolError::failed);
            }
            policy::check_agents(
                &settings.agent_to_agent,
                Action::List,
                &caller.agent_id,
                asked,
            )
            .map_err(ToolError::failed)?;
        }
        return Ok(vec![asked.to_owned()]);
    }
    let mut agents = vec![caller.agent_id.clone()];
    // Sub-agents the caller spawned on other agents are its own to see.
    for record in team.registry().spawned_by(&caller.key) {
        if !agents.contains(&record.agent_id) {
            agents.push(record.agent_id);
        }
    }
    if settings.visibility == Visibility::All && settings.agent_to_agent.enabled {
        for id in configured {
            if !agents.contains(&id) && settings.agent_to_agent.allows(&caller.agent_id, &id) {
                agents.push(id);
            }
        }
    }
    Ok(agents)
}

/// One row of the list (OpenClaw's `SessionListRow` fields Pincer has).
fn row(
    team: &Team,
    agent_id: &str,
    key: &str,
    entry: &SessionEntry,
    kind: &str,
    active: bool,
) -> Value {
    let mut row = Map::new();
    row.insert("key".into(), json!(key));
    row.insert("sessionId".into(), json!(entry.session_id));
    row.insert("agentId".into(), json!(agent_id));
    row.insert("kind".into(), json!(kind));
    row.insert("channel".into(), json!(channel_of(key, Some(entry), kind)));
    let optional = [
        ("label", entry.label.as_deref()),
        ("displayName", entry.display_name.as_deref()),
        ("model", entry.model.as_deref()),
        ("thinkingLevel", entry.thinking_level.as_deref()),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            row.insert(name.into(), json!(value));
        }
    }
    row.insert("updatedAt".into(), json!(entry.updated_at));
    for (name, value) in [
        ("inputTokens", entry.input_tokens),
        ("outputTokens", entry.output_tokens),
        ("totalTokens", entry.total_tokens),
    ] {
        if let Some(value) = value {
            row.insert(name.into(), json!(value));
        }
    }
    if let Some(record) = team.registry().get(key) {
        row.insert("parentSessionKey".into(), json!(record.requester_key));
        row.insert("status".into(), json!(record.status.as_str()));
    } else if active {
        row.insert("status".into(), json!("running"));
    }
    Value::Object(row)
}

/// The `sessions_list` tool of agent `agent`.
pub fn tool(team: Arc<Team>, agent: Arc<str>) -> Arc<dyn AgentTool> {
    typed(SessionsList { team, agent })
}
