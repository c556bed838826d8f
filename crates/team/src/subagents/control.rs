//! What `/subagents`, the `subagents` tool and the WS `subagents.*` methods do: list a
//! session's sub-agents (or all of them), pick one by `#n`, run id, session key or label,
//! and show its record, read its log, send it a message or stop it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::registry::{SpawnRecord, SpawnStatus, shorten};
use crate::Team;
use crate::port::{SessionPort, TeamTurn};

/// Whose sub-agents: one session's, or every one (an operator's view).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    Session(&'a str),
    All,
}

/// The sub-agents in `scope`, oldest first.
pub fn list(team: &Team, scope: Scope<'_>) -> Vec<SpawnRecord> {
    let settings = team.settings();
    team.registry().sweep(settings.subagents.archive_after);
    match scope {
        Scope::Session(key) => team.registry().spawned_by(key),
        Scope::All => team.registry().all(),
    }
}

/// One record as clients and the model see it; `index` is its `#n` in its list.
pub fn record_json(record: &SpawnRecord, index: usize) -> Value {
    json!({
        "index": index,
        "runId": record.run_id,
        "sessionKey": record.child_key,
        "agentId": record.agent_id,
        "label": record.title(),
        "task": shorten(record.task.trim(), 200),
        "status": record.status.as_str(),
        "error": match &record.status { SpawnStatus::Failed(e) => Some(e.as_str()), _ => None },
        "requesterSessionKey": record.requester_key,
        "depth": record.depth,
        "createdAt": record.created_at,
        "startedAt": record.started_at,
        "endedAt": record.ended_at,
        "runtimeSeconds": record.runtime_secs(),
    })
}

/// The list as one line per sub-agent (`/subagents list`).
pub fn render_list(records: &[SpawnRecord]) -> String {
    if records.is_empty() {
        return "No sub-agents. The agent starts one with sessions_spawn (\"research X in the \
                background\")."
            .to_owned();
    }
    let mut lines = vec![format!("Sub-agents ({}):", records.len())];
    for (i, r) in records.iter().enumerate() {
        lines.push(format!(
            "#{} {} — {} ({} s) · {}",
            i + 1,
            r.title(),
            r.status.as_str(),
            r.runtime_secs(),
            r.run_id
        ));
    }
    lines.join("\n")
}

/// The record `which` names among `records`: `#n` / `n`, a run id, a session key or a
/// label; the error says what exists.
pub fn pick<'a>(records: &'a [SpawnRecord], which: &str) -> Result<&'a SpawnRecord, String> {
    let which = which.trim();
    let index = which
        .strip_prefix('#')
        .unwrap_or(which)
        .parse::<usize>()
        .ok();
    let found = match index {
        Some(n) if n >= 1 => records.get(n - 1),
        _ => records.iter().find(|r| {
            r.run_id == which || r.child_key == which || r.label.as_deref() == Some(which)
        }),
    };
    found.ok_or_else(|| {
        if records.is_empty() {
            "there are no sub-agents".to_owned()
        } else {
            format!(
                "no sub-agent {which:?}: use #1…#{} (see /subagents list), a run id or a label",
                records.len()
            )
        }
    })
}

/// Stops `record` (its running turn and whatever waits in its session); `false` when it
/// had already ended.
pub fn stop(team: &Team, port: &Arc<dyn SessionPort>, record: &SpawnRecord) -> bool {
    if record.status.is_finished() {
        return false;
    }
    let queued = record.status == SpawnStatus::Queued;
    team.registry().update(&record.child_key, |r| {
        r.status = SpawnStatus::Stopped;
        if queued {
            r.ended_at = Some(pincer_base::now_ms());
        }
    });
    port.abort(&record.child_key);
    true
}

/// Sends `message` to `record`'s session as a turn of its own (after its running one);
/// the new run's id.
pub fn send(
    port: &Arc<dyn SessionPort>,
    record: &SpawnRecord,
    message: &str,
) -> Result<String, String> {
    let message = message.trim();
    if message.is_empty() {
        return Err("say what to send: /subagents send <#n> <message>".to_owned());
    }
    let run_id = format!("subagent-send-{}", pincer_base::id::uuid_v4());
    port.start_turn(TeamTurn {
        run_id: run_id.clone(),
        agent_id: record.agent_id.clone(),
        session_key: record.child_key.clone(),
        message: format!(
            "[Message from the session that spawned you ({})]\n{message}",
            record.requester_key
        ),
    })
    .map_err(|e| e.to_string())?;
    Ok(run_id)
}

/// The last `limit` messages of `record`'s session (tool calls left out).
pub async fn log(
    port: &Arc<dyn SessionPort>,
    record: &SpawnRecord,
    limit: usize,
) -> Result<Vec<Value>, String> {
    crate::sessions::history::last_messages(port, &record.agent_id, &record.child_key, limit, false)
        .await
        .map_err(|e| e.to_string())
}

/// `messages` as lines `role: text` (`/subagents log`).
pub fn render_log(record: &SpawnRecord, messages: &[Value]) -> String {
    let mut lines = vec![format!(
        "Log of {} ({}):",
        record.title(),
        record.status.as_str()
    )];
    for message in messages {
        let role = message["role"].as_str().unwrap_or("?");
        let text = match &message["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        lines.push(format!("{role}: {}", shorten(text.trim(), 400)));
    }
    if messages.is_empty() {
        lines.push("(no messages yet)".to_owned());
    }
    lines.join("\n")
}

/// `record` as a few lines (`/subagents info`).
pub fn render_info(record: &SpawnRecord) -> String {
    let mut lines = vec![
        format!("Sub-agent {} — {}", record.title(), record.status.as_str()),
        format!("Run: {} · Session: {}", record.run_id, record.child_key),
        format!(
            "Agent: {} · Depth: {} · Runtime: {} s",
            record.agent_id,
            record.depth,
            record.runtime_secs()
        ),
        format!("Spawned by: {}", record.requester_key),
        format!("Task: {}", shorten(record.task.trim(), 500)),
    ];
    if let SpawnStatus::Failed(e) = &record.status {
        lines.push(format!("Error: {e}"));
    }
    if let Some(result) = record.result.as_deref().filter(|r| !r.trim().is_empty()) {
        lines.push(format!("Result: {}", shorten(result.trim(), 1000)));
    }
    lines.join("\n")
}
