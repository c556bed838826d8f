//! `subagents.list`, `subagents.info`, `subagents.log`, `subagents.send` and
//! `subagents.stop`: the background sub-agents (`sessions_spawn`) for clients to show —
//! every one, or one session's — in the shapes the `subagents` tool returns.

use std::sync::Arc;

use pincer_team::subagents::control::{self, Scope};
use pincer_team::subagents::registry::SpawnRecord;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::frames::MethodError;
use super::params::parse;

/// `subagents.list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubagentsListParams {
    /// Only the sub-agents this session spawned (default: all).
    session_key: Option<String>,
}

/// `subagents.info`, `subagents.log`, `subagents.stop`, `subagents.send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SubagentParams {
    /// The sub-agent: its run id or child session key.
    run_id: String,
    /// `subagents.log`: messages at most (default 20).
    limit: Option<u32>,
    /// `subagents.send`: what to send it.
    message: Option<String>,
}

fn team(gw: &Gateway) -> Result<&Arc<pincer_team::Team>, MethodError> {
    gw.team
        .as_ref()
        .ok_or_else(|| MethodError::unavailable("sub-agents are not available on this gateway"))
}

fn port(team: &pincer_team::Team) -> Result<Arc<dyn pincer_team::SessionPort>, MethodError> {
    team.slot()
        .get()
        .ok_or_else(|| MethodError::unavailable("the gateway is not running"))
}

pub(super) fn list(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let p: SubagentsListParams = parse(p)?;
    let team = team(gw)?;
    let scope = match p.session_key.as_deref() {
        Some(key) => Scope::Session(key),
        None => Scope::All,
    };
    let records = control::list(team, scope);
    let rows: Vec<Value> = records
        .iter()
        .enumerate()
        .map(|(i, r)| control::record_json(r, i + 1))
        .collect();
    Ok(json!({ "count": rows.len(), "subagents": rows }))
}

/// The record `run_id` names (a run id or child session key).
fn find(team: &pincer_team::Team, run_id: &str) -> Result<SpawnRecord, MethodError> {
    control::list(team, Scope::All)
        .into_iter()
        .find(|r| r.run_id == run_id || r.child_key == run_id)
        .ok_or_else(|| MethodError::invalid(format!("unknown sub-agent {run_id}")))
}

pub(super) async fn call(
    gw: &Gateway,
    method: super::Method,
    p: &Value,
) -> Result<Value, MethodError> {
    let p: SubagentParams = parse(p)?;
    let team = team(gw)?;
    let record = find(team, &p.run_id)?;
    match method {
        super::Method::SubagentsInfo => {
            let mut row = control::record_json(&record, 0);
            row["result"] = json!(record.result);
            row["task"] = json!(record.task);
            Ok(row)
        }
        super::Method::SubagentsLog => {
            let limit = p.limit.map_or(20, |l| (l as usize).clamp(1, 200));
            let messages = control::log(&port(team)?, &record, limit)
                .await
                .map_err(MethodError::unavailable)?;
            Ok(
                json!({ "runId": record.run_id, "status": record.status.as_str(), "messages": messages }),
            )
        }
        super::Method::SubagentsSend => {
            let message = p.message.unwrap_or_default();
            let run_id =
                control::send(&port(team)?, &record, &message).map_err(MethodError::invalid)?;
            Ok(json!({ "runId": run_id, "status": "started" }))
        }
        _ => {
            let stopped = control::stop(team, &port(team)?, &record);
            Ok(json!({ "runId": record.run_id, "stopped": stopped }))
        }
    }
}
