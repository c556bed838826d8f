//! The exec approval methods (OpenClaw's `exec.approval.*`, scope `operator.approvals`)
//! over the gateway's registry (`server/approvals`):
//!
//! - `exec.approval.list`: the pending ones, `[{id, request, createdAtMs, expiresAtMs}]`;
//! - `exec.approval.get {id}`: `{id, commandText, allowedDecisions, host, nodeId, agentId,
//!   expiresAtMs}`;
//! - `exec.approval.resolve {id, decision}`: `{ok: true}`; `decision` is `allow-once`,
//!   `allow-always` (not offered when `tools.exec.ask` is `always`) or `deny`;
//! - `exec.approval.waitDecision {id}`: waits for the end, `{id, decision, createdAtMs,
//!   expiresAtMs}` (`decision` `null` when it timed out or was withdrawn).
//!
//! An id is the full id or a prefix of at least 8 characters only one approval has;
//! otherwise `unknown or expired approval id` (OpenClaw's message and `APPROVAL_NOT_FOUND`).

use std::sync::Arc;

use pincer_tools::exec::approval::Decision;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::Gateway;
use super::super::approvals::{LookupError, ResolveError};
use super::super::frames::MethodError;
use super::params::{NonEmpty, parse};

/// How long past its expiry `waitDecision` waits for an approval's end at most.
const WAIT_MARGIN_MS: u64 = 5_000;

/// The params of `exec.approval.get` and `exec.approval.waitDecision`.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ApprovalIdParams {
    id: NonEmpty,
}

/// The params of `exec.approval.resolve`.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ApprovalResolveParams {
    id: NonEmpty,
    /// `allow-once`, `allow-always` or `deny`.
    decision: String,
}

pub(super) fn list(gw: &Gateway) -> Value {
    Value::Array(gw.approvals.list().iter().map(|p| p.entry_json()).collect())
}

pub(super) fn get(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let params: ApprovalIdParams = parse(p)?;
    let pending = gw
        .approvals
        .find(params.id.as_str())
        .map_err(lookup_error)?;
    let allowed: Vec<&str> = pending.request.allowed.iter().map(|d| d.as_str()).collect();
    Ok(json!({
        "id": pending.id,
        "commandText": pending.request.command,
        "allowedDecisions": allowed,
        "host": "gateway",
        "nodeId": null,
        "agentId": pending.request.agent_id,
        "expiresAtMs": pending.expires_at_ms,
    }))
}

pub(super) fn resolve(gw: &Gateway, p: &Value) -> Result<Value, MethodError> {
    let params: ApprovalResolveParams = parse(p)?;
    let Some(decision) = Decision::parse(&params.decision) else {
        return Err(
            MethodError::invalid("invalid decision").with_details(json!({
                "allowed": ["allow-once", "allow-always", "deny"],
            })),
        );
    };
    match gw
        .approvals
        .resolve(gw, params.id.as_str(), decision, "operator", |_| true)
    {
        Ok(_) => Ok(json!({ "ok": true })),
        Err(ResolveError::Lookup(e)) => Err(lookup_error(e)),
        Err(e @ ResolveError::NotAllowed { .. }) => Err(MethodError::invalid(e.to_string())
            .with_details(json!({ "reason": "APPROVAL_ALLOW_ALWAYS_UNAVAILABLE" }))),
    }
}

pub(super) async fn wait_decision(gw: &Arc<Gateway>, p: &Value) -> Result<Value, MethodError> {
    let params: ApprovalIdParams = parse(p)?;
    let pending = gw
        .approvals
        .find(params.id.as_str())
        .map_err(lookup_error)?;
    let (id, created, expires) = (
        pending.id.clone(),
        pending.created_at_ms,
        pending.expires_at_ms,
    );
    let mut decided = pending.subscribe();
    // Not held while waiting: the decision's sender lives in it, and its end (dropped
    // undecided) is how a timeout reaches this wait.
    drop(pending);
    let left = u64::try_from(expires.saturating_sub(pincer_ai::now_ms())).unwrap_or(0);
    let bound = std::time::Duration::from_millis(left.saturating_add(WAIT_MARGIN_MS));
    let decision = match tokio::time::timeout(bound, decided.wait_for(Option::is_some)).await {
        Ok(Ok(decision)) => *decision,
        Ok(Err(_)) | Err(_) => None,
    };
    Ok(json!({
        "id": id,
        "decision": decision.map(Decision::as_str),
        "createdAtMs": created,
        "expiresAtMs": expires,
    }))
}

fn lookup_error(e: LookupError) -> MethodError {
    let error = MethodError::invalid(e.to_string());
    match e {
        LookupError::Missing => error.with_details(json!({
            "reason": "APPROVAL_NOT_FOUND",
            "remediation": "Re-request the action; pending approvals are cleared after expiry or restart.",
        })),
        LookupError::Ambiguous => error,
    }
}
