//! The session tools: `sessions_list`, `sessions_history`, `sessions_send`,
//! `session_status`, `agents_list`, and what they share — who is calling, and which
//! session a key names and whether the caller may reach it.

pub mod agents;
pub mod history;
pub mod list;
pub mod send;
pub mod status;

use std::sync::Arc;

use pincer_agent::{ToolContext, ToolError};
use pincer_store::SessionEntry;

use crate::Team;
use crate::policy::{self, Action, Requester, Target};
use crate::port::SessionPort;

/// The calling session: the tool's agent and the turn's session key (its main session
/// when the turn has none).
pub(crate) struct Caller {
    pub agent_id: String,
    pub key: String,
}

impl Caller {
    pub(crate) fn of(port: &dyn SessionPort, agent_id: &str, ctx: &ToolContext) -> Self {
        let key = ctx
            .session_key()
            .map(str::to_owned)
            .unwrap_or_else(|| port.main_session_key(agent_id));
        Self {
            agent_id: agent_id.to_owned(),
            key,
        }
    }

    pub(crate) fn requester(&self) -> Requester<'_> {
        Requester {
            key: &self.key,
            agent_id: &self.agent_id,
        }
    }
}

/// A session a tool resolved and may reach.
pub(crate) struct Resolved {
    pub key: String,
    pub agent_id: String,
}

/// The agent `key` belongs to: its `agent:<id>:` part, else the agent that spawned or was
/// delegated it, else the caller's.
pub(crate) fn agent_of(team: &Team, key: &str, caller: &Caller) -> String {
    if let Some(id) = policy::agent_of_key(key) {
        return id.to_owned();
    }
    team.registry()
        .get(key)
        .map_or_else(|| caller.agent_id.clone(), |r| r.agent_id)
}

/// `key` as the caller wrote it, made whole: `main` (or `current`) is the caller's own
/// main session (its current session), anything else is taken as written.
pub(crate) fn expand_key(port: &dyn SessionPort, caller: &Caller, key: &str) -> String {
    match key.trim() {
        "main" => port.main_session_key(&caller.agent_id),
        "current" => caller.key.clone(),
        other => other.to_owned(),
    }
}

/// Checks that the caller may do `action` on `key` (before anything says whether it
/// exists, so a refusal leaks nothing).
pub(crate) fn reach(
    team: &Team,
    caller: &Caller,
    action: Action,
    key: &str,
) -> Result<Resolved, ToolError> {
    let agent_id = agent_of(team, key, caller);
    let target = Target {
        key,
        agent_id: &agent_id,
        spawned_by_requester: team.registry().descends_from(key, &caller.key),
    };
    policy::check(team.settings(), action, caller.requester(), target)
        .map_err(ToolError::failed)?;
    Ok(Resolved {
        key: key.to_owned(),
        agent_id,
    })
}

/// The index entry of `key` in `agent_id`'s store, read on the blocking pool.
pub(crate) async fn entry_of(
    port: &Arc<dyn SessionPort>,
    agent_id: &str,
    key: &str,
) -> Result<Option<SessionEntry>, ToolError> {
    let store = port.store(agent_id);
    let key = key.to_owned();
    store
        .run(move |store| store.entry(&key))
        .await
        .map_err(|e| ToolError::failed(format!("cannot read the sessions: {e}")))
}

/// The refusal for a session that does not exist (said only once the caller may see it).
pub(crate) fn not_found(key: &str) -> ToolError {
    ToolError::failed(format!(
        "Session not found: {key}. sessions_list shows the sessions you can reach."
    ))
}

/// The coarse kind of a session (OpenClaw's `main`, `group`, `cron`, `hook`, `node`,
/// `other`).
pub(crate) fn kind_of(key: &str, entry: Option<&SessionEntry>, main_key: &str) -> &'static str {
    let chat = entry.and_then(|e| e.chat_type.as_deref());
    if matches!(chat, Some("group" | "channel")) {
        return "group";
    }
    let rest = key
        .strip_prefix("agent:")
        .and_then(|r| r.split_once(':').map(|(_, rest)| rest))
        .unwrap_or(key);
    if key == main_key || key == "global" {
        return "main";
    }
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.first() == Some(&"cron") {
        "cron"
    } else if parts.first() == Some(&"hook") {
        "hook"
    } else if parts.contains(&"group") || parts.contains(&"channel") {
        "group"
    } else {
        "other"
    }
}

/// The channel a session talks on: the one it last heard from, else its key's, else
/// `internal` for cron and hooks.
pub(crate) fn channel_of(key: &str, entry: Option<&SessionEntry>, kind: &str) -> String {
    if matches!(kind, "cron" | "hook") {
        return "internal".to_owned();
    }
    if let Some(channel) = entry.and_then(|e| e.last_channel.as_deref()) {
        return channel.to_owned();
    }
    let parts: Vec<&str> = key.split(':').collect();
    match parts.as_slice() {
        ["agent", _, channel, _, ..]
            if !matches!(*channel, "main" | "subagent" | "cron" | "hook") =>
        {
            (*channel).to_owned()
        }
        _ => "unknown".to_owned(),
    }
}
