//! Creating and checking jobs: OpenClaw's `createJob`, `assertSupportedJobSpec` and
//! `assertDeliverySupport` (`src/cron/service/jobs.ts`) with the defaults of
//! `normalizeCronJobCreate` (`src/cron/normalize.ts`).
//!
//! Rules: a name; non-empty text; `main` runs a `systemEvent`, `isolated` an `agentTurn`;
//! channel delivery only for `isolated`, `webhook` anywhere but with an http(s) URL; a
//! schedule that parses and, for a new job, still has a run ahead (a one-shot time in the
//! past or an expression that never matches is refused rather than stored dead).

use jiff::tz::TimeZone;
use schemars::JsonSchema;
use serde::Deserialize;

use super::at::resolve_at;
use super::job::{
    CronDelivery, CronJob, CronJobState, CronPayload, CronSchedule, DeliveryMode, Extra,
    SessionTarget, WakeMode,
};
use super::next::{default_stagger_ms, job_next_run_ms};
use super::schedule::{ScheduleError, validate_schedule};

/// Why a job is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronJobError {
    #[error("a cron job needs a name")]
    EmptyName,
    #[error(
        "invalid cron job id {id:?}: it must be a non-empty plain name (it names the run log file)"
    )]
    InvalidId { id: String },
    #[error("payload.{field} must not be empty")]
    EmptyPayload { field: &'static str },
    #[error("main cron jobs require payload.kind=\"systemEvent\"")]
    MainNeedsSystemEvent,
    #[error("isolated cron jobs require payload.kind=\"agentTurn\"")]
    IsolatedNeedsAgentTurn,
    #[error("cron channel delivery config is only supported for sessionTarget=\"isolated\"")]
    DeliveryNeedsIsolated,
    #[error("cron webhook delivery requires delivery.to to be a valid http(s) URL")]
    WebhookNeedsUrl,
    /// The reason is in the message, not a `source`: a printed error chain would repeat it.
    #[error("invalid schedule: {0}")]
    Schedule(ScheduleError),
    #[error("the {kind} schedule has no run in the future")]
    NeverRuns { kind: &'static str },
}

impl From<ScheduleError> for CronJobError {
    fn from(e: ScheduleError) -> Self {
        Self::Schedule(e)
    }
}

/// The fields of a new job (OpenClaw's `CronJobCreate`, the `cron.add` params); what is
/// left out gets OpenClaw's defaults in [`create_job`].
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewCronJob {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub session_key: Option<String>,
    /// Default `true`.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Default `true` for `at` schedules.
    #[serde(default)]
    pub delete_after_run: Option<bool>,
    pub schedule: CronSchedule,
    /// Default: `main` for a `systemEvent` payload, `isolated` for an `agentTurn`.
    #[serde(default)]
    pub session_target: Option<SessionTarget>,
    /// Default `now`.
    #[serde(default)]
    pub wake_mode: Option<WakeMode>,
    pub payload: CronPayload,
    /// Default for an isolated job: `{mode: "announce"}`.
    #[serde(default)]
    pub delivery: Option<CronDelivery>,
}

/// A new job id: a UUID v4, as OpenClaw's `crypto.randomUUID()`.
pub fn new_job_id() -> String {
    pincer_store::ids::session_id()
}

/// Builds a job from `input` at `now_ms` with OpenClaw's defaults, checks it and computes
/// its first run. A relative `at` (`20m`) is resolved against `now_ms`.
pub fn create_job(
    input: NewCronJob,
    id: String,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Result<CronJob, CronJobError> {
    let schedule = complete_schedule(input.schedule, now_ms)?;
    let session_target = input.session_target.unwrap_or(match input.payload {
        CronPayload::SystemEvent(_) => SessionTarget::Main,
        CronPayload::AgentTurn(_) => SessionTarget::Isolated,
    });
    let delivery = match (input.delivery, session_target) {
        (None, SessionTarget::Isolated) => Some(CronDelivery::new(DeliveryMode::Announce)),
        (delivery, _) => delivery,
    };
    let delete_after_run = input
        .delete_after_run
        .or(matches!(schedule, CronSchedule::At(_)).then_some(true));
    let mut job = CronJob {
        id,
        agent_id: trimmed(input.agent_id),
        session_key: trimmed(input.session_key),
        name: input.name.trim().to_string(),
        description: trimmed(input.description),
        enabled: input.enabled.unwrap_or(true),
        delete_after_run,
        created_at_ms: now_ms,
        updated_at_ms: now_ms,
        schedule,
        session_target,
        wake_mode: input.wake_mode.unwrap_or(WakeMode::Now),
        payload: input.payload,
        delivery,
        state: CronJobState::default(),
        extra: Extra::new(),
    };
    validate_job(&job)?;
    let next = job_next_run_ms(&job, now_ms, local_tz)?;
    if job.enabled && next.is_none() {
        return Err(CronJobError::NeverRuns {
            kind: job.schedule.kind(),
        });
    }
    job.state.next_run_at_ms = next;
    Ok(job)
}

/// A schedule as a new (or newly scheduled) job stores it: a relative `at` resolved against
/// `now_ms`, an `every` anchored at `now_ms` when it has no anchor, a recurring top-of-hour
/// cron expression given its default stagger.
pub(crate) fn complete_schedule(
    schedule: CronSchedule,
    now_ms: i64,
) -> Result<CronSchedule, CronJobError> {
    Ok(match schedule {
        CronSchedule::At(mut at) => {
            at.at = resolve_at(&at.at, now_ms, None)?;
            CronSchedule::At(at)
        }
        CronSchedule::Every(mut every) => {
            every.anchor_ms.get_or_insert(now_ms);
            CronSchedule::Every(every)
        }
        CronSchedule::Cron(mut cron) => {
            if cron.stagger_ms.is_none() {
                cron.stagger_ms = default_stagger_ms(&cron.expr);
            }
            CronSchedule::Cron(cron)
        }
    })
}

/// Checks everything about `job` that does not depend on the clock.
pub fn validate_job(job: &CronJob) -> Result<(), CronJobError> {
    validate_job_id(&job.id)?;
    if job.name.trim().is_empty() {
        return Err(CronJobError::EmptyName);
    }
    match &job.payload {
        CronPayload::SystemEvent(p) if p.text.trim().is_empty() => {
            return Err(CronJobError::EmptyPayload { field: "text" });
        }
        CronPayload::AgentTurn(p) if p.message.trim().is_empty() => {
            return Err(CronJobError::EmptyPayload { field: "message" });
        }
        _ => {}
    }
    match (job.session_target, &job.payload) {
        (SessionTarget::Main, CronPayload::AgentTurn(_)) => {
            return Err(CronJobError::MainNeedsSystemEvent);
        }
        (SessionTarget::Isolated, CronPayload::SystemEvent(_)) => {
            return Err(CronJobError::IsolatedNeedsAgentTurn);
        }
        _ => {}
    }
    if let Some(delivery) = &job.delivery {
        if delivery.mode == DeliveryMode::Webhook {
            if !is_http_url(delivery.to.as_deref().unwrap_or("")) {
                return Err(CronJobError::WebhookNeedsUrl);
            }
        } else if job.session_target != SessionTarget::Isolated {
            return Err(CronJobError::DeliveryNeedsIsolated);
        }
    }
    validate_schedule(&job.schedule)?;
    Ok(())
}

/// A job id names `runs/<id>.jsonl`, so it must be a plain file name.
pub fn validate_job_id(id: &str) -> Result<(), CronJobError> {
    let bad = id.trim().is_empty()
        || id != id.trim()
        || id == "."
        || id == ".."
        || id.contains(['/', '\\', '\0']);
    if bad {
        return Err(CronJobError::InvalidId { id: id.to_string() });
    }
    Ok(())
}

/// `http://host…` or `https://host…`.
fn is_http_url(s: &str) -> bool {
    let s = s.trim();
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|rest| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !host.contains(char::is_whitespace)
    })
}

/// Trims an optional string and drops it when blank, as OpenClaw's `normalizeOptionalText`.
fn trimmed(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}
