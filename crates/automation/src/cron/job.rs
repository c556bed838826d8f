//! The cron job record in OpenClaw's exact JSON shape (`src/cron/types.ts`: `CronJob`,
//! `CronSchedule`, `CronPayload`, `CronDelivery`, `CronJobState`), so a `jobs.json` written by
//! OpenClaw loads here and the other way round.
//!
//! Every object keeps the fields it does not know in an `extra` map (`#[serde(flatten)]`):
//! a newer writer's data (OpenClaw adds fields often: `failureAlert`, critic settings, …)
//! survives a load and save by Pincer. Optional fields are omitted when unset, as
//! `JSON.stringify` omits `undefined`. Validation and defaults live in `validate.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Unknown fields of an object, kept as they were read.
pub type Extra = Map<String, Value>;

/// One scheduled job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJob {
    /// A UUID v4 (OpenClaw: `crypto.randomUUID()`).
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Origin session namespace, for reminder delivery and wake routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub enabled: bool,
    /// Delete the job after a successful run (the default for `at` jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after_run: Option<bool>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub schedule: CronSchedule,
    pub session_target: SessionTarget,
    pub wake_mode: WakeMode,
    pub payload: CronPayload,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<CronDelivery>,
    #[serde(default)]
    pub state: CronJobState,
    #[serde(flatten)]
    pub extra: Extra,
}

/// When a job runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum CronSchedule {
    /// Once, at an absolute time.
    #[serde(rename = "at")]
    At(AtSchedule),
    /// On a fixed grid: `anchorMs + k * everyMs`.
    #[serde(rename = "every")]
    Every(EverySchedule),
    /// A cron expression in a time zone.
    #[serde(rename = "cron")]
    Cron(CronExprSchedule),
}

/// `{kind: "at", at}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AtSchedule {
    /// ISO 8601 (an offset-less time is UTC, a bare date is midnight UTC) or epoch
    /// milliseconds as digits. On creation a relative `20m` / `2h` / `1d` is resolved
    /// against the clock and stored as ISO 8601 UTC.
    pub at: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `{kind: "every", everyMs, anchorMs?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EverySchedule {
    pub every_ms: i64,
    /// The grid's origin; creation sets it to the creation time when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_ms: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `{kind: "cron", expr, tz?, staggerMs?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronExprSchedule {
    /// 5 fields (minute first), 6 (seconds first) or 7 (a year last), croner's syntax.
    pub expr: String,
    /// IANA time zone; the gateway's local zone when missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// A deterministic per-job delay window (0 = exactly on schedule). Recurring
    /// top-of-hour expressions get 5 minutes by default so many jobs do not fire at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger_ms: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionTarget {
    /// Enqueue a system event in the agent's main session and wake the heartbeat.
    Main,
    /// Run a fresh turn in the session `cron:<jobId>`.
    Isolated,
}

/// Whether a `main` job wakes the heartbeat at once or waits for its next tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WakeMode {
    #[serde(rename = "now")]
    Now,
    #[serde(rename = "next-heartbeat")]
    NextHeartbeat,
}

/// What a run does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum CronPayload {
    /// `{kind: "systemEvent", text}`: the text becomes `[CRON:<id>] <text>` in the main session.
    #[serde(rename = "systemEvent")]
    SystemEvent(SystemEventPayload),
    /// `{kind: "agentTurn", message, …}`: an agent turn in `cron:<jobId>`.
    #[serde(rename = "agentTurn")]
    AgentTurn(AgentTurnPayload),
}

/// `{kind: "systemEvent", text}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemEventPayload {
    pub text: String,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `{kind: "agentTurn", message, model?, thinking?, timeoutSeconds?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentTurnPayload {
    pub message: String,
    /// Model override (`provider/model` or an alias).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// How an isolated run's reply leaves the gateway.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronDelivery {
    pub mode: DeliveryMode,
    /// A channel id, or `"last"` for the channel the user spoke on last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// The peer on that channel, or the URL for `webhook`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The channel account, when a channel has several (e.g. two Telegram bots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// A failed delivery does not fail the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_effort: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `delivery.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryMode {
    None,
    Announce,
    Webhook,
}

/// How a run ended: a cron run's outcome (in `state.lastStatus` and the run log), and the
/// status of a gateway run's final `agent`/`chat` event (never `skipped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Ok,
    Error,
    Skipped,
}

impl RunStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Skipped => "skipped",
        }
    }
}

/// What the scheduler knows about a job between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    /// Set while a run is in flight; a stale marker after a crash is cleared on start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at_ms: Option<i64>,
    /// OpenClaw's preferred outcome field; `lastStatus` is its back-compat alias and both
    /// are written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_duration_ms: Option<i64>,
    /// Errors in a row (reset on success); drives the retry backoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consecutive_errors: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_delivered: Option<bool>,
    /// `delivered` | `not-delivered` | `unknown` | `not-requested`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_delivery_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_delivery_error: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl CronSchedule {
    /// `at`, `every` or `cron`, as in the JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::At(_) => "at",
            Self::Every(_) => "every",
            Self::Cron(_) => "cron",
        }
    }

    /// A `{kind: "at", at}` schedule.
    pub fn at(at: impl Into<String>) -> Self {
        Self::At(AtSchedule {
            at: at.into(),
            extra: Extra::new(),
        })
    }

    /// A `{kind: "every", everyMs, anchorMs?}` schedule.
    pub fn every(every_ms: i64, anchor_ms: Option<i64>) -> Self {
        Self::Every(EverySchedule {
            every_ms,
            anchor_ms,
            extra: Extra::new(),
        })
    }

    /// A `{kind: "cron", expr, tz?}` schedule.
    pub fn cron(expr: impl Into<String>, tz: Option<String>) -> Self {
        Self::Cron(CronExprSchedule {
            expr: expr.into(),
            tz,
            stagger_ms: None,
            extra: Extra::new(),
        })
    }
}

impl CronPayload {
    /// `systemEvent` or `agentTurn`, as in the JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SystemEvent(_) => "systemEvent",
            Self::AgentTurn(_) => "agentTurn",
        }
    }

    /// A `{kind: "systemEvent", text}` payload.
    pub fn system_event(text: impl Into<String>) -> Self {
        Self::SystemEvent(SystemEventPayload {
            text: text.into(),
            extra: Extra::new(),
        })
    }

    /// A `{kind: "agentTurn", message}` payload.
    pub fn agent_turn(message: impl Into<String>) -> Self {
        Self::AgentTurn(AgentTurnPayload {
            message: message.into(),
            model: None,
            thinking: None,
            timeout_seconds: None,
            extra: Extra::new(),
        })
    }
}

impl CronDelivery {
    /// A delivery in `mode` with no target yet.
    pub fn new(mode: DeliveryMode) -> Self {
        Self {
            mode,
            channel: None,
            to: None,
            account_id: None,
            best_effort: None,
            extra: Extra::new(),
        }
    }
}
