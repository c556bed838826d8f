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

use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::super::queue::{QUEUE_MODE_NAMES, QueueMode};
use super::super::runs::Submitted;

/// The v4 `queueMode` param: a mode's name; a wrong name is told the names there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct QueueModeParam(pub QueueMode);

impl<'de> Deserialize<'de> for QueueModeParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ModeVisitor;

        impl Visitor<'_> for ModeVisitor {
            type Value = QueueModeParam;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: de::Error>(self, raw: &str) -> Result<QueueModeParam, E> {
                QueueMode::parse(raw).map(QueueModeParam).ok_or_else(|| {
                    E::custom(format!(
                        "invalid queueMode {raw:?}: expected one of {QUEUE_MODE_NAMES}"
                    ))
                })
            }
        }

        deserializer.deserialize_str(ModeVisitor)
    }
}

impl JsonSchema for QueueModeParam {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QueueMode".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "description": format!("how a busy session takes the message: one of {QUEUE_MODE_NAMES}"),
        })
    }
}

/// The request's `queueMode`, else `default`.
pub(super) fn queue_mode_or(param: Option<QueueModeParam>, default: QueueMode) -> QueueMode {
    param.map_or(default, |p| p.0)
}

/// What the busy session did with the message (all absent when it ran at once, or the
/// request was a retry, so an idle session's answer is exactly OpenClaw's).
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct QueueFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_run_id: Option<String>,
}

impl QueueFields {
    /// Whether the session was busy.
    pub(super) fn is_empty(&self) -> bool {
        self.queue_mode.is_none()
    }
}

/// The fields for `submitted` under `mode`.
pub(super) fn queue_fields(submitted: &Submitted, mode: QueueMode) -> QueueFields {
    let mut out = QueueFields::default();
    match submitted {
        Submitted::Steered { active_run_id, .. } => {
            out.active_run_id = Some(active_run_id.clone());
        }
        Submitted::Collected { batch_run_id, .. } => {
            out.batch_run_id = Some(batch_run_id.clone());
        }
        Submitted::Queued { interrupted, .. } => out.interrupted_run_id = interrupted.clone(),
        Submitted::Started { .. } | Submitted::InFlight | Submitted::Finished(_) => return out,
    }
    out.queue_mode = Some(mode.as_str());
    out
}
