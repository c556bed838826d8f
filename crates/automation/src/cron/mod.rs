//! Cron: jobs that make an agent act on a schedule, as OpenClaw's cron (`src/cron/`).
//!
//! The job record in OpenClaw's JSON shape ([`job`]), when a schedule fires ([`schedule`],
//! [`next`], [`at`]), how a job is created, checked and patched ([`validate`], [`patch`]),
//! the state under `$PINCER_HOME/cron/`: `jobs.json` ([`store`]) and `runs/<jobId>.jsonl`
//! ([`run_log`]); the scheduler ([`service`]: timer, runs, retries, catch-up, with what a
//! finished run does to its job in [`outcome`]) and the agent's `cron` tool ([`tool`]). How
//! a run reaches an agent is the gateway server's side ([`service::CronExecutor`]). Time comes from the caller (a
//! [`Clock`](crate::system_events::Clock) or `now_ms`), never from the system clock inside
//! the computations, so tests move time by hand.

pub mod at;
pub mod job;
pub mod next;
pub mod outcome;
pub mod patch;
pub mod run_log;
pub mod schedule;
pub mod service;
mod service_run;
pub mod store;
pub mod tool;
pub mod validate;

pub use at::{format_iso_ms, parse_absolute_ms, parse_duration_ms, resolve_at};
pub use job::{
    AgentTurnPayload, AtSchedule, CronDelivery, CronExprSchedule, CronJob, CronJobState,
    CronPayload, CronSchedule, DeliveryMode, EverySchedule, Extra, RunStatus, SessionTarget,
    SystemEventPayload, WakeMode,
};
pub use next::{
    DEFAULT_TOP_OF_HOUR_STAGGER_MS, effective_stagger_ms, job_next_run_ms, stable_offset_ms,
};
pub use outcome::INTERRUPTED_ERROR;
pub use patch::{PATCHABLE_FIELDS, apply_patch};
pub use run_log::{RunAction, RunLog, RunLogEntry};
pub use schedule::{
    CronExpr, ScheduleError, local_time_zone, next_run_ms, next_run_ms_in, resolve_time_zone,
    validate_schedule,
};
pub use service::{
    CronEventSink, CronExecutor, CronRunOutput, CronService, CronServiceError, CronSettings,
    CronStatus, RunNow,
};
pub use store::{
    CronStore, CronStoreError, JOBS_FILE, RUNS_DIR, SCHEDULER_LOCK_FILE, SchedulerLock,
    UnreadableJob, try_lock_scheduler,
};
pub use tool::{CronAction, CronToolArgs, cron_tool};
pub use validate::{CronJobError, NewCronJob, create_job, new_job_id, validate_job};
