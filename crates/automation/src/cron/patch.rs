//! OpenClaw's `CronJobPatch` (`cron.update`'s `patch`, `applyJobPatch` in
//! `src/cron/service/jobs.ts`): a JSON object of the top-level job fields to change.
//!
//! Rules:
//! - changeable: `name`, `description`, `enabled`, `deleteAfterRun`, `schedule`,
//!   `sessionTarget`, `wakeMode`, `payload`, `delivery`, `agentId`, `sessionKey`; `null`
//!   clears an optional one. `id`, `state`, `createdAtMs`, `updatedAtMs` and unknown keys are
//!   refused, so a typo never passes as a no-op;
//! - `payload` / `delivery` are merged key by key into the current object when their
//!   `kind` / `mode` is absent or unchanged, and replace it otherwise (a new kind shares no
//!   fields with the old one);
//! - `schedule` is replaced and completed as on creation (a relative `at` such as `20m`
//!   counts from now, an `every` gets its anchor, a top-of-hour `cron` its stagger);
//! - the result is checked again, and the next run recomputed when the schedule or
//!   `enabled` changed: enabling a one-shot job whose time has passed is refused as never
//!   running rather than run late by surprise.

use jiff::tz::TimeZone;
use serde_json::{Map, Value};

use super::at::parse_absolute_ms;
use super::job::{CronJob, CronSchedule};
use super::next::job_next_run_ms;
use super::service::CronServiceError;
use super::validate::{CronJobError, complete_schedule, validate_job};

/// The job fields a patch may change.
pub const PATCHABLE_FIELDS: &[&str] = &[
    "name",
    "description",
    "enabled",
    "deleteAfterRun",
    "schedule",
    "sessionTarget",
    "wakeMode",
    "payload",
    "delivery",
    "agentId",
    "sessionKey",
];

/// `job` with `patch` applied at `now_ms`, checked, with its next run recomputed when
/// needed. `updatedAtMs` is left to the store.
pub fn apply_patch(
    job: &CronJob,
    patch: &Value,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Result<CronJob, CronServiceError> {
    let Value::Object(patch) = patch else {
        return Err(invalid(
            "the patch must be a JSON object of the job fields to change",
        ));
    };
    let Ok(Value::Object(mut fields)) = serde_json::to_value(job) else {
        return Err(invalid("the job could not be represented as JSON"));
    };
    for (key, value) in patch {
        match key.as_str() {
            "id" | "state" | "createdAtMs" | "updatedAtMs" => {
                return Err(invalid(format!("`{key}` cannot be changed")));
            }
            "payload" => merge_tagged(&mut fields, "payload", "kind", value),
            "delivery" => merge_tagged(&mut fields, "delivery", "mode", value),
            known if PATCHABLE_FIELDS.contains(&known) => {
                if value.is_null() {
                    fields.remove(key);
                } else {
                    fields.insert(key.clone(), value.clone());
                }
            }
            _ => {
                return Err(invalid(format!(
                    "unknown field `{key}`; a patch may change {}",
                    PATCHABLE_FIELDS.join(", ")
                )));
            }
        }
    }
    let mut patched: CronJob =
        serde_json::from_value(Value::Object(fields)).map_err(|e| invalid(e.to_string()))?;
    // Never changed by a patch, whatever the JSON round trip did.
    patched.id.clone_from(&job.id);
    patched.created_at_ms = job.created_at_ms;
    patched.state = job.state.clone();

    let schedule_changed = patch.contains_key("schedule");
    if schedule_changed {
        patched.schedule = complete_schedule(patched.schedule, now_ms)?;
    }
    validate_job(&patched)?;
    if schedule_changed || patched.enabled != job.enabled {
        patched.state.next_run_at_ms = next_after_patch(&patched, now_ms, local_tz)?;
    }
    Ok(patched)
}

/// Merges `value` into `fields[key]` when its `tag` is absent or the same, else replaces.
fn merge_tagged(fields: &mut Map<String, Value>, key: &str, tag: &str, value: &Value) {
    match (fields.get_mut(key), value) {
        (Some(Value::Object(current)), Value::Object(changes))
            if changes.get(tag).is_none_or(|t| current.get(tag) == Some(t)) =>
        {
            for (k, v) in changes {
                if v.is_null() {
                    current.remove(k);
                } else {
                    current.insert(k.clone(), v.clone());
                }
            }
        }
        (_, Value::Null) => {
            fields.remove(key);
        }
        (_, value) => {
            fields.insert(key.to_string(), value.clone());
        }
    }
}

/// The next run of a patched job; an enabled job with none is refused.
fn next_after_patch(
    job: &CronJob,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Result<Option<i64>, CronServiceError> {
    if !job.enabled {
        return Ok(None);
    }
    let next = match &job.schedule {
        // Its own time, if still ahead, even when an earlier time already ran: the patch
        // set or re-enabled it on purpose.
        CronSchedule::At(at) => parse_absolute_ms(&at.at).filter(|at| *at > now_ms),
        _ => job_next_run_ms(job, now_ms, local_tz)?,
    };
    if next.is_none() {
        return Err(CronJobError::NeverRuns {
            kind: job.schedule.kind(),
        }
        .into());
    }
    Ok(next)
}

fn invalid(message: impl Into<String>) -> CronServiceError {
    CronServiceError::InvalidPatch(message.into())
}
