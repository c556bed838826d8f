//! The queue side of `chat.send` and `agent`: reading the v4 `queueMode` param and the
//! fields an answer carries when the session was busy.
//!
//! The answer keeps OpenClaw's shape: `runId` is the request's `idempotencyKey`, as for any
//! run (an entry `agent.wait` and retries find). `chat.send`'s `status` is `started` when
//! the message runs at once; when the session was busy it is `steered` (handed to the
//! running turn) or `queued` (it waits for a turn), and the answer adds `queueMode` plus the
//! run whose events carry the reply: `activeRunId` (steered), `batchRunId` (collected) or
//! `interruptedRunId` (the turn an interrupt aborted). `agent`'s interim answer keeps
//! `status: "accepted"` (the CLI's `--expect-final` waits past it) and adds these fields
//! with the busy status as `queueStatus`.

use serde_json::{Map, Value, json};

use super::frames::{MethodError, opt_str_param};
use super::queue::{QUEUE_MODE_NAMES, QueueMode};
use super::runs::Submitted;

/// The request's `queueMode`, else `default`.
pub(super) fn queue_mode_param(
    params: &Value,
    default: QueueMode,
) -> Result<QueueMode, MethodError> {
    match opt_str_param(params, "queueMode")? {
        None => Ok(default),
        Some(raw) => QueueMode::parse(raw).ok_or_else(|| {
            MethodError::invalid(format!(
                "invalid queueMode {raw:?}: expected one of {QUEUE_MODE_NAMES}"
            ))
        }),
    }
}

/// What the busy session did with the message; empty when it ran at once (or the request
/// was a retry), so an idle session's answer is exactly OpenClaw's.
pub(super) fn queue_fields(submitted: &Submitted, mode: QueueMode) -> Map<String, Value> {
    let mut out = Map::new();
    let (field, run_id) = match submitted {
        Submitted::Steered { active_run_id, .. } => ("activeRunId", Some(active_run_id)),
        Submitted::Collected { batch_run_id, .. } => ("batchRunId", Some(batch_run_id)),
        Submitted::Queued { interrupted, .. } => ("interruptedRunId", interrupted.as_ref()),
        Submitted::Started { .. } | Submitted::InFlight | Submitted::Finished(_) => return out,
    };
    out.insert("queueMode".into(), json!(mode.as_str()));
    if let Some(run_id) = run_id {
        out.insert(field.into(), json!(run_id));
    }
    out
}

/// Merges `fields` into the object `payload`.
pub(super) fn with_fields(mut payload: Value, fields: Map<String, Value>) -> Value {
    if let Value::Object(target) = &mut payload {
        target.extend(fields);
    }
    payload
}
