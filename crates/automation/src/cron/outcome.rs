//! What a finished run does to its job, as OpenClaw's `applyJobResult`
//! (`src/cron/service/timer.ts`), kept free of I/O so the rules read in one place:
//! - success: a one-shot `at` job is deleted (`deleteAfterRun`) or disabled; a recurring one
//!   moves to its next slot;
//! - error: retried after the backoff (`retry_backoff_ms`) while `consecutiveErrors <=
//!   retry_max_attempts`, sooner when the natural next slot comes first; after that a
//!   one-shot job is disabled and says it gave up, a recurring one keeps its schedule;
//! - every outcome lands in the job state and in the run log: none is silently skipped.
//!
//! Also the run log note of a catch-up run after downtime.

use jiff::tz::TimeZone;

use super::at::format_iso_ms;
use super::job::{CronJob, CronJobState, CronSchedule, RunStatus};
use super::next::job_next_run_ms;
use super::run_log::RunLogEntry;
use super::service::{CronRunOutput, CronSettings};

/// The error of a run the gateway stopped in the middle of (found on the next start).
pub const INTERRUPTED_ERROR: &str = "interrupted: the gateway stopped during this run";

/// A run that has ended, as the scheduler saw it.
#[derive(Debug, Clone)]
pub(crate) struct FinishedRun {
    pub started_ms: i64,
    /// `None` when unknown (a run interrupted by a crash).
    pub duration_ms: Option<i64>,
    pub output: CronRunOutput,
    /// Put in front of the run log summary (the catch-up note).
    pub note: Option<String>,
}

/// What to do with the job after a run.
#[derive(Debug, Clone)]
pub(crate) struct FinishPlan {
    pub state: CronJobState,
    /// A one-shot job that succeeded with `deleteAfterRun`.
    pub delete: bool,
    /// A one-shot job that is done (succeeded, or gave up retrying).
    pub disable: bool,
    /// The run log summary.
    pub summary: Option<String>,
}

/// The job's new state after `run`, decided at `now_ms`.
pub(crate) fn plan_finish(
    job: &CronJob,
    run: &FinishedRun,
    now_ms: i64,
    settings: &CronSettings,
    local_tz: &TimeZone,
) -> FinishPlan {
    let out = &run.output;
    let mut state = job.state.clone();
    state.running_at_ms = None;
    state.last_run_at_ms = Some(run.started_ms);
    state.last_run_status = Some(out.status);
    state.last_status = Some(out.status);
    state.last_error = match out.status {
        RunStatus::Error => Some(
            out.error
                .clone()
                .unwrap_or_else(|| "the run failed without saying why".to_string()),
        ),
        RunStatus::Ok | RunStatus::Skipped => None,
    };
    state.last_duration_ms = run.duration_ms;
    state.last_delivered = out.delivered;
    state.last_delivery_status = out.delivery_status.clone();
    state.last_delivery_error = out.delivery_error.clone();

    let one_shot = matches!(job.schedule, CronSchedule::At(_));
    let mut plan = FinishPlan {
        state,
        delete: false,
        disable: false,
        summary: None,
    };
    let mut gave_up = None;
    match out.status {
        RunStatus::Error => {
            let errors = plan.state.consecutive_errors.unwrap_or(0).saturating_add(1);
            plan.state.consecutive_errors = Some(errors);
            // A one-shot job has no slot after its time: only a retry brings it back.
            let natural = if one_shot {
                None
            } else {
                natural_next(job, &plan.state, now_ms, local_tz)
            };
            if errors <= settings.retry_max_attempts {
                let retry = now_ms.saturating_add(backoff_ms(settings, errors));
                plan.state.next_run_at_ms = Some(natural.map_or(retry, |n| n.min(retry)));
            } else if one_shot {
                plan.disable = true;
                plan.state.next_run_at_ms = None;
                gave_up = Some(format!("gave up after {errors} attempts"));
            } else {
                plan.state.next_run_at_ms = natural;
            }
        }
        RunStatus::Ok | RunStatus::Skipped => {
            if out.status == RunStatus::Ok {
                plan.state.consecutive_errors = Some(0);
            }
            if one_shot {
                plan.delete = out.status == RunStatus::Ok && job.delete_after_run == Some(true);
                plan.disable = !plan.delete;
                plan.state.next_run_at_ms = None;
            } else {
                plan.state.next_run_at_ms = natural_next(job, &plan.state, now_ms, local_tz);
            }
        }
    }
    // A disabled job (run by force) is not scheduled by its run.
    if !job.enabled {
        plan.state.next_run_at_ms = None;
    }
    let parts: Vec<&str> = [
        run.note.as_deref(),
        out.summary.as_deref(),
        gave_up.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|s| !s.trim().is_empty())
    .collect();
    plan.summary = (!parts.is_empty()).then(|| parts.join(". "));
    plan
}

/// The run log line of a run of `job_id` with `plan`'s summary, written at `ts`.
pub(crate) fn run_log_entry(
    job_id: &str,
    ts: i64,
    run: &FinishedRun,
    summary: Option<String>,
    next_run_at_ms: Option<i64>,
) -> RunLogEntry {
    let out = &run.output;
    let mut entry = RunLogEntry::finished(job_id, ts, out.status);
    entry.error = match out.status {
        RunStatus::Error => out.error.clone(),
        RunStatus::Ok | RunStatus::Skipped => None,
    };
    entry.summary = summary;
    entry.delivered = out.delivered;
    entry.delivery_status = out.delivery_status.clone();
    entry.delivery_error = out.delivery_error.clone();
    entry.session_id = out.session_id.clone();
    entry.session_key = out.session_key.clone();
    entry.run_at_ms = Some(run.started_ms);
    entry.duration_ms = run.duration_ms;
    entry.next_run_at_ms = next_run_at_ms;
    entry.model = out.model.clone();
    entry.provider = out.provider.clone();
    entry
}

/// The catch-up note of `job` when its next run passed before `now_ms` (it was missed while
/// the gateway was down); `None` when it was not missed.
pub(crate) fn catch_up_note(job: &CronJob, now_ms: i64) -> Option<String> {
    let next = job.state.next_run_at_ms?;
    if !job.enabled || next >= now_ms {
        return None;
    }
    let since = format_iso_ms(next).unwrap_or_else(|| next.to_string());
    let note = match &job.schedule {
        CronSchedule::Every(every) if every.every_ms > 0 => {
            let missed = (now_ms - next) / every.every_ms + 1;
            if missed > 1 {
                format!(
                    "catch-up: {missed} runs missed since {since} while the gateway was down; \
                     ran once"
                )
            } else {
                format!("catch-up: 1 run missed since {since} while the gateway was down")
            }
        }
        _ => format!("catch-up: missed run(s) since {since} while the gateway was down"),
    };
    Some(note)
}

/// The job's next slot after `now_ms` with its new `state`.
fn natural_next(
    job: &CronJob,
    state: &CronJobState,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Option<i64> {
    let mut probe = job.clone();
    probe.state = state.clone();
    match job_next_run_ms(&probe, now_ms, local_tz) {
        Ok(next) => next,
        Err(e) => {
            // The job was validated when stored; this would be a schedule that broke since.
            tracing::warn!(job = %job.id, error = %e, "cron: no next run");
            None
        }
    }
}

/// The wait before retry number `errors` (1-based).
fn backoff_ms(settings: &CronSettings, errors: u32) -> i64 {
    let steps = &settings.retry_backoff_ms;
    let index = usize::try_from(errors.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(steps.len().saturating_sub(1));
    let ms = steps.get(index).copied().unwrap_or(60_000);
    i64::try_from(ms).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::job::{CronJobState, Extra};
    use crate::cron::job::{CronPayload, SessionTarget, WakeMode};

    fn job(schedule: CronSchedule) -> CronJob {
        CronJob {
            id: "j1".into(),
            agent_id: None,
            session_key: None,
            name: "j".into(),
            description: None,
            enabled: true,
            delete_after_run: Some(true),
            created_at_ms: 0,
            updated_at_ms: 0,
            schedule,
            session_target: SessionTarget::Main,
            wake_mode: WakeMode::Now,
            payload: CronPayload::system_event("x"),
            delivery: None,
            state: CronJobState::default(),
            extra: Extra::new(),
        }
    }

    fn run(output: CronRunOutput) -> FinishedRun {
        FinishedRun {
            started_ms: 1_000_000,
            duration_ms: Some(0),
            output,
            note: None,
        }
    }

    #[test]
    fn backoff_steps_then_repeats_the_last() {
        let s = CronSettings::default();
        assert_eq!(backoff_ms(&s, 1), 60_000);
        assert_eq!(backoff_ms(&s, 3), 300_000);
        assert_eq!(backoff_ms(&s, 9), 300_000);
        let empty = CronSettings {
            retry_backoff_ms: vec![],
            ..CronSettings::default()
        };
        assert_eq!(backoff_ms(&empty, 1), 60_000);
    }

    #[test]
    fn a_recurring_retry_never_waits_past_the_next_slot() {
        let j = job(CronSchedule::every(30_000, Some(0)));
        let plan = plan_finish(
            &j,
            &run(CronRunOutput::failed("boom")),
            1_000_000,
            &CronSettings::default(),
            &TimeZone::UTC,
        );
        // last run 1_000_000 + 30_000 comes before the 60 s backoff.
        assert_eq!(plan.state.next_run_at_ms, Some(1_030_000));
        assert_eq!(plan.state.consecutive_errors, Some(1));
        assert_eq!(plan.state.last_error.as_deref(), Some("boom"));
    }

    #[test]
    fn skipped_one_shot_is_disabled_not_deleted() {
        let j = job(CronSchedule::at("1970-01-01T00:16:00.000Z"));
        let out = CronRunOutput {
            status: RunStatus::Skipped,
            ..CronRunOutput::default()
        };
        let plan = plan_finish(
            &j,
            &run(out),
            1_000_000,
            &CronSettings::default(),
            &TimeZone::UTC,
        );
        assert!(plan.disable && !plan.delete);
        assert_eq!(plan.state.next_run_at_ms, None);
    }
}
