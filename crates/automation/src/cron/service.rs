//! The cron scheduler's front door, OpenClaw's `CronService` (`src/cron/service.ts`):
//! [`CronService`] owns the jobs of `$PINCER_HOME/cron/` behind one lock, the settings, the
//! executor that makes a run reach the agent ([`CronExecutor`], implemented by the gateway
//! server) and the sink of the events WS clients see.
//!
//! This file owns the service's shape and the job management calls (status, list, add,
//! update, remove, run history). The scheduler loop, `tick` and `run_now` are in
//! `service_run.rs`; what a finished run does to a job is in `outcome.rs`; the patch rules
//! of `update` in `patch.rs`.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use futures_util::future::BoxFuture;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, Semaphore};

use super::job::{CronJob, RunStatus};
use super::patch::apply_patch;
use super::run_log::RunLogEntry;
use super::schedule::ScheduleError;
use super::store::{CronStore, CronStoreError, JOBS_FILE, UnreadableJob};
use super::validate::{CronJobError, NewCronJob, create_job, new_job_id};
use crate::system_events::Clock;

/// The `cron` section of the config, as the scheduler uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSettings {
    /// `false`: jobs can be managed but none runs (`cron.enabled`).
    pub enabled: bool,
    /// Runs in flight at once; due jobs beyond it wait for a slot.
    pub max_concurrent_runs: usize,
    /// Failed runs retried before a one-shot job is given up (a recurring job then just
    /// keeps its schedule).
    pub retry_max_attempts: u32,
    /// The wait before retry N is `retry_backoff_ms[min(N-1, len-1)]`.
    pub retry_backoff_ms: Vec<u64>,
}

impl Default for CronSettings {
    /// OpenClaw's defaults.
    fn default() -> Self {
        Self {
            enabled: true,
            max_concurrent_runs: 1,
            retry_max_attempts: 3,
            retry_backoff_ms: vec![60_000, 120_000, 300_000],
        }
    }
}

/// What one run produced (filled by the gateway's executor).
#[derive(Debug, Clone, PartialEq)]
pub struct CronRunOutput {
    pub status: RunStatus,
    pub error: Option<String>,
    pub summary: Option<String>,
    pub delivered: Option<bool>,
    /// `delivered` | `not-delivered` | `unknown` | `not-requested`.
    pub delivery_status: Option<String>,
    pub delivery_error: Option<String>,
    pub session_id: Option<String>,
    pub session_key: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
}

impl Default for CronRunOutput {
    /// A successful run that reports nothing else.
    fn default() -> Self {
        Self {
            status: RunStatus::Ok,
            error: None,
            summary: None,
            delivered: None,
            delivery_status: None,
            delivery_error: None,
            session_id: None,
            session_key: None,
            model: None,
            provider: None,
        }
    }
}

impl CronRunOutput {
    /// A successful run with `summary`.
    pub fn ok(summary: impl Into<String>) -> Self {
        Self {
            summary: Some(summary.into()),
            ..Self::default()
        }
    }

    /// A failed run with `error`.
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            status: RunStatus::Error,
            error: Some(error.into()),
            ..Self::default()
        }
    }
}

/// How a job's run reaches the agent; implemented by the gateway server.
pub trait CronExecutor: Send + Sync + 'static {
    /// sessionTarget `main`: queue `[CRON:<id>] <text>` (text = payload `systemEvent.text`,
    /// or `agentTurn.message`) on the agent's main session; wake the heartbeat when
    /// `job.wake_mode` is `Now`. `Err` = the run failed with that message.
    fn enqueue_main(&self, job: &CronJob, text: &str) -> Result<(), String>;
    /// sessionTarget `isolated`: run a turn and deliver; resolves when done.
    fn run_isolated(&self, job: CronJob) -> BoxFuture<'static, CronRunOutput>;
}

/// Receives the events WS clients see (OpenClaw's `CronEvent`).
pub type CronEventSink = Arc<dyn Fn(Value) + Send + Sync>;

/// What `cron.status` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct CronStatus {
    pub enabled: bool,
    pub store_path: PathBuf,
    /// Usable jobs (enabled or not).
    pub jobs: usize,
    /// The earliest next run of an enabled job; `None` when cron is disabled or nothing is
    /// scheduled.
    pub next_wake_at_ms: Option<i64>,
    /// Why `jobs.json` could not be loaded at start (the service then started empty).
    pub load_error: Option<String>,
    /// Jobs of the file that cannot be scheduled; they are never run.
    pub unreadable: Vec<UnreadableJob>,
}

impl CronStatus {
    /// OpenClaw's `cron.status` shape (`{enabled, storePath, jobs, nextWakeAtMs}`) plus
    /// `loadError` and `unreadable: [{index, id, error}]`.
    pub fn to_json(&self) -> Value {
        let mut out = json!({
            "enabled": self.enabled,
            "storePath": self.store_path.display().to_string(),
            "jobs": self.jobs,
            "nextWakeAtMs": self.next_wake_at_ms,
            "unreadable": self.unreadable.iter().map(|u| json!({
                "index": u.index,
                "id": u.id,
                "error": u.error,
            })).collect::<Vec<_>>(),
        });
        if let (Some(error), Some(map)) = (&self.load_error, out.as_object_mut()) {
            map.insert("loadError".into(), Value::from(error.clone()));
        }
        out
    }
}

/// What `run_now` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunNow {
    pub ran: bool,
    /// Why it did not run: `already-running` or `not-due`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// Why a cron call failed; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum CronServiceError {
    #[error("no cron job with id {id:?}; list the jobs to see their ids")]
    NotFound { id: String },
    #[error("cron is disabled: set cron.enabled to true in the config to run jobs")]
    Disabled,
    #[error("the cron scheduler is not running yet; try again once the gateway has started")]
    NotRunning,
    #[error(
        "cron job {id:?} in jobs.json cannot be used ({error}); fix it in the file or remove it"
    )]
    Unreadable { id: String, error: String },
    #[error(
        "the cron jobs file could not be read at start ({reason}); jobs cannot be changed until \
         it is fixed and the gateway restarted"
    )]
    Unavailable { reason: String },
    #[error(transparent)]
    Invalid(#[from] CronJobError),
    #[error(transparent)]
    Store(CronStoreError),
    #[error("invalid cron job patch: {0}")]
    InvalidPatch(String),
    /// The blocking task of a call failed (it panicked or the runtime is shutting down).
    #[error("a cron task failed: {0}")]
    Task(String),
}

impl From<CronStoreError> for CronServiceError {
    fn from(e: CronStoreError) -> Self {
        match e {
            CronStoreError::UnknownJob { id } => Self::NotFound { id },
            CronStoreError::Job(e) => Self::Invalid(e),
            e => Self::Store(e),
        }
    }
}

impl From<ScheduleError> for CronServiceError {
    fn from(e: ScheduleError) -> Self {
        Self::Invalid(CronJobError::Schedule(e))
    }
}

/// The cron scheduler; always used as `Arc<CronService>`.
pub struct CronService {
    pub(super) dir: PathBuf,
    pub(super) settings: CronSettings,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) local_tz: TimeZone,
    pub(super) store: Mutex<CronStore>,
    pub(super) load_error: Option<String>,
    /// `false` when jobs.json exists but could not be read: writing would replace it.
    pub(super) writable: bool,
    pub(super) sink: Mutex<Option<CronEventSink>>,
    pub(super) executor: OnceLock<Arc<dyn CronExecutor>>,
    /// Wakes the loop when jobs change or a run ends.
    pub(super) changed: Notify,
    pub(super) slots: Semaphore,
    /// Ids of jobs claimed for a run (waiting for a slot or running) in this process.
    pub(super) running: Arc<Mutex<HashSet<String>>>,
    /// Jobs whose state could not be saved after a run, not run again before the time
    /// given, so a full disk does not make the loop rerun them back to back.
    pub(super) held: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for CronService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronService")
            .field("dir", &self.dir)
            .field("settings", &self.settings)
            .field("load_error", &self.load_error)
            .finish_non_exhaustive()
    }
}

impl CronService {
    /// Opens `dir` (e.g. `$PINCER_HOME/cron`). A corrupt jobs.json is kept aside by the store;
    /// the service then starts with an empty store and reports the error in
    /// `status().load_error` — it never fails.
    #[expect(
        clippy::disallowed_methods,
        reason = "reads jobs.json once, while the gateway is set up (the CLI), before anything is scheduled"
    )]
    pub fn open(
        dir: impl Into<PathBuf>,
        settings: CronSettings,
        clock: Arc<dyn Clock>,
        local_tz: TimeZone,
    ) -> Arc<Self> {
        let dir = dir.into();
        let (store, load_error, writable) = match CronStore::open(dir.clone(), clock.clone()) {
            Ok(store) => (store, None, true),
            Err(e @ CronStoreError::Corrupt { .. }) => {
                tracing::warn!(error = %e, "cron: starting with no jobs");
                (
                    CronStore::empty(dir.clone(), clock.clone()),
                    Some(e.to_string()),
                    true,
                )
            }
            Err(e) => {
                // The file is still where it was: saving over it would lose it.
                tracing::error!(error = %e, "cron: jobs.json unreadable; starting read-only");
                (
                    CronStore::empty(dir.clone(), clock.clone()),
                    Some(e.to_string()),
                    false,
                )
            }
        };
        for u in store.unreadable() {
            tracing::warn!(index = u.index, id = ?u.id, error = %u.error, "cron: job will not run");
        }
        let slots = Semaphore::new(settings.max_concurrent_runs.max(1));
        Arc::new(Self {
            dir,
            settings,
            clock,
            local_tz,
            store: Mutex::new(store),
            load_error,
            writable,
            sink: Mutex::new(None),
            executor: OnceLock::new(),
            changed: Notify::new(),
            slots,
            running: Arc::new(Mutex::new(HashSet::new())),
            held: Mutex::new(HashMap::new()),
        })
    }

    /// Runs `work` on this service on tokio's blocking pool: [`add`](Self::add),
    /// [`update`](Self::update), [`remove`](Self::remove) and [`runs`](Self::runs) read or
    /// write files, so async code calls them through here, never directly.
    pub async fn blocking<T, F>(self: &Arc<Self>, work: F) -> Result<T, CronServiceError>
    where
        F: FnOnce(&CronService) -> Result<T, CronServiceError> + Send + 'static,
        T: Send + 'static,
    {
        let service = Arc::clone(self);
        tokio::task::spawn_blocking(move || work(&service))
            .await
            .map_err(|e| CronServiceError::Task(e.to_string()))?
    }

    /// Events for WS clients, OpenClaw's `CronEvent` shape: `{jobId, action:
    /// "added"|"updated"|"removed"|"started"|"finished", runAtMs?, durationMs?, status?,
    /// error?, summary?, nextRunAtMs?}`. Set once before start.
    pub fn set_event_sink(&self, sink: CronEventSink) {
        *lock(&self.sink) = Some(sink);
    }

    /// The settings the service runs with.
    pub fn settings(&self) -> &CronSettings {
        &self.settings
    }

    /// Why jobs.json could not be loaded at start, if it could not.
    pub fn load_error(&self) -> Option<&str> {
        self.load_error.as_deref()
    }

    pub fn status(&self) -> CronStatus {
        let store = self.store();
        let next_wake_at_ms = if self.settings.enabled {
            store
                .list()
                .filter(|job| job.enabled)
                .filter_map(|job| job.state.next_run_at_ms)
                .min()
        } else {
            None
        };
        CronStatus {
            enabled: self.settings.enabled,
            store_path: self.dir.join(JOBS_FILE),
            jobs: store.list().count(),
            next_wake_at_ms,
            load_error: self.load_error.clone(),
            unreadable: store.unreadable().cloned().collect(),
        }
    }

    /// The jobs, sorted by `nextRunAtMs` (none last), then name.
    pub fn list(&self, include_disabled: bool) -> Vec<CronJob> {
        let mut jobs: Vec<CronJob> = self
            .store()
            .list()
            .filter(|job| include_disabled || job.enabled)
            .cloned()
            .collect();
        jobs.sort_by(|a, b| {
            next_run_order(a.state.next_run_at_ms, b.state.next_run_at_ms)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| a.id.cmp(&b.id))
        });
        jobs
    }

    pub fn get(&self, id: &str) -> Option<CronJob> {
        self.store().get(id).cloned()
    }

    /// Creates a job with OpenClaw's defaults and a new id, and saves it.
    #[expect(
        clippy::disallowed_methods,
        reason = "blocking file I/O (jobs.json): call it through CronService::blocking"
    )]
    pub fn add(&self, input: NewCronJob) -> Result<CronJob, CronServiceError> {
        self.ensure_writable()?;
        let job = create_job(input, new_job_id(), self.clock.now_ms(), &self.local_tz)?;
        self.store().add(job.clone())?;
        self.saved(&job, "added");
        Ok(job)
    }

    /// Tells listeners `job` was saved (`added` or `updated`, with its next run) and wakes
    /// the timer, whose next due job may have changed.
    fn saved(&self, job: &CronJob, action: &str) {
        let mut event = cron_event(&job.id, action);
        put(&mut event, "nextRunAtMs", job.state.next_run_at_ms);
        self.emit(event);
        self.changed.notify_one();
    }

    /// Applies OpenClaw's `CronJobPatch` (see `patch.rs` for the rules) and saves the job.
    #[expect(
        clippy::disallowed_methods,
        reason = "blocking file I/O (jobs.json): call it through CronService::blocking"
    )]
    pub fn update(&self, id: &str, patch: &Value) -> Result<CronJob, CronServiceError> {
        self.ensure_writable()?;
        let now = self.clock.now_ms();
        let job = {
            let mut store = self.store();
            let current = find(&store, id)?;
            let patched = apply_patch(current, patch, now, &self.local_tz)?;
            store.update(id, move |job| *job = patched)?.clone()
        };
        lock(&self.held).remove(id);
        self.saved(&job, "updated");
        Ok(job)
    }

    /// Removes a job (an unreadable one too); `false` when there was none. Its run history
    /// stays.
    #[expect(
        clippy::disallowed_methods,
        reason = "blocking file I/O (jobs.json): call it through CronService::blocking"
    )]
    pub fn remove(&self, id: &str) -> Result<bool, CronServiceError> {
        self.ensure_writable()?;
        let removed = self.store().remove(id)?;
        if removed {
            lock(&self.held).remove(id);
            self.emit(cron_event(id, "removed"));
            self.changed.notify_one();
        }
        Ok(removed)
    }

    /// The last `limit` runs of job `id`, oldest first.
    #[expect(
        clippy::disallowed_methods,
        reason = "blocking file I/O (the run log): call it through CronService::blocking"
    )]
    pub fn runs(&self, id: &str, limit: usize) -> Result<Vec<RunLogEntry>, CronServiceError> {
        // Read the file without the store lock: the scheduler needs it after every run.
        let log = self.store().run_log();
        Ok(log.read_last(id, limit)?)
    }

    pub(super) fn store(&self) -> MutexGuard<'_, CronStore> {
        lock(&self.store)
    }

    pub(super) fn emit(&self, event: Map<String, Value>) {
        let sink = lock(&self.sink).clone();
        if let Some(sink) = sink {
            sink(Value::Object(event));
        }
    }

    fn ensure_writable(&self) -> Result<(), CronServiceError> {
        if self.writable {
            return Ok(());
        }
        Err(CronServiceError::Unavailable {
            reason: self.load_error.clone().unwrap_or_default(),
        })
    }
}

/// The usable job `id`, or why there is none.
pub(super) fn find<'a>(store: &'a CronStore, id: &str) -> Result<&'a CronJob, CronServiceError> {
    if let Some(job) = store.get(id) {
        return Ok(job);
    }
    match store.unreadable().find(|u| u.id.as_deref() == Some(id)) {
        Some(u) => Err(CronServiceError::Unreadable {
            id: id.to_string(),
            error: u.error.clone(),
        }),
        None => Err(CronServiceError::NotFound { id: id.to_string() }),
    }
}

/// `{jobId, action}`, the start of every event.
pub(super) fn cron_event(job_id: &str, action: &str) -> Map<String, Value> {
    let mut event = Map::new();
    event.insert("jobId".into(), Value::from(job_id));
    event.insert("action".into(), Value::from(action));
    event
}

/// Adds `key` when `value` is set (JavaScript omits `undefined`).
pub(super) fn put(event: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        event.insert(key.into(), value.into());
    }
}

/// Locks, going on after a panic elsewhere: the data is plain state, still consistent
/// because every change is applied whole.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Earlier first, unscheduled last.
fn next_run_order(a: Option<i64>, b: Option<i64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
