//! Running jobs: the scheduler loop ([`CronService::run`]), one pass over the due jobs
//! ([`CronService::tick`]) and a run on demand ([`CronService::run_now`]), all through one
//! path that claims the job, waits for a concurrency slot, marks it running, hands it to
//! the [`CronExecutor`] and records the outcome (`outcome.rs`).
//!
//! Claims live in memory: a job is run at most once at a time in this process whatever
//! asks for it. `state.runningAtMs` is the on-disk mark; one still set when the loop starts
//! is a run the gateway stopped in the middle of, recorded as an error.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::job::{CronJob, CronPayload, SessionTarget};
use super::outcome::{FinishedRun, INTERRUPTED_ERROR, catch_up_note, plan_finish, run_log_entry};
use super::service::{
    CronExecutor, CronRunOutput, CronService, CronServiceError, RunNow, cron_event, find, lock, put,
};

/// The loop re-reads the clock at least this often: wall time can jump (suspend, NTP)
/// while a tokio sleep counts monotonic time.
const MAX_SLEEP_MS: i64 = 60_000;
/// How long a job whose state could not be saved after a run waits before it may run again.
const SAVE_FAILURE_HOLD_MS: i64 = 60_000;

/// A job claimed for one run; dropping it frees the job (also when a run task dies).
pub(super) struct Claim {
    running: Arc<Mutex<HashSet<String>>>,
    id: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        lock(&self.running).remove(&self.id);
    }
}

impl CronService {
    /// Stores the executor runs go through (the first one given stays). `run` calls it;
    /// tests call it before [`tick`](Self::tick).
    pub fn attach(&self, executor: Arc<dyn CronExecutor>) {
        if self.executor.set(executor).is_err() {
            tracing::warn!("cron: an executor is already attached; keeping the first");
        }
    }

    /// The scheduler loop until `stop`: records runs interrupted by the last stop, runs once
    /// each job missed while the gateway was down, then sleeps until the earliest next run
    /// (re-checking at least every 60 s and whenever jobs change) and runs what is due.
    /// Runs go on in their own tasks, so a long one does not hold up the others; one still
    /// in flight at `stop` ends on its own, or, if the process exits first, is recorded as
    /// interrupted on the next start.
    pub async fn run(self: Arc<Self>, executor: Arc<dyn CronExecutor>, stop: CancellationToken) {
        self.attach(executor);
        let Some(executor) = self.executor.get().cloned() else {
            return;
        };
        let recovered = {
            let service = Arc::clone(&self);
            tokio::task::spawn_blocking(move || service.recover_interrupted())
                .await
                .unwrap_or_else(|e| {
                    tracing::error!(error = %e, "cron: recording interrupted runs failed");
                    0
                })
        };
        if recovered > 0 {
            tracing::warn!(
                recovered,
                "cron: recorded runs interrupted by the last stop"
            );
        }
        if !self.settings.enabled {
            tracing::info!("cron: disabled (cron.enabled is false); no job will run");
            stop.cancelled().await;
            return;
        }
        let mut catch_up = self.catch_up_notes();
        loop {
            for claim in self.claim_due(self.clock.now_ms()) {
                let note = catch_up.remove(&claim.id);
                let service = Arc::clone(&self);
                let executor = Arc::clone(&executor);
                tokio::spawn(async move {
                    service.run_claimed(&executor, claim, note, false).await;
                });
            }
            // A missed job not claimed now (running on demand) is no longer a catch-up.
            catch_up.clear();
            let delay = self.next_delay(self.clock.now_ms());
            tokio::select! {
                () = stop.cancelled() => break,
                () = self.changed.notified() => {}
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Runs every job due at `clock.now()` and waits until those runs finish; returns how
    /// many ran. Nothing runs without an executor ([`attach`](Self::attach)) or when cron is
    /// disabled.
    pub async fn tick(self: &Arc<Self>) -> usize {
        if !self.settings.enabled {
            return 0;
        }
        let Some(executor) = self.executor.get().cloned() else {
            tracing::warn!("cron: tick without an executor; nothing runs");
            return 0;
        };
        let claims = self.claim_due(self.clock.now_ms());
        let runs = claims
            .into_iter()
            .map(|claim| self.run_claimed(&executor, claim, None, false));
        join_all(runs).await.into_iter().filter(|ran| *ran).count()
    }

    /// Runs job `id` now and waits for the run to end. `force`: whatever its schedule;
    /// otherwise only when it is due (`not-due`). A job already running is not started
    /// twice (`already-running`).
    pub async fn run_now(
        self: &Arc<Self>,
        id: &str,
        force: bool,
    ) -> Result<RunNow, CronServiceError> {
        if !self.settings.enabled {
            return Err(CronServiceError::Disabled);
        }
        let executor = self
            .executor
            .get()
            .cloned()
            .ok_or(CronServiceError::NotRunning)?;
        let now = self.clock.now_ms();
        let due = {
            let store = self.store();
            let job = find(&store, id)?;
            job.enabled && job.state.next_run_at_ms.is_some_and(|next| next <= now)
        };
        let Some(claim) = self.claim(id) else {
            return Ok(not_run("already-running"));
        };
        if !force && !due {
            return Ok(not_run("not-due"));
        }
        if self.run_claimed(&executor, claim, None, force).await {
            return Ok(RunNow {
                ran: true,
                reason: None,
            });
        }
        // It went away or stopped being due while waiting for a slot.
        find(&self.store(), id)?;
        Ok(not_run("not-due"))
    }

    /// Records every run the gateway stopped in the middle of (a `runningAtMs` left in the
    /// file) as an error, so it is retried like one. Returns how many. Blocking: `run` calls
    /// it on the blocking pool.
    fn recover_interrupted(&self) -> usize {
        let stale: Vec<(String, i64)> = {
            let store = self.store();
            let running = lock(&self.running);
            store
                .list()
                .filter(|job| !running.contains(&job.id))
                .filter_map(|job| job.state.running_at_ms.map(|at| (job.id.clone(), at)))
                .collect()
        };
        for (id, started_ms) in &stale {
            self.finish(
                id,
                FinishedRun {
                    started_ms: *started_ms,
                    duration_ms: None,
                    output: CronRunOutput::failed(INTERRUPTED_ERROR),
                    note: None,
                },
            );
        }
        stale.len()
    }

    /// The catch-up notes of the jobs missed while the gateway was down.
    fn catch_up_notes(&self) -> HashMap<String, String> {
        let now = self.clock.now_ms();
        self.store()
            .list()
            .filter_map(|job| catch_up_note(job, now).map(|note| (job.id.clone(), note)))
            .collect()
    }

    /// Claims every enabled job due at `now_ms` that is not running or held.
    fn claim_due(&self, now_ms: i64) -> Vec<Claim> {
        let ids: Vec<String> = {
            let store = self.store();
            let mut held = lock(&self.held);
            held.retain(|_, until| *until > now_ms);
            store
                .list()
                .filter(|job| job.enabled && !held.contains_key(&job.id))
                .filter(|job| job.state.next_run_at_ms.is_some_and(|next| next <= now_ms))
                .map(|job| job.id.clone())
                .collect()
        };
        ids.iter().filter_map(|id| self.claim(id)).collect()
    }

    fn claim(&self, id: &str) -> Option<Claim> {
        let mut running = lock(&self.running);
        if !running.insert(id.to_string()) {
            return None;
        }
        Some(Claim {
            running: Arc::clone(&self.running),
            id: id.to_string(),
        })
    }

    /// How long the loop may sleep: until the earliest next run of a job not running.
    fn next_delay(&self, now_ms: i64) -> Duration {
        let earliest = {
            let store = self.store();
            let running = lock(&self.running);
            let held = lock(&self.held);
            store
                .list()
                .filter(|job| job.enabled && !running.contains(&job.id))
                .filter_map(|job| {
                    let next = job.state.next_run_at_ms?;
                    Some(held.get(&job.id).map_or(next, |until| next.max(*until)))
                })
                .min()
        };
        let wait = earliest.map_or(MAX_SLEEP_MS, |at| at.saturating_sub(now_ms));
        let wait = wait.clamp(0, MAX_SLEEP_MS);
        Duration::from_millis(u64::try_from(wait).unwrap_or(0))
    }

    /// One run of a claimed job. `false` when it did not run after all (removed, disabled or
    /// rescheduled while waiting for a slot).
    async fn run_claimed(
        self: &Arc<Self>,
        executor: &Arc<dyn CronExecutor>,
        claim: Claim,
        note: Option<String>,
        forced: bool,
    ) -> bool {
        // A closed semaphore cannot happen (it is never closed); run anyway if it did.
        let _slot = self.slots.acquire().await.ok();
        let now = self.clock.now_ms();
        let Some(job) = self.store().get(&claim.id).cloned() else {
            return false;
        };
        let due = job.enabled && job.state.next_run_at_ms.is_some_and(|next| next <= now);
        if !forced && !due {
            return false;
        }
        let started_ms = self.clock.now_ms();
        let (service, id) = (Arc::clone(self), job.id.clone());
        #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
        let marked = tokio::task::spawn_blocking(move || {
            service
                .store()
                .update_state(&id, |state| state.running_at_ms = Some(started_ms))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        if let Err(e) = marked {
            // The run goes on: only a crash during it would go unrecorded.
            tracing::warn!(job = %job.id, error = %e, "cron: could not mark the job running");
        }
        let mut event = cron_event(&job.id, "started");
        put(&mut event, "runAtMs", Some(started_ms));
        self.emit(event);

        let output = execute(executor.as_ref(), &job).await;
        let ended_ms = self.clock.now_ms();
        let (service, id) = (Arc::clone(self), job.id.clone());
        let run = FinishedRun {
            started_ms,
            duration_ms: Some(ended_ms.saturating_sub(started_ms).max(0)),
            output,
            note,
        };
        if let Err(e) = tokio::task::spawn_blocking(move || service.finish(&id, run)).await {
            tracing::error!(job = %job.id, error = %e, "cron: recording the run failed");
        }
        // The claim goes only now, so the loop sees the new next run before it can pick the
        // job again.
        drop(claim);
        true
    }

    /// Records the outcome of a run in the job, the run log and the events.
    #[expect(
        clippy::disallowed_methods,
        reason = "runs on the blocking pool: run_claimed, recover_interrupted (spawn_blocking)"
    )]
    fn finish(&self, id: &str, run: FinishedRun) {
        let now = self.clock.now_ms();
        let mut removed = false;
        let (summary, next_run_at_ms) = {
            let mut store = self.store();
            match store.get(id).cloned() {
                // Removed while it ran: only the history remains to write.
                None => (run.output.summary.clone(), None),
                Some(job) => {
                    let plan = plan_finish(&job, &run, now, &self.settings, &self.local_tz);
                    let state = plan.state.clone();
                    let saved = if plan.delete {
                        store.remove(id).map(|_| ())
                    } else if plan.disable {
                        store
                            .update(id, |job| {
                                job.enabled = false;
                                job.state = state;
                            })
                            .map(|_| ())
                    } else {
                        store.update_state(id, |s| *s = state).map(|_| ())
                    };
                    match saved {
                        Ok(()) => removed = plan.delete,
                        Err(e) => {
                            tracing::error!(job = id, error = %e, "cron: could not save the run's outcome");
                            lock(&self.held).insert(id.to_string(), now + SAVE_FAILURE_HOLD_MS);
                        }
                    }
                    (plan.summary, plan.state.next_run_at_ms)
                }
            }
        };
        let entry = run_log_entry(id, now, &run, summary.clone(), next_run_at_ms);
        let log = self.store().run_log();
        if let Err(e) = log.append(&entry) {
            tracing::error!(job = id, error = %e, "cron: could not write the run log");
        }
        let mut event = cron_event(id, "finished");
        put(&mut event, "runAtMs", Some(run.started_ms));
        put(&mut event, "durationMs", run.duration_ms);
        put(
            &mut event,
            "status",
            serde_json::to_value(run.output.status).ok(),
        );
        put(&mut event, "error", entry.error.clone());
        put(&mut event, "summary", summary);
        put(&mut event, "nextRunAtMs", next_run_at_ms);
        self.emit(event);
        if removed {
            self.emit(cron_event(id, "removed"));
        }
        self.changed.notify_one();
    }
}

/// Hands `job` to the executor; a panic inside it is a failed run, not a lost one.
async fn execute(executor: &dyn CronExecutor, job: &CronJob) -> CronRunOutput {
    let result = match job.session_target {
        SessionTarget::Main => {
            let text = match &job.payload {
                CronPayload::SystemEvent(p) => p.text.as_str(),
                CronPayload::AgentTurn(p) => p.message.as_str(),
            };
            std::panic::catch_unwind(AssertUnwindSafe(|| executor.enqueue_main(job, text))).map(
                |queued| match queued {
                    Ok(()) => CronRunOutput::default(),
                    Err(error) => CronRunOutput::failed(error),
                },
            )
        }
        SessionTarget::Isolated => {
            AssertUnwindSafe(executor.run_isolated(job.clone()))
                .catch_unwind()
                .await
        }
    };
    result.unwrap_or_else(|_| CronRunOutput::failed("the cron run panicked"))
}

fn not_run(reason: &'static str) -> RunNow {
    RunNow {
        ran: false,
        reason: Some(reason),
    }
}
