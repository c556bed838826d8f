//! A job's next run: OpenClaw's `computeJobNextRunAtMs` (`src/cron/service/jobs.ts`) and its
//! cron stagger (`src/cron/stagger.ts`), on top of the schedule arithmetic in `schedule.rs`.
//!
//! The job adds what the bare schedule does not know:
//! - a disabled job never runs;
//! - `every` counts from the last run when that lies ahead, else from the grid anchored at
//!   `anchorMs` (or the job's creation);
//! - `at` stays due, even in the past, until a run succeeds: a one-shot job missed while
//!   the gateway was down still runs once when it comes back;
//! - `cron` is shifted by a stable per-job offset in `[0, staggerMs)` (the first four bytes
//!   of sha256(jobId), big-endian, modulo the window), so many top-of-hour jobs do not all
//!   call the model in the same second. Recurring top-of-hour expressions get a 5 minute
//!   window unless `staggerMs` says otherwise (0 = exact).

use jiff::tz::TimeZone;
use sha2::{Digest, Sha256};

use super::at::parse_absolute_ms;
use super::job::{CronExprSchedule, CronJob, CronSchedule, RunStatus};
use super::schedule::{ScheduleError, next_run_ms_in};

/// OpenClaw's `DEFAULT_TOP_OF_HOUR_STAGGER_MS`.
pub const DEFAULT_TOP_OF_HOUR_STAGGER_MS: i64 = 5 * 60 * 1000;

/// When `job` should run next, seen at `now_ms`; `None` when it will not run again.
/// `local_tz` is the zone of a cron schedule without `tz`.
pub fn job_next_run_ms(
    job: &CronJob,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Result<Option<i64>, ScheduleError> {
    if !job.enabled {
        return Ok(None);
    }
    match &job.schedule {
        CronSchedule::Every(every) => {
            if every.every_ms <= 0 {
                return Err(ScheduleError::InvalidEvery {
                    every_ms: every.every_ms,
                });
            }
            if let Some(next) = job
                .state
                .last_run_at_ms
                .and_then(|last| last.checked_add(every.every_ms))
                .filter(|next| *next > now_ms)
            {
                return Ok(Some(next));
            }
            let anchored = CronSchedule::every(
                every.every_ms,
                Some(every.anchor_ms.unwrap_or(job.created_at_ms)),
            );
            next_run_ms_in(&anchored, now_ms, local_tz)
        }
        CronSchedule::At(at) => {
            let succeeded =
                job.state.last_status == Some(RunStatus::Ok) && job.state.last_run_at_ms.is_some();
            if succeeded {
                return Ok(None);
            }
            parse_absolute_ms(&at.at)
                .map(Some)
                .ok_or_else(|| ScheduleError::InvalidAt {
                    value: at.at.clone(),
                })
        }
        CronSchedule::Cron(cron) => staggered_next_ms(job, cron, now_ms, local_tz),
    }
}

/// The stagger window of a cron schedule: `staggerMs` when set, else the top-of-hour
/// default, else 0.
pub fn effective_stagger_ms(cron: &CronExprSchedule) -> i64 {
    match cron.stagger_ms {
        Some(ms) => ms.max(0),
        None => default_stagger_ms(&cron.expr).unwrap_or(0),
    }
}

/// The window a new job gets for `expr` when none is given: 5 minutes for a recurring
/// top-of-hour expression.
pub fn default_stagger_ms(expr: &str) -> Option<i64> {
    is_recurring_top_of_hour(expr).then_some(DEFAULT_TOP_OF_HOUR_STAGGER_MS)
}

/// This job's offset inside a `stagger_ms` window.
pub fn stable_offset_ms(job_id: &str, stagger_ms: i64) -> i64 {
    if stagger_ms <= 1 {
        return 0;
    }
    let digest = Sha256::digest(job_id.as_bytes());
    let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    i64::from(head) % stagger_ms
}

fn staggered_next_ms(
    job: &CronJob,
    cron: &CronExprSchedule,
    now_ms: i64,
    local_tz: &TimeZone,
) -> Result<Option<i64>, ScheduleError> {
    let offset = stable_offset_ms(&job.id, effective_stagger_ms(cron));
    if offset <= 0 {
        return next_run_ms_in(&job.schedule, now_ms, local_tz);
    }
    // Search from `offset` earlier, so this window's slot is found if it has not passed yet.
    let mut cursor = now_ms.saturating_sub(offset).max(0);
    for _ in 0..4 {
        let Some(base) = next_run_ms_in(&job.schedule, cursor, local_tz)? else {
            return Ok(None);
        };
        let shifted = base.saturating_add(offset);
        if shifted > now_ms {
            return Ok(Some(shifted));
        }
        cursor = cursor.saturating_add(1).max(base.saturating_add(1_000));
    }
    Ok(None)
}

/// `0 <hours> * * *` (or `0 0 <hours> …` with seconds) where the hour field is a recurring
/// wildcard list: OpenClaw's `isRecurringTopOfHourCronExpr`.
pub fn is_recurring_top_of_hour(expr: &str) -> bool {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    match fields.as_slice() {
        [minute, hour, _, _, _] => *minute == "0" && is_recurring_wildcard_hour(hour),
        [second, minute, hour, _, _, _] => {
            *second == "0" && *minute == "0" && is_recurring_wildcard_hour(hour)
        }
        _ => false,
    }
}

/// Every comma part is `N`, `N-M`, either with `/S`, or `*` / `*/S`, and one is a wildcard.
fn is_recurring_wildcard_hour(field: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let part_ok = |part: &str| {
        let (base, step) = match part.split_once('/') {
            Some((base, step)) => (base, Some(step)),
            None => (part, None),
        };
        if step.is_some_and(|s| !digits(s)) {
            return false;
        }
        base == "*"
            || digits(base)
            || base
                .split_once('-')
                .is_some_and(|(a, b)| digits(a) && digits(b))
    };
    let parts: Vec<&str> = field.split(',').collect();
    parts.iter().all(|p| part_ok(p)) && parts.iter().any(|p| p.starts_with('*'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_of_hour_detection() {
        for yes in [
            "0 * * * *",
            "0 */2 * * *",
            "0 0 * * * *",
            "0 *,5 * * *",
            "0 */3 * * 1-5",
        ] {
            assert!(is_recurring_top_of_hour(yes), "{yes}");
        }
        for no in [
            "0 9 * * *",
            "5 * * * *",
            "0 1-5 * * *",
            "* * * * *",
            "0 0 9 * * *",
            "0 * * *",
            "@hourly",
        ] {
            assert!(!is_recurring_top_of_hour(no), "{no}");
        }
    }

    #[test]
    fn offsets_are_stable_and_inside_the_window() {
        // Node: createHash("sha256").update("job-1").digest().readUInt32BE(0) = 40547897,
        // and 40547897 % 300000 = 47897.
        assert_eq!(stable_offset_ms("job-1", 300_000), 47_897);
        assert_eq!(stable_offset_ms("job-1", 1), 0);
        assert_eq!(stable_offset_ms("job-1", 0), 0);
        for id in ["a", "b", "c", "d"] {
            let offset = stable_offset_ms(id, 300_000);
            assert!((0..300_000).contains(&offset));
            assert_eq!(offset, stable_offset_ms(id, 300_000));
        }
    }
}
